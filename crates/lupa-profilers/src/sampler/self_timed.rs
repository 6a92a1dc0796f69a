//! The self-timed sampler: no thread, the VM thread samples itself at its
//! polls (`lupa_vm` `obs/self_timed.rs` says how and where the VM polls).
//! This is the sampler's default; a sampler thread remains for `--native`,
//! whose native pcs need a signal sent at the tick.
//!
//! Contract. [`SelfSampler`] is the VM's [`SelfTimer`]: each sample it is
//! told of becomes a [`Tick`] numbered from 1, weighed by the VM thread's CPU
//! clock and the wall clock since the previous one, in the state the VM
//! says; the next deadline is the previous one plus a jittered interval
//! (uniform in [0.5, 1.5) of the mean, as the thread's). When several
//! deadlines passed before the VM could poll (a long primitive, collection
//! or sleep), the sample stands for one tick per deadline, in the same state
//! and with the same stack: what a sampler thread ticking through it would
//! have recorded. A tick weighs the time from the previous tick's deadline to
//! its own (the thread's weight): wall time exactly, CPU time interpolated
//! between the two readings of the VM thread's CPU clock around the deadline.
//! The clock is a system call, so it is read by every sample that comes late
//! (a quarter of an interval or more after its deadline: a long operation,
//! or the thread was descheduled) and otherwise by one sample in
//! [`READ_EVERY`], or as many as fit in [`READ_SPAN`] at high rates (at most
//! [`MAX_READ_EVERY`]); the ticks of the samples in between get their CPU
//! time when it is next read (their sum is the CPU time between the
//! readings, shared in proportion to their wall time, except that a late
//! sample's span keeps the time the thread waited: `cpu_between`).
//! In a CPU-time profile, deadlines that passed while the VM thread was not
//! running (descheduled) make no ticks beyond one per interval of the CPU
//! time it used; they are counted as missed. Ticks past `max_ticks` are
//! counted as lost. [`SelfSampler::into_report`] answers
//! the same [`ThreadReport`] a sampler thread does, so the profile is built
//! the same way.

use super::clock::ThreadCpuClock;
use super::thread::{ThreadReport, Tick, jittered};
use lupa_vm::{SelfTimer, StateWord};
use rand::SeedableRng;
use rand::rngs::StdRng;
use std::time::{Duration, Instant};

/// Most ticks one sample stands for (a pause longer than this many intervals
/// is one burst of ticks plus a missed deadline).
const MAX_BURST: u64 = 1 << 16;

/// Samples per reading of the VM thread's CPU clock at low rates: the clock is a
/// system call (0.6 µs on this project's virtual machine, 2 µs when it is
/// loaded: 0.6-2% of the run at 10 kHz if read at every sample; it locks the
/// thread's run queue, and in a profile of `lupa profile --rate 10000` the
/// reads at one sample in four were still 0.3% of the run). A sample taken
/// late (a long operation, or the thread descheduled) always reads it.
pub(crate) const READ_EVERY: u32 = 8;

/// The span of time over which samples on time may share one reading of the
/// CPU clock: at 10 kHz, 32 samples. Each reading costs the run 1-2 µs on
/// this project's virtual machine (`perf stat` of `lupa profile --rate 10000`
/// of Havlak: 1,459 readings at one sample in eight, the run queue's lock
/// 0.26% of the run); the shared CPU time is split by wall time within the
/// span. A descheduling makes the next sample late, which reads the clock,
/// and its span, not the samples on time before it, gets the time the thread
/// waited (`cpu_between`).
pub(crate) const READ_SPAN: Duration = Duration::from_micros(3200);

/// Samples per reading of the CPU clock, at most.
pub(crate) const MAX_READ_EVERY: u32 = 32;

/// Samples per reading of the CPU clock at this mean interval: [`READ_EVERY`],
/// or as many as fit in [`READ_SPAN`] up to [`MAX_READ_EVERY`].
fn read_every(interval: Duration) -> u32 {
    let fit = READ_SPAN.as_nanos() / interval.as_nanos().max(1);
    (fit.min(u128::from(MAX_READ_EVERY)) as u32).max(READ_EVERY)
}

