//! Interval rules of the elementary functions.
//!
//! Point values come from `Inst::Point1` / `Inst::Point2`, a rigorous lower (`Down`) or upper
//! (`Up`) bound of the function at a float, which each backend provides with its own library and
//! error bound. The interval logic is written here once: domain restriction, monotonicity, where
//! extrema lie, range clamps (sin in [-1, 1], exp >= 0, ...), empty and unbounded arguments. What
//! each function is (domain, range, which rule, exact point) is its row in [`crate::point`]: the
//! monotone rules serve every function whose row says so; the others (periodic, tangent, the
//! binary functions) are written here by name.
//!
//! Why one file of about 600 lines: the non-monotone rules (periodic, tangent, the binary
//! functions) share the extremum test and the range clamps below; apart they would each need
//! a copy of them or a module of helpers that only they use.
//!
//! Trigonometric functions decide whether an interval holds an extremum without reducing the
//! argument by a floating-point pi. On an interval shorter than half a period, the derivative
//! (cos for sin) changes sign at most once, so certain signs of the derivative at the two ends
//! tell whether a maximum, a minimum or neither lies inside. A sign is "certain" when the
//! rigorous bounds of the derivative at the point exclude zero; when they do not, the point is
//! within rounding error of an extremum, and the rule takes the wide answer (includes the
//! extremum), which costs nothing in tightness since the function is then within an ulp or so of
//! ±1 there. Intervals of up to a whole period are split at their midpoint; longer ones (or ones
//! whose length is not certainly below a period) give [-1, 1].

use super::{Iv, Lowering};
use crate::interval::Interval;
use crate::ir::build::named_constant;
use crate::ir::sign::Fact;
use crate::point::{BinaryFn, Domain, Limit, Range, Rule, Rule2, UnaryFn};
use crate::scalar::{Cmp, Precision, Round, RoundInt, Value};

fn pi() -> Interval {
    named_constant("pi").expect("pi")
}

/// An enclosure of pi/2 (halving is exact).
fn half_pi() -> Interval {
    let p = pi();
    Interval {
        lo: p.lo / 2.0,
        hi: p.hi / 2.0,
    }
}

fn sym(x: Interval) -> Interval {
    Interval {
        lo: -x.hi,
        hi: x.hi,
    }
}

/// A real interval containing a row's range: each end rounded outward (k * pi/2 from the
/// enclosure of pi/2; multiplying it by k in -2..=2 is exact).
fn range_enclosure(r: Range) -> Interval {
    let end = |l: Limit, upper: bool| match l {
        Limit::Num(x) => x,
        Limit::HalfPis(k) => {
            assert!((-2..=2).contains(&k), "k * pi/2 is exact only for |k| <= 2");
            let h = half_pi();
            let (a, b) = (h.lo * k as f64, h.hi * k as f64);
            if upper {
                a.max(b)
            } else {
                a.min(b)
            }
        }
    };
    Interval {
        lo: end(r.lo, false),
        hi: end(r.hi, true),
    }
}

impl Lowering {
    /// A rigorous bound of a unary point function at x, exact at the function's known exact
    /// point (its row's `exact`).
    fn bound(&mut self, f: UnaryFn, x: Value, r: Round) -> Value {
        let v = self.b.point(f, x, r);
        match f.row().exact {
            Some((px, fx)) => {
                let p = self.b.constant(px);
                let at = self.b.cmp(Cmp::Eq, x, p);
                let exact = self.b.constant(fx);
                self.b.select(at, exact, v)
            }
            None => v,
        }
    }

    /// A constant <= x in the program's precision.
    pub(super) fn const_down(&mut self, x: f64) -> Value {
        let v = match self.b.precision() {
            Precision::F64 => x,
            Precision::F32 => crate::round::narrow_f32(x, Round::Down) as f64,
        };
        self.b.constant(v)
    }

    /// A constant >= x in the program's precision.
    pub(super) fn const_up(&mut self, x: f64) -> Value {
        let v = match self.b.precision() {
            Precision::F64 => x,
            Precision::F32 => crate::round::narrow_f32(x, Round::Up) as f64,
        };
        self.b.constant(v)
    }

    /// Clamps a lowered result into `range` (outward-rounded constants). The clamps ignore NaN,
    /// so callers apply the empty test afterwards.
    fn clamp(&mut self, r: Iv, range: Interval) -> Iv {
        let mut r = r;
        if range.lo > f64::NEG_INFINITY {
            let c = self.const_down(range.lo);
            r.lo = self.b.max(r.lo, c);
        }
        if range.hi < f64::INFINITY {
            let c = self.const_up(range.hi);
            r.hi = self.b.min(r.hi, c);
        }
        r
    }

