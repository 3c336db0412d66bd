//! The lease keeper: a background worker that, in lease mode, leases this node's worker id from
//! the coordinator, renews it three times per ttl, and gives it back at shutdown.
//!
//! It starts on a primary only (a standby makes no IDs), and again after a promotion. Every
//! grant is installed only after the generator was raised above the lease's `start_after`, so
//! this node's IDs with that worker id come after every ID of its previous holders. When
//! renewals fail for a whole ttl, the lease lapses locally and `snowflake_next()` refuses; a
//! coordinator that answers again either renews it (it was never taken) or says it is lost,
//! and the keeper leases anew.

use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

use pgrx::bgworkers::{BackgroundWorkerBuilder, BgWorkerStartTime};
use pgrx::prelude::*;
use pgrx::PgSqlErrorCode;

use super::libpq::{CallError, Conn};
use crate::gucs;
use crate::node::lease::{self as node_lease, KeeperState, Lease};
use crate::pg::errors::IdError;
use crate::pg::time::{mono_ns, now_ms};
use crate::pg::worker_loop::{self, Next};
use pg_idgen_core::lease::{ceiling_ms, is_lost, renew_every_ms, retry_after_ms};

const CALL_TIMEOUT: Duration = Duration::from_secs(5);
const RELEASE_TIMEOUT: Duration = Duration::from_secs(2);

const ACQUIRE_SQL: &str =
    "SELECT worker_id, lease, floor(extract(epoch FROM expires_at) * 1000)::int8, \
floor(extract(epoch FROM start_after) * 1000)::int8 \
FROM idgen.worker_acquire($1, make_interval(secs => $2::float8 / 1000), $3::int, $4::int)";
const HEARTBEAT_SQL: &str = "SELECT floor(extract(epoch FROM \
idgen.worker_heartbeat($1::int, $2, to_timestamp($3::float8 / 1000), $4::int8)) * 1000)::int8";
const RELEASE_SQL: &str =
    "SELECT idgen.worker_release($1::int, $2, to_timestamp($3::float8 / 1000), $4::int8)";

/// Refuses to start the server on lease settings that cannot work; called while preloading.
pub fn check_lease_settings() {
    if !gucs::lease_mode() {
        return;
    }
    let fail = |setting: &str, msg: String| -> ! {
        IdError::new(
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
            format!("invalid value for parameter \"{setting}\": {msg}"),
        )
        .hint("Change the setting in postgresql.conf and start the server again.")
        .raise()
    };
    if gucs::lease_conninfo().trim().is_empty() {
        fail(
            "idgen.worker_lease_conninfo",
            "idgen.worker_id_source = lease needs the connection string of the coordinator database".into(),
        );
    }
    let max = node_lease::max_worker_id();
    let (lo, hi) = range();
    if hi as u64 > max {
        fail(
            "idgen.worker_lease_max",
            format!("{hi} does not fit the layout's worker bits (0 to {max})"),
        );
    }
    if lo > hi {
        fail(
            "idgen.worker_lease_min",
            format!("{lo} is above idgen.worker_lease_max ({hi})"),
        );
    }
}

/// The worker ids this node may lease.
fn range() -> (i32, i32) {
    let max = node_lease::max_worker_id().min(i32::MAX as u64) as i32;
    gucs::worker_lease_range(max)
}

/// The code this node leases under: the setting, or one unique to this data directory and port.
pub fn code() -> String {
    let c = gucs::lease_code_setting();
    if !c.trim().is_empty() {
        return c;
    }
    // SAFETY: plain reads of values the postmaster set at start.
    let (sysid, port) = unsafe { (pg_sys::GetSystemIdentifier(), pg_sys::PostPortNumber) };
    format!("pg_idgen:{sysid}:{port}")
}

pub fn register() {
    if !gucs::lease_mode() {
        return;
    }
    BackgroundWorkerBuilder::new("pg_idgen lease keeper")
        .set_type("pg_idgen")
        .set_function("pg_idgen_lease_keeper_main")
        .set_library("pg_idgen")
        .set_start_time(BgWorkerStartTime::RecoveryFinished)
        .set_restart_time(Some(Duration::from_secs(1)))
        .load();
}

struct Held {
    worker_id: i32,
    lease_no: i64,
    word: u64,
    /// The ttl the lease was taken with: the coordinator renews by it, whatever a reload of
    /// idgen.worker_lease_ttl says since, so the local deadline must use it too.
    ttl_ms: u64,
}

struct Keeper {
    node: Lease,
    code: String,
    conninfo: String,
    conn: Option<Conn>,
    held: Option<Held>,
    next_due_ns: i64,
    started_ns: i64,
    /// The last error logged, so a coordinator that stays down is logged once, not every second.
    logged: Option<String>,
}

fn int(row: &[Option<String>], i: usize) -> Result<Option<i64>, CallError> {
    match row.get(i).cloned().flatten() {
        None => Ok(None),
        Some(v) => v.parse().map(Some).map_err(|_| {
            CallError::local(format!(
                "the coordinator answered \"{v}\" where a number was expected"
            ))
        }),
    }
}

