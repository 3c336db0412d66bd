//! The Snowflake generator: one logical clock per node, advanced by compare-and-swap on one packed
//! 64-bit word, so IDs are unique and strictly increasing across every process that shares the
//! state (docs/guarantees.md, guarantee 1), whatever the wall clock does (guarantees 2, 3 and 4).
//!
//! The state word is a counter `c = tick << sequence_bits | sequence`; the next range of IDs starts
//! at `max(now << sequence_bits, c + 1)`. Overflowing the sequence therefore borrows the next tick
//! instead of wrapping, and a wall clock that steps back leaves the logical clock where it was.
//! How far the logical clock may run ahead of the wall clock is the policy's bound; beyond it the
//! caller waits (up to `max_wait`) and then gets an error, never a repeated ID. Under the rollback
//! policy (the configurable Snowflake's clock-rollback bit) the word's top bit is the layout's rollback flag.
//!
//! The state lives wherever the caller puts it: in PostgreSQL shared memory for the extension, on
//! the heap for the tests, which run the same code from many threads with an injected clock.

use std::num::NonZeroU64;
use std::sync::atomic::{AtomicU64, Ordering::*};

use super::layout::{Field, Layout};

const FLAG_BIT: u64 = 1 << 63;

/// What to do when the wall clock is behind the logical clock (docs/guarantees.md, guarantee 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClockPolicy {
    /// Go on counting from the last ID while the wall clock catches up, up to `max_ahead` ticks
    /// ahead of it; beyond that, wait.
    Continue,
    /// Wait until the wall clock reaches the last ID's tick (Twitter's tilNextMillis).
    Wait,
    /// Fail at once when the wall clock is behind the last ID's tick; sequence overflow still
    /// waits for the next tick.
    Error,
    /// raindrop's: flip the layout's rollback bit and count again from the (earlier) wall clock;
    /// a time already used under the other flag value makes it wait instead.
    RollbackFlag,
}

impl ClockPolicy {
    pub fn name(self) -> &'static str {
        match self {
            ClockPolicy::Continue => "continue",
            ClockPolicy::Wait => "wait",
            ClockPolicy::Error => "error",
            ClockPolicy::RollbackFlag => "rollback_flag",
        }
    }
}

/// The shared state of one node's generator. All-zero is a valid "nothing issued yet" state, so
/// it can live in freshly allocated shared memory; `restore` sets it from the persisted mark.
#[repr(C, align(64))]
#[derive(Default)]
pub struct GeneratorState {
    /// Last counter handed out (`tick << seq_bits | seq`), with the rollback flag in bit 63.
    last: AtomicU64,
    _own_cache_line: [u64; 7],
    /// Ticks up to and including this one are durably reserved: IDs in them may be handed out.
    pub reserved_tick: AtomicU64,
    /// Largest wall-clock tick any caller has read: a wall clock below it has stepped back.
    wall_high: AtomicU64,
    /// The `wall_high` at which the last backward step was counted, so each step counts once.
    step_counted_at: AtomicU64,
    /// Rollback policy: the highest counter used under flag value 0 and 1.
    flag_high: [AtomicU64; 2],
    pub stats: GeneratorStats,
}

/// Counters for `idgen.status`; relaxed, they only inform.
#[repr(C)]
#[derive(Default)]
pub struct GeneratorStats {
    pub issued: AtomicU64,
    pub overflow_waits: AtomicU64,
    pub behind_waits: AtomicU64,
    pub backward_steps: AtomicU64,
    pub largest_backward_step_ms: AtomicU64,
    pub clock_errors: AtomicU64,
    pub flag_flips: AtomicU64,
}

impl GeneratorState {
    /// Sets the state after a start or crash: every tick up to `reserved_tick` may have been used
    /// by the previous life of this node, so counting resumes after it.
    pub fn restore(&self, reserved_tick: Option<u64>, seq_bits: u32) {
        let last = match reserved_tick {
            Some(t) => ((t + 1) << seq_bits) - 1,
            None => 0,
        };
        self.last.store(last, SeqCst);
        self.flag_high[0].store(last, SeqCst);
        self.flag_high[1].store(last, SeqCst);
        self.reserved_tick.store(reserved_tick.unwrap_or(0), SeqCst);
        self.wall_high.store(0, SeqCst);
        self.step_counted_at.store(0, SeqCst);
    }

