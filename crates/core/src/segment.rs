//! Segment mode (Didi's Tinyid on Meituan's Leaf): number ranges per business type.
//!
//! A range is `(max_id, max_id + step]` filtered to `id ≡ remainder (mod delta)`, so several
//! databases with the same `delta` and distinct remainders never hand out the same ID (Tinyid's
//! odd/even split). A type's state is a double buffer: callers take from the current range, and
//! once a set share of it is used the next range is asked for, so that in steady state nobody
//! waits for the table. The step grows and shrinks as in Leaf. Nothing here knows PostgreSQL;
//! the pgrx layer keeps a [`SegmentState`] per type in shared memory behind a spinlock.

/// One committed range: the IDs `x` with `start < x <= end` and `x mod delta == remainder`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Range {
    pub start: i64,
    pub end: i64,
    pub delta: i64,
    pub remainder: i64,
}

/// Why a range could not be had; stored in shared memory as its `u32` code.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// No row for the business type (never created, dropped, or created but not committed).
    NotFound = 1,
    /// The next range would pass 2^63-1.
    Overflow = 2,
    /// The allocating worker exited before it committed the range (its log says why).
    WorkerGone = 3,
    /// The row's step, delta or remainder do not make a valid range.
    BadRow = 4,
    /// The allocator could not read or write the type's row (its log says why: for example a
    /// column of idgen.segments changed to another type).
    RowUnreadable = 5,
}

impl Fault {
    pub fn from_code(code: u32) -> Option<Fault> {
        match code {
            1 => Some(Fault::NotFound),
            2 => Some(Fault::Overflow),
            3 => Some(Fault::WorkerGone),
            4 => Some(Fault::BadRow),
            5 => Some(Fault::RowUnreadable),
            _ => None,
        }
    }
}

/// Smallest `x > after` with `x ≡ remainder (mod delta)`, if it exists in `i64`.
pub fn first_after(after: i64, delta: i64, remainder: i64) -> Option<i64> {
    let base = after.checked_add(1)?;
    let gap = (remainder as i128 - base as i128).rem_euclid(delta as i128);
    i64::try_from(base as i128 + gap).ok()
}

impl Range {
    /// The first ID of the range, or None when it holds none.
    pub fn first(&self) -> Option<i64> {
        first_after(self.start, self.delta, self.remainder).filter(|x| *x <= self.end)
    }

    /// The last ID of the range, or None when it holds none.
    pub fn last(&self) -> Option<i64> {
        let first = self.first()?;
        Some(first + (self.end - first) / self.delta * self.delta)
    }

    /// How many IDs the range holds.
    pub fn count(&self) -> i64 {
        match (self.first(), self.last()) {
            (Some(f), Some(l)) => (l - f) / self.delta + 1,
            _ => 0,
        }
    }

    pub fn contains(&self, id: i64) -> bool {
        id > self.start && id <= self.end && id.rem_euclid(self.delta) == self.remainder
    }
}

/// What is wrong with a type's settings (`segment_create`, `segment_alter`); its text says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SettingsError {
    NegativeStart { start_id: i64 },
    StepNotPositive { step: i64 },
    DeltaNotPositive { delta: i64 },
    RemainderOutOfRange { remainder: i64, delta: i64 },
    StepBelowDelta { step: i64, delta: i64 },
}

impl std::fmt::Display for SettingsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            SettingsError::NegativeStart { start_id } => {
                write!(f, "start_id is {start_id}; it must be 0 or more")
            }
            SettingsError::StepNotPositive { step } => {
                write!(f, "step is {step}; it must be greater than 0")
            }
            SettingsError::DeltaNotPositive { delta } => {
                write!(f, "delta is {delta}; it must be greater than 0")
            }
            SettingsError::RemainderOutOfRange { remainder, delta } => write!(
                f,
                "remainder is {remainder}; it must be between 0 and delta - 1 ({})",
                delta - 1
            ),
            SettingsError::StepBelowDelta { step, delta } => write!(
                f,
                "step is {step} and delta is {delta}; a step below delta can make a range with no ID in it"
            ),
        }
    }
}

