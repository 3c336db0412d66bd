//! The share of a column's rows below a key, read from the column's histogram as PostgreSQL's
//! planner reads one, for keys it cannot place inside a bucket.
//!
//! PostgreSQL estimates `key >= X` from the column's histogram: the buckets below X's, and the part
//! of X's bucket below X by interpolating the values as numbers (`convert_to_scalar`). It has no
//! number for a `uuid`, so it takes half of X's bucket: a range narrower than a bucket (an hour of
//! a month of UUIDv7 keys, with the default 100 buckets) is estimated as half a bucket, or as
//! nothing where both ends fall in one bucket. Read as a 128-bit number in its byte order (the
//! order of `uuid`'s comparisons, a `memcmp`), a UUIDv7's first 48 bits are its time, so that
//! interpolating inside a bucket is as good for it as for a timestamp.

/// Where `x` falls in the histogram `bounds` (ascending; each of the `bounds.len() - 1` buckets
/// between them holds the same share of the rows): the share of those rows below `x`, from 0 (at
/// or below the first bound) to 1 (at or above the last). None for fewer than two bounds.
pub fn share_below(bounds: &[u128], x: u128) -> Option<f64> {
    share_below_sampled(bounds, x, Tails::default())
}

/// The rows of a column beyond the ends of its histogram (`share_below_sampled`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Tails {
    /// The share of the rows below the first bound, at the density of the first bucket.
    pub below: f64,
    /// The share of the rows above the last bound: spread evenly up to `above_to` where that is
    /// given and above the last bound, else at the density of the last bucket.
    pub above: f64,
    pub above_to: Option<u128>,
}

/// `share_below`, where `tails` of the rows lie beyond the histogram's ends: its first and last
/// bounds are the least and greatest values of a sample of the rows (of a sample of n, about
/// 1/(n + 1) of the rows lie beyond each), and rows written since, of time-ordered keys, lie above
/// the last, up to the key of the time it is now (a "last hour" of them mostly falls beyond the
/// histogram). The buckets share the rest.
pub fn share_below_sampled(bounds: &[u128], x: u128, tails: Tails) -> Option<f64> {
    let buckets = bounds.len().checked_sub(1).filter(|&n| n > 0)?;
    let below = tails.below.clamp(0.0, 1.0);
    let above = tails.above.clamp(0.0, 1.0 - below);
    let inside = 1.0 - below - above;
    let bucket = inside / buckets as f64;
    let (first, last) = (bounds[0], bounds[buckets]);
    // How many of a bucket's widths `d` is (infinitely many where the bucket has none).
    let widths = |d: u128, width: u128| {
        if width == 0 {
            f64::INFINITY
        } else {
            d as f64 / width as f64
        }
    };
    if x < first {
        return Some((below - widths(first - x, bounds[1] - first) * bucket).max(0.0));
    }
    if x >= last {
        let beyond = match tails.above_to {
            Some(to) if to > last => above * (widths(x - last, to - last)).min(1.0),
            _ => (widths(x - last, last - bounds[buckets - 1]) * bucket).min(above),
        };
        return Some(below + inside + beyond);
    }
    // The bucket [bounds[i], bounds[i + 1]) that holds x: i + 1 bounds are at or below it.
    let i = bounds.partition_point(|&b| b <= x) - 1;
    // bounds[i] <= x < bounds[i + 1], so the bucket is not empty; differences first, so that no
    // bit of a narrow bucket is lost to the conversion.
    let within = (x - bounds[i]) as f64 / (bounds[i + 1] - bounds[i]) as f64;
    Some(below + (i as f64 + within) * inside / buckets as f64)
}

