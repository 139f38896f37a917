//! Integer powers rounded once: `pown(x, n)` for every integer n, within one ulp per bound.
//! (The root rule, [`super::root`], verifies its candidates with the same chains.)
//!
//! The interval rules (which bound of x gives which bound of x^n) are at the bottom; the work is
//! in [`Lowering::power_bound`], a bound of `x^n` for one float `x >= 0` in one direction.
//!
//! **Why not repeated directed products.** Rounding every product of the binary method down
//! (up) gives a bound, but each product rounds once more: x^12 lost up to 13 ulps. Here the power
//! is carried as a *double word* `h + l` (two floats, about 2p bits) and rounded to the target
//! precision once, at the end.
//!
//! **The chain is a bound, not an estimate.** Every rounding of the chain goes in the requested
//! direction, so `h + l` is itself a lower (upper) bound of x^n whatever happens: the products
//! `p = h*h` are rounded down (never overflowing to infinity), the remainders `e = fma(h, h, -p)`
//! (exact when nothing underflows) and the cross terms `2*h*l` are rounded in the direction, the
//! dropped `l*l` is nonnegative (a lower bound may drop it; an upper bound adds it). Scaling by a
//! power of two is exact. Rigor therefore never depends on the ranges below, only tightness does.
//!
//! **Tightness.** Without underflow each double-word step has a relative error of a few units of
//! 2^-2p (Joldes, Muller, Popescu, "Tight and rigorous error bounds for basic building blocks of
//! double-word arithmetic", 2017), and the chain has at most 2*64 steps: far below half an ulp of
//! the result, so the one final rounding lands on the tightest bound or its neighbour. Where x^n
//! (or its reciprocal) would leave the range in which the low words are exact, x is first scaled
//! by a power of two (`2^k`, or per step for large n) chosen by a run-time test of x against a
//! threshold. The scale is undone after the one rounding by one product rounded the same way:
//! directed roundings compose (rounding down to a grid and then down to a coarser grid whose
//! points, scaled back, are points of the first is rounding down once), so a subnormal result is
//! still rounded once (see [`Lowering::round_scaled`]).
//!
//! **Negative n** is `1 / x^|n|` from the double word of x^|n| bounding the other way:
//! `q = 1/h`, `r = 1 - q*(h + l)` (by fma, in the direction), then `1/(h+l) = q/(1-r)`, which
//! lies between `q*(1 + r)` and `q*(1 + r + 2r^2)` for `r <= 1/2`. Clamps make the cases where
//! `r` is not small (results far outside the range) still rigorous.

use super::{Iv, Lowering};
use crate::ir::sign::Fact;
use crate::scalar::{Cmp, Precision, Round, Value};

/// Steps between renormalizations of the double word. Without renormalizing, the low word can
/// grow by a factor of about 4 per squaring relative to an ulp of the high word, and its
/// rounding error with it; after 4 steps that factor is at most 2^8, which keeps the chain's
/// error below 2^-33 of the result even in f32 (2^-75 in f64).
const RENORMALIZE_EVERY: u32 = 4;

/// Powers `x^n` with `|n|` above this are bounded as `exp(n log x)`
/// ([`Lowering::exp_log_bound`]), not by the double-word chain. The chain's overflow test
/// compares x with a threshold `T = 2^((emax + 1/2) / n)` rounded to a float; its rounding
/// error is raised to the n-th power, and once `n * 2^-53` is no longer small against the
/// half binade of margin (f64 from about 3 * 2^51, f32 from about 2^59) an x whose power is
/// below MAX read as overflowing (`pown(1, 3 * 2^61)` gave `[MAX, inf]`, issue 29's audit);
/// near 1 the floats are too coarse for any threshold to keep the chain within its range.
/// 2^40 keeps the chain where the tests hold it (exponents up to 2^40 in
/// `tests/cpu/powers.rs`).
pub(super) const CHAIN_MAX_POWN: u64 = 1 << 40;

/// Roots `rootn(x, n)` with `|n|` above this are bounded as `exp(log(x) / n)`. The Newton step
/// of [`super::root`] turns meaningless once `est^n / x - 1` exceeds n (f32 from about 2^28:
/// a negative candidate then passed the verification as an upper bound, `rootn(2^-46, 2^30)`
/// gave `[0, -65535]`); there `log(x) / n` is below 2^-10 in magnitude, so `exp` of it is
/// within a few ulps of the root.
pub(super) const CHAIN_MAX_ROOTN: u64 = 1 << 20;

