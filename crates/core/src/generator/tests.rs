use super::*;
use std::collections::HashSet;
use std::sync::atomic::AtomicI64;
use std::sync::{Arc, Mutex};

/// A wall clock the test moves by hand; sleeping moves it forward only if `sleep_advances`.
struct FakeClock {
    now: AtomicI64,
    sleep_advances: bool,
    slept_ms: AtomicU64,
}

impl FakeClock {
    fn at(ms: i64, sleep_advances: bool) -> FakeClock {
        FakeClock {
            now: AtomicI64::new(ms),
            sleep_advances,
            slept_ms: AtomicU64::new(0),
        }
    }
    fn set(&self, ms: i64) {
        self.now.store(ms, SeqCst);
    }
    fn add(&self, ms: i64) {
        self.now.fetch_add(ms, SeqCst);
    }
}

impl Clock for FakeClock {
    fn now_ms(&self) -> i64 {
        self.now.load(SeqCst)
    }
    fn sleep_ms(&self, ms: u64) -> Result<(), GenError> {
        self.slept_ms.fetch_add(ms, SeqCst);
        if self.sleep_advances {
            self.now.fetch_add(ms as i64, SeqCst);
        }
        Ok(())
    }
}

struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64
    }
    fn sleep_ms(&self, ms: u64) -> Result<(), GenError> {
        std::thread::sleep(std::time::Duration::from_millis(ms));
        Ok(())
    }
}

/// Reserves `window` ticks ahead, counting its (would-be durable) writes.
struct MemReserver {
    window: u64,
    writes: AtomicU64,
    lock: Mutex<()>,
}

impl MemReserver {
    fn new(window: u64) -> MemReserver {
        MemReserver {
            window,
            writes: AtomicU64::new(0),
            lock: Mutex::new(()),
        }
    }
}

impl Reserver for MemReserver {
    fn reserve(&self, st: &GeneratorState, tick: u64) -> Result<(), GenError> {
        let _g = self.lock.lock().unwrap();
        if st.reserved_tick.load(SeqCst) < tick {
            self.writes.fetch_add(1, SeqCst);
            st.reserved_tick.store(tick + self.window, SeqCst);
        }
        Ok(())
    }
}

const T0: i64 = 1_767_225_600_000; // 2026-01-01 UTC

fn gen(spec: &str, policy: ClockPolicy, drift_ms: u64, wait_ms: u64) -> Generator {
    Generator::new(
        Layout::parse(spec).unwrap(),
        policy,
        drift_ms,
        wait_ms,
        0,
        7,
    )
    .unwrap()
}

fn next(
    g: &Generator,
    st: &GeneratorState,
    c: &FakeClock,
    r: &MemReserver,
) -> Result<i64, GenError> {
    g.take(st, c, r, 1).map(|(i, _)| g.id_of(i.first, i.flag))
}

fn tick_of(g: &Generator, id: i64) -> u64 {
    g.layout.unpack(id).unwrap().tick
}

#[test]
fn ids_increase_and_carry_the_worker() {
    let g = gen("pg_idgen", ClockPolicy::Continue, 1000, 100);
    let (st, c, r) = (
        GeneratorState::default(),
        FakeClock::at(T0, true),
        MemReserver::new(1000),
    );
    let mut prev = 0;
    for i in 0..10_000 {
        if i % 100 == 0 {
            c.add(1);
        }
        let id = next(&g, &st, &c, &r).unwrap();
        assert!(id > prev);
        let d = g.layout.unpack(id).unwrap();
        assert_eq!(d.worker, 7);
        assert!(d.tick <= g.layout.tick_of_ms(c.now_ms()).unwrap());
        prev = id;
    }
    assert_eq!(st.stats.issued.load(SeqCst), 10_000);
}

#[test]
fn overflow_borrows_the_next_tick_without_wrapping() {
    // 4 IDs per tick, the logical clock may run 2 ticks ahead, the wall clock never moves.
    let g = gen(
        "unit=ms time=41 worker=3 sequence=2",
        ClockPolicy::Continue,
        2,
        0,
    );
    let (st, c, r) = (
        GeneratorState::default(),
        FakeClock::at(T0, false),
        MemReserver::new(10),
    );
    let ids: Vec<i64> = (0..12).map(|_| next(&g, &st, &c, &r).unwrap()).collect();
    let now = g.layout.tick_of_ms(T0).unwrap();
    let ticks: Vec<u64> = ids.iter().map(|id| tick_of(&g, *id) - now).collect();
    assert_eq!(ticks, [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]);
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    // The 13th would be 3 ticks ahead: beyond the bound, and max_wait is 0.
    assert_eq!(
        next(&g, &st, &c, &r),
        Err(GenError::SequenceExhausted { waited_ms: 0 })
    );
    assert_eq!(st.stats.overflow_waits.load(SeqCst), 1);
}

