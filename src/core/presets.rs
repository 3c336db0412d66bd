//! Named layouts: the systems whose IDs pg_idgen can make or read back bit for bit.
//!
//! Each entry cites where its numbers come from, because decoding another system's IDs is only
//! useful if it agrees with that system's own decoder.

use super::layout::{Field, LayoutSpec};

pub const PRESET_NAMES: [&str; 10] = [
    "pg_idgen",
    "twitter",
    "leaf",
    "sonyflake",
    "instagram",
    "uid_generator",
    "js_safe",
    "raindrop",
    "westid",
    "westid32",
];

/// 2024-01-01 00:00:00 UTC: the epoch of pg_idgen's own layouts.
const PG_IDGEN_EPOCH_MS: i64 = 1_704_067_200_000;

fn spec(name: &str, unit_ms: u64, epoch_ms: i64, fields: &[(Field, u8)]) -> LayoutSpec {
    let mut s = LayoutSpec {
        name: name.to_string(),
        unit_ms,
        epoch_ms,
        bits: [0; 6],
        order: fields.iter().map(|(f, _)| *f).collect(),
        reserved_value: 0,
        wraps: false,
    };
    for (f, n) in fields {
        s = s.set_bits(*f, *n);
    }
    s
}

pub fn preset(name: &str) -> Option<LayoutSpec> {
    use Field::*;
    Some(match name {
        // The default: Twitter's widths from a recent epoch, so IDs last until 2093 and the worker
        // id is one 10-bit number (1024 nodes), 4096 IDs per millisecond per node.
        "pg_idgen" | "default" => spec(
            "pg_idgen",
            1,
            PG_IDGEN_EPOCH_MS,
            &[(Time, 41), (Worker, 10), (Sequence, 12)],
        ),
        // Twitter Snowflake (2010): 41 bits of ms since 1288834974657, 5-bit datacenter, 5-bit
        // worker, 12-bit sequence.
        "twitter" => spec(
            "twitter",
            1,
            1_288_834_974_657,
            &[(Time, 41), (Datacenter, 5), (Worker, 5), (Sequence, 12)],
        ),
        // Meituan Leaf's Snowflake mode: Twitter's epoch and widths with one 10-bit worker id
        // (leased from ZooKeeper there).
        "leaf" => spec(
            "leaf",
            1,
            1_288_834_974_657,
            &[(Time, 41), (Worker, 10), (Sequence, 12)],
        ),
        // Sonyflake: 39 bits of 10 ms since 2014-09-01 UTC, then the 8-bit sequence, then the
        // 16-bit machine id at the bottom.
        "sonyflake" => spec(
            "sonyflake",
            10,
            1_409_529_600_000,
            &[(Time, 39), (Sequence, 8), (Worker, 16)],
        ),
        // Instagram's sharded IDs: 41 bits of ms since 1314220021721, 13-bit shard id, 10-bit
        // sequence.
        "instagram" => spec(
            "instagram",
            1,
            1_314_220_021_721,
            &[(Time, 40), (Worker, 13), (Sequence, 10)],
        ),
        // Baidu uid-generator's DefaultUidGenerator: 28 bits of seconds since 2016-05-20 00:00
        // +08:00 (epochSeconds 1463673600), 22-bit worker node id, 13-bit sequence. Its 28 bits
        // ran out in 2024, so it decodes old IDs and cannot generate.
        "uid_generator" => spec(
            "uid_generator",
            1_000,
            1_463_673_600_000,
            &[(Time, 28), (Worker, 22), (Sequence, 13)],
        ),
        // Fits JavaScript's Number.MAX_SAFE_INTEGER (2^53 - 1) until 2093: 41 bits of ms, 4-bit
        // worker (16 nodes), 8-bit sequence (256 IDs per ms per node).
        "js_safe" => spec(
            "js_safe",
            1,
            PG_IDGEN_EPOCH_MS,
            &[(Time, 41), (Worker, 4), (Sequence, 8)],
        ),
        // Seed 001 ("raindrop"): time, worker, a one-bit rollback flag, sequence, and a reserved
        // bit last.
        "raindrop" => spec(
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
        // Seed 004 (westid): (timestamp << 22) | (machine << 12) | sequence, epoch 1490346283706
        // (2017-03-24T17:04:43.706+08:00).
        "westid" => spec(
            "westid",
            1,
            1_490_346_283_706,
            &[(Time, 41), (Worker, 10), (Sequence, 12)],
        ),
        // Seed 004's 32-bit variant for WeChat QR scene ids: 21 bits from the millisecond clock
        // (a 34.95-minute cycle), 5-bit worker, 5-bit sequence; 31 bits, positive as an int32.
        "westid32" => {
            let mut s = spec("westid32", 1, 0, &[(Time, 21), (Worker, 5), (Sequence, 5)]);
            s.wraps = true;
            s
        }
        _ => return None,
    })
}