    /// Sets the state after a clean stop, when the last counter is known exactly: counting
    /// resumes right after it, in the same tick. `counter` 0 is a stream that made no ID. No
    /// tick counts as reserved, so the first ID after the start makes a durable reservation.
    pub fn restore_exact(&self, counter: u64, seq_bits: u32) {
        self.restore(None, seq_bits);
        self.last.store(counter, SeqCst);
        self.flag_high[0].store(counter, SeqCst);
        self.flag_high[1].store(counter, SeqCst);
        self.reserved_tick.store(0, SeqCst);
    }

    /// The highest counter handed out under either rollback flag value (the last one, unless
    /// the clock stepped back under the rollback policy): every ID made so far is at or below
    /// it, so a clean stop records it.
    pub fn high_counter(&self) -> u64 {
        let (last, _) = self.last();
        last.max(self.flag_high[0].load(SeqCst))
            .max(self.flag_high[1].load(SeqCst))
    }

    /// Raises the state so counting resumes after `tick`: a standby replaying its primary's mark,
    /// or crash recovery replaying a mark the file missed. Never lowers anything.
    pub fn raise_floor(&self, tick: u64, seq_bits: u32) {
        let floor = ((tick + 1) << seq_bits) - 1;
        let mut cur = self.last.load(SeqCst);
        while cur & !FLAG_BIT < floor {
            match self
                .last
                .compare_exchange(cur, floor | (cur & FLAG_BIT), SeqCst, SeqCst)
            {
                Ok(_) => break,
                Err(now) => cur = now,
            }
        }
        self.flag_high[0].fetch_max(floor, SeqCst);
        self.flag_high[1].fetch_max(floor, SeqCst);
    }

    /// The last counter handed out and its flag, for `idgen.status`.
    pub fn last(&self) -> (u64, u64) {
        let w = self.last.load(Acquire);
        (w & !FLAG_BIT, w >> 63)
    }
}

/// A wall clock, and a way to wait for it. Injected so tests can step it back at will.
pub trait Clock {
    /// Milliseconds since 1970-01-01 UTC.
    fn now_ms(&self) -> i64;
    /// Sleeps about `ms` milliseconds; an error (e.g. the query was cancelled) ends the wait.
    fn sleep_ms(&self, ms: u64) -> Result<(), GenError>;
}

/// Makes ticks durable before IDs in them are handed out (docs/guarantees.md, guarantee 3). `reserve(tick)` must
/// not return until `state.reserved_tick >= tick` is durable.
pub trait Reserver {
    fn reserve(&self, state: &GeneratorState, tick: u64) -> Result<(), GenError>;
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GenError {
    /// The wall clock is behind the logical clock by more than the policy allows and did not
    /// catch up within `max_wait`.
    ClockBehind {
        behind_ms: u64,
        policy: ClockPolicy,
        waited_ms: u64,
    },
    /// The sequence of the current tick is used up and the next tick did not come within
    /// `max_wait` (large time units under the wait or error policies).
    SequenceExhausted { waited_ms: u64 },
    /// The wall clock reads earlier than the layout's epoch.
    BeforeEpoch { now_ms: i64 },
    /// The time field has no room left: the layout has run out.
    LayoutExhausted,
    /// The durable reservation could not be written; nothing was handed out.
    Reserve(String),
    /// The wait was interrupted (query cancel, shutdown).
    Interrupted(String),
    /// The next ID would be later than the caller's cap (in lease mode: what the worker-id lease
    /// covers, so that the id's next holder starts above it), and the cap did not move within
    /// `max_wait`.
    Capped { ahead_ms: u64, waited_ms: u64 },
}

/// A run of consecutive counters `first .. first + count`, all under one rollback flag value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Issued {
    pub first: u64,
    pub count: u64,
    pub flag: u64,
}

/// One backward step of the wall clock, reported once (the caller logs a WARNING).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BackwardStep {
    pub step_ms: u64,
}

enum Attempt {
    Issued(Issued),
    /// Retry once the wall clock reaches this tick.
    Wait {
        until_tick: u64,
        behind: bool,
    },
    Backwards {
        behind_ticks: u64,
    },
    /// The next tick is beyond the caller's cap: retry when the cap moves.
    Capped,
    Exhausted,
    Retry,
}

