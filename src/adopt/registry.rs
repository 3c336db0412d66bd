//! Which sequences are adopted, as this backend knows it: looked up in `idgen_internal.adopted_sequences`
//! the first time a statement draws from a sequence, then kept until PostgreSQL says the sequence
//! or the table changed (a relcache invalidation: adopting and giving back send one for both, and
//! ALTER SEQUENCE, GRANT and DROP send one for the sequence).
//!
//! The table is read only where it is pg_idgen's own (a member of the extension): a schema named
//! `idgen_internal` that another role made in a database without pg_idgen adopts nothing. It is read as
//! its owner, so that revoking SELECT on it from PUBLIC breaks no statement.
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

use pgrx::pg_sys;

use crate::pg::backend_local::BackendLocal;

/// What a statement needs to know of an adopted sequence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Adopted {
    /// The sequence's INCREMENT BY: each draw reserves a block of that many IDs around the one it
    /// returns (pg_idgen_core::sequence_blocks).
    pub increment: i64,
}

struct Known {
    /// `idgen_internal.adopted_sequences` and its owner, if pg_idgen is in this database (None: not looked
    /// up yet).
    table: Option<Option<(pg_sys::Oid, pg_sys::Oid)>>,
    /// Sequences looked up, adopted or not.
    sequences: HashMap<pg_sys::Oid, Option<Adopted>>,
    /// Whether any sequence of this database is adopted (None: not looked up yet).
    any: Option<bool>,
}

impl Known {
    fn clear(&mut self) {
        self.sequences.clear();
        self.any = None;
        self.table = None;
    }
}

static KNOWN: BackendLocal<Option<Known>> = BackendLocal::new(None);
/// Counts the invalidations seen: a lookup during which one arrived keeps nothing it learnt.
static EPOCH: AtomicU64 = AtomicU64::new(0);
static REGISTERED: AtomicBool = AtomicBool::new(false);

/// The table, found by these names (`table()` checks they name the extension's own).
const TABLE: &str = "idgen_internal.adopted_sequences";

/// Whether `seq` is adopted, and how. In a database with no adopted sequence (one lookup a
/// backend, `any`), no sequence is looked up.
pub fn adopted(seq: pg_sys::Oid) -> Option<Adopted> {
    if !any() {
        return None;
    }
    if let Some(found) = KNOWN
        .try_with(|k| k.as_ref().and_then(|k| k.sequences.get(&seq).copied()))
        .flatten()
    {
        return found;
    }
    with_known(|k| {
        let found = table(k).and_then(|(_, owner)| lookup(owner, seq));
        k.sequences.insert(seq, found);
        found
    })
}

/// Whether any sequence of this database is adopted.
pub fn any() -> bool {
    if let Some(any) = KNOWN.try_with(|k| k.as_ref().and_then(|k| k.any)).flatten() {
        return any;
    }
    with_known(|k| {
        let any = table(k).is_some_and(|(_, owner)| {
            crate::pg::as_owner::as_owner(owner, || {
                crate::pg::spi_read::one_i64(&format!(
                    "SELECT 1::pg_catalog.int8 FROM {TABLE} LIMIT 1"
                ))
            })
            .unwrap_or_else(|e| pgrx::error!("pg_idgen: reading {TABLE}: {e}"))
            .is_some()
        });
        k.any = Some(any);
        any
    })
}

/// `idgen_internal.adopted_sequences` and its owner, where it is pg_idgen's own.
pub fn table_of_extension() -> Option<(pg_sys::Oid, pg_sys::Oid)> {
    if let Some(t) = KNOWN
        .try_with(|k| k.as_ref().and_then(|k| k.table))
        .flatten()
    {
        return t;
    }
    with_known(table)
}

/// Forgets everything known (the backend's own adoption or release, before the invalidation it
/// sent reaches it at the next command).
pub fn forget() {
    EPOCH.fetch_add(1, Relaxed);
    let _ = KNOWN.try_with(|k| {
        if let Some(k) = k {
            k.clear();
        }
    });
}

