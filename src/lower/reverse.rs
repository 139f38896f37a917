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
use crate::ir::{Rev2Fn, RevFn};
use crate::point::{BinaryFn, UnaryFn};
use crate::scalar::{Cmp, Precision, Round, RoundInt, Value};

/// [`Lowering::mul_rev_parts`]'s result.
struct MulRevParts {
    regular: Iv,
    lower: Iv,
    upper: Iv,
    zero_in_b: Value,
    zero_in_c: Value,
    empty: Value,
}

/// pi/2 and pi enclosed by consecutive floats of the program's precision
/// ([`Lowering::angle_constants`]), and their negatives (`neg_half_pi_lo` is `-half_pi_lo`, the
/// upper end of -pi/2's enclosure).
struct AngleConstants {
    half_pi_lo: Value,
    half_pi_hi: Value,
    pi_lo: Value,
    pi_hi: Value,
    neg_half_pi_lo: Value,
    neg_half_pi_hi: Value,
    neg_pi_lo: Value,
    neg_pi_hi: Value,
}

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
        let p = self.mul_rev_parts(b, c, x);
        let split = self.join(p.lower, p.upper);
        let lo = self.b.select(p.zero_in_c, x.lo, split.lo);
        let hi = self.b.select(p.zero_in_c, x.hi, split.hi);
        let lo = self.b.select(p.zero_in_b, lo, p.regular.lo);
        let hi = self.b.select(p.zero_in_b, hi, p.regular.hi);
        self.empty_if(p.empty, Iv { lo, hi })
    }

    /// [`Lowering::mul_rev`]'s set as two pieces, each met with x: the quotient c / b (0 not in
    /// b) or all of x (0 in b and in c), and nothing; or the two pieces of `mulRevToPair`.
    fn mul_rev_pieces(&mut self, b: Iv, c: Iv, x: Iv) -> (Iv, Iv) {
        let p = self.mul_rev_parts(b, c, x);
        let pick = |me: &mut Self, a: Iv, b: Iv, c: Value| Iv {
            lo: me.b.select(c, a.lo, b.lo),
            hi: me.b.select(c, a.hi, b.hi),
        };
        let first = pick(self, x, p.lower, p.zero_in_c);
        let first = pick(self, first, p.regular, p.zero_in_b);
        let not_zero_in_c = self.b.not(p.zero_in_c);
        let split = self.b.and(p.zero_in_b, not_zero_in_c);
        let no_second = self.b.not(split);
        let no_second = self.b.or(no_second, p.empty);
        (
            self.empty_if(p.empty, first),
            self.empty_if(no_second, p.upper),
        )
    }

    /// IEEE 1788's `mulRevToPair(b, c)` met with x: [`Lowering::mul_rev_pieces`] with a lone
    /// second piece moved first (the standard's order: a single interval is the first result,
    /// the second empty).
    fn mul_rev_to_pair(&mut self, b: Iv, c: Iv, x: Iv) -> (Iv, Iv) {
        let (first, second) = self.mul_rev_pieces(b, c, x);
        let none_first = self.b.is_nan(first.lo);
        let pick = |me: &mut Self, a: Iv, b: Iv| Iv {
            lo: me.b.select(none_first, a.lo, b.lo),
            hi: me.b.select(none_first, a.hi, b.hi),
        };
        let moved = pick(self, second, first);
        let rest = pick(self, first, second);
        (moved, rest)
    }

    /// What `mulRev` is made of: the quotient c / b met with x (for 0 not in b), the two pieces
    /// of `mulRevToPair` met with x (for 0 in b, not in c), whether 0 is in b and in c, and
    /// whether b or c is empty.
    fn mul_rev_parts(&mut self, b: Iv, c: Iv, x: Iv) -> MulRevParts {
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
        // An empty b or c leaves nothing (the comparisons above are false on NaN).
        let b_empty = self.b.is_nan(b.lo);
        let c_empty = self.b.is_nan(c.lo);
        let empty = self.b.or(b_empty, c_empty);
        MulRevParts {
            regular,
            lower,
            upper,
            zero_in_b,
            zero_in_c,
            empty,
        }
    }

    /// `(p && q) || (r && s)`.
    fn either_and(&mut self, p: Value, q: Value, r: Value, s: Value) -> Value {
        let a = self.b.and(p, q);
        let b = self.b.and(r, s);
        self.b.or(a, b)
    }

    /// The reverse operations of binary operations (`Op::Rev2`).
    pub(super) fn reverse2(&mut self, f: Rev2Fn, b: Iv, c: Iv, x: Iv) -> Iv {
        match f {
            Rev2Fn::Mul => self.mul_rev(b, c, x),
            Rev2Fn::Pow1 => self.pow_rev1(b, c, x),
            Rev2Fn::Pow2 => self.pow_rev2(b, c, x),
            Rev2Fn::MulPair1 => self.mul_rev_to_pair(b, c, x).0,
            Rev2Fn::MulPair2 => self.mul_rev_to_pair(b, c, x).1,
            Rev2Fn::Atan2Y => self.atan2_rev_y(b, c, x),
            Rev2Fn::Atan2X => self.atan2_rev_x(b, c, x),
        }
    }

    /// `atan2Rev1(b, c, x)`: the hull of the y in x with atan2(y, x') in c for some x' in b
    /// ((y, x') != (0, 0); atan2's range is (-pi, pi]).
    ///
    /// A point (x', y) has the angle t in (-pi/2, pi/2) where x' > 0 and y = x' tan(t), the
    /// angle pi/2 (-pi/2) where x' = 0 and y > 0 (< 0), and an angle in (pi/2, pi] or
    /// (-pi, -pi/2) where x' < 0 and y = x' tan(t) again. So the set is made of five pieces, one
    /// per angle range that c meets: the products of b's positive (negative) part with tan over
    /// c's part of that range — an interval, tan being increasing there, with c's ends' tan as
    /// its ends or the range's limits (±inf at ±pi/2, 0 at ±pi) — and the half-lines of the
    /// two vertical angles. Each is met with x before they are joined. The closures add one
    /// limit that is no point of the set: y = 0 as x' -> 0 or t -> ±pi; a piece that x meets
    /// there alone is dropped unless 0 is a point of it (angle 0, or pi). c's ends are compared
    /// with the outward enclosures of pi/2 and pi so that the comparisons are exact for floats
    /// and a doubt (none arises for floats of the program's precision) keeps a piece or a
    /// limit: sound.
    fn atan2_rev_y(&mut self, b: Iv, c: Iv, x: Iv) -> Iv {
        let u = Fact::UNKNOWN;
        let k = self.angle_constants();
        let z = self.b.zero();
        let pinf = self.b.constant(f64::INFINITY);
        let ninf = self.b.constant(f64::NEG_INFINITY);
        // tan at c's ends (used only where that end lies inside the piece's angle range).
        let t_lo = self.elementary(UnaryFn::Tan, Iv { lo: c.lo, hi: c.lo }, u);
        let t_hi = self.elementary(UnaryFn::Tan, Iv { lo: c.hi, hi: c.hi }, u);
        let b_pos = self.b.cmp(Cmp::Gt, b.hi, z);
        let b_neg = self.b.cmp(Cmp::Lt, b.lo, z);
        let b_plus = Iv {
            lo: self.b.max(b.lo, z),
            hi: b.hi,
        };
        let b_minus = Iv {
            lo: b.lo,
            hi: self.b.min(b.hi, z),
        };
        let zero_in_c = self.holds(c, z);
        let pi_in_c = self.may_hold(c, k.pi_lo, k.pi_hi);
        let never = self.b.bool(false);
        // t in (-pi/2, pi/2), x' > 0: tan from tan(c.lo) (or -inf) to tan(c.hi) (or inf).
        let t = Iv {
            lo: self.end_or_limit(Cmp::Ge, c.lo, k.neg_half_pi_lo, t_lo.lo, ninf),
            hi: self.end_or_limit(Cmp::Le, c.hi, k.half_pi_lo, t_hi.hi, pinf),
        };
        let range = (k.neg_half_pi_hi, k.half_pi_hi);
        let right = self.angle_piece(c, range, b_plus, b_pos, t, x, zero_in_c);
        // t in (pi/2, pi], x' < 0: tan from tan(c.lo) (or -inf) to tan(c.hi) (or 0, at pi).
        let t = Iv {
            lo: self.end_or_limit(Cmp::Ge, c.lo, k.half_pi_hi, t_lo.lo, ninf),
            hi: self.end_or_limit(Cmp::Le, c.hi, k.pi_lo, t_hi.hi, z),
        };
        let range = (k.half_pi_lo, k.pi_hi);
        let upper_left = self.angle_piece(c, range, b_minus, b_neg, t, x, pi_in_c);
        // t in (-pi, -pi/2), x' < 0: tan from tan(c.lo) (or 0, at -pi) to tan(c.hi) (or inf).
        let t = Iv {
            lo: self.end_or_limit(Cmp::Ge, c.lo, k.neg_pi_lo, t_lo.lo, z),
            hi: self.end_or_limit(Cmp::Le, c.hi, k.neg_half_pi_hi, t_hi.hi, pinf),
        };
        let range = (k.neg_pi_hi, k.neg_half_pi_lo);
        let lower_left = self.angle_piece(c, range, b_minus, b_neg, t, x, never);
        // t = pi/2 (t = -pi/2): x' = 0, every y > 0 (y < 0) of x.
        let zero_in_b = self.holds(b, z);
        let up = self.may_hold(c, k.half_pi_lo, k.half_pi_hi);
        let up = self.b.and(zero_in_b, up);
        let pos = self.positive_part(x);
        let up = self.only_if(up, pos);
        let down = self.may_hold(c, k.neg_half_pi_hi, k.neg_half_pi_lo);
        let down = self.b.and(zero_in_b, down);
        let neg = self.negative_part(x);
        let down = self.only_if(down, neg);
        let r = self.join(right, upper_left);
        let r = self.join(r, lower_left);
        let r = self.join(r, up);
        self.join(r, down)
    }

    /// `atan2Rev2(a, c, x)`: the hull of the x' in x with atan2(y, x') in c for some y in a.
    ///
    /// The mirror of [`Self::atan2_rev_y`] with cot for tan: a point (x', y) has an angle t in
    /// (0, pi) where y > 0 and x' = y cot(t), the angle 0 (pi) where y = 0 and x' > 0 (< 0), and
    /// an angle in (-pi, 0) where y < 0 and x' = y cot(t); cot decreases on both ranges (from
    /// +inf to -inf). cot at c's ends is 1 / tan, rounded outward. The limit that is no point of
    /// the set: x' = 0 as y -> 0 or t -> 0, ±pi; it is a point of the set at the angles ±pi/2.
    fn atan2_rev_x(&mut self, a: Iv, c: Iv, x: Iv) -> Iv {
        let u = Fact::UNKNOWN;
        let k = self.angle_constants();
        let z = self.b.zero();
        let pinf = self.b.constant(f64::INFINITY);
        let ninf = self.b.constant(f64::NEG_INFINITY);
        let one = self.b.constant(1.0);
        let one = Iv { lo: one, hi: one };
        let t_lo = self.elementary(UnaryFn::Tan, Iv { lo: c.lo, hi: c.lo }, u);
        let t_hi = self.elementary(UnaryFn::Tan, Iv { lo: c.hi, hi: c.hi }, u);
        let cot_lo = self.div(one, t_lo, u, u);
        let cot_hi = self.div(one, t_hi, u, u);
        let a_pos = self.b.cmp(Cmp::Gt, a.hi, z);
        let a_neg = self.b.cmp(Cmp::Lt, a.lo, z);
        let a_plus = Iv {
            lo: self.b.max(a.lo, z),
            hi: a.hi,
        };
        let a_minus = Iv {
            lo: a.lo,
            hi: self.b.min(a.hi, z),
        };
        let up_in_c = self.may_hold(c, k.half_pi_lo, k.half_pi_hi);
        let down_in_c = self.may_hold(c, k.neg_half_pi_hi, k.neg_half_pi_lo);
        // t in (0, pi), y > 0: cot from cot(c.hi) (or -inf, at pi) to cot(c.lo) (or inf, at 0).
        let t = Iv {
            lo: self.end_or_limit(Cmp::Le, c.hi, k.pi_lo, cot_hi.lo, ninf),
            hi: self.end_or_limit(Cmp::Gt, c.lo, z, cot_lo.hi, pinf),
        };
        let upper = self.angle_piece(c, (z, k.pi_hi), a_plus, a_pos, t, x, up_in_c);
        // t in (-pi, 0), y < 0: cot from cot(c.hi) (or -inf, at 0) to cot(c.lo) (or inf, at -pi).
        let t = Iv {
            lo: self.end_or_limit(Cmp::Lt, c.hi, z, cot_hi.lo, ninf),
            hi: self.end_or_limit(Cmp::Ge, c.lo, k.neg_pi_lo, cot_lo.hi, pinf),
        };
        let lower = self.angle_piece(c, (k.neg_pi_hi, z), a_minus, a_neg, t, x, down_in_c);
        // t = 0 (t = pi): y = 0, every x' > 0 (x' < 0) of x.
        let zero_in_a = self.holds(a, z);
        let zero_in_c = self.holds(c, z);
        let right = self.b.and(zero_in_a, zero_in_c);
        let pos = self.positive_part(x);
        let right = self.only_if(right, pos);
        let pi_in_c = self.may_hold(c, k.pi_lo, k.pi_hi);
        let left = self.b.and(zero_in_a, pi_in_c);
        let neg = self.negative_part(x);
        let left = self.only_if(left, neg);
        let r = self.join(upper, lower);
        let r = self.join(r, right);
        self.join(r, left)
    }

    /// The outward enclosures of pi/2 and pi in the program's precision, and their negatives.
    fn angle_constants(&mut self) -> AngleConstants {
        let h = half_pi();
        let half_pi_lo = self.const_down(h.lo);
        let half_pi_hi = self.const_up(h.hi);
        let pi_lo = self.const_down(2.0 * h.lo); // doubling is exact
        let pi_hi = self.const_up(2.0 * h.hi);
        AngleConstants {
            half_pi_lo,
            half_pi_hi,
            pi_lo,
            pi_hi,
            neg_half_pi_lo: self.b.neg(half_pi_lo),
            neg_half_pi_hi: self.b.neg(half_pi_hi),
            neg_pi_lo: self.b.neg(pi_lo),
            neg_pi_hi: self.b.neg(pi_hi),
        }
    }

    /// Whether the angles of c may meet the open range (from, to): c.hi > from and c.lo < to,
    /// with `from` an enclosure's lower (outer) end and `to` its upper one where the range's
    /// ends are irrational, so that a doubt says yes (false where c is empty).
    fn angles_meet(&mut self, c: Iv, from: Value, to: Value) -> Value {
        let a = self.b.cmp(Cmp::Gt, c.hi, from);
        let b = self.b.cmp(Cmp::Lt, c.lo, to);
        self.b.and(a, b)
    }

    /// Whether c may hold the irrational point enclosed by (lo, hi): c.lo < hi and c.hi > lo
    /// (exact for floats: no float lies between the two consecutive ends of the enclosure).
    fn may_hold(&mut self, c: Iv, lo: Value, hi: Value) -> Value {
        let a = self.b.cmp(Cmp::Lt, c.lo, hi);
        let b = self.b.cmp(Cmp::Gt, c.hi, lo);
        self.b.and(a, b)
    }

    /// One angle range's piece of an atan2 reverse operation: `x ∩ (part * t)` (the forward
    /// product, outward), `part` the other argument's part of the sign this range needs (which
    /// exists where `sign`) and t the range of tan (cot) over c's angles in the open range
    /// `range` (whose ends are enclosures' outer ends: see [`Self::angles_meet`]); empty where
    /// either is missing. A result that is the limit 0 alone is dropped unless `keep` (0 is a
    /// point of the piece).
    #[allow(clippy::too_many_arguments)]
    fn angle_piece(
        &mut self,
        c: Iv,
        range: (Value, Value),
        part: Iv,
        sign: Value,
        t: Iv,
        x: Iv,
        keep: Value,
    ) -> Iv {
        let u = Fact::UNKNOWN;
        let meets = self.angles_meet(c, range.0, range.1);
        let exists = self.b.and(sign, meets);
        let product = self.mul(part, t, u, u, None);
        let piece = self.meet(x, product);
        let none = self.b.not(exists);
        let piece = self.empty_if(none, piece);
        let z = self.b.zero();
        self.drop_lone_point(piece, z, keep)
    }

    /// `r` where `cond`, else empty.
    fn only_if(&mut self, cond: Value, r: Iv) -> Iv {
        let no = self.b.not(cond);
        self.empty_if(no, r)
    }

    /// `value` where `e cmp bound` (c's end lies inside the angle range, where the function
    /// of it bounds the piece), else the range's `limit`.
    fn end_or_limit(
        &mut self,
        cmp: Cmp,
        e: Value,
        bound: Value,
        value: Value,
        limit: Value,
    ) -> Value {
        let inside = self.b.cmp(cmp, e, bound);
        self.b.select(inside, value, limit)
    }

    /// `powRev1(b, c, x)`: the hull of the t in x with t^b' in c for some b' in b, pow's
    /// domain being t > 0 (any b'), or t = 0 with b' > 0.
    ///
    /// For b' != 0, t^b' = c' with t >= 0 is t = c'^(1/b'), c' >= 0 (t = 0 exactly where
    /// c' = 0 and b' > 0, which pow's domain allows). Over the b' of one sign, 1/b' ranges over
    /// an interval r, so those t are pow's range over the box (c ∩ [0, inf]) × r: the forward
    /// pow on it encloses them (tight up to pow's rounding where 1/b is exact). b' = 0 gives
    /// t^0 = 1 for every t > 0: all of x above 0 where 1 is in c. Each part is met with x
    /// before they are joined, so a gap between the parts of the two signs stays out.
    fn pow_rev1(&mut self, b: Iv, c: Iv, x: Iv) -> Iv {
        let z = self.b.zero();
        let one = self.b.constant(1.0);
        let pinf = self.b.constant(f64::INFINITY);
        let ninf = self.b.constant(f64::NEG_INFINITY);
        let cp = self.nonneg_part(c);
        // 1/b's ends, rounded outward (each is an end of one sign's reciprocals).
        let inv_hi = self.b.div(one, b.hi, Round::Down);
        let inv_lo = self.b.div(one, b.lo, Round::Up);
        // b' < 0: 1/b' in [1/b.hi, 1/b.lo] if b.hi < 0, else [-inf, 1/b.lo].
        let b_neg = self.b.cmp(Cmp::Lt, b.lo, z);
        let all_neg = self.b.cmp(Cmp::Lt, b.hi, z);
        let r_lo = self.b.select(all_neg, inv_hi, ninf);
        let neg = self.pow_piece(
            cp,
            Iv {
                lo: r_lo,
                hi: inv_lo,
            },
            x,
            b_neg,
        );
        // The closure above holds limits that are no points of the set: t = 0 (c' -> inf;
        // 0^b' is undefined for b' < 0) and t = 1 (b' -> -inf, where c'^(1/b') -> 1) unless
        // 1 is in c (1^b' = 1). They matter only where x meets the range there alone.
        let one_in_c = self.holds(c, one);
        let zero_in_c = self.holds(c, z);
        let never = self.b.bool(false);
        let neg = self.drop_lone_point(neg, z, never);
        let neg = self.drop_lone_point(neg, one, one_in_c);
        // b' > 0: 1/b' in [1/b.hi, 1/b.lo] if b.lo > 0, else [1/b.hi, inf].
        let b_pos = self.b.cmp(Cmp::Gt, b.hi, z);
        let all_pos = self.b.cmp(Cmp::Gt, b.lo, z);
        let r_hi = self.b.select(all_pos, inv_lo, pinf);
        let pos = self.pow_piece(
            cp,
            Iv {
                lo: inv_hi,
                hi: r_hi,
            },
            x,
            b_pos,
        );
        // Limits again: t = 0 is a point of the set only where 0 is in c (0^b' = 0), t = 1
        // only where 1 is.
        let pos = self.drop_lone_point(pos, z, zero_in_c);
        let pos = self.drop_lone_point(pos, one, one_in_c);
        // b' = 0 in b and 1 in c: every t > 0 of x.
        let zero_in_b = self.holds(b, z);
        let every = self.b.and(zero_in_b, one_in_c);
        let positive = self.positive_part(x);
        let no_every = self.b.not(every);
        let every = self.empty_if(no_every, positive);
        let r = self.join(neg, pos);
        self.join(r, every)
    }

    /// The t of x that are `c'^r` for c' in `cp` and r in `r` (pow's range over the box, met
    /// with x), empty unless `exists` (the sign of b these reciprocals come from occurs in b).
    fn pow_piece(&mut self, cp: Iv, r: Iv, x: Iv, exists: Value) -> Iv {
        let range = self.elementary2(BinaryFn::Pow, cp, Fact::UNKNOWN, r, Fact::UNKNOWN);
        let piece = self.meet(x, range);
        let none = self.b.not(exists);
        self.empty_if(none, piece)
    }

    /// `powRev2(a, c, x)`: the hull of the t in x with a'^t in c for some a' in a, pow's
    /// domain being a' > 0 (any t), or a' = 0 with t > 0.
    ///
    /// For a' > 0 and c' > 0, a'^t = c' is t log(a') = log(c'): the t of x with t s in log(c)
    /// for some s in log(a) — `mulRev(log(a), log(c), x)` (its two pieces), the logarithms' enclosures of a's
    /// and c's positive parts (a' = 1, s = 0, leaves all of x where 1 is in c, as mulRev does
    /// where both hold 0). a' = 0 with 0 in c: every t > 0 of x.
    fn pow_rev2(&mut self, a: Iv, c: Iv, x: Iv) -> Iv {
        let u = Fact::UNKNOWN;
        let z = self.b.zero();
        let la = self.elementary(UnaryFn::Log, a, u);
        let lc = self.elementary(UnaryFn::Log, c, u);
        let (first, second) = self.mul_rev_pieces(la, lc, x);
        // The closure holds t = 0 as a limit (a' -> 0 or inf, where log(c') / log(a') -> 0);
        // it is a point of the set only where 1 is in c and a has a point above 0 (a'^0 = 1).
        // Each piece is checked alone: the limit may end a piece that x meets only there.
        let one = self.b.constant(1.0);
        let one_in_c = self.holds(c, one);
        let a_pos = self.b.cmp(Cmp::Gt, a.hi, z);
        let keep = self.b.and(one_in_c, a_pos);
        let first = self.drop_lone_point(first, z, keep);
        let second = self.drop_lone_point(second, z, keep);
        let main = self.join(first, second);
        let zero_in_a = self.holds(a, z);
        let zero_in_c = self.holds(c, z);
        let zero = self.b.and(zero_in_a, zero_in_c);
        let positive = self.positive_part(x);
        let no_zero = self.b.not(zero);
        let zero = self.empty_if(no_zero, positive);
        self.join(main, zero)
    }

    /// `a`, or empty where `a` is the single point `v` and `keep` is false.
    fn drop_lone_point(&mut self, a: Iv, v: Value, keep: Value) -> Iv {
        let lo = self.b.cmp(Cmp::Eq, a.lo, v);
        let hi = self.b.cmp(Cmp::Eq, a.hi, v);
        let lone = self.b.and(lo, hi);
        let drop = self.b.not(keep);
        let drop = self.b.and(lone, drop);
        self.empty_if(drop, a)
    }

    /// Whether the point `v` lies in `a` (false where a is empty).
    fn holds(&mut self, a: Iv, v: Value) -> Value {
        let lo = self.b.cmp(Cmp::Le, a.lo, v);
        let hi = self.b.cmp(Cmp::Ge, a.hi, v);
        self.b.and(lo, hi)
    }

    /// The closure of `x ∩ (0, inf)`: `[max(x.lo, 0), x.hi]` where x.hi > 0, else empty.
    fn positive_part(&mut self, x: Iv) -> Iv {
        let z = self.b.zero();
        let lo = self.b.max(x.lo, z);
        let reaches = self.b.cmp(Cmp::Gt, x.hi, z);
        let none = self.b.not(reaches);
        let x_empty = self.b.is_nan(x.lo);
        let none = self.b.or(none, x_empty);
        self.empty_if(none, Iv { lo, hi: x.hi })
    }

    /// The closure of `x ∩ (-inf, 0)`: `[x.lo, min(x.hi, 0)]` where x.lo < 0, else empty.
    fn negative_part(&mut self, x: Iv) -> Iv {
        let z = self.b.zero();
        let hi = self.b.min(x.hi, z);
        let reaches = self.b.cmp(Cmp::Lt, x.lo, z);
        let none = self.b.not(reaches);
        let x_empty = self.b.is_nan(x.lo);
        let none = self.b.or(none, x_empty);
        self.empty_if(none, Iv { lo: x.lo, hi })
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
