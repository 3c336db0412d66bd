//! `snowflake_next()` and friends: the core generator bound to shared memory, the system clock,
//! PostgreSQL's interrupts and a durable mark in the data directory.

use std::path::Path;
use std::sync::atomic::Ordering::*;

use once_cell::sync::OnceCell;
use pgrx::prelude::*;
use pgrx::{pg_sys, PgLogLevel, PgSqlErrorCode};

use crate::errors::{batch_size, not_ready, refuse_on_standby, IdError};
use crate::gucs::{self, ClockSettings, WorkerIdSource};
use crate::node::backend_generator::BackendGenerator;
use crate::node::horizon::{self, Ordered};
use crate::node::origins::system_identifier;
use crate::pg::data_dir;
use crate::pg::fast_entry::fast_entry;
use crate::pg::lwlock::LwLockGuard;
use crate::shmem::{self, Shared};
use pg_idgen_core::civil::format_utc_ms;
use pg_idgen_core::generator::{
    BackwardStep, Clock, ClockPolicy, ConfigError, GenError, Generator, GeneratorState, Reserver,
};
use pg_idgen_core::layout::Layout;
use pg_idgen_core::layout_history::{self, History, Verdict};
use pg_idgen_core::mark::{Mark, Stopped};

/// The node's generator as configured at server start (layout and worker id are fixed then).
static NODE: OnceCell<Generator> = OnceCell::new();

/// This backend's Snowflake generator under the current reloadable clock settings.
static CURRENT: BackendGenerator = BackendGenerator::new();

use crate::pg::time::now_ms;

fn build(layout: Layout, s: ClockSettings) -> Result<Generator, ConfigError> {
    Generator::new(
        layout,
        s.policy.into(),
        s.max_drift_ms as u64,
        s.max_wait_ms as u64,
        gucs::datacenter_id() as u64,
        gucs::worker_id() as u64,
    )
}

/// Reads the postmaster-level settings and refuses to start the server on a layout or worker id
/// that could not make good IDs. Called from `_PG_init` while preloading.
pub fn init_node() {
    let spec = gucs::layout_spec();
    let fail = |setting: &str, msg: String, hint: &str| -> ! {
        IdError::new(
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
            format!("invalid value for parameter \"{setting}\": {msg}"),
        )
        .hint(hint)
        .raise()
    };
    let layout = Layout::parse(&spec).unwrap_or_else(|e| {
        fail(
            "idgen.layout",
            format!("\"{spec}\": {e}"),
            "Set idgen.layout in postgresql.conf to a preset (pg_idgen, twitter, sonyflake, ...) or key=value bits; SELECT * FROM idgen.layouts lists them.",
        )
    });
    if let Err(e) = layout.check_for_generation(now_ms()) {
        fail(
            "idgen.layout",
            e,
            "Choose a layout with more time bits or a later epoch for this node.",
        );
    }
    let g = build(layout, gucs::clock_settings()).unwrap_or_else(|e| {
        let setting = match e {
            ConfigError::Datacenter(_) => "idgen.datacenter_id",
            ConfigError::Worker(_) => "idgen.worker_id",
            ConfigError::ClockPolicy(_) => "idgen.clock_policy",
        };
        fail(
            setting,
            e.to_string(),
            "Change the setting in postgresql.conf and start the server again.",
        )
    });
    crate::citus::set_largest_worker_id(g.layout.max_value(pg_idgen_core::layout::Field::Worker));
    let _ = NODE.set(g);
}

/// One clock stream of the node. Snowflake IDs, message IDs and UUIDv7s share the durable mark:
/// start-up, WAL replay, `idgen.snowflake_start_after` and the reserver walk over all of them with
/// [`streams`].
#[derive(Clone, Copy)]
pub struct Stream<'a> {
    /// As `idgen.streams` names it.
    pub name: &'static str,
    pub state: &'a GeneratorState,
    pub layout: &'a Layout,
    pub seq_bits: u32,
}

impl Stream<'_> {
    /// Raises the stream so that its next IDs lie in ticks after the one holding `ms`.
    pub fn raise_past_ms(&self, ms: i64) {
        if let Some(tick) = self.layout.tick_of_ms(ms) {
            self.state.raise_floor(tick, self.seq_bits);
        }
    }

    /// The end (ms, exclusive) of the tick of `counter`, a counter of this stream; None for 0.
    pub fn end_ms(&self, counter: u64) -> Option<i64> {
        (counter != 0).then(|| self.layout.ms_of_tick((counter >> self.seq_bits) + 1))
    }

    /// The start (ms) of the tick of the stream's last ID; None before its first.
    pub fn last_tick_ms(&self) -> Option<i64> {
        let (counter, _) = self.state.last();
        (counter != 0).then(|| self.layout.ms_of_tick(counter >> self.seq_bits))
    }

    /// The wall-clock instant (ms) the stream's reservation covers; None before the first.
    pub fn reserved_until_ms(&self) -> Option<i64> {
        let reserved = self.state.reserved_tick.load(Acquire);
        (reserved > 0).then(|| self.layout.ms_of_tick(reserved + 1))
    }
}

