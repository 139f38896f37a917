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
//!
//! The periodic ones (`sinRev`, `cosRev`, `tanRev`) have infinitely many pieces, `k pi ± s`
//! with s the principal inverse on c (asin, acos, atan): only the pieces next to x's ends
//! matter for the hull, found from the quarter period each end lies in (the same rigorous
//! quarter index as the forward rules); see [`Lowering::periodic_rev`].

use super::elementary::half_pi;
use super::{Iv, Lowering};
use crate::ir::sign::Fact;
use crate::ir::RevFn;
use crate::point::UnaryFn;
use crate::scalar::{Cmp, Precision, Round, RoundInt, Value};

/// The periodic reverse operations: how their pieces are laid out (see
/// [`Lowering::periodic_rev`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Periodic {
    Sin,
    Cos,
    Tan,
}

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
            RevFn::Sin => self.periodic_rev(Periodic::Sin, c, x),
            RevFn::Cos => self.periodic_rev(Periodic::Cos, c, x),
            RevFn::Tan => self.periodic_rev(Periodic::Tan, c, x),
        }
    }

    /// `sinRev`, `cosRev`, `tanRev`: the hull of the t in x with f(t) in c.
    ///
    /// The exact set is a union of pieces `P_m`, m an integer, each the principal inverse s on
    /// c (asin, acos, atan: s empty where c misses f's range) moved by a multiple of pi:
    /// - sin: `P_m = m pi + s` for even m, `m pi - s` for odd m, inside `[m pi - pi/2, m pi + pi/2]`;
    /// - cos: `P_m = m pi + s` for even m, `(m + 1) pi - s` for odd m, inside `[m pi, (m+1) pi]`;
    /// - tan: `P_m = m pi + s`, inside `[m pi - pi/2, m pi + pi/2]`.
    ///
    /// Each piece's region is two quarter periods (quarter Q = floor(t / (pi/2)) lies in region
    /// `floor((Q + 1) / 2)` for sin and tan, `floor(Q / 2)` for cos), so the pieces are ordered
    /// and disjoint. The new lower bound is `max(x.lo, P.lo)` for the first piece P that reaches
    /// x.lo: that is the piece of x.lo's region or the next one. x.lo's quarter is bracketed by
    /// the rigorous quarter indices `qa <= Q <= qa'` (`Lowering::quarter_index`, Down and Up);
    /// where they differ by at most one, the first piece is among the three from
    /// `floor((qa + shift) / 2)` on, and the minimum over those of the candidates whose
    /// (outward-rounded) piece reaches x.lo is at most the exact bound. The upper bound
    /// mirrors it. An end that is infinite, beyond 2^50 (f32: 2^22, where the indices stop being
    /// exact integers in the arithmetic below) or whose indices differ by more than one is kept:
    /// sound, not narrowed. Pieces are `k pi/2 + s` with `k pi/2` enclosed by the integer k
    /// times an outward enclosure of pi/2, rounded outward.
    fn periodic_rev(&mut self, f: Periodic, c: Iv, x: Iv) -> Iv {
        let u = Fact::UNKNOWN;
        let s = match f {
            Periodic::Sin => self.elementary(UnaryFn::Asin, c, u),
            Periodic::Cos => self.elementary(UnaryFn::Acos, c, u),
            Periodic::Tan => self.elementary(UnaryFn::Atan, c, u),
        };
        let neg_s = self.neg(s);
        let limit = match self.b.precision() {
            Precision::F64 => 2f64.powi(50),
            Precision::F32 => 2f64.powi(22),
        };
        let limit = self.b.constant(limit);
        let pinf = self.b.constant(f64::INFINITY);
        let ninf = self.b.constant(f64::NEG_INFINITY);
        let (m_lo, ok_lo) = self.piece_index(f, x.lo, limit, Round::Down);
        let (m_hi, ok_hi) = self.piece_index(f, x.hi, limit, Round::Up);
        // The lower bound: the first piece from x.lo's region on that reaches x.lo.
        let mut lo = pinf;
        for i in 0..3 {
            let m = self.offset(m_lo, i as f64);
            let p = self.piece(f, m, s, neg_s);
            let reaches = self.b.cmp(Cmp::Ge, p.hi, x.lo);
            let at = self.b.max(x.lo, p.lo);
            let cand = self.b.select(reaches, at, pinf);
            lo = self.b.min(lo, cand);
        }
        // The upper bound: the last piece up to x.hi's region that starts below x.hi.
        let mut hi = ninf;
        for i in 0..3 {
            let m = self.offset(m_hi, -(i as f64));
            let p = self.piece(f, m, s, neg_s);
            let reaches = self.b.cmp(Cmp::Le, p.lo, x.hi);
            let at = self.b.min(x.hi, p.hi);
            let cand = self.b.select(reaches, at, ninf);
            hi = self.b.max(hi, cand);
        }
        let lo = self.b.select(ok_lo, lo, x.lo);
        let hi = self.b.select(ok_hi, hi, x.hi);
        // Empty where c misses f's range, x is empty, or no piece meets x.
        let s_empty = self.b.is_nan(s.lo);
        let x_empty = self.b.is_nan(x.lo);
        let crossed = self.b.cmp(Cmp::Gt, lo, hi);
        let e = self.b.or(s_empty, x_empty);
        let e = self.b.or(e, crossed);
        self.empty_if(e, Iv { lo, hi })
    }

    /// The region index `floor((q + shift) / 2)` of an end `e` of x (see
    /// [`Self::periodic_rev`]), q its lower quarter index (`Down`, for the low end) or its
    /// upper one (`Up`, the high end), and whether the indices may be read: e finite and within
    /// `limit`, its two quarter indices at most one apart.
    fn piece_index(&mut self, f: Periodic, e: Value, limit: Value, r: Round) -> (Value, Value) {
        let q_down = self.quarter_index(e, Round::Down);
        let q_up = self.quarter_index(e, Round::Up);
        // Not `|e| > limit`: an infinite e's NaN indices must answer no.
        let mag = self.b.abs(e);
        let small = self.b.cmp(Cmp::Le, mag, limit);
        let gap = self.b.sub(q_up, q_down, Round::Up);
        let one = self.b.constant(1.0);
        let close = self.b.cmp(Cmp::Le, gap, one);
        let ok = self.b.and(small, close);
        let q = if r == Round::Down { q_down } else { q_up };
        let shift = if f == Periodic::Cos { 0.0 } else { 1.0 };
        let q = self.offset(q, shift);
        let half = self.b.constant(0.5);
        let h = self.b.mul(q, half, Round::Nearest); // exact
        (self.b.round_int(RoundInt::Floor, h), ok)
    }

    /// `m + k` for an integer-valued m (exact below the limits of [`Self::periodic_rev`]).
    fn offset(&mut self, m: Value, k: f64) -> Value {
        if k == 0.0 {
            return m;
        }
        let k = self.b.constant(k);
        self.b.add(m, k, Round::Nearest)
    }

    /// An outward enclosure of the piece `P_m` (see [`Self::periodic_rev`]).
    fn piece(&mut self, f: Periodic, m: Value, s: Iv, neg_s: Iv) -> Iv {
        let two = self.b.constant(2.0);
        let k = self.b.mul(m, two, Round::Nearest); // quarters to m pi
        let (k, t) = match f {
            Periodic::Tan => (k, s),
            _ => {
                let half = self.b.constant(0.5);
                let h = self.b.mul(m, half, Round::Nearest);
                let fl = self.b.round_int(RoundInt::Floor, h);
                let odd = self.b.cmp(Cmp::Lt, fl, h);
                let t = Iv {
                    lo: self.b.select(odd, neg_s.lo, s.lo),
                    hi: self.b.select(odd, neg_s.hi, s.hi),
                };
                // cos's odd pieces are (m + 1) pi - s: two quarters further.
                let k = if f == Periodic::Cos {
                    let k2 = self.offset(k, 2.0);
                    self.b.select(odd, k2, k)
                } else {
                    k
                };
                (k, t)
            }
        };
        let c = self.half_pis(k);
        Iv {
            lo: self.b.add(c.lo, t.lo, Round::Down),
            hi: self.b.add(c.hi, t.hi, Round::Up),
        }
    }

    /// An outward enclosure of `k pi/2` for an integer-valued k.
    fn half_pis(&mut self, k: Value) -> Iv {
        let h = half_pi();
        let h_lo = self.const_down(h.lo);
        let h_hi = self.const_up(h.hi);
        let z = self.b.zero();
        let neg = self.b.cmp(Cmp::Lt, k, z);
        let for_lo = self.b.select(neg, h_hi, h_lo);
        let for_hi = self.b.select(neg, h_lo, h_hi);
        Iv {
            lo: self.b.mul(k, for_lo, Round::Down),
            hi: self.b.mul(k, for_hi, Round::Up),
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