#[test]
fn overflow_under_wait_policy_waits_for_the_next_tick() {
    let g = gen(
        "unit=ms time=41 worker=3 sequence=2",
        ClockPolicy::Wait,
        0,
        50,
    );
    let (st, c, r) = (
        GeneratorState::default(),
        FakeClock::at(T0, true),
        MemReserver::new(10),
    );
    let ids: Vec<i64> = (0..9).map(|_| next(&g, &st, &c, &r).unwrap()).collect();
    for id in &ids {
        // Never ahead of the wall clock.
        assert!(tick_of(&g, *id) <= g.layout.tick_of_ms(c.now_ms()).unwrap());
    }
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(c.slept_ms.load(SeqCst), 2);
}

#[test]
fn small_backward_step_continues_from_the_last_id() {
    let g = gen("pg_idgen", ClockPolicy::Continue, 5_000, 0);
    let (st, c, r) = (
        GeneratorState::default(),
        FakeClock::at(T0, false),
        MemReserver::new(1000),
    );
    let before = next(&g, &st, &c, &r).unwrap();
    c.add(-2_000);
    let (i, step) = g.take(&st, &c, &r, 1).unwrap();
    let after = g.id_of(i.first, i.flag);
    assert!(after > before, "the logical clock never goes back");
    assert_eq!(step, Some(BackwardStep { step_ms: 2_000 }));
    // The same step is reported once, however many IDs see it.
    for _ in 0..100 {
        assert_eq!(g.take(&st, &c, &r, 1).unwrap().1, None);
    }
    assert_eq!(st.stats.backward_steps.load(SeqCst), 1);
    assert_eq!(st.stats.largest_backward_step_ms.load(SeqCst), 2_000);
}

#[test]
fn large_backward_step_beyond_the_bound_errors_after_max_wait() {
    let g = gen("pg_idgen", ClockPolicy::Continue, 5_000, 30);
    let (st, c, r) = (
        GeneratorState::default(),
        FakeClock::at(T0, false),
        MemReserver::new(1000),
    );
    let before = next(&g, &st, &c, &r).unwrap();
    c.add(-3_600_000);
    match next(&g, &st, &c, &r) {
        Err(GenError::ClockBehind {
            behind_ms,
            waited_ms,
            ..
        }) => {
            assert_eq!(behind_ms, 3_600_000);
            assert_eq!(waited_ms, 30);
        }
        other => panic!("{other:?}"),
    }
    // Once the clock is back within the bound, IDs go on above the old ones.
    c.add(3_600_000 - 4_000);
    let after = next(&g, &st, &c, &r).unwrap();
    assert!(after > before);
}

#[test]
fn repeated_backward_steps_never_repeat_an_id() {
    let g = gen(
        "unit=ms time=41 worker=10 sequence=4",
        ClockPolicy::Continue,
        100_000,
        0,
    );
    let (st, c, r) = (
        GeneratorState::default(),
        FakeClock::at(T0, false),
        MemReserver::new(1000),
    );
    let mut seen = HashSet::new();
    let mut prev = 0;
    for round in 0..50 {
        c.add(if round % 2 == 0 { -7 } else { 5 });
        for _ in 0..40 {
            let id = next(&g, &st, &c, &r).unwrap();
            assert!(seen.insert(id) && id > prev);
            prev = id;
        }
    }
}

#[test]
fn wait_policy_waits_for_the_clock_to_catch_up() {
    let g = gen("pg_idgen", ClockPolicy::Wait, 0, 1_000);
    let (st, c, r) = (
        GeneratorState::default(),
        FakeClock::at(T0, true),
        MemReserver::new(1000),
    );
    let before = next(&g, &st, &c, &r).unwrap();
    c.add(-200);
    let after = next(&g, &st, &c, &r).unwrap();
    assert!(after > before);
    assert!(c.slept_ms.load(SeqCst) >= 200);
    assert!(tick_of(&g, after) <= g.layout.tick_of_ms(c.now_ms()).unwrap());
    assert_eq!(st.stats.behind_waits.load(SeqCst), 1);
}

