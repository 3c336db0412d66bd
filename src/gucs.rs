//! Every `idgen.*` setting, in one place. docs/operations.md's settings table mirrors this file.

use std::ffi::CStr;

use pgrx::guc::{GucContext, GucFlags, GucRegistry, GucSetting, PostgresGucEnum};

use pg_idgen_core::generator::ClockPolicy;

/// Postmaster: the node's layout, a preset name with optional `key=value` overrides.
static LAYOUT: GucSetting<Option<std::ffi::CString>> =
    GucSetting::<Option<std::ffi::CString>>::new(Some(c"pg_idgen"));
/// Postmaster: this node's worker id within the layout's worker bits.
static WORKER_ID: GucSetting<i32> = GucSetting::<i32>::new(0);
/// Postmaster: this node's datacenter id, for layouts with datacenter bits (twitter).
static DATACENTER_ID: GucSetting<i32> = GucSetting::<i32>::new(0);
/// Postmaster: the custom WAL resource manager id of the Snowflake mark records.
static WAL_RMGR_ID: GucSetting<i32> = GucSetting::<i32>::new(147);
/// Sighup: what to do when the wall clock is behind the logical clock.
static CLOCK_POLICY: GucSetting<ClockPolicySetting> =
    GucSetting::<ClockPolicySetting>::new(ClockPolicySetting::Continue);
/// Sighup: how far (ms) the logical clock may run ahead of the wall clock under `continue`.
static MAX_DRIFT_MS: GucSetting<i32> = GucSetting::<i32>::new(60_000);
/// Sighup: the longest (ms) a caller waits for the clock before an ERROR.
static MAX_WAIT_MS: GucSetting<i32> = GucSetting::<i32>::new(1_000);
/// Sighup: how far ahead (ms) the durable high-water mark is reserved.
static RESERVE_WINDOW_MS: GucSetting<i32> = GucSetting::<i32>::new(1_000);
static RESERVE_IDLE_MS: GucSetting<i32> = GucSetting::<i32>::new(600_000);

/// Postmaster: where the node's worker id comes from.
static WORKER_ID_SOURCE: GucSetting<WorkerIdSource> =
    GucSetting::<WorkerIdSource>::new(WorkerIdSource::Setting);
/// Postmaster: the coordinator database a node in lease mode leases its worker id from.
static WORKER_LEASE_CONNINFO: GucSetting<Option<std::ffi::CString>> =
    GucSetting::<Option<std::ffi::CString>>::new(None);
/// Postmaster: the code this node leases under (empty: derived from the system identifier).
static WORKER_LEASE_CODE: GucSetting<Option<std::ffi::CString>> =
    GucSetting::<Option<std::ffi::CString>>::new(None);
/// Sighup: the ttl of this node's lease.
static WORKER_LEASE_TTL_MS: GucSetting<i32> = GucSetting::<i32>::new(30_000);
/// Postmaster: the range this node leases in (-1: the layout's whole range).
static WORKER_LEASE_MIN: GucSetting<i32> = GucSetting::<i32>::new(-1);
static WORKER_LEASE_MAX: GucSetting<i32> = GucSetting::<i32>::new(-1);
/// Superuser: on a coordinator, how long after expiry a lapsed lease stays unusable.
static WORKER_LEASE_GRACE_MS: GucSetting<i32> = GucSetting::<i32>::new(10_000);

/// Postmaster: business types the shared segment cache holds at once.
static SEGMENT_CACHE_SIZE: GucSetting<i32> = GucSetting::<i32>::new(1024);
/// Sighup: the share (percent) of a range used before the next one is fetched.
static SEGMENT_PREFETCH: GucSetting<i32> = GucSetting::<i32>::new(20);
/// Sighup: the largest step the dynamic step grows to.
static SEGMENT_MAX_STEP: GucSetting<i32> = GucSetting::<i32>::new(1_000_000);
/// Sighup: a range that lasts less than this doubles the next step (Leaf: 15 minutes).
static SEGMENT_STEP_TARGET_MS: GucSetting<i32> = GucSetting::<i32>::new(900_000);
/// Superuser (or GRANT SET ON PARAMETER): the longest a caller waits for the allocator.
static SEGMENT_WAIT_TIMEOUT_MS: GucSetting<i32> = GucSetting::<i32>::new(10_000);
/// Sighup: the worker id of this node's IDs at a past time (snowflake_at); -1: none.
static BACKFILL_WORKER_ID: GucSetting<i32> = GucSetting::<i32>::new(-1);
/// Sighup: the database that holds this node's backfill counters.
static BACKFILL_DATABASE: GucSetting<Option<std::ffi::CString>> =
    GucSetting::<Option<std::ffi::CString>>::new(None);
