//! A sampler with no thread: the VM thread samples itself (ARCHITECTURE.md,
//! "The sampler (VMProfiler)", "Self-timed sampling").
//!
//! A sampler thread that wakes at every tick pays the machine's timer
//! wake-up at each one (9-18 µs of CPU on a virtual machine, 10-18% of a core
//! at 10 kHz). A self-timed sampler takes no interrupt: the VM already stops
//! at a *poll* every few thousand sends (`Observation::poll_at`, compared
//! with the send counter at the safepoints of both loops and at native
//! code's sends), and there it reads the monotonic clock (a vDSO call, no
//! system call). When the jittered deadline has passed it copies the stack,
//! as for a sampler thread's request, and hands the moment to its
//! [`SelfTimer`], which weighs the sample (the VM thread's CPU clock) and
//! says when the next one is due.
//!
//! Contract.
//! - **Polls.** Between two polls the VM runs `every` sends; each poll
//!   adapts `every` so that polls come about [`POLLS_PER_INTERVAL`] times per
//!   mean interval (bounded by [`MIN_EVERY`] and [`MAX_EVERY`], at most
//!   doubling or halving at a time). A loop that sends nothing does not
//!   poll; its time is charged to the next sample.
//! - **The approach.** A poll that finds the deadline ahead predicts how many
//!   sends away it is (from the sends and stamp counts between the last
//!   polls). The next poll is due as usual, or three quarters of the way to
//!   the deadline if that comes first (never fewer than [`FINE`] sends on, unless the
//!   regular polls are closer), so that polls
//!   close in on it and the first one past it comes soon after: the sample
//!   is the stack there. Within [`ARMED_PART`] of a poll interval (in time)
//!   the boundaries of short operations are *armed* until the sample is
//!   taken. The armed part is a time, not a number of sends, because sends
//!   take time unevenly: a prediction made in sends misses a deadline that
//!   passes in the slow ones (a primitive) more often than in the rest.
//!   The polls' own time (tens of nanoseconds each) is time near the
//!   deadline, where it is most likely to fall: polls at every send near it,
//!   or 8 sends apart, took a third to a half of a short primitive's share.
//! - **Short operations.** While armed, a primitive or a lookup tests the
//!   deadline (a stamp read: 15-30 ns on a virtual machine) when it starts
//!   and when it ends: the sample is the operation's only if the deadline
//!   passed while it ran; if it had passed before, the boundaries are
//!   disarmed and the next poll takes the sample (a boundary is no random
//!   point of the program's time: charged there, the caller of every
//!   primitive would get the time of the callees that ran before it).
//!   Testing only at their ends, in a window of a whole poll interval, gave
//!   every sample whose deadline passed in method code to the next
//!   primitive to end: 73% of a loop's time to `Array class>>new:` where a
//!   sampler thread measured 11%.
//! - **The deadline is a stamp.** Once the counter is calibrated, a poll
//!   whose stamp is past the deadline's takes the sample, whatever the
//!   clock read after it says, so that the boundaries and the polls decide
//!   by the same instant.
//! - **Long operations.** A state that interrupts another (a collection, a
//!   large allocation, a blocking call, an idle sleep, the JIT compiling)
//!   tests the deadline when it starts and when it ends, armed or not.
//!   Either way, when the deadline has passed,
//!   the state that ends is kept as the sample's state and the next
//!   safepoint polls at once: the sample is charged to that operation under
//!   the stack of its caller, as a sampler thread's tick during it would be.
//! - **Weights.** A sample's weight is what its timer measures since the
//!   previous sample; deadlines that passed while the VM could not poll
//!   (a long collection) make one sample of the whole span, not several.

use crate::obs::sampling::StateWord;
use std::time::{Duration, Instant};

/// Polls per mean sampling interval the VM aims at. Each poll of native code
/// is a call out of it and back; 4 rather than 8 took about 1% less of a
/// 10 kHz run's CPU time on JIT'd Havlak (ARCHITECTURE.md, "Self-timed
/// sampling"), with the approach below keeping samples close to their
/// deadlines.
pub const POLLS_PER_INTERVAL: u32 = 4;

/// Fewest sends between two polls.
pub const MIN_EVERY: u64 = 16;

/// Most sends between two polls.
pub const MAX_EVERY: u64 = 1 << 20;