#[test]
fn error_policy_fails_at_once_on_a_backward_step() {
    let g = gen("pg_idgen", ClockPolicy::Error, 0, 1_000);
    let (st, c, r) = (
        GeneratorState::default(),
        FakeClock::at(T0, true),
        MemReserver::new(1000),
    );
    next(&g, &st, &c, &r).unwrap();
    c.add(-5);
    assert_eq!(
        next(&g, &st, &c, &r),
        Err(GenError::ClockBehind {
            behind_ms: 5,
            policy: ClockPolicy::Error,
            waited_ms: 0
        })
    );
    assert_eq!(c.slept_ms.load(SeqCst), 0);
    c.add(5);
    // Overflow is not a clock step: it waits for the next tick.
    for _ in 0..5_000 {
        next(&g, &st, &c, &r).unwrap();
    }
}

#[test]
fn rollback_flag_flips_once_and_never_reuses_a_time() {
    let g = gen("raindrop", ClockPolicy::RollbackFlag, 0, 20);
    assert!(Generator::new(
        Layout::parse("pg_idgen").unwrap(),
        ClockPolicy::RollbackFlag,
        0,
        0,
        0,
        0
    )
    .unwrap_err()
    .message()
    .contains("rollback bit"));
    let (st, c, r) = (
        GeneratorState::default(),
        FakeClock::at(T0, false),
        MemReserver::new(1000),
    );
    let mut seen = HashSet::new();
    let mut take = |n: usize| -> Vec<i64> {
        (0..n)
            .map(|_| {
                let id = next(&g, &st, &c, &r).unwrap();
                assert!(seen.insert(id), "repeated {id}");
                id
            })
            .collect()
    };
    for _ in 0..10 {
        take(100);
        c.add(1);
    }
    // Step back 5 ms: flag 0 -> 1, counting from the earlier time.
    c.add(-5);
    let after = take(1)[0];
    let d = g.layout.unpack(after).unwrap();
    assert_eq!(
        (d.rollback, d.tick),
        (1, g.layout.tick_of_ms(c.now_ms()).unwrap())
    );
    for _ in 0..3 {
        take(10);
        c.add(1);
    }
    // Step back again, into times flag 0 already used: no flip, it must wait (and here fail).
    c.add(-3);
    assert!(matches!(
        next(&g, &st, &c, &r),
        Err(GenError::ClockBehind { .. })
    ));
    // Far enough past everything flag 0 used, a later step back may flip again.
    c.add(100);
    take(10);
    c.add(-2);
    let again = take(1)[0];
    assert_eq!(g.layout.unpack(again).unwrap().rollback, 0);
    assert_eq!(st.stats.flag_flips.load(SeqCst), 2);
}

#[test]
fn restart_from_a_persisted_mark_starts_above_it_even_with_the_clock_behind() {
    let g = gen("pg_idgen", ClockPolicy::Continue, 60_000, 0);
    let (st, c, r) = (
        GeneratorState::default(),
        FakeClock::at(T0, false),
        MemReserver::new(1000),
    );
    let mut last = 0;
    for _ in 0..5000 {
        last = next(&g, &st, &c, &r).unwrap();
    }
    let mark = st.reserved_tick.load(SeqCst);
    // "Crash": new shared memory, clock 30 s back.
    let st2 = GeneratorState::default();
    st2.restore(Some(mark), g.seq_bits());
    c.add(-30_000);
    let first = next(&g, &st2, &c, &r).unwrap();
    assert!(first > last);
    assert_eq!(tick_of(&g, first), mark + 1);
}

#[test]
fn reservations_are_written_once_per_window_not_per_id() {
    let g = gen("pg_idgen", ClockPolicy::Continue, 1000, 0);
    let (st, c, r) = (
        GeneratorState::default(),
        FakeClock::at(T0, false),
        MemReserver::new(1000),
    );
    for i in 0..100_000 {
        if i % 50 == 0 {
            c.add(1);
        }
        let id = next(&g, &st, &c, &r).unwrap();
        assert!(tick_of(&g, id) <= st.reserved_tick.load(SeqCst));
    }
    // 2000 ms of IDs with a 1000-tick window: 2 or 3 writes.
    assert!(r.writes.load(SeqCst) <= 3, "{}", r.writes.load(SeqCst));
}

#[test]
fn a_failed_reservation_hands_out_nothing() {
    struct Broken;
    impl Reserver for Broken {
        fn reserve(&self, _: &GeneratorState, _: u64) -> Result<(), GenError> {
            Err(GenError::Reserve("disk full".into()))
        }
    }
    let g = gen("pg_idgen", ClockPolicy::Continue, 1000, 0);
    let (st, c) = (GeneratorState::default(), FakeClock::at(T0, false));
    assert_eq!(
        g.take(&st, &c, &Broken, 1).unwrap_err(),
        GenError::Reserve("disk full".into())
    );
    assert_eq!(st.stats.issued.load(SeqCst), 0);
}

