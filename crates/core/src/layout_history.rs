//! A node's earlier layouts, and what they ask of a new one (docs/guarantees.md, guarantee 3 across a change of
//! `idgen.layout` between restarts).
//!
//! The durable mark bounds the *time* of every ID a node made, but two layouts put the same time
//! in different bits: after a change, new IDs could be below old ones, or equal to one. So the
//! node keeps, next to the mark, the layouts it made IDs with and until when. A new layout is
//! accepted when, for every earlier one, either
//! - the two can never make the same ID: both have the reserved field in the same bits, with
//!   different fixed values (docs/snowflake.md's advice for layouts that may change); or
//! - from some tick on, every ID of the new layout is above every ID the old one made; the node
//!   then starts at that tick (`start_ms`), which must not be too far ahead of the clock.
//!
//! Otherwise the node refuses to make Snowflake IDs (and says which layout to go back to); the
//! history is not changed, so going back is always possible. The file is written like the mark:
//! temporary file, fsync, rename, fsync of the directory.

use std::path::Path;

use super::civil::format_utc_ms;
use super::files::{read_parsed, write_durably, FileError};
use super::layout::{Field, Layout};

pub const HISTORY_FILE: &str = "pg_idgen.layouts";
const HEADER: &str = "pg_idgen layout history v1";

/// How far ahead of the clock (or of the mark, when that is later) a new layout may have to start
/// before it is refused: the node counts ahead of the clock until then, as after a step back of
/// the clock.
pub const MAX_START_AHEAD_MS: i64 = 60_000;

/// A layout the node made IDs with, all of them with a time before `until_ms`.
#[derive(Clone, Debug, PartialEq)]
pub struct Past {
    pub layout: Layout,
    pub until_ms: i64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct History {
    /// Earlier layouts, oldest first.
    pub past: Vec<Past>,
    pub current: Layout,
    /// The current layout's IDs must have a time at or after this (ms since 1970; 0: no bound).
    pub start_ms: i64,
}

/// What a start with a configured layout comes to.
#[derive(Debug, PartialEq)]
pub enum Verdict {
    /// The same layout as before (or a first start): start at or after `start_ms`.
    Same {
        start_ms: i64,
        write: Option<History>,
    },
    /// A new layout that is safe from `start_ms` on: write `history` before any ID.
    Changed { history: History, start_ms: i64 },
    /// A new layout that could repeat or undercut earlier IDs; the message says why.
    Refused(String),
}

fn same_ids(a: &Layout, b: &Layout) -> bool {
    a.canonical_spec() == b.canonical_spec()
}

/// Whether `a` and `b` can never make the same ID: the same reserved bits, set differently.
fn disjoint(a: &Layout, b: &Layout) -> bool {
    let r = Field::Reserved;
    a.bits(r) > 0
        && a.bits(r) == b.bits(r)
        && a.shift(r) == b.shift(r)
        && a.reserved_value != b.reserved_value
}

/// The largest ID `old` can have made with a time before `until_ms`; None if it made none.
fn largest_before(old: &Layout, until_ms: i64) -> Option<u64> {
    let tick = old.tick_of_ms(until_ms.checked_sub(1)?)?;
    // Every layout starts its order with time (Layout::from_spec refuses others), so IDs of a
    // later tick are larger.
    debug_assert!(old.time_on_top());
    let shift = old.shift(Field::Time);
    let above = (tick as u128 + 1) << shift;
    Some((above - 1).min(old.max_id() as u128) as u64)
}

/// The first tick of `new` whose every ID is above `bound`; Err when there is none.
fn first_tick_above(new: &Layout, bound: u64) -> Result<u64, String> {
    debug_assert!(new.time_on_top());
    let tick = (bound >> new.shift(Field::Time)) + 1;
    if tick >= new.ticks_limit() {
        return Err("none of its IDs is above them".into());
    }
    Ok(tick)
}

/// Decides whether the node may make IDs with `layout`, given its history (None: no history file)
/// and its durable mark (None: it never made an ID). `now_ms` is the wall clock.
pub fn on_start(
    prev: Option<History>,
    mark_ms: Option<i64>,
    layout: &Layout,
    now_ms: i64,
) -> Verdict {
    let Some(prev) = prev else {
        // A first start, or a node from before the history file: its IDs were made with this
        // layout as far as anyone can know.
        return Verdict::Same {
            start_ms: 0,
            write: Some(History {
                past: Vec::new(),
                current: layout.clone(),
                start_ms: 0,
            }),
        };
    };
    if same_ids(&prev.current, layout) {
        return Verdict::Same {
            start_ms: prev.start_ms,
            write: None,
        };
    }
    let mut past = prev.past.clone();
    past.push(Past {
        layout: prev.current.clone(),
        until_ms: mark_ms.unwrap_or(0).max(prev.start_ms),
    });
    let mut first_tick = 0u64;
    for p in &past {
        if disjoint(&p.layout, layout) {
            continue;
        }
        let Some(bound) = largest_before(&p.layout, p.until_ms) else {
            continue; // it made no ID
        };
        match first_tick_above(layout, bound) {
            Ok(t) => first_tick = first_tick.max(t),
            Err(why) => {
                return Verdict::Refused(format!(
                    "idgen.layout changed from \"{}\" to \"{}\", and the new layout could repeat or undercut the IDs made with \"{}\" until {}: {why}",
                    prev.current.label(),
                    layout.label(),
                    p.layout.label(),
                    format_utc_ms(p.until_ms)
                ))
            }
        }
    }
    let start_ms = layout.ms_of_tick(first_tick);
    // The node starts at its mark anyway; the new layout may ask for a little more.
    let base = now_ms.max(mark_ms.unwrap_or(i64::MIN));
    if start_ms > base.saturating_add(MAX_START_AHEAD_MS) {
        return Verdict::Refused(format!(
            "idgen.layout changed from \"{}\" to \"{}\", whose IDs stay below IDs made before until {}",
            prev.current.label(),
            layout.label(),
            format_utc_ms(start_ms)
        ));
    }
    Verdict::Changed {
        history: History {
            past,
            current: layout.clone(),
            start_ms,
        },
        start_ms,
    }
}

impl History {
    pub fn render(&self) -> String {
        let mut out = format!("{HEADER}\n");
        for p in &self.past {
            out += &format!("past {} {}\n", p.until_ms, p.layout.canonical_spec());
        }
        out += &format!(
            "current {} {}\n",
            self.start_ms,
            self.current.canonical_spec()
        );
        out
    }

