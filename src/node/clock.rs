//! The system clock as the core generator sees it, with PostgreSQL's sleep and interrupts.

use pgrx::pg_sys;

use crate::pg::time::now_ms;
use pg_idgen_core::generator::{Clock, GenError};

/// The wall clock; sleeps service interrupts (a cancelled query stops waiting).
pub struct PgClock;

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
