//! A node's worker-id lease as its processes share it (docs/guarantees.md, guarantee 7).
//!
//! In lease mode the node's worker id is not a setting: a background worker leases one from a
//! coordinator database and renews it. Every process that makes Snowflake IDs reads the lease
//! here. An ID is accepted only if the same lease was still valid *after* its counter was taken,
//! so every accepted ID was made while the lease was held. Once the keeper revokes the lease,
//! the generator's last counter bounds every ID made under it; that is the `last_ts` reported to
//! the coordinator when the lease is given back.
//!
//! Deadlines are instants of a monotonic clock (nanoseconds), never of the wall clock: a wall
//! clock that steps must not stretch a lease.

use std::sync::atomic::Ordering::SeqCst;
use std::sync::atomic::{AtomicI64, AtomicU64};

/// The lease cell in shared memory. The keeper (one process) writes; everyone reads.
#[repr(C)]
#[derive(Default)]
pub struct LeaseCell {
    /// 0: no lease. Otherwise `grant << 32 | worker_id`, with a grant number that is new for every
    /// lease, so a reader that saw one lease notices when another replaced it.
    word: AtomicU64,
    /// Monotonic instant (ns) from which the lease may have lapsed at the coordinator.
    valid_until_ns: AtomicI64,
    /// The last grant number used.
    grants: AtomicU64,
    /// The latest millisecond an ID under this lease may have: see `ceiling_ms`.
    ceiling_ms: AtomicI64,
}

/// Why no ID may be made now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeaseFault {
    /// No worker id has been leased yet (or the lease was given back).
    NotLeased,
    /// The lease of this worker id was not renewed in time; it may belong to someone else soon.
    Lapsed { worker_id: u32 },
}

impl LeaseCell {
    /// Installs a new lease of `worker_id`, valid until `valid_until_ns`, covering IDs up to
    /// `ceiling_ms`; returns its word.
    pub fn grant(&self, worker_id: u32, valid_until_ns: i64, ceiling_ms: i64) -> u64 {
        let grant = (self.grants.fetch_add(1, SeqCst) + 1) & 0xffff_ffff;
        let word = (grant.max(1) << 32) | u64::from(worker_id);
        // The deadline and ceiling first: whoever reads the new word also reads them.
        self.valid_until_ns.store(valid_until_ns, SeqCst);
        self.ceiling_ms.store(ceiling_ms, SeqCst);
        self.word.store(word, SeqCst);
        word
    }

    /// Moves the deadline and the ceiling of the lease `word` (a renewal); false if that lease
    /// is no longer installed. The ceiling never moves down.
    pub fn extend(&self, word: u64, valid_until_ns: i64, ceiling_ms: i64) -> bool {
        if self.word.load(SeqCst) != word {
            return false;
        }
        self.valid_until_ns.store(valid_until_ns, SeqCst);
        self.ceiling_ms.fetch_max(ceiling_ms, SeqCst);
        true
    }

    /// The latest millisecond an ID under the current lease may have. Read it between the two
    /// checks of `under`: a value read while another lease replaced this one is never used,
    /// since the check after the take rejects the result.
    pub fn ceiling_ms(&self) -> i64 {
        self.ceiling_ms.load(SeqCst)
    }

    /// Withdraws the lease; returns the worker id it had. IDs accepted before this returns were
    /// made from counters taken before it returned.
    pub fn revoke(&self) -> Option<u32> {
        let old = self.word.swap(0, SeqCst);
        (old != 0).then_some(old as u32)
    }

    /// The current lease word and worker id, if any, and whether it is valid at `now_ns`.
    pub fn current(&self, now_ns: i64) -> Option<(u64, u32, bool)> {
        let word = self.word.load(SeqCst);
        (word != 0).then(|| (word, word as u32, now_ns < self.valid_until_ns.load(SeqCst)))
    }

    pub fn valid_until_ns(&self) -> i64 {
        self.valid_until_ns.load(SeqCst)
    }

    /// Runs `take` under the lease: the result is accepted, with the lease's worker id, only if
    /// the same lease was valid both before and after `take`. A rejected result (its counter)
    /// is simply never used: a gap, not a repeat.
    pub fn under<T>(
        &self,
        now_ns: impl Fn() -> i64,
        take: impl FnOnce() -> T,
    ) -> Result<(u32, T), LeaseFault> {
        let Some((word, worker_id, valid)) = self.current(now_ns()) else {
            return Err(LeaseFault::NotLeased);
        };
        if !valid {
            return Err(LeaseFault::Lapsed { worker_id });
        }
        let out = take();
        match self.current(now_ns()) {
            Some((w, _, true)) if w == word => Ok((worker_id, out)),
            _ => Err(LeaseFault::Lapsed { worker_id }),
        }
    }
}

/// The latest millisecond a holder may give an ID, from the answer to its last successful acquire
/// or heartbeat: `reported_ms`, the time of the last ID it reported in that call (None: none yet;
/// for an acquire, the lease's `start_after`), and `expires_ms`, the expiry the coordinator
/// answered (its own clock at the call + ttl).
///
/// The coordinator lets the next holder start after `last_ts + ttl + grace` (with `last_ts >=
/// reported_ms`) and after `max(expires_at, heartbeat_at + ttl) + grace`: both are at least this
/// ceiling. It is built only from what the coordinator wrote, never from the holder's wall clock,
/// so whatever the holder does until its next heartbeat (a large batch under the `continue`
/// policy, a clock stepped ahead) and however it stalls, it cannot make an ID its successor will
/// make again (docs/guarantees.md, guarantee 7). A holder whose clock runs ahead of the coordinator's by more
/// than the ttl cannot make IDs at all: refused, not repeated.
pub fn ceiling_ms(reported_ms: Option<i64>, expires_ms: i64, ttl_ms: u64) -> i64 {
    reported_ms
        .map_or(i64::MIN, |ms| ms.saturating_add(ttl_ms as i64))
        .max(expires_ms)
}

/// How often the keeper renews a lease of `ttl_ms`: three times per ttl, so two renewals can
/// fail before it lapses.
pub fn renew_every_ms(ttl_ms: u64) -> u64 {
    (ttl_ms / 3).max(100)
}

/// How soon the keeper tries again after a failed call: often enough to renew before the lease
/// lapses, rarely enough not to flood a coordinator that is down.
pub fn retry_after_ms(ttl_ms: u64) -> u64 {
    (ttl_ms / 10).clamp(100, 1000)
}

/// The condition name a coordinator's `idgen.worker_heartbeat` gives a lost lease, in the error's
/// CONSTRAINT field (from 0.2.5 on); the SQLSTATE is 55000, which other refusals share.
pub const LOST_CONDITION: &str = "idgen_lease_lost";

/// Whether a coordinator's error says the lease is lost (someone else may hold the worker id now),
/// rather than that the call failed. Coordinators before 0.2.5 say so only in the message, which
/// starts with "lease lost"; that text is read only when the error carries no condition name.
pub fn is_lost(sqlstate: Option<&str>, condition: Option<&str>, message: &str) -> bool {
    match condition {
        Some(name) => name == LOST_CONDITION,
        None => sqlstate == Some("55000") && message.starts_with("lease lost"),
    }
}

#[cfg(test)]
mod tests;
