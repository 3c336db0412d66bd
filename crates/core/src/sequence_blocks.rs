//! The blocks of an adopted sequence whose increment is n > 1. An ORM that draws from such a
//! sequence (Hibernate's pooled and pooled-lo optimizers, Rails' and jOOQ's bulk allocators) takes
//! one value v and hands out n numbers next to it itself: pooled-lo the n starting at v, pooled
//! the n ending at v (Hibernate 5 and later: v - (n - 1) .. v; Hibernate 3 and 4: v - n .. v - 1).
//! So each draw returns the middle of 2n + 1 consecutive IDs that the node's Snowflake stream
//! issued to it alone: v - n .. v + n; whichever way the caller counts, no other caller's block or
//! ID overlaps it.
//!
//! Consecutive integers are consecutive counters of one tick only where the layout keeps the
//! sequence in the lowest bits (the worker id above it): otherwise the next integer is another
//! worker's ID, or the same counter of the next worker.

use crate::field::Field;
use crate::layout::Layout;

/// How many counters one draw of increment `n` takes: 2n + 1 (1 for n <= 1).
pub fn width(n: u64) -> u64 {
    if n <= 1 {
        1
    } else {
        n.saturating_mul(2).saturating_add(1)
    }
}

/// Why a layout cannot serve blocks of `n`, if it cannot.
pub fn refusal(layout: &Layout, n: u64) -> Option<String> {
    if n <= 1 {
        return None;
    }
    if layout.shift(Field::Sequence) != 0 {
        return Some(format!(
            "layout {} does not keep the sequence in the lowest bits, so consecutive numbers are not IDs of one worker",
            layout.name
        ));
    }
    let tick = 1u64 << layout.bits(Field::Sequence);
    // Half a tick at most, so that a take that ran into the end of one tick fits in the next.
    if width(n) > tick / 2 {
        return Some(format!(
            "a block of INCREMENT {n} takes {} consecutive IDs and layout {} has {tick} in a tick (at most {} by INCREMENT)",
            width(n),
            layout.name,
            (tick / 2 - 1) / 2
        ));
    }
    None
}

/// The counter to hand out, the middle of a block of increment `n`, if the counters `first ..
/// first + count` of one take (with `seq_bits` of sequence in a tick) hold a whole block within
/// one tick; None when the take ran across the end of a tick or came short (take again: the
/// counters are spent, which costs nothing but gaps).
pub fn middle(seq_bits: u32, first: u64, count: u64, n: u64) -> Option<u64> {
    let w = width(n);
    if count < w {
        return None;
    }
    let last = first.checked_add(w - 1)?;
    (first >> seq_bits == last >> seq_bits).then_some(first + (w - 1) / 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn width_is_twice_less_one() {
        assert_eq!(width(1), 1);
        assert_eq!(width(50), 101);
    }

    #[test]
    fn middle_inside_one_tick() {
        // 12 bits of sequence: a tick holds counters t << 12 .. (t << 12) + 4095.
        let t = 7u64 << 12;
        assert_eq!(middle(12, t + 10, 101, 50), Some(t + 60));
        // Runs across the end of the tick: refused.
        assert_eq!(middle(12, t + 4000, 101, 50), None);
        // Came short.
        assert_eq!(middle(12, t, 100, 50), None);
        // The last fitting start.
        assert_eq!(
            middle(12, t + 4096 - 101, 101, 50),
            Some(t + 4096 - 101 + 50)
        );
        // An increment of 1: the counter itself.
        assert_eq!(middle(12, t + 7, 1, 1), Some(t + 7));
    }

    #[test]
    fn blocks_never_overlap() {
        // Successive takes of a stream hand out disjoint counters; each block lies inside its
        // own take, so the blocks [v - 50, v + 50] of consecutive draws never overlap.
        let mut next = 5u64 << 12;
        let mut blocks = Vec::new();
        for _ in 0..500 {
            let first = next;
            next += 101;
            if let Some(v) = middle(12, first, 101, 50) {
                blocks.push((v - 50, v + 50));
            }
        }
        assert!(blocks.len() > 400);
        for w in blocks.windows(2) {
            assert!(w[0].1 < w[1].0);
        }
    }

    #[test]
    fn refused_where_numbers_are_not_one_workers() {
        let standard = Layout::parse("default").unwrap();
        assert_eq!(refusal(&standard, 50), None);
        assert_eq!(refusal(&standard, 1), None);
        assert!(refusal(&standard, 1u64 << 20).is_some());
        // Sonyflake keeps the machine id in the lowest bits.
        let sonyflake = Layout::parse("sonyflake").unwrap();
        assert!(refusal(&sonyflake, 50).is_some());
        assert_eq!(refusal(&sonyflake, 1), None);
    }
}