#[test]
fn batches_are_ascending_and_bounded_by_the_drift() {
    let g = gen(
        "unit=ms time=41 worker=10 sequence=12",
        ClockPolicy::Continue,
        3,
        0,
    );
    let (st, c, r) = (
        GeneratorState::default(),
        FakeClock::at(T0, false),
        MemReserver::new(10),
    );
    let (i, _) = g.take(&st, &c, &r, 1_000_000).unwrap();
    // Now plus three ticks ahead: 4 ticks of 4096.
    assert_eq!(i.count, 4 * 4096);
    let ids: Vec<i64> = (i.first..i.first + i.count)
        .map(|c| g.id_of(c, i.flag))
        .collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    assert!(g.take(&st, &c, &r, 1).is_err());
}

#[test]
fn before_the_epoch_and_after_the_end() {
    let g = gen("pg_idgen", ClockPolicy::Continue, 1000, 0);
    let (st, r) = (GeneratorState::default(), MemReserver::new(10));
    let c = FakeClock::at(1_000, false);
    assert!(matches!(
        next(&g, &st, &c, &r),
        Err(GenError::BeforeEpoch { .. })
    ));
    c.set(g.layout.end_ms());
    assert_eq!(next(&g, &st, &c, &r), Err(GenError::LayoutExhausted));
    c.set(g.layout.end_ms() - 1);
    next(&g, &st, &c, &r).unwrap();
}

#[test]
fn worker_ids_must_fit() {
    let l = Layout::parse("twitter").unwrap();
    assert!(Generator::new(l.clone(), ClockPolicy::Continue, 0, 0, 31, 31).is_ok());
    assert!(Generator::new(l.clone(), ClockPolicy::Continue, 0, 0, 32, 0).is_err());
    assert!(Generator::new(l, ClockPolicy::Continue, 0, 0, 0, 32).is_err());
}

/// Many threads on one state with the real clock: the property the shared-memory state gives
/// PostgreSQL backends.
#[test]
fn threads_never_share_an_id_and_each_sees_increasing_ids() {
    let g = Arc::new(gen("pg_idgen", ClockPolicy::Continue, 1000, 1000));
    let st = Arc::new(GeneratorState::default());
    let r = Arc::new(MemReserver::new(1000));
    let handles: Vec<_> = (0..8)
        .map(|_| {
            let (g, st, r) = (g.clone(), st.clone(), r.clone());
            std::thread::spawn(move || {
                let mut out = Vec::with_capacity(50_000);
                for _ in 0..50_000 {
                    let (i, _) = g.take(&st, &SystemClock, &*r, 1).unwrap();
                    out.push(g.id_of(i.first, i.flag));
                }
                out
            })
        })
        .collect();
    let mut all = HashSet::new();
    for h in handles {
        let ids = h.join().unwrap();
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
        for id in ids {
            assert!(all.insert(id), "duplicate {id}");
        }
    }
    assert_eq!(all.len(), 400_000);
}

