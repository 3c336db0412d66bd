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

/// The last counter (`tick << sequence_bits | sequence`) of each clock stream at a clean stop,
/// by the stream's name (a line `stopped_<name>_last` each); 0 where the stream made no ID. The
/// Snowflake counter is in the units of `layout` (its canonical spec), so it is only used by a
/// start under that same layout. A stream the file does not name (UUIDv7s in a file written
/// before 0.2.5, any stream added since the file was written) resumes at the reservation, and a
/// version that does not know a stream passes its line over.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stopped {
    pub lasts: Vec<(String, u64)>,
    pub layout: String,
}

impl Stopped {
    /// The last counter of the stream of that name, if the file holds one.
    pub fn last(&self, stream: &str) -> Option<u64> {
        self.lasts
            .iter()
            .find(|(name, _)| name == stream)
            .map(|&(_, last)| last)
    }
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
            for (name, last) in &s.lasts {
                text += &format!("stopped_{name}_last={last}\n");
            }
            text += &format!("stopped_layout={}\n", s.layout);
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
        let (mut until, mut layout, mut written_by) = (None, None, None);
        let mut lasts = Vec::new();
        for line in lines {
            let Some((key, v)) = line.split_once('=') else {
                continue;
            };
            let v = v.trim();
            let bad = || FileError::Malformed(format!("{key} \"{v}\" is not an integer"));
            match key {
                "reserved_until_ms" => until = Some(v.parse::<i64>().map_err(|_| bad())?),
                "stopped_layout" => layout = Some(v.to_string()),
                "system_identifier" => written_by = Some(v.parse::<i64>().map_err(|_| bad())?),
                _ => {
                    let stream = key
                        .strip_prefix("stopped_")
                        .and_then(|k| k.strip_suffix("_last"));
                    if let Some(name) = stream.filter(|n| !n.is_empty()) {
                        lasts.push((name.to_string(), v.parse::<u64>().map_err(|_| bad())?));
                    }
                }
            }
        }
        let reserved_until_ms = until.ok_or_else(|| {
            FileError::Malformed("the mark file has no reserved_until_ms line".into())
        })?;
        // A clean stop's record is whole: its layout, and its Snowflake and message-ID counters
        // (every version since the first wrote both); anything less is a damaged file.
        let stopped = match layout {
            None if lasts.is_empty() => None,
            Some(layout) if ["snowflake", "msgid"].iter().all(|n| lasts.iter().any(|(m, _)| m == n)) => {
                Some(Stopped { lasts, layout })
            }
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
                lasts: vec![
                    ("snowflake".into(), 42 << 12 | 7),
                    ("msgid".into(), 0),
                    ("uuidv7".into(), 1_700_000_000_123 << 15 | 3),
                ],
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
            m.stopped.map(|s| (s.last("msgid"), s.last("uuidv7"))),
            Some((Some(8), None))
        );
    }

    #[test]
    fn a_stream_added_later_reads_by_its_name() {
        // What 0.2.5 wrote, and a file that names a stream this version does not know.
        let text = "pg_idgen snowflake mark v1\nreserved_until_ms=5\nstopped_snowflake_last=9\nstopped_msgid_last=8\nstopped_layout=x\nstopped_uuidv7_last=7\nstopped_fourth_last=6\n";
        let s = Mark::parse(text).unwrap().stopped.unwrap();
        assert_eq!(
            ["snowflake", "msgid", "uuidv7", "fourth", "fifth"].map(|n| s.last(n)),
            [Some(9), Some(8), Some(7), Some(6), None]
        );
        // Written back, every line is there for a version that reads by the old three names.
        let again = Mark {
            reserved_until_ms: 5,
            stopped: Some(s),
            written_by: None,
        }
        .render();
        for line in text.lines() {
            assert!(again.lines().any(|l| l == line), "{line} is lost");
        }
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