/// Fewest sends between two polls of the approach (`self_timed.rs`'s
/// contract): the polls' own time must stay a small part of the time near
/// the deadline.
pub const FINE: u64 = 32;

/// The part of a poll interval before the deadline in which the boundaries
/// of short operations are armed: wide enough that the polls' prediction,
/// made in sends, holds over it, however unevenly the sends take time (an
/// eighth of a poll interval, a 32nd of a sampling interval, as a quarter of
/// the eight polls' intervals was).
pub const ARMED_PART: u64 = 8;

/// Sends between two polls while no sampler runs: how late a stop (Ctrl-C)
/// is seen by a loop that sends, at most (a loop that sends nothing sees it
/// at its back jumps).
pub const IDLE_EVERY: u64 = 4096;

/// Sends between two polls while a sampler thread is attached: how late its
/// stack request is answered, at most (a fraction of a microsecond).
pub const THREAD_EVERY: u64 = 64;

/// What samples the VM for a self-timed sampler (the profiler layer's).
pub trait SelfTimer: Send {
    /// A sample is due and is being taken now, at `now`, in `state`: record
    /// it (its weight is the timer's business) and answer its sequence
    /// number (non-zero; the stack copied now carries it) and when the next
    /// sample is due.
    fn take(&mut self, state: StateWord, now: Instant) -> (u64, Instant);

    /// The timer itself, to be taken back by its concrete type.
    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any>;

    /// A cheap counter that grows at a constant rate (the time stamp
    /// counter), read at the end of every state (a primitive call...) to
    /// test the deadline; the VM calibrates it against the clock at its
    /// polls. [`no_stamp`] (the default) turns those tests off.
    fn stamp_fn(&self) -> fn() -> u64 {
        no_stamp
    }
}

/// A stamp counter that never reaches a deadline: the ends of states are not
/// tested.
pub fn no_stamp() -> u64 {
    0
}

/// The VM's side of a self-timed sampler.
pub(crate) struct SelfTiming {
    pub(crate) timer: Box<dyn SelfTimer>,
    /// The interval between polls the VM aims at.
    target: Duration,
    /// Sends between two polls.
    pub(crate) every: u64,
    /// The last poll that adapted `every`, the stamp counter and the send
    /// counter then.
    last_poll: Instant,
    last_poll_stamp: u64,
    last_poll_sends: u64,
    /// `target` in stamp counts (0 until the counter is calibrated).
    target_stamps: u64,
    /// xorshift64 state of the polls' jitter.
    jitter: u64,
    /// The clock and the stamp counter when the sampler was attached: the
    /// counter's calibration.
    origin: (Instant, u64),
}

impl SelfTiming {
    /// A sampler attached when the send counter reads `sends`.
    pub(crate) fn new(
        timer: Box<dyn SelfTimer>,
        mean_interval: Duration,
        sends: u64,
    ) -> SelfTiming {
        let stamp = timer.stamp_fn();
        SelfTiming {
            origin: (Instant::now(), stamp()),
            timer,
            target: mean_interval / POLLS_PER_INTERVAL,
            every: 1024,
            last_poll: Instant::now(),
            last_poll_stamp: stamp(),
            last_poll_sends: sends,
            target_stamps: 0,
            jitter: 0x9E37_79B9_7F4A_7C15,
        }
    }

    /// The stamp counter's value at `deadline`, from its value `stamp` at
    /// `now` and its rate since the sampler was attached (`u64::MAX` until
    /// 100 µs have passed: no rate yet).
    pub(crate) fn stamp_at(&mut self, deadline: Instant, now: Instant, stamp: u64) -> u64 {
        let (t0, s0) = self.origin;
        let ns = now.saturating_duration_since(t0).as_nanos();
        if ns < 100_000 || stamp <= s0 {
            return u64::MAX;
        }
        let per_ns = (stamp - s0) as f64 / ns as f64;
        self.target_stamps = ((self.target.as_nanos() as f64 * per_ns) as u64).clamp(1, 1 << 40);
        let ahead = deadline.saturating_duration_since(now).as_nanos() as f64 * per_ns;
        stamp.saturating_add(ahead as u64)
    }