/// The range constants of one precision.
pub(super) struct Ranges {
    /// Largest finite value.
    pub(super) max: f64,
    /// Smallest positive (subnormal) value.
    pub(super) min_sub: f64,
    /// The unscaled chain is used while x^|n| >= 2^-U (for n < 0, also while x^|n| <= 2^U):
    /// there every low word of the chain is exact (f64: down to about 2^-965; f32: 2^-100).
    pub(super) u: i32,
    /// The largest scale 2^S (and 2^-S) used, both representable.
    pub(super) s: i32,
}

pub(super) fn ranges(p: Precision) -> Ranges {
    match p {
        Precision::F64 => Ranges {
            max: f64::MAX,
            min_sub: f64::from_bits(1),
            u: 900,
            s: 1023,
        },
        Precision::F32 => Ranges {
            max: f32::MAX as f64,
            min_sub: f32::from_bits(1) as f64,
            u: 60,
            s: 127,
        },
    }
}

/// 2^e exactly, subnormals included (`powi` goes through 1/2^-e, which overflows below 2^-1023).
fn pow2(e: i32) -> f64 {
    assert!((-1074..=1023).contains(&e), "2^{e} is not a double");
    if e >= -1022 {
        f64::from_bits(((e + 1023) as u64) << 52)
    } else {
        f64::from_bits(1u64 << (e + 1074))
    }
}

/// Rounds an f64 to the precision, toward +inf (`up`) or -inf.
pub(super) fn to_precision(x: f64, p: Precision, up: bool) -> f64 {
    match p {
        Precision::F64 => x,
        Precision::F32 => {
            let f = x as f32;
            let f = if up && (f as f64) < x {
                f.next_up()
            } else if !up && (f as f64) > x {
                f.next_down()
            } else {
                f
            };
            f as f64
        }
    }
}

/// A double word `h + l`; `l` is `None` while it is known to be zero.
#[derive(Clone, Copy)]
pub(super) struct Dw {
    pub(super) h: Value,
    pub(super) l: Option<Value>,
}

/// A scaled double-word power (see [`Lowering::scaled_chain`]).
pub(super) struct Chain {
    pub(super) d: Dw,
    pub(super) c: Value,
    pub(super) ic: Value,
    pub(super) over: Value,
}

/// One alternative scaling of the chain, taken when `when` holds.
struct Scaling {
    when: Value,
    /// x is multiplied by 2^k before the chain.
    k: i32,
    /// Per-step scale exponents for |n| > S (empty otherwise): the chain's partial power x^j
    /// is kept near 2^(sign * S * j / |n|).
    sign: i32,
    /// The power is the chain's result times 2^final_exp.
    final_exp: i32,
}

pub(super) fn other(r: Round) -> Round {
    match r {
        Round::Down => Round::Up,
        _ => Round::Down,
    }
}

impl Lowering {
    /// A bound of `x^n` in direction `r` (Down or Up) for `x >= 0` (`-0`, `+inf` included; a
    /// NaN x gives an unspecified value, the caller masks empty intervals). Within one ulp of
    /// the tightest bound for every x and n != 0 (see the module comment).
    pub(super) fn power_bound(&mut self, x: Value, n: i64, r: Round) -> Value {
        debug_assert!(n != 0 && r != Round::Nearest);
        if n.unsigned_abs() > CHAIN_MAX_POWN {
            return self.exp_log_bound(x, n as f64, false, r);
        }
        match n {
            1 => return x,
            2 => return self.b.mul(x, x, r), // one rounding already
            -1 => {
                // One directed division; |x| so that -0 gives +inf.
                let one = self.b.constant(1.0);
                let ax = self.b.abs(x);
                return self.b.div(one, ax, r);
            }
            _ => {}
        }
        if n > 0 {
            self.positive_power(x, n.unsigned_abs(), r)
        } else {
            self.negative_power(x, n.unsigned_abs(), r)
        }
    }

