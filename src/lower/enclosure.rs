//! Operations on an argument's enclosure, not on its points: IEEE 1788's numeric functions
//! (inf, sup, mid, rad, wid, mag, mig; §10.5.9) and its cancellative subtraction (cancelMinus,
//! §9.2). Each computes from the bounds the program holds for its argument, so on one box it
//! is a number (or an interval) that does not vary with the point; the expression around it
//! treats that as a constant. Rounding is the standard's: mid to nearest, rad and wid up, the
//! others exact; in the program's precision.
//!
//! A number is held as the point interval `[v, v]`; an infinite one (the width of an unbounded
//! interval) as the reals beyond every finite float, `[max, inf]` or `[-inf, -max]`, so that
//! arithmetic on it stays an interval operation; NaN (the standard's mid, rad, wid, mag and
//! mig of the empty set) as empty. The standard's inf and sup of the empty set are +inf and
//! -inf, so `inf([empty])` is `[max, inf]`.

use super::{Iv, Lowering};
use crate::ir::NumericFn;
use crate::scalar::{Cmp, Round, Value};

impl Lowering {
    /// The largest finite float of the program's precision.
    fn largest_finite(&mut self) -> Value {
        let max = super::power::ranges(self.b.precision()).max;
        self.b.constant(max)
    }

    /// Number `v` as an interval (see the module documentation).
    fn number(&mut self, v: Value) -> Iv {
        let max = self.largest_finite();
        let neg_max = self.b.neg(max);
        let pinf = self.b.constant(f64::INFINITY);
        let ninf = self.b.constant(f64::NEG_INFINITY);
        let above = self.b.cmp(Cmp::Eq, v, pinf);
        let below = self.b.cmp(Cmp::Eq, v, ninf);
        Iv {
            lo: self.b.select(above, max, v),
            hi: self.b.select(below, neg_max, v),
        }
    }

    /// `f(a)` as an interval.
    pub(super) fn numeric(&mut self, f: NumericFn, a: Iv) -> Iv {
        let v = match f {
            // The standard's bounds of the empty set: inf = +inf, sup = -inf.
            NumericFn::Inf => {
                let empty = self.b.is_nan(a.lo);
                let pinf = self.b.constant(f64::INFINITY);
                self.b.select(empty, pinf, a.lo)
            }
            NumericFn::Sup => {
                let empty = self.b.is_nan(a.hi);
                let ninf = self.b.constant(f64::NEG_INFINITY);
                self.b.select(empty, ninf, a.hi)
            }
            NumericFn::Mid => self.midpoint_1788(a),
            // hi - lo rounded up: inf where a bound is infinite, NaN where a is empty.
            NumericFn::Wid => self.b.sub(a.hi, a.lo, Round::Up),
            // The larger distance from the midpoint to an end, rounded up (infinite where an
            // end is: the midpoint is finite).
            NumericFn::Rad => {
                let m = self.midpoint_1788(a);
                let below = self.b.sub(m, a.lo, Round::Up);
                let above = self.b.sub(a.hi, m, Round::Up);
                self.b.max(below, above)
            }
            // max and min ignore one NaN; both bounds are NaN exactly when a is empty.
            NumericFn::Mag => {
                let l = self.b.abs(a.lo);
                let h = self.b.abs(a.hi);
                self.b.max(l, h)
            }
            NumericFn::Mig => {
                let l = self.b.abs(a.lo);
                let h = self.b.abs(a.hi);
                let least = self.b.min(l, h);
                let z = self.b.zero();
                let lo_le = self.b.cmp(Cmp::Le, a.lo, z);
                let hi_ge = self.b.cmp(Cmp::Ge, a.hi, z);
                let holds_zero = self.b.and(lo_le, hi_ge);
                self.b.select(holds_zero, z, least)
            }
        };
        self.number(v)
    }

    /// IEEE 1788's midpoint: (lo + hi) / 2 rounded to nearest; 0 for the whole line, the
    /// largest finite float toward an infinite end (`-max` for `[-inf, b]`), NaN for empty.
    ///
    /// `s = lo + hi` rounded to nearest, halved: where |s| >= 2^(emin+1) halving is exact and
    /// commutes with rounding to nearest; below, the sum of two floats is exact (a multiple of
    /// the smallest subnormal below 2^(emin+1) fits), so the halving is the one rounding.
    /// Where s overflows, both bounds are at least 2^(emax-53)-ish in magnitude (their sum
    /// passes the largest float), their halves are exact and `lo/2 + hi/2` rounds once.
    fn midpoint_1788(&mut self, a: Iv) -> Value {
        let n = Round::Nearest;
        let half = self.b.constant(0.5);
        let s = self.b.add(a.lo, a.hi, n);
        let halved = self.b.mul(s, half, n);
        let l = self.b.mul(a.lo, half, n);
        let h = self.b.mul(a.hi, half, n);
        let halves = self.b.add(l, h, n);
        let size = self.b.abs(s);
        let pinf = self.b.constant(f64::INFINITY);
        let overflow = self.b.cmp(Cmp::Eq, size, pinf);
        let finite = self.b.select(overflow, halves, halved);
        // Infinite ends (the sum is NaN for the whole line, infinite for a half line).
        let ninf = self.b.constant(f64::NEG_INFINITY);
        let max = self.largest_finite();
        let neg_max = self.b.neg(max);
        let z = self.b.zero();
        let lo_inf = self.b.cmp(Cmp::Eq, a.lo, ninf);
        let hi_inf = self.b.cmp(Cmp::Eq, a.hi, pinf);
        let m = self.b.select(hi_inf, max, finite);
        let m = self.b.select(lo_inf, neg_max, m);
        let both = self.b.and(lo_inf, hi_inf);
        self.b.select(both, z, m)
    }

