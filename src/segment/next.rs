//! `segment_next()` and `segment_next_batch()`: IDs of a business type from the shared cache
//! (backend.rs), Tinyid/Leaf style.

use pgrx::prelude::*;

use super::backend::{key_of, take};
use crate::pg::errors::batch_size;

/// Next ID of a business type's number range (Tinyid/Leaf segment mode): from a range cached in
/// shared memory, committed to idgen.segments before any of its IDs is handed out; a ROLLBACK never
/// returns it.
#[pg_extern(volatile, parallel_restricted)]
fn segment_next(biz_type: Option<&str>) -> i64 {
    let key = key_of("segment_next(biz_type)", biz_type);
    take(&key, biz_type.unwrap_or_default(), 1).0
}

/// n IDs of a business type at once (1 to 10,000,000), ascending.
#[pg_extern(volatile, parallel_restricted)]
fn segment_next_batch(biz_type: Option<&str>, n: Option<i32>) -> SetOfIterator<'static, i64> {
    let key = key_of("segment_next_batch(biz_type, n)", biz_type);
    let n = batch_size("segment_next_batch(biz_type, n)", n) as i64;
    let name = biz_type.unwrap_or_default();
    let mut ids = Vec::with_capacity(n as usize);
    while (ids.len() as i64) < n {
        let (first, count, delta) = take(&key, name, n - ids.len() as i64);
        ids.extend((0..count).map(|i| first + i * delta));
    }
    SetOfIterator::new(ids)
}
