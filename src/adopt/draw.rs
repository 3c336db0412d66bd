//! What an adopted sequence's calls run once the rewrite (rewrite.rs) put them in a statement:
//! `nextval` and an IDENTITY column's next value take the node's next Snowflake ID (a block of
//! them for INCREMENT BY n), `currval` and `lastval` return the session's last one, `setval`
//! accepts what cannot lead to a repeated ID. A call that names a sequence only at run time
//! (`nextval(name)` with a variable) comes here too, and goes on to PostgreSQL's own function
//! where the sequence is not adopted.
//!
//! Privileges are PostgreSQL's: USAGE or UPDATE to draw with `nextval` (an IDENTITY column's
//! draw checks none, as PostgreSQL's does not: INSERT on the table is the right), SELECT or USAGE
//! for `currval`, UPDATE for `setval`.
use pgrx::prelude::*;
use pgrx::{pg_sys, PgSqlErrorCode};

use pg_idgen_core::sequence_blocks;

use super::registry;
use crate::node::take::{self, node};
use crate::pg::backend_local::BackendLocal;
use crate::pg::errors::IdError;
use crate::pg::fast_entry::{fast_entry, Call};

/// This session's draws: each adopted sequence's last value (for `currval`), and the sequence of
/// the last draw (for `lastval`).
struct Session {
    last: Vec<(pg_sys::Oid, i64)>,
    last_used: Option<pg_sys::Oid>,
}

static SESSION: BackendLocal<Session> = BackendLocal::new(Session {
    last: Vec::new(),
    last_used: None,
});

fn remember(seq: pg_sys::Oid, value: i64, used: bool) {
    SESSION.with(|s| {
        match s.last.iter_mut().find(|(o, _)| *o == seq) {
            Some(entry) => entry.1 = value,
            None => s.last.push((seq, value)),
        }
        if used {
            s.last_used = Some(seq);
        }
    });
}

/// The privilege checks of `nextval` that passed, by sequence and role, while nothing they depend
/// on changed: the sequence's ACL and owner (a relcache invalidation: registry::epoch), roles'
/// memberships and attributes (a syscache invalidation of pg_auth_members or pg_authid). PostgreSQL
/// checks at every call; a cached pass is the same answer without the catalog lookup (~45 ns).
struct Passed {
    epoch: u64,
    roles_epoch: u64,
    passed: Vec<(pg_sys::Oid, pg_sys::Oid)>,
}

static PASSED: BackendLocal<Passed> = BackendLocal::new(Passed {
    epoch: u64::MAX,
    roles_epoch: 0,
    passed: Vec::new(),
});
static ROLES_EPOCH: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
static ROLES_WATCHED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn roles_changed(_arg: pg_sys::Datum, _cache: i32, _hash: u32) {
    ROLES_EPOCH.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
}

/// `nextval`'s check (USAGE or UPDATE), from the cache of passes where it holds one.
fn check_draw_privilege(seq: pg_sys::Oid) {
    use std::sync::atomic::Ordering::Relaxed;
    if !ROLES_WATCHED.load(Relaxed) && !ROLES_WATCHED.swap(true, Relaxed) {
        // SAFETY: registering syscache callbacks in a backend, once; they live as long as the
        // process.
        unsafe {
            for cache in [
                pg_sys::SysCacheIdentifier::AUTHMEMMEMROLE,
                pg_sys::SysCacheIdentifier::AUTHOID,
            ] {
                pg_sys::CacheRegisterSyscacheCallback(
                    cache as _,
                    Some(roles_changed),
                    pg_sys::Datum::from(0),
                );
            }
        }
    }
    let user = crate::pg::fast_entry::current_user();
    let (epoch, roles) = (registry::epoch(), ROLES_EPOCH.load(Relaxed));
    PASSED.with(|p| {
        if p.epoch != epoch || p.roles_epoch != roles {
            p.passed.clear();
            p.epoch = epoch;
            p.roles_epoch = roles;
        }
    });
    if passed_before(seq, user) {
        return;
    }
    check_privilege(seq, pg_sys::ACL_USAGE | pg_sys::ACL_UPDATE);
    PASSED.with(|p| {
        if p.epoch == epoch && p.roles_epoch == roles && p.passed.len() < 64 {
            p.passed.push((seq, user));
        }
    });
}

