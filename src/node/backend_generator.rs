//! A backend's generator for one clock stream (Snowflake IDs, message IDs, UUIDv7s): built from
//! the stream's layout and the reloadable clock settings, and rebuilt when a reload changed them.
//! The state it advances lives in shared memory; this is only the backend's view of the rules.

use crate::gucs::{self, ClockSettings};
use crate::pg::backend_local::BackendLocal;
use crate::pg::errors::invalid;
use pg_idgen_core::generator::{ConfigError, Generator};

/// Kept in a plain static (`BackendLocal`), not a `thread_local!`.
pub struct BackendGenerator(BackendLocal<Option<(ClockSettings, Generator)>>);

impl BackendGenerator {
    pub const fn new() -> BackendGenerator {
        BackendGenerator(BackendLocal::new(None))
    }

    /// Runs `f` with the generator for the current settings, made by `build` when there is none
    /// yet or a reload changed the settings; a `build` error is raised (22023).
    #[inline]
    pub fn with<R>(
        &self,
        build: impl FnOnce(ClockSettings) -> Result<Generator, ConfigError>,
        f: impl FnOnce(&Generator) -> R,
    ) -> R {
        let settings = gucs::clock_settings();
        self.0.with(|cur| {
            if !matches!(&*cur, Some((s, _)) if *s == settings) {
                let g = build(settings).unwrap_or_else(|e| {
                    invalid(format!("invalid pg_idgen clock settings: {e}"))
                        .hint("Fix idgen.clock_policy / idgen.max_drift / idgen.max_wait in postgresql.conf and reload.")
                        .raise()
                });
                *cur = Some((settings, g));
            }
            match &*cur {
                Some((_, g)) => f(g),
                None => unreachable!("set above"),
            }
        })
    }

    /// `f` with the generator already made for `settings` (the current ones), or None when there
    /// is none (the first call of the backend, or a reload changed the settings): then the
    /// caller's full path calls `with`, which makes it. Never raises or panics.
    #[inline(always)]
    pub(super) fn with_made<R>(
        &self,
        settings: ClockSettings,
        f: impl FnOnce(&Generator) -> R,
    ) -> Option<R> {
        self.0
            .try_with(|cur| match &*cur {
                Some((s, g)) if *s == settings => Some(f(g)),
                _ => None,
            })
            .flatten()
    }
}
