//! IDs at a past time (`snowflake_at`, `uuidv7_at`): the arithmetic of backfill blocks.
//!
//! A backfilled Snowflake ID is the given instant's tick, a worker id reserved for backfills (no
//! node makes live IDs with it) and a sequence number that no other backfill of that worker id at
//! that tick has had. The sequence numbers are counted per *bucket* of [`BUCKET_TICKS`] ticks in a
//! table (`idgen_internal.backfill_counters`), which only the allocator worker writes, committing
//! before any of them is used: a block `[first, first + len)` of a bucket belongs to one backend,
//! which may use each of its numbers once at every tick of the bucket. Two blocks of one bucket
//! never overlap (the row's counter moves past each before it commits), blocks of different
//! buckets are at different ticks, and a caller's ROLLBACK or a crash loses at most the unused
//! rest of a block: a gap, never a repeat.
//!
//! A bucket rather than a row per tick: an import reads its rows mostly in time order, so one
//! block serves every row of its bucket (about a second in milliseconds) up to `len` rows per tick,
//! and the table holds a row per bucket that was backfilled, not per tick.
//!
//! UUIDv7s at a past time use the same blocks with their own counter (stream [`UUID_STREAM`]) for
//! the 15-bit counter field of a millisecond; their 59 random bits keep them apart from the live
//! UUIDv7s of the node and of every other node, as they keep live ones apart across nodes.

use std::collections::BTreeMap;

/// Ticks per bucket (2^10: about a second of milliseconds).
pub const BUCKET_BITS: u32 = 10;
pub const BUCKET_TICKS: u64 = 1 << BUCKET_BITS;

/// The stream of UUIDv7 backfills (Snowflake backfills use their worker id, 0 or more).
pub const UUID_STREAM: i32 = -1;

/// The smallest block asked for: one row per tick would ask the allocator again for the next row
/// at the same tick.
pub const MIN_BLOCK: u32 = 8;

/// The smallest block for a layout of `capacity` numbers per tick: [`MIN_BLOCK`], or less where
/// that would let fewer than 512 backends' blocks share a bucket (a layout with few sequence
/// bits), never 0.
pub fn min_block(capacity: u32) -> u32 {
    (capacity / 512).clamp(1, MIN_BLOCK)
}

/// The bucket of a tick.
pub fn bucket_of(tick: u64) -> u64 {
    tick >> BUCKET_BITS
}

/// The allocator's step: from a bucket's committed counter `next` (the first number no block has
/// had), the block it hands out, `(first, len)` with `1 <= len <= want`, and the counter to commit
/// (`first + len`); None when the bucket has no number left below `capacity` (the IDs per tick of
/// the layout's sequence field).
pub fn reserve(next: u32, want: u32, capacity: u32) -> Option<(u32, u32)> {
    let left = capacity.checked_sub(next)?;
    let len = want.min(left);
    (len > 0).then_some((next, len))
}

/// Where a backfill's numbers come from: the database holding the counters, the stream (the
/// backfill worker id, or [`UUID_STREAM`]) and the bucket.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub struct BlockKey {
    pub db: u32,
    pub stream: i32,
    pub bucket: u64,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Block {
    first: u32,
    len: u32,
    /// Numbers used per tick of the bucket.
    used: Vec<(u64, u32)>,
}

/// A backend's committed blocks, one per bucket (a new block of a bucket replaces its old one,
/// whose unused numbers become a gap).
#[derive(Clone, Debug, Default, Hash, PartialEq, Eq)]
pub struct Blocks {
    map: BTreeMap<BlockKey, Block>,
    /// The bucket this backend last asked a single block for.
    last_ask: Option<BlockKey>,
}

/// Buckets a backend keeps blocks of before it forgets them all (their rest becomes a gap).
const MAX_BLOCKS: usize = 4096;

/// Buckets asked for ahead of an import that walks forward in time one bucket after another.
pub const READ_AHEAD: u64 = 15;

impl Blocks {
    /// No blocks: a backend's state before its first backfill.
    pub const fn new() -> Blocks {
        Blocks {
            map: BTreeMap::new(),
            last_ask: None,
        }
    }

