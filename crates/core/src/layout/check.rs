//! Whether a node may generate IDs with a layout now: the check at server start and the
//! `can_generate` column of `idgen.layouts`.

use super::{unit_name, Field, GenerationRefused, Layout, MS_PER_YEAR};
use crate::civil::{format_utc_date, format_utc_ms};

impl Layout {
    /// Checks that a node may generate IDs with this layout at `now_ms`: not a wrapping layout, the
    /// epoch already passed, and at least a year left. The message says what would fit.
    pub fn check_for_generation(&self, now_ms: i64) -> Result<(), GenerationRefused> {
        if self.wraps {
            return Err(GenerationRefused::Wraps(format!(
                "layout {} repeats its time field every {:.2} minutes, so it would repeat IDs; it is for id_decode only",
                self.name,
                self.ticks_limit() as f64 * self.unit_ms as f64 / 60_000.0
            )));
        }
        if now_ms < self.epoch_ms {
            return Err(GenerationRefused::EpochInFuture(format!(
                "the epoch {} is in the future (now {}): IDs would have no time to count from",
                format_utc_ms(self.epoch_ms),
                format_utc_ms(now_ms)
            )));
        }
        let year_ms = MS_PER_YEAR as i64;
        if self.end_ms() < now_ms.saturating_add(year_ms) {
            let needed = (0..=55u32)
                .find(|bits| {
                    let end = self.epoch_ms as i128 + ((1i128 << bits) * self.unit_ms as i128);
                    end >= (now_ms as i128 + 30 * year_ms as i128)
                })
                .unwrap_or(55);
            return Err(GenerationRefused::RunsOut(format!(
                "layout {} runs out on {} ({} time bits of {} from {}); for 30 more years it needs time={} in that unit, or a later epoch",
                self.name,
                format_utc_date(self.end_ms()),
                self.bits(Field::Time),
                unit_name(self.unit_ms),
                format_utc_date(self.epoch_ms),
                needed
            )));
        }
        Ok(())
    }
}