/// The per-process, immutable part of a generator: the layout and the policy.
#[derive(Clone, Debug)]
pub struct Generator {
    pub layout: Layout,
    pub policy: ClockPolicy,
    seq_bits: u32,
    seq_mask: u64,
    /// How many ticks the logical clock may run ahead of the wall clock.
    max_ahead: u64,
    max_wait_ms: u64,
    worker: u64,
    packing: Packing,
}

/// Where `id_of_worker` puts each part, worked out once from the layout (`Layout::pack` reads the
/// same from the layout on every call): the shifts of time, sequence, worker and rollback flag,
/// masks that are 0 for fields the layout lacks, and the fixed data-centre and reserved bits.
#[derive(Clone, Debug)]
struct Packing {
    time: u32,
    sequence: u32,
    worker: u32,
    worker_mask: u64,
    rollback: u32,
    rollback_mask: u64,
    fixed: u64,
}

impl Packing {
    fn of(layout: &Layout, datacenter: u64) -> Packing {
        let mask = |f: Field| layout.max_value(f) << layout.shift(f);
        Packing {
            time: layout.shift(Field::Time),
            sequence: layout.shift(Field::Sequence),
            worker: layout.shift(Field::Worker),
            worker_mask: mask(Field::Worker),
            rollback: layout.shift(Field::Rollback),
            rollback_mask: mask(Field::Rollback),
            fixed: layout.pack(0, datacenter, 0, 0, 0) as u64,
        }
    }
}

/// Why a generator cannot be set up: each names the setting to change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigError {
    /// The data-centre id does not fit the layout (`idgen.datacenter_id`).
    Datacenter(String),
    /// The worker id does not fit the layout (`idgen.worker_id`).
    Worker(String),
    /// The clock policy needs a field the layout lacks (`idgen.clock_policy`).
    ClockPolicy(String),
}

impl ConfigError {
    pub fn message(&self) -> &str {
        match self {
            ConfigError::Datacenter(m) | ConfigError::Worker(m) | ConfigError::ClockPolicy(m) => m,
        }
    }
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.message())
    }
}

impl Generator {
    /// `max_drift_ms` bounds the Continue policy (at least one tick, so a large unit can still
    /// borrow); the other policies never run ahead.
    pub fn new(
        layout: Layout,
        policy: ClockPolicy,
        max_drift_ms: u64,
        max_wait_ms: u64,
        datacenter: u64,
        worker: u64,
    ) -> Result<Generator, ConfigError> {
        if datacenter > layout.max_value(Field::Datacenter) {
            return Err(ConfigError::Datacenter(format!(
                "datacenter id {datacenter} does not fit layout {} ({} bits: 0 to {})",
                layout.name,
                layout.bits(Field::Datacenter),
                layout.max_value(Field::Datacenter)
            )));
        }
        if worker > layout.max_value(Field::Worker) {
            return Err(ConfigError::Worker(format!(
                "worker id {worker} does not fit layout {} ({} bits: 0 to {})",
                layout.name,
                layout.bits(Field::Worker),
                layout.max_value(Field::Worker)
            )));
        }
        if policy == ClockPolicy::RollbackFlag && layout.bits(Field::Rollback) == 0 {
            return Err(ConfigError::ClockPolicy(format!(
                "clock policy rollback_flag needs a layout with a rollback bit, and {} has none (use e.g. raindrop, or add rollback=1)",
                layout.name
            )));
        }
        let max_ahead = match policy {
            ClockPolicy::Continue => max_drift_ms.div_ceil(layout.unit_ms).max(1),
            _ => 0,
        };
        let seq_bits = layout.bits(Field::Sequence);
        Ok(Generator {
            packing: Packing::of(&layout, datacenter),
            seq_bits,
            seq_mask: (1u64 << seq_bits) - 1,
            layout,
            policy,
            max_ahead,
            max_wait_ms,
            worker,
        })
    }

    pub fn seq_bits(&self) -> u32 {
        self.seq_bits
    }

    pub fn max_ahead_ticks(&self) -> u64 {
        self.max_ahead
    }