/// The node's clock streams: Snowflake IDs first, then message IDs, then UUIDv7s.
pub fn streams(shared: &Shared) -> [Stream<'_>; 3] {
    let g = node();
    [
        Stream {
            name: "snowflake",
            state: &shared.snowflake,
            layout: &g.layout,
            seq_bits: g.seq_bits(),
        },
        Stream {
            name: "msgid",
            state: &shared.msgid,
            layout: msgid_layout(),
            seq_bits: pg_idgen_core::msgid::SEQUENCE_BITS,
        },
        Stream {
            name: "uuidv7",
            state: &shared.uuidv7,
            layout: uuidv7_layout(),
            seq_bits: pg_idgen_core::uuid7::COUNTER_BITS,
        },
    ]
}

/// Message IDs' clock: 42 bits of milliseconds from 1970 and 12 bits of sequence.
pub fn msgid_layout() -> &'static Layout {
    static LAYOUT: OnceCell<Layout> = OnceCell::new();
    LAYOUT.get_or_init(|| {
        Layout::parse(pg_idgen_core::msgid::LAYOUT_SPEC).expect("the message-ID layout is valid")
    })
}

/// UUIDv7s' clock: 48 bits of milliseconds from 1970 and a 15-bit counter.
pub fn uuidv7_layout() -> &'static Layout {
    static LAYOUT: OnceCell<Layout> = OnceCell::new();
    LAYOUT.get_or_init(|| {
        Layout::parse(pg_idgen_core::uuid7::LAYOUT_SPEC).expect("the UUIDv7 layout is valid")
    })
}

/// A generator for a stream of fixed layout (message IDs, UUIDv7s) under the node's clock
/// settings. The rollback flag is a Snowflake layout bit these formats do not have, so under
/// that policy they wait instead.
pub(crate) fn fixed_layout_generator(
    layout: &Layout,
    settings: ClockSettings,
) -> Result<Generator, ConfigError> {
    let policy = match settings.policy.into() {
        ClockPolicy::RollbackFlag => ClockPolicy::Wait,
        p => p,
    };
    Generator::new(
        layout.clone(),
        policy,
        settings.max_drift_ms as u64,
        settings.max_wait_ms as u64,
        0,
        0,
    )
}

pub fn node() -> &'static Generator {
    NODE.get()
        .expect("pg_idgen: the node generator is set up while preloading")
}

/// Runs `f` with this backend's generator, rebuilt when a reload changed the clock settings.
fn with_generator<R>(f: impl FnOnce(&Generator) -> R) -> R {
    CURRENT.with(|settings| build(node().layout.clone(), settings), f)
}

