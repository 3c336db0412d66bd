//! The node's generators: the Snowflake generator as configured at server start (its layout and
//! worker id are fixed until a restart), and the fixed layouts of message IDs and UUIDv7s.

use once_cell::sync::OnceCell;
use pgrx::PgSqlErrorCode;

use crate::gucs::{self, ClockSettings};
use crate::pg::errors::IdError;
use crate::pg::time::now_ms;
use pg_idgen_core::generator::{ClockPolicy, ConfigError, Generator};
use pg_idgen_core::layout::{GenerationRefused, Layout};

/// The node's generator as configured at server start (layout and worker id are fixed then).
static NODE: OnceCell<Generator> = OnceCell::new();

/// The node's Snowflake generator under the clock settings `s` (reloadable, unlike its layout).
pub fn build(layout: Layout, s: ClockSettings) -> Result<Generator, ConfigError> {
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
pub fn init() {
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
        let hint = match e {
            GenerationRefused::Wraps(_) => "This layout is for id_decode only: choose one whose time field does not wrap around (SELECT * FROM idgen.layouts WHERE can_generate).",
            GenerationRefused::EpochInFuture(_) => "Choose an epoch in the past for this node, or fix the system clock.",
            GenerationRefused::RunsOut(_) => "Choose a layout with more time bits or a later epoch for this node.",
        };
        fail("idgen.layout", e.to_string(), hint);
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
    let _ = NODE.set(g);
}

/// Message IDs' clock: 42 bits of milliseconds from 1970 and 12 bits of sequence.
pub(super) fn msgid_layout() -> &'static Layout {
    static LAYOUT: OnceCell<Layout> = OnceCell::new();
    LAYOUT.get_or_init(|| {
        Layout::parse(pg_idgen_core::msgid::LAYOUT_SPEC).expect("the message-ID layout is valid")
    })
}

/// UUIDv7s' clock: 48 bits of milliseconds from 1970 and a 15-bit counter.
pub(super) fn uuidv7_layout() -> &'static Layout {
    static LAYOUT: OnceCell<Layout> = OnceCell::new();
    LAYOUT.get_or_init(|| {
        Layout::parse(pg_idgen_core::uuidv7::LAYOUT_SPEC).expect("the UUIDv7 layout is valid")
    })
}

/// A generator for a stream of fixed layout (message IDs, UUIDv7s) under the node's clock
/// settings. The rollback flag is a Snowflake layout bit these formats do not have, so under
/// that policy they wait instead.
pub(super) fn fixed_layout_generator(
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

/// The node's Snowflake generator; set while preloading.
pub fn node() -> &'static Generator {
    NODE.get()
        .expect("pg_idgen: the node generator is set up while preloading")
}
