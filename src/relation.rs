//! IEEE 1788's comparisons of intervals: the boolean functions (§10.5.10 and the recommended
//! ones of §10.6.3: `isCommonInterval`, `isSingleton`, `isMember`) and the overlap relation
//! (§10.6.4), on [`Interval`] and, where NaI makes every comparison false, on
//! [`DecoratedInterval`]. They compare bounds exactly (`-0` equals `+0`); the empty set is
//! a subset of everything and precedes everything, as the standard says. They are library
//! calls, not expression functions (an expression's values are intervals, not booleans):
//! `ivjit relate A [B]` prints them, and the Python package has them.

use crate::decoration::DecoratedInterval;
use crate::interval::Interval;
use std::fmt;

/// How two intervals lie relative to each other (IEEE 1788 §10.6.4, Table 10.7; after
/// Allen's interval relations): one state for every pair, the empty set included.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Overlap {
    /// Both are empty.
    BothEmpty,
    /// The first is empty, the second is not.
    FirstEmpty,
    /// The second is empty, the first is not.
    SecondEmpty,
    /// `a.hi < b.lo`.
    Before,
    /// `a.lo < a.hi = b.lo < b.hi`.
    Meets,
    /// `a.lo < b.lo < a.hi < b.hi`.
    Overlaps,
    /// `a.lo = b.lo`, `a.hi < b.hi`.
    Starts,
    /// `b.lo < a.lo`, `a.hi < b.hi`.
    ContainedBy,
    /// `b.lo < a.lo`, `a.hi = b.hi`.
    Finishes,
    /// Equal bounds.
    Equals,
    /// `a.lo < b.lo`, `a.hi = b.hi`.
    FinishedBy,
    /// `a.lo < b.lo`, `b.hi < a.hi`.
    Contains,
    /// `a.lo = b.lo`, `b.hi < a.hi`.
    StartedBy,
    /// `b.lo < a.lo < b.hi < a.hi`.
    OverlappedBy,
    /// `b.lo < b.hi = a.lo < a.hi`.
    MetBy,
    /// `b.hi < a.lo`.
    After,
}

impl Overlap {
    /// The standard's name (`bothEmpty`, `containedBy`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Overlap::BothEmpty => "bothEmpty",
            Overlap::FirstEmpty => "firstEmpty",
            Overlap::SecondEmpty => "secondEmpty",
            Overlap::Before => "before",
            Overlap::Meets => "meets",
            Overlap::Overlaps => "overlaps",
            Overlap::Starts => "starts",
            Overlap::ContainedBy => "containedBy",
            Overlap::Finishes => "finishes",
            Overlap::Equals => "equals",
            Overlap::FinishedBy => "finishedBy",
            Overlap::Contains => "contains",
            Overlap::StartedBy => "startedBy",
            Overlap::OverlappedBy => "overlappedBy",
            Overlap::MetBy => "metBy",
            Overlap::After => "after",
        }
    }
}

impl fmt::Display for Overlap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A boolean function of one decorated interval.
pub type Predicate = fn(&DecoratedInterval) -> bool;

/// A boolean function of two decorated intervals.
pub type Relation = fn(&DecoratedInterval, &DecoratedInterval) -> bool;

/// IEEE 1788's boolean functions of one interval, by the standard's names (what `ivjit relate`
/// and the Python package print).
pub const PREDICATES: [(&str, Predicate); 5] = [
    ("isEmpty", DecoratedInterval::is_empty),
    ("isEntire", DecoratedInterval::is_entire),
    ("isNaI", DecoratedInterval::is_nai),
    ("isCommonInterval", DecoratedInterval::is_common),
    ("isSingleton", DecoratedInterval::is_singleton),
];

/// IEEE 1788's boolean functions of two intervals, by the standard's names.
pub const RELATIONS: [(&str, Relation); 8] = [
    ("equal", DecoratedInterval::equal),
    ("subset", DecoratedInterval::subset),
    ("interior", DecoratedInterval::interior),
    ("disjoint", DecoratedInterval::disjoint),
    ("less", DecoratedInterval::less),
    ("strictLess", DecoratedInterval::strict_less),
    ("precedes", DecoratedInterval::precedes),
    ("strictPrecedes", DecoratedInterval::strict_precedes),
];

impl Interval {
    /// `isEntire`: the whole real line.
    pub fn is_entire(&self) -> bool {
        self.lo == f64::NEG_INFINITY && self.hi == f64::INFINITY
    }

    /// `isCommonInterval`: nonempty and bounded.
    pub fn is_common(&self) -> bool {
        !self.is_empty() && self.lo.is_finite() && self.hi.is_finite()
    }

