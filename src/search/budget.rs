//! What every search rule's round loop asks before a round: may it run? One budget and one
//! answer for all rules and both backends, so that the CPU and the GPU stop at the same round
//! for the same reason.

/// Rounds at most (bisection depth: 64 dimensions of 2^-52 relative splits each).
pub const MAX_ROUNDS: usize = 4000;

/// Why a search ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// The rule's goal is met: the minimum's enclosure is as narrow as asked
    /// (`upper - lower <= tol`), or every live box of an exclusion is final.
    Done,
    /// The next round would have evaluated more boxes than the budget allows.
    Budget,
    /// The next round's boxes would not fit the memory set aside for them (the device's), or
    /// could not be allocated (the host's).
    Memory,
    /// [`MAX_ROUNDS`] rounds.
    Rounds,
}

/// A search's spending: rounds run and boxes evaluated, against at most `max_boxes` boxes and
/// [`MAX_ROUNDS`] rounds.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Budget {
    max_boxes: u64,
    rounds: usize,
    boxes: u64,
}

impl Budget {
    /// Nothing spent yet, at most `max_boxes` boxes.
    pub(crate) fn new(max_boxes: u64) -> Budget {
        Budget {
            max_boxes,
            rounds: 0,
            boxes: 0,
        }
    }

    /// Why a round of `n` boxes may not run (`None`: it may). Memory is the backend's to tell.
    pub(crate) fn refuses(&self, n: u64) -> Option<Ended> {
        if self.rounds >= MAX_ROUNDS {
            Some(Ended::Rounds)
        } else if self.boxes.saturating_add(n) > self.max_boxes {
            Some(Ended::Budget)
        } else {
            None
        }
    }

    /// A round of `n` boxes ran.
    pub(crate) fn spend(&mut self, n: u64) {
        self.rounds += 1;
        self.boxes += n;
    }

    /// The most boxes the search may evaluate.
    pub(crate) fn max_boxes(&self) -> u64 {
        self.max_boxes
    }

    /// Rounds run.
    pub(crate) fn rounds(&self) -> usize {
        self.rounds
    }

    /// Boxes evaluated.
    pub(crate) fn boxes(&self) -> u64 {
        self.boxes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_runs_while_rounds_and_boxes_are_left() {
        let mut b = Budget::new(10);
        assert_eq!(b.refuses(10), None);
        assert_eq!(b.refuses(11), Some(Ended::Budget));
        b.spend(4);
        assert_eq!((b.rounds(), b.boxes()), (1, 4));
        assert_eq!(b.refuses(6), None);
        assert_eq!(b.refuses(7), Some(Ended::Budget));
        assert_eq!(b.refuses(u64::MAX), Some(Ended::Budget));
        for _ in 1..MAX_ROUNDS {
            b.spend(0);
        }
        assert_eq!(b.refuses(0), Some(Ended::Rounds));
    }
}