    /// The ID of one counter.
    #[inline]
    pub fn id_of(&self, counter: u64, flag: u64) -> i64 {
        self.id_of_worker(counter, flag, self.worker)
    }

    /// The ID of one counter under another worker id (a leased one), which must fit the layout.
    #[inline]
    pub fn id_of_worker(&self, counter: u64, flag: u64, worker: u64) -> i64 {
        debug_assert!(worker <= self.layout.max_value(Field::Worker));
        let p = &self.packing;
        ((counter >> self.seq_bits) << p.time
            | (counter & self.seq_mask) << p.sequence
            | (worker << p.worker & p.worker_mask)
            | (flag << p.rollback & p.rollback_mask)
            | p.fixed) as i64
    }

    /// A read horizon as an ID of `worker`: the smallest ID of that worker whose counter is
    /// `counter` or more. Every ID of the worker at or above the counter is at or above it, and
    /// every one below the counter is below it (so an idle node's horizon passes its last ID).
    /// Worker 0 bounds the IDs of every worker from below (for a node whose worker id may change):
    /// then, where the layout puts the worker above the sequence, another worker's IDs of the
    /// horizon's tick sort above it until the stream moves to the next tick. None where IDs are not
    /// ordered by their counters: a layout with the worker or sequence above the time, or the
    /// rollback policy (IDs after a flip back sort below IDs made before it).
    pub fn horizon_id(&self, counter: u64, worker: u64) -> Option<i64> {
        let p = &self.packing;
        let top = |f: Field| self.layout.shift(f) + self.layout.bits(f);
        let time_on_top = [Field::Sequence, Field::Worker]
            .iter()
            .all(|&f| self.layout.bits(f) == 0 || top(f) <= p.time);
        if !time_on_top || self.policy == ClockPolicy::RollbackFlag {
            return None;
        }
        Some(self.id_of_worker(counter, 0, worker))
    }

    pub fn worker(&self) -> u64 {
        self.worker
    }

    fn now_tick(&self, clock: &impl Clock) -> Result<u64, GenError> {
        let ms = clock.now_ms();
        self.layout
            .tick_of_ms(ms)
            .ok_or(GenError::BeforeEpoch { now_ms: ms })
    }

    /// Notes the wall clock in `wall_high` and reports a backward step once per step.
    fn observe_wall(
        &self,
        st: &GeneratorState,
        high_before: u64,
        now: u64,
    ) -> Option<BackwardStep> {
        if now > high_before {
            st.wall_high.fetch_max(now, Relaxed);
            return None;
        }
        // The clock read after `wall_high` was loaded is below it: the clock stepped back.
        // `wall_high` stays put until the clock passes it again, so counting at most once per
        // value of `wall_high` counts each step once, however many callers see it.
        let prev = st.step_counted_at.load(Relaxed);
        if now == high_before
            || prev == high_before
            || st
                .step_counted_at
                .compare_exchange(prev, high_before, Relaxed, Relaxed)
                .is_err()
        {
            return None;
        }
        let step_ms = (high_before - now) * self.layout.unit_ms;
        st.stats.backward_steps.fetch_add(1, Relaxed);
        st.stats
            .largest_backward_step_ms
            .fetch_max(step_ms, Relaxed);
        Some(BackwardStep { step_ms })
    }

