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
        let path = dir.join(MARK_FILE);
        match fs::read_to_string(&path) {
            Ok(text) => Mark::parse(&text)
                .map(Some)
                .map_err(|e| format!("{}: {e}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("could not read {}: {e}", path.display())),
        }
    }

    /// Writes the mark durably (see the module comment).
    pub fn store(&self, dir: &Path) -> Result<(), String> {
        let path = dir.join(MARK_FILE);
        let tmp = dir.join(format!("{MARK_FILE}.tmp"));
        let io = |what: &str, e: std::io::Error| format!("could not {what} {}: {e}", tmp.display());
        let mut f = File::create(&tmp).map_err(|e| io("create", e))?;
        f.write_all(self.render().as_bytes())
            .map_err(|e| io("write", e))?;
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
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tempdir(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("pg_idgen-mark-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn store_then_load() {
        let d = tempdir("rt");
        assert_eq!(Mark::load(&d).unwrap(), None);
        let m = Mark {
            reserved_until_ms: 1_767_225_600_123,
        };
        m.store(&d).unwrap();
        assert_eq!(Mark::load(&d).unwrap(), Some(m));
        let later = Mark {
            reserved_until_ms: m.reserved_until_ms + 1000,
        };
        later.store(&d).unwrap();
        assert_eq!(Mark::load(&d).unwrap(), Some(later));
        assert!(!d.join(format!("{MARK_FILE}.tmp")).exists());
    }

    #[test]
    fn a_damaged_mark_is_an_error_not_a_fresh_start() {
        let d = tempdir("bad");
        fs::write(d.join(MARK_FILE), "garbage").unwrap();
        assert!(Mark::load(&d).is_err());
        fs::write(
            d.join(MARK_FILE),
            format!("{HEADER}\nreserved_until_ms=x\n"),
        )
        .unwrap();
        assert!(Mark::load(&d).is_err());
        fs::write(d.join(MARK_FILE), format!("{HEADER}\n")).unwrap();
        assert!(Mark::load(&d).is_err());
    }
}