    /// `x^e` for `x >= 0` bounded in direction `r` through the point functions:
    /// `exp(e * log(x))` with `e = k` or (`root`) `e = 1/k`, each operation rounded toward the
    /// bound (the logarithm in the direction that the sign of `k` preserves, the product or
    /// quotient by `k` at both neighbours of `k` in the precision when `k` is not one of its
    /// floats, the smaller for a lower bound). x = 0 and x = +inf give the limits (0 or +inf).
    /// Rigorous, and monotone in x like every bound; its accuracy is the point functions' with
    /// `|e log x|` ulps of the argument's rounding: for roots (`|e log x| < 2^-10`) a few ulps,
    /// for powers near the top of the range up to about 2^11 ulps. Used only beyond
    /// [`CHAIN_MAX_POWN`] and [`CHAIN_MAX_ROOTN`].
    pub(super) fn exp_log_bound(&mut self, x: Value, k: f64, root: bool, r: Round) -> Value {
        use crate::point::UnaryFn;
        let p = self.b.precision();
        let x = self.b.abs(x); // -0 is 0
                               // A lower bound of k * log(x) needs log(x) from below when k > 0, from above when k < 0.
        let log_dir = if k > 0.0 { r } else { other(r) };
        let l = self.bound(UnaryFn::Log, x, log_dir);
        let (k_lo, k_hi) = (to_precision(k, p, false), to_precision(k, p, true));
        let mut t: Option<Value> = None;
        for kk in if k_lo == k_hi {
            vec![k_lo]
        } else {
            vec![k_lo, k_hi]
        } {
            let c = self.b.constant(kk);
            let v = if root {
                self.b.div(l, c, r)
            } else {
                self.b.mul(l, c, r)
            };
            t = Some(match t {
                None => v,
                Some(prev) if r == Round::Down => self.b.min(prev, v),
                Some(prev) => self.b.max(prev, v),
            });
        }
        let y = self.bound(UnaryFn::Exp, t.expect("one candidate"), r);
        // exp >= 0: a lower bound stepped below an underflowed 0 comes back to 0.
        let y = if r == Round::Down {
            let z = self.b.zero();
            self.b.max(y, z)
        } else {
            y
        };
        // The ends exactly (log's bounds at 0 are -inf below and -MAX above).
        let z = self.b.zero();
        let inf = self.b.constant(f64::INFINITY);
        let (at0, at_inf) = if k > 0.0 { (z, inf) } else { (inf, z) };
        let is0 = self.b.cmp(Cmp::Eq, x, z);
        let is_inf = self.b.cmp(Cmp::Eq, x, inf);
        let y = self.b.select(is0, at0, y);
        self.b.select(is_inf, at_inf, y)
    }

    /// `x^m` (m >= 3) rounded in direction r.
    fn positive_power(&mut self, x: Value, m: u64, r: Round) -> Value {
        let rg = ranges(self.b.precision());
        // Without renormalization (short chains) every low word is >= 0 (the high words are
        // rounded down), so nothing can meet as inf - inf: beyond MAX, rounding down saturates
        // at MAX and rounding up overflows to +inf by itself, given x <= MAX (+inf, an upper
        // bound's end, is replaced by MAX, whose power also overflows). Longer chains test x
        // against the overflow threshold instead.
        let short = 64 - m.leading_zeros() - 1 <= RENORMALIZE_EVERY;
        let x = if short && r == Round::Up {
            let max = self.b.constant(rg.max);
            let inf = self.b.constant(f64::INFINITY);
            let is_inf = self.b.cmp(Cmp::Eq, x, inf);
            self.b.select(is_inf, max, x)
        } else {
            x
        };
        // Near underflow (x^m < 2^-U) x is scaled up by 2^k, so that the chain's low words stay
        // exact; above the range nothing is scaled (the result is MAX or +inf anyway).
        let p = self.b.precision();
        let (k, e) = scale_exponents(m, rg.s);
        let t = to_precision((-(rg.u as f64) / m as f64).exp2(), p, true);
        let tc = self.b.constant(t);
        let tiny = self.b.cmp(Cmp::Lt, x, tc);
        let scalings = [Scaling {
            when: tiny,
            k,
            sign: 1,
            final_exp: -e,
        }];
        let (xs, steps) = self.scaled_base(x, m, rg.s, &scalings, r);
        // All steps but the last as a double word; the last one fused into the one rounding
        // (its scale factor, if any, is left to the underflow path below).
        let last = steps.len().saturating_sub(1);
        let d = self.chain(xs, m >> 1, r, &steps[..last]);
        let y = if m & 1 == 0 {
            self.dw_square_rounded(d, r)
        } else {
            let d = self.dw_square(d, r);
            self.dw_times_rounded(d, xs, r)
        };
        // Scaled, y is x^m 2^E rounded once in direction r (E = k m, or S with per-step scales,
        // less the last step's scale), a normal number. Rounding y 2^-E in the same direction
        // gives x^m rounded once: directed roundings compose when every float of the coarser
        // grid (the subnormals), scaled by 2^E, is a float of the finer one, which it is. So
        // one directed product undoes the scale (and is the identity where nothing was scaled).
        let d_last = match steps.last() {
            Some(Some(_)) => self.last_step_scale(m, rg.s),
            _ => 0,
        };
        let unscale = self.select_pow2(&scalings, |_| d_last - e);
        let y = self.b.mul(y, unscale, r);
        if short {
            return y;
        }
        // Renormalized low words can be negative: a zero result may come out just below 0.
        let y = if r == Round::Down {
            let z = self.b.zero();
            let neg = self.b.cmp(Cmp::Lt, y, z);
            self.b.select(neg, z, y)
        } else {
            y
        };
        // Beyond the top of the range the result is MAX (down) or +inf (up).
        let over = self.beyond(x, m, 0);
        let top = self.b.constant(if r == Round::Down {
            rg.max
        } else {
            f64::INFINITY
        });
        self.b.select(over, top, y)
    }