    /// Sends to the next poll: uniform in [every/2, 3·every/2), so that the
    /// polls, where samples are taken, fall at no fixed period of the
    /// program's sends.
    pub(crate) fn next_gap(&mut self) -> u64 {
        let mut x = self.jitter;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.jitter = x;
        self.every / 2 + x % self.every.max(1)
    }

    /// A poll at `now` (the stamp counter reading `stamp`, the send counter
    /// `sends`): adapt the number of sends to the next poll so that polls
    /// come every `target` (at most doubling or halving at a time, within
    /// [`MIN_EVERY`]..=[`MAX_EVERY`]).
    pub(crate) fn adapt(&mut self, now: Instant, stamp: u64, sends: u64) {
        if self.target_stamps > 0 {
            return self.adapt_stamps(stamp, sends);
        }
        let elapsed = now.saturating_duration_since(self.last_poll);
        let ran = sends.saturating_sub(self.last_poll_sends);
        self.last_poll = now;
        self.last_poll_stamp = stamp;
        self.last_poll_sends = sends;
        let (e, t) = (elapsed.as_nanos().max(1), self.target.as_nanos().max(1));
        self.set_every((u128::from(ran.max(1)) * t / e) as u64);
    }

    /// [`adapt`](Self::adapt) in the units of the stamp counter, once
    /// calibrated (integer arithmetic only: most polls do nothing else).
    /// The approach's short gaps are measured together with the regular gap
    /// before them: the rate is taken over at least half of `every` sends.
    pub(crate) fn adapt_stamps(&mut self, stamp: u64, sends: u64) {
        let ran = sends.saturating_sub(self.last_poll_sends);
        if ran < self.every / 2 {
            return;
        }
        let elapsed = stamp.saturating_sub(self.last_poll_stamp).max(1);
        self.last_poll_stamp = stamp;
        self.last_poll_sends = sends;
        // target_stamps <= 2^40: saturating beyond 2^24 sends, far past MAX_EVERY.
        self.set_every(ran.saturating_mul(self.target_stamps) / elapsed);
    }

    /// A poll found the deadline `ahead` stamp counts away: the sends to the
    /// next poll, and whether short operations are armed until then (the
    /// approach: see the module's contract). Three quarters of the way, not
    /// half: half as many polls near the deadline as halving made (each a
    /// runtime call from native code), for a prediction that holds unless
    /// the sends slow down by a quarter; at a rate giving the native 10 kHz's
    /// samples (callgrind, JIT'd Havlak, `--rate 200`) 0.6% fewer
    /// instructions.
    pub(crate) fn approach(&mut self, ahead: u64) -> (u64, bool) {
        // Sends to the deadline at the rate `every` (<= 2^20) per
        // `target_stamps`: saturating only for deadlines 2^44 counts ahead.
        let target = self.target_stamps.max(1);
        let sends = ahead.saturating_mul(self.every) / target;
        let armed = ahead <= target / ARMED_PART;
        // Never farther apart than the regular polls (a slow phase's `every`
        // may be below FINE).
        (self.next_gap().min((sends - sends / 4).max(FINE)), armed)
    }

