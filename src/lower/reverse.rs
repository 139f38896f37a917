//! IEEE 1788's reverse-mode operations (§10.5.4): `f_rev(c, x)` is the hull of the points t of
//! x with f(t) in c, the part of x that the equation `f(t) = c` leaves; `mulRev(b, c, x)` the
//! same for `t * b = c`. They are the backward steps of a contractor, so like every other
//! semantics they are lowered here once and every engine runs them.
//!
//! Each is built from the forward lowerings of the inverse function on `c` (sqrt for sqr, the
//! roots for the powers, acosh for cosh, division for mul), whose results enclose the inverse
//! image's pieces, intersected with x piece by piece and joined: an even function has the
//! pieces `r` and `-r`, so `sqrRev([1, 4], [0, 5])` is `[1, 2]`, not `[-2, 2]`. Every step
//! rounds outward, so the result encloses the exact set; where the inverse is correctly rounded
//! (sqrt, division) it is the tightest.

use super::{Iv, Lowering};
use crate::ir::sign::Fact;
use crate::ir::RevFn;
use crate::point::UnaryFn;
use crate::scalar::{Cmp, Round, Value};

impl Lowering {
    /// `f_rev(c, x)`.
    pub(super) fn reverse(&mut self, f: RevFn, c: Iv, x: Iv) -> Iv {
        let u = Fact::UNKNOWN;
        match f {
            RevFn::Abs => {
                let r = self.nonneg_part(c);
                self.symmetric(r, x)
            }
            RevFn::Sqr => {
                let r = self.sqrt(c, u);
                self.symmetric(r, x)
            }
            RevFn::Cosh => {
                let r = self.elementary(UnaryFn::Acosh, c, u);
                self.symmetric(r, x)
            }
            RevFn::Pown(n) => self.pown_rev(c, x, n),
        }
    }

    /// `pownRev(c, x, n)`: t of x with t^n in c; t = 0 is not in the domain of t^n for n < 0.
    fn pown_rev(&mut self, c: Iv, x: Iv, n: i64) -> Iv {
        let u = Fact::UNKNOWN;
        // The n-th root of a nonnegative (even n) or any (odd n) interval.
        let root = |l: &mut Lowering, a: Iv, m: i64| match m {
            1 => a,
            2 => l.sqrt(a, u),
            m => l.rootn(a, m, u),
        };
        match n {
            // t^0 = 1 for every t: all of x where c holds 1.
            0 => {
                let one = self.b.constant(1.0);
                let lo = self.b.cmp(Cmp::Le, c.lo, one);
                let hi = self.b.cmp(Cmp::Ge, c.hi, one);
                let holds = self.b.and(lo, hi);
                let not = self.b.not(holds);
                self.empty_if(not, x)
            }
            n if n > 0 && n % 2 == 1 => {
                let r = root(self, c, n);
                self.meet(x, r)
            }
            n if n > 0 => {
                let r = root(self, c, n);
                self.symmetric(r, x)
            }
            n => {
                // t^n = c' with t != 0 is t = c'^(1/n): rootn of negative degree, rounded
                // once (1 / c' first would overflow for a subnormal c' and lose the bound),
                // on the positive part of c (and, for odd n, the negative part: t < 0 there).
                let pos = self.nonneg_part(c);
                let r = self.rootn(pos, n, u);
                if n % 2 == 0 {
                    return self.symmetric(r, x);
                }
                let neg = self.nonpos_part(c);
                let r_neg = self.rootn(neg, n, u);
                let a = self.meet(x, r);
                let b = self.meet(x, r_neg);
                self.join(a, b)
            }
        }
    }