    /// One attempt to take up to `want` counters, none in a tick above `cap`; lock-free.
    fn attempt(&self, st: &GeneratorState, now: u64, cur: u64, want: u64, cap: u64) -> Attempt {
        let s = self.seq_bits;
        let flag = cur >> 63;
        let c = cur & !FLAG_BIT;
        let last_tick = c >> s;
        let limit = self.layout.ticks_limit();
        if now >= limit {
            return Attempt::Exhausted;
        }
        let mut flag_now = flag;
        let mut start = (now << s).max(c + 1);
        if now < last_tick {
            match self.policy {
                ClockPolicy::Error => {
                    return Attempt::Backwards {
                        behind_ticks: last_tick - now,
                    }
                }
                ClockPolicy::RollbackFlag => {
                    // raindrop: count again from the wall clock under the other flag value, if
                    // that flag never reached this time. flag_high[flag] is raised before the
                    // swap, so whoever sees the new flag also sees how far the old one went.
                    let other = flag ^ 1;
                    if (now << s) > st.flag_high[other as usize].load(SeqCst) {
                        st.flag_high[flag as usize].fetch_max(c, SeqCst);
                        flag_now = other;
                        start = now << s;
                    }
                }
                ClockPolicy::Continue | ClockPolicy::Wait => {}
            }
        }
        let start_tick = start >> s;
        if start_tick >= limit {
            return Attempt::Exhausted;
        }
        let allowed = (now + self.max_ahead).min(limit - 1);
        if start_tick > allowed {
            // Borrowing never takes the logical clock more than max_ahead past a clock reading
            // older than ours, so beyond that the wall clock is what moved (a step back, or a
            // restart with the clock behind the durable mark); within it, demand outran the
            // layout's capacity.
            return Attempt::Wait {
                until_tick: start_tick - self.max_ahead,
                behind: last_tick > now + self.max_ahead,
            };
        }
        if start_tick > cap {
            return Attempt::Capped;
        }
        let allowed = allowed.min(cap);
        let end_max = ((allowed + 1) << s) - 1;
        let end = start.saturating_add(want - 1).min(end_max);
        let new = end | (flag_now << 63);
        match st.last.compare_exchange_weak(cur, new, SeqCst, Relaxed) {
            Ok(_) => {
                if flag_now != flag {
                    st.stats.flag_flips.fetch_add(1, Relaxed);
                }
                Attempt::Issued(Issued {
                    first: start,
                    count: end - start + 1,
                    flag: flag_now,
                })
            }
            // Someone else moved the word: reload it and read the clock again.
            Err(_) => Attempt::Retry,
        }
    }

    /// Takes up to `want` (>= 1) consecutive counters, waiting as the policy says, and makes
    /// sure their ticks are durably reserved before returning them. The second value is a
    /// backward clock step this call noticed first, for the caller to log.
    #[inline]
    pub fn take(
        &self,
        st: &GeneratorState,
        clock: &impl Clock,
        reserver: &impl Reserver,
        want: u64,
    ) -> Result<(Issued, Option<BackwardStep>), GenError> {
        self.take_capped(st, clock, reserver, want, &|| u64::MAX)
    }

    /// The common case of `take`, for the per-row path: one clock read and one compare-and-swap,
    /// with the answer in registers (a pair, not a struct in memory). It gives up, and the caller
    /// calls `take` (whose first step it is anyway), whenever anything is out of the ordinary:
    /// the rollback flag is set, the clock reads below the highest reading (a backward step to
    /// report), the IDs would start beyond `max_ahead` ticks ahead of the clock (under any policy
    /// but `continue`, any tick ahead) or need a new reservation, or another process moved the
    /// word first. It never issues what `take` would not: the same next counter, `max(now, last + 1)`,
    /// only in ticks already durably reserved.
    #[inline(always)]
    pub fn take_fast(
        &self,
        st: &GeneratorState,
        clock: &impl Clock,
        want: u64,
    ) -> Option<(u64, NonZeroU64)> {
        let cur = st.last.load(SeqCst);
        let high = st.wall_high.load(Relaxed);
        let now = self.layout.tick_of_ms(clock.now_ms())?;
        if cur & FLAG_BIT != 0 || now < high {
            return None;
        }
        if now > high {
            st.wall_high.fetch_max(now, Relaxed);
        }
        let s = self.seq_bits;
        let limit = self.layout.ticks_limit();
        if now >= limit {
            return None;
        }
        let start = (now << s).max(cur + 1);
        // Every policy but `continue` has max_ahead 0: a logical clock ahead of the wall clock
        // (where they wait, fail or flip the flag) always ends up here, on the full path.
        let allowed = (now + self.max_ahead).min(limit - 1);
        if start >> s > allowed {
            return None;
        }
        let end = start
            .saturating_add(want.max(1) - 1)
            .min(((allowed + 1) << s) - 1);
        if end >> s > st.reserved_tick.load(Acquire) {
            return None;
        }
        st.last.compare_exchange(cur, end, SeqCst, Relaxed).ok()?;
        let count = end - start + 1;
        st.stats.issued.fetch_add(count, Relaxed);
        NonZeroU64::new(count).map(|n| (start, n))
    }

