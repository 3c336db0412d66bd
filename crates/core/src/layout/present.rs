//! How a layout is shown: unit names, the canonical spec the layout history records, the label
//! an operator would write, and the one-line description of `idgen.layouts`.

use super::{Field, Layout};
use crate::civil::{format_utc_date, format_utc_ms};
use crate::presets;

/// A unit as a spec writes it.
pub fn unit_name(unit_ms: u64) -> String {
    match unit_ms {
        1 => "ms".into(),
        1_000 => "s".into(),
        60_000 => "min".into(),
        3_600_000 => "hour".into(),
        86_400_000 => "day".into(),
        n => format!("{n}ms"),
    }
}

impl Layout {
    /// A spec that `Layout::parse` reads back to this layout (all but the name), with every
    /// number spelled out: what the layout history file records.
    pub fn canonical_spec(&self) -> String {
        let order: Vec<&str> = self.order.iter().map(|f| f.name()).collect();
        format!(
            "unit={} epoch={} time={} datacenter={} worker={} rollback={} sequence={} reserved={} reserved_value={} order={}",
            unit_name(self.unit_ms),
            self.epoch_ms,
            self.bits(Field::Time),
            self.bits(Field::Datacenter),
            self.bits(Field::Worker),
            self.bits(Field::Rollback),
            self.bits(Field::Sequence),
            self.bits(Field::Reserved),
            self.reserved_value,
            order.join(",")
        )
    }

    /// The layout as an operator would write it: the preset's name where it is one (whatever it
    /// was called), else the full spec.
    pub fn label(&self) -> String {
        let spec = self.canonical_spec();
        presets::names()
            .find(|name| Layout::parse(name).is_ok_and(|p| p.canonical_spec() == spec))
            .map_or(spec, |name| name.to_string())
    }

    /// Whether the time field is the highest one, so that IDs of later ticks are larger.
    pub fn time_on_top(&self) -> bool {
        self.shift(Field::Time) + self.bits(Field::Time) == self.total_bits()
    }

    /// Explains the layout in one line, for `idgen.layouts` and log messages.
    pub fn describe(&self) -> String {
        let fields: Vec<String> = self
            .order
            .iter()
            .map(|f| format!("{} {}", f.name(), self.bits(*f)))
            .collect();
        let span = if self.wraps {
            format!(
                "its time field wraps around every {:.1} minutes (for decoding only)",
                self.ticks_limit() as f64 * self.unit_ms as f64 / 60_000.0
            )
        } else {
            format!(
                "lasts until {} ({:.1} years)",
                format_utc_date(self.end_ms()),
                self.years()
            )
        };
        format!(
            "{}: {} in {} since {}, {}",
            self.name,
            fields.join(" | "),
            unit_name(self.unit_ms),
            format_utc_ms(self.epoch_ms),
            span
        )
    }
}
