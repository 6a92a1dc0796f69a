//! The sampler's system calls for the VM thread's CPU clock (Linux; elsewhere
//! the clock is absent and [`ThreadCpuClock::of_current_thread`] answers
//! `None`).
//!
//! Also the self-timed sampler's stamp counter ([`stamp`]: the time stamp
//! counter).
//!
//! This is one of the two modules of the profiler layer allowed `unsafe` (the
//! other is `native.rs`; ARCHITECTURE.md, "Where `unsafe` lives"): each block is a single libc call on memory it owns,
//! or the `rdtsc` instruction, with its `SAFETY:` argument beside it.

#![allow(unsafe_code)]

/// A CPU-time clock of one thread, readable from any thread while that thread
/// lives (POSIX `pthread_getcpuclockid`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ThreadCpuClock {
    #[cfg(target_os = "linux")]
    id: libc::clockid_t,
}

impl ThreadCpuClock {
    /// The CPU clock of the calling thread (`None` where the system has none).
    pub(crate) fn of_current_thread() -> Option<ThreadCpuClock> {
        #[cfg(target_os = "linux")]
        {
            let mut id: libc::clockid_t = 0;
            // SAFETY: `pthread_self` is always valid for the calling thread, and
            // `id` is a live local the call writes one clockid_t into.
            let rc = unsafe { libc::pthread_getcpuclockid(libc::pthread_self(), &mut id) };
            let clock = ThreadCpuClock { id };
            (rc == 0 && clock.read_ns().is_some()).then_some(clock)
        }
        #[cfg(not(target_os = "linux"))]
        {
            None
        }
    }

    /// The thread's CPU time in nanoseconds. The caller keeps the thread alive
    /// (the VM thread joins the sampler before it ends).
    pub(crate) fn read_ns(&self) -> Option<u64> {
        #[cfg(target_os = "linux")]
        {
            let mut ts = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: `ts` is a live local the call writes one timespec into; an
            // invalid clock id is an error return (EINVAL), never undefined.
            let rc = unsafe { libc::clock_gettime(self.id, &mut ts) };
            (rc == 0).then(|| ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
        }
        #[cfg(not(target_os = "linux"))]
        {
            None
        }
    }
}

/// A counter that grows at a constant rate, cheap to read: the time stamp
/// counter on x86-64 (a few instructions, no system call; modern x86-64
/// processors keep it invariant across frequency changes and cores), the
/// monotonic clock's nanoseconds elsewhere. The self-timed sampler gives it to
/// the VM, which calibrates it against the clock (`lupa_vm` `obs/self_timed.rs`).
pub(crate) fn stamp() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: `rdtsc` reads a register; it touches no memory and exists on
        // every x86-64 processor.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        static ORIGIN: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
        ORIGIN
            .get_or_init(std::time::Instant::now)
            .elapsed()
            .as_nanos() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stamp_counter_grows() {
        let a = stamp();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let b = stamp();
        assert!(b > a, "{a} then {b}");
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn the_cpu_clock_of_a_busy_thread_advances_and_is_readable_from_another() {
        let clock = ThreadCpuClock::of_current_thread().expect("Linux has thread CPU clocks");
        let t0 = clock.read_ns().expect("readable");
        let mut x = 0u64;
        while clock.read_ns().unwrap_or(0) < t0 + 2_000_000 {
            x = x.wrapping_add(1);
        }
        assert!(x > 0);
        let here = clock.read_ns().expect("readable");
        let there = std::thread::scope(|s| s.spawn(|| clock.read_ns()).join())
            .expect("joined")
            .expect("readable from another thread");
        assert!(there >= here, "{there} < {here}");
    }
}
