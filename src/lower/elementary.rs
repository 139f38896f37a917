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
//! Trigonometric functions find their extrema by the quarter period each end lies in. The
//! quarter index `floor(x / (pi/2))` of an end is bracketed rigorously: x times an outward
//! enclosure of 2/pi, rounded down for the low end and up for the high end (sinpi and cospi
//! multiply by 2). A maximum of sin lies in [lo, hi] only if a boundary j = 1 (mod 4) lies
//! between the two indices (x = j pi/2), a minimum only if one with j = 3 does, a pole of tan
//! only at an odd j; otherwise the function is monotone on the interval and the result is the
//! hull of the padded bounds at the ends: two library calls per interval.
//!
//! **Which boxes the reading covers (the guard).** Reading the position of each end inside its
//! period says something about the inside of the box only while the box spans less than what
//! the reading looks for: a whole period (4 quarters) for sin and cos, half of one (2 quarters)
//! for the poles of tan. So the rule first asks whether the indices are at least that far
//! apart (`qb - qa` rounded up); a box that is, or whose indices are not finite (an infinite
//! end, or `2x` overflowing for sinpi and cospi: both indices `inf`, `inf - inf` is NaN), takes
//! the conservative answer, [-1, 1] (the whole line for tan), before any parity is read. Without
//! that guard, two infinite indices compare equal and `[0x1.fffffep+127, inf]` read as a box
//! inside one quarter: sinpi gave `[-1e-45, 1e-45]` (issue 29). The class matrix in
//! `tests/cpu/classes.rs` holds this on unbounded ends, `[MAX, inf]`, adjacent floats at the
//! top of the range and boxes of many periods at 2^52 / 2^1023 (f32: 2^23 / 2^127), on every
//! engine.
//!
//! Inside the guard the indices are finite and the box is narrower than a period. An end
//! within rounding error of a boundary gets the index below (low end) or above (high end),
//! which can only add an extremum the end is within a few ulps of (sin is then within about an
//! ulp of ±1 for arguments below 2^26) or an extra pole (the whole line where a bound was
//! wanted). Indices beyond 2^53 (2^24 in f32) are no longer exact integers; the tests round the
//! differences outward, so they still answer "may be inside" when unsure. A point interval
//! [x, x] holds no boundary whatever its indices (its bounds are those of f(x)), which keeps
//! huge point arguments tight.

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
pub(super) fn half_pi() -> Interval {
    let p = pi();
    Interval {
        lo: p.lo / 2.0,
        hi: p.hi / 2.0,
    }
}

/// 2/pi = `TWO_OVER_PI` + rest: the double nearest 2/pi (0x1.45f306dc9c883p-1) and decimal
/// bounds of the rest (51 significant digits, from a 600-bit 2/pi; a unit test checks both
/// against one computed with astro-float).
const TWO_OVER_PI: f64 = f64::from_bits(0x3FE4_5F30_6DC9_C883);
const TWO_OVER_PI_REST: (&str, &str) = (
    "-3.93573533503649739080776384067842679550093306237645e-17",
    "-3.93573533503649739080776384067842679550093306237644e-17",
);

