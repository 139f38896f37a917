//! A progress bar on stderr for long batch evaluations.
//!
//! It appears only when stderr is a terminal and only once the batch has run for a second
//! (`IVJIT_PROGRESS_AFTER_MS` changes that delay, for tests); it shows the phase (reading,
//! evaluating, writing), a bar and a count, and is erased when the batch ends, so the terminal
//! holds only what it would hold without it.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

const WIDTH: usize = 30;

pub struct Progress {
    enabled: bool,
    start: Instant,
    after: Duration,
    last_draw: Option<Instant>,
    drawn: bool,
    label: &'static str,
    total: u64,
    done: u64,
}

impl Progress {
    /// A progress bar that draws only when stderr is a terminal.
    pub fn new() -> Progress {
        let after = std::env::var("IVJIT_PROGRESS_AFTER_MS")
            .ok()
            .and_then(|s| s.parse().ok())
            .map(Duration::from_millis)
            .unwrap_or(Duration::from_secs(1));
        Progress {
            enabled: std::io::stderr().is_terminal(),
            start: Instant::now(),
            after,
            last_draw: None,
            drawn: false,
            label: "",
            total: 0,
            done: 0,
        }
    }

    /// Starts a phase of `total` steps.
    pub fn phase(&mut self, label: &'static str, total: u64) {
        self.label = label;
        self.total = total;
        self.done = 0;
        self.last_draw = None;
        self.draw();
    }

    /// Records that `done` steps of the phase are complete.
    pub fn set(&mut self, done: u64) {
        self.done = done.min(self.total);
        self.draw();
    }

    fn draw(&mut self) {
        if !self.enabled || self.start.elapsed() < self.after {
            return;
        }
        let now = Instant::now();
        let finished = self.done == self.total;
        if let Some(t) = self.last_draw {
            if !finished && now - t < Duration::from_millis(100) {
                return;
            }
        }
        self.last_draw = Some(now);
        let fraction = if self.total == 0 {
            1.0
        } else {
            self.done as f64 / self.total as f64
        };
        let filled = ((fraction * WIDTH as f64) as usize).min(WIDTH);
        let line = format!(
            "\r\x1b[2Kivjit: {:<10} [{}{}] {:>3}% {}/{} boxes",
            self.label,
            "#".repeat(filled),
            "-".repeat(WIDTH - filled),
            (fraction * 100.0) as u32,
            self.done,
            self.total
        );
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(line.as_bytes());
        let _ = err.flush();
        self.drawn = true;
    }

    /// Erases the bar (if it was drawn).
    pub fn finish(&mut self) {
        if self.drawn {
            let mut err = std::io::stderr().lock();
            let _ = err.write_all(b"\r\x1b[2K");
            let _ = err.flush();
            self.drawn = false;
        }
    }
}

impl Drop for Progress {
    /// Erases the bar on every path out, so an error message starts on a clean line.
    fn drop(&mut self) {
        self.finish();
    }
}