fn required(v: Option<i64>) -> Result<i64, CallError> {
    v.ok_or_else(|| CallError::local("the coordinator answered NULL where a value was expected"))
}

impl Keeper {
    fn conn(&mut self) -> Result<&Conn, CallError> {
        if self.conn.is_none() {
            let conn = Conn::connect(&self.conninfo, CALL_TIMEOUT)?;
            // Names in our calls resolve in pg_catalog and idgen only, whatever the role's
            // search_path on the coordinator.
            conn.query_row(
                "SELECT pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', false)",
                &[],
                CALL_TIMEOUT,
            )?;
            self.conn = Some(conn);
        }
        Ok(self.conn.as_ref().expect("set above"))
    }

    fn step(&mut self) {
        let result = match self
            .held
            .as_ref()
            .map(|h| (h.worker_id, h.lease_no, h.word, h.ttl_ms))
        {
            None => self.acquire(),
            Some(h) => self.renew(h),
        };
        if let Err(e) = result {
            self.fail(e);
        }
    }

    fn acquire(&mut self) -> Result<(), CallError> {
        let ttl = gucs::worker_lease_ttl_ms();
        let (lo, hi) = range();
        let params = [
            Some(self.code.clone()),
            Some(ttl.to_string()),
            Some(lo.to_string()),
            Some(hi.to_string()),
        ];
        let sent = mono_ns();
        let row = self.conn()?.query_row(ACQUIRE_SQL, &params, CALL_TIMEOUT)?;
        let worker_id = required(int(&row, 0)?)? as i32;
        let lease_no = required(int(&row, 1)?)?;
        let expires_ms = required(int(&row, 2)?)?;
        let start_after = int(&row, 3)?;
        if !(lo..=hi).contains(&worker_id) {
            // Never use an id outside the range asked for (it might not fit the layout).
            return Err(CallError::local(format!(
                "the coordinator granted worker id {worker_id}, outside the range {lo} to {hi} asked for"
            )));
        }
        // Above every ID of the previous holders first; only then may anyone use the id.
        if let Some(ms) = start_after {
            node_lease::raise_floor_to_ms(ms);
        }
        let word = self.node.cell.grant(
            worker_id as u32,
            sent + ttl as i64 * 1_000_000,
            ceiling_ms(start_after, expires_ms, ttl),
        );
        let st = &self.node.status;
        st.worker_id.store(worker_id as i64, Relaxed);
        st.lease_no.store(lease_no, Relaxed);
        st.acquired_ms.store(now_ms(), Relaxed);
        st.renewed_ms.store(now_ms(), Relaxed);
        st.expires_ms.store(expires_ms, Relaxed);
        st.start_after_ms
            .store(start_after.unwrap_or(i64::MIN), Relaxed);
        st.acquisitions.fetch_add(1, Relaxed);
        if st.first_lease_ms.load(Relaxed) < 0 {
            st.first_lease_ms
                .store((mono_ns() - self.started_ns) / 1_000_000, Relaxed);
        }
        st.set_state(KeeperState::Leased);
        st.set_error("");
        self.logged = None;
        pgrx::log!(
            "pg_idgen: leased worker id {worker_id} as \"{}\" (lease {lease_no}, ttl {ttl} ms{})",
            self.code,
            start_after
                .map(|ms| format!(
                    ", IDs start after {}",
                    pg_idgen_core::civil::format_utc_ms(ms)
                ))
                .unwrap_or_default()
        );
        self.held = Some(Held {
            worker_id,
            lease_no,
            word,
            ttl_ms: ttl,
        });
        self.next_due_ns = sent + renew_every_ms(ttl) as i64 * 1_000_000;
        Ok(())
    }