    /// The next number of `tick` from this backend's block of its bucket, if it has one left.
    pub fn take(&mut self, db: u32, stream: i32, tick: u64) -> Option<u32> {
        let key = BlockKey {
            db,
            stream,
            bucket: bucket_of(tick),
        };
        let block = self.map.get_mut(&key)?;
        let used = match block.used.iter_mut().find(|(t, _)| *t == tick) {
            Some((_, n)) => n,
            None => {
                block.used.push((tick, 0));
                &mut block.used.last_mut().expect("just pushed").1
            }
        };
        if *used >= block.len {
            return None;
        }
        *used += 1;
        Some(block.first + *used - 1)
    }

    /// Keeps a block the allocator committed for `key`.
    pub fn install(&mut self, key: BlockKey, first: u32, len: u32) {
        if self.map.len() >= MAX_BLOCKS && !self.map.contains_key(&key) {
            self.map.clear();
        }
        self.map.insert(
            key,
            Block {
                first,
                len,
                used: Vec::new(),
            },
        );
    }

    /// Makes room for `n` more blocks, forgetting every block if they would not fit (called before
    /// the blocks of one request are installed, so that none of them is forgotten before use).
    pub fn make_room(&mut self, n: usize) {
        if self.map.len() + n > MAX_BLOCKS {
            self.map.clear();
        }
    }

    /// Adds blocks of the buckets after the one `wants` asks for, when this backend asked for the
    /// bucket right before it last time (rows read in time order, a few per bucket: one request
    /// per [`READ_AHEAD`] + 1 buckets instead of one per bucket), up to `newest` (the bucket of
    /// the present). Unused, they are a gap.
    pub fn read_ahead(
        &mut self,
        db: u32,
        stream: i32,
        wants: &mut Vec<(u64, u32)>,
        newest: u64,
        min_block: u32,
    ) {
        let [(bucket, _)] = wants[..] else {
            return;
        };
        let key = BlockKey { db, stream, bucket };
        let walking = self.last_ask.is_some_and(|k| {
            k.db == db && k.stream == stream && k.bucket.checked_add(1) == Some(bucket)
        });
        // The last bucket asked for, read ahead or not: the next walk step is the one after it.
        let last = if walking {
            let end = bucket.saturating_add(READ_AHEAD).min(newest);
            wants.extend((bucket + 1..=end).map(|b| (b, min_block)));
            end.max(bucket)
        } else {
            bucket
        };
        self.last_ask = Some(BlockKey {
            bucket: last,
            ..key
        });
    }

    /// Forgets every block (a gap, never a repeat).
    pub fn clear(&mut self) {
        self.map.clear();
    }
}