/// Checks a type's settings as `segment_create` takes them.
pub fn check_type_settings(
    max_id: i64,
    step: i64,
    delta: i64,
    remainder: i64,
) -> Result<(), SettingsError> {
    if max_id < 0 {
        return Err(SettingsError::NegativeStart { start_id: max_id });
    }
    if step <= 0 {
        return Err(SettingsError::StepNotPositive { step });
    }
    if delta <= 0 {
        return Err(SettingsError::DeltaNotPositive { delta });
    }
    if !(0..delta).contains(&remainder) {
        return Err(SettingsError::RemainderOutOfRange { remainder, delta });
    }
    if step < delta {
        return Err(SettingsError::StepBelowDelta { step, delta });
    }
    Ok(())
}

/// The range that follows `max_id` with this step, or the fault that prevents it.
pub fn plan_range(max_id: i64, step: i64, delta: i64, remainder: i64) -> Result<Range, Fault> {
    check_type_settings(max_id, step, delta, remainder).map_err(|_| Fault::BadRow)?;
    let end = max_id.checked_add(step).ok_or(Fault::Overflow)?;
    let range = Range {
        start: max_id,
        end,
        delta,
        remainder,
    };
    // step >= delta, so (max_id, end] holds at least one ID of every residue.
    debug_assert!(range.count() >= 1);
    Ok(range)
}

/// Leaf's dynamic step: a range that lasted under `target_ms` doubles the next step (up to
/// `max_step`); one that lasted over twice the target halves it (never below the configured
/// step). `prev` is the step of the last range (0 before the first); `target_ms` 0 turns it off.
pub fn next_step(prev: i64, configured: i64, max_step: i64, lasted_ms: i64, target_ms: i64) -> i64 {
    let max = max_step.max(configured);
    if prev <= 0 || target_ms <= 0 {
        return configured;
    }
    let prev = prev.clamp(configured, max);
    if lasted_ms < target_ms {
        prev.saturating_mul(2).min(max)
    } else if lasted_ms < target_ms.saturating_mul(2) {
        prev
    } else {
        (prev / 2).max(configured)
    }
}

/// The smallest step whose part after the prefetch point lasts four refills at the rate just
/// seen (`used` IDs in `lasted_us`), so the next range arrives before the current one runs dry.
/// Leaf's doubling alone takes several waited refills to catch up with a fast caller; this
/// jumps there at once. 0 when there is nothing to go by.
pub fn rate_floor(used: i64, lasted_us: i64, refill_latency_us: i64, prefetch_percent: u32) -> i64 {
    if used <= 0 || lasted_us <= 0 || prefetch_percent >= 100 {
        return 0;
    }
    let latency = refill_latency_us.max(500) as i128;
    let Some(need) = (used as i128)
        .checked_mul(400)
        .and_then(|x| x.checked_mul(latency))
    else {
        return i64::MAX;
    };
    let floor = need / (lasted_us as i128 * (100 - prefetch_percent as i128));
    i64::try_from(floor).unwrap_or(i64::MAX)
}

/// A range being handed out: the next ID and how many are left.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Buffer {
    pub range: Range,
    pub next: i64,
    pub left: i64,
    pub size: i64,
}

impl Buffer {
    pub fn load(range: Range) -> Buffer {
        Buffer {
            range,
            next: range.first().unwrap_or(0),
            left: range.count(),
            size: range.count(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.left == 0
    }

    /// Up to `want` consecutive IDs of the range: `(first, count)`, stepping by delta.
    pub fn take(&mut self, want: i64) -> Option<(i64, i64)> {
        if self.left == 0 || want <= 0 {
            return None;
        }
        let count = want.min(self.left);
        let first = self.next;
        self.left -= count;
        if self.left > 0 {
            // Stays <= the range's last ID, which is <= end <= i64::MAX: no overflow.
            self.next += count * self.range.delta;
        }
        Some((first, count))
    }

    /// True once `percent` of the range has been handed out.
    pub fn used_at_least(&self, percent: u32) -> bool {
        let used = (self.size - self.left) as i128;
        used * 100 >= self.size as i128 * percent as i128
    }
}

/// Where a type's next range stands.
#[repr(u32)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Refill {
    #[default]
    Idle = 0,
    /// Asked for; no worker has taken it yet.
    Requested = 1,
    /// A worker is committing it.
    InProgress = 2,
}

/// What a caller gets from [`SegmentState::take`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Take {
    /// `count` IDs from `first`, stepping by `delta`; `prefetch`: the caller must wake the worker.
    Got {
        first: i64,
        count: i64,
        delta: i64,
        prefetch: bool,
    },
    /// Nothing cached: wait for the next range (`request`: the caller must wake the worker).
    Wait { request: bool },
    /// The last attempt to get a range failed; reported once, the next call tries again.
    Failed(Fault),
}