/// A self-timed sampler's ticks, kept by the VM while it runs.
pub(crate) struct SelfSampler {
    cpu: Option<ThreadCpuClock>,
    /// A CPU-time profile: deadlines passed while the VM thread did not run
    /// make no ticks.
    cpu_paced: bool,
    rng: StdRng,
    interval: Duration,
    started: Instant,
    cpu_start: Option<u64>,
    last_wall: Instant,
    last_cpu: u64,
    /// The deadline of the last tick (the start at first), and the VM
    /// thread's CPU clock then (interpolated).
    last_deadline: Instant,
    last_deadline_cpu: u64,
    deadline: Instant,
    /// Samples taken since the CPU clock was last read.
    unread: u32,
    /// Samples per reading of the CPU clock ([`read_every`]).
    read_every: u32,
    /// The first stored tick whose CPU time is not known yet (a tick of a
    /// sample that did not read the clock), and the deadline it starts at.
    unsettled: usize,
    settled_at: Instant,
    ticks: Vec<Tick>,
    max_ticks: usize,
    lost: u64,
    missed: u64,
    seq: u64,
}

impl SelfSampler {
    /// A sampler of the calling thread (the VM's) every `interval` on
    /// average, and its first deadline.
    pub(crate) fn new(
        cpu: Option<ThreadCpuClock>,
        cpu_paced: bool,
        interval: Duration,
        seed: u64,
        max_ticks: usize,
    ) -> (SelfSampler, Instant) {
        let mut rng = StdRng::seed_from_u64(seed);
        let started = Instant::now();
        let cpu_start = cpu.and_then(|c| c.read_ns());
        let deadline = started + jittered(&mut rng, interval);
        let sampler = SelfSampler {
            cpu_paced: cpu_paced && cpu.is_some(),
            cpu,
            rng,
            interval,
            started,
            cpu_start,
            last_wall: started,
            last_cpu: cpu_start.unwrap_or(0),
            last_deadline: started,
            last_deadline_cpu: cpu_start.unwrap_or(0),
            deadline,
            unread: 0,
            read_every: read_every(interval),
            unsettled: 0,
            settled_at: started,
            ticks: Vec::with_capacity(super::thread::CHUNK),
            max_ticks,
            lost: 0,
            missed: 0,
            seq: 0,
        };
        (sampler, deadline)
    }

    /// The next tick, in `state`, weighing `cpu_ns` and `wall_ns`: kept, or
    /// counted as lost past `max_ticks`.
    fn tick(&mut self, state: StateWord, cpu_ns: u64, wall_ns: u64) {
        self.seq += 1;
        let tick = Tick {
            seq: self.seq,
            state,
            cpu_ns,
            wall_ns,
            native_pc: 0,
        };
        if self.ticks.len() < self.max_ticks {
            self.ticks.push(tick);
        } else {
            self.lost += 1;
        }
    }

    /// The CPU clock at a moment between its last reading and `now`, when
    /// it reads `cpu_now` (it is read only by some samples): by linear
    /// interpolation, or, for a sample that comes late after samples on time
    /// that did not read it (`ran_until`: the last of their deadlines), at
    /// the wall clock's pace up to that deadline (those samples came on
    /// time: the thread was running) and linearly from there. A late sample
    /// after a descheduling must not spread the time the thread did not run
    /// over the samples before it: its span would seem to hold more CPU time
    /// than it does, and a CPU-time profile would tick for the time the
    /// thread waited (at 5 kHz with 21 tests on two cores, a sampled share
    /// read 65% for 50%).
    fn cpu_between(
        &self,
        now: Instant,
        cpu_now: u64,
        ran_until: Option<Instant>,
    ) -> impl Fn(Instant) -> u64 + use<> {
        let (t0, c0) = (self.last_wall, self.last_cpu);
        let cpu_now = cpu_now.max(c0);
        let line = move |(ta, ca): (Instant, u64), (tb, cb): (Instant, u64), at: Instant| {
            let span = tb.saturating_duration_since(ta).as_nanos().max(1);
            let into = at.saturating_duration_since(ta).as_nanos().min(span);
            ca + (u128::from(cb - ca) * into / span) as u64
        };
        // The knot: the clock at the last on-time deadline (never below the
        // straight line, never past the reading).
        let knot = ran_until.map(|tk| {
            let paced = c0.saturating_add(tk.saturating_duration_since(t0).as_nanos() as u64);
            (tk, paced.clamp(line((t0, c0), (now, cpu_now), tk), cpu_now))
        });
        move |at: Instant| match knot {
            Some(k) if at <= k.0 => line((t0, c0), k, at),
            Some(k) => line(k, (now, cpu_now), at),
            None => line((t0, c0), (now, cpu_now), at),
        }
    }