/// Sets the shared state from the durable mark; runs in the postmaster at every shared-memory
/// (re)initialisation, i.e. at start and after a crash. After a clean stop the mark holds the
/// exact last counters and counting resumes right after them; otherwise (a crash) after the
/// reservation, the only bound known.
pub fn restore_from_mark(shared: &Shared) {
    let g = node();
    let dir = data_dir();
    let mark = match Mark::load(&dir) {
        Ok(mark) => mark,
        Err(e) => {
            shared.set_mark_error(&format!("the durable mark could not be read: {e}"));
            pgrx::log!(
                "pg_idgen: {e}; Snowflake IDs, message IDs and UUIDv7s are disabled until the mark file is repaired"
            );
            return;
        }
    };
    // pg_upgrade without a mark, or the old system's mark copied in (node/origins.rs).
    if let Err(e) =
        crate::node::origins::on_start(&shared.origins, &dir, mark.as_ref().map(|m| m.written_by))
    {
        shared.set_mark_error(&e);
        pgrx::log!(
            "pg_idgen: {e}; Snowflake IDs, message IDs and UUIDv7s are disabled until the file is repaired"
        );
        return;
    }
    let until = mark.as_ref().map(|m| m.reserved_until_ms);
    let stopped = mark.and_then(|m| m.stopped);
    let mut tick = until.and_then(|ms| g.layout.tick_of_ms(ms - 1));
    let mut floor = None;
    let mut same_layout = false;
    match check_layout_history(&dir, until, &g.layout) {
        // IDs must start at the tick of start_ms: count on after the tick before it.
        Ok((start_ms, changed)) => {
            floor = g.layout.tick_of_ms(start_ms).and_then(|t| t.checked_sub(1));
            tick = tick.max(floor);
            same_layout = !changed;
        }
        Err(e) => {
            shared.set_layout_error(&e);
            pgrx::warning!("pg_idgen: {e}; snowflake_next() is disabled");
        }
    }
    let msgid_layout = msgid_layout();
    let [_, _, uuidv7] = streams(shared);
    // The tick of a fixed-layout stream that holds the last reserved millisecond.
    let tick_of = |layout: &Layout| until.and_then(|ms| layout.tick_of_ms(ms - 1));
    match stopped {
        // The exact counters are in the units of the layout they were made with: the record of
        // layouts says none changed, and the mark names the layout (the record may be missing).
        Some(s) if same_layout && s.layout == g.layout.canonical_spec() => {
            shared
                .snowflake
                .restore_exact(s.snowflake_last, g.seq_bits());
            if let Some(f) = floor {
                shared.snowflake.raise_floor(f, g.seq_bits());
            }
            shared
                .msgid
                .restore_exact(s.msgid_last, pg_idgen_core::msgid::SEQUENCE_BITS);
            match s.uuidv7_last {
                Some(last) => uuidv7.state.restore_exact(last, uuidv7.seq_bits),
                // A stop recorded before UUIDv7s existed: from the reservation.
                None => uuidv7
                    .state
                    .restore(tick_of(uuidv7.layout), uuidv7.seq_bits),
            }
        }
        _ => {
            shared.snowflake.restore(tick, g.seq_bits());
            shared
                .msgid
                .restore(tick_of(msgid_layout), pg_idgen_core::msgid::SEQUENCE_BITS);
            uuidv7
                .state
                .restore(tick_of(uuidv7.layout), uuidv7.seq_bits);
        }
    }
    // The first ID after every start makes a reservation of its own (see PgReserver::extend).
    for s in streams(shared) {
        s.state.reserved_tick.store(0, SeqCst);
    }
    shared.mark_rewrite.store(true, SeqCst);
    shared.mark_ms.store(until.unwrap_or(0), SeqCst);
}

/// Writes `mark` durably, naming this system as its writer: a mark copied into another system's
/// data directory (after pg_upgrade) tells that node whose IDs it starts above (node/origins.rs).
fn store_mark(mark: Mark, dir: &Path) -> Result<(), String> {
    mark.by(system_identifier()).store(dir)
}

/// Writes the exact last counters into the mark at the postmaster's exit, when no process is left
/// that could make an ID, so the next start resumes at the last ID instead of the reservation: a
/// clean restart costs no availability whatever the reservation window, unit or clock policy.
/// Not when the mark could not be read or written (the state is not the node's), nor under a
/// refused layout (the Snowflake counter is in the units of a layout the node did not use).
pub fn record_stop(shared: &Shared) {
    if shared.mark_error().is_some() || shared.layout_error().is_some() {
        return;
    }
    let g = node();
    let [snowflake, msgid, uuidv7] = streams(shared);
    let snowflake_last = snowflake.state.high_counter();
    let msgid_last = msgid.state.high_counter();
    let uuidv7_last = uuidv7.state.high_counter();
    if snowflake_last == 0 && msgid_last == 0 && uuidv7_last == 0 {
        return;
    }
    // The end of the last tick of any stream: still a bound of every ID in milliseconds, for a
    // start under another layout.
    let until = snowflake
        .end_ms(snowflake_last)
        .max(msgid.end_ms(msgid_last))
        .max(uuidv7.end_ms(uuidv7_last))
        .unwrap_or(0);
    let mark = Mark {
        reserved_until_ms: until,
        stopped: Some(Stopped {
            snowflake_last,
            msgid_last,
            uuidv7_last: Some(uuidv7_last),
            layout: g.layout.canonical_spec(),
        }),
        written_by: None,
    };
    if let Err(e) = store_mark(mark, &data_dir()) {
        pgrx::log!("pg_idgen: could not record the last IDs at shutdown ({e}); the next start resumes at the reservation");
    }
}

