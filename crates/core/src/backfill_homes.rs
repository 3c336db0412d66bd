//! Where each backfill worker id's counters live (docs/backfill.md): the file
//! `pg_idgen.backfill_homes` in the data directory.
//!
//! A backfilled Snowflake ID is unique because the counter of its bucket only moves forward, and
//! that counter is a row of `idgen_internal.backfill_counters` in one database of the node
//! (`idgen.backfill_database`). Another table starts every counter at 0 again: a change of the
//! setting, a rename of the database and a new one under the old name, a dropped database, a
//! dropped and re-created extension. So the first block a backfill worker id gets binds it to the
//! table that holds its counters (the database's and the table's object ids, which a rename keeps
//! and a new database or extension does not), durably before the block is committed; a block asked
//! of any other table is refused until the operator chooses a backfill worker id never used.
//!
//! Written like the mark: temporary file, fsync, rename, fsync of the directory.

use std::path::Path;

use super::files::{read_parsed, write_durably, FileError};

pub const HOMES_FILE: &str = "pg_idgen.backfill_homes";
const HEADER: &str = "pg_idgen backfill homes v1";

/// The table that holds a worker id's counters: the database's object id and the table's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Home {
    pub db: u32,
    pub table: u32,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Homes {
    /// (backfill worker id, the table of its counters), in the order they were bound.
    pub bound: Vec<(i32, Home)>,
}

/// What a block of `stream` asked of `home` finds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Binding {
    /// Bound to this table already.
    Here,
    /// Never bound: the record with it bound here, to be written before the block is committed.
    New(Homes),
    /// Bound to another table: its counters are there, and this one's would repeat their numbers.
    Elsewhere(Home),
}

impl Homes {
    pub fn home_of(&self, stream: i32) -> Option<Home> {
        self.bound
            .iter()
            .find(|(s, _)| *s == stream)
            .map(|(_, h)| *h)
    }

    /// Whether `stream`'s counters may be taken from `home`.
    pub fn bind(&self, stream: i32, home: Home) -> Binding {
        match self.home_of(stream) {
            Some(h) if h == home => Binding::Here,
            Some(h) => Binding::Elsewhere(h),
            None => {
                let mut next = self.clone();
                next.bound.push((stream, home));
                Binding::New(next)
            }
        }
    }

    pub fn render(&self) -> String {
        let mut text = format!("{HEADER}\n");
        for (stream, h) in &self.bound {
            text += &format!("worker_id={stream} database={} table={}\n", h.db, h.table);
        }
        text
    }

    /// Reads the file's text; a text that is not what pg_idgen writes is `FileError::Malformed`.
    pub fn parse(text: &str) -> Result<Homes, FileError> {
        let mut lines = text.lines();
        if lines.next() != Some(HEADER) {
            return Err(FileError::Malformed(format!(
                "not a pg_idgen backfill homes file (expected \"{HEADER}\")"
            )));
        }
        let mut homes = Homes::default();
        for line in lines.filter(|l| !l.trim().is_empty()) {
            let bad = || {
                FileError::Malformed(format!(
                    "line \"{line}\" is not worker_id=N database=N table=N"
                ))
            };
            let mut fields = line.split_whitespace().map(|f| f.split_once('='));
            let mut next = |key: &str| match fields.next() {
                Some(Some((k, v))) if k == key => Ok(v),
                _ => Err(bad()),
            };
            let stream = next("worker_id")?.parse::<i32>().map_err(|_| bad())?;
            let db = next("database")?.parse::<u32>().map_err(|_| bad())?;
            let table = next("table")?.parse::<u32>().map_err(|_| bad())?;
            if homes.home_of(stream).is_some() {
                return Err(FileError::Malformed(format!(
                    "worker id {stream} is bound twice"
                )));
            }
            homes.bound.push((stream, Home { db, table }));
        }
        Ok(homes)
    }

    /// The record in `dir`; empty when there is none. A file that cannot be read is an error:
    /// going on without it could repeat IDs.
    pub fn load(dir: &Path) -> Result<Homes, FileError> {
        read_parsed(dir, HOMES_FILE, Homes::parse).map(Option::unwrap_or_default)
    }

    pub fn store(&self, dir: &Path) -> Result<(), FileError> {
        write_durably(dir, HOMES_FILE, &self.render())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const APP: Home = Home {
        db: 16384,
        table: 16500,
    };

    #[test]
    fn the_first_block_binds_and_later_ones_find_it_bound() {
        let Binding::New(homes) = Homes::default().bind(1023, APP) else {
            panic!("an empty record binds")
        };
        assert_eq!(homes.bind(1023, APP), Binding::Here);
        assert_eq!(Homes::parse(&homes.render()), Ok(homes));
    }

    #[test]
    fn another_database_or_table_is_elsewhere() {
        let Binding::New(homes) = Homes::default().bind(1023, APP) else {
            panic!()
        };
        // idgen.backfill_database changed, or a new database under the old name.
        let other_db = Home { db: 16390, ..APP };
        assert_eq!(homes.bind(1023, other_db), Binding::Elsewhere(APP));
        // The extension dropped and created again in the same database.
        let other_table = Home {
            table: 16800,
            ..APP
        };
        assert_eq!(homes.bind(1023, other_table), Binding::Elsewhere(APP));
        // A worker id never used binds anywhere.
        assert!(matches!(homes.bind(1022, other_db), Binding::New(_)));
    }

    #[test]
    fn a_file_that_is_not_ours_is_malformed() {
        for text in [
            "",
            "something else\n",
            "pg_idgen backfill homes v1\nworker_id=x database=1 table=2\n",
            "pg_idgen backfill homes v1\nworker_id=1 table=2 database=1\n",
            "pg_idgen backfill homes v1\nworker_id=1 database=1 table=2\nworker_id=1 database=3 table=4\n",
        ] {
            assert!(
                matches!(Homes::parse(text), Err(FileError::Malformed(_))),
                "{text:?}"
            );
        }
    }
}
