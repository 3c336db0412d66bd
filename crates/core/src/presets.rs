//! Named layouts: the systems whose IDs pg_idgen can make or read back bit for bit, in one table
//! that the layout parser and `idgen.layouts` both read.
//!
//! Each entry cites where its numbers come from, because decoding another system's IDs is only
//! useful if it agrees with that system's own decoder.

use super::field::Field;
use Field::*;

/// One named layout: its time unit and epoch, and its fields from the highest bits down.
#[derive(Debug)]
pub struct Preset {
    pub name: &'static str,
    pub unit_ms: u64,
    pub epoch_ms: i64,
    pub fields: &'static [(Field, u8)],
    /// The time field wraps around (decoding only).
    pub wraps: bool,
}

/// 2024-01-01 00:00:00 UTC: the epoch of pg_idgen's own layouts.
const PG_IDGEN_EPOCH_MS: i64 = 1_704_067_200_000;

/// The layout of a node that names none: the first entry of [`PRESETS`].
pub const DEFAULT: &str = "pg_idgen";

const fn preset(
    name: &'static str,
    unit_ms: u64,
    epoch_ms: i64,
    fields: &'static [(Field, u8)],
) -> Preset {
    Preset {
        name,
        unit_ms,
        epoch_ms,
        fields,
        wraps: false,
    }
}

pub const PRESETS: &[Preset] = &[
    // The default: Twitter's widths from a recent epoch, so IDs last until 2093 and the worker
    // id is one 10-bit number (1024 nodes), 4096 IDs per millisecond per node.
    preset(
        "pg_idgen",
        1,
        PG_IDGEN_EPOCH_MS,
        &[(Time, 41), (Worker, 10), (Sequence, 12)],
    ),
    // Twitter Snowflake (2010): 41 bits of ms since 1288834974657, 5-bit datacenter, 5-bit
    // worker, 12-bit sequence.
    preset(
        "twitter",
        1,
        1_288_834_974_657,
        &[(Time, 41), (Datacenter, 5), (Worker, 5), (Sequence, 12)],
    ),
    // Meituan Leaf's Snowflake mode: Twitter's epoch and widths with one 10-bit worker id
    // (leased from ZooKeeper there).
    preset(
        "leaf",
        1,
        1_288_834_974_657,
        &[(Time, 41), (Worker, 10), (Sequence, 12)],
    ),
    // Sonyflake: 39 bits of 10 ms since 2014-09-01 UTC, then the 8-bit sequence, then the
    // 16-bit machine id at the bottom.
    preset(
        "sonyflake",
        10,
        1_409_529_600_000,
        &[(Time, 39), (Sequence, 8), (Worker, 16)],
    ),
    // Instagram's sharded IDs: 41 bits of ms since 1314220021721, 13-bit shard id, 10-bit
    // sequence.
    preset(
        "instagram",
        1,
        1_314_220_021_721,
        &[(Time, 40), (Worker, 13), (Sequence, 10)],
    ),
    // Baidu uid-generator's DefaultUidGenerator: 28 bits of seconds since 2016-05-20 00:00
    // +08:00 (epochSeconds 1463673600), 22-bit worker node id, 13-bit sequence. Its 28 bits
    // ran out in 2024, so it decodes old IDs and cannot generate.
    preset(
        "uid_generator",
        1_000,
        1_463_673_600_000,
        &[(Time, 28), (Worker, 22), (Sequence, 13)],
    ),
    // Fits JavaScript's Number.MAX_SAFE_INTEGER (2^53 - 1) until 2093: 41 bits of ms, 4-bit
    // worker (16 nodes), 8-bit sequence (256 IDs per ms per node).
    preset(
        "js_safe",
        1,
        PG_IDGEN_EPOCH_MS,
        &[(Time, 41), (Worker, 4), (Sequence, 8)],
    ),
    // Also under 2^53, with a coarser clock for more nodes: 38 bits of 10 ms last until 2111;
    // 6-bit worker (64 nodes), 9-bit sequence (512 IDs per 10 ms per node, 51,200 per second).
    preset(
        "js_safe_10ms",
        10,
        PG_IDGEN_EPOCH_MS,
        &[(Time, 38), (Worker, 6), (Sequence, 9)],
    ),
    // Under 2^53 with seconds: 31 bits last until 2092; the default's 10-bit worker (1024 nodes)
    // and 12-bit sequence (4096 IDs per second per node), for keys of things made at human pace.
    preset(
        "js_safe_s",
        1_000,
        PG_IDGEN_EPOCH_MS,
        &[(Time, 31), (Worker, 10), (Sequence, 12)],
    ),
    // The configurable Snowflake "raindrop": time, worker, a one-bit rollback flag, sequence,
    // and a reserved bit last.
    preset(
        "raindrop",
        1,
        PG_IDGEN_EPOCH_MS,
        &[
            (Time, 41),
            (Worker, 8),
            (Rollback, 1),
            (Sequence, 12),
            (Reserved, 1),
        ],
    ),
    // westid: (timestamp << 22) | (machine << 12) | sequence, epoch 1490346283706
    // (2017-03-24T17:04:43.706+08:00).
    preset(
        "westid",
        1,
        1_490_346_283_706,
        &[(Time, 41), (Worker, 10), (Sequence, 12)],
    ),
    // westid's 32-bit variant for WeChat QR scene ids: 21 bits from the millisecond clock
    // (a 34.95-minute cycle), 5-bit worker, 5-bit sequence; 31 bits, positive as an int32.
    Preset {
        wraps: true,
        ..preset("westid32", 1, 0, &[(Time, 21), (Worker, 5), (Sequence, 5)])
    },
];

/// The preset of that name (lower case; `default` is the default's other name).
pub fn find(name: &str) -> Option<&'static Preset> {
    let name = if name == "default" { DEFAULT } else { name };
    PRESETS.iter().find(|p| p.name == name)
}

/// The names of every preset, in the table's order.
pub fn names() -> impl Iterator<Item = &'static str> {
    PRESETS.iter().map(|p| p.name)
}
