//! The durable high-water mark of a node's Snowflake generator (docs/guarantees.md, guarantee 3).
//!
//! The mark is a wall-clock instant, not a tick: every ID the node handed out has a time before
//! `reserved_until_ms`. Kept in milliseconds so that it stays a safe bound when the layout's
//! unit or epoch is changed between restarts. It is written ahead of need (a window, about a
//! second) and never once per ID: write to a temporary file, fsync, rename, fsync the directory,
//! so a crash leaves either the old mark or the new one, never a torn one.

use std::path::Path;

use crate::files::{read_parsed, write_durably, FileError};

pub const MARK_FILE: &str = "pg_idgen.mark";
const HEADER: &str = "pg_idgen snowflake mark v1";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mark {
    /// Every ID handed out so far has a time strictly before this instant (ms since 1970 UTC).
    pub reserved_until_ms: i64,
    /// Written only when the server stopped with no process left that could make an ID: the
    /// exact last counters, so the next start resumes at the last ID, not at the reservation.
    /// Any later reservation rewrites the file without them.
    pub stopped: Option<Stopped>,
    /// The system identifier (pg_control) of the server that wrote the file; files written before
    /// 0.2.5 do not say. A mark copied into another system's data directory (after pg_upgrade)
    /// tells that node whose IDs its clocks start above (core::origins).
    pub written_by: Option<i64>,
}

/// The last counter (`tick << sequence_bits | sequence`) of each clock stream at a clean stop;
/// 0 where the stream made no ID. The Snowflake counter is in the units of `layout` (its
/// canonical spec), so it is only used by a start under that same layout. The UUIDv7 counter
/// came in version 0.2.5: a file written before has none, and that stream resumes at the
/// reservation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stopped {
    pub snowflake_last: u64,
    pub msgid_last: u64,
    pub uuidv7_last: Option<u64>,
    pub layout: String,
}

impl Mark {
    /// A reservation: no exact counters.
    pub fn reserved(reserved_until_ms: i64) -> Mark {
        Mark {
            reserved_until_ms,
            stopped: None,
            written_by: None,
        }
    }

    /// The same mark, saying which system writes it.
    pub fn by(self, system: i64) -> Mark {
        Mark {
            written_by: Some(system),
            ..self
        }
    }

    pub fn render(&self) -> String {
        let mut text = format!("{HEADER}\nreserved_until_ms={}\n", self.reserved_until_ms);
        if let Some(s) = self.written_by {
            text += &format!("system_identifier={s}\n");
        }
        if let Some(s) = &self.stopped {
            text += &format!(
                "stopped_snowflake_last={}\nstopped_msgid_last={}\nstopped_layout={}\n",
                s.snowflake_last, s.msgid_last, s.layout
            );
            if let Some(u) = s.uuidv7_last {
                text += &format!("stopped_uuidv7_last={u}\n");
            }
        }
        text
    }