    /// The scale exponent d of the last per-step factor of the chain of `x^m` (m > S).
    fn last_step_scale(&self, m: u64, s: i32) -> i32 {
        let target = |j: u64| ((s as u128 * j as u128 + m as u128 / 2) / m as u128) as i32;
        target(m) - 2 * target(m >> 1)
    }

    /// The double word D of `x^m` (x >= 0) bounding in direction r, with x scaled by a power of
    /// two where x^m is below 2^-U (and, with `huge`, above 2^U): `x^m` is (or is bounded by)
    /// `D * c`, `ic = 1/c`. `over`: x^m is beyond the range of the (scaled) chain, whose value
    /// is then meaningless: above 2^(emax + E) with E the scale of the huge side (0 without).
    pub(super) fn scaled_chain(&mut self, x: Value, m: u64, r: Round, huge: bool) -> Chain {
        let p = self.b.precision();
        let rg = ranges(p);
        let (k, e) = scale_exponents(m, rg.s);
        let lo_t = to_precision((-(rg.u as f64) / m as f64).exp2(), p, true);
        let lo_c = self.b.constant(lo_t);
        let mut scalings = vec![Scaling {
            when: self.b.cmp(Cmp::Lt, x, lo_c),
            k,
            sign: 1,
            final_exp: -e,
        }];
        if huge {
            let hi_t = to_precision((rg.u as f64 / m as f64).exp2(), p, false);
            let hi_c = self.b.constant(hi_t);
            scalings.push(Scaling {
                when: self.b.cmp(Cmp::Gt, x, hi_c),
                k: -k,
                sign: -1,
                final_exp: e,
            });
        }
        let (xs, steps) = self.scaled_base(x, m, rg.s, &scalings, r);
        let d = self.chain(xs, m, r, &steps);
        let (c, ic) = self.final_scale(&scalings);
        let over = self.beyond(x, m, if huge { e } else { 0 });
        Chain { d, c, ic, over }
    }

    /// Boolean: x^m is certainly above 2^(emax + extra) (emax: 1024 or 128), which holds for
    /// x >= T with T rounded up from 2^((emax + extra + 1/2) / m). Below T the chain stays
    /// within a few binades above MAX, where its products and cross terms cannot overflow to
    /// infinities (which would meet each other as inf - inf); at and above T its value is not
    /// used. +inf is above T.
    ///
    /// Sound only while m * 2^-53 is small against the half binade of margin: T comes from
    /// `exp2` rounded to nearest and its error is raised to the m-th power (f64 fails from
    /// about 3 * 2^51, f32 from 2^59). Callers keep m <= [`CHAIN_MAX_POWN`] (2^40); held on
    /// every interval class by the class matrix's pown cells up to 2^40 + 1 and by
    /// `tests/cpu/powers.rs` (`pown_within_one_ulp_*`, `huge_exponents_are_contained`).
    fn beyond(&mut self, x: Value, m: u64, extra: i32) -> Value {
        let p = self.b.precision();
        let emax = match p {
            Precision::F64 => 1024.0,
            Precision::F32 => 128.0,
        };
        let t = ((emax + extra as f64 + 0.5) / m as f64).exp2();
        let t = to_precision(t, p, true);
        let tc = self
            .b
            .constant(if t.is_finite() { t } else { f64::INFINITY });
        self.b.cmp(Cmp::Ge, x, tc)
    }