    /// exp, log, sin, ... applied to an interval, as the function's row says.
    pub(super) fn elementary(&mut self, f: UnaryFn, a: Iv, fa: Fact) -> Iv {
        let row = f.row();
        match row.rule {
            Rule::Increasing => self.monotone(f, a, fa, true),
            Rule::Decreasing => self.monotone(f, a, fa, false),
            Rule::EvenIncreasing => self.even_increasing(f, a, fa),
            Rule::Periodic => self.periodic(f, a, fa),
            Rule::Tangent => self.tan(a, fa),
        }
    }

    /// A monotone function on its domain: restrict, take the bounds at the ends, clamp.
    fn monotone(&mut self, f: UnaryFn, a: Iv, fa: Fact, increasing: bool) -> Iv {
        let s: Domain = f.row().domain;
        let mut x1 = a.lo;
        let mut x2 = a.hi;
        let mut miss = self.b.bool(false);
        if s.lo > f64::NEG_INFINITY {
            let d = self.b.constant(s.lo);
            x1 = self.b.max(a.lo, d);
            let cmp = if s.lo_open { Cmp::Le } else { Cmp::Lt };
            let below = self.b.cmp(cmp, a.hi, d);
            miss = self.b.or(miss, below);
        }
        if s.hi < f64::INFINITY {
            let d = self.b.constant(s.hi);
            x2 = self.b.min(a.hi, d);
            let cmp = if s.hi_open { Cmp::Ge } else { Cmp::Gt };
            let above = self.b.cmp(cmp, a.lo, d);
            miss = self.b.or(miss, above);
        }
        let r = if increasing {
            Iv {
                lo: self.bound(f, x1, Round::Down),
                hi: self.bound(f, x2, Round::Up),
            }
        } else {
            Iv {
                lo: self.bound(f, x2, Round::Down),
                hi: self.bound(f, x1, Round::Up),
            }
        };
        let r = self.clamp(r, range_enclosure(f.row().range));
        let e = self.is_empty(a, fa);
        let empty = self.b.or(e, miss);
        self.empty_if(empty, r)
    }

    /// An even function increasing in |x| (cosh), defined everywhere:
    /// [f(mig x), f(mag x)], clamped to the range.
    fn even_increasing(&mut self, f: UnaryFn, a: Iv, fa: Fact) -> Iv {
        debug_assert!(f.row().domain.is_everywhere());
        let m = self.abs(a, fa);
        let r = Iv {
            lo: self.bound(f, m.lo, Round::Down),
            hi: self.bound(f, m.hi, Round::Up),
        };
        let r = self.clamp(r, range_enclosure(f.row().range));
        let e = self.is_empty(a, fa);
        self.empty_if(e, r)
    }

    /// Lower and upper bounds of the derivative's sign function at x: for sin it is cos, for cos
    /// it is -sin, for sinpi cospi (times pi > 0), for cospi -sinpi.
    fn derivative_sign(&mut self, f: UnaryFn, x: Value) -> (Value, Value) {
        let (g, negate) = match f {
            UnaryFn::Sin => (UnaryFn::Cos, false),
            UnaryFn::Cos => (UnaryFn::Sin, true),
            UnaryFn::Sinpi => (UnaryFn::Cospi, false),
            UnaryFn::Cospi => (UnaryFn::Sinpi, true),
            _ => unreachable!("{f} has no periodic rule"),
        };
        let lo = self.b.point(g, x, Round::Down);
        let hi = self.b.point(g, x, Round::Up);
        if negate {
            (self.b.neg(hi), self.b.neg(lo))
        } else {
            (lo, hi)
        }
    }

    /// (certainly positive, certainly negative) for the derivative at x.
    fn derivative_signs(&mut self, f: UnaryFn, x: Value) -> (Value, Value) {
        let (lo, hi) = self.derivative_sign(f, x);
        let z = self.b.zero();
        (self.b.cmp(Cmp::Gt, lo, z), self.b.cmp(Cmp::Lt, hi, z))
    }