    /// Give the ticks taken since the CPU clock was last read their CPU
    /// time, now that it reads `cpu_now` at `now`: the CPU clock at each of
    /// their deadlines interpolated between the two readings
    /// ([`cpu_between`](Self::cpu_between), with `ran_until` for a late
    /// sample's reading), as a sample that reads the clock does for the
    /// deadlines it passed.
    fn settle(&mut self, now: Instant, cpu_now: u64, ran_until: Option<Instant>) {
        let cpu_at = self.cpu_between(now, cpu_now, ran_until);
        let (mut at, mut before) = (self.settled_at, self.last_deadline_cpu);
        let from = self.unsettled.min(self.ticks.len());
        for t in &mut self.ticks[from..] {
            at += Duration::from_nanos(t.wall_ns);
            let then = cpu_at(at).max(before);
            t.cpu_ns = then - before;
            before = then;
        }
        self.last_deadline_cpu = cpu_at(self.last_deadline).max(before);
        self.unsettled = self.ticks.len();
        self.settled_at = self.last_deadline;
        self.unread = 0;
    }

    /// Every tick stored so far has its CPU time (a sample that read the
    /// clock weighed its own).
    fn settled(&mut self) {
        self.unsettled = self.ticks.len();
        self.settled_at = self.last_deadline;
    }

    /// What was sampled, as a sampler thread reports it.
    pub(crate) fn into_report(mut self) -> ThreadReport {
        let cpu_now = self.cpu.and_then(|c| c.read_ns());
        if let Some(c) = cpu_now {
            self.settle(Instant::now(), c, None);
        }
        ThreadReport {
            ticks: self.ticks,
            lost: self.lost,
            missed: self.missed,
            wall: self.started.elapsed(),
            cpu_ns: self
                .cpu_start
                .zip(cpu_now)
                .map(|(s, n)| n.saturating_sub(s)),
            started: Some(self.started),
            own_cpu_ns: None,
        }
    }
}

