//! Which backend runs a search's round, for evaluators made with `BackendChoice::Auto` that got
//! a GPU. A GPU round costs a fixed ~50 µs (kernel launches and the read of the round's
//! counters) whatever its size; a CPU round a few microseconds plus its boxes' evaluation. So a
//! small search (the six-hump camel's branch and bound: 415 boxes in 29 rounds) is several
//! times faster on the CPU and a large one (millions of boxes a round) far faster on the GPU.
//! Such a search starts on the CPU, times its rounds ([`Pace`]) and hands its work list to the
//! GPU before the first round the CPU is predicted to take longer than [`GPU_ROUND_SECONDS`],
//! twice in a row (so that one slow round does not move it). An evaluator made with
//! `BackendChoice::Gpu` runs every round on the GPU. The choice depends on timing; the result
//! does not where the two backends agree bit for bit (no point function), and is rigorous
//! either way.

use crate::{Backend, BackendChoice, Evaluator};

/// When the CPU's rounds hand the search over to the GPU.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Handover {
    /// Never: the CPU runs every round.
    Never,
    /// By the measured pace of the CPU's rounds ([`Pace`]).
    Measured,
    /// Before the round of this index (0: the first).
    AtRound(usize),
}

impl Handover {
    /// The rule of a search on `eval`: `None` where every round runs on the GPU (an evaluator
    /// made with `Gpu`), [`Handover::Never`] on a CPU evaluator, [`Handover::Measured`] on a
    /// GPU evaluator made with `Auto`.
    pub(crate) fn of(eval: &Evaluator) -> Option<Handover> {
        match (eval.backend(), eval.choice()) {
            (Backend::Cpu, _) => Some(Handover::Never),
            (Backend::Gpu, BackendChoice::Auto) => Some(Handover::Measured),
            (Backend::Gpu, _) => None,
        }
    }

    /// Whether the next round, of `n` boxes after `rounds` rounds, goes to the GPU.
    pub(crate) fn now(self, pace: &mut Pace, rounds: usize, n: usize) -> bool {
        match self {
            Handover::Never => false,
            Handover::AtRound(r) => rounds >= r,
            Handover::Measured => pace.hand_over(n),
        }
    }
}

/// The CPU twin of a GPU evaluator (`None` for a CPU evaluator, which runs the CPU's rounds
/// itself): `twin(eval).as_ref().unwrap_or(eval)` runs them.
pub(crate) fn twin(eval: &Evaluator) -> Option<Evaluator> {
    (eval.backend() == Backend::Gpu).then(|| eval.cpu_twin())
}

/// What a GPU round costs beyond evaluating its boxes: four kernel launches and the read of the
/// round's counters, measured on an H200 (branch and bound of the six-hump camel, rounds of 4 to
/// 68 boxes: 45-50 µs a round; docs/gpu-runs.md, run 25). The evaluation itself runs at
/// billions of boxes a second there, so this is the GPU's round for the sizes where the choice
/// is close.
pub const GPU_ROUND_SECONDS: f64 = 50e-6;

/// The CPU's rounds so far, as a fixed cost (the fastest round) and a cost per box (the last
/// round's time beyond that), which predict the next round's time from its size. The first
/// round recorded is not counted: it pays for what a process or an evaluator does once (the
/// evaluator's plan, the threads' register files).
#[derive(Debug)]
pub(crate) struct Pace {
    /// Whether the first round was recorded (and left out).
    started: bool,
    floor: f64,
    per_box: f64,
    /// Rounds in a row predicted slower than the GPU's.
    slower: u32,
}

impl Pace {
    pub(crate) fn new() -> Pace {
        Pace {
            started: false,
            floor: f64::INFINITY,
            per_box: 0.0,
            slower: 0,
        }
    }

    /// A round of `n` boxes took `seconds`.
    pub(crate) fn record(&mut self, n: usize, seconds: f64) {
        if !std::mem::replace(&mut self.started, true) {
            return;
        }
        self.floor = self.floor.min(seconds);
        self.per_box = (seconds - self.floor) / n as f64;
    }

    /// Whether the next round, of `n` boxes, should run on the GPU: predicted slower on the
    /// CPU than [`GPU_ROUND_SECONDS`], as was the one before.
    pub(crate) fn hand_over(&mut self, n: usize) -> bool {
        if !self.floor.is_finite() {
            // No round timed yet.
            return false;
        }
        if self.floor + self.per_box * n as f64 > GPU_ROUND_SECONDS {
            self.slower += 1;
        } else {
            self.slower = 0;
        }
        self.slower >= 2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pace_hands_over_after_two_slow_predictions() {
        let mut p = Pace::new();
        // Nothing timed yet: no prediction; nor after the first round, which is left out.
        assert!(!p.hand_over(1 << 30));
        p.record(1, 1.0);
        assert!(!p.hand_over(1 << 30));
        p.record(4, 10e-6);
        assert!(!p.hand_over(8));
        p.record(8, 12e-6);
        // 10 µs + 16 boxes at 0.25 µs.
        assert!(!p.hand_over(16));
        // 10 µs + 160 boxes at 0.25 µs = 50 µs: not above the GPU's round.
        assert!(!p.hand_over(160));
        assert!(!p.hand_over(1000));
        assert!(p.hand_over(1000));
        // A fast round in between starts the count again.
        p.record(16, 11e-6);
        assert!(!p.hand_over(16));
        assert!(!p.hand_over(100_000));
        assert!(p.hand_over(100_000));
    }
}
