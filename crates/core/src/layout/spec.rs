//! The grammar of layout specs (the value of `idgen.layout`): a preset name and `key=value`
//! overrides, checked into a `Layout`.

use super::{Field, Layout, LayoutError};
use crate::civil::parse_utc_ms;
use crate::presets::{self, Preset};

/// The clock unit a layout counts in. Sonyflake's 10 ms is why this is a multiple of a millisecond
/// rather than a closed list; the configurable Snowflake's units (ms, s, min, hour, day) are the named ones.
pub fn parse_unit_ms(s: &str) -> Result<u64, LayoutError> {
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
    Err(LayoutError::Invalid(format!(
        "unit \"{s}\" is not a time unit: use ms, s, min, hour, day, or a multiple of a millisecond such as 10ms"
    )))
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
        Layout::with_overrides(base, named_preset, words)
    }

    /// The preset (or the default) with the spec's `key=value` overrides, validated.
    fn with_overrides<'a>(
        mut s: LayoutSpec,
        named_preset: bool,
        words: impl Iterator<Item = &'a str>,
    ) -> Result<Layout, LayoutError> {
        let invalid = LayoutError::Invalid;
        let mut custom = false;
        let mut order_given = false;
        for word in words {
            let (key, value) = word.split_once('=').ok_or_else(|| {
                invalid(format!(
                    "\"{word}\" is not key=value (a preset name may only come first)"
                ))
            })?;
            let bits = |v: &str| -> Result<u8, LayoutError> {
                v.parse::<u8>().ok().filter(|n| *n <= 63).ok_or_else(|| {
                    invalid(format!(
                        "{key}={v}: a number of bits from 0 to 63 is needed"
                    ))
                })
            };
            custom = true;
            match key {
                "unit" => s.unit_ms = parse_unit_ms(value)?,
                "epoch" => s.epoch_ms = parse_utc_ms(value).map_err(|e| invalid(e.0))?,
                "time" | "timestamp" => s.bits[Field::Time.index()] = bits(value)?,
                "datacenter" | "dc" => s.bits[Field::Datacenter.index()] = bits(value)?,
                "worker" | "machine" | "shard" => s.bits[Field::Worker.index()] = bits(value)?,
                "rollback" => s.bits[Field::Rollback.index()] = bits(value)?,
                "sequence" | "seq" => s.bits[Field::Sequence.index()] = bits(value)?,
                "reserved" => s.bits[Field::Reserved.index()] = bits(value)?,
                "reserved_value" => {
                    s.reserved_value = value
                        .parse::<u64>()
                        .map_err(|_| invalid(format!("reserved_value={value}: a non-negative integer is needed")))?
                }
                "order" => {
                    s.order = value
                        .split(',')
                        .map(|f| {
                            Field::parse(f).ok_or_else(|| {
                                invalid(format!(
                                    "order: \"{f}\" is not a field; fields are time, datacenter, worker, rollback, sequence, reserved"
                                ))
                            })
                        })
                        .collect::<Result<_, _>>()?;
                    order_given = true;
                }
                _ => {
                    return Err(invalid(format!(
                        "unknown layout key \"{key}\"; keys are unit, epoch, time, datacenter, worker, rollback, sequence, reserved, reserved_value, order"
                    )))
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

    /// Validates a spec: the fields fit in 63 bits, the order starts with time and names each
    /// field with bits once.
    pub fn from_spec(s: LayoutSpec) -> Result<Layout, LayoutError> {
        Layout::check_spec(&s).map_err(LayoutError::Invalid)?;
        let b = |f: Field| s.bits[f.index()] as u32;
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

    /// What is wrong with a spec, in words, or nothing.
    fn check_spec(s: &LayoutSpec) -> Result<(), String> {
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
                "reserved={}: 0 to 5 reserved bits (as raindrop allows)",
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
        Ok(())
    }
}