/// Whether `user`'s draw from `seq` passed the privilege check before, with nothing it depends on
/// changed since (false when the cache is stale or in use).
#[inline(always)]
fn passed_before(seq: pg_sys::Oid, user: pg_sys::Oid) -> bool {
    use std::sync::atomic::Ordering::Relaxed;
    let (epoch, roles) = (registry::current_epoch(), ROLES_EPOCH.load(Relaxed));
    PASSED
        .try_with(|p| p.epoch == epoch && p.roles_epoch == roles && p.passed.contains(&(seq, user)))
        .unwrap_or(false)
}

/// PostgreSQL's check for a sequence function: the current role has one of `modes` on it.
fn check_privilege(seq: pg_sys::Oid, modes: u32) {
    // SAFETY: an ACL check in a transaction.
    let ok = unsafe {
        pg_sys::pg_class_aclcheck(seq, pg_sys::GetUserId(), modes as pg_sys::AclMode)
            == pg_sys::AclResult::ACLCHECK_OK
    };
    if !ok {
        IdError::new(
            PgSqlErrorCode::ERRCODE_INSUFFICIENT_PRIVILEGE,
            format!(
                "permission denied for sequence {}",
                crate::pg::relation_name(seq)
            ),
        )
        .raise();
    }
}

/// PostgreSQL refuses `nextval()` in a read-only transaction (but for a temporary sequence,
/// which cannot be adopted); so does an adopted one.
fn check_writable() {
    // SAFETY: reads a flag of the transaction; PreventCommandIfReadOnly raises PostgreSQL's own
    // error.
    unsafe {
        if pg_sys::XactReadOnly {
            pg_sys::PreventCommandIfReadOnly(c"nextval()".as_ptr());
        }
    }
}

/// The node's next Snowflake ID, or for an increment n > 1 the middle of a block of 2n + 1 that
/// this call alone was issued.
fn take_id(increment: i64) -> i64 {
    if increment <= 1 {
        return take::snowflake_fast().unwrap_or_else(|| {
            let (issued, worker) = take::snowflake(1);
            node().id_of_worker(issued.first, issued.flag, worker)
        });
    }
    let n = increment as u64;
    let g = node();
    if let Some(why) = sequence_blocks::refusal(&g.layout, n) {
        IdError::new(
            PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
            format!("an adopted sequence of INCREMENT {n} cannot be served: {why}"),
        )
        .hint("Give the sequence back (idgen.release_sequence), or lower its INCREMENT.")
        .raise();
    }
    // A take that ran into the end of a tick is spent (gaps only) and the next starts in a tick
    // with room: blocks take at most half a tick.
    for _ in 0..4 {
        let (issued, worker) = take::snowflake(sequence_blocks::width(n));
        if let Some(c) = sequence_blocks::middle(g.seq_bits(), issued.first, issued.count, n) {
            return g.id_of_worker(c, issued.flag, worker);
        }
    }
    IdError::new(
        PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
        format!("no block of {n} IDs within one tick after four takes"),
    )
    .raise()
}

// The draw of an adopted sequence: what `nextval('s')` and an IDENTITY column's default of an
// adopted sequence become (`checked`: nextval's privilege check; an IDENTITY draw has none).
// The increment is the sequence's, known when the statement was planned (ALTER SEQUENCE makes it
// be planned again). Created in sql/install/adopt.sql; its common case is the bare fast path
// below (pg/fast_entry.rs), `sequence_next_full` the rest.
fast_entry!(
    c_only,
    pg_finfo_sequence_next_wrapper,
    sequence_next_wrapper,
    sequence_next_fast,
    pg_sys::Datum::from,
    sequence_next_full_wrapper
);