/// Checks the configured layout against the layouts this node made IDs with before
/// (core::layout_history), records a change durably before any ID of the new layout, and returns
/// the time the layout's IDs must start at (0: no bound), and whether the layout changed.
fn check_layout_history(
    dir: &Path,
    mark_ms: Option<i64>,
    layout: &Layout,
) -> Result<(i64, bool), String> {
    let prev = History::load(dir)?;
    match layout_history::on_start(prev, mark_ms, layout, now_ms()) {
        Verdict::Same { start_ms, write } => {
            if let Some(h) = write {
                h.store(dir)?;
            }
            Ok((start_ms, false))
        }
        Verdict::Changed { history, start_ms } => {
            let from = history.past.last().map(|p| p.layout.label());
            history.store(dir)?;
            pgrx::log!(
                "pg_idgen: idgen.layout changed from \"{}\" to \"{}\"; Snowflake IDs start at {}, above every ID of the earlier layouts",
                from.unwrap_or_default(),
                layout.label(),
                format_utc_ms(start_ms)
            );
            Ok((start_ms, true))
        }
        Verdict::Refused(why) => Err(why),
    }
}

/// A mark record replayed from the WAL (`wal::register`'s callback). An ERROR here would stop
/// recovery, and with it the whole server: when the mark file cannot be written, the shared
/// state did move up, and generation stays off until the file is repaired and the server
/// restarted (README guarantee 3).
pub fn replay_mark(reserved_until_ms: i64) {
    if let Err(e) = apply_replayed_mark(reserved_until_ms) {
        let msg = format!("a mark replayed from the WAL could not be written: {e}");
        shmem::shared().set_mark_error(&msg);
        pgrx::warning!("pg_idgen: {msg}; Snowflake IDs, message IDs and UUIDv7s are disabled until pg_idgen.mark is repaired and the server restarted");
    }
}

/// Applies a mark record replayed from the WAL (a standby, or crash recovery): the shared state
/// and the local mark file move up to it, never down. The shared state moves first, so a file
/// that cannot be written still leaves this server's own generators above the record.
pub fn apply_replayed_mark(reserved_until_ms: i64) -> Result<(), String> {
    let shared = shmem::shared();
    for s in streams(shared) {
        s.raise_past_ms(reserved_until_ms - 1);
    }
    shared.mark_ms.fetch_max(reserved_until_ms, SeqCst);
    let dir = data_dir();
    let on_disk = Mark::load(&dir)?.map_or(i64::MIN, |m| m.reserved_until_ms);
    if reserved_until_ms > on_disk {
        store_mark(Mark::reserved(reserved_until_ms), &dir)?;
    }
    Ok(())
}

pub(crate) struct PgClock;

impl Clock for PgClock {
    fn now_ms(&self) -> i64 {
        now_ms()
    }

    fn sleep_ms(&self, ms: u64) -> Result<(), GenError> {
        if ms <= 1 {
            // Waiting for the next millisecond (sequence overflow): a 1 ms sleep overshoots by
            // a good part of a tick, so spin on the clock as Twitter's tilNextMillis does.
            // Bounded, in case the clock is frozen (a test clock): then it is a plain sleep.
            let start = now_ms();
            let mut spins = 0u32;
            while now_ms() == start && spins < 100_000 {
                std::hint::spin_loop();
                spins += 1;
            }
            if spins == 100_000 {
                // SAFETY: plain sleep.
                unsafe { pg_sys::pg_usleep(1000) };
            }
        } else {
            // SAFETY: plain sleep; interrupts are serviced right after.
            unsafe { pg_sys::pg_usleep((ms * 1000) as _) };
        }
        pgrx::check_for_interrupts!();
        Ok(())
    }
}

/// Writes the mark under an LWLock so concurrent callers make one write, not one each. One mark
/// serves every time-based generator of the node (Snowflake IDs and message IDs): it only ever
/// moves up, so it bounds the time of every ID of either kind.
pub(crate) struct PgReserver<'a>(pub &'a Layout);