    /// sin, cos, sinpi, cospi: periodic with values in [-1, 1]; see the module comment.
    fn periodic(&mut self, f: UnaryFn, a: Iv, fa: Fact) -> Iv {
        // Half a period, rounded down: pi for sin/cos, 1 for sinpi/cospi.
        let half = match f {
            UnaryFn::Sin | UnaryFn::Cos => self.const_down(pi().lo),
            _ => self.b.constant(1.0),
        };
        // A midpoint inside [a1, a2].
        let h = self.b.constant(0.5);
        let ha = self.b.mul(a.lo, h, Round::Nearest);
        let hb = self.b.mul(a.hi, h, Round::Nearest);
        let m = self.b.add(ha, hb, Round::Nearest);
        let m = self.b.min(m, a.hi);
        let m = self.b.max(m, a.lo);
        // Both halves certainly shorter than half a period (false for infinite bounds and NaN).
        let w1 = self.b.sub(m, a.lo, Round::Up);
        let w2 = self.b.sub(a.hi, m, Round::Up);
        // `half` is rounded down, so w <= half certainly means a real width below half a period.
        let short1 = self.b.cmp(Cmp::Le, w1, half);
        let short2 = self.b.cmp(Cmp::Le, w2, half);
        let short = self.b.and(short1, short2);
        let wide = self.b.not(short);

        // Quarter period, rounded down: two ends that are both within rounding error of a
        // critical point and closer than this are near the same one.
        let quarter = match f {
            UnaryFn::Sin | UnaryFn::Cos => self.const_down(half_pi().lo),
            _ => self.b.constant(0.5),
        };
        let pts = [a.lo, m, a.hi];
        let mut sign = Vec::new();
        let mut val = Vec::new();
        for &x in &pts {
            sign.push(self.derivative_signs(f, x));
            val.push((self.bound(f, x, Round::Down), self.bound(f, x, Round::Up)));
        }
        let mut has_max = wide;
        let mut has_min = wide;
        for (i, w) in [(0, w1), (1, w2)] {
            let ((pu, nu), (pv, nv)) = (sign[i], sign[i + 1]);
            let (u_lo, u_hi) = val[i];
            // A maximum inside [u, v] is possible unless the derivative is certainly negative at
            // u or certainly positive at v; a minimum unless certainly positive at u or negative
            // at v.
            let max_h = self.none_of(nu, pv);
            let min_h = self.none_of(pu, nv);
            // Both signs uncertain and the ends closer than a quarter period: one critical point,
            // a maximum if f is positive there (f^2 + (f'/k)^2 = 1, so |f| is close to 1).
            let unsure_u = self.none_of(pu, nu);
            let unsure_v = self.none_of(pv, nv);
            let both = self.b.and(unsure_u, unsure_v);
            let close = self.b.cmp(Cmp::Le, w, quarter);
            let one_point = self.b.and(both, close);
            let z = self.b.zero();
            let not_pos = self.b.cmp(Cmp::Le, u_hi, z);
            let not_neg = self.b.cmp(Cmp::Ge, u_lo, z);
            let no_max = self.b.and(one_point, not_pos);
            let no_min = self.b.and(one_point, not_neg);
            let keep_max = self.b.not(no_max);
            let keep_min = self.b.not(no_min);
            let max_h = self.b.and(max_h, keep_max);
            let min_h = self.b.and(min_h, keep_min);
            has_max = self.b.or(has_max, max_h);
            has_min = self.b.or(has_min, min_h);
        }
        let mut lo = val[0].0;
        let mut hi = val[0].1;
        for &(l, u) in &val[1..] {
            lo = self.b.min(lo, l);
            hi = self.b.max(hi, u);
        }
        let one = self.b.constant(1.0);
        let minus_one = self.b.constant(-1.0);
        let lo = self.b.select(has_min, minus_one, lo);
        let hi = self.b.select(has_max, one, hi);
        let r = self.clamp(Iv { lo, hi }, Interval { lo: -1.0, hi: 1.0 });
        let e = self.is_empty(a, fa);
        self.empty_if(e, r)
    }

    /// `!x && !y`.
    fn none_of(&mut self, x: Value, y: Value) -> Value {
        let nx = self.b.not(x);
        let ny = self.b.not(y);
        self.b.and(nx, ny)
    }

