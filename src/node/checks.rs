//! What every clock stream checks before it makes an ID, and the ERRORs of its generator.

use pgrx::{PgLogLevel, PgSqlErrorCode};

use super::refusals::{self, Reason};
use super::shared::Shared;
use super::stream::Stream;
use crate::pg::errors::{not_ready, IdError};
use crate::pg::recovery::{in_recovery, known_primary, refuse_on_standby};
use pg_idgen_core::civil::format_utc_ms;
use pg_idgen_core::generator::{BackwardStep, GenError, Generator};

/// Generators run only on a primary: a standby's IDs would collide with its primary's. `stream`:
/// the IDs about to be made, whose refusal is counted (None for a move of the clocks).
#[inline]
pub fn check_can_generate(shared: &Shared, stream: Option<Stream>) {
    if let Some(stream) = stream.filter(|_| !known_primary() && in_recovery()) {
        refusals::count(stream, Reason::Standby);
    }
    refuse_on_standby(
        "generate IDs",
        "Generate IDs on the primary. id_decode() and the other decoders work here.",
    );
    if let Some(e) = shared.mark_error() {
        if let Some(stream) = stream {
            refusals::count(stream, Reason::MarkUnreadable);
        }
        not_ready(format!("snowflake IDs are disabled: {e}"))
            .hint("Repair pg_idgen.mark in the data directory (readable and writable by the server, in a writable directory) and restart; never delete it on a node that issued IDs.")
            .raise();
    }
}

/// Snowflake IDs only (message IDs have a fixed layout of their own): refused after a change of
/// idgen.layout that could repeat or undercut earlier IDs.
pub fn check_layout_accepted(shared: &Shared) {
    if let Some(e) = shared.layout_error() {
        refusals::count(Stream::Snowflake, Reason::LayoutRefused);
        not_ready(format!("snowflake IDs are disabled: {e}"))
            .detail("The durable mark bounds the time of earlier IDs, not their bits; the layouts this node made IDs with are listed in pg_idgen.layouts in the data directory.")
            .hint("Set idgen.layout back to the layout of the \"current\" line of pg_idgen.layouts and restart, or choose a layout whose IDs are above the old ones (e.g. an earlier epoch), or one that sets a reserved bit the old layout kept 0.")
            .raise();
    }
}

/// The ERROR for a generator failure of a stream, its refusal counted.
pub(super) fn to_id_error(e: GenError, g: &Generator, stream: Stream) -> IdError {
    let reason = match e {
        GenError::ClockBehind { .. } => Some(Reason::ClockBehind),
        GenError::SequenceExhausted { .. } => Some(Reason::SequenceExhausted),
        GenError::BeforeEpoch { .. } => Some(Reason::BeforeEpoch),
        GenError::LayoutExhausted => Some(Reason::LayoutExhausted),
        GenError::Reserve(_) => Some(Reason::MarkNotWritten),
        GenError::Capped { .. } => Some(Reason::LeaseCeiling),
        // A cancel of the caller's query: no refusal.
        GenError::Interrupted(_) => None,
    };
    if let Some(reason) = reason {
        refusals::count(stream, reason);
    }
    let kind = stream.ids();
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

/// The WARNING for a step back of the system clock that the generator rode out.
pub(super) fn warn_step(step: BackwardStep, stream: Stream) {
    let kind = stream.ids();
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

/// True when `check_can_generate` and the origin check would pass without asking PostgreSQL
/// anything (this backend passed them before): what the per-row fast paths check.
#[inline(always)]
pub(super) fn can_generate_now(shared: &Shared) -> bool {
    known_primary() && shared.mark_error.is_empty() && super::origin_check::checked()
}