#[test]
fn threads_with_a_clock_that_jumps_back_and_forth() {
    let g = Arc::new(gen(
        "unit=ms time=41 worker=10 sequence=6",
        ClockPolicy::Continue,
        50,
        5_000,
    ));
    let st = Arc::new(GeneratorState::default());
    let r = Arc::new(MemReserver::new(100));
    let c = Arc::new(FakeClock::at(T0, true));
    let jumper = {
        let c = c.clone();
        std::thread::spawn(move || {
            for i in 0..2_000 {
                c.add(if i % 3 == 0 { -20 } else { 11 });
                std::thread::yield_now();
            }
        })
    };
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let (g, st, r, c) = (g.clone(), st.clone(), r.clone(), c.clone());
            std::thread::spawn(move || {
                (0..20_000)
                    .map(|_| {
                        let (i, _) = g.take(&st, &*c, &*r, 1).unwrap();
                        g.id_of(i.first, i.flag)
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    jumper.join().unwrap();
    let mut all = HashSet::new();
    for w in workers {
        let ids = w.join().unwrap();
        assert!(ids.windows(2).all(|p| p[0] < p[1]));
        for id in ids {
            assert!(all.insert(id));
        }
    }
}

#[test]
fn a_replayed_mark_raises_the_floor_and_never_lowers_it() {
    let g = gen("pg_idgen", ClockPolicy::Continue, 60_000, 0);
    let (st, c, r) = (
        GeneratorState::default(),
        FakeClock::at(T0, false),
        MemReserver::new(1000),
    );
    let now = g.layout.tick_of_ms(T0).unwrap();
    // A promoted standby whose clock is 30 s behind its old primary's last reservation.
    st.raise_floor(now + 30_000, g.seq_bits());
    let first = next(&g, &st, &c, &r).unwrap();
    assert_eq!(tick_of(&g, first), now + 30_001);
    // An older mark replayed later changes nothing.
    st.raise_floor(now, g.seq_bits());
    assert!(next(&g, &st, &c, &r).unwrap() > first);
}

/// A large batch under the continue policy stops at the cap (a lease's ceiling) however far the
/// drift bound would let it run, fails after max_wait while the cap stays, and goes on once the
/// cap moves (a renewal).
#[test]
fn a_cap_bounds_every_id_whatever_the_drift_allows() {
    let g = gen("js_safe", ClockPolicy::Continue, 60_000, 30);
    let (st, c, r) = (
        GeneratorState::default(),
        FakeClock::at(T0, false),
        MemReserver::new(1000),
    );
    let now = g.layout.tick_of_ms(T0).unwrap();
    let cap = AtomicU64::new(now + 5);
    let read = || cap.load(SeqCst);
    let mut top = 0;
    loop {
        match g.take_capped(&st, &c, &r, 1_000_000, &read) {
            Ok((i, _)) => top = (i.first + i.count - 1) >> g.seq_bits(),
            Err(e) => {
                assert!(matches!(e, GenError::Capped { waited_ms: 30, .. }), "{e:?}");
                break;
            }
        }
    }
    assert_eq!(top, now + 5, "IDs up to the cap's tick, none above");
    cap.store(now + 9, SeqCst);
    let (i, _) = g.take_capped(&st, &c, &r, 1, &read).unwrap();
    assert_eq!(i.first >> g.seq_bits(), now + 6);
}

/// After a clean stop the generator resumes right after the last counter, in the same tick, with
/// nothing counted as reserved (the first ID makes a durable reservation of its own).
#[test]
fn an_exact_restore_resumes_in_the_same_tick() {
    let g = gen(
        "unit=hour time=30 worker=10 sequence=23",
        ClockPolicy::Error,
        0,
        0,
    );
    let (st, c, r) = (
        GeneratorState::default(),
        FakeClock::at(T0 + 60_000, false),
        MemReserver::new(1),
    );
    let a = next(&g, &st, &c, &r).unwrap();
    let last = st.high_counter();
    let st2 = GeneratorState::default();
    st2.restore_exact(last, g.seq_bits());
    assert_eq!(st2.reserved_tick.load(SeqCst), 0);
    let b = next(&g, &st2, &c, &r).unwrap();
    assert!(b > a);
    assert_eq!(tick_of(&g, a), tick_of(&g, b), "same hour, next sequence");
    assert_eq!(
        r.writes.load(SeqCst),
        2,
        "the first ID after the restart reserved"
    );
}

/// `id_of_worker` packs with shifts and masks worked out once; it must agree with
/// `Layout::pack` bit for bit, for every preset, with and without reserved bits and datacenter
/// ids, at the edges of every field.
#[test]
fn id_of_worker_agrees_with_layout_pack() {
    let specs = crate::presets::names().map(String::from).chain([
        "pg_idgen time=39 reserved=2 reserved_value=3".to_string(),
        "twitter order=time,sequence,worker,datacenter".to_string(),
        "pg_idgen rollback=1 worker=9 sequence=12".to_string(),
    ]);
    for spec in specs {
        let layout = Layout::parse(&spec).unwrap();
        let dc = layout.max_value(Field::Datacenter);
        let g = Generator::new(layout.clone(), ClockPolicy::Continue, 10, 10, dc, 0).unwrap();
        let seq = layout.bits(Field::Sequence);
        let ticks = [0, 1, layout.ticks_limit() - 1];
        for tick in ticks {
            for s in [0, layout.max_value(Field::Sequence)] {
                for worker in [0, 1, layout.max_value(Field::Worker)] {
                    for flag in [0, layout.max_value(Field::Rollback)] {
                        let counter = tick << seq | s;
                        assert_eq!(
                            g.id_of_worker(counter, flag, worker),
                            layout.pack(tick, dc, worker, flag, s),
                            "{spec}: tick {tick} seq {s} worker {worker} flag {flag}"
                        );
                    }
                }
            }
        }
    }
}