    /// `mulRev(b, c, x)`: t of x with t * b' in c for some b' of b. Where b holds 0 the set is
    /// all of x if c holds 0 too (t * 0 = 0), else up to two unbounded pieces (IEEE 1788's
    /// `mulRevToPair`), each intersected with x before they are joined.
    pub(super) fn mul_rev(&mut self, b: Iv, c: Iv, x: Iv) -> Iv {
        let u = Fact::UNKNOWN;
        let z = self.b.zero();
        // 0 not in b: the quotient c / b.
        let quotient = self.div(c, b, u, u);
        let regular = self.meet(x, quotient);
        let b_lo = self.b.cmp(Cmp::Le, b.lo, z);
        let b_hi = self.b.cmp(Cmp::Ge, b.hi, z);
        let zero_in_b = self.b.and(b_lo, b_hi);
        let c_lo = self.b.cmp(Cmp::Le, c.lo, z);
        let c_hi = self.b.cmp(Cmp::Ge, c.hi, z);
        let zero_in_c = self.b.and(c_lo, c_hi);
        // c > 0: L = [-inf, c.lo / b.lo] where b.lo < 0, U = [c.lo / b.hi, inf] where b.hi > 0.
        // c < 0: L = [-inf, c.hi / b.hi] where b.hi > 0, U = [c.hi / b.lo, inf] where b.lo < 0.
        let pos = self.b.cmp(Cmp::Gt, c.lo, z);
        let not_pos = self.b.not(pos);
        let b_neg = self.b.cmp(Cmp::Lt, b.lo, z);
        let b_pos = self.b.cmp(Cmp::Gt, b.hi, z);
        let num = self.b.select(pos, c.lo, c.hi);
        let l_den = self.b.select(pos, b.lo, b.hi);
        let u_den = self.b.select(pos, b.hi, b.lo);
        let l_hi = self.b.div(num, l_den, Round::Up);
        let u_lo = self.b.div(num, u_den, Round::Down);
        let l_has = self.either_and(pos, b_neg, not_pos, b_pos);
        let u_has = self.either_and(pos, b_pos, not_pos, b_neg);
        let ninf = self.b.constant(f64::NEG_INFINITY);
        let pinf = self.b.constant(f64::INFINITY);
        let no_l = self.b.not(l_has);
        let no_u = self.b.not(u_has);
        let lower = self.empty_if(no_l, Iv { lo: ninf, hi: l_hi });
        let upper = self.empty_if(no_u, Iv { lo: u_lo, hi: pinf });
        let lower = self.meet(x, lower);
        let upper = self.meet(x, upper);
        let split = self.join(lower, upper);
        let lo = self.b.select(zero_in_c, x.lo, split.lo);
        let hi = self.b.select(zero_in_c, x.hi, split.hi);
        let lo = self.b.select(zero_in_b, lo, regular.lo);
        let hi = self.b.select(zero_in_b, hi, regular.hi);
        // An empty b or c leaves nothing (the comparisons above are false on NaN).
        let b_empty = self.b.is_nan(b.lo);
        let c_empty = self.b.is_nan(c.lo);
        let empty = self.b.or(b_empty, c_empty);
        self.empty_if(empty, Iv { lo, hi })
    }

    /// `(p && q) || (r && s)`.
    fn either_and(&mut self, p: Value, q: Value, r: Value, s: Value) -> Value {
        let a = self.b.and(p, q);
        let b = self.b.and(r, s);
        self.b.or(a, b)
    }

    /// The hull of `x ∩ r` and `x ∩ -r`: the points of x whose absolute value lies in `r`
    /// (a nonnegative interval).
    fn symmetric(&mut self, r: Iv, x: Iv) -> Iv {
        let neg = self.neg(r);
        let a = self.meet(x, r);
        let b = self.meet(x, neg);
        self.join(a, b)
    }

    /// `a ∩ b` (empty where either is or they are disjoint).
    fn meet(&mut self, a: Iv, b: Iv) -> Iv {
        let lo = self.b.max(a.lo, b.lo);
        let hi = self.b.min(a.hi, b.hi);
        // max and min ignore one NaN: test the arguments themselves.
        let a_empty = self.b.is_nan(a.lo);
        let b_empty = self.b.is_nan(b.lo);
        let disjoint = self.b.cmp(Cmp::Gt, lo, hi);
        let e = self.b.or(a_empty, b_empty);
        let empty = self.b.or(e, disjoint);
        self.empty_if(empty, Iv { lo, hi })
    }

    /// The hull of `a` and `b` (min and max ignore an empty one's NaN).
    fn join(&mut self, a: Iv, b: Iv) -> Iv {
        Iv {
            lo: self.b.min(a.lo, b.lo),
            hi: self.b.max(a.hi, b.hi),
        }
    }

    /// `c ∩ [0, inf]`.
    fn nonneg_part(&mut self, c: Iv) -> Iv {
        let z = self.b.zero();
        let pinf = self.b.constant(f64::INFINITY);
        self.meet(c, Iv { lo: z, hi: pinf })
    }

    /// `c ∩ [-inf, 0]`.
    fn nonpos_part(&mut self, c: Iv) -> Iv {
        let z = self.b.zero();
        let ninf = self.b.constant(f64::NEG_INFINITY);
        self.meet(c, Iv { lo: ninf, hi: z })
    }
}