impl SelfTimer for SelfSampler {
    fn take(&mut self, state: StateWord, now: Instant) -> (u64, Instant) {
        // A sample on time (less than a quarter of an interval after its
        // deadline: the next deadline, at least half an interval on, has not
        // passed) need not read the CPU clock: its tick's CPU time is settled
        // at the next reading (`settle`), at most `read_every` samples on.
        let on_time = now.saturating_duration_since(self.deadline) < self.interval / 4;
        if self.cpu.is_some() && on_time && self.unread + 1 < self.read_every {
            self.unread += 1;
            let at = self.deadline.min(now);
            let wall = at.saturating_duration_since(self.last_deadline).as_nanos() as u64;
            self.tick(state, 0, wall);
            self.last_deadline = at;
            self.deadline = at + jittered(&mut self.rng, self.interval);
            return (self.seq, self.deadline);
        }
        let cpu_now = self.cpu.and_then(|c| c.read_ns()).unwrap_or(0);
        // A late sample after samples that did not read the clock: they
        // show the thread ran until the last of their deadlines.
        let ran_until = (!on_time && self.unread > 0).then_some(self.last_deadline);
        if self.unread > 0 {
            self.settle(now, cpu_now, ran_until);
        }
        self.unread = 0;
        let cpu_at = self.cpu_between(now, cpu_now, ran_until);
        (self.last_wall, self.last_cpu) = (now, cpu_now);
        // One tick per deadline passed since the last sample (at least the
        // one that made the VM take this one), as a sampler thread would have
        // ticked during a long operation. Each weighs the time from the
        // previous tick's deadline to its own, as a thread's tick does, not
        // the time to the moment the VM could take it: a sample taken late,
        // at the end of a long collection, must not take the time after its
        // deadline from the next one. CPU time at a deadline is interpolated,
        // so the weights add up to the CPU time to the last deadline.
        if self.cpu_paced {
            // Deadlines that passed while the VM thread did not run (the
            // machine gave its core to others) are not ticks of a CPU-time
            // profile: at most one tick per interval of CPU time.
            let mut passed = 1u64;
            let mut at = self.deadline;
            let mut probe = self.rng.clone();
            while passed < MAX_BURST {
                at += jittered(&mut probe, self.interval);
                if at > now {
                    break;
                }
                passed += 1;
            }
            let ran = cpu_now.saturating_sub(self.last_deadline_cpu);
            let by_cpu = 1 + ran / self.interval.as_nanos().max(1) as u64;
            if passed > by_cpu {
                self.missed += passed - by_cpu;
                let wall = now.saturating_duration_since(self.last_deadline).as_nanos() as u64;
                for i in 0..by_cpu {
                    let last = i + 1 == by_cpu;
                    self.tick(
                        state,
                        ran / by_cpu + if last { ran % by_cpu } else { 0 },
                        wall / by_cpu + if last { wall % by_cpu } else { 0 },
                    );
                }
                (self.last_deadline, self.last_deadline_cpu) = (now, cpu_now);
                self.deadline = now + jittered(&mut self.rng, self.interval);
                self.settled();
                return (self.seq, self.deadline);
            }
        }
        let mut at = self.deadline.min(now);
        let mut n = 0u64;
        loop {
            n += 1;
            let cpu_then = cpu_at(at).max(self.last_deadline_cpu);
            let wall = at.saturating_duration_since(self.last_deadline).as_nanos() as u64;
            self.tick(state, cpu_then - self.last_deadline_cpu, wall);
            (self.last_deadline, self.last_deadline_cpu) = (at, cpu_then);
            let next = at + jittered(&mut self.rng, self.interval);
            if next > now {
                self.deadline = next;
                break;
            }
            if n >= MAX_BURST {
                self.missed += 1;
                (self.last_deadline, self.last_deadline_cpu) = (now, cpu_now);
                self.deadline = now + jittered(&mut self.rng, self.interval);
                break;
            }
            at = next;
        }
        self.settled();
        (self.seq, self.deadline)
    }

    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        self
    }

    fn stamp_fn(&self) -> fn() -> u64 {
        super::clock::stamp
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lupa_vm::VmState;

    fn word() -> StateWord {
        StateWord {
            state: VmState::Interpreting,
            detail: 0,
            process: 0,
        }
    }

    #[test]
    fn ticks_are_numbered_and_deadlines_follow_the_mean() {
        let interval = Duration::from_micros(100);
        let (mut s, first) = SelfSampler::new(None, false, interval, 7, 10);
        assert!(first > s.started);
        let mut at = first;
        let mut gaps = Vec::new();
        for i in 1..=12u64 {
            let (seq, next) = s.take(word(), at);
            assert_eq!(seq, i);
            assert!(next > at);
            gaps.push((next - at).as_nanos() as f64);
            at = next;
        }
        assert!(
            gaps.iter().all(|&g| (50_000.0..150_000.0).contains(&g)),
            "{gaps:?}"
        );
        let r = s.into_report();
        assert_eq!((r.ticks.len(), r.lost, r.missed), (10, 2, 0));
        assert!(r.ticks.windows(2).all(|w| w[0].seq + 1 == w[1].seq));
    }

    #[test]
    fn a_long_pause_is_a_tick_per_deadline_sharing_its_time() {
        let interval = Duration::from_micros(100);
        let (mut s, first) = SelfSampler::new(None, false, interval, 1, 1000);
        let late = first + Duration::from_millis(10);
        let (seq, next) = s.take(word(), late);
        assert!(next > late && next < late + Duration::from_micros(150));
        let r = s.into_report();
        let n = r.ticks.len() as i64;
        assert!((n - 101).abs() <= 12, "{n} ticks");
        assert_eq!(
            seq, n as u64,
            "the stack copied carries the last tick's number"
        );
        let wall: u64 = r.ticks.iter().map(|t| t.wall_ns).sum();
        let span = late
            .saturating_duration_since(r.started.expect("started"))
            .as_nanos() as u64;
        assert!(wall <= span && wall + 150_000 > span, "{wall} of {span}");
        assert_eq!(r.missed, 0);
    }

    /// A sampler (every 100 µs) whose clock read 1,000 ns at its start,
    /// then three samples on time 100 µs apart that did not read it; and
    /// its start.
    fn three_unread_samples() -> (SelfSampler, Instant) {
        let (mut s, _) = SelfSampler::new(None, false, Duration::from_micros(100), 3, 100);
        let t0 = s.started;
        (s.last_wall, s.last_cpu, s.last_deadline_cpu) = (t0, 1_000, 1_000);
        for i in 1..=3u64 {
            s.tick(word(), 0, 100_000);
            s.last_deadline = t0 + Duration::from_micros(100 * i);
        }
        s.unread = 3;
        (s, t0)
    }

    #[test]
    fn ticks_taken_without_reading_the_clock_share_the_cpu_time_of_the_next_reading() {
        let (mut s, t0) = three_unread_samples();
        // Half the wall time was the thread's: each tick weighs half its
        // wall time, and the clock at the last deadline is interpolated.
        s.settle(t0 + Duration::from_micros(400), 201_000, None);
        let cpu: Vec<u64> = s.ticks.iter().map(|t| t.cpu_ns).collect();
        assert_eq!(cpu, [50_000, 50_000, 50_000]);
        assert_eq!(s.last_deadline_cpu, 151_000);
        assert_eq!((s.unsettled, s.unread), (3, 0));
        assert_eq!(s.settled_at, t0 + Duration::from_micros(300));
    }

    #[test]
    fn a_late_sample_after_a_descheduling_does_not_take_the_cpu_time_of_the_samples_before_it() {
        // Three samples on time, not reading the clock; then the thread
        // waits 10 ms for a core, runs 100 µs, and the next sample is late.
        let (mut s, t0) = three_unread_samples();
        let now = t0 + Duration::from_micros(10_400);
        let cpu_now = 401_000;
        let ran_until = Some(s.last_deadline);
        s.settle(now, cpu_now, ran_until);
        // The samples on time ran at the wall clock's pace...
        let cpu: Vec<u64> = s.ticks.iter().map(|t| t.cpu_ns).collect();
        assert_eq!(cpu, [100_000, 100_000, 100_000]);
        // ... and the late sample's span holds the 100 µs it ran, not the
        // 389 µs a straight line from the last reading would give it.
        assert_eq!(cpu_now - s.last_deadline_cpu, 100_000);
        let at = s.cpu_between(now, cpu_now, ran_until);
        assert_eq!(at(t0 + Duration::from_micros(5_350)), 351_000);
        assert_eq!(at(now), cpu_now);
        // Without the knot: the straight line.
        let line = s.cpu_between(now, cpu_now, None);
        assert_eq!(line(t0 + Duration::from_micros(5_200)), 201_000);
        // The knot never runs past the reading: a thread that ran less than
        // the wall time up to it reads its clock's value there at most.
        let at = s.cpu_between(now, 51_000, ran_until);
        assert_eq!(at(s.last_deadline), 51_000);
    }

    #[test]
    fn samples_share_a_reading_of_the_cpu_clock_over_a_few_milliseconds_at_most() {
        let every = |hz: u64| read_every(Duration::from_nanos(1_000_000_000 / hz));
        // 10 kHz: 32 samples (3.2 ms); 5 kHz: 16; 1 kHz and slower: eight.
        assert_eq!(every(10_000), 32);
        assert_eq!(every(5_000), 16);
        assert_eq!(every(1_000), READ_EVERY);
        assert_eq!(every(1), READ_EVERY);
        assert_eq!(every(1_000_000), MAX_READ_EVERY);
        assert_eq!(read_every(Duration::ZERO), MAX_READ_EVERY);
    }

    #[test]
    fn the_cpu_clock_is_read_at_most_every_few_samples_and_every_tick_is_weighed() {
        let Some(clock) = ThreadCpuClock::of_current_thread() else {
            return;
        };
        let interval = Duration::from_micros(200);
        let (mut s, mut deadline) = SelfSampler::new(Some(clock), true, interval, 5, 1000);
        for _ in 0..40 {
            while Instant::now() < deadline {
                std::hint::spin_loop();
            }
            let (_, next) = s.take(word(), Instant::now());
            assert!(s.unread < s.read_every);
            deadline = next;
        }
        let r = s.into_report();
        assert!(r.ticks.len() >= 40, "{}", r.ticks.len());
        let cpu: u64 = r.ticks.iter().map(|t| t.cpu_ns).sum();
        assert!(
            cpu > 0 && cpu <= r.cpu_ns.unwrap_or(0),
            "{cpu} {:?}",
            r.cpu_ns
        );
        // A single thread's CPU time never runs faster than the wall clock:
        // interpolated shares neither.
        assert!(
            r.ticks.iter().all(|t| t.cpu_ns <= t.wall_ns + 10_000),
            "{:?}",
            r.ticks
                .iter()
                .map(|t| (t.cpu_ns, t.wall_ns))
                .collect::<Vec<_>>()
        );
        // Busy all along: the ticks taken without a reading got their share.
        let unweighed = r.ticks.iter().filter(|t| t.cpu_ns == 0).count();
        assert!(
            unweighed * 4 < r.ticks.len(),
            "{unweighed} of {}",
            r.ticks.len()
        );
    }
}