    /// `x^-m` (m >= 2) rounded in direction r, for x >= 0: +inf at 0, 0 at +inf.
    fn negative_power(&mut self, x: Value, m: u64, r: Round) -> Value {
        let rg = ranges(self.b.precision());
        let x = self.b.abs(x); // -0 is 0
                               // A lower bound of 1/D needs an upper bound of D, and the other way round.
        let ch = self.scaled_chain(x, m, other(r), true);
        let d = ch.d;
        let max = self.b.constant(rg.max);
        let one = self.b.constant(1.0);
        let q = self.b.div(one, d.h, Round::Nearest);
        let q = self.b.min(q, max); // d.h underflowed to 0: 1/D is huge anyway
        let nq = self.b.neg(q);
        let r1 = self.b.fma(nq, d.h, one, r);
        let res = match d.l {
            Some(l) => self.b.fma(nq, l, r1, r),
            None => r1,
        };
        // 1/D = q/(1 - res) >= q(1 + res) (down); <= q(1 + res + 2 res^2) (up, res <= 1/2).
        let t = match r {
            Round::Down => res,
            _ => {
                let a = self.b.abs(res);
                let a2 = self.b.add(a, a, Round::Up);
                self.b.fma(a2, a, res, Round::Up)
            }
        };
        let lo_word = self.b.mul(q, t, r);
        // x^-m = (1/D) / c.
        let y = self.round_scaled(q, Some(lo_word), ch.ic, r);
        // Results far below the range, where q and res lose their meaning: an upper bound of a
        // positive value is at least the smallest subnormal, a lower bound at least 0.
        let y = match r {
            Round::Down => {
                let z = self.b.zero();
                self.b.max(y, z)
            }
            _ => {
                let nan = self.b.is_nan(y);
                let inf = self.b.constant(f64::INFINITY);
                let y = self.b.select(nan, inf, y);
                let ms = self.b.constant(rg.min_sub);
                self.b.max(y, ms)
            }
        };
        // x^m beyond the range of the scaled chain (x = +inf included): the result is below
        // every float: 0 (down), the smallest subnormal (up). 1/0 = +inf.
        let bottom = self
            .b
            .constant(if r == Round::Down { 0.0 } else { rg.min_sub });
        let y = self.b.select(ch.over, bottom, y);
        let z = self.b.zero();
        let inf = self.b.constant(f64::INFINITY);
        let at_zero = self.b.cmp(Cmp::Eq, x, z);
        self.b.select(at_zero, inf, y)
    }

    /// Applies the scalings' factors 2^k to x (selected at run time) and returns the per-step
    /// factors for |n| > S: one selected constant per step (None where every factor is 1).
    fn scaled_base(
        &mut self,
        x: Value,
        m: u64,
        s: i32,
        scalings: &[Scaling],
        r: Round,
    ) -> (Value, Vec<Option<Value>>) {
        let xs = if scalings.iter().all(|sc| sc.k == 0) {
            x
        } else {
            let f = self.select_pow2(scalings, |sc| sc.k);
            self.b.mul(x, f, r) // exact: a power of two, within the range
        };
        let mut steps = Vec::new();
        if m > s as u64 {
            // Left-to-right binary method: the partial exponent j doubles (plus the bit) each
            // step; keep the scale of x^j at round(S * j / m), so the chain stays within about
            // 2^±S of 1 whatever j is.
            let bits = 64 - m.leading_zeros();
            let mut j: u64 = 1;
            let target = |j: u64| ((s as u128 * j as u128 + m as u128 / 2) / m as u128) as i32;
            let mut scale = 0; // target(1) is 0 or 1: x itself is not scaled
            for i in (0..bits - 1).rev() {
                j = 2 * j + ((m >> i) & 1);
                let want = target(j);
                let d = want - 2 * scale;
                scale = want;
                steps.push(if d == 0 {
                    None
                } else {
                    Some(self.select_pow2(scalings, |sc| sc.sign * d))
                });
            }
        }
        (xs, steps)
    }

