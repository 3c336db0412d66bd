//! The node as the status views read it (status.rs): each stream's clock and statistics, the
//! problem that stops or threatens generation, the refusal counters, and who holds the read
//! horizons back. Nothing here changes the node.

use pg_idgen_core::civil::format_utc_ms;

use super::shared;
use super::stream::{Clock, COUNT};

pub use super::generator::node;
pub use super::horizon::holders;
pub use super::refusals::{get as refusals, Reason};
pub use super::stream::Stream;

/// Every stream's clock, in the order of `Stream::ALL`.
pub fn clocks() -> [Clock<'static>; COUNT] {
    shared::shared().clocks()
}

/// The clock of `stream`.
pub fn clock(stream: Stream) -> Clock<'static> {
    shared::shared().clock(stream)
}

/// The durable mark (ms), as this node last wrote it or, on a standby, replayed it: every ID of
/// every stream is below it, and a start resumes above it. None before the node's first
/// reservation.
pub fn persisted_mark_ms() -> Option<i64> {
    let ms = shared::shared()
        .mark_ms
        .load(std::sync::atomic::Ordering::Acquire);
    (ms > 0).then_some(ms)
}

/// What stops the node's time-based IDs, or threatens to, for `idgen.status`: the durable mark
/// unreadable, a refused layout, pg_upgrade without the mark, a logical clock further than
/// `max_drift_ms` ahead of `now`, a worker id left unset on a node that is one of several.
pub fn problem(now: i64, max_drift_ms: i64) -> Option<String> {
    let shared = shared::shared();
    shared
        .mark_error()
        .or_else(|| shared.layout_error())
        .or_else(|| {
            shared.origins.upgraded_without_mark().then(|| {
                "pg_upgrade filled this data directory without the old system's pg_idgen.mark: time-based IDs are refused until it is copied in or idgen.snowflake_start_after() is run".to_string()
            })
        })
        .or_else(|| {
            shared.clocks().iter().find_map(|c| {
                let last_ms = c.last_tick_ms()?;
                (last_ms > now + max_drift_ms).then(|| {
                    format!(
                        "the logical clock of {} is {} ms ahead of the wall clock (last tick at {})",
                        c.stream.name(),
                        last_ms - now,
                        format_utc_ms(last_ms)
                    )
                })
            })
        })
        .or_else(super::worker_unset::unset_warning)
}
