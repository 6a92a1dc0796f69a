//! A progress line on stderr for long runs: while a program runs under a
//! profiler, a thread says every second how long it has been running (on a
//! terminal, one line rewritten in place; otherwise one line every ten
//! seconds), starting after two seconds so short runs stay quiet
//! ([`Ticker`]); an experiment's own progress lines, on a terminal only
//! ([`status_line`]).

use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The running ticker; [`Ticker::finish`] stops it and clears its line.
pub(crate) struct Ticker {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<bool>>,
}

impl Ticker {
    /// Start saying `what: running TARGET, N s`.
    pub(crate) fn start(what: &str, target: &str) -> Ticker {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let label = format!("{what}: running {target}");
        let thread = std::thread::Builder::new()
            .name("lupa-progress".into())
            .spawn(move || {
                let tty = std::io::stderr().is_terminal();
                let t0 = Instant::now();
                let mut printed = false;
                let mut next = Duration::from_secs(2);
                while !flag.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(100));
                    let t = t0.elapsed();
                    if t >= next {
                        let mut err = std::io::stderr().lock();
                        if tty {
                            let _ = write!(err, "\r{label}, {} s ", t.as_secs());
                            next += Duration::from_secs(1);
                        } else {
                            let _ = writeln!(err, "{label}, {} s", t.as_secs());
                            next += Duration::from_secs(10);
                        }
                        let _ = err.flush();
                        printed = tty;
                    }
                }
                printed
            })
            .ok();
        Ticker { stop, thread }
    }

    /// Stop, clearing the line on a terminal.
    pub(crate) fn finish(mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take()
            && let Ok(true) = t.join()
        {
            let _ = write!(std::io::stderr(), "\r\x1b[2K");
        }
    }
}

/// A progress line, rewritten in place on a terminal (nothing otherwise);
/// an empty `msg` clears it.
pub(crate) fn status_line(msg: &str) {
    if std::io::stderr().is_terminal() {
        eprint!("\r\x1b[2K{msg}");
    }
}
