//! Which backend runs a search's round, for evaluators made with `BackendChoice::Auto` that got
//! a GPU. A GPU round costs a fixed ~50 µs (kernel launches and the read of the round's
//! counters) whatever its size; a CPU round a few microseconds plus its boxes' evaluation. So a
//! small search (the six-hump camel's branch and bound: 415 boxes in 29 rounds) is several
//! times faster on the CPU and a large one (millions of boxes a round) far faster on the GPU.
//! Such a search starts on the CPU, times its rounds ([`Pace`]) and hands its work list to the
//! GPU before the first round the CPU is predicted to take longer than [`GPU_ROUND_SECONDS`],
//! twice in a row, the cost per box being the least of the last three rounds' (so that rounds
//! slowed by the host do not move it). An evaluator made with
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

/// The CPU's rounds so far, as a fixed cost (the fastest round) and a cost per box, which
/// predict the next round's time from its size. The cost per box is the least of the last
/// [`WINDOW`] rounds' (each round's time beyond the fixed cost, per box): a round or two slowed
/// by the host (a thread descheduled, a page fault) does not make a small search look large —
/// on an H200's host, 2 of 20 processes of the six-hump camel on `auto` had handed over on two
/// such rounds, one taking 349 ms for its first GPU round's module load (run 49 of
/// docs/gpu-runs.md) — while a growing search's rounds all cost their boxes. The first round
/// recorded is not counted: it pays for what a process or an evaluator does once (the
/// evaluator's plan, the threads' register files).
#[derive(Debug)]
pub(crate) struct Pace {
    /// Whether the first round was recorded (and left out).
    started: bool,
    floor: f64,
    /// The last rounds recorded, (boxes, seconds), the latest at `next - 1` (mod [`WINDOW`]).
    recent: [Option<(usize, f64)>; WINDOW],
    next: usize,
    /// Rounds in a row predicted slower than the GPU's.
    slower: u32,
}

/// Rounds whose least cost per box predicts the next round's.
const WINDOW: usize = 3;

impl Pace {
    pub(crate) fn new() -> Pace {
        Pace {
            started: false,
            floor: f64::INFINITY,
            recent: [None; WINDOW],
            next: 0,
            slower: 0,
        }
    }

    /// Records a CPU round of `n` boxes that took `seconds` (the first one is left out).
    pub(crate) fn record(&mut self, n: usize, seconds: f64) {
        if !std::mem::replace(&mut self.started, true) {
            return;
        }
        self.floor = self.floor.min(seconds);
        self.recent[self.next] = Some((n.max(1), seconds));
        self.next = (self.next + 1) % WINDOW;
    }

    /// The least cost per box of the recent rounds.
    fn per_box(&self) -> f64 {
        self.recent
            .iter()
            .flatten()
            .map(|&(n, t)| (t - self.floor).max(0.0) / n as f64)
            .fold(f64::INFINITY, f64::min)
    }

    /// Whether the next round, of `n` boxes, should run on the GPU: predicted slower on the
    /// CPU than [`GPU_ROUND_SECONDS`], as was the one before.
    pub(crate) fn hand_over(&mut self, n: usize) -> bool {
        if !self.floor.is_finite() {
            // No round timed yet.
            return false;
        }
        if self.floor + self.per_box() * n as f64 > GPU_ROUND_SECONDS {
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
        // Rounds of 4, 8, 16 and 32 boxes: 10 µs and 0.25 µs a box beyond the first.
        p.record(4, 10e-6);
        assert!(!p.hand_over(8));
        p.record(8, 12e-6);
        p.record(16, 14e-6);
        // The 4-box round (no cost per box beyond the fixed one) is still among the last three.
        assert!(!p.hand_over(100_000));
        p.record(32, 18e-6);
        // 10 µs + 16 boxes at 0.25 µs.
        assert!(!p.hand_over(16));
        // 10 µs + 160 boxes at 0.25 µs = 50 µs: not above the GPU's round.
        assert!(!p.hand_over(160));
        assert!(!p.hand_over(1000));
        assert!(p.hand_over(1000));
        // A fast round in between starts the count again.
        p.record(64, 26e-6);
        assert!(!p.hand_over(16));
        assert!(!p.hand_over(100_000));
        assert!(p.hand_over(100_000));
    }

    /// A small search's rounds slowed by the host, two in a row, do not hand it over; a third
    /// and a fourth (the CPU slow for good) do.
    #[test]
    fn two_slow_rounds_of_a_small_search_do_not_hand_it_over() {
        let mut p = Pace::new();
        p.record(8, 1.0);
        for _ in 0..5 {
            p.record(16, 25e-6);
            assert!(!p.hand_over(16));
        }
        p.record(16, 300e-6);
        assert!(!p.hand_over(16));
        p.record(16, 300e-6);
        assert!(!p.hand_over(16));
        p.record(16, 300e-6);
        assert!(!p.hand_over(16));
        p.record(16, 300e-6);
        assert!(p.hand_over(16));
    }
}