    fn renew(
        &mut self,
        (worker_id, lease_no, word, ttl): (i32, i64, u64, u64),
    ) -> Result<(), CallError> {
        let reported = node_lease::last_id_ms();
        let params = [
            Some(worker_id.to_string()),
            Some(self.code.clone()),
            reported.map(|ms| ms.to_string()),
            Some(lease_no.to_string()),
        ];
        let sent = mono_ns();
        match self.conn()?.query_row(HEARTBEAT_SQL, &params, CALL_TIMEOUT) {
            Ok(row) => {
                let expires_ms = required(int(&row, 0)?)?;
                self.node.cell.extend(
                    word,
                    sent + ttl as i64 * 1_000_000,
                    ceiling_ms(reported, expires_ms, ttl),
                );
                let st = &self.node.status;
                st.expires_ms.store(expires_ms, Relaxed);
                st.renewed_ms.store(now_ms(), Relaxed);
                st.renewals.fetch_add(1, Relaxed);
                if st.state.load(Relaxed) != KeeperState::Leased as u32 {
                    pgrx::log!("pg_idgen: the lease of worker id {worker_id} is renewed again");
                }
                st.set_state(KeeperState::Leased);
                st.set_error("");
                self.logged = None;
                self.next_due_ns = sent + renew_every_ms(ttl) as i64 * 1_000_000;
                Ok(())
            }
            Err(e) if is_lost(e.sqlstate.as_deref(), e.condition.as_deref(), &e.message) => {
                // Someone else may hold it now: stop at once, then lease again.
                self.node.cell.revoke();
                self.held = None;
                let st = &self.node.status;
                st.set_state(KeeperState::Acquiring);
                st.set_error(&e.message);
                pgrx::warning!(
                    "pg_idgen: {}; Snowflake IDs stop until a new worker id is leased",
                    e.message
                );
                self.next_due_ns = mono_ns();
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    fn fail(&mut self, e: CallError) {
        if e.sqlstate.is_none() {
            // The connection is in an unknown state: start over with a new one.
            self.conn = None;
        }
        let msg = match &e.sqlstate {
            Some(code) => format!("coordinator: {} (SQLSTATE {code})", e.message),
            None => format!("coordinator unreachable: {}", e.message),
        };
        let st = &self.node.status;
        st.failures.fetch_add(1, Relaxed);
        st.set_error(&msg);
        let state = match &self.held {
            None => KeeperState::Acquiring,
            Some(_) if mono_ns() < self.node.cell.valid_until_ns() => KeeperState::Retrying,
            Some(_) => KeeperState::Lapsed,
        };
        st.set_state(state);
        if self.logged.as_deref() != Some(msg.as_str()) {
            pgrx::warning!("pg_idgen lease keeper: {msg}");
            self.logged = Some(msg);
        }
        let ttl = self
            .held
            .as_ref()
            .map_or_else(gucs::worker_lease_ttl_ms, |h| h.ttl_ms);
        self.next_due_ns = mono_ns() + retry_after_ms(ttl) as i64 * 1_000_000;
    }

    /// Marks a lease that ran out without a renewal; the generator already refuses by itself.
    fn note_lapse(&mut self) {
        let Some(h) = &self.held else { return };
        let st = &self.node.status;
        if mono_ns() >= self.node.cell.valid_until_ns()
            && st.state.load(Relaxed) != KeeperState::Lapsed as u32
        {
            st.set_state(KeeperState::Lapsed);
            pgrx::warning!(
                "pg_idgen: the lease of worker id {} lapsed without a renewal; snowflake_next() fails until the coordinator renews it or grants a new one",
                h.worker_id
            );
        }
    }

    /// Gives the lease back at shutdown, after no process can make an ID under it any more.
    fn shutdown(&mut self) {
        let st = &self.node.status;
        st.set_state(KeeperState::Stopped);
        let Some(h) = self.held.take() else { return };
        self.node.cell.revoke();
        // Read after the revoke: it bounds every ID accepted under the lease.
        let last = node_lease::last_id_ms()
            .unwrap_or_else(now_ms)
            .max(now_ms());
        super::libpq::ignore_shutdown();
        let params = [
            Some(h.worker_id.to_string()),
            Some(self.code.clone()),
            Some(last.to_string()),
            Some(h.lease_no.to_string()),
        ];
        let result = match self.conn.as_ref() {
            Some(c) => c.query_row(RELEASE_SQL, &params, RELEASE_TIMEOUT),
            None => Conn::connect(&self.conninfo, RELEASE_TIMEOUT)
                .and_then(|c| c.query_row(RELEASE_SQL, &params, RELEASE_TIMEOUT)),
        };
        match result {
            Ok(_) => pgrx::log!("pg_idgen: released worker id {}", h.worker_id),
            Err(e) => pgrx::log!(
                "pg_idgen: could not release worker id {} ({}); it becomes free when it expires",
                h.worker_id,
                e.message
            ),
        }
    }
}

#[pg_guard]
#[unsafe(no_mangle)]
pub extern "C-unwind" fn pg_idgen_lease_keeper_main(_arg: pg_sys::Datum) {
    worker_loop::attach_signals();
    let node = node_lease::lease();
    let code = code();
    node.status.set_code(&code);
    node.status.started_ms.store(now_ms(), Relaxed);
    node.status.set_state(KeeperState::Acquiring);
    let now = mono_ns();
    let mut k = Keeper {
        node,
        code,
        conninfo: gucs::lease_conninfo(),
        conn: None,
        held: None,
        next_due_ns: now,
        started_ns: now,
        logged: None,
    };
    // A keeper restarted after a crash of the previous one finds no lease of its own.
    node.cell.revoke();
    worker_loop::run(|| {
        if mono_ns() >= k.next_due_ns {
            k.step();
        }
        k.note_lapse();
        let now = mono_ns();
        let mut until = k.next_due_ns;
        if k.held.is_some() && node.cell.valid_until_ns() > now {
            until = until.min(node.cell.valid_until_ns());
        }
        let wait_ms = ((until - now) / 1_000_000).clamp(1, 1_000) as u64;
        Next::After(Duration::from_millis(wait_ms))
    });
    k.shutdown();
}