/// A number that changes whenever PostgreSQL invalidates a relation's cached entry in this backend
/// (GRANT and REVOKE on a sequence, ALTER SEQUENCE, adoption), for caches of what depends on a
/// sequence (draw.rs's privilege checks). Watching starts with the first call.
pub fn epoch() -> u64 {
    watch();
    EPOCH.load(Relaxed)
}

/// `epoch()` without starting to watch (a fast path's read: a cache filled by `epoch()` watches
/// already).
#[inline(always)]
pub fn current_epoch() -> u64 {
    EPOCH.load(Relaxed)
}

fn watch() {
    if !REGISTERED.load(Relaxed) && !REGISTERED.swap(true, Relaxed) {
        // SAFETY: registering a relcache callback in a backend, once; it lives as long as the
        // process.
        unsafe { pg_sys::CacheRegisterRelcacheCallback(Some(invalidated), pg_sys::Datum::from(0)) };
    }
}

/// Runs a lookup with the backend's state taken out (the lookup runs SQL, which plans, which may
/// look up again: that nested lookup starts from nothing), and keeps what it learnt unless an
/// invalidation arrived meanwhile.
fn with_known<R>(f: impl FnOnce(&mut Known) -> R) -> R {
    watch();
    let epoch = EPOCH.load(Relaxed);
    let mut known = KNOWN
        .try_with(|k| k.take())
        .flatten()
        .unwrap_or_else(|| Known {
            table: None,
            sequences: HashMap::new(),
            any: None,
        });
    let result = f(&mut known);
    if EPOCH.load(Relaxed) != epoch {
        known.clear();
    }
    let _ = KNOWN.try_with(|k| *k = Some(known));
    result
}

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn invalidated(_arg: pg_sys::Datum, relid: pg_sys::Oid) {
    EPOCH.fetch_add(1, Relaxed);
    let _ = KNOWN.try_with(|k| {
        if let Some(k) = k {
            let table = k.table.flatten().map(|(t, _)| t);
            if relid == pg_sys::InvalidOid || Some(relid) == table {
                k.clear();
            } else if k.sequences.remove(&relid).is_some() {
                k.any = None;
            }
        }
    });
}

/// `idgen_internal.adopted_sequences` and its owner, where it belongs to the extension pg_idgen.
fn table(k: &mut Known) -> Option<(pg_sys::Oid, pg_sys::Oid)> {
    *k.table.get_or_insert_with(|| {
        // SAFETY: catalog lookups by name and OID in a transaction, none of which raises for a
        // missing object.
        unsafe {
            let ext = pg_sys::get_extension_oid(c"pg_idgen".as_ptr(), true);
            let nsp = pg_sys::get_namespace_oid(c"idgen_internal".as_ptr(), true);
            if ext == pg_sys::InvalidOid || nsp == pg_sys::InvalidOid {
                return None;
            }
            let rel = pg_sys::get_relname_relid(c"adopted_sequences".as_ptr(), nsp);
            if rel == pg_sys::InvalidOid
                || pg_sys::getExtensionOfObject(pg_sys::RelationRelationId, rel) != ext
            {
                return None;
            }
            let tup = pg_sys::SearchSysCache1(pg_sys::SysCacheIdentifier::RELOID as _, rel.into());
            if tup.is_null() {
                return None;
            }
            let owner = (*(pg_sys::GETSTRUCT(tup) as *mut pg_sys::FormData_pg_class)).relowner;
            pg_sys::ReleaseSysCache(tup);
            Some((rel, owner))
        }
    })
}

fn lookup(owner: pg_sys::Oid, seq: pg_sys::Oid) -> Option<Adopted> {
    let sql = format!(
        "SELECT s.seqincrement FROM {TABLE} a
           JOIN pg_catalog.pg_sequence s ON s.seqrelid OPERATOR(pg_catalog.=) a.seq::pg_catalog.oid
          WHERE a.seq::pg_catalog.oid OPERATOR(pg_catalog.=) '{}'::pg_catalog.oid",
        u32::from(seq)
    );
    let increment = crate::pg::as_owner::as_owner(owner, || crate::pg::spi_read::one_i64(&sql))
        .unwrap_or_else(|e| pgrx::error!("pg_idgen: reading {TABLE}: {e}"))?;
    Some(Adopted { increment })
}