    /// `take`, with no counter in a tick above `cap()`, which is read again at every attempt
    /// (it may move while the caller waits, up to `max_wait`).
    #[inline]
    pub fn take_capped(
        &self,
        st: &GeneratorState,
        clock: &impl Clock,
        reserver: &impl Reserver,
        want: u64,
        cap: &dyn Fn() -> u64,
    ) -> Result<(Issued, Option<BackwardStep>), GenError> {
        debug_assert!(want >= 1);
        if cap() == u64::MAX {
            if let Some((first, count)) = self.take_fast(st, clock, want) {
                let issued = Issued {
                    first,
                    count: count.get(),
                    flag: 0,
                };
                return Ok((issued, None));
            }
        }
        let mut step = None;
        let mut waited_ms = 0u64;
        let mut counted_wait = false;
        let issued = loop {
            // Load the state before reading the clock: any tick in the word came from a clock
            // read that happened before ours, so a wall clock below it really stepped back.
            let cur = st.last.load(SeqCst);
            let high = st.wall_high.load(Relaxed);
            let now = self.now_tick(clock)?;
            if let Some(s) = self.observe_wall(st, high, now) {
                step = Some(s);
            }
            let cap_tick = cap();
            match self.attempt(st, now, cur, want, cap_tick) {
                Attempt::Issued(i) => break i,
                Attempt::Retry => continue,
                Attempt::Capped => {
                    if waited_ms >= self.max_wait_ms {
                        st.stats.clock_errors.fetch_add(1, Relaxed);
                        let next_tick = ((cur & !FLAG_BIT) >> self.seq_bits) + 1;
                        return Err(GenError::Capped {
                            ahead_ms: next_tick.saturating_sub(now) * self.layout.unit_ms,
                            waited_ms,
                        });
                    }
                    let slice = 10.min(self.max_wait_ms - waited_ms).max(1);
                    clock.sleep_ms(slice)?;
                    waited_ms += slice;
                }
                Attempt::Wait { until_tick, behind } => {
                    if !counted_wait {
                        counted_wait = true;
                        let counter = if behind {
                            &st.stats.behind_waits
                        } else {
                            &st.stats.overflow_waits
                        };
                        counter.fetch_add(1, Relaxed);
                    }
                    let gap_ms = (until_tick - now) * self.layout.unit_ms;
                    if waited_ms >= self.max_wait_ms {
                        st.stats.clock_errors.fetch_add(1, Relaxed);
                        return Err(if behind {
                            GenError::ClockBehind {
                                behind_ms: gap_ms + self.max_ahead * self.layout.unit_ms,
                                policy: self.policy,
                                waited_ms,
                            }
                        } else {
                            GenError::SequenceExhausted { waited_ms }
                        });
                    }
                    // Sleep in short slices so a wall clock that jumps forward is seen soon.
                    let slice = gap_ms.clamp(1, 10).min(self.max_wait_ms - waited_ms).max(1);
                    clock.sleep_ms(slice)?;
                    waited_ms += slice;
                }
                Attempt::Backwards { behind_ticks } => {
                    st.stats.clock_errors.fetch_add(1, Relaxed);
                    return Err(GenError::ClockBehind {
                        behind_ms: behind_ticks * self.layout.unit_ms,
                        policy: self.policy,
                        waited_ms: 0,
                    });
                }
                Attempt::Exhausted => return Err(GenError::LayoutExhausted),
            }
        };
        let last_tick = (issued.first + issued.count - 1) >> self.seq_bits;
        if last_tick > st.reserved_tick.load(Acquire) {
            reserver.reserve(st, last_tick)?;
        }
        st.stats.issued.fetch_add(issued.count, Relaxed);
        Ok((issued, step))
    }

    /// The ticks ahead of the wall clock the logical clock is now (negative: behind, i.e. idle).
    pub fn drift_ticks(&self, st: &GeneratorState, now_ms: i64) -> i64 {
        let (c, _) = st.last();
        let tick = (c >> self.seq_bits) as i64;
        match self.layout.tick_of_ms(now_ms) {
            Some(now) => tick - now as i64,
            None => tick,
        }
    }
}

#[cfg(test)]
mod tests;
