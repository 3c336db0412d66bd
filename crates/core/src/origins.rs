//! What a node knows of other database systems' IDs (docs/guarantees.md, guarantee 3 across pg_upgrade).
//!
//! The durable mark bounds the IDs this data directory's server made. pg_upgrade fills a new data
//! directory with databases whose IDs another server made, and carries no mark: the new node's
//! clocks know nothing of them, in every database, including ones created after the upgrade. So
//! the node keeps, beside the mark, the file `pg_idgen.origins`:
//! - `upgraded_without_mark`: written when the server runs in binary-upgrade mode (pg_upgrade)
//!   with no mark; every time-based ID of the node is refused until the old system's mark is
//!   copied in or `idgen.snowflake_start_after()` moves the clocks past the old IDs;
//! - `past=`: the systems (pg_control system identifiers) whose mark came along into this data
//!   directory: this node's clocks start above every ID they made. A database whose
//!   `idgen.node_origins` names only these and the node's own system is not refused. (Not the
//!   systems `snowflake_start_after()` moved past: its time may bound one database's IDs only.)
//!
//! Written like the mark: temporary file, fsync, rename, fsync of the directory.

use std::path::Path;

use super::files::{read_parsed, write_durably, FileError};

pub const ORIGINS_FILE: &str = "pg_idgen.origins";
const HEADER: &str = "pg_idgen origins v1";

/// The most systems a node keeps in `past` (the oldest are forgotten first: a database naming one
/// is refused again, never let through).
pub const MAX_PAST: usize = 32;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Origins {
    pub upgraded_without_mark: bool,
    pub past: Vec<i64>,
}

/// What a start finds, for `Origins::on_start`.
pub struct Start {
    /// The server runs in binary-upgrade mode (pg_upgrade is filling or reading it).
    pub binary_upgrade: bool,
    /// A mark was found, and the system that wrote it when the mark says (marks before 0.2.5 do
    /// not).
    pub mark: Option<Option<i64>>,
    /// This system's identifier.
    pub me: i64,
}

impl Origins {
    /// The record after a start; `None` when it is unchanged.
    pub fn on_start(&self, start: &Start) -> Option<Origins> {
        let mut next = self.clone();
        match start.mark {
            // pg_upgrade runs the new server (and the old one) in binary-upgrade mode; a data
            // directory without a mark then is the new one, or one that never made an ID.
            None if start.binary_upgrade => next.upgraded_without_mark = true,
            None => {}
            Some(written_by) => {
                // A mark in a data directory marked as upgraded without one was copied in from
                // the old system: the clocks start above it.
                if next.upgraded_without_mark && written_by != Some(start.me) {
                    next.upgraded_without_mark = false;
                }
                if let Some(s) = written_by.filter(|s| *s != start.me) {
                    next.add_past(s);
                }
            }
        }
        (next != *self).then_some(next)
    }

    /// `system`'s mark came along: this node's clocks start above its IDs.
    pub fn add_past(&mut self, system: i64) {
        if !self.past.contains(&system) {
            self.past.push(system);
        }
        if self.past.len() > MAX_PAST {
            self.past.remove(0);
        }
    }

    pub fn render(&self) -> String {
        let mut text = format!("{HEADER}\n");
        if self.upgraded_without_mark {
            text += "upgraded_without_mark=true\n";
        }
        for s in &self.past {
            text += &format!("past={s}\n");
        }
        text
    }

    /// Reads the file's text; a text that is not what pg_idgen writes is `FileError::Malformed`.
    pub fn parse(text: &str) -> Result<Origins, FileError> {
        Origins::parse_lines(text).map_err(FileError::Malformed)
    }

    fn parse_lines(text: &str) -> Result<Origins, String> {
        let mut lines = text.lines();
        if lines.next() != Some(HEADER) {
            return Err(format!(
                "not a pg_idgen origins file (expected \"{HEADER}\")"
            ));
        }
        let mut o = Origins::default();
        for line in lines {
            let Some((key, v)) = line.split_once('=') else {
                continue;
            };
            let v = v.trim();
            match key {
                "upgraded_without_mark" => {
                    o.upgraded_without_mark = match v {
                        "true" => true,
                        "false" => false,
                        _ => {
                            return Err(format!(
                                "upgraded_without_mark \"{v}\" is not true or false"
                            ))
                        }
                    }
                }
                "past" => o.add_past(
                    v.parse::<i64>()
                        .map_err(|_| format!("past \"{v}\" is not a system identifier"))?,
                ),
                _ => {}
            }
        }
        Ok(o)
    }

    /// The record in `dir`; empty when there is none. A file that cannot be read is an error:
    /// starting without it could repeat IDs.
    pub fn load(dir: &Path) -> Result<Origins, FileError> {
        read_parsed(dir, ORIGINS_FILE, Origins::parse).map(Option::unwrap_or_default)
    }

    pub fn store(&self, dir: &Path) -> Result<(), FileError> {
        write_durably(dir, ORIGINS_FILE, &self.render())
    }
}

#[cfg(test)]
mod tests {
    use super::{Origins, Start, MAX_PAST};

    const ME: i64 = 7_400_000_000_000_000_001;
    const OLD: i64 = 7_300_000_000_000_000_002;

    fn start(binary_upgrade: bool, mark: Option<Option<i64>>) -> Start {
        Start {
            binary_upgrade,
            mark,
            me: ME,
        }
    }

    #[test]
    fn pg_upgrade_marks_a_data_directory_without_a_mark() {
        let o = Origins::default();
        let up = o.on_start(&start(true, None)).unwrap();
        assert!(up.upgraded_without_mark);
        // Starts in binary-upgrade mode again change nothing.
        assert_eq!(up.on_start(&start(true, None)), None);
        // A data directory with its own mark is the old one (pg_upgrade starts both).
        assert_eq!(o.on_start(&start(true, Some(Some(ME)))), None);
        // An ordinary start without a mark: a new node.
        assert_eq!(o.on_start(&start(false, None)), None);
        // ... and after pg_upgrade it stays marked until something moves the clocks.
        assert_eq!(up.on_start(&start(false, None)), None);
    }

    #[test]
    fn a_mark_copied_from_the_old_system_lifts_the_refusal_and_names_it() {
        let up = Origins {
            upgraded_without_mark: true,
            past: vec![],
        };
        let next = up.on_start(&start(false, Some(Some(OLD)))).unwrap();
        assert_eq!(
            next,
            Origins {
                upgraded_without_mark: false,
                past: vec![OLD]
            }
        );
        // A mark from before 0.2.5 does not say whose it is: the node-wide refusal ends (the
        // clocks start above it), no system is named.
        let next = up.on_start(&start(false, Some(None))).unwrap();
        assert_eq!(next, Origins::default());
        // A node's own mark names nothing.
        assert_eq!(
            Origins::default().on_start(&start(false, Some(Some(ME)))),
            None
        );
    }

    #[test]
    fn reads_back_and_refuses_damage() {
        let mut o = Origins {
            upgraded_without_mark: true,
            past: vec![OLD, -5],
        };
        assert_eq!(Origins::parse(&o.render()), Ok(o.clone()));
        for s in 0..(MAX_PAST as i64 + 3) {
            o.add_past(s);
        }
        assert_eq!(o.past.len(), MAX_PAST);
        assert!(!o.past.contains(&OLD), "the oldest is forgotten first");
        assert!(Origins::parse("something\n").is_err());
        assert!(Origins::parse("pg_idgen origins v1\npast=x\n").is_err());
        assert!(Origins::parse("pg_idgen origins v1\nupgraded_without_mark=yes\n").is_err());
    }
}
