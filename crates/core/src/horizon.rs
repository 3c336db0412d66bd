//! The read horizon of a clock stream: a counter H such that every counter below it was handed out
//! to a transaction that has ended (committed or rolled back). A reader that pages by ID reads
//! only below H, and takes its snapshot after computing H, so no commit can appear later below
//! what it has read.
//!
//! The protocol (model-checked in `models/horizon.rs`):
//! - a transaction, before its first counter of a stream, loads the stream's last counter and
//!   publishes `low_for(last)` in its slot (a sequentially consistent store), then takes counters
//!   (a sequentially consistent compare-and-swap), each above the published value;
//! - it clears the slot only once its end is visible to new snapshots (after PostgreSQL's
//!   `ProcArrayEndTransaction`); a prepared transaction copies its slot into a record kept until
//!   COMMIT/ROLLBACK PREPARED ends it, before clearing the slot;
//! - a reader loads the stream's last counter first, then every slot, then every prepared record
//!   (in that order), and takes `horizon(last, slots)`.
//!
//! Why it holds: a counter c < H was issued by a compare-and-swap before the reader's load of
//! `last` (c <= last). If its transaction were still open when the reader read its slot, the slot
//! would hold a value <= c (published before the first of its counters), and H would be <= c.

/// A slot that holds nothing.
pub const EMPTY: u64 = 0;

/// What a transaction publishes before its first counter of a stream, `last` being the stream's
/// counter loaded before the store: a lower bound of every counter it can still be handed.
#[inline(always)]
pub fn low_for(last: u64) -> u64 {
    last + 1
}

/// The horizon from the stream's last counter (loaded first) and the slots (read after it).
pub fn horizon(last: u64, held: impl IntoIterator<Item = u64>) -> u64 {
    held.into_iter()
        .filter(|&low| low != EMPTY)
        .fold(low_for(last), u64::min)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generator::{ClockPolicy, Generator};
    use crate::layout::{Field, Layout};

    /// As an ID, the horizon lies at or below every ID (of any worker) of its counter or a higher
    /// one, which is what a reader needs, and above every ID of a lower counter of worker 0 (of
    /// a lower tick, of any worker): it moves on. The rollback policy gets none.
    #[test]
    fn the_horizon_as_an_id_separates_lower_counters_from_the_rest() {
        for spec in ["pg_idgen", "twitter", "sonyflake", "js_safe", "instagram"] {
            let layout = Layout::parse(spec).unwrap();
            let workers = layout.max_value(Field::Worker);
            let g = Generator::new(layout.clone(), ClockPolicy::Wait, 0, 0, 0, 0).unwrap();
            let s = g.seq_bits();
            let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
            for _ in 0..20_000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let tick = (x >> 20) % 1_000_000 + 5;
                let h = tick << s | (x & ((1 << s) - 1));
                let h_id = g.horizon_id(h, 0).unwrap();
                let w = (x >> 40) % (workers + 1);
                let own = g.horizon_id(h, w).unwrap();
                assert!(g.id_of_worker(h - 1, 0, w) < own && g.id_of_worker(h, 0, w) >= own);
                let lower = h - 1 - (x >> 50) % 3;
                let higher = h + (x >> 52) % 3;
                assert!(
                    g.id_of_worker(lower, 0, 0) < h_id,
                    "{spec}: {lower} below {h}"
                );
                let earlier_tick = h - (1 << s);
                assert!(
                    g.id_of_worker(earlier_tick, 0, w) < h_id,
                    "{spec}: a tick before"
                );
                assert!(
                    g.id_of_worker(higher, 0, w) >= h_id,
                    "{spec}: {higher} not below {h}"
                );
            }
        }
        let flag = Layout::parse("raindrop").unwrap();
        let g = Generator::new(flag, ClockPolicy::RollbackFlag, 0, 0, 0, 0).unwrap();
        assert_eq!(g.horizon_id(1 << 20, 0), None);
    }

    #[test]
    fn the_horizon_is_the_lowest_held_value_or_the_next_counter() {
        assert_eq!(horizon(41, []), 42);
        assert_eq!(horizon(41, [EMPTY, 17, EMPTY, 30]), 17);
        assert_eq!(horizon(41, [50]), 42);
    }
}
