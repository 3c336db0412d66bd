//! The read horizon, model-checked: backends whose transactions take IDs from one stream, commit,
//! roll back or prepare (and are committed or rolled back prepared later), a crash that ends every
//! open transaction but not the prepared ones, and a reader that computes a horizon and takes the
//! snapshot it reads with, at any point among them. The property: no ID below a horizon the
//! reader used becomes visible after that reader's snapshot missed it (it would never be read).
//!
//! What is the product's code here: `horizon::low_for` and `horizon::horizon`, as
//! node/horizon.rs calls them. What is written out, and assumed:
//! - a backend publishes its bound in two steps (load the counter, store the bound), before the
//!   compare-and-swap that takes its first counter; later counters of the transaction need no
//!   store (they are above the first);
//! - PostgreSQL makes a transaction's end visible to new snapshots (ProcArrayEndTransaction)
//!   before the COMMIT/ABORT callback clears the slot; a prepared transaction's record is written
//!   at PRE_PREPARE and the slot cleared at PREPARE; COMMIT PREPARED makes it visible and ends it;
//! - the reader loads the counter, reads the slots one at a time, then the records (one whose
//!   transaction is no longer in progress counts as ended, which it is, and visible), and holds
//!   the horizon at 0 while a prepared transaction without a record (from before a crash) is in
//!   progress; then, in a later statement, takes its snapshot;
//! - a crash loses shared memory (slots, records) and every open transaction; the counter
//!   resumes above every ID (the mark model shows that);
//! - a distributed transaction (Citus, several workers) commits in two phases: its local commit
//!   first, then, from Citus's COMMIT callback, COMMIT PREPARED on the other nodes, which makes
//!   its rows there visible; the slot is cleared only after every transaction callback has run
//!   (a resource-release callback of the top-level transaction), so after those commits.

use stateright::{Checker, Model, Property};

use crate::horizon::{horizon, low_for, EMPTY};

/// What the checker may do differently from the product, each a control.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fault {
    None,
    /// The bound is published after the first counter is taken.
    PublishAfterTake,
    /// The slot is cleared before the transaction's end is visible.
    ReleaseBeforeVisible,
    /// The reader's snapshot is taken before the horizon (one statement in READ COMMITTED, or
    /// REPEATABLE READ).
    SnapshotFirst,
    /// PREPARE clears the slot and keeps no record.
    NoPreparedRecord,
    /// The reader reads the records before the slots.
    RecordsFirst,
    /// Prepared transactions from before a crash are not counted.
    IgnoreUnknownPrepared,
    /// The slot is cleared at the local commit of a distributed transaction, before its rows on
    /// the other nodes are committed (the COMMIT callback, which runs before Citus's).
    ReleaseAtLocalCommit,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