    /// `isSingleton`: exactly one real number.
    pub fn is_singleton(&self) -> bool {
        !self.is_empty() && self.lo == self.hi
    }

    /// `isMember(x, self)`: the real number `x` lies in the interval (an infinity or NaN is
    /// no real number, so never).
    pub fn is_member(&self, x: f64) -> bool {
        x.is_finite() && self.lo <= x && x <= self.hi
    }

    /// `equal`: the same set.
    pub fn equal(&self, b: &Interval) -> bool {
        match (self.is_empty(), b.is_empty()) {
            (true, true) => true,
            (false, false) => self.lo == b.lo && self.hi == b.hi,
            _ => false,
        }
    }

    /// `subset`: every point of `self` lies in `b` (the empty set is a subset of all).
    pub fn subset(&self, b: &Interval) -> bool {
        self.is_empty() || (!b.is_empty() && b.lo <= self.lo && self.hi <= b.hi)
    }

    /// `interior`: every point of `self` lies in the interior of `b` (an infinite end of b is
    /// open).
    pub fn interior(&self, b: &Interval) -> bool {
        if self.is_empty() {
            return true;
        }
        !b.is_empty()
            && (b.lo < self.lo || b.lo == f64::NEG_INFINITY)
            && (self.hi < b.hi || b.hi == f64::INFINITY)
    }

    /// `disjoint`: no point in common.
    pub fn disjoint(&self, b: &Interval) -> bool {
        self.is_empty() || b.is_empty() || self.hi < b.lo || b.hi < self.lo
    }

    /// `less` (weakly less, ≤): `self.lo <= b.lo` and `self.hi <= b.hi`; the empty set is
    /// less than itself only.
    pub fn less(&self, b: &Interval) -> bool {
        match (self.is_empty(), b.is_empty()) {
            (true, true) => true,
            (false, false) => self.lo <= b.lo && self.hi <= b.hi,
            _ => false,
        }
    }

    /// `strictLess`: `less` with strict comparisons, except between equal infinite ends.
    pub fn strict_less(&self, b: &Interval) -> bool {
        match (self.is_empty(), b.is_empty()) {
            (true, true) => true,
            (false, false) => {
                (self.lo < b.lo || (self.lo == f64::NEG_INFINITY && b.lo == f64::NEG_INFINITY))
                    && (self.hi < b.hi || (self.hi == f64::INFINITY && b.hi == f64::INFINITY))
            }
            _ => false,
        }
    }

    /// `precedes`: every point of `self` is at most every point of `b` (true where either is
    /// empty).
    pub fn precedes(&self, b: &Interval) -> bool {
        self.is_empty() || b.is_empty() || self.hi <= b.lo
    }

    /// `strictPrecedes`: every point of `self` is below every point of `b`.
    pub fn strict_precedes(&self, b: &Interval) -> bool {
        self.is_empty() || b.is_empty() || self.hi < b.lo
    }

    /// The overlap state of `self` and `b`.
    pub fn overlap(&self, b: &Interval) -> Overlap {
        match (self.is_empty(), b.is_empty()) {
            (true, true) => return Overlap::BothEmpty,
            (true, false) => return Overlap::FirstEmpty,
            (false, true) => return Overlap::SecondEmpty,
            _ => {}
        }
        let (a1, a2, b1, b2) = (self.lo, self.hi, b.lo, b.hi);
        if a2 < b1 {
            Overlap::Before
        } else if b2 < a1 {
            Overlap::After
        } else if a1 == b1 && a2 == b2 {
            Overlap::Equals
        } else if a1 == b1 {
            if a2 < b2 {
                Overlap::Starts
            } else {
                Overlap::StartedBy
            }
        } else if a2 == b2 {
            if b1 < a1 {
                Overlap::Finishes
            } else {
                Overlap::FinishedBy
            }
        } else if a2 == b1 {
            // a1 < a2 (else a1 = b1) and b1 < b2 (else a2 = b2).
            Overlap::Meets
        } else if b2 == a1 {
            Overlap::MetBy
        } else if a1 < b1 {
            if a2 < b2 {
                Overlap::Overlaps
            } else {
                Overlap::Contains
            }
        } else if b2 < a2 {
            Overlap::OverlappedBy
        } else {
            Overlap::ContainedBy
        }
    }
}

impl DecoratedInterval {
    /// The comparison `f` of the intervals, false where either is NaI (IEEE 1788 §12.12.9).
    fn both(&self, b: &DecoratedInterval, f: impl Fn(&Interval, &Interval) -> bool) -> bool {
        !self.is_nai() && !b.is_nai() && f(&self.interval, &b.interval)
    }