impl PgReserver<'_> {
    fn window_ticks(layout: &Layout) -> u64 {
        gucs::reserve_window_ms().div_ceil(layout.unit_ms).max(1)
    }

    /// Moves the reservation to at least `tick + window`; the caller holds no lock. The mark
    /// record is written and flushed (and the file replaced) under the reservation lock, so
    /// concurrent callers make one write; the wait for synchronous standbys comes after the lock,
    /// so every waiter stays cancellable, and the new ticks are published only once confirmed.
    /// `stop` ends that wait early (a background worker's shutdown).
    pub fn extend(
        &self,
        st: &GeneratorState,
        tick: u64,
        stop: &dyn Fn() -> Option<String>,
    ) -> Result<(), String> {
        if st.reserved_tick.load(Acquire) >= tick {
            return Ok(());
        }
        let layout = self.0;
        let shared = shmem::shared();
        let new = tick + Self::window_ticks(layout);
        let lsn = {
            // SAFETY: a valid LWLock from our tranche. An ERROR from XLogInsert/XLogFlush
            // unwinds through the guard, which releases it.
            let _lock = unsafe { LwLockGuard::exclusive(shmem::reserve_lock()) };
            let until = layout.ms_of_tick(new + 1);
            let mark_ms = shared.mark_ms.load(Acquire);
            // Written again after every start even when the mark covers the ticks: the file may
            // hold a clean stop's exact counters, and the standbys may never have confirmed the
            // record of the mark this server started from.
            if until > mark_ms || shared.mark_rewrite.load(Acquire) {
                // Never below the mark: the other stream's IDs may reach up to it.
                let until = until.max(mark_ms);
                // WAL first: crash recovery replays it into the file if the file write is lost,
                // and standbys replay it into theirs.
                let lsn = crate::wal::log_mark(until);
                store_mark(Mark::reserved(until), &data_dir())?;
                shared.mark_ms.store(until, Release);
                shared.mark_lsn.fetch_max(lsn, AcqRel);
                shared.mark_rewrite.store(false, Release);
            }
            shared.mark_lsn.load(Acquire)
        };
        crate::pg::syncrep::wait_confirmed(lsn, stop)?;
        st.reserved_tick.fetch_max(new, AcqRel);
        Ok(())
    }
}

impl Reserver for PgReserver<'_> {
    fn reserve(&self, st: &GeneratorState, tick: u64) -> Result<(), GenError> {
        self.extend(st, tick, &|| None).map_err(GenError::Reserve)
    }
}

/// Generators run only on a primary: a standby's IDs would collide with its primary's.
#[inline]
pub(crate) fn check_can_generate(shared: &Shared) {
    refuse_on_standby(
        "generate IDs",
        "Generate IDs on the primary. id_decode() and the other decoders work here.",
    );
    if let Some(e) = shared.mark_error() {
        not_ready(format!("snowflake IDs are disabled: {e}"))
            .hint("Repair pg_idgen.mark in the data directory (readable and writable by the server, in a writable directory) and restart; never delete it on a node that issued IDs.")
            .raise();
    }
}

/// Snowflake IDs only (message IDs have a fixed layout of their own): refused after a change of
/// idgen.layout that could repeat or undercut earlier IDs.
fn check_layout_accepted(shared: &Shared) {
    if let Some(e) = shared.layout_error() {
        not_ready(format!("snowflake IDs are disabled: {e}"))
            .detail("The durable mark bounds the time of earlier IDs, not their bits; the layouts this node made IDs with are listed in pg_idgen.layouts in the data directory.")
            .hint("Set idgen.layout back to the layout of the \"current\" line of pg_idgen.layouts and restart, or choose a layout whose IDs are above the old ones (e.g. an earlier epoch), or one that sets a reserved bit the old layout kept 0.")
            .raise();
    }
}

/// The ERROR for a generator failure; `kind` names the IDs ("Snowflake ID", "message ID").
pub(crate) fn to_id_error(e: GenError, g: &Generator, kind: &str) -> IdError {
    match e {
        GenError::ClockBehind {
            behind_ms,
            policy,
            waited_ms,
        } => not_ready(format!(
            "the system clock is {behind_ms} ms behind the last {kind} (clock policy {}, waited {waited_ms} ms)",
            policy.name()
        ))
        .detail("The wall clock stepped back or the logical clock ran ahead; an ID now could repeat an earlier one.")
        .hint("Fix the clock (NTP), or wait for it to catch up; idgen.max_drift allows the logical clock to run further ahead, idgen.max_wait lets callers wait longer."),
        GenError::SequenceExhausted { waited_ms } => not_ready(format!(
            "all {} IDs of the current tick are used and the next tick did not come within {waited_ms} ms",
            g.layout.per_tick()
        ))
        .hint("Raise idgen.max_wait, use clock policy continue (which borrows later ticks), or a layout with more sequence bits."),
        GenError::BeforeEpoch { now_ms } => not_ready(format!(
            "the system clock ({}) is before the epoch of layout {} ({})",
            format_utc_ms(now_ms),
            g.layout.name,
            format_utc_ms(g.layout.epoch_ms)
        ))
        .hint("Fix the system clock."),
        GenError::LayoutExhausted => IdError::new(
            PgSqlErrorCode::ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
            format!("layout {} has run out of time bits", g.layout.name),
        )
        .hint("Move the node to a layout with more time bits or a later epoch (and more reserved bits, so old and new IDs cannot meet)."),
        GenError::Reserve(e) => IdError::new(
            PgSqlErrorCode::ERRCODE_IO_ERROR,
            format!("could not persist the high-water mark of {kind}s: {e}"),
        )
        .hint("No ID was handed out. Check the data directory's disk space and permissions."),
        GenError::Interrupted(e) => IdError::new(PgSqlErrorCode::ERRCODE_QUERY_CANCELED, e),
        GenError::Capped { ahead_ms, waited_ms } => not_ready(format!(
            "the next {kind} would be later than this node's worker-id lease covers ({ahead_ms} ms ahead of the clock; waited {waited_ms} ms)"
        ))
        .detail("A lease covers IDs up to the later of the coordinator's expiry of the lease and the last reported ID's time plus the ttl; the worker id's next holder starts above that, so going further could repeat its IDs.")
        .hint("The next heartbeat moves the limit (every third of idgen.worker_lease_ttl). Make large batches smaller, raise idgen.worker_lease_ttl, or let callers wait longer with idgen.max_wait; a clock more than the ttl ahead of the coordinator's stops IDs until it is fixed."),
    }
}

