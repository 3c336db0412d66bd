//! The durable high-water mark of a node's Snowflake generator (design rule 3).
//!
//! The mark is a wall-clock instant, not a tick: every ID the node handed out has a time before
//! `reserved_until_ms`. Kept in milliseconds so that it stays a safe bound when the layout's
//! unit or epoch is changed between restarts. It is written ahead of need (a window, about a
//! second) and never once per ID: write to a temporary file, fsync, rename, fsync the directory,
//! so a crash leaves either the old mark or the new one, never a torn one.

use std::fs::{self, File};
use std::io::Write;
use std::path::Path;

pub const MARK_FILE: &str = "pg_idgen.mark";
const HEADER: &str = "pg_idgen snowflake mark v1";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mark {
    /// Every ID handed out so far has a time strictly before this instant (ms since 1970 UTC).
    pub reserved_until_ms: i64,
}

impl Mark {
    pub fn render(&self) -> String {
        format!("{HEADER}\nreserved_until_ms={}\n", self.reserved_until_ms)
    }

    pub fn parse(text: &str) -> Result<Mark, String> {
        let mut lines = text.lines();
        if lines.next() != Some(HEADER) {
            return Err(format!("not a pg_idgen mark file (expected \"{HEADER}\")"));
        }
        for line in lines {
            if let Some(v) = line.strip_prefix("reserved_until_ms=") {
                let ms = v
                    .trim()
                    .parse::<i64>()
                    .map_err(|_| format!("reserved_until_ms \"{v}\" is not an integer"))?;
                return Ok(Mark {
                    reserved_until_ms: ms,
                });
            }
        }
        Err("the mark file has no reserved_until_ms line".into())
    }

    /// Reads the mark in `dir`; `Ok(None)` when the node never handed out an ID there. A file
    /// that exists but cannot be read is an error: starting without it could repeat IDs.
    pub fn load(dir: &Path) -> Result<Option<Mark>, String> {
        read_if_exists(dir, MARK_FILE)?
            .map(|text| {
                Mark::parse(&text).map_err(|e| format!("{}: {e}", dir.join(MARK_FILE).display()))
            })
            .transpose()
    }

    /// Writes the mark durably (see the module comment).
    pub fn store(&self, dir: &Path) -> Result<(), String> {
        write_durably(dir, MARK_FILE, &self.render())
    }
}

/// The text of `dir/name`, or None when there is no such file; any other failure is an error.
pub fn read_if_exists(dir: &Path, name: &str) -> Result<Option<String>, String> {
    let path = dir.join(name);
    match fs::read_to_string(&path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("could not read {}: {e}", path.display())),
    }
}

/// Replaces `dir/name` with `text` so that a crash leaves the old file or the new one, never a
/// torn one: a temporary file, fsync, rename, fsync of the directory.
pub fn write_durably(dir: &Path, name: &str, text: &str) -> Result<(), String> {
    let path = dir.join(name);
    let tmp = dir.join(format!("{name}.tmp"));
    let io = |what: &str, e: std::io::Error| format!("could not {what} {}: {e}", tmp.display());
    let mut f = File::create(&tmp).map_err(|e| io("create", e))?;
    f.write_all(text.as_bytes()).map_err(|e| io("write", e))?;
    f.sync_all().map_err(|e| io("fsync", e))?;
    drop(f);
    fs::rename(&tmp, &path).map_err(|e| {
        format!(
            "could not rename {} to {}: {e}",
            tmp.display(),
            path.display()
        )
    })?;
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| format!("could not fsync directory {}: {e}", dir.display()))
}
