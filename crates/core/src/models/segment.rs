//! Segment allocation, model-checked: two databases splitting one business type's IDs by
//! remainder (Tinyid's odd/even split), callers taking IDs from each one's double buffer, its
//! allocator claiming refills and whole ranges for clients, committing them (or rolling back, or
//! exiting between its commit and its publish), an administrator dropping and creating the type
//! again (committing or rolling back), and crashes that lose shared memory and every open
//! transaction. The property: no ID is handed out twice, in either database, across every life of
//! each and every incarnation of the type. And the liveness docs/guarantees.md claims, in the form a
//! model checker can show: a caller never waits on a refill nobody is doing, and both databases
//! hand out IDs (again after a drop and a create).
//!
//! What is the product's code here: `SegmentState` (`take`, `claim`, `unclaim`, `install`,
//! `fail`), `plan_range`, `next_step` and `Range`, as the callers and the allocator use them.
//! What is written out, and assumed:
//! - the allocator (src/allocator/, its segment client segment/allocation.rs, its row statements
//!   in segment/table.rs): it claims a request, locks the type's row `FOR UPDATE SKIP LOCKED` (a
//!   row locked by someone else: the request goes back, untouched), plans the range from the
//!   committed `max_id`, updates the row, commits, and only then publishes the range to the slot
//!   whose generation it claimed from (or to the client's request); when it exits
//!   (error, crash of the worker) its exit callback fails whatever it had claimed;
//! - `segment_drop` deletes the row and forgets the type's cache slot in its transaction (before
//!   it commits); `DELETE` waits for the allocator's row lock; the `segments_retire` trigger keeps
//!   the highest `max_id` in `segments_retired`, and `segments_resume` starts a type created
//!   again above it;
//! - PostgreSQL: a committed transaction survives a crash (the allocator commits with
//!   `synchronous_commit` at least `local`); an uncommitted one does not; a caller's ROLLBACK
//!   changes nothing here (`segment_next` writes nothing transactional);
//! - the dynamic step: any step `next_step` gives for a fast or a slow range (the rate floor only
//!   raises it to at most `max_step`, which the model's choice covers).

use stateright::{Checker, Model, Property};

use crate::segment::{next_step, plan_range, Range, Refill, SegmentState, Take};

const STEP: i64 = 2;
const MAX_STEP: i64 = 4;
const DELTA: i64 = 2;
const TARGET_MS: i64 = 10;
const PREFETCH_PERCENT: u32 = 20;

/// The allocator's transaction: what it claimed, and where it stands.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
enum Work {
    /// A refill of the cache slot, claimed from its generation.
    Refill { generation: u8, prev_step: i64 },
    /// A whole range for a client (`idgen.segment_alloc`).
    Whole,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Alloc {
    work: Work,
    /// The range written to the row (the row locked), and its step; None before that.
    planned: Option<(Range, i64)>,
    committed: bool,
}

/// An administrator's open transaction creating the type.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Create {
    /// REPEATABLE READ: `segments_retired` as the transaction's snapshot shows it (None: READ
    /// COMMITTED, every statement sees what is committed).
    snapshot: Option<Option<i64>>,
    /// The row inserted (uncommitted), with the `max_id` the trigger gave it.
    inserted: Option<i64>,
}

/// How `segments_resume` reads `segments_retired`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetiredRead {
    /// The product's: an upsert of the name, which waits for a concurrent drop's transaction and
    /// fails (40001) where the snapshot cannot see its row.
    Upsert,
    /// A plain SELECT (0.2.2 and before): it reads before the INSERT waits for a concurrent
    /// drop, and a REPEATABLE READ snapshot older than that drop.
    Select,
    /// None at all: a type created again starts at its start_id.
    Ignored,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