    /// `2^e(sc)` of the scaling that holds, else 1.
    fn select_pow2(&mut self, scalings: &[Scaling], e: impl Fn(&Scaling) -> i32) -> Value {
        let mut v = self.b.constant(1.0);
        for sc in scalings.iter().rev() {
            let c = self.b.constant(pow2(e(sc)));
            v = self.b.select(sc.when, c, v);
        }
        v
    }

    /// The final factor `c = 2^final_exp` of the scaling that holds (else 1) and its inverse.
    fn final_scale(&mut self, scalings: &[Scaling]) -> (Value, Value) {
        let c = self.select_pow2(scalings, |sc| sc.final_exp);
        let ic = self.select_pow2(scalings, |sc| -sc.final_exp);
        (c, ic)
    }

    /// The double word of `xs^m` bounding in direction r (see the module comment); `steps[i]`
    /// is the scale factor after step i, if any.
    fn chain(&mut self, xs: Value, m: u64, r: Round, steps: &[Option<Value>]) -> Dw {
        let bits = 64 - m.leading_zeros();
        let mut d = Dw { h: xs, l: None };
        let mut since_renorm = 0;
        for (step, i) in (0..bits - 1).rev().enumerate() {
            d = self.dw_square(d, r);
            if (m >> i) & 1 == 1 {
                d = self.dw_times(d, xs, r);
            }
            if let Some(Some(f)) = steps.get(step) {
                // Exact unless it underflows; rounded in the direction so that it stays a bound.
                d = Dw {
                    h: self.b.mul(d.h, *f, r),
                    l: d.l.map(|l| self.b.mul(l, *f, r)),
                };
            }
            since_renorm += 1;
            if since_renorm == RENORMALIZE_EVERY && i > 0 {
                d = self.dw_renormalize(d, r);
                since_renorm = 0;
            }
        }
        d
    }

    /// (h + l)^2: `p = h*h` rounded down, `e = h*h - p` and the cross term `2hl` rounded in
    /// direction r; an upper bound adds `l*l`.
    fn dw_square(&mut self, d: Dw, r: Round) -> Dw {
        let p = self.b.mul(d.h, d.h, Round::Down);
        let np = self.b.neg(p);
        let e = self.b.fma(d.h, d.h, np, r);
        let l = match d.l {
            None => e,
            Some(l) => {
                // Exact unless it overflows; rounded in the direction so that it stays a bound then
                // (to nearest, MAX + MAX would be +inf and a lower bound would meet inf - inf).
                let l2 = self.b.add(l, l, r);
                let t = self.b.fma(d.h, l2, e, r);
                if r == Round::Up {
                    self.b.fma(l, l, t, Round::Up)
                } else {
                    t // l*l >= 0 dropped
                }
            }
        };
        Dw { h: p, l: Some(l) }
    }

    /// (h + l)^2 rounded once in direction r: `fma(h, h, t)` with t the cross term 2hl rounded
    /// in direction r (plus l*l for an upper bound); t's own rounding is 2^-2p of the result.
    fn dw_square_rounded(&mut self, d: Dw, r: Round) -> Value {
        let Some(l) = d.l else {
            return self.b.mul(d.h, d.h, r);
        };
        let l2 = self.b.add(l, l, r);
        let t = self.b.mul(d.h, l2, r);
        let t = if r == Round::Up {
            self.b.fma(l, l, t, Round::Up)
        } else {
            t // l*l >= 0 dropped
        };
        self.b.fma(d.h, d.h, t, r)
    }

    /// (h + l) * x rounded once in direction r (x >= 0).
    fn dw_times_rounded(&mut self, d: Dw, x: Value, r: Round) -> Value {
        match d.l {
            None => self.b.mul(d.h, x, r),
            Some(l) => {
                let t = self.b.mul(l, x, r);
                self.b.fma(d.h, x, t, r)
            }
        }
    }

    /// (h + l) * x for x >= 0.
    fn dw_times(&mut self, d: Dw, x: Value, r: Round) -> Dw {
        let p = self.b.mul(d.h, x, Round::Down);
        let np = self.b.neg(p);
        let e = self.b.fma(d.h, x, np, r);
        let l = match d.l {
            None => e,
            Some(l) => self.b.fma(l, x, e, r),
        };
        Dw { h: p, l: Some(l) }
    }