    fn set_every(&mut self, scaled: u64) {
        self.every = scaled
            .clamp(self.every / 2, self.every.saturating_mul(2))
            .clamp(MIN_EVERY, MAX_EVERY);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Nothing;
    impl SelfTimer for Nothing {
        fn take(&mut self, _: StateWord, now: Instant) -> (u64, Instant) {
            (1, now)
        }
        fn into_any(self: Box<Self>) -> Box<dyn std::any::Any> {
            self
        }
    }

    #[test]
    fn polls_adapt_towards_their_target_by_at_most_a_factor_of_two() {
        let mut t = SelfTiming::new(
            Box::new(Nothing),
            Duration::from_micros(10) * POLLS_PER_INTERVAL,
            0,
        );
        let start = t.last_poll;
        // 1024 sends took 100 µs against a target of 10 µs: halve.
        t.adapt(start + Duration::from_micros(100), 0, 1024);
        assert_eq!(t.every, 512);
        // 512 sends took 5 µs: double (not more).
        let at = t.last_poll;
        t.adapt(at + Duration::from_micros(5), 0, 1536);
        assert_eq!(t.every, 1024);
        // On target: unchanged.
        let at = t.last_poll;
        t.adapt(at + Duration::from_micros(10), 0, 2560);
        assert_eq!(t.every, 1024);
        // Never below the floor.
        let mut sends = 2560;
        for _ in 0..40 {
            let at = t.last_poll;
            sends += t.every;
            t.adapt(at + Duration::from_secs(1), 0, sends);
        }
        assert_eq!(t.every, MIN_EVERY);
    }

    #[test]
    fn the_stamp_counter_is_calibrated_against_the_clock() {
        let mut t = SelfTiming::new(
            Box::new(Nothing),
            Duration::from_micros(10) * POLLS_PER_INTERVAL,
            0,
        );
        let (t0, s0) = t.origin;
        // Too early to know the counter's rate.
        assert_eq!(t.stamp_at(t0 + Duration::from_micros(10), t0, s0), u64::MAX);
        // 3 counts per ns: a deadline 1 µs after `now` is 3000 counts on.
        let now = t0 + Duration::from_millis(1);
        let at = s0 + 3_000_000;
        let d = t.stamp_at(now + Duration::from_micros(1), now, at);
        assert!((d as i64 - (at + 3000) as i64).abs() <= 1, "{d}");
        // A deadline already passed is now.
        assert_eq!(t.stamp_at(now - Duration::from_micros(5), now, at), at);
        // The poll target (10 µs) in counts, and polls adapted by counts.
        assert_eq!(t.target_stamps, 30_000);
        t.last_poll_stamp = at;
        t.last_poll_sends = 0;
        t.adapt_stamps(at + 60_000, 1024);
        assert_eq!(t.every, 512, "twice the target: half the sends");
        // The approach's short gaps do not adapt on their own.
        t.adapt_stamps(at + 61_000, 1030);
        assert_eq!((t.every, t.last_poll_sends), (512, 1024));
    }

    #[test]
    fn polls_close_in_on_the_deadline_and_arm_its_last_eighth() {
        let mut t = SelfTiming::new(
            Box::new(Nothing),
            Duration::from_micros(10) * POLLS_PER_INTERVAL,
            0,
        );
        t.target_stamps = 30_000;
        // 1024 sends per 30,000 counts.
        // Far: a regular gap (jittered, at most 3/2 of `every`), not armed.
        let (gap, armed) = t.approach(3_000_000);
        assert!((512..1536).contains(&gap) && !armed, "{gap}");
        // About 1024 sends away: at most three quarters of the way there.
        let (gap, armed) = t.approach(30_000);
        assert!(gap <= 768 && !armed, "{gap}");
        // Within an eighth of the poll interval (ARMED_PART): armed, polls
        // three quarters of the way there; before it, not armed.
        assert_eq!(t.approach(7500), (192, false));
        assert_eq!(t.approach(3600), (92, true));
        assert_eq!(t.approach(2400), (61, true));
        // Never closer than FINE sends apart, nor farther than the regular
        // polls.
        assert_eq!(t.approach(0), (FINE, true));
        t.every = MIN_EVERY;
        let (gap, armed) = t.approach(0);
        assert!(gap < FINE && armed, "{gap}");
        t.every = 1024;
        // From two regular gaps away, the armed step in a few polls.
        let mut ahead: u64 = 60_000;
        let mut polls = 0;
        loop {
            let (gap, armed) = t.approach(ahead);
            polls += 1;
            if armed {
                break;
            }
            ahead -= ahead.min(gap * 30_000 / 1024);
        }
        assert!(polls <= 12, "{polls} polls");
    }

    #[test]
    fn poll_gaps_are_spread_around_the_mean() {
        let mut t = SelfTiming::new(
            Box::new(Nothing),
            Duration::from_micros(10) * POLLS_PER_INTERVAL,
            0,
        );
        let gaps: Vec<u64> = (0..4000).map(|_| t.next_gap()).collect();
        assert!(gaps.iter().all(|&g| (512..1536).contains(&g)), "{gaps:?}");
        let mean = gaps.iter().sum::<u64>() as f64 / gaps.len() as f64;
        assert!((mean - 1024.0).abs() < 30.0, "{mean}");
        let distinct: std::collections::BTreeSet<_> = gaps.iter().collect();
        assert!(distinct.len() > 500, "{}", distinct.len());
    }
}