    /// [`Interval::is_empty`]; false for NaI.
    pub fn is_empty(&self) -> bool {
        !self.is_nai() && self.interval.is_empty()
    }

    /// [`Interval::is_entire`]; false for NaI.
    pub fn is_entire(&self) -> bool {
        !self.is_nai() && self.interval.is_entire()
    }

    /// [`Interval::is_common`]; false for NaI.
    pub fn is_common(&self) -> bool {
        !self.is_nai() && self.interval.is_common()
    }

    /// [`Interval::is_singleton`]; false for NaI.
    pub fn is_singleton(&self) -> bool {
        !self.is_nai() && self.interval.is_singleton()
    }

    /// [`Interval::is_member`]; false for NaI.
    pub fn is_member(&self, x: f64) -> bool {
        !self.is_nai() && self.interval.is_member(x)
    }

    /// [`Interval::equal`]; false where either is NaI.
    pub fn equal(&self, b: &DecoratedInterval) -> bool {
        self.both(b, Interval::equal)
    }

    /// [`Interval::subset`]; false where either is NaI.
    pub fn subset(&self, b: &DecoratedInterval) -> bool {
        self.both(b, Interval::subset)
    }

    /// [`Interval::interior`]; false where either is NaI.
    pub fn interior(&self, b: &DecoratedInterval) -> bool {
        self.both(b, Interval::interior)
    }

    /// [`Interval::disjoint`]; false where either is NaI.
    pub fn disjoint(&self, b: &DecoratedInterval) -> bool {
        self.both(b, Interval::disjoint)
    }

    /// [`Interval::less`]; false where either is NaI.
    pub fn less(&self, b: &DecoratedInterval) -> bool {
        self.both(b, Interval::less)
    }

    /// [`Interval::strict_less`]; false where either is NaI.
    pub fn strict_less(&self, b: &DecoratedInterval) -> bool {
        self.both(b, Interval::strict_less)
    }

    /// [`Interval::precedes`]; false where either is NaI.
    pub fn precedes(&self, b: &DecoratedInterval) -> bool {
        self.both(b, Interval::precedes)
    }

    /// [`Interval::strict_precedes`]; false where either is NaI.
    pub fn strict_precedes(&self, b: &DecoratedInterval) -> bool {
        self.both(b, Interval::strict_precedes)
    }

    /// [`Interval::overlap`]; `None` where either is NaI (the standard leaves it undefined).
    pub fn overlap(&self, b: &DecoratedInterval) -> Option<Overlap> {
        (!self.is_nai() && !b.is_nai()).then(|| self.interval.overlap(&b.interval))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iv(lo: f64, hi: f64) -> Interval {
        Interval::new(lo, hi).unwrap()
    }

    /// Each state of the overlap relation, and its mirror image: swapping the intervals gives
    /// the converse state.
    #[test]
    fn overlap_states_and_their_converses() {
        let inf = f64::INFINITY;
        let cases = [
            (iv(1.0, 2.0), iv(3.0, 4.0), Overlap::Before, Overlap::After),
            (iv(1.0, 2.0), iv(2.0, 3.0), Overlap::Meets, Overlap::MetBy),
            (
                iv(1.0, 2.0),
                iv(1.5, 2.5),
                Overlap::Overlaps,
                Overlap::OverlappedBy,
            ),
            (
                iv(1.0, 1.0),
                iv(1.0, 3.0),
                Overlap::Starts,
                Overlap::StartedBy,
            ),
            (
                iv(2.0, 2.0),
                iv(0.0, inf),
                Overlap::ContainedBy,
                Overlap::Contains,
            ),
            (
                iv(2.0, 2.0),
                iv(0.0, 2.0),
                Overlap::Finishes,
                Overlap::FinishedBy,
            ),
            (
                iv(-inf, 1.0),
                iv(-inf, 1.0),
                Overlap::Equals,
                Overlap::Equals,
            ),
            (
                Interval::EMPTY,
                iv(1.0, 2.0),
                Overlap::FirstEmpty,
                Overlap::SecondEmpty,
            ),
        ];
        for (a, b, ab, ba) in cases {
            assert_eq!(a.overlap(&b), ab, "{a} {b}");
            assert_eq!(b.overlap(&a), ba, "{b} {a}");
        }
    }

    #[test]
    fn nai_compares_false() {
        let a = DecoratedInterval::undecorated(iv(1.0, 2.0));
        let n = DecoratedInterval::NAI;
        assert!(a.subset(&a) && !a.subset(&n) && !n.subset(&a));
        assert!(!n.is_empty() && !n.is_member(1.0));
        assert_eq!(n.overlap(&a), None);
    }
}