    pub fn parse(text: &str) -> Result<Mark, FileError> {
        let mut lines = text.lines();
        if lines.next() != Some(HEADER) {
            return Err(FileError::Malformed(format!(
                "not a pg_idgen mark file (expected \"{HEADER}\")"
            )));
        }
        let (mut until, mut snowflake, mut msgid, mut layout) = (None, None, None, None);
        let mut uuidv7 = None;
        let mut written_by = None;
        for line in lines {
            let Some((key, v)) = line.split_once('=') else {
                continue;
            };
            let v = v.trim();
            let bad = || FileError::Malformed(format!("{key} \"{v}\" is not an integer"));
            match key {
                "reserved_until_ms" => until = Some(v.parse::<i64>().map_err(|_| bad())?),
                "stopped_snowflake_last" => snowflake = Some(v.parse::<u64>().map_err(|_| bad())?),
                "stopped_msgid_last" => msgid = Some(v.parse::<u64>().map_err(|_| bad())?),
                "stopped_layout" => layout = Some(v.to_string()),
                "stopped_uuidv7_last" => uuidv7 = Some(v.parse::<u64>().map_err(|_| bad())?),
                "system_identifier" => written_by = Some(v.parse::<i64>().map_err(|_| bad())?),
                _ => {}
            }
        }
        let reserved_until_ms = until.ok_or_else(|| {
            FileError::Malformed("the mark file has no reserved_until_ms line".into())
        })?;
        let stopped = match (snowflake, msgid, layout) {
            (Some(snowflake_last), Some(msgid_last), Some(layout)) => Some(Stopped {
                snowflake_last,
                msgid_last,
                uuidv7_last: uuidv7,
                layout,
            }),
            (None, None, None) if uuidv7.is_none() => None,
            _ => return Err(FileError::Malformed("the mark file has stopped_ lines but not all three of stopped_snowflake_last, stopped_msgid_last and stopped_layout".into())),
        };
        Ok(Mark {
            reserved_until_ms,
            stopped,
            written_by,
        })
    }

    /// Reads the mark in `dir`; `Ok(None)` when the node never handed out an ID there. A file
    /// that exists but cannot be read is an error: starting without it could repeat IDs.
    pub fn load(dir: &Path) -> Result<Option<Mark>, FileError> {
        read_parsed(dir, MARK_FILE, Mark::parse)
    }

    /// Writes the mark durably (see the module comment).
    pub fn store(&self, dir: &Path) -> Result<(), FileError> {
        write_durably(dir, MARK_FILE, &self.render())
    }
}

#[cfg(test)]
mod tests {
    use super::{Mark, Stopped};

    #[test]
    fn a_reservation_and_a_stop_read_back() {
        let r = Mark::reserved(1_700_000_000_123);
        assert_eq!(Mark::parse(&r.render()), Ok(r.clone()));
        let r = r.by(7_400_000_000_000_000_001);
        assert_eq!(Mark::parse(&r.render()), Ok(r));
        let s = Mark {
            reserved_until_ms: 1_700_000_000_123,
            stopped: Some(Stopped {
                snowflake_last: 42 << 12 | 7,
                msgid_last: 0,
                uuidv7_last: Some(1_700_000_000_123 << 15 | 3),
                layout: "unit=ms epoch=1704067200000 time=41 worker=10 sequence=12".into(),
            }),
            written_by: Some(-7_300_000_000_000_000_002),
        };
        assert_eq!(Mark::parse(&s.render()), Ok(s));
    }

    #[test]
    fn a_file_of_the_first_format_still_reads() {
        let m = Mark::parse("pg_idgen snowflake mark v1\nreserved_until_ms=5\n").unwrap();
        assert_eq!(m, Mark::reserved(5));
    }

    #[test]
    fn a_stop_written_before_uuidv7_reads_without_its_counter() {
        let m = Mark::parse(
            "pg_idgen snowflake mark v1\nreserved_until_ms=5\nstopped_snowflake_last=9\nstopped_msgid_last=8\nstopped_layout=x\n",
        )
        .unwrap();
        assert_eq!(
            m.stopped.map(|s| (s.msgid_last, s.uuidv7_last)),
            Some((8, None))
        );
    }

    #[test]
    fn damaged_files_are_refused() {
        assert!(Mark::parse("something else\nreserved_until_ms=5\n").is_err());
        assert!(Mark::parse("pg_idgen snowflake mark v1\n").is_err());
        assert!(Mark::parse("pg_idgen snowflake mark v1\nreserved_until_ms=x\n").is_err());
        assert!(Mark::parse(
            "pg_idgen snowflake mark v1\nreserved_until_ms=5\nstopped_msgid_last=1\n"
        )
        .is_err());
        assert!(Mark::parse(
            "pg_idgen snowflake mark v1\nreserved_until_ms=5\nstopped_uuidv7_last=1\n"
        )
        .is_err());
    }
}