    /// `cancelMinus(x, y)` (IEEE 1788 §9.2): for bounded nonempty x and y with wid(x) >=
    /// wid(y) (compared exactly), `[x.lo - y.lo, x.hi - y.hi]` rounded outward; empty where x is
    /// empty and y is empty or bounded; the whole line otherwise.
    pub(super) fn cancel_minus(&mut self, x: Iv, y: Iv) -> Iv {
        let x_empty = self.b.is_nan(x.lo);
        let y_empty = self.b.is_nan(y.lo);
        let x_bounded = self.bounded(x);
        let y_bounded = self.bounded(y);
        // wid(x) >= wid(y) exactly: x.hi - y.hi >= x.lo - y.lo.
        let wide_enough = self.exactly_at_least((x.hi, y.hi), (x.lo, y.lo));
        let both_bounded = self.b.and(x_bounded, y_bounded);
        let cancels = self.b.and(both_bounded, wide_enough);
        let lo = self.b.sub(x.lo, y.lo, Round::Down);
        let hi = self.b.sub(x.hi, y.hi, Round::Up);
        let ninf = self.b.constant(f64::NEG_INFINITY);
        let pinf = self.b.constant(f64::INFINITY);
        let lo = self.b.select(cancels, lo, ninf);
        let hi = self.b.select(cancels, hi, pinf);
        let y_not_unbounded = self.b.or(y_empty, y_bounded);
        let empty = self.b.and(x_empty, y_not_unbounded);
        self.empty_if(empty, Iv { lo, hi })
    }

    /// Boolean: the exact difference `p.0 - p.1` is at least `q.0 - q.1`, for finite floats.
    ///
    /// Each difference is its rounded value s and its exact error e (TwoSum, exact where s is
    /// finite): rounding to nearest is monotone, so the larger s has the larger difference,
    /// and equal s are told apart by e. Where an s overflows, the same test runs on halves:
    /// an overflowing difference of two floats has both of them at least 2^(emax - p) in
    /// magnitude or so, so halving them is exact, and a bound halved inexactly (a subnormal)
    /// moves its difference by less than the gap an overflow leaves between the two.
    fn exactly_at_least(&mut self, p: (Value, Value), q: (Value, Value)) -> Value {
        let (sp, ep) = self.two_difference(p.0, p.1);
        let (sq, eq) = self.two_difference(q.0, q.1);
        let full = self.at_least(sp, ep, sq, eq);
        let half = self.b.constant(0.5);
        let n = Round::Nearest;
        let hp = (self.b.mul(p.0, half, n), self.b.mul(p.1, half, n));
        let hq = (self.b.mul(q.0, half, n), self.b.mul(q.1, half, n));
        let (hsp, hep) = self.two_difference(hp.0, hp.1);
        let (hsq, heq) = self.two_difference(hq.0, hq.1);
        let halved = self.at_least(hsp, hep, hsq, heq);
        let pinf = self.b.constant(f64::INFINITY);
        let ap = self.b.abs(sp);
        let aq = self.b.abs(sq);
        let op = self.b.cmp(Cmp::Eq, ap, pinf);
        let oq = self.b.cmp(Cmp::Eq, aq, pinf);
        let overflow = self.b.or(op, oq);
        // Booleans have no select: (overflow and halved) or (not overflow and full).
        let a = self.b.and(overflow, halved);
        let no = self.b.not(overflow);
        let b = self.b.and(no, full);
        self.b.or(a, b)
    }

    /// Boolean: `s1 + e1 >= s2 + e2` for TwoSum pairs (s the rounded sums).
    fn at_least(&mut self, s1: Value, e1: Value, s2: Value, e2: Value) -> Value {
        let gt = self.b.cmp(Cmp::Gt, s1, s2);
        let eq = self.b.cmp(Cmp::Eq, s1, s2);
        let ge = self.b.cmp(Cmp::Ge, e1, e2);
        let tie = self.b.and(eq, ge);
        self.b.or(gt, tie)
    }

    /// `a - b` rounded to nearest and its exact error (Knuth's TwoSum on a and -b).
    fn two_difference(&mut self, a: Value, b: Value) -> (Value, Value) {
        let n = Round::Nearest;
        // TwoSum(a, c) with c = -b: s = a + c, c' = s - a, a' = s - c', e = (a - a') + (c - c').
        // Here nc = -c' = a - s, a' = s + nc, c - c' = nc - b: each the same rounding of the
        // same exact value as TwoSum's, negated where it says.
        let s = self.b.sub(a, b, n);
        let nc = self.b.sub(a, s, n);
        let av = self.b.add(s, nc, n);
        let dc = self.b.sub(nc, b, n);
        let da = self.b.sub(a, av, n);
        let e = self.b.add(da, dc, n);
        (s, e)
    }
}