/// The double buffer of one business type, with its statistics.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SegmentState {
    pub current: Buffer,
    pub next: Buffer,
    pub refill: Refill,
    /// A caller found nothing cached since the last install: the next install was waited for.
    pub waiting: bool,
    /// A `Fault` code of the last failed attempt, 0 if none.
    pub fault: u32,
    /// The step of the last range fetched (the dynamic step).
    pub step: i64,
    /// When (µs since the Unix epoch) the last range was installed.
    pub last_refill_us: i64,
    /// `issued` when the last range was installed: the IDs used since measure the rate.
    pub issued_at_refill: u64,
    pub refills_ahead: u64,
    /// Ranges a caller waited for after the type's first: the cache ran dry. (The first range of
    /// a type, after a start or after its cached ranges were forgotten, is always waited for:
    /// nothing could be fetched ahead of it; it is counted in neither.)
    pub refills_waited: u64,
    /// A range was installed since the type was cached.
    pub filled: bool,
    pub issued: u64,
}

impl SegmentState {
    /// Takes up to `want` IDs. Once `prefetch_percent` of the current range is used and no next
    /// range is cached or coming, asks for the next one.
    pub fn take(&mut self, want: i64, prefetch_percent: u32) -> Take {
        if self.current.is_empty() && !self.next.is_empty() {
            self.current = self.next;
            self.next = Buffer::default();
        }
        if let Some((first, count)) = self.current.take(want) {
            self.issued += count as u64;
            let prefetch = self.refill == Refill::Idle
                && self.fault == 0
                && self.next.is_empty()
                && self.current.used_at_least(prefetch_percent);
            if prefetch {
                self.refill = Refill::Requested;
            }
            return Take::Got {
                first,
                count,
                delta: self.current.range.delta,
                prefetch,
            };
        }
        if self.refill == Refill::Idle {
            if let Some(fault) = Fault::from_code(std::mem::take(&mut self.fault)) {
                return Take::Failed(fault);
            }
        }
        self.waiting = true;
        let request = self.refill == Refill::Idle;
        if request {
            self.refill = Refill::Requested;
        }
        Take::Wait { request }
    }

    /// A worker takes the request; false if there is none.
    pub fn claim(&mut self) -> bool {
        if self.refill == Refill::Requested {
            self.refill = Refill::InProgress;
            true
        } else {
            false
        }
    }

    /// A worker gives a claimed request back untouched (the row was locked): try again later.
    pub fn unclaim(&mut self) {
        if self.refill == Refill::InProgress {
            self.refill = Refill::Requested;
        }
    }

    /// Installs a committed range: into the current buffer if it is used up, else as the next.
    pub fn install(&mut self, range: Range, step: i64, now_us: i64) {
        if self.current.is_empty() {
            self.current = self.next;
            self.next = Buffer::default();
        }
        if self.current.is_empty() {
            self.current = Buffer::load(range);
        } else {
            self.next = Buffer::load(range);
        }
        if !std::mem::take(&mut self.waiting) {
            self.refills_ahead += 1;
        } else if self.filled {
            self.refills_waited += 1;
        }
        self.filled = true;
        self.refill = Refill::Idle;
        self.fault = 0;
        self.step = step;
        self.last_refill_us = now_us;
        self.issued_at_refill = self.issued;
    }

    /// The claimed request failed; the next caller with nothing cached is told why.
    pub fn fail(&mut self, fault: Fault) {
        self.refill = Refill::Idle;
        self.fault = fault as u32;
    }

    pub fn ids_left(&self) -> i64 {
        self.current.left + self.next.left
    }
}

#[cfg(test)]
mod tests;