/// The blocks to ask for, in bucket order, so that every tick of `ticks` (those this backend had
/// no number for) gets one: per bucket, as many numbers as the tick asked for most often needs,
/// at least `min_block`, at most `capacity`.
pub fn plan(ticks: &[u64], min_block: u32, capacity: u32) -> Vec<(u64, u32)> {
    let mut per_tick: Vec<u64> = ticks.to_vec();
    per_tick.sort_unstable();
    let mut want: Vec<(u64, u32)> = Vec::new();
    let mut i = 0;
    while i < per_tick.len() {
        let tick = per_tick[i];
        let run = per_tick[i..].iter().take_while(|t| **t == tick).count();
        let bucket = bucket_of(tick);
        let n = (run.min(u32::MAX as usize) as u32)
            .max(min_block)
            .min(capacity);
        match want.last_mut() {
            Some((b, w)) if *b == bucket => *w = (*w).max(n),
            _ => want.push((bucket, n)),
        }
        i += run;
    }
    want
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_import_in_time_order_reads_ahead() {
        let mut b = Blocks::default();
        let mut w = vec![(10, 8)];
        b.read_ahead(1, 0, &mut w, 1000, 8);
        assert_eq!(w, vec![(10, 8)], "a first ask is one bucket");
        let mut w = vec![(11, 8)];
        b.read_ahead(1, 0, &mut w, 1000, 8);
        assert_eq!(w.len(), 16, "the next bucket: 15 more");
        assert_eq!(w.last(), Some(&(26, 8)));
        let mut w = vec![(27, 8)];
        b.read_ahead(1, 0, &mut w, 30, 8);
        assert_eq!(
            w,
            vec![(27, 8), (28, 8), (29, 8), (30, 8)],
            "never past the present"
        );
        // Another stream, a jump, or a batch of several buckets: no read-ahead.
        let mut w = vec![(31, 8)];
        b.read_ahead(1, 5, &mut w, 1000, 8);
        assert_eq!(w.len(), 1);
        let mut w = vec![(500, 8)];
        b.read_ahead(1, 0, &mut w, 1000, 8);
        assert_eq!(w.len(), 1);
        let mut w = vec![(501, 8), (502, 8)];
        b.read_ahead(1, 0, &mut w, 1000, 8);
        assert_eq!(w.len(), 2);
    }

    #[test]
    fn small_layouts_take_small_blocks() {
        assert_eq!(min_block(4096), 8);
        assert_eq!(min_block(1 << 15), 8);
        assert_eq!(min_block(256), 1);
        assert_eq!(min_block(8), 1);
        assert_eq!(min_block(1), 1);
    }

    #[test]
    fn reserve_hands_out_what_is_left() {
        assert_eq!(reserve(0, 8, 4096), Some((0, 8)));
        assert_eq!(reserve(4090, 8, 4096), Some((4090, 6)));
        assert_eq!(reserve(4096, 8, 4096), None);
        assert_eq!(reserve(5000, 8, 4096), None);
    }

    #[test]
    fn a_block_serves_each_tick_of_its_bucket_len_times() {
        let mut b = Blocks::default();
        assert_eq!(b.take(1, 7, 5), None);
        b.install(
            BlockKey {
                db: 1,
                stream: 7,
                bucket: 0,
            },
            16,
            2,
        );
        assert_eq!(b.take(1, 7, 5), Some(16));
        assert_eq!(b.take(1, 7, 5), Some(17));
        assert_eq!(b.take(1, 7, 5), None);
        assert_eq!(b.take(1, 7, 6), Some(16));
        // Another bucket, stream or database has no block.
        assert_eq!(b.take(1, 7, BUCKET_TICKS), None);
        assert_eq!(b.take(1, 8, 5), None);
        assert_eq!(b.take(2, 7, 5), None);
    }

    #[test]
    fn a_new_block_replaces_the_old_one() {
        let mut b = Blocks::default();
        let key = BlockKey {
            db: 1,
            stream: 0,
            bucket: 3,
        };
        let tick = 3 * BUCKET_TICKS + 1;
        b.install(key, 0, 1);
        assert_eq!(b.take(1, 0, tick), Some(0));
        b.install(key, 1, 1);
        assert_eq!(b.take(1, 0, tick), Some(1));
        assert_eq!(b.take(1, 0, tick), None);
    }

    #[test]
    fn plan_asks_per_bucket_for_the_busiest_tick() {
        let t = BUCKET_TICKS;
        assert_eq!(plan(&[], 8, 4096), vec![]);
        assert_eq!(plan(&[5], 8, 4096), vec![(0, 8)]);
        assert_eq!(plan(&[5, 5, 5], 1, 4096), vec![(0, 3)]);
        let ticks: Vec<u64> = std::iter::repeat_n(t + 2, 20)
            .chain([1, t + 3, 2 * t])
            .collect();
        assert_eq!(plan(&ticks, 8, 4096), vec![(0, 8), (1, 20), (2, 8)]);
        // Never more than a tick holds.
        assert_eq!(plan(&[9; 100], 8, 64), vec![(0, 64)]);
    }

    #[test]
    fn many_backends_never_share_a_number() {
        use std::collections::HashMap;
        // Backends asking in turns, the committed counter per bucket moving as the allocator
        // would: every (tick, number) handed out is distinct.
        let capacity = 64;
        let mut counters: HashMap<u64, u32> = HashMap::new();
        let mut backends = vec![Blocks::default(); 4];
        let mut seen = std::collections::HashSet::new();
        let mut x: u64 = 12345;
        for round in 0..20_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let tick = (x >> 33) % (3 * BUCKET_TICKS);
            let b = &mut backends[round % 4];
            let n = match b.take(1, 0, tick) {
                Some(n) => n,
                None => {
                    let (bucket, want) = plan(&[tick], 2, capacity)[0];
                    let next = counters.entry(bucket).or_insert(0);
                    let Some((first, len)) = reserve(*next, want, capacity) else {
                        continue;
                    };
                    *next = first + len;
                    b.install(
                        BlockKey {
                            db: 1,
                            stream: 0,
                            bucket,
                        },
                        first,
                        len,
                    );
                    b.take(1, 0, tick).expect("a fresh block has a number")
                }
            };
            assert!(n < capacity);
            assert!(seen.insert((tick, n)), "tick {tick} number {n} twice");
        }
    }
}