pub(crate) fn warn_step(step: BackwardStep, kind: &str) {
    IdError::new(
        PgSqlErrorCode::ERRCODE_WARNING,
        format!(
            "pg_idgen: the system clock stepped back {} ms; {kind}s go on from the last one",
            step.step_ms
        ),
    )
    .hint("See idgen.status for the drift; the clock policy decides how far the logical clock may run ahead.")
    .report(PgLogLevel::WARNING);
}

/// Takes `want` consecutive counters from the node's generator, with the worker id to make them
/// IDs with: the setting, or in lease mode the lease that was valid before and after the take.
fn take(want: u64) -> (pg_idgen_core::generator::Issued, u64) {
    let shared = shmem::shared();
    check_snowflake(shared);
    horizon::hold(Ordered::Snowflake, &shared.snowflake);
    with_generator(|g| {
        let run = |cap: &dyn Fn() -> u64| {
            g.take_capped(
                &shared.snowflake,
                &PgClock,
                &PgReserver(&g.layout),
                want,
                cap,
            )
        };
        let (worker, result) = if gucs::lease_mode() {
            // No ID later than the lease covers (core::lease::ceiling_ms): its next holder
            // starts above that, whatever this node does before its next heartbeat.
            let cap = || g.layout.tick_of_ms(shared.lease.ceiling_ms()).unwrap_or(0);
            match shared.lease.under(crate::pg::time::mono_ns, || run(&cap)) {
                Ok((w, r)) => (u64::from(w), r),
                Err(fault) => crate::lease::lease_fault_error(fault, shared).raise(),
            }
        } else if gucs::citus_mode() {
            (crate::citus::worker_id(), run(&|| u64::MAX))
        } else {
            (g.worker(), run(&|| u64::MAX))
        };
        match result {
            Ok((issued, step)) => {
                if let Some(s) = step {
                    warn_step(s, "Snowflake ID");
                }
                (issued, worker)
            }
            Err(e) => to_id_error(e, g, "Snowflake ID").raise(),
        }
    })
}

/// What every Snowflake ID checks first: a primary, a readable mark, an accepted layout, and a
/// database that holds no other system's IDs.
#[inline]
fn check_snowflake(shared: &Shared) {
    check_can_generate(shared);
    check_layout_accepted(shared);
    crate::origin::check("Snowflake ID");
    crate::node::worker_unset::check();
}

/// True when `check_can_generate` and the origin check would pass without asking PostgreSQL
/// anything (this backend passed them before): what the per-row fast paths check.
#[inline(always)]
pub(crate) fn can_generate_now(shared: &Shared) -> bool {
    crate::errors::known_primary() && shared.mark_error.is_empty() && crate::origin::checked()
}

/// True when `check_snowflake` would pass without asking PostgreSQL anything.
#[inline(always)]
fn snowflake_ready(shared: &Shared) -> bool {
    can_generate_now(shared)
        && shared.layout_error.is_empty()
        && crate::node::worker_unset::checked()
}