/// `(c, rest_lo, rest_hi)` in precision `p`: c + [rest_lo, rest_hi] holds 2/pi.
fn two_over_pi_split(p: Precision) -> (f64, f64, f64) {
    // The digits are parsed once per process (each sin, cos or tan lowers two indices).
    static REST: std::sync::OnceLock<(f64, f64)> = std::sync::OnceLock::new();
    let &(lo, hi) = REST.get_or_init(|| {
        let parse = |t: &str| crate::syntax::number::parse_enclosure(t).expect("2/pi digits");
        (parse(TWO_OVER_PI_REST.0).lo, parse(TWO_OVER_PI_REST.1).hi)
    });
    match p {
        Precision::F64 => (TWO_OVER_PI, lo, hi),
        Precision::F32 => {
            let c = TWO_OVER_PI as f32 as f64;
            let d = TWO_OVER_PI - c; // exact: the two are within a factor 2
            let lo = crate::round::add_f64(d, lo, Round::Down);
            let hi = crate::round::add_f64(d, hi, Round::Up);
            (
                c,
                crate::round::narrow_f32(lo, Round::Down) as f64,
                crate::round::narrow_f32(hi, Round::Up) as f64,
            )
        }
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
    /// point (its row's `exact`, `(px, fx)`).
    ///
    /// For a monotone function the exact value also bounds the neighbourhood: an increasing f
    /// has `f(x) >= fx` for `x >= px`, so the lower bound there is `max(v, fx)` (and the upper
    /// bound `min(v, fx)` for `x <= px`; mirrored for a decreasing f). That keeps the bounds
    /// monotone in x, as the enclosures of a box inside a region must be: with the exact value
    /// only at `px`, `exp([0, 1])` was `[1, e]` but `exp([1e-20, 1])` started one float below
    /// 1, so region facts drawn from the first (nonnegative `exp(x) - 1`, a divisor bounded
    /// away from 0) were false for the second (region pruning, issue 29's audit). The other
    /// rules (periodic, tangent, even) keep the exact value at the point alone: their ends are
    /// clamped to the range (cosh >= 1) or decided by the extremum tests.
    pub(super) fn bound(&mut self, f: UnaryFn, x: Value, r: Round) -> Value {
        let v = self.b.point(f, x, r);
        let Some((px, fx)) = f.row().exact else {
            return v;
        };
        let p = self.b.constant(px);
        let exact = self.b.constant(fx);
        let increasing = match f.row().rule {
            Rule::Increasing => true,
            Rule::Decreasing => false,
            _ => {
                let at = self.b.cmp(Cmp::Eq, x, p);
                return self.b.select(at, exact, v);
            }
        };
        // The side of px where fx bounds f(x) from the side this bound is on.
        let beyond = match (increasing, r) {
            (true, Round::Down) | (false, Round::Up) => self.b.cmp(Cmp::Ge, x, p),
            _ => self.b.cmp(Cmp::Le, x, p),
        };
        let clamped = match r {
            Round::Down => self.b.max(v, exact),
            _ => self.b.min(v, exact),
        };
        self.b.select(beyond, clamped, v)
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

    /// Integers `qa <= floor(lo / q)` and `qb >= floor(hi / q)`, q the quarter period of `f`
    /// (pi/2 for sin, cos and tan; 1/2 for sinpi and cospi): the range of quarter periods
    /// [lo, hi] may touch. See the module comment.
    fn quarters(&mut self, f: UnaryFn, a: Iv) -> (Value, Value) {
        if matches!(f, UnaryFn::Sinpi | UnaryFn::Cospi) {
            // 2x is exact (or infinite, which reads as "anywhere").
            let two = self.b.constant(2.0);
            let ta = self.b.mul(a.lo, two, Round::Nearest);
            let tb = self.b.mul(a.hi, two, Round::Nearest);
            let qa = self.b.round_int(RoundInt::Floor, ta);
            let qb = self.b.round_int(RoundInt::Floor, tb);
            return (qa, qb);
        }
        (
            self.quarter_index(a.lo, Round::Down),
            self.quarter_index(a.hi, Round::Up),
        )
    }

    /// An integer below (`Down`) or above (`Up`) `floor(x * 2/pi)`, exact for finite x up to
    /// about 2^53 (2^24 in f32) quarters; an infinite x gives NaN (read as "anywhere").
    ///
    /// `x * 2/pi = p + e + x * rest` with `p = RN(x * c)`, `e = x * c - p` (exact by an fma)
    /// and `2/pi = c + rest`, rest enclosed by two constants. The last two terms are summed
    /// rounded in the wanted direction into `t`, so `v = p + t` is below (`Down`) or above
    /// (`Up`) the real `x * 2/pi`. `floor(RD(v)) = floor(v)` exactly while integers are floats
    /// (an integer `n <= v` is `<= RD(v)`); that is the `Down` index. For `Up`, `floor(RU(v))`
    /// would be one too high when `v` lies within an ulp below an integer n (`RU(v) = n`): then
    /// `RD(v) < n` shows `v < n`, and `n - 1` is the index. Without that step an end like
    /// -1.5707963267948968, 1.4e-16 below x * 2/pi = -1, read as quarter -1 and found a pole of
    /// tan inside [-3.93, -1.5707963267948968]. Beyond 2^53 every float is an integer: the
    /// `Down` index is `RD(v) <= v`, the `Up` one `RU(v)` or `RU(RU(v) - 1)`, both still sound.
    pub(super) fn quarter_index(&mut self, x: Value, r: Round) -> Value {
        let (c, rest_lo, rest_hi) = two_over_pi_split(self.b.precision());
        let c = self.b.constant(c);
        let rest_lo = self.b.constant(rest_lo);
        let rest_hi = self.b.constant(rest_hi);
        let p = self.b.mul(x, c, Round::Nearest);
        let minus_p = self.b.neg(p);
        let e = self.b.fma(x, c, minus_p, Round::Nearest);
        // x * rest is smallest with rest_lo for x >= 0 and with rest_hi for x < 0.
        let z = self.b.zero();
        let neg = self.b.cmp(Cmp::Lt, x, z);
        let rest = match r {
            Round::Down => self.b.select(neg, rest_hi, rest_lo),
            _ => self.b.select(neg, rest_lo, rest_hi),
        };
        let t = self.b.fma(x, rest, e, r);
        let below = self.b.add(p, t, Round::Down);
        if r == Round::Down {
            return self.b.round_int(RoundInt::Floor, below);
        }
        let above = self.b.add(p, t, Round::Up);
        let n = self.b.round_int(RoundInt::Floor, above);
        let one = self.b.constant(1.0);
        let n_minus_one = self.b.sub(n, one, Round::Up);
        let under = self.b.cmp(Cmp::Lt, below, n);
        self.b.select(under, n_minus_one, n)
    }

    /// Whether the box may reach past what its quarter indices can tell apart (the guard of
    /// the module comment): `qb - qa`, rounded up, is at least `m` quarters, or not a number
    /// (an infinite index). Such a box holds every boundary class mod `m`. A point interval
    /// never does (see [`Self::boundary_within`]).
    fn spans_classes(&mut self, qa: Value, qb: Value, m: f64) -> Value {
        let d = self.b.sub(qb, qa, Round::Up);
        let m = self.b.constant(m);
        // Not `d >= m`: NaN (two infinite indices of one sign, inf - inf) must answer yes.
        let narrow = self.b.cmp(Cmp::Lt, d, m);
        self.b.not(narrow)
    }

    /// Whether an integer `j` with `j = s (mod m)` may lie in `(qa, qb]` (`m` 2 or 4), i.e.
    /// `floor((qb - s) / m) > floor((qa - s) / m)`, or the box spans too many quarters for
    /// that reading (`spans`, from [`Self::spans_classes`]: checked first, whatever the
    /// indices say). The differences are rounded outward, so the answer can only err towards
    /// "yes" (once the quarter indices exceed 2^53, or 2^24 in f32, where they are no longer
    /// exact). A point interval [x, x] holds no boundary (x is a float, never a multiple of
    /// pi/2 but 0, and the bounds at x are rigorous): that keeps huge arguments, whose indices
    /// are inexact, tight.
    fn boundary_within(
        &mut self,
        a: Iv,
        (qa, qb): (Value, Value),
        spans: Value,
        s: f64,
        m: f64,
    ) -> Value {
        let s = self.b.constant(s);
        let inv_m = self.b.constant(1.0 / m); // 1/2 or 1/4: exact scaling
        let ua = self.b.sub(qa, s, Round::Down);
        let ua = self.b.mul(ua, inv_m, Round::Nearest);
        let ua = self.b.round_int(RoundInt::Floor, ua);
        let ub = self.b.sub(qb, s, Round::Up);
        let ub = self.b.mul(ub, inv_m, Round::Nearest);
        let ub = self.b.round_int(RoundInt::Floor, ub);
        // Not `ub <= ua`: NaN (an infinite end) answers yes.
        let none = self.b.cmp(Cmp::Le, ub, ua);
        let some = self.b.not(none);
        let some = self.b.or(some, spans);
        let wide = self.b.cmp(Cmp::Lt, a.lo, a.hi);
        self.b.and(some, wide)
    }

    /// sin, cos, sinpi, cospi: periodic with values in [-1, 1]; see the module comment.
    fn periodic(&mut self, f: UnaryFn, a: Iv, fa: Fact) -> Iv {
        let (qa, qb) = self.quarters(f, a);
        // Maxima at the quarter boundaries j = 1 (mod 4) for sin (x = pi/2 + 2k pi), j = 0 for
        // cos; minima two quarters later.
        let s_max = match f {
            UnaryFn::Sin | UnaryFn::Sinpi => 1.0,
            _ => 0.0,
        };
        let spans = self.spans_classes(qa, qb, 4.0);
        let has_max = self.boundary_within(a, (qa, qb), spans, s_max, 4.0);
        let has_min = self.boundary_within(a, (qa, qb), spans, s_max + 2.0, 4.0);
        let lo_lo = self.bound(f, a.lo, Round::Down);
        let lo_hi = self.bound(f, a.lo, Round::Up);
        let hi_lo = self.bound(f, a.hi, Round::Down);
        let hi_hi = self.bound(f, a.hi, Round::Up);
        let lo = self.b.min(lo_lo, hi_lo);
        let hi = self.b.max(lo_hi, hi_hi);
        let one = self.b.constant(1.0);
        let minus_one = self.b.constant(-1.0);
        let lo = self.b.select(has_min, minus_one, lo);
        let hi = self.b.select(has_max, one, hi);
        let r = self.clamp(Iv { lo, hi }, Interval { lo: -1.0, hi: 1.0 });
        let e = self.is_empty(a, fa);
        self.empty_if(e, r)
    }

    /// tan: increasing between asymptotes at the odd quarter boundaries (x = pi/2 + k pi). When
    /// no odd boundary may lie in the interval, tan is continuous there and the result is the
    /// hull of the ends; otherwise the whole line.
    fn tan(&mut self, a: Iv, fa: Fact) -> Iv {
        let (qa, qb) = self.quarters(UnaryFn::Tan, a);
        let spans = self.spans_classes(qa, qb, 2.0);
        let pole = self.boundary_within(a, (qa, qb), spans, 1.0, 2.0);
        let lo = self.bound(UnaryFn::Tan, a.lo, Round::Down);
        let hi = self.bound(UnaryFn::Tan, a.hi, Round::Up);
        let ninf = self.b.constant(f64::NEG_INFINITY);
        let pinf = self.b.constant(f64::INFINITY);
        let lo = self.b.select(pole, ninf, lo);
        let hi = self.b.select(pole, pinf, hi);
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
        let one = self.b.constant(1.0);
        let pinf = self.b.constant(f64::INFINITY);
        let ninf = self.b.constant(f64::NEG_INFINITY);
        for xa in [x1, x2] {
            for ya in [y.lo, y.hi] {
                let l = self.b.point2(BinaryFn::Pow, xa, ya, Round::Down);
                let u = self.b.point2(BinaryFn::Pow, xa, ya, Round::Up);
                // A corner where pow is exactly 0, 1 or inf (y = 0, x = 0, 1 or inf, y
                // infinite: IEEE 754's exact cases) takes that value, not the point
                // function's bracket around it (x^0 is 1, not [1 - ulp, 1 + ulp]): the
                // reverse powRev1 tells an attained 1 or 0 from a limit by it. The value is
                // the one of 0, 1, inf the bracket holds.
                let specials = [
                    self.b.cmp(Cmp::Eq, ya, z),
                    self.b.cmp(Cmp::Eq, xa, z),
                    self.b.cmp(Cmp::Eq, xa, one),
                    self.b.cmp(Cmp::Eq, xa, pinf),
                    self.b.cmp(Cmp::Eq, ya, pinf),
                    self.b.cmp(Cmp::Eq, ya, ninf),
                ];
                let exact = specials
                    .into_iter()
                    .reduce(|p, q| self.b.or(p, q))
                    .expect("six cases");
                let has_zero = self.b.cmp(Cmp::Le, l, z);
                let has_one = self.b.cmp(Cmp::Le, l, one);
                let one_or_inf = self.b.select(has_one, one, pinf);
                let value = self.b.select(has_zero, z, one_or_inf);
                let l = self.b.select(exact, value, l);
                let u = self.b.select(exact, value, u);
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

#[cfg(test)]
mod tests {
    use super::*;
    use astro_float::{BigFloat, Consts, RoundingMode as RM};

    /// The split of 2/pi the quarter indices use holds 2/pi, checked against a 640-bit 2/pi
    /// (the sums of two doubles below are exact at that precision).
    #[test]
    fn two_over_pi_split_encloses_two_over_pi() {
        let bits = 640;
        let mut cc = Consts::new().expect("astro-float constants");
        let pi = cc.pi(bits, RM::ToEven);
        let t = BigFloat::from_f64(2.0, bits).div(&pi, bits, RM::ToEven);
        let big = |x: f64| BigFloat::from_f64(x, bits);
        for p in [Precision::F64, Precision::F32] {
            let (c, lo, hi) = two_over_pi_split(p);
            let below = big(c).add(&big(lo), bits, RM::None);
            let above = big(c).add(&big(hi), bits, RM::None);
            assert!(
                below < t && t < above,
                "{p:?}: 2/pi not in {c:e} + [{lo:e}, {hi:e}]"
            );
            // Tight: the rest is known to far better than c's own ulp.
            let tight = if p == Precision::F64 { 1e-30 } else { 1e-12 };
            assert!(hi - lo < c * tight, "{p:?}: rest bounds too wide");
            if p == Precision::F32 {
                for v in [c, lo, hi] {
                    assert_eq!(v as f32 as f64, v, "{v:e} is not an f32");
                }
            }
        }
        // c is the double nearest 2/pi.
        let (c, ..) = two_over_pi_split(Precision::F64);
        let half_ulp = big(crate::round::next_up(c) - c).div(&big(2.0), bits, RM::None);
        let diff = t.sub(&big(c), bits, RM::None).abs();
        assert!(diff < half_ulp);
    }
}