    /// `h + l` as `s + l'` with `s = h + l` rounded to nearest (capped at MAX) and
    /// `l' = l - (s - h)`: exact where the chain is exact (Fast2Sum), a bound in direction r
    /// otherwise.
    fn dw_renormalize(&mut self, d: Dw, r: Round) -> Dw {
        let Some(l) = d.l else { return d };
        let max = self.b.constant(ranges(self.b.precision()).max);
        let s = self.b.add(d.h, l, Round::Nearest);
        let s = self.b.min(s, max);
        let z = self.b.sub(s, d.h, Round::Nearest);
        let l = self.b.sub(l, z, r);
        Dw { h: s, l: Some(l) }
    }

    /// `(h + l) * c` rounded once in direction r, where c is a power of two: `h + l` rounded,
    /// then scaled with the same rounding. Directed roundings compose: every float of the
    /// coarser result grid (subnormals, when c < 1) divided by c is a float, so rounding twice
    /// in one direction is rounding once. With c > 1 the scaling is exact or overflows in the
    /// direction.
    fn round_scaled(&mut self, h: Value, l: Option<Value>, c: Value, r: Round) -> Value {
        let y = match l {
            Some(l) => self.b.add(h, l, r),
            None => h,
        };
        if self.b.as_const(c) == Some(1.0) {
            return y;
        }
        self.b.mul(y, c, r)
    }

    /// `pown(x, n)` on an interval (IEEE 1788): n = 0 gives [1, 1]; even n uses the mignitude
    /// and magnitude; odd n is monotone; negative n is decreasing on each side of its pole at 0
    /// (an interval across 0 gives the whole line, [0, 0] the empty set).
    pub(super) fn pown(&mut self, a: Iv, n: i64, f: Fact) -> Iv {
        if n == 0 {
            let one = self.b.constant(1.0);
            let empty = self.is_empty(a, f);
            return self.empty_if(empty, Iv { lo: one, hi: one });
        }
        if n == 1 {
            return a;
        }
        let r = if n % 2 == 0 {
            let (mig, mag) = self.mig_mag(a, f);
            if n > 0 {
                Iv {
                    lo: self.power_bound(mig, n, Round::Down),
                    hi: self.power_bound(mag, n, Round::Up),
                }
            } else {
                Iv {
                    lo: self.power_bound(mag, n, Round::Down),
                    hi: self.power_bound(mig, n, Round::Up),
                }
            }
        } else if n > 0 {
            Iv {
                lo: self.odd_power_bound(a.lo, n, f, Round::Down),
                hi: self.odd_power_bound(a.hi, n, f, Round::Up),
            }
        } else {
            self.odd_with_pole(a, f, move |l, x, r| l.power_bound(x, n, r))
        };
        // Short positive powers (no renormalization, no overflow guard) let NaN, the empty set,
        // propagate through max, the products and the selects (a NaN compares false, and the
        // selected constants are multiplied by it); the other rules clamp with min/max, which
        // drop NaN, so their emptiness is explicit.
        if n > 0 && 64 - n.leading_zeros() - 1 <= RENORMALIZE_EVERY {
            return r;
        }
        let mut empty = self.is_empty(a, f);
        if n < 0 && f.nonneg && f.nonpos {
            // Known to be [0, 0] (or empty): no point in the domain.
            let nan = self.b.nan();
            return Iv { lo: nan, hi: nan };
        }
        if n < 0 {
            // [0, 0] has no point in the domain.
            let z = self.b.zero();
            let lo0 = self.b.cmp(Cmp::Eq, a.lo, z);
            let hi0 = self.b.cmp(Cmp::Eq, a.hi, z);
            let zero = self.b.and(lo0, hi0);
            empty = self.b.or(empty, zero);
        }
        // The chains map NaN to numbers (min/max ignore NaN), so emptiness is explicit.
        self.empty_if(empty, r)
    }