    /// tan: increasing between asymptotes. On an interval certainly shorter than pi where cos has
    /// the same certain sign at both ends, cos has no zero inside, so tan is continuous there;
    /// otherwise the result is the whole line.
    fn tan(&mut self, a: Iv, fa: Fact) -> Iv {
        let half = self.const_down(pi().lo);
        let w = self.b.sub(a.hi, a.lo, Round::Up);
        let short = self.b.cmp(Cmp::Le, w, half); // half <= pi, so this means width < pi
        let (pa, na) = self.derivative_signs(UnaryFn::Sin, a.lo);
        let (pb, nb) = self.derivative_signs(UnaryFn::Sin, a.hi);
        let both_pos = self.b.and(pa, pb);
        let both_neg = self.b.and(na, nb);
        let same = self.b.or(both_pos, both_neg);
        let ok = self.b.and(short, same);
        let lo = self.bound(UnaryFn::Tan, a.lo, Round::Down);
        let hi = self.bound(UnaryFn::Tan, a.hi, Round::Up);
        let ninf = self.b.constant(f64::NEG_INFINITY);
        let pinf = self.b.constant(f64::INFINITY);
        let lo = self.b.select(ok, lo, ninf);
        let hi = self.b.select(ok, hi, pinf);
        let e = self.is_empty(a, fa);
        self.empty_if(e, Iv { lo, hi })
    }

    /// atan2, pow and hypot on two intervals.
    pub(super) fn elementary2(&mut self, f: BinaryFn, a: Iv, fa: Fact, c: Iv, fc: Fact) -> Iv {
        match f.row().rule {
            Rule2::Hypot => {
                let x = self.abs(a, fa);
                let y = self.abs(c, fc);
                let lo = self.b.point2(f, x.lo, y.lo, Round::Down);
                let hi = self.b.point2(f, x.hi, y.hi, Round::Up);
                let r = self.clamp(
                    Iv { lo, hi },
                    Interval {
                        lo: 0.0,
                        hi: f64::INFINITY,
                    },
                );
                let e = self.either_empty(a, fa, c, fc);
                self.empty_if(e, r)
            }
            Rule2::Pow => self.pow(a, fa, c, fc),
            Rule2::Atan2 => self.atan2(a, fa, c, fc),
        }
    }

    /// pow(x, y), IEEE 1788: x is restricted to x >= 0, and x = 0 only counts with y > 0. In each
    /// argument pow is monotone (for a fixed other argument), so its extremes over a box are at
    /// the corners; IEEE pow's values at x = 0 and at infinities are the limits the set-based
    /// definition needs (pow(0, y < 0) = inf, pow(0, 0) = 1 as the limit along y = 0).
    fn pow(&mut self, x: Iv, fx: Fact, y: Iv, fy: Fact) -> Iv {
        let z = self.b.zero();
        let x1 = self.b.max(x.lo, z);
        let x1 = self.b.add(x1, z, Round::Nearest); // -0 -> +0: pow(-0, y) has odd-y signs
        let x2 = x.hi;
        let mut lo: Option<Value> = None;
        let mut hi: Option<Value> = None;
        for xa in [x1, x2] {
            for ya in [y.lo, y.hi] {
                let l = self.b.point2(BinaryFn::Pow, xa, ya, Round::Down);
                let u = self.b.point2(BinaryFn::Pow, xa, ya, Round::Up);
                lo = Some(match lo {
                    None => l,
                    Some(p) => self.b.min(p, l),
                });
                hi = Some(match hi {
                    None => u,
                    Some(p) => self.b.max(p, u),
                });
            }
        }
        let r = Iv {
            lo: lo.unwrap(),
            hi: hi.unwrap(),
        };
        let r = self.clamp(
            r,
            Interval {
                lo: 0.0,
                hi: f64::INFINITY,
            },
        );
        // x = [0, 0] after restriction: 0 where y > 0 somewhere, else nothing.
        let x_zero = self.b.cmp(Cmp::Le, x2, z);
        let y_pos = self.b.cmp(Cmp::Gt, y.hi, z);
        let r = Iv {
            lo: self.b.select(x_zero, z, r.lo),
            hi: self.b.select(x_zero, z, r.hi),
        };
        let below = self.b.cmp(Cmp::Lt, x2, z);
        let not_y_pos = self.b.not(y_pos);
        let zero_only = self.b.and(x_zero, not_y_pos);
        let e = self.either_empty(x, fx, y, fy);
        let e = self.b.or(e, below);
        let e = self.b.or(e, zero_only);
        self.empty_if(e, r)
    }