enum Phase {
    /// May begin a transaction (`left` transactions remain).
    Idle,
    /// In a transaction; `loaded` is the counter read for the bound, not yet stored.
    Open { loaded: Option<u64>, held: bool },
    /// Committed (visible) or aborted, the callback not yet run.
    Ended,
    /// PRE_PREPARE ran (its record written), PREPARE not yet.
    Preparing,
    /// ReleaseBeforeVisible: the slot cleared, the commit not yet visible.
    Committing,
    /// A distributed transaction committed locally; its rows on the other nodes are not yet
    /// visible (their COMMIT PREPARED follows).
    Remote,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Backend {
    phase: Phase,
    slot: u64,
    /// Counters taken in the transaction (a bitmap).
    ids: u64,
    left: u8,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct PreparedXact {
    ids: u64,
    open: bool,
    /// The bound its record keeps (None: no record was kept).
    record: Option<u64>,
    /// Prepared before a crash: its record was lost with shared memory, and its transaction id
    /// is below the one of this life's first ordered ID (node/horizon.rs's `boot_xid`).
    earlier_life: bool,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
enum Reader {
    Idle,
    /// Computing: the bound so far, the next slot to read.
    Scanning {
        acc: u64,
        next: usize,
    },
    /// Horizon computed (after slots and records), snapshot not taken.
    Computed {
        h: u64,
    },
    /// SnapshotFirst: the snapshot, then the horizon.
    Snapped {
        snap: u64,
    },
}

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct State {
    last: u64,
    backends: Vec<Backend>,
    prepared: Vec<PreparedXact>,
    /// Counters of transactions whose commit is visible to new snapshots (a bitmap).
    visible: u64,
    reader: Reader,
    /// The (horizon, snapshot) pairs the reader used.
    used: Vec<(u64, u64)>,
    crashes: u8,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Action {
    Begin(usize),
    Load(usize),
    Publish(usize),
    Take(usize),
    Commit(usize),
    CommitDistributed(usize),
    RemoteVisible(usize),
    Abort(usize),
    PrePrepare(usize),
    Release(usize),
    Visible(usize),
    FinishPrepared(usize, bool),
    Crash,
    ReaderStart,
    ReadSlot,
    ReadRecords,
    Snapshot,
}

struct HorizonModel {
    /// Transactions each backend runs, in turn (its slot is reused).
    xacts: Vec<u8>,
    ids_per_xact: u32,
    max_crashes: u8,
    pages: usize,
    /// Transactions may also commit as distributed ones (local commit, then the other nodes').
    two_phase: bool,
    fault: Fault,
}

const BITS: u64 = 40;

fn below(h: u64) -> u64 {
    if h >= BITS {
        u64::MAX
    } else {
        (1u64 << h) - 1
    }
}

impl HorizonModel {
    /// The reader's last step of the horizon: the records, and prepared transactions without one.
    fn records(&self, s: &State, acc: u64) -> u64 {
        let live = s
            .prepared
            .iter()
            .filter(|p| p.open)
            .filter_map(|p| p.record);
        let acc = horizon(s.last, live).min(acc);
        // A prepared transaction of this life without a record took no ID (the product's rule
        // for one at or above boot_xid); one from an earlier life may have taken any.
        let unknown = s.prepared.iter().any(|p| p.open && p.earlier_life);
        if unknown && self.fault != Fault::IgnoreUnknownPrepared {
            0
        } else {
            acc
        }
    }
}

impl Model for HorizonModel {
    type State = State;
    type Action = Action;

    fn init_states(&self) -> Vec<State> {
        vec![State {
            last: 0,
            backends: self
                .xacts
                .iter()
                .map(|&left| Backend {
                    phase: Phase::Idle,
                    slot: EMPTY,
                    ids: 0,
                    left,
                })
                .collect(),
            prepared: Vec::new(),
            visible: 0,
            reader: Reader::Idle,
            used: Vec::new(),
            crashes: 0,
        }]
    }

    fn actions(&self, s: &State, out: &mut Vec<Action>) {
        for (i, b) in s.backends.iter().enumerate() {
            match b.phase {
                Phase::Idle if b.left > 0 => out.push(Action::Begin(i)),
                Phase::Idle => {}
                Phase::Open { loaded, held } => {
                    let publish_late = self.fault == Fault::PublishAfterTake;
                    if !held && loaded.is_none() && (!publish_late || b.ids != 0) {
                        out.push(Action::Load(i));
                    }
                    if loaded.is_some() {
                        out.push(Action::Publish(i));
                    }
                    if (held || publish_late)
                        && b.ids.count_ones() < self.ids_per_xact
                        && s.last + 1 < BITS
                    {
                        out.push(Action::Take(i));
                    }
                    out.push(Action::Commit(i));
                    if self.two_phase && b.ids != 0 {
                        out.push(Action::CommitDistributed(i));
                    }
                    out.push(Action::Abort(i));
                    if b.ids != 0 {
                        out.push(Action::PrePrepare(i));
                    }
                }
                Phase::Ended | Phase::Preparing => out.push(Action::Release(i)),
                Phase::Committing => out.push(Action::Visible(i)),
                Phase::Remote => out.push(Action::RemoteVisible(i)),
            }
        }
        for (j, p) in s.prepared.iter().enumerate() {
            if p.open {
                out.push(Action::FinishPrepared(j, true));
                out.push(Action::FinishPrepared(j, false));
            }
        }
        if s.crashes < self.max_crashes {
            out.push(Action::Crash);
        }
        match s.reader {
            Reader::Idle if s.used.len() < self.pages => out.push(Action::ReaderStart),
            Reader::Idle => {}
            Reader::Scanning { next, .. } if next < s.backends.len() => out.push(Action::ReadSlot),
            Reader::Scanning { .. } => out.push(Action::ReadRecords),
            Reader::Computed { .. } => out.push(Action::Snapshot),
            Reader::Snapped { .. } => out.push(Action::ReadRecords),
        }
    }

    fn next_state(&self, s: &State, action: Action) -> Option<State> {
        let mut n = s.clone();
        match action {
            Action::Begin(i) => {
                let b = &mut n.backends[i];
                b.left -= 1;
                b.ids = 0;
                b.phase = Phase::Open {
                    loaded: None,
                    held: false,
                };
            }
            Action::Load(i) => {
                n.backends[i].phase = Phase::Open {
                    loaded: Some(s.last),
                    held: false,
                };
            }
            Action::Publish(i) => {
                let b = &mut n.backends[i];
                if let Phase::Open {
                    loaded: Some(v), ..
                } = b.phase
                {
                    b.slot = low_for(v);
                    b.phase = Phase::Open {
                        loaded: None,
                        held: true,
                    };
                }
            }
            Action::Take(i) => {
                n.last += 1;
                n.backends[i].ids |= 1 << n.last;
            }
            Action::Commit(i) | Action::Abort(i) => {
                let commit = matches!(action, Action::Commit(_));
                let b = &mut n.backends[i];
                if self.fault == Fault::ReleaseBeforeVisible && commit {
                    // The slot is cleared first; the IDs become visible at `Visible`.
                    b.slot = EMPTY;
                    b.phase = Phase::Committing;
                } else {
                    if commit {
                        n.visible |= b.ids;
                    }
                    b.ids = 0;
                    b.phase = Phase::Ended;
                }
            }
            Action::CommitDistributed(i) => {
                // Its rows live on the other nodes: nothing is visible at the local commit.
                let b = &mut n.backends[i];
                if self.fault == Fault::ReleaseAtLocalCommit {
                    b.slot = EMPTY;
                }
                b.phase = Phase::Remote;
            }
            Action::RemoteVisible(i) => {
                let b = &mut n.backends[i];
                n.visible |= b.ids;
                b.ids = 0;
                b.phase = if self.fault == Fault::ReleaseAtLocalCommit {
                    Phase::Idle
                } else {
                    Phase::Ended
                };
            }
            Action::Visible(i) => {
                let b = &mut n.backends[i];
                n.visible |= b.ids;
                b.ids = 0;
                b.phase = Phase::Idle;
            }
            Action::PrePrepare(i) => {
                let b = &mut n.backends[i];
                n.prepared.push(PreparedXact {
                    ids: b.ids,
                    open: true,
                    record: (self.fault != Fault::NoPreparedRecord).then_some(b.slot),
                    earlier_life: false,
                });
                b.ids = 0;
                b.phase = Phase::Preparing;
            }
            Action::Release(i) => {
                n.backends[i].slot = EMPTY;
                n.backends[i].phase = Phase::Idle;
            }
            Action::FinishPrepared(j, commit) => {
                let p = &mut n.prepared[j];
                if commit {
                    n.visible |= p.ids;
                }
                p.open = false;
            }
            Action::Crash => {
                n.crashes += 1;
                for b in &mut n.backends {
                    b.slot = EMPTY;
                    b.ids = 0;
                    b.phase = Phase::Idle;
                }
                for p in &mut n.prepared {
                    p.record = None;
                    p.earlier_life = true;
                }
                n.reader = Reader::Idle;
            }
            Action::ReaderStart => {
                n.reader = if self.fault == Fault::SnapshotFirst {
                    Reader::Snapped { snap: s.visible }
                } else {
                    Reader::Scanning {
                        acc: low_for(s.last),
                        next: 0,
                    }
                };
                if self.fault == Fault::RecordsFirst {
                    n.reader = Reader::Scanning {
                        acc: self.records(s, low_for(s.last)),
                        next: 0,
                    };
                }
            }
            Action::ReadSlot => {
                if let Reader::Scanning { acc, next } = s.reader {
                    let slot = s.backends[next].slot;
                    let acc = if slot == EMPTY { acc } else { acc.min(slot) };
                    n.reader = Reader::Scanning {
                        acc,
                        next: next + 1,
                    };
                }
            }
            Action::ReadRecords => match s.reader {
                Reader::Scanning { acc, .. } => {
                    let h = if self.fault == Fault::RecordsFirst {
                        acc
                    } else {
                        self.records(s, acc)
                    };
                    n.reader = Reader::Computed { h };
                }
                Reader::Snapped { snap } => {
                    // SnapshotFirst: the horizon computed at once, after the snapshot.
                    let slots = s.backends.iter().map(|b| b.slot);
                    let h = self.records(s, horizon(s.last, slots));
                    n.used.push((h, snap));
                    n.reader = Reader::Idle;
                }
                _ => return None,
            },
            Action::Snapshot => {
                if let Reader::Computed { h } = s.reader {
                    n.used.push((h, s.visible));
                    n.reader = Reader::Idle;
                }
            }
        }
        Some(n)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::always(
                "no ID below a horizon the reader used becomes visible later",
                |_, s: &State| {
                    s.used
                        .iter()
                        .all(|&(h, snap)| s.visible & below(h) & !snap == 0)
                },
            ),
            Property::sometimes("a reader reads IDs below its horizon", |_, s: &State| {
                s.used.iter().any(|&(h, snap)| snap & below(h) != 0)
            }),
            Property::sometimes(
                "a prepared transaction's IDs are read after COMMIT PREPARED",
                |_, s: &State| {
                    s.prepared.iter().any(|p| {
                        !p.open
                            && p.ids & s.visible != 0
                            && s.used.iter().any(|&(h, snap)| p.ids & snap & below(h) != 0)
                    })
                },
            ),
        ]
    }
}

const PROPERTY: &str = "no ID below a horizon the reader used becomes visible later";

fn product(fault: Fault) -> HorizonModel {
    HorizonModel {
        xacts: vec![1, 1],
        ids_per_xact: 2,
        max_crashes: 1,
        pages: 2,
        two_phase: false,
        fault,
    }
}

/// One backend whose transaction may commit as a distributed one, beside another backend's; one
/// page, no crash (the first model has them).
fn distributed(fault: Fault) -> HorizonModel {
    HorizonModel {
        xacts: vec![1, 1],
        max_crashes: 0,
        pages: 1,
        two_phase: true,
        ..product(fault)
    }
}

fn explore(name: &str, m: HorizonModel) {
    let started = std::time::Instant::now();
    let c = m.checker().spawn_bfs().join();
    eprintln!(
        "horizon model ({name}): {} states in {:?}",
        c.unique_state_count(),
        started.elapsed()
    );
    c.assert_properties();
}

/// Two backends, a transaction each of up to two IDs, a crash, two pages of the reader.
#[test]
#[ignore = "model checking: run with --release -- --ignored (minutes in a debug build)"]
fn a_reader_below_the_horizon_never_misses_a_commit() {
    explore("two backends", product(Fault::None));
}

/// A backend's slot used by two transactions in turn (its bound published again for the second),
/// beside another backend's transaction; one page, no crash (the first model has them).
#[test]
#[ignore = "model checking: run with --release -- --ignored (minutes in a debug build)"]
fn a_slot_reused_by_the_next_transaction_never_misses_a_commit() {
    explore(
        "a slot reused",
        HorizonModel {
            xacts: vec![2, 1],
            max_crashes: 0,
            pages: 1,
            ..product(Fault::None)
        },
    );
}

/// Citus's two-phase commit: rows that become visible on other nodes after the local commit.
#[test]
#[ignore = "model checking: run with --release -- --ignored (minutes in a debug build)"]
fn a_distributed_commit_is_never_missed() {
    explore("distributed commits", distributed(Fault::None));
}

/// Each control breaks the property: the checker finds the missed commit.
#[test]
#[ignore = "model checking: run with --release -- --ignored (minutes in a debug build)"]
fn every_control_misses_a_commit() {
    for fault in [
        Fault::PublishAfterTake,
        Fault::ReleaseBeforeVisible,
        Fault::SnapshotFirst,
        Fault::NoPreparedRecord,
        Fault::RecordsFirst,
        Fault::IgnoreUnknownPrepared,
    ] {
        let path = super::shortest(|| product(fault), PROPERTY);
        eprintln!("horizon model, control {fault:?}: {path:?}");
    }
    let fault = Fault::ReleaseAtLocalCommit;
    let path = super::shortest(|| distributed(fault), PROPERTY);
    eprintln!("horizon model, control {fault:?}: {path:?}");
}
