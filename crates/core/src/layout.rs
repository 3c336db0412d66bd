//! Bit layouts of 64-bit Snowflake-style IDs: which fields, how wide, in which order, counted in
//! which time unit from which epoch.
//!
//! A layout is written as a spec string, the value of `idgen.layout`: an optional preset name
//! followed by `key=value` overrides separated by spaces, e.g. `twitter`, `twitter epoch=2024-01-01`,
//! or `unit=s epoch=2016-05-20 time=28 worker=22 sequence=13`. The sign bit is always 0 and the time
//! field is always the highest, so IDs sort by time. Bits left over above the time field are zero
//! (that is how `js_safe` stays below 2^53).

use super::civil::{format_utc_date, format_utc_ms, parse_utc_ms};
use super::presets::{self, Preset};

pub use super::field::Field;

/// The clock unit a layout counts in. Sonyflake's 10 ms is why this is a multiple of a millisecond
/// rather than a closed list; the configurable Snowflake's units (ms, s, min, hour, day) are the named ones.
pub fn parse_unit_ms(s: &str) -> Result<u64, String> {
    let named = match s {
        "ms" | "millisecond" | "milliseconds" => Some(1),
        "s" | "sec" | "second" | "seconds" => Some(1_000),
        "min" | "minute" | "minutes" => Some(60_000),
        "h" | "hour" | "hours" => Some(3_600_000),
        "d" | "day" | "days" => Some(86_400_000),
        _ => None,
    };
    if let Some(ms) = named {
        return Ok(ms);
    }
    if let Some(n) = s.strip_suffix("ms") {
        if let Ok(n) = n.parse::<u64>() {
            if (1..=86_400_000).contains(&n) {
                return Ok(n);
            }
        }
    }
    Err(format!(
        "unit \"{s}\" is not a time unit: use ms, s, min, hour, day, or a multiple of a millisecond such as 10ms"
    ))
}

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

const MS_PER_YEAR: f64 = 365.2425 * 86_400_000.0;

/// A validated layout with precomputed shifts; cheap to copy, immutable once built.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    pub name: String,
    pub unit_ms: u64,
    pub epoch_ms: i64,
    bits: [u8; 6],
    shift: [u8; 6],
    pub order: Vec<Field>,
    pub reserved_value: u64,
    /// The time field wraps around instead of running out (westid32's 35-minute cycle): such a
    /// layout can decode IDs but never generate them, because a wrapped time repeats IDs.
    pub wraps: bool,
}

/// The fields of one ID, as `id_decode` shows them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decoded {
    pub tick: u64,
    pub datacenter: u64,
    pub worker: u64,
    pub rollback: u64,
    pub sequence: u64,
    pub reserved: u64,
}

/// Everything a spec can say, before validation.
#[derive(Clone, Debug)]
pub struct LayoutSpec {
    pub name: String,
    pub unit_ms: u64,
    pub epoch_ms: i64,
    pub bits: [u8; 6],
    pub order: Vec<Field>,
    pub reserved_value: u64,
    pub wraps: bool,
}

impl LayoutSpec {
    pub fn set_bits(mut self, f: Field, n: u8) -> Self {
        self.bits[f.index()] = n;
        self
    }

    fn of_preset(p: &Preset) -> LayoutSpec {
        let mut s = LayoutSpec {
            name: p.name.to_string(),
            unit_ms: p.unit_ms,
            epoch_ms: p.epoch_ms,
            bits: [0; 6],
            order: p.fields.iter().map(|(f, _)| *f).collect(),
            reserved_value: 0,
            wraps: p.wraps,
        };
        for (f, n) in p.fields {
            s = s.set_bits(*f, *n);
        }
        s
    }
}

/// Why a layout spec was refused: the kind picks the SQLSTATE, the text says what to change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LayoutError {
    /// The spec starts with a name that is no preset.
    UnknownPreset(String),
    /// The spec does not add up: bits, unit, epoch, order or an unknown key.
    Invalid(String),
}

impl LayoutError {
    pub fn message(&self) -> &str {
        match self {
            LayoutError::UnknownPreset(m) | LayoutError::Invalid(m) => m,
        }
    }
}

impl std::fmt::Display for LayoutError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.message())
    }
}