    /// Reads the file's text; a text that is not what pg_idgen writes is `FileError::Malformed`.
    pub fn parse(text: &str) -> Result<History, FileError> {
        History::parse_lines(text).map_err(FileError::Malformed)
    }

    fn parse_lines(text: &str) -> Result<History, String> {
        let mut lines = text.lines();
        if lines.next() != Some(HEADER) {
            return Err(format!(
                "not a pg_idgen layout history (expected \"{HEADER}\")"
            ));
        }
        let entry = |line: &str| -> Result<(i64, Layout), String> {
            let mut parts = line.splitn(3, ' ');
            let (_, ms, spec) = (parts.next(), parts.next(), parts.next());
            let ms = ms
                .and_then(|m| m.parse::<i64>().ok())
                .ok_or_else(|| format!("line \"{line}\" has no time"))?;
            let layout =
                Layout::parse(spec.unwrap_or("")).map_err(|e| format!("line \"{line}\": {e}"))?;
            Ok((ms, layout))
        };
        let mut past = Vec::new();
        let mut current = None;
        for line in lines {
            if line.starts_with("past ") {
                let (until_ms, layout) = entry(line)?;
                past.push(Past { layout, until_ms });
            } else if line.starts_with("current ") {
                current = Some(entry(line)?);
            } else if !line.trim().is_empty() {
                return Err(format!("unexpected line \"{line}\""));
            }
        }
        let (start_ms, current) = current.ok_or("the history has no current layout")?;
        Ok(History {
            past,
            current,
            start_ms,
        })
    }

    /// Reads the history in `dir`; `Ok(None)` when there is none. A file that exists but cannot
    /// be read is an error: going on without it could repeat IDs.
    pub fn load(dir: &Path) -> Result<Option<History>, FileError> {
        read_parsed(dir, HISTORY_FILE, History::parse)
    }

    /// Writes the history durably, as the mark is written.
    pub fn store(&self, dir: &Path) -> Result<(), FileError> {
        write_durably(dir, HISTORY_FILE, &self.render())
    }
}

#[cfg(test)]
mod tests;