/// What the event trigger of sql/install/key_types.sql does with a column that cannot hold its default's
/// IDs; read by that trigger with current_setting().
static KEY_TYPE_CHECK: GucSetting<KeyTypeCheck> =
    GucSetting::<KeyTypeCheck>::new(KeyTypeCheck::Error);

/// Userset: whether a condition on the time inside a key adds the key range it implies
/// (created_at/).
static TIME_CONDITIONS: GucSetting<bool> = GucSetting::<bool>::new(true);

#[derive(PostgresGucEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum KeyTypeCheck {
    #[name = c"error"]
    Error,
    #[name = c"warning"]
    Warning,
    #[name = c"off"]
    Off,
}

#[derive(PostgresGucEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum WorkerIdSource {
    #[name = c"setting"]
    Setting,
    #[name = c"lease"]
    Lease,
    #[name = c"citus"]
    Citus,
}

/// The settings, each in the type and unit its readers use (the ranges `define` gives make the
/// conversions exact).
pub fn worker_id() -> i32 {
    WORKER_ID.get()
}

pub fn datacenter_id() -> i32 {
    DATACENTER_ID.get()
}

pub fn wal_rmgr_id() -> u8 {
    WAL_RMGR_ID.get() as u8
}

pub fn max_drift_ms() -> i64 {
    MAX_DRIFT_MS.get() as i64
}

pub fn reserve_window_ms() -> u64 {
    RESERVE_WINDOW_MS.get() as u64
}

/// idgen.reserve_idle: how long after a stream's last ID the reserver keeps its reservation ahead
/// of the clock (0: only while IDs are being made).
pub fn reserve_idle_ms() -> i64 {
    RESERVE_IDLE_MS.get() as i64
}

pub fn worker_lease_ttl_ms() -> u64 {
    WORKER_LEASE_TTL_MS.get() as u64
}

/// idgen.worker_lease_min and _max: the range of worker ids a node leases, with -1 (the default)
/// as 0 and `largest` (the layout's largest worker id).
pub fn worker_lease_range(largest: i32) -> (i32, i32) {
    let lo = WORKER_LEASE_MIN.get().max(0);
    let hi = match WORKER_LEASE_MAX.get() {
        -1 => largest,
        v => v,
    };
    (lo, hi)
}

pub fn segment_cache_size() -> usize {
    SEGMENT_CACHE_SIZE.get() as usize
}

pub fn segment_prefetch_percent() -> u32 {
    SEGMENT_PREFETCH.get() as u32
}

pub fn segment_max_step() -> i64 {
    SEGMENT_MAX_STEP.get() as i64
}

pub fn segment_step_target_ms() -> i64 {
    SEGMENT_STEP_TARGET_MS.get() as i64
}

pub fn segment_wait_timeout_ms() -> u64 {
    SEGMENT_WAIT_TIMEOUT_MS.get() as u64
}

/// idgen.backfill_worker_id: None when it is -1 (backfills are off).
pub fn backfill_worker_id() -> Option<u64> {
    u64::try_from(BACKFILL_WORKER_ID.get()).ok()
}

/// idgen.backfill_database, None when empty.
pub fn backfill_database() -> Option<String> {
    BACKFILL_DATABASE
        .get()
        .map(|c| c.to_string_lossy().into_owned())
        .filter(|s| !s.is_empty())
}

pub fn time_conditions() -> bool {
    TIME_CONDITIONS.get()
}

pub fn lease_mode() -> bool {
    WORKER_ID_SOURCE.get() == WorkerIdSource::Lease
}

pub fn citus_mode() -> bool {
    WORKER_ID_SOURCE.get() == WorkerIdSource::Citus
}

fn string(setting: &GucSetting<Option<std::ffi::CString>>) -> String {
    setting
        .get()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

pub fn lease_conninfo() -> String {
    string(&WORKER_LEASE_CONNINFO)
}

pub fn lease_code_setting() -> String {
    string(&WORKER_LEASE_CODE)
}

#[derive(PostgresGucEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum ClockPolicySetting {
    #[name = c"continue"]
    Continue,
    #[name = c"wait"]
    Wait,
    #[name = c"error"]
    Error,
    #[name = c"rollback_flag"]
    RollbackFlag,
}