impl Layout {
    /// Parses and validates a spec string (see the module comment).
    pub fn parse(spec: &str) -> Result<Layout, LayoutError> {
        let mut words = spec.split_whitespace().peekable();
        let (base, named_preset) = match words.next_if(|w| !w.contains('=')) {
            Some(first) => {
                let name = first.to_ascii_lowercase();
                let p = presets::find(&name).ok_or_else(|| {
                    LayoutError::UnknownPreset(format!(
                        "unknown layout \"{name}\"; known layouts: {}",
                        presets::names().collect::<Vec<_>>().join(", ")
                    ))
                })?;
                (LayoutSpec::of_preset(p), true)
            }
            None => (LayoutSpec::of_preset(&presets::PRESETS[0]), false),
        };
        Layout::with_overrides(base, named_preset, words).map_err(LayoutError::Invalid)
    }

    /// The preset (or the default) with the spec's `key=value` overrides, validated.
    fn with_overrides<'a>(
        mut s: LayoutSpec,
        named_preset: bool,
        words: impl Iterator<Item = &'a str>,
    ) -> Result<Layout, String> {
        let mut custom = false;
        let mut order_given = false;
        for word in words {
            let (key, value) = word.split_once('=').ok_or_else(|| {
                format!("\"{word}\" is not key=value (a preset name may only come first)")
            })?;
            let bits = |v: &str| -> Result<u8, String> {
                v.parse::<u8>()
                    .ok()
                    .filter(|n| *n <= 63)
                    .ok_or_else(|| format!("{key}={v}: a number of bits from 0 to 63 is needed"))
            };
            custom = true;
            match key {
                "unit" => s.unit_ms = parse_unit_ms(value)?,
                "epoch" => s.epoch_ms = parse_utc_ms(value)?,
                "time" | "timestamp" => s.bits[Field::Time.index()] = bits(value)?,
                "datacenter" | "dc" => s.bits[Field::Datacenter.index()] = bits(value)?,
                "worker" | "machine" | "shard" => s.bits[Field::Worker.index()] = bits(value)?,
                "rollback" => s.bits[Field::Rollback.index()] = bits(value)?,
                "sequence" | "seq" => s.bits[Field::Sequence.index()] = bits(value)?,
                "reserved" => s.bits[Field::Reserved.index()] = bits(value)?,
                "reserved_value" => {
                    s.reserved_value = value
                        .parse::<u64>()
                        .map_err(|_| format!("reserved_value={value}: a non-negative integer is needed"))?
                }
                "order" => {
                    s.order = value
                        .split(',')
                        .map(|f| {
                            Field::parse(f).ok_or_else(|| {
                                format!(
                                    "order: \"{f}\" is not a field; fields are time, datacenter, worker, rollback, sequence, reserved"
                                )
                            })
                        })
                        .collect::<Result<_, _>>()?;
                    order_given = true;
                }
                _ => {
                    return Err(format!(
                        "unknown layout key \"{key}\"; keys are unit, epoch, time, datacenter, worker, rollback, sequence, reserved, reserved_value, order"
                    ))
                }
            }
        }
        if custom {
            s.name = if named_preset {
                format!("{} (customised)", s.name)
            } else {
                "custom".into()
            };
        }
        if !order_given {
            // Keep the base order (Sonyflake's sequence above its machine id) and put fields an
            // override added where they usually go: before the first field that usually follows.
            s.order
                .retain(|f| *f == Field::Time || s.bits[f.index()] > 0);
            for f in Field::ALL {
                if s.bits[f.index()] > 0 && !s.order.contains(&f) {
                    let at = s
                        .order
                        .iter()
                        .position(|g| g.index() > f.index())
                        .unwrap_or(s.order.len());
                    s.order.insert(at, f);
                }
            }
        }
        Layout::from_spec(s)
    }

    pub fn from_spec(s: LayoutSpec) -> Result<Layout, String> {
        let b = |f: Field| s.bits[f.index()] as u32;
        if b(Field::Time) == 0 {
            return Err("time needs at least 1 bit".into());
        }
        if b(Field::Sequence) == 0 {
            return Err("sequence needs at least 1 bit".into());
        }
        if b(Field::Rollback) > 1 {
            return Err(format!(
                "rollback={}: the rollback flag is one bit (0 or 1)",
                b(Field::Rollback)
            ));
        }
        if b(Field::Reserved) > 5 {
            return Err(format!(
                "reserved={}: 0 to 5 reserved bits (seed 001)",
                b(Field::Reserved)
            ));
        }
        if s.reserved_value >> b(Field::Reserved) != 0 {
            return Err(format!(
                "reserved_value={} does not fit in {} reserved bits",
                s.reserved_value,
                b(Field::Reserved)
            ));
        }
        let total: u32 = Field::ALL.iter().map(|f| b(*f)).sum();
        if total > 63 {
            let parts: Vec<String> = Field::ALL
                .iter()
                .filter(|f| b(**f) > 0)
                .map(|f| format!("{} {}", f.name(), b(*f)))
                .collect();
            return Err(format!(
                "the fields add up to {total} bits ({}); at most 63 fit beside the sign bit: take {} bits off",
                parts.join(" + "),
                total - 63
            ));
        }
        for f in Field::ALL {
            let n = s.order.iter().filter(|g| **g == f).count();
            if n > 1 {
                return Err(format!("order names {} twice", f.name()));
            }
            if b(f) > 0 && n == 0 {
                return Err(format!(
                    "order leaves out {}, which has {} bits",
                    f.name(),
                    b(f)
                ));
            }
        }
        if s.order.first() != Some(&Field::Time) {
            return Err("order must start with time, so that IDs sort by time".into());
        }
        let mut shift = [0u8; 6];
        let mut below = 0u32;
        for f in s.order.iter().rev() {
            shift[f.index()] = below as u8;
            below += b(*f);
        }
        Ok(Layout {
            name: s.name,
            unit_ms: s.unit_ms,
            epoch_ms: s.epoch_ms,
            bits: s.bits,
            shift,
            order: s.order.into_iter().filter(|f| b(*f) > 0).collect(),
            reserved_value: s.reserved_value,
            wraps: s.wraps,
        })
    }

    pub fn bits(&self, f: Field) -> u32 {
        self.bits[f.index()] as u32
    }

    pub fn shift(&self, f: Field) -> u32 {
        self.shift[f.index()] as u32
    }

    pub fn max_value(&self, f: Field) -> u64 {
        (1u64 << self.bits(f)) - 1
    }

    pub fn total_bits(&self) -> u32 {
        Field::ALL.iter().map(|f| self.bits(*f)).sum()
    }

    /// IDs one node can make in one tick.
    pub fn per_tick(&self) -> u64 {
        1u64 << self.bits(Field::Sequence)
    }

    /// The first tick that no longer fits: the layout has run out at `epoch + ticks_limit * unit`.
    pub fn ticks_limit(&self) -> u64 {
        1u64 << self.bits(Field::Time)
    }

    pub fn end_ms(&self) -> i64 {
        let span = (self.ticks_limit() as i128) * (self.unit_ms as i128);
        (self.epoch_ms as i128 + span).min(i64::MAX as i128) as i64
    }

    pub fn years(&self) -> f64 {
        self.ticks_limit() as f64 * self.unit_ms as f64 / MS_PER_YEAR
    }

    pub fn js_safe(&self) -> bool {
        self.total_bits() <= 53
    }

    pub fn max_id(&self) -> i64 {
        ((1u128 << self.total_bits()) - 1) as i64
    }

    /// The tick a wall-clock time (ms since 1970) falls in, or None before the epoch.
    #[inline]
    pub fn tick_of_ms(&self, ms: i64) -> Option<u64> {
        let d = ms.checked_sub(self.epoch_ms)?;
        if d < 0 {
            return None;
        }
        Some(if self.unit_ms == 1 {
            d as u64
        } else {
            d as u64 / self.unit_ms
        })
    }

    /// The first millisecond of a tick.
    pub fn ms_of_tick(&self, tick: u64) -> i64 {
        (self.epoch_ms as i128 + tick as i128 * self.unit_ms as i128)
            .clamp(i64::MIN as i128, i64::MAX as i128) as i64
    }

    /// Assembles an ID. Callers guarantee each part fits its field (the generator and the
    /// worker-id checks do); debug builds assert it.
    #[inline]
    pub fn pack(
        &self,
        tick: u64,
        datacenter: u64,
        worker: u64,
        rollback: u64,
        sequence: u64,
    ) -> i64 {
        debug_assert!(tick < self.ticks_limit());
        debug_assert!(sequence <= self.max_value(Field::Sequence));
        let put = |f: Field, v: u64| {
            if self.bits(f) == 0 {
                0
            } else {
                v << self.shift(f)
            }
        };
        (put(Field::Time, tick)
            | put(Field::Datacenter, datacenter)
            | put(Field::Worker, worker)
            | put(Field::Rollback, rollback)
            | put(Field::Sequence, sequence)
            | put(Field::Reserved, self.reserved_value)) as i64
    }

    /// Takes an ID apart; an ID that this layout cannot have made is an error that says why.
    pub fn unpack(&self, id: i64) -> Result<Decoded, String> {
        if id < 0 {
            return Err(format!(
                "{id} is negative; Snowflake IDs keep the sign bit 0"
            ));
        }
        let v = id as u64;
        if self.total_bits() < 63 && v >> self.total_bits() != 0 {
            return Err(format!(
                "{id} has bits set above the {} bits of layout {} (largest ID {})",
                self.total_bits(),
                self.name,
                self.max_id()
            ));
        }
        let get = |f: Field| {
            if self.bits(f) == 0 {
                0
            } else {
                (v >> self.shift(f)) & self.max_value(f)
            }
        };
        let d = Decoded {
            tick: get(Field::Time),
            datacenter: get(Field::Datacenter),
            worker: get(Field::Worker),
            rollback: get(Field::Rollback),
            sequence: get(Field::Sequence),
            reserved: get(Field::Reserved),
        };
        Ok(d)
    }

    /// The smallest ID whose time is at or after `ms`: the lower bound of a time range scan. It
    /// is clamped to the layout's range, so `id >= id_from_ms(..)` stays meaningful at the edges.
    pub fn min_id_at_ms(&self, ms: i64) -> Result<i64, String> {
        let tick = match self.tick_of_ms(ms) {
            None => return Ok(0),
            Some(t) => t,
        };
        // A tick that starts after `ms` would leave out IDs of the tick `ms` is in; tick_of_ms
        // rounds down, so that tick is the right one.
        if tick >= self.ticks_limit() {
            return Err(format!(
                "{} is past the end of layout {} ({})",
                format_utc_ms(ms),
                self.name,
                format_utc_ms(self.end_ms())
            ));
        }
        Ok((tick << self.shift(Field::Time)) as i64)
    }

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

    /// Checks that a node may generate IDs with this layout at `now_ms`: not a wrapping layout, the
    /// epoch already passed, and at least a year left. The message says what would fit.
    pub fn check_for_generation(&self, now_ms: i64) -> Result<(), String> {
        if self.wraps {
            return Err(format!(
                "layout {} repeats its time field every {:.2} minutes, so it would repeat IDs; it is for id_decode only",
                self.name,
                self.ticks_limit() as f64 * self.unit_ms as f64 / 60_000.0
            ));
        }
        if now_ms < self.epoch_ms {
            return Err(format!(
                "the epoch {} is in the future (now {}): IDs would have no time to count from",
                format_utc_ms(self.epoch_ms),
                format_utc_ms(now_ms)
            ));
        }
        let year_ms = MS_PER_YEAR as i64;
        if self.end_ms() < now_ms.saturating_add(year_ms) {
            let needed = (0..=55u32)
                .find(|bits| {
                    let end = self.epoch_ms as i128 + ((1i128 << bits) * self.unit_ms as i128);
                    end >= (now_ms as i128 + 30 * year_ms as i128)
                })
                .unwrap_or(55);
            return Err(format!(
                "layout {} runs out on {} ({} time bits of {} from {}); for 30 more years it needs time={} in that unit, or a later epoch",
                self.name,
                format_utc_date(self.end_ms()),
                self.bits(Field::Time),
                unit_name(self.unit_ms),
                format_utc_date(self.epoch_ms),
                needed
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_is_valid_and_sums_to_its_width() {
        for name in presets::names() {
            let l = Layout::parse(name).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(l.total_bits() <= 63, "{name}");
            assert_eq!(l.order[0], Field::Time, "{name}");
        }
    }

    #[test]
    fn a_layout_is_labelled_by_its_preset_where_it_is_one() {
        assert_eq!(Layout::parse("twitter").unwrap().label(), "twitter");
        assert_eq!(
            Layout::parse("sonyflake epoch=2014-09-01").unwrap().label(),
            "sonyflake"
        );
        let custom = Layout::parse("twitter epoch=2020-01-01").unwrap();
        assert_eq!(custom.label(), custom.canonical_spec());
    }

    #[test]
    fn a_wrapping_layout_is_described_by_its_cycle() {
        let d = Layout::parse("westid32").unwrap().describe();
        assert!(d.contains("wraps around every 35."), "{d}");
        assert!(!d.contains("years"), "{d}");
        let d = Layout::parse("twitter").unwrap().describe();
        assert!(
            d.contains("lasts until 2080-") && d.contains("69.7 years"),
            "{d}"
        );
    }

    #[test]
    fn overrides_keep_the_preset_order() {
        let l = Layout::parse("sonyflake epoch=2020-01-01").unwrap();
        assert_eq!(
            l.order,
            vec![Field::Time, Field::Sequence, Field::Worker],
            "{l:?}"
        );
        assert_eq!(l.epoch_ms, 1_577_836_800_000);
        assert_eq!(l.name, "sonyflake (customised)");
    }

    #[test]
    fn custom_layout_from_keys_only() {
        let l = Layout::parse("unit=s epoch=2016-05-20 time=28 worker=22 sequence=13").unwrap();
        assert_eq!(l.name, "custom");
        assert_eq!(l.unit_ms, 1000);
        assert_eq!(l.shift(Field::Time), 35);
        assert_eq!(l.shift(Field::Worker), 13);
        assert_eq!(l.per_tick(), 8192);
    }

    #[test]
    fn rejects_layouts_that_do_not_add_up() {
        let e = Layout::parse("twitter sequence=20").unwrap_err();
        assert!(
            matches!(e, LayoutError::Invalid(_))
                && e.message().contains("71 bits")
                && e.message().contains("take 8 bits off"),
            "{e}"
        );
        assert!(Layout::parse("twitter rollback=2").is_err());
        assert!(Layout::parse("twitter reserved=6").is_err());
        assert!(Layout::parse("twitter reserved=1 reserved_value=2").is_err());
        assert!(Layout::parse("twitter order=worker,time,sequence,datacenter").is_err());
        assert!(Layout::parse("twitter order=time,sequence").is_err());
        let e = Layout::parse("nosuch").unwrap_err();
        assert!(matches!(e, LayoutError::UnknownPreset(_)), "{e:?}");
        assert!(e.message().contains("known layouts"), "{e}");
        assert!(Layout::parse("twitter bogus=1").is_err());
        assert!(Layout::parse("twitter unit=fortnight").is_err());
        assert!(Layout::parse("twitter time").is_err());
    }

    #[test]
    fn pack_unpack_round_trip_in_every_order() {
        for spec in [
            "twitter",
            "sonyflake",
            "instagram",
            "raindrop",
            "unit=ms time=41 worker=8 rollback=1 sequence=12 reserved=1 reserved_value=1",
        ] {
            let l = Layout::parse(spec).unwrap();
            let (t, dc, w, r, s) = (
                l.max_value(Field::Time) / 3,
                l.max_value(Field::Datacenter),
                l.max_value(Field::Worker) / 2,
                l.max_value(Field::Rollback),
                l.max_value(Field::Sequence) - 1,
            );
            let id = l.pack(t, dc, w, r, s);
            let d = l.unpack(id).unwrap();
            assert_eq!(
                (
                    d.tick,
                    d.datacenter,
                    d.worker,
                    d.rollback,
                    d.sequence,
                    d.reserved
                ),
                (t, dc, w, r, s, l.reserved_value),
                "{spec}"
            );
        }
    }

    #[test]
    fn instagram_blog_walk_through() {
        // Instagram's engineering post builds an ID as (ms since epoch) << (64 - 41), shard 1341
        // << (64 - 41 - 13), then 5001 % 1024 = 905 as the sequence.
        let id = (1_387_263_000i64 << 23) | (1341 << 10) | 905;
        let d = Layout::parse("instagram").unwrap().unpack(id).unwrap();
        assert_eq!((d.tick, d.worker, d.sequence), (1_387_263_000, 1341, 905));
    }

    #[test]
    fn sonyflake_composition() {
        // sony/sonyflake: elapsed (10 ms units) << (8 + 16) | sequence << 16 | machine id.
        let (elapsed, seq, machine) = (400_000_000_000u64, 17u64, 0xBEEFu64);
        let id = (elapsed << 24 | seq << 16 | machine) as i64;
        let l = Layout::parse("sonyflake").unwrap();
        let d = l.unpack(id).unwrap();
        assert_eq!((d.tick, d.sequence, d.worker), (elapsed, seq, machine));
        assert_eq!(l.pack(elapsed, 0, machine, 0, seq), id);
        assert_eq!(l.ms_of_tick(elapsed), 1_409_529_600_000 + 4_000_000_000_000);
    }

    #[test]
    fn uid_generator_composition() {
        // Baidu uid-generator: deltaSeconds << (22 + 13) | workerId << 13 | sequence, seconds
        // since 1463673600 (2016-05-20 00:00 +08:00).
        let id = (100_000_000i64 << 35) | (4_000_000 << 13) | 8191;
        let l = Layout::parse("uid_generator").unwrap();
        let d = l.unpack(id).unwrap();
        assert_eq!(
            (d.tick, d.worker, d.sequence),
            (100_000_000, 4_000_000, 8191)
        );
        assert_eq!(l.ms_of_tick(d.tick), (1_463_673_600 + 100_000_000) * 1000);
    }

    #[test]
    fn unpack_refuses_ids_the_layout_cannot_make() {
        let js = Layout::parse("js_safe").unwrap();
        assert!(js.unpack(1 << 53).is_err());
        assert!(js.unpack(-1).is_err());
        assert!(js.unpack(js.max_id()).is_ok());
    }

    #[test]
    fn the_javascript_safe_presets_stay_below_2_pow_53_and_can_generate_until_2090() {
        // 2026-11-23, and 2090-01-01 (both UTC).
        let (now, y2090) = (1_795_392_000_000, 3_786_912_000_000);
        for (name, workers, per_second) in [
            ("js_safe", 16, 256_000),
            ("js_safe_10ms", 64, 51_200),
            ("js_safe_s", 1024, 4_096),
        ] {
            let l = Layout::parse(name).unwrap();
            assert!(l.js_safe(), "{name}");
            assert!(l.max_id() < 1 << 53, "{name}");
            assert!(l.end_ms() > y2090, "{name} ends at {}", l.end_ms());
            assert_eq!(l.max_value(Field::Worker) + 1, workers, "{name}");
            assert_eq!(l.per_tick() * 1000 / l.unit_ms, per_second, "{name}");
            assert!(l.check_for_generation(now).is_ok(), "{name}");
        }
    }

    #[test]
    fn min_id_at_ms_is_the_start_of_the_tick() {
        let l = Layout::parse("twitter").unwrap();
        let ms = 1_577_820_376_771; // 2019-12-31 19:26:16.771 UTC
        let id = l.min_id_at_ms(ms).unwrap();
        assert_eq!(l.unpack(id).unwrap().tick, l.tick_of_ms(ms).unwrap());
        assert_eq!(l.unpack(id).unwrap().sequence, 0);
        assert_eq!(
            l.min_id_at_ms(0).unwrap(),
            0,
            "before the epoch clamps to 0"
        );
        assert!(l.min_id_at_ms(l.end_ms() + 1).is_err());
    }

    #[test]
    fn generation_check_says_what_would_fit() {
        let now = parse_utc_ms("2026-11-21").unwrap();
        // uid_generator's 28 bits of seconds from 2016 ran out in 2024.
        let e = Layout::parse("uid_generator")
            .unwrap()
            .check_for_generation(now)
            .unwrap_err();
        assert!(
            e.contains("runs out on 2024-") && e.contains("time=31"),
            "{e}"
        );
        let e = Layout::parse("westid32")
            .unwrap()
            .check_for_generation(now)
            .unwrap_err();
        assert!(e.contains("34.95 minutes"), "{e}");
        let e = Layout::parse("twitter epoch=2030-01-01")
            .unwrap()
            .check_for_generation(now)
            .unwrap_err();
        assert!(e.contains("future"), "{e}");
        Layout::parse("pg_idgen")
            .unwrap()
            .check_for_generation(now)
            .unwrap();
        Layout::parse("js_safe")
            .unwrap()
            .check_for_generation(now)
            .unwrap();
    }

    #[test]
    fn years_match_seed_001_table() {
        // Seed 001: 41 bits of ms last 69.7 years, 31 bits of s 68 years, 25 bits of min 63 years.
        let y = |spec: &str| Layout::parse(spec).unwrap().years();
        assert!((y("unit=ms time=41 sequence=12") - 69.7).abs() < 0.1);
        assert!((y("unit=s time=31 sequence=12") - 68.0).abs() < 0.1);
        assert!((y("unit=min time=25 sequence=12") - 63.8).abs() < 0.1);
        assert!((y("unit=day time=15 sequence=12") - 89.7).abs() < 0.1);
    }
}