/// The common case of `snowflake_next()`, run bare (pg/fast_entry.rs): the checks already passed
/// in this backend, the generator made, no lease (whose take is capped by the lease), the Citus
/// group known; then the generator's fast path, one clock read and one compare-and-swap. None,
/// having issued nothing, for anything else.
#[inline(always)]
fn snowflake_next_fast() -> Option<i64> {
    let shared = shmem::attached()?;
    if !snowflake_ready(shared) {
        return None;
    }
    let (source, settings) = gucs::per_row_settings();
    let worker = match source {
        WorkerIdSource::Setting => None,
        WorkerIdSource::Citus => Some(crate::citus::cached_worker_id()?),
        WorkerIdSource::Lease => return None,
    };
    if !horizon::hold_fast(Ordered::Snowflake, &shared.snowflake) {
        return None;
    }
    CURRENT
        .with_made(settings, |g| {
            let (first, _) = g.take_fast(&shared.snowflake, &PgClock, 1)?;
            Some(g.id_of_worker(first, 0, worker.unwrap_or_else(|| g.worker())))
        })
        .flatten()
}

// The next Snowflake ID of this node: the SQL function `snowflake_next()` (its symbol is
// `snowflake_next_wrapper`, as pgrx named it in every released script), `snowflake_next_fast`
// first, `snowflake_next_full` under pgrx's guard for the rest.
fast_entry!(
    "snowflake_next",
    r#"CREATE FUNCTION "snowflake_next"() RETURNS bigint
STRICT VOLATILE PARALLEL RESTRICTED
LANGUAGE c
AS 'MODULE_PATHNAME', 'snowflake_next_wrapper';
"#,
    pg_finfo_snowflake_next_wrapper,
    snowflake_next_wrapper,
    snowflake_next_fast,
    pg_sys::Datum::from,
    snowflake_next_full_wrapper
);

/// `snowflake_next()` for every call its fast path leaves: the checks that raise, a generator to
/// make, a lease, a Citus group to read, the generator's full path.
#[pg_extern(volatile, parallel_restricted, sql = false)]
fn snowflake_next_full() -> i64 {
    let (issued, worker) = take(1);
    node().id_of_worker(issued.first, issued.flag, worker)
}

/// Raises the generator so that its next IDs are later than `ms`: a new lease's `start_after`.
pub fn raise_floor_to_ms(ms: i64) {
    let [snowflake, ..] = streams(shmem::shared());
    snowflake.raise_past_ms(ms);
}

/// The last millisecond of the newest Snowflake ID handed out, if any: the `last_ts` a lease
/// holder reports.
pub fn last_id_ms() -> Option<i64> {
    let [snowflake, ..] = streams(shmem::shared());
    snowflake
        .end_ms(snowflake.state.last().0)
        .map(|end| end - 1)
}

/// `n` IDs at once, ascending. They are taken from the node's stream as the rows are read, at
/// most a tick's worth at a time, not all before the first row: held to the layout's capacity,
/// emitting the rows of one tick overlaps with waiting for the next, and a query that stops
/// reading early (a LIMIT over the function in the select list) takes no more than it read.
#[pg_extern(volatile, parallel_restricted)]
fn snowflake_next_batch(n: Option<i32>) -> SetOfIterator<'static, i64> {
    let mut owed = batch_size("snowflake_next_batch(n)", n) as u64;
    let g = node();
    let per_tick = 1u64 << g.seq_bits();
    let runs = std::iter::from_fn(move || {
        (owed > 0).then(|| {
            let (issued, worker) = take(owed.min(per_tick));
            owed -= issued.count;
            (issued, worker)
        })
    });
    SetOfIterator::new(runs.flat_map(move |(issued, worker)| {
        (issued.first..issued.first + issued.count)
            .map(move |c| g.id_of_worker(c, issued.flag, worker))
    }))
}

/// The read horizon of this node's Snowflake IDs: every ID below it that this node made belongs
/// to a transaction that has ended. Taken in a statement of its own, before the snapshot of the
/// query that reads below it (README, "Reading new rows in ID order").
#[pg_extern(volatile, parallel_restricted, schema = "idgen")]
fn read_horizon() -> i64 {
    let shared = shmem::shared();
    horizon::check_reader("idgen.read_horizon()");
    let (_, flag) = shared.snowflake.last();
    let flipped = flag != 0 || shared.snowflake.stats.flag_flips.load(Relaxed) > 0;
    let counter = horizon::horizon_of(Ordered::Snowflake, &shared.snowflake);
    // The node's own worker id, fixed for its life, except in lease mode (a new lease may bring
    // another): there worker 0, below every worker's IDs of the horizon's counter.
    let worker = if gucs::lease_mode() {
        None
    } else if gucs::citus_mode() {
        Some(crate::citus::worker_id())
    } else {
        Some(node().worker())
    };
    let id = with_generator(|g| {
        if counter == 0 && !flipped {
            Some(0) // a prepared transaction from before the start holds every ID
        } else if flipped {
            None
        } else {
            g.horizon_id(counter, worker.unwrap_or(0))
        }
    });
    id.unwrap_or_else(|| {
        IdError::new(
            PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
            "idgen.read_horizon(): this node's Snowflake IDs are not in the order of their making",
        )
        .detail(format!(
            "Layout {} with clock policy {}{}: a reader paging by ID would skip rows whatever the horizon.",
            node().layout.name,
            pg_idgen_core::generator::ClockPolicy::from(gucs::clock_settings().policy).name(),
            if flipped { " (the rollback flag flipped since the server started)" } else { "" }
        ))
        .hint("Use a layout with the time in its top bits and a clock policy other than rollback_flag.")
        .raise()
    })
}