impl From<ClockPolicySetting> for ClockPolicy {
    fn from(s: ClockPolicySetting) -> ClockPolicy {
        match s {
            ClockPolicySetting::Continue => ClockPolicy::Continue,
            ClockPolicySetting::Wait => ClockPolicy::Wait,
            ClockPolicySetting::Error => ClockPolicy::Error,
            ClockPolicySetting::RollbackFlag => ClockPolicy::RollbackFlag,
        }
    }
}

pub fn layout_spec() -> String {
    LAYOUT
        .get()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "pg_idgen".into())
}

/// The settings that may change at reload, read together so a backend can tell when its cached
/// generator is stale.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct ClockSettings {
    pub policy: ClockPolicySetting,
    pub max_drift_ms: i32,
    pub max_wait_ms: i32,
}

pub fn clock_settings() -> ClockSettings {
    ClockSettings {
        policy: CLOCK_POLICY.get(),
        max_drift_ms: MAX_DRIFT_MS.get(),
        max_wait_ms: MAX_WAIT_MS.get(),
    }
}

/// What the bare per-row entry points (pg/fast_entry.rs) read on every call: the worker id source
/// and the clock settings, as `WORKER_ID_SOURCE.get()` and `clock_settings()` give them, without
/// pgrx's check that this is PostgreSQL's thread (a thread-local lookup per setting, about 4 ns of
/// an ID's 15). PostgreSQL's function manager calls those entry points on its thread.
#[inline(always)]
pub fn per_row_settings() -> (WorkerIdSource, ClockSettings) {
    use pgrx::guc::GucValue;
    // SAFETY: PostgreSQL writes these variables on this same thread (at a reload or SET, never
    // while our function runs), and only with the ordinals of the enums' own entries.
    unsafe {
        (
            WorkerIdSource::from_raw(*WORKER_ID_SOURCE.as_ptr()),
            ClockSettings {
                policy: ClockPolicySetting::from_raw(*CLOCK_POLICY.as_ptr()),
                max_drift_ms: *MAX_DRIFT_MS.as_ptr(),
                max_wait_ms: *MAX_WAIT_MS.as_ptr(),
            },
        )
    }
}

fn int(
    name: &'static CStr,
    short: &'static CStr,
    long: &'static CStr,
    setting: &'static GucSetting<i32>,
    range: (i32, i32),
    context: GucContext,
    flags: GucFlags,
) {
    GucRegistry::define_int_guc(name, short, long, setting, range.0, range.1, context, flags);
}

