//! Executable models of pg_idgen's protocols, explored exhaustively by the stateright model
//! checker: every interleaving of a small system, including the ones no probe thought of. Each
//! model uses the core's own decision functions where they are pure, and says what it assumes of
//! the SQL and pgrx glue it writes out. Each has a control: the protocol without its fix, on
//! which the checker must find the repeat the fix closes.

mod backfill;
mod horizon;
mod lease;
mod mark;
mod segment;

use std::fmt::Debug;
use std::hash::Hash;

use stateright::{Checker, Model};

/// The bound of time of the models: `IDGEN_MODEL_T_MAX` (docs/guarantees.md's larger runs), else `default`.
fn t_max(default: i64) -> i64 {
    std::env::var("IDGEN_MODEL_T_MAX")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The shortest path to a discovery of `property` (the checker's own search order gives a valid
/// but often long one): explored again with a growing depth bound until it is within it.
fn shortest<M>(model: impl Fn() -> M, property: &'static str) -> Vec<M::Action>
where
    M: Model + Send + Sync + 'static,
    M::State: Clone + Debug + Hash + PartialEq + Send + Sync + 'static,
    M::Action: Clone + Debug + PartialEq + Send + Sync + 'static,
{
    (1..64)
        .find_map(|depth| {
            model()
                .checker()
                .target_max_depth(depth)
                .spawn_bfs()
                .join()
                .discovery(property)
        })
        .unwrap_or_else(|| panic!("the checker finds no counterexample to \"{property}\""))
        .into_actions()
}