/// The common case of an adopted draw, bare: increment 1, a read-write transaction, the privilege
/// check passed before in this backend (or none asked), the session's entry for the sequence
/// there already, and the node's fast path. None, having issued nothing, for anything else.
#[inline(always)]
fn sequence_next_fast(call: Call) -> Option<i64> {
    let seq = pg_sys::Oid::from(call.arg(0)?.value() as u32);
    let increment = call.arg(1)?.value() as i64;
    let checked = call.arg(2)?.value() & 0xff != 0;
    if increment > 1 || crate::pg::fast_entry::read_only() {
        return None;
    }
    if checked && !passed_before(seq, crate::pg::fast_entry::current_user()) {
        return None;
    }
    let slot = SESSION
        .try_with(|s| s.last.iter().position(|(o, _)| *o == seq))
        .flatten()?;
    let id = take::snowflake_fast()?;
    // The entry exists and nothing else holds the session's state: this cannot fail now.
    let _ = SESSION.try_with(|s| {
        s.last[slot].1 = id;
        s.last_used = Some(seq);
    });
    Some(id)
}

/// `sequence_next` for every call its fast path leaves.
#[pg_extern(volatile, parallel_restricted, strict, sql = false)]
fn sequence_next_full(seq: pg_sys::Oid, increment: i64, checked: bool) -> i64 {
    if checked {
        check_draw_privilege(seq);
    }
    check_writable();
    let id = take_id(increment);
    remember(seq, id, true);
    id
}

/// `nextval(s)` for a sequence named only at run time: the adopted draw, or PostgreSQL's.
#[pg_extern(volatile, parallel_restricted, strict, sql = false)]
fn sequence_nextval(seq: pg_sys::Oid) -> i64 {
    match registry::adopted(seq) {
        Some(a) => sequence_next_full(seq, a.increment, true),
        None => builtin(NEXTVAL, &[seq.into()]),
    }
}

/// `currval(s)`: the value this session last drew from (or set with `setval` on) an adopted
/// sequence; PostgreSQL's for another.
#[pg_extern(volatile, parallel_restricted, strict, sql = false)]
fn sequence_currval(seq: pg_sys::Oid) -> i64 {
    if registry::adopted(seq).is_none() {
        return builtin(CURRVAL, &[seq.into()]);
    }
    check_privilege(seq, pg_sys::ACL_SELECT | pg_sys::ACL_USAGE);
    let last = SESSION.with(|s| s.last.iter().find(|(o, _)| *o == seq).map(|e| e.1));
    last.unwrap_or_else(|| {
        IdError::new(
            PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
            format!(
                "currval of sequence \"{}\" is not yet defined in this session",
                crate::pg::relation_name(seq)
            ),
        )
        .raise()
    })
}

/// `setval(s, value)` and `setval(s, value, is_called)` on an adopted sequence: its IDs come from
/// the node's Snowflake generator, which no caller moves. A value below the next ID the node
/// hands out is accepted and changes nothing but `currval` (as PostgreSQL's setval sets it, when
/// is_called): every later ID is above it anyway. What ORMs and loaders do after loading rows
/// with their keys (Django's sqlsequencereset: `setval(s, max(id))`) is such a value, and so is
/// the sequence's MAXVALUE, where adoption keeps it (pg_dump writes it). Any other value at or
/// above it would ask for IDs above it, which only moving the node's clock could give: refused.
fn setval_adopted(seq: pg_sys::Oid, value: i64, is_called: bool) -> i64 {
    check_privilege(seq, pg_sys::ACL_UPDATE);
    check_writable();
    let next = take_id(1);
    // pg_dump writes an adopted sequence's value as it is kept, its MAXVALUE: restoring it is
    // the adoption's own state.
    if value >= next && Some(value) != super::sequence_row(seq).map(|row| row.2) {
        IdError::new(
            PgSqlErrorCode::ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
            format!(
                "setval: value {value} is ahead of the IDs of adopted sequence \"{}\"",
                crate::pg::relation_name(seq)
            ),
        )
        .detail(format!(
            "Its values come from this node's Snowflake generator, whose IDs are now at {next}: it would have to skip past {value}."
        ))
        .hint("A value below the next ID needs no setval (every ID handed out later is above it). To move this node's IDs past a time, its administrator runs idgen.snowflake_start_after(); or give the sequence back with idgen.release_sequence().")
        .raise();
    }
    if is_called {
        remember(seq, value, false);
    }
    value
}