pub fn define() {
    GucRegistry::define_bool_guc(
        c"idgen.time_conditions",
        c"Whether a condition on, or a sort by, the time inside a key (id_timestamp, uuidv7_timestamp, a view's or virtual created_at over one) is served by the key's index.",
        c"on: the planner turns a condition into the key range it implies (id >= idgen_internal.id_time_lower(...)), in its place where the range is exact and beside it elsewhere, so the key's index and partition pruning serve it; a sort by such a time (the last key of an ORDER BY) sorts by the key, and its min and max are those of the key. off: as any other condition, sort and aggregate.",
        &TIME_CONDITIONS,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_enum_guc(
        c"idgen.key_type_check",
        c"What CREATE/ALTER TABLE does with a column too small for its snowflake_next() or segment_next() default: error, warning or off.",
        c"error: refuse a column that can never hold a Snowflake ID (smallint, integer, real; double precision unless the layout is js_safe), warn about segment_next() there; warning: warn about both; off: no check.",
        &KEY_TYPE_CHECK,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_string_guc(
        c"idgen.layout",
        c"Bit layout of this node's Snowflake IDs: a preset name, optionally followed by key=value overrides.",
        c"Presets: pg_idgen (default), twitter, leaf, sonyflake, instagram, uid_generator, js_safe, js_safe_10ms, js_safe_s, raindrop, westid, westid32. \
Keys: unit, epoch, time, datacenter, worker, rollback, sequence, reserved, reserved_value, order. See SELECT * FROM idgen.layouts.",
        &LAYOUT,
        GucContext::Postmaster,
        GucFlags::default(),
    );
    int(
        c"idgen.worker_id",
        c"This node's worker id; must be unique among nodes that share IDs.",
        c"Must fit the layout's worker bits (0 to 1023 for the default layout).",
        &WORKER_ID,
        (0, i32::MAX),
        GucContext::Postmaster,
        GucFlags::default(),
    );
    int(
        c"idgen.datacenter_id",
        c"This node's datacenter id, for layouts with datacenter bits.",
        c"Must fit the layout's datacenter bits; 0 for layouts without them.",
        &DATACENTER_ID,
        (0, i32::MAX),
        GucContext::Postmaster,
        GucFlags::default(),
    );
    int(
        c"idgen.wal_rmgr_id",
        c"Custom WAL resource manager id of pg_idgen's mark records (128 to 255).",
        c"Change it only if another preloaded extension uses the same id; every server replaying this WAL must use the same value.",
        &WAL_RMGR_ID,
        (128, 255),
        GucContext::Postmaster,
        GucFlags::default(),
    );
    GucRegistry::define_enum_guc(
        c"idgen.clock_policy",
        c"What snowflake_next() does when the wall clock is behind the last ID: continue, wait, error or rollback_flag.",
        c"continue: count on from the last ID, at most idgen.max_drift ahead of the wall clock; wait: wait for the clock; \
error: fail at once; rollback_flag: flip the layout's rollback bit (raindrop).",
        &CLOCK_POLICY,
        GucContext::Sighup,
        GucFlags::default(),
    );
    int(
        c"idgen.max_drift",
        c"How far the logical clock may run ahead of the wall clock under clock_policy continue.",
        c"Covers small backward clock steps and bursts beyond the layout's per-tick capacity; beyond it callers wait up to idgen.max_wait.",
        &MAX_DRIFT_MS,
        (0, 86_400_000),
        GucContext::Sighup,
        GucFlags::UNIT_MS,
    );
    int(
        c"idgen.max_wait",
        c"The longest snowflake_next() waits for the clock before raising an error.",
        c"0 fails at once.",
        &MAX_WAIT_MS,
        (0, 3_600_000),
        GucContext::Sighup,
        GucFlags::UNIT_MS,
    );
    int(
        c"idgen.reserve_window",
        c"How far ahead the durable high-water mark of Snowflake IDs is reserved.",
        c"One durable write covers this much time of IDs; a restart after a crash skips at most this much.",
        &RESERVE_WINDOW_MS,
        (10, 3_600_000),
        GucContext::Sighup,
        GucFlags::UNIT_MS,
    );
    int(
        c"idgen.reserve_idle",
        c"How long after a stream's last ID its durable mark is kept reserved ahead of the clock.",
        c"Within it, the first ID after a pause finds its time reserved and waits for no flush of its own; an idle server then writes a small WAL record about once a second. 0 reserves only while IDs are being made.",
        &RESERVE_IDLE_MS,
        (0, 86_400_000),
        GucContext::Sighup,
        GucFlags::UNIT_MS,
    );
    int(
        c"idgen.segment_cache_size",
        c"How many business types the shared segment cache holds at once.",
        c"Each slot keeps a type's current and next range. When all are taken, the least recently used idle type is evicted and its cached IDs become a gap.",
        &SEGMENT_CACHE_SIZE,
        (16, 1_000_000),
        GucContext::Postmaster,
        GucFlags::default(),
    );
    int(
        c"idgen.segment_prefetch",
        c"Percent of a segment range used before the next range is fetched in the background.",
        c"Leaf uses 10, Tinyid 20. 100 fetches only when a range is used up, so callers wait.",
        &SEGMENT_PREFETCH,
        (1, 100),
        GucContext::Sighup,
        GucFlags::default(),
    );
    int(
        c"idgen.segment_max_step",
        c"The largest step the dynamic segment step grows to.",
        c"A type's configured step is used when it is larger.",
        &SEGMENT_MAX_STEP,
        (1, i32::MAX),
        GucContext::Sighup,
        GucFlags::default(),
    );
    int(
        c"idgen.segment_step_target",
        c"Target lifetime of a segment range for the dynamic step (Leaf: 15 min).",
        c"A range used up faster doubles the next step; one lasting over twice as long halves it. 0 keeps the configured step.",
        &SEGMENT_STEP_TARGET_MS,
        (0, i32::MAX),
        GucContext::Sighup,
        GucFlags::UNIT_MS,
    );
    int(
        c"idgen.segment_wait_timeout",
        c"The longest a caller waits for the allocator to commit a segment range.",
        c"After it, segment_next() and idgen.segment_alloc() raise an error.",
        &SEGMENT_WAIT_TIMEOUT_MS,
        (1, 3_600_000),
        GucContext::Suset,
        GucFlags::UNIT_MS,
    );
    GucRegistry::define_enum_guc(
        c"idgen.worker_id_source",
        c"Where this node's worker id comes from: setting (idgen.worker_id), lease (from a coordinator database) or citus (the node's Citus group id).",
        c"lease: a background worker leases a worker id with idgen.worker_acquire() in the database named by idgen.worker_lease_conninfo and renews it; snowflake_next() fails until it has one and whenever it lapses. citus: the group id in pg_dist_local_group of the Citus database; snowflake_next() fails on a node that is not part of a cluster.",
        &WORKER_ID_SOURCE,
        GucContext::Postmaster,
        GucFlags::default(),
    );
    GucRegistry::define_string_guc(
        c"idgen.worker_lease_conninfo",
        c"Connection string of the coordinator database this node leases its worker id from.",
        c"A libpq connection string or URI; the database needs CREATE EXTENSION pg_idgen. Keep passwords in a password file, not here.",
        &WORKER_LEASE_CONNINFO,
        GucContext::Postmaster,
        GucFlags::SUPERUSER_ONLY,
    );
    GucRegistry::define_string_guc(
        c"idgen.worker_lease_code",
        c"The code this node leases its worker id under; empty: pg_idgen:<system identifier>:<port>.",
        c"The same code gets its previous worker id back first. Give every node its own.",
        &WORKER_LEASE_CODE,
        GucContext::Postmaster,
        GucFlags::default(),
    );
    int(
        c"idgen.worker_lease_ttl",
        c"Time to live of this node's worker-id lease; it is renewed three times per ttl.",
        c"When the coordinator cannot be reached for this long, the node stops making Snowflake IDs.",
        &WORKER_LEASE_TTL_MS,
        (1_000, 3_600_000),
        GucContext::Sighup,
        GucFlags::UNIT_MS,
    );
    int(
        c"idgen.worker_lease_min",
        c"Lowest worker id this node may lease; -1: 0.",
        c"Give each data centre its own range (as raindrop does).",
        &WORKER_LEASE_MIN,
        (-1, i32::MAX),
        GucContext::Postmaster,
        GucFlags::default(),
    );
    int(
        c"idgen.worker_lease_max",
        c"Highest worker id this node may lease; -1: the largest the layout's worker bits hold.",
        c"Give each data centre its own range (as raindrop does).",
        &WORKER_LEASE_MAX,
        (-1, i32::MAX),
        GucContext::Postmaster,
        GucFlags::default(),
    );
    int(
        c"idgen.backfill_worker_id",
        c"The worker id of this node's IDs at a past time (snowflake_at); -1: no backfills.",
        c"A worker id no node and no app server makes live IDs with, now or ever, and no other node's backfill worker id.",
        &BACKFILL_WORKER_ID,
        (-1, i32::MAX),
        GucContext::Sighup,
        GucFlags::default(),
    );
    GucRegistry::define_string_guc(
        c"idgen.backfill_database",
        c"The database that holds this node's backfill counters (snowflake_at, uuidv7_at).",
        c"One database per node, with CREATE EXTENSION pg_idgen; every database of the node backfills through its counters.",
        &BACKFILL_DATABASE,
        GucContext::Sighup,
        GucFlags::default(),
    );
    int(
        c"idgen.worker_lease_grace",
        c"On a coordinator: how long after it expires a worker-id lease stays unusable.",
        c"It must cover the clock difference between holders and the coordinator; the next holder starts after the old holder's last time plus this.",
        &WORKER_LEASE_GRACE_MS,
        (0, 3_600_000),
        GucContext::Suset,
        GucFlags::UNIT_MS,
    );
}

/// PostgreSQL's `shared_preload_libraries`, as set.
pub fn preload_libraries() -> String {
    // SAFETY: GetConfigOption returns the setting's current string, valid until it changes
    // (copied at once); missing_ok false: the setting always exists.
    unsafe {
        let p = pgrx::pg_sys::GetConfigOption(c"shared_preload_libraries".as_ptr(), false, false);
        if p.is_null() {
            return String::new();
        }
        std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned()
    }
}