enum Request {
    Pending,
    Working,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Db {
    remainder: i64,
    /// The committed row: its `max_id` (None: no such type).
    row: Option<i64>,
    /// The committed `segments_retired` row.
    retired: Option<i64>,
    /// Shared memory: the type's cache slot and its generation.
    slot: SegmentState,
    generation: u8,
    request: Option<Request>,
    alloc: Option<Alloc>,
    /// An open transaction dropping the type (the row deleted, its lock held).
    dropping: bool,
    create: Option<Create>,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub struct State {
    dbs: Vec<Db>,
    /// Every ID handed out, to callers or clients (bit `id`).
    issued: u64,
    repeated: bool,
    admin_ops: u8,
    crashes: u8,
    /// A database handed out an ID after the type was dropped and created again there.
    reborn_issued: bool,
    reborn: Vec<bool>,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub enum Action {
    Take(usize),
    Claim(usize),
    AskWhole(usize),
    ClaimWhole(usize),
    /// The allocator locks the row and writes the range; `fast`: the last range lasted under the
    /// target (the step grows).
    Plan(usize, bool),
    Commit(usize),
    Publish(usize),
    /// The allocator's transaction rolls back, or the worker exits after its commit.
    WorkerExit(usize),
    BeginDrop(usize),
    CommitDrop(usize),
    RollbackDrop(usize),
    /// A transaction that will create the type starts (`rr`: REPEATABLE READ, its snapshot now).
    BeginCreate(usize, bool),
    /// Its `segment_create`: the trigger reads `segments_retired`, the row is inserted.
    Insert(usize),
    CommitCreate(usize),
    RollbackCreate(usize),
    Crash(usize),
}

pub struct SegmentModel {
    /// The highest `max_id` a range may reach (bounds the state space).
    pub limit: i64,
    pub max_admin_ops: u8,
    pub max_crashes: u8,
    /// The remainder of each database (distinct, as docs/segments.md requires): one database, or two
    /// splitting the type's IDs.
    pub remainders: Vec<i64>,
    /// Publish a range before its transaction commits (a control: not the product).
    pub publish_before_commit: bool,
    /// The product's `Upsert`, or a control.
    pub retired_read: RetiredRead,
    /// The allocator's exit callback fails what it had claimed (false: a control).
    pub exit_callback: bool,
}

/// Statistics are not decisions: zeroed so that they do not multiply the states.
fn normalised(mut s: SegmentState) -> SegmentState {
    s.waiting = false;
    s.last_refill_us = 0;
    s.issued_at_refill = 0;
    s.refills_ahead = 0;
    s.refills_waited = 0;
    s.issued = 0;
    s
}

impl State {
    fn hand_out(&mut self, db: usize, range_ids: impl IntoIterator<Item = i64>) {
        for id in range_ids {
            assert!((0..64).contains(&id), "the model's IDs fit a u64 bitmap");
            if self.issued & (1 << id) != 0 {
                self.repeated = true;
            }
            self.issued |= 1 << id;
            if self.reborn[db] {
                self.reborn_issued = true;
            }
        }
    }
}

fn ids(r: Range) -> Vec<i64> {
    (r.start + 1..=r.end).filter(|x| r.contains(*x)).collect()
}

impl SegmentModel {
    fn finish(&self, n: &mut State, d: usize) {
        let db = &mut n.dbs[d];
        let Some(alloc) = db.alloc.take() else { return };
        let Some((range, step)) = alloc.planned else {
            return;
        };
        match alloc.work {
            Work::Refill { generation, .. } => {
                // A slot forgotten meanwhile: the range is a gap.
                if generation == db.generation {
                    db.slot.install(range, step, 0);
                }
            }
            Work::Whole => {
                if db.request == Some(Request::Working) {
                    db.request = None;
                    n.hand_out(d, ids(range));
                }
            }
        }
    }
}

impl Model for SegmentModel {
    type State = State;
    type Action = Action;

    fn init_states(&self) -> Vec<State> {
        let db = |remainder| Db {
            remainder,
            row: Some(0),
            retired: None,
            slot: SegmentState::default(),
            generation: 0,
            request: None,
            alloc: None,
            dropping: false,
            create: None,
        };
        vec![State {
            dbs: self.remainders.iter().map(|r| db(*r)).collect(),
            issued: 0,
            repeated: false,
            admin_ops: 0,
            crashes: 0,
            reborn_issued: false,
            reborn: vec![false; self.remainders.len()],
        }]
    }

    fn actions(&self, s: &State, actions: &mut Vec<Action>) {
        for (d, db) in s.dbs.iter().enumerate() {
            actions.push(Action::Take(d));
            if db.alloc.is_none() {
                if db.slot.refill == Refill::Requested {
                    actions.push(Action::Claim(d));
                }
                if db.request == Some(Request::Pending) {
                    actions.push(Action::ClaimWhole(d));
                }
            }
            if db.request.is_none() {
                actions.push(Action::AskWhole(d));
            }
            if let Some(a) = &db.alloc {
                match (&a.planned, a.committed) {
                    (None, _) => {
                        actions.push(Action::Plan(d, true));
                        actions.push(Action::Plan(d, false));
                    }
                    (Some(_), false) => {
                        actions.push(Action::Commit(d));
                        if self.publish_before_commit {
                            actions.push(Action::Publish(d));
                        }
                    }
                    (Some(_), true) => actions.push(Action::Publish(d)),
                }
                actions.push(Action::WorkerExit(d));
            }
            // DELETE and INSERT wait for the allocator's row lock.
            let row_locked = db
                .alloc
                .as_ref()
                .is_some_and(|a| a.planned.is_some() && !a.committed);
            let ops_left = s.admin_ops < self.max_admin_ops;
            if ops_left && !db.dropping && !row_locked && db.row.is_some() {
                actions.push(Action::BeginDrop(d));
            }
            if db.dropping {
                actions.push(Action::CommitDrop(d));
                actions.push(Action::RollbackDrop(d));
            }
            match &db.create {
                None if ops_left => {
                    actions.push(Action::BeginCreate(d, false));
                    actions.push(Action::BeginCreate(d, true));
                }
                None => {}
                Some(c) => {
                    // The product's upsert waits for a concurrent drop before it reads.
                    let blocked = db.dropping && self.retired_read == RetiredRead::Upsert;
                    if c.inserted.is_none() && !blocked {
                        actions.push(Action::Insert(d));
                    }
                    // The insert waits for the drop's row to be gone (or back).
                    if c.inserted.is_some() && !db.dropping {
                        actions.push(Action::CommitCreate(d));
                    }
                    actions.push(Action::RollbackCreate(d));
                }
            }
            if s.crashes < self.max_crashes {
                actions.push(Action::Crash(d));
            }
        }
    }

    fn next_state(&self, s: &State, action: Action) -> Option<State> {
        let mut n = s.clone();
        match action {
            Action::Take(d) => {
                let db = &mut n.dbs[d];
                let before = db.slot;
                let taken = db.slot.take(1, PREFETCH_PERCENT);
                db.slot = normalised(db.slot);
                if let Take::Got { first, count, .. } = taken {
                    assert_eq!(count, 1);
                    n.hand_out(d, [first]);
                } else if normalised(before) == db.slot {
                    return None;
                }
            }
            Action::Claim(d) => {
                let db = &mut n.dbs[d];
                if !db.slot.claim() {
                    return None;
                }
                db.alloc = Some(Alloc {
                    work: Work::Refill {
                        generation: db.generation,
                        prev_step: db.slot.step,
                    },
                    planned: None,
                    committed: false,
                });
            }
            Action::AskWhole(d) => n.dbs[d].request = Some(Request::Pending),
            Action::ClaimWhole(d) => {
                let db = &mut n.dbs[d];
                db.request = Some(Request::Working);
                db.alloc = Some(Alloc {
                    work: Work::Whole,
                    planned: None,
                    committed: false,
                });
            }
            Action::Plan(d, fast) => {
                let db = &mut n.dbs[d];
                let alloc = db.alloc.as_mut()?;
                if db.dropping {
                    // SKIP LOCKED: the row is the administrator's; the request goes back.
                    match alloc.work {
                        Work::Refill { generation, .. } if generation == db.generation => {
                            db.slot.unclaim()
                        }
                        Work::Refill { .. } => {}
                        Work::Whole => db.request = Some(Request::Pending),
                    }
                    db.alloc = None;
                    return Some(n);
                }
                let Some(max_id) = db.row else {
                    // No committed row (an uncommitted INSERT is not seen): NotFound, told to the waiting callers (or the client).
                    match alloc.work {
                        Work::Refill { generation, .. } if generation == db.generation => {
                            db.slot.fail(crate::segment::Fault::NotFound)
                        }
                        Work::Refill { .. } => {}
                        Work::Whole => db.request = None,
                    }
                    db.alloc = None;
                    return Some(n);
                };
                let step = match alloc.work {
                    Work::Refill { prev_step, .. } => {
                        let lasted = if fast { 0 } else { 3 * TARGET_MS };
                        next_step(prev_step, STEP, MAX_STEP, lasted, TARGET_MS)
                    }
                    Work::Whole if fast => STEP,
                    Work::Whole => return None,
                };
                let range = plan_range(max_id, step, DELTA, db.remainder).ok()?;
                if range.end > self.limit {
                    return None;
                }
                alloc.planned = Some((range, step));
            }
            Action::Commit(d) => {
                let db = &mut n.dbs[d];
                let alloc = db.alloc.as_mut()?;
                let (range, _) = alloc.planned?;
                db.row = Some(range.end);
                alloc.committed = true;
            }
            Action::Publish(d) => {
                if self.publish_before_commit && !s.dbs[d].alloc.as_ref()?.committed {
                    // The control: hand the range out, the commit still to come (or never).
                    let db = &mut n.dbs[d];
                    let alloc = db.alloc.as_mut()?;
                    let (range, step) = alloc.planned?;
                    match alloc.work {
                        Work::Refill { generation, .. } if generation == db.generation => {
                            db.slot.install(range, step, 0);
                            db.slot = normalised(db.slot);
                            alloc.work = Work::Refill {
                                generation: u8::MAX,
                                prev_step: 0,
                            };
                        }
                        Work::Refill { .. } => {}
                        Work::Whole => {
                            db.request = None;
                            alloc.work = Work::Refill {
                                generation: u8::MAX,
                                prev_step: 0,
                            };
                            n.hand_out(d, ids(range));
                        }
                    }
                    return Some(n);
                }
                self.finish(&mut n, d);
                n.dbs[d].slot = normalised(n.dbs[d].slot);
            }
            Action::WorkerExit(d) => {
                let db = &mut n.dbs[d];
                db.alloc.take()?;
                // A commit stays (the row has it); the exit callback fails what the worker had
                // claimed, so that nobody waits on it.
                if self.exit_callback {
                    if db.slot.refill == Refill::InProgress {
                        db.slot.fail(crate::segment::Fault::WorkerGone);
                    }
                    if db.request == Some(Request::Working) {
                        db.request = None;
                    }
                }
            }
            Action::BeginDrop(d) => {
                let db = &mut n.dbs[d];
                db.dropping = true;
                // segment_drop forgets the slot before its transaction commits.
                db.generation += 1;
                db.slot = SegmentState::default();
                n.admin_ops += 1;
            }
            Action::CommitDrop(d) => {
                let db = &mut n.dbs[d];
                db.dropping = false;
                let max_id = db.row.take()?;
                db.retired = Some(db.retired.map_or(max_id, |r| r.max(max_id)));
            }
            Action::RollbackDrop(d) => n.dbs[d].dropping = false,
            Action::BeginCreate(d, rr) => {
                let db = &mut n.dbs[d];
                db.create = Some(Create {
                    snapshot: rr.then_some(db.retired),
                    inserted: None,
                });
                n.admin_ops += 1;
            }
            Action::Insert(d) => {
                let db = &mut n.dbs[d];
                let c = db.create.as_mut()?;
                let seen = c.snapshot.unwrap_or(db.retired);
                let retired = match self.retired_read {
                    // 40001: the upsert met a row its snapshot cannot see.
                    RetiredRead::Upsert if seen != db.retired => {
                        db.create = None;
                        return Some(n);
                    }
                    RetiredRead::Upsert | RetiredRead::Select => seen,
                    RetiredRead::Ignored => None,
                };
                if db.row.is_some() && !db.dropping {
                    // The name is taken: "already exists", and the transaction ends.
                    db.create = None;
                    return Some(n);
                }
                c.inserted = Some(retired.unwrap_or(0));
            }
            Action::CommitCreate(d) => {
                let db = &mut n.dbs[d];
                let max_id = db.create.take()?.inserted?;
                // A drop that rolled back left the row: the insert conflicts instead.
                if db.row.is_none() {
                    db.row = Some(max_id);
                    n.reborn[d] = true;
                }
            }
            Action::RollbackCreate(d) => n.dbs[d].create = None,
            Action::Crash(d) => {
                // Shared memory and open transactions are lost; commits (the row) stay.
                let db = &mut n.dbs[d];
                db.slot = SegmentState::default();
                db.generation = 0;
                db.request = None;
                db.alloc = None;
                db.dropping = false;
                db.create = None;
                n.crashes += 1;
            }
        }
        Some(n)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        let mut p = vec![
            Property::always("no ID is handed out twice", |_, s: &State| !s.repeated),
            Property::always(
                "no caller waits on a refill nobody is doing",
                |_, s: &State| {
                    s.dbs.iter().all(|db| {
                        let refilling = matches!(
                            db.alloc,
                            Some(Alloc {
                                work: Work::Refill { generation, .. },
                                ..
                            }) if generation == db.generation
                        );
                        let whole = matches!(
                            db.alloc,
                            Some(Alloc {
                                work: Work::Whole,
                                ..
                            })
                        );
                        (db.slot.refill != Refill::InProgress || refilling)
                            && (db.request != Some(Request::Working) || whole)
                    })
                },
            ),
            Property::sometimes("every database hands out IDs", |_, s: &State| {
                s.dbs.iter().all(|db| {
                    (1..64).any(|id| s.issued & (1 << id) != 0 && id % DELTA == db.remainder)
                })
            }),
        ];
        if self.max_admin_ops >= 2 {
            p.push(Property::sometimes(
                "a type dropped and created again hands out IDs",
                |_, s: &State| s.reborn_issued,
            ));
        }
        p
    }
}

fn check(m: SegmentModel) -> impl Checker<SegmentModel> {
    m.checker().spawn_bfs().join()
}

fn shortest_repeat(m: impl Fn() -> SegmentModel) -> Vec<Action> {
    super::shortest(m, "no ID is handed out twice")
}

/// One database with everything: callers, refills, whole ranges, two drops and two creates, two
/// crashes, ranges up to ID 10. `IDGEN_MODEL_T_MAX` (the larger runs of docs/guarantees.md) of 6 or more
/// takes ranges up to ID 14.
fn product() -> SegmentModel {
    let larger = super::t_max(0) >= 6;
    SegmentModel {
        limit: if larger { 14 } else { 10 },
        max_admin_ops: 4,
        max_crashes: 2,
        remainders: vec![0],
        publish_before_commit: false,
        retired_read: RetiredRead::Upsert,
        exit_callback: true,
    }
}

fn explore(name: &str, m: SegmentModel) {
    let started = std::time::Instant::now();
    let c = check(m);
    eprintln!(
        "segment model ({name}): {} states in {:?}",
        c.unique_state_count(),
        started.elapsed()
    );
    c.assert_properties();
}

#[test]
#[ignore = "model checking: run with --release -- --ignored (minutes in a debug build)"]
fn segment_allocation_never_repeats_an_id() {
    explore("one database", product());
}

/// Two databases splitting the type by remainder, each with callers, refills and whole ranges
/// (drop, create and crashes are the one-database model's: the split adds no state to them).
#[test]
#[ignore = "model checking: run with --release -- --ignored (minutes in a debug build)"]
fn two_databases_split_by_remainder_never_repeat() {
    explore(
        "two databases",
        SegmentModel {
            remainders: vec![0, 1],
            max_admin_ops: 0,
            max_crashes: 0,
            limit: 6,
            ..product()
        },
    );
}

/// A range handed out before its transaction commits repeats once that transaction rolls back
/// (or the server crashes): the next allocation plans the same range.
#[test]
#[ignore = "model checking: run with --release -- --ignored (minutes in a debug build)"]
fn publishing_before_the_commit_repeats() {
    let path = shortest_repeat(|| SegmentModel {
        publish_before_commit: true,
        ..product()
    });
    eprintln!("segment model, counterexample publishing before the commit: {path:?}");
    assert!(path
        .iter()
        .any(|a| matches!(a, Action::WorkerExit(_) | Action::Crash(_))));
}

/// A type created again at its start_id, not above what it reached before it was dropped,
/// repeats its IDs.
#[test]
#[ignore = "model checking: run with --release -- --ignored (minutes in a debug build)"]
fn without_segments_retired_a_type_created_again_repeats() {
    let path = shortest_repeat(|| SegmentModel {
        retired_read: RetiredRead::Ignored,
        ..product()
    });
    eprintln!("segment model, counterexample without segments_retired: {path:?}");
    assert!(path.iter().any(|a| matches!(a, Action::Insert(_))));
}

/// A plain read of segments_retired (0.2.2) misses a drop that commits while the create waits
/// for it, or after a REPEATABLE READ snapshot was taken: the type starts at 0 again.
#[test]
#[ignore = "model checking: run with --release -- --ignored (minutes in a debug build)"]
fn a_plain_read_of_segments_retired_repeats_after_a_concurrent_drop() {
    let path = shortest_repeat(|| SegmentModel {
        retired_read: RetiredRead::Select,
        ..product()
    });
    eprintln!("segment model, counterexample with a plain read of segments_retired: {path:?}");
    assert!(path.iter().any(|a| matches!(a, Action::CommitDrop(_))));
}

/// Two databases with the same remainder repeat each other's IDs: the split is what keeps them
/// apart.
#[test]
#[ignore = "model checking: run with --release -- --ignored (minutes in a debug build)"]
fn two_databases_with_one_remainder_repeat() {
    let path = shortest_repeat(|| SegmentModel {
        remainders: vec![1, 1],
        max_admin_ops: 0,
        max_crashes: 0,
        limit: 6,
        ..product()
    });
    eprintln!("segment model, counterexample with one remainder in two databases: {path:?}");
}

/// The liveness property can fail: without the allocator's exit callback, a refill claimed by a
/// worker that exits is waited on forever.
#[test]
#[ignore = "model checking: run with --release -- --ignored (minutes in a debug build)"]
fn without_the_exit_callback_callers_wait_forever() {
    let path = super::shortest(
        || SegmentModel {
            exit_callback: false,
            max_admin_ops: 0,
            max_crashes: 0,
            ..product()
        },
        "no caller waits on a refill nobody is doing",
    );
    eprintln!("segment model, a wait nobody ends without the exit callback: {path:?}");
}