/// `setval(s, value)`: see setval_adopted; PostgreSQL's for another sequence.
#[pg_extern(volatile, parallel_restricted, strict, sql = false)]
fn sequence_setval(seq: pg_sys::Oid, value: i64) -> i64 {
    if registry::adopted(seq).is_none() {
        return builtin(SETVAL, &[seq.into(), value.into()]);
    }
    setval_adopted(seq, value, true)
}

/// `setval(s, value, is_called)`: see setval_adopted; PostgreSQL's for another sequence.
#[pg_extern(volatile, parallel_restricted, strict, sql = false)]
fn sequence_setval3(seq: pg_sys::Oid, value: i64, is_called: bool) -> i64 {
    if registry::adopted(seq).is_none() {
        return builtin(SETVAL3, &[seq.into(), value.into(), is_called.into()]);
    }
    setval_adopted(seq, value, is_called)
}

/// `lastval()` in a database with adopted sequences: the value of this session's last draw from
/// one, where it drew from no other sequence (PostgreSQL's own `lastval()` is then undefined);
/// PostgreSQL's where it drew from none. A session that drew from both cannot be told which came
/// last: refused, naming the adopted one.
#[pg_extern(volatile, parallel_restricted, sql = false)]
fn sequence_lastval() -> i64 {
    let ours = SESSION.with(|s| {
        let seq = s.last_used?;
        s.last.iter().find(|(o, _)| *o == seq).copied()
    });
    let Some((seq, value)) = ours else {
        return builtin(LASTVAL, &[]);
    };
    if plain_lastval_defined() {
        IdError::new(
            PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
            "lastval() is ambiguous in this session",
        )
        .detail(format!(
            "The session drew from adopted sequence \"{}\" and from a sequence pg_idgen does not serve; which was last is not known.",
            crate::pg::relation_name(seq)
        ))
        .hint("Name the sequence: currval('...'), or use INSERT ... RETURNING.")
        .raise();
    }
    value
}

/// Whether PostgreSQL's own `lastval()` has a value in this session: called in a subtransaction,
/// which its error ("not yet defined") rolls back.
fn plain_lastval_defined() -> bool {
    // SAFETY: the internal subtransaction protocol PL/pgSQL's exception blocks use: begin, run,
    // then release or roll back, with the caller's memory context and resource owner restored.
    unsafe {
        let context = pg_sys::CurrentMemoryContext;
        let owner = pg_sys::CurrentResourceOwner;
        pg_sys::BeginInternalSubTransaction(std::ptr::null());
        pg_sys::MemoryContextSwitchTo(context);
        let defined = PgTryBuilder::new(|| {
            builtin(LASTVAL, &[]);
            pg_sys::ReleaseCurrentSubTransaction();
            true
        })
        .catch_others(|_| {
            pg_sys::RollbackAndReleaseCurrentSubTransaction();
            false
        })
        .execute();
        pg_sys::MemoryContextSwitchTo(context);
        pg_sys::CurrentResourceOwner = owner;
        defined
    }
}

/// PostgreSQL's own sequence functions, by their OIDs (fixed in pg_proc.dat).
const NEXTVAL: u32 = 1574;
const CURRVAL: u32 = 1575;
const SETVAL: u32 = 1576;
const SETVAL3: u32 = 1765;
const LASTVAL: u32 = 2559;

/// PostgreSQL's own sequence function `f` (by OID) with `args` (none NULL), for a sequence that
/// is not adopted.
fn builtin(f: u32, args: &[pg_sys::Datum]) -> i64 {
    let f = pg_sys::Oid::from(f);
    let c = pg_sys::InvalidOid;
    // SAFETY: a call of a built-in function with non-NULL arguments through the function
    // manager; an ERROR it raises unwinds through pgrx's guard.
    unsafe {
        let d = match args {
            [] => pg_sys::OidFunctionCall0Coll(f, c),
            [a] => pg_sys::OidFunctionCall1Coll(f, c, *a),
            [a, b] => pg_sys::OidFunctionCall2Coll(f, c, *a, *b),
            [a, b, d] => pg_sys::OidFunctionCall3Coll(f, c, *a, *b, *d),
            _ => unreachable!("sequence functions take at most three arguments"),
        };
        d.value() as i64
    }
}
