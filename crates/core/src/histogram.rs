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
    let buckets = bounds.len().checked_sub(1).filter(|&n| n > 0)?;
    // The bucket [bounds[i], bounds[i + 1]) that holds x: i + 1 bounds are at or below it.
    let at_or_below = bounds.partition_point(|&b| b <= x);
    if at_or_below == 0 {
        return Some(0.0);
    }
    let i = at_or_below - 1;
    if i >= buckets {
        return Some(1.0);
    }
    // bounds[i] <= x < bounds[i + 1], so the bucket is not empty; differences first, so that no
    // bit of a narrow bucket is lost to the conversion.
    let within = (x - bounds[i]) as f64 / (bounds[i + 1] - bounds[i]) as f64;
    Some((i as f64 + within) / buckets as f64)
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