/// The share of the histogram's rows in `[lower, upper]`: 0 where the range is empty.
pub fn share_between(bounds: &[u128], lower: u128, upper: u128) -> Option<f64> {
    let share = share_below(bounds, upper)? - share_below(bounds, lower)?;
    Some(share.clamp(0.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bounds 0, 100, ..., 1000: ten buckets of 100.
    fn even() -> Vec<u128> {
        (0..=10).map(|i| i * 100).collect()
    }

    #[test]
    fn interpolates_inside_a_bucket() {
        let b = even();
        assert_eq!(share_below(&b, 0), Some(0.0));
        assert_eq!(share_below(&b, 50), Some(0.05));
        assert_eq!(share_below(&b, 100), Some(0.1));
        assert_eq!(share_below(&b, 999), Some(0.999));
        assert_eq!(share_below(&b, 1000), Some(1.0));
        let tenth_of_a_bucket = share_between(&b, 250, 260).unwrap();
        assert!(
            (tenth_of_a_bucket - 0.01).abs() < 1e-12,
            "{tenth_of_a_bucket}"
        );
    }

    #[test]
    fn outside_the_histogram_and_empty_ranges() {
        let b: Vec<u128> = (1..=11).map(|i| i * 100).collect();
        assert_eq!(share_below(&b, 0), Some(0.0));
        assert_eq!(share_below(&b, u128::MAX), Some(1.0));
        assert_eq!(share_between(&b, 700, 300), Some(0.0));
        assert_eq!(share_between(&b, 0, u128::MAX), Some(1.0));
        assert_eq!(share_below(&[5], 5), None);
        assert_eq!(share_below(&[], 5), None);
    }

    #[test]
    fn a_sample_leaves_rows_beyond_its_ends() {
        let b = even();
        // A tenth of a bucket's rows (tails of 0.01, buckets of 0.098) beyond each end.
        let t = Tails {
            below: 0.01,
            above: 0.01,
            above_to: None,
        };
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        assert!(close(share_below_sampled(&b, 0, t).unwrap(), 0.01));
        assert!(close(share_below_sampled(&b, 1000, t).unwrap(), 0.99));
        // Half a tail's width past the last bound: half the tail above it.
        let width = 100.0 * 0.01 / 0.098;
        let x = 1000 + (width / 2.0) as u128;
        let above = 1.0 - share_below_sampled(&b, x, t).unwrap();
        assert!((above - 0.005).abs() < 1e-3, "{above}");
        // Far past either end: all or nothing; inside, the buckets share the rest.
        assert!(close(share_below_sampled(&b, u128::MAX, t).unwrap(), 1.0));
        assert!(close(
            share_below_sampled(&[10, 100, 200], 0, t).unwrap(),
            0.0
        ));
        assert!(close(share_below_sampled(&b, 500, t).unwrap(), 0.5));
        // No tail: share_below.
        assert_eq!(
            share_below_sampled(&b, 250, Tails::default()),
            share_below(&b, 250)
        );
        // Rows written since the sample, above it: a fifth of the rows beyond the last bound, the
        // buckets sharing the rest.
        let grown = Tails {
            above: 0.2,
            ..Tails::default()
        };
        assert!(close(share_below_sampled(&b, 1000, grown).unwrap(), 0.8));
        assert!(close(share_below_sampled(&b, 500, grown).unwrap(), 0.4));
        let past = share_below_sampled(&b, 1100, grown).unwrap();
        assert!(close(past, 0.88), "{past}");
        // ... spread up to the key of now (2000): half of them in the second half.
        let to_now = Tails {
            above_to: Some(2000),
            ..grown
        };
        let half = share_below_sampled(&b, 1500, to_now).unwrap();
        assert!(close(half, 0.9), "{half}");
        assert!(close(share_below_sampled(&b, 2500, to_now).unwrap(), 1.0));
        // A bucket of no width next to an end: no room for a tail there.
        assert_eq!(share_below_sampled(&[10, 10, 20], 5, t), Some(0.0));
    }

    #[test]
    fn repeated_bounds_and_wide_values() {
        // A value repeated across bounds (a bucket of width 0) is at the last of them.
        let b = [0, 10, 10, 10, 40];
        assert_eq!(share_below(&b, 10), Some(0.75));
        assert_eq!(share_below(&b, 25), Some(0.875));
        // UUIDv7s a millisecond apart near the top of the range: the halves of a bucket are told
        // apart although the values are far beyond f64's 53 bits.
        let ms = |m: u128| (0x0190_0000_0000u128 + m) << 80 | 0x7000 << 64;
        let b = [ms(0), ms(2), ms(4)];
        assert_eq!(share_below(&b, ms(1)), Some(0.25));
        assert_eq!(share_between(&b, ms(1), ms(3)), Some(0.5));
    }
}
