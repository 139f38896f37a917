//! A progress bar on stderr for long batch evaluations (drawn by `indicatif`).
//!
//! It appears only when stderr is a terminal and only once the batch has run for a second
//! (`IVJIT_PROGRESS_AFTER_MS` changes that delay, for tests); it shows the phase (reading,
//! evaluating, writing), a bar and a count, and is erased when the batch ends, so the terminal
//! holds only what it would hold without it.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

pub struct Progress {
    bar: ProgressBar,
    /// Whether stderr is a terminal (no bar otherwise, ever).
    enabled: bool,
    start: Instant,
    after: Duration,
    shown: bool,
}

impl Progress {
    /// A progress bar that draws only when stderr is a terminal.
    pub fn new() -> Progress {
        let after = std::env::var("IVJIT_PROGRESS_AFTER_MS")
            .ok()
            .and_then(|s| s.parse().ok())
            .map(Duration::from_millis)
            .unwrap_or(Duration::from_secs(1));
        // Hidden until the delay has passed: a short batch never draws.
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
        if let Ok(style) = ProgressStyle::with_template(
            "ivjit: {msg:<10} [{bar:30}] {percent:>3}% {pos}/{len} boxes",
        ) {
            bar.set_style(style.progress_chars("#-"));
        }
        Progress {
            bar,
            enabled: std::io::stderr().is_terminal(),
            start: Instant::now(),
            after,
            shown: false,
        }
    }

    /// Starts a phase of `total` steps.
    pub fn phase(&mut self, label: &'static str, total: u64) {
        self.bar.set_message(label);
        self.bar.set_length(total);
        self.bar.set_position(0);
        self.show_when_due();
    }

    /// Records that `done` steps of the phase are complete.
    pub fn set(&mut self, done: u64) {
        self.bar
            .set_position(done.min(self.bar.length().unwrap_or(done)));
        self.show_when_due();
    }

    fn show_when_due(&mut self) {
        if self.enabled && !self.shown && self.start.elapsed() >= self.after {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
            self.shown = true;
        }
    }

    /// Erases the bar (if it was drawn).
    pub fn finish(&mut self) {
        self.bar.finish_and_clear();
    }
}

impl Drop for Progress {
    /// Erases the bar on every path out, so an error message starts on a clean line.
    fn drop(&mut self) {
        self.finish();
    }
}
