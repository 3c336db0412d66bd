//! The errors of layouts, by kind, so that the pgrx layer maps each to its SQLSTATE in one place;
//! each says in words what to change.

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

/// Why an ID cannot be taken apart by a layout: this layout cannot have made it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    /// Snowflake IDs keep the sign bit 0.
    Negative { id: i64 },
    /// Bits are set above the layout's width.
    TooWide {
        id: i64,
        layout: String,
        bits: u32,
        max_id: i64,
    },
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DecodeError::Negative { id } => {
                write!(f, "{id} is negative; Snowflake IDs keep the sign bit 0")
            }
            DecodeError::TooWide {
                id,
                layout,
                bits,
                max_id,
            } => write!(
                f,
                "{id} has bits set above the {bits} bits of layout {layout} (largest ID {max_id})"
            ),
        }
    }
}

/// A time past the end of a layout: no ID of the layout has it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PastEnd(pub String);

impl std::fmt::Display for PastEnd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Why a node may not generate IDs with a layout (it may still decode them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GenerationRefused {
    /// The time field wraps around (westid32): a wrapped time repeats IDs.
    Wraps(String),
    /// The epoch has not come yet.
    EpochInFuture(String),
    /// Less than a year of time bits is left.
    RunsOut(String),
}

impl std::fmt::Display for GenerationRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GenerationRefused::Wraps(m)
            | GenerationRefused::EpochInFuture(m)
            | GenerationRefused::RunsOut(m) => f.write_str(m),
        }
    }
}

/// Why a span of time is no fixed number of IDs of a layout (`id_span()`, the width of
/// range partitions).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SpanError {
    /// Zero or negative.
    NotPositive { span_ms: i64 },
    /// Not a whole number of the layout's ticks.
    NotWholeTicks {
        span_ms: i64,
        unit_ms: u64,
        layout: String,
    },
    /// As long as the layout's whole life, or longer.
    TooLong { span_ms: i64, layout: String },
}

impl std::fmt::Display for SpanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SpanError::NotPositive { span_ms } => write!(f, "a span of {span_ms} ms holds no IDs: it must be positive"),
            SpanError::NotWholeTicks {
                span_ms,
                unit_ms,
                layout,
            } => write!(
                f,
                "a span of {span_ms} ms is not a whole number of ticks of layout {layout} ({unit_ms} ms each)"
            ),
            SpanError::TooLong { span_ms, layout } => {
                write!(f, "a span of {span_ms} ms is as long as layout {layout} lasts, or longer")
            }
        }
    }
}