    /// (mignitude, magnitude) of a nonempty interval.
    fn mig_mag(&mut self, a: Iv, f: Fact) -> (Value, Value) {
        if f.nonneg {
            return (a.lo, a.hi);
        }
        if f.nonpos {
            return (self.b.neg(a.hi), self.b.neg(a.lo));
        }
        // t = max(a1, -a2) is the mignitude when positive; when t <= 0 the interval contains 0.
        // In f64 the maxima are compare-and-select: an empty interval (NaN, NaN) stays NaN all
        // the same, and max.f64's own NaN rule costs four instructions on the GPU (max.f32 one).
        let na2 = self.b.neg(a.hi);
        let t = self.max_of_ordered(a.lo, na2);
        let z = self.b.zero();
        let contains_zero = self.b.cmp(Cmp::Le, t, z);
        let mig = self.b.select(contains_zero, z, t);
        let na1 = self.b.neg(a.lo);
        (mig, self.max_of_ordered(na1, a.hi))
    }

    /// max(a, b) where a and b are both NaN or both numbers (the bounds of one interval).
    fn max_of_ordered(&mut self, a: Value, b: Value) -> Value {
        match self.b.precision() {
            Precision::F64 => {
                let a_bigger = self.b.cmp(Cmp::Gt, a, b);
                self.b.select(a_bigger, a, b)
            }
            Precision::F32 => self.b.max(a, b),
        }
    }

    /// One bound of an odd positive power (increasing): x >= 0 gives x^n rounded r; x < 0
    /// gives -(|x|^n rounded the other way).
    fn odd_power_bound(&mut self, x: Value, n: i64, f: Fact, r: Round) -> Value {
        if f.nonneg {
            return self.power_bound(x, n, r);
        }
        if f.nonpos {
            let nx = self.b.neg(x);
            let neg_branch = self.power_bound(nx, n, other(r));
            return self.b.neg(neg_branch);
        }
        // Both branches start from |x|, so the one not taken still computes a power of a
        // nonnegative number (of -x it would be a chain on a negative value, whose products
        // overflow: the CPU's software FMA then takes its slow path on every lane).
        let ax = self.b.abs(x);
        let neg_branch = self.power_bound(ax, n, other(r));
        let neg_branch = self.b.neg(neg_branch);
        let pos_branch = self.power_bound(ax, n, r);
        let nonneg = self.ge0(x, false);
        self.b.select(nonneg, pos_branch, neg_branch)
    }

    /// An odd function decreasing on x > 0 with a pole at 0 (odd negative powers and roots),
    /// given a bound of it for x >= 0 (+inf at 0): decreasing on each side, the whole line
    /// across 0.
    pub(super) fn odd_with_pole(
        &mut self,
        a: Iv,
        f: Fact,
        bound: impl Fn(&mut Self, Value, Round) -> Value + Copy,
    ) -> Iv {
        let z = self.b.zero();
        // Right of the pole: [g(x2), g(x1)] (x1 = 0 gives +inf).
        let right = |l: &mut Self| Iv {
            lo: bound(l, a.hi, Round::Down),
            hi: bound(l, a.lo, Round::Up),
        };
        // Left of it: [-g(|x2|) up, -g(|x1|) down] (x2 = 0 gives -inf).
        let left = |l: &mut Self| {
            let na2 = l.b.neg(a.hi);
            let na1 = l.b.neg(a.lo);
            let lo = bound(l, na2, Round::Up);
            let hi = bound(l, na1, Round::Down);
            Iv {
                lo: l.b.neg(lo),
                hi: l.b.neg(hi),
            }
        };
        if f.nonneg {
            return right(self);
        }
        if f.nonpos {
            return left(self);
        }
        let rt = right(self);
        let lt = left(self);
        let is_right = self.b.cmp(Cmp::Ge, a.lo, z);
        let is_left = self.b.cmp(Cmp::Le, a.hi, z);
        let ninf = self.b.constant(f64::NEG_INFINITY);
        let pinf = self.b.constant(f64::INFINITY);
        let lo = self.b.select(is_left, lt.lo, ninf);
        let hi = self.b.select(is_left, lt.hi, pinf);
        Iv {
            lo: self.b.select(is_right, rt.lo, lo),
            hi: self.b.select(is_right, rt.hi, hi),
        }
    }
}

/// For |n| = m: (k, E) with x scaled by 2^k and the result by 2^E = 2^(k*m) when m <= S, so
/// that E is between S/2 and S; for m > S, k = 0 and the per-step scales reach E = S.
fn scale_exponents(m: u64, s: i32) -> (i32, i32) {
    if m <= s as u64 {
        let k = s / m as i32;
        (k, k * m as i32)
    } else {
        (0, s)
    }
}
