//! The node's files in the data directory (the mark, the layout history, the origins): read when
//! there, written durably, and their one error type.

use std::fs::{self, File};
use std::io::Write;
use std::path::Path;

/// Why one of the node's files could not be used. Either kind stops what needs the file: starting
/// without it could repeat IDs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileError {
    /// Reading or writing it failed: the operating system's error, with the path.
    Io(String),
    /// It does not hold what pg_idgen writes: what is wrong, with the path where known.
    Malformed(String),
}

impl FileError {
    /// The same error with `context` (a path) in front of what it says.
    pub fn within(self, context: &str) -> FileError {
        match self {
            FileError::Io(m) => FileError::Io(format!("{context}: {m}")),
            FileError::Malformed(m) => FileError::Malformed(format!("{context}: {m}")),
        }
    }
}

impl std::fmt::Display for FileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FileError::Io(m) | FileError::Malformed(m) => f.write_str(m),
        }
    }
}

impl From<FileError> for String {
    fn from(e: FileError) -> String {
        e.to_string()
    }
}

/// The text of `dir/name`, or None when there is no such file; any other failure is an error.
pub fn read_if_exists(dir: &Path, name: &str) -> Result<Option<String>, FileError> {
    let path = dir.join(name);
    match fs::read_to_string(&path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(FileError::Io(format!(
            "could not read {}: {e}",
            path.display()
        ))),
    }
}

/// The record in `dir/name` as `parse` reads it, or None when there is no such file. A text that
/// does not parse is an error naming the file.
pub fn read_parsed<T>(
    dir: &Path,
    name: &str,
    parse: impl FnOnce(&str) -> Result<T, FileError>,
) -> Result<Option<T>, FileError> {
    read_if_exists(dir, name)?
        .map(|text| parse(&text).map_err(|e| e.within(&dir.join(name).display().to_string())))
        .transpose()
}

/// Replaces `dir/name` with `text` so that a crash leaves the old file or the new one, never a
/// torn one: a temporary file, fsync, rename, fsync of the directory.
pub fn write_durably(dir: &Path, name: &str, text: &str) -> Result<(), FileError> {
    let path = dir.join(name);
    let tmp = dir.join(format!("{name}.tmp"));
    let io = |what: &str, e: std::io::Error| {
        FileError::Io(format!("could not {what} {}: {e}", tmp.display()))
    };
    let mut f = File::create(&tmp).map_err(|e| io("create", e))?;
    f.write_all(text.as_bytes()).map_err(|e| io("write", e))?;
    f.sync_all().map_err(|e| io("fsync", e))?;
    drop(f);
    fs::rename(&tmp, &path).map_err(|e| {
        FileError::Io(format!(
            "could not rename {} to {}: {e}",
            tmp.display(),
            path.display()
        ))
    })?;
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| FileError::Io(format!("could not fsync directory {}: {e}", dir.display())))
}