/// Renews the reservations of every stream ahead of need, so callers rarely write the mark
/// themselves; run by the background worker. `issued_before` holds each one's count at the last
/// call. Returns true if it wrote.
pub fn renew_reservations(
    issued_before: &mut [u64; 3],
    stop: &dyn Fn() -> Option<String>,
) -> Result<bool, String> {
    let shared = shmem::shared();
    if shared.mark_error().is_some() {
        return Ok(false);
    }
    let mut wrote = false;
    for (s, before) in streams(shared).into_iter().zip(issued_before.iter_mut()) {
        wrote |= renew_one(s.state, s.layout, s.seq_bits, before, stop)?;
    }
    Ok(wrote)
}

fn renew_one(
    st: &GeneratorState,
    layout: &Layout,
    seq_bits: u32,
    issued_before: &mut u64,
    stop: &dyn Fn() -> Option<String>,
) -> Result<bool, String> {
    let issued = st.stats.issued.load(Relaxed);
    if issued == *issued_before {
        return Ok(false);
    }
    *issued_before = issued;
    let Some(now) = layout.tick_of_ms(now_ms()) else {
        return Ok(false);
    };
    let (last, _) = st.last();
    let tick = now.max(last >> seq_bits);
    let half = PgReserver::window_ticks(layout) / 2;
    if tick + half <= st.reserved_tick.load(Acquire) {
        return Ok(false);
    }
    PgReserver(layout)
        .extend(st, tick + half, stop)
        .map(|()| true)
}

#[cfg(any(test, feature = "pg_test"))]
#[pg_schema]
mod tests {
    use pgrx::prelude::*;

    #[pg_test]
    fn next_is_increasing_and_decodes_to_now() {
        let a = Spi::get_one::<i64>("SELECT snowflake_next()")
            .unwrap()
            .unwrap();
        let b = Spi::get_one::<i64>("SELECT snowflake_next()")
            .unwrap()
            .unwrap();
        assert!(b > a);
        let fresh = Spi::get_one::<bool>(&format!(
            "SELECT abs(extract(epoch FROM id_timestamp({b}) - clock_timestamp())) < 5"
        ))
        .unwrap()
        .unwrap();
        assert!(fresh);
    }

    #[pg_test]
    fn batch_is_ascending_and_unique() {
        let (n, distinct, ordered) = Spi::get_three::<i64, i64, bool>(
            "WITH b AS (SELECT id, row_number() OVER () AS rn FROM snowflake_next_batch(100000) AS id)
             SELECT count(*), count(DISTINCT id),
                    bool_and(id > coalesce(prev, -1))
             FROM (SELECT id, lag(id) OVER (ORDER BY rn) AS prev FROM b) s",
        )
        .unwrap();
        assert_eq!(
            (n, distinct, ordered),
            (Some(100000), Some(100000), Some(true))
        );
    }

    #[pg_test(error = "snowflake_next_batch(n): n is 0, it must be between 1 and 10000000")]
    fn batch_refuses_zero() {
        Spi::run("SELECT snowflake_next_batch(0)").unwrap();
    }

    #[pg_test(error = "snowflake_next_batch(n): n must not be NULL")]
    fn batch_refuses_null() {
        Spi::run("SELECT snowflake_next_batch(NULL)").unwrap();
    }

    #[pg_test]
    fn default_column_works() {
        Spi::run(
            "CREATE TABLE t_sf (id bigint PRIMARY KEY DEFAULT snowflake_next(), v int);
             INSERT INTO t_sf (v) SELECT g FROM generate_series(1, 20000) g;",
        )
        .unwrap();
        let ok = Spi::get_one::<bool>("SELECT count(*) = 20000 AND bool_and(id > 0) FROM t_sf")
            .unwrap()
            .unwrap();
        assert!(ok);
    }
}