    /// atan2(y, x) with values in [-pi, pi]. Over a box that neither holds the origin inside nor
    /// reaches the negative x axis from below, the angle is continuous and its extremes are at
    /// the corners (the origin corner, where atan2 is undefined, is left out). A box with x < 0
    /// somewhere and y < 0 <= y somewhere holds angles near -pi and the value pi: [-pi, pi].
    fn atan2(&mut self, y: Iv, fy: Fact, x: Iv, fx: Fact) -> Iv {
        let z = self.b.zero();
        // -0 -> +0 in both bounds: the angle of (x < 0, y = 0) is pi, never -pi (range (-pi, pi]).
        let y1 = self.b.add(y.lo, z, Round::Nearest);
        let y2 = self.b.add(y.hi, z, Round::Nearest);
        let ninf = self.b.constant(f64::NEG_INFINITY);
        let pinf = self.b.constant(f64::INFINITY);
        let mut lo = pinf;
        let mut hi = ninf;
        for xa in [x.lo, x.hi] {
            for ya in [y1, y2] {
                let l = self.b.point2(BinaryFn::Atan2, ya, xa, Round::Down);
                let u = self.b.point2(BinaryFn::Atan2, ya, xa, Round::Up);
                let xz = self.b.cmp(Cmp::Eq, xa, z);
                let yz = self.b.cmp(Cmp::Eq, ya, z);
                let origin = self.b.and(xz, yz);
                let l = self.b.select(origin, pinf, l);
                let u = self.b.select(origin, ninf, u);
                lo = self.b.min(lo, l);
                hi = self.b.max(hi, u);
            }
        }
        let p = pi();
        let cut_lo = self.const_down(-p.hi);
        let cut_hi = self.const_up(p.hi);
        let x_neg = self.b.cmp(Cmp::Lt, x.lo, z);
        let y_neg = self.b.cmp(Cmp::Lt, y.lo, z);
        let y_reaches = self.b.cmp(Cmp::Ge, y.hi, z);
        let cut = self.b.and(x_neg, y_neg);
        let cut = self.b.and(cut, y_reaches);
        let lo = self.b.select(cut, cut_lo, lo);
        let hi = self.b.select(cut, cut_hi, hi);
        let r = self.clamp(Iv { lo, hi }, sym(p));
        // Only the origin: undefined.
        let x1z = self.b.cmp(Cmp::Eq, x.lo, z);
        let x2z = self.b.cmp(Cmp::Eq, x.hi, z);
        let y1z = self.b.cmp(Cmp::Eq, y.lo, z);
        let y2z = self.b.cmp(Cmp::Eq, y.hi, z);
        let xo = self.b.and(x1z, x2z);
        let yo = self.b.and(y1z, y2z);
        let origin_only = self.b.and(xo, yo);
        let e = self.either_empty(y, fy, x, fx);
        let e = self.b.or(e, origin_only);
        self.empty_if(e, r)
    }

    /// floor, ceil, trunc, rint: monotone and exact.
    pub(super) fn round_int(&mut self, k: RoundInt, a: Iv) -> Iv {
        Iv {
            lo: self.b.round_int(k, a.lo),
            hi: self.b.round_int(k, a.hi),
        }
    }

    /// Nearest integer, ties away from zero, of one float (exact): t = trunc(x); the fraction
    /// x - t is exact; |x - t| >= 0.5 moves one step away from zero.
    fn round_away(&mut self, x: Value) -> Value {
        let t = self.b.round_int(RoundInt::Trunc, x);
        let d = self.b.sub(x, t, Round::Nearest);
        let d = self.b.abs(d);
        let half = self.b.constant(0.5);
        let away = self.b.cmp(Cmp::Ge, d, half);
        let one = self.b.constant(1.0);
        let up = self.b.add(t, one, Round::Nearest);
        let down = self.b.sub(t, one, Round::Nearest);
        let z = self.b.zero();
        let neg = self.b.cmp(Cmp::Lt, x, z);
        let moved = self.b.select(neg, down, up);
        self.b.select(away, moved, t)
    }

    pub(super) fn round(&mut self, a: Iv) -> Iv {
        Iv {
            lo: self.round_away(a.lo),
            hi: self.round_away(a.hi),
        }
    }

    fn sign_of(&mut self, x: Value) -> Value {
        let z = self.b.zero();
        let one = self.b.constant(1.0);
        let minus_one = self.b.constant(-1.0);
        let pos = self.b.cmp(Cmp::Gt, x, z);
        let neg = self.b.cmp(Cmp::Lt, x, z);
        let s = self.b.select(neg, minus_one, z);
        self.b.select(pos, one, s)
    }

    pub(super) fn sign(&mut self, a: Iv, fa: Fact) -> Iv {
        let r = Iv {
            lo: self.sign_of(a.lo),
            hi: self.sign_of(a.hi),
        };
        let e = self.is_empty(a, fa);
        self.empty_if(e, r)
    }
}
