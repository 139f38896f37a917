//! `rootn(x, n)`, the real n-th root for every integer n != 0, within one ulp per bound.
//!
//! There is no correctly rounded root in the scalar IR, so each bound is *found and proven*:
//! 1. an estimate `pow(x, 1/n)` from the backend's library (to nearest, no guarantee; its error
//!    grows with |log x| because 1/n is rounded);
//! 2. one Newton step whose residual is computed from the double word of est^|n| (the scaled
//!    chain of [`super::power`]), so the refined value is within about half an ulp of the root;
//! 3. the refined value and its next two neighbours toward the safe side are *verified* with a
//!    directed double-word power: c is a lower bound of x^(1/n) (n > 0) exactly when c^n <= x,
//!    which holds when an upper double word of c^n is at most x (compared exactly by Sterbenz'
//!    lemma where it matters); for n < 0, when x * c^|n| <= 1. The largest (smallest) verified
//!    candidate wins; if none verifies, a crude bound that is always true does (0 or 1 below;
//!    max(x, 1) or max(1/x, 1) above). Rigor rests on the verification only.

use super::power::{other, ranges, to_precision, Chain, CHAIN_MAX_ROOTN};
use super::{Iv, Lowering};
use crate::ir::sign::Fact;
use crate::point::BinaryFn;
use crate::scalar::{Cmp, Round, Value};

impl Lowering {
    /// `rootn(x, n)` on an interval (IEEE 1788). n = 2 is rewritten to sqrt before lowering,
    /// 1 and -1 to x and 1/x.
    pub(super) fn rootn(&mut self, a: Iv, n: i64, f: Fact) -> Iv {
        if n == 1 {
            return a;
        }
        let z = self.b.zero();
        if n % 2 == 0 {
            // Domain x >= 0 (x > 0 for n < 0): the part of x below it is ignored.
            let x1 = self.b.max(a.lo, z);
            let r = if n > 0 {
                Iv {
                    lo: self.root_bound(x1, n, Round::Down),
                    hi: self.root_bound(a.hi, n, Round::Up),
                }
            } else {
                Iv {
                    lo: self.root_bound(a.hi, n, Round::Down),
                    hi: self.root_bound(x1, n, Round::Up),
                }
            };
            let outside = if n > 0 {
                self.b.cmp(Cmp::Lt, a.hi, z)
            } else {
                self.b.cmp(Cmp::Le, a.hi, z)
            };
            let e = self.is_empty(a, f);
            let e = self.b.or(e, outside);
            return self.empty_if(e, r);
        }
        let r = if n > 0 {
            let lo = self.odd_root_bound(a.lo, n, Round::Down);
            let hi = self.odd_root_bound(a.hi, n, Round::Up);
            Iv { lo, hi }
        } else {
            self.odd_with_pole(a, f, move |l, x, r| l.root_bound(x, n, r))
        };
        let mut e = self.is_empty(a, f);
        if n < 0 {
            let lo0 = self.b.cmp(Cmp::Eq, a.lo, z);
            let hi0 = self.b.cmp(Cmp::Eq, a.hi, z);
            let zero = self.b.and(lo0, hi0);
            e = self.b.or(e, zero);
        }
        self.empty_if(e, r)
    }

    /// An odd positive root (increasing, odd): x >= 0 gives the root rounded r, x < 0 minus
    /// the root of -x rounded the other way.
    fn odd_root_bound(&mut self, x: Value, n: i64, r: Round) -> Value {
        let z = self.b.zero();
        let pos = self.root_bound(x, n, r);
        let nx = self.b.neg(x);
        let neg = self.root_bound(nx, n, other(r));
        let neg = self.b.neg(neg);
        let nonneg = self.b.cmp(Cmp::Ge, x, z);
        self.b.select(nonneg, pos, neg)
    }

    /// A bound of x^(1/n) in direction r for x >= 0 (n != 0, |n| >= 2): 0 and +inf at the
    /// ends for n > 0, +inf and 0 for n < 0. See the module comment.
    pub(super) fn root_bound(&mut self, x: Value, n: i64, r: Round) -> Value {
        if n.unsigned_abs() > CHAIN_MAX_ROOTN {
            return self.exp_log_bound(x, n as f64, true, r);
        }
        let p = self.b.precision();
        let m = n.unsigned_abs();
        let x = self.b.abs(x); // -0 is 0
        let one = self.b.constant(1.0);
        // 1. Estimate.
        let inv_n = self.b.constant(to_precision(1.0 / n as f64, p, false));
        let est = self.b.point2(BinaryFn::Pow, x, inv_n, Round::Nearest);
        // 2. One Newton step: with eps = est^n / x - 1 (n > 0) or x * est^m - 1 (n < 0), the
        //    root is est * (1 + eps)^(-1/m), about est * (1 - eps/m).
        let ch = self.scaled_chain(est, m, Round::Down, true);
        let l = ch.d.l.unwrap_or(self.b.zero());
        let eps = if n > 0 {
            let xs = self.b.mul(x, ch.ic, Round::Nearest);
            let t = self.b.sub(ch.d.h, xs, Round::Nearest);
            let num = self.b.add(t, l, Round::Nearest);
            self.b.div(num, xs, Round::Nearest)
        } else {
            // x * c_scale * D - 1, with x * c_scale (exact) near 1 / D.
            let xs = self.b.mul(x, ch.c, Round::Nearest);
            let pp = self.b.mul(xs, ch.d.h, Round::Nearest);
            let npp = self.b.neg(pp);
            let e = self.b.fma(xs, ch.d.h, npp, Round::Nearest);
            let xl = self.b.fma(xs, l, e, Round::Nearest);
            let t = self.b.sub(pp, one, Round::Nearest);
            self.b.add(t, xl, Round::Nearest)
        };
        let minus_inv_m = self.b.constant(to_precision(-1.0 / m as f64, p, false));
        let step = self.b.mul(eps, minus_inv_m, Round::Nearest);
        let refined = self.b.fma(est, step, est, Round::Nearest);
        // Where the step is meaningless (NaN, est^m beyond the chain), keep the estimate.
        let nan = self.b.is_nan(refined);
        let bad = self.b.or(nan, ch.over);
        let rho = self.b.select(bad, est, refined);
        // 3. Candidates toward the safe side, verified; the crude bound if none is.
        let tiny = self.b.constant(ranges(p).min_sub);
        let z = self.b.zero();
        let toward = |l: &mut Self, c: Value| match r {
            Round::Down => {
                let c = l.b.sub(c, tiny, Round::Down); // the float below
                l.b.max(c, z)
            }
            _ => l.b.add(c, tiny, Round::Up), // the float above
        };
        let c0 = match r {
            Round::Down => self.b.max(rho, z),
            _ => rho,
        };
        let c1 = toward(self, c0);
        let c2 = toward(self, c1);
        let mut v = self.crude_root_bound(x, n, r);
        for c in [c2, c1, c0] {
            let ok = self.root_verified(c, x, n, r);
            v = self.b.select(ok, c, v);
        }
        // The ends: x = 0 and x = +inf.
        let inf = self.b.constant(f64::INFINITY);
        let (at0, at_inf) = if n > 0 { (z, inf) } else { (inf, z) };
        let is0 = self.b.cmp(Cmp::Eq, x, z);
        let is_inf = self.b.cmp(Cmp::Eq, x, inf);
        let v = self.b.select(is0, at0, v);
        self.b.select(is_inf, at_inf, v)
    }

    /// Boolean: c is certainly a bound of x^(1/n) in direction r (c >= 0, x > 0 finite).
    /// c >= 0 is a precondition, not checked: the chain squares away a sign and `beyond` tests
    /// c, not |c|. The Newton step keeps it for |n| <= [`CHAIN_MAX_ROOTN`] (beyond, est^n / x - 1
    /// can exceed n and the step turn an upper candidate negative: those n take
    /// `exp_log_bound`); held by the class matrix's rootn cells (n up to 2^53 - 1) and
    /// `tests/cpu/powers.rs` (`rootn_within_one_ulp_*`, `huge_exponents_are_contained`).
    fn root_verified(&mut self, c: Value, x: Value, n: i64, r: Round) -> Value {
        let m = n.unsigned_abs();
        // A lower bound needs "c^m <= x" (n > 0) or "x * c^m <= 1" (n < 0): c^m bounded from
        // above; an upper bound the reverse.
        let chain_dir = other(r);
        let ch: Chain = self.scaled_chain(c, m, chain_dir, true);
        let l = ch.d.l.unwrap_or(self.b.zero());
        // Whether D = h + l is at most (chain_dir Up) or at least (Down) the target X, decided
        // by g = X - h rounded toward the safe side against l.
        let (le, target_round) = (chain_dir == Round::Up, chain_dir);
        let ok = if n > 0 {
            // c^m = D * c_scale against x, i.e. D against X = x / c_scale (rounded safely).
            let xs_round = if le { Round::Down } else { Round::Up };
            let xs = self.b.mul(x, ch.ic, xs_round);
            let g = self.b.sub(xs, ch.d.h, xs_round);
            self.b.cmp(if le { Cmp::Ge } else { Cmp::Le }, g, l)
        } else {
            // x * c^m = (x * c_scale) * D against 1; x * c_scale is exact (a power of two that
            // brings it near 1 / D), rounded toward the safe side all the same.
            let one = self.b.constant(1.0);
            let xs = self.b.mul(x, ch.c, target_round);
            let pp = self.b.mul(xs, ch.d.h, Round::Nearest);
            let npp = self.b.neg(pp);
            let e = self.b.fma(xs, ch.d.h, npp, target_round);
            let t = self.b.fma(xs, l, e, target_round);
            let g_round = if le { Round::Down } else { Round::Up };
            let g = self.b.sub(one, pp, g_round);
            self.b.cmp(if le { Cmp::Ge } else { Cmp::Le }, g, t)
        };
        // Beyond the chain's range c^m is huge: x * c^m > 1 and c^m > x.
        if le {
            let not_over = self.b.not(ch.over);
            self.b.and(ok, not_over)
        } else {
            self.b.or(ok, ch.over)
        }
    }

    /// A bound of x^(1/n) that needs no verification.
    fn crude_root_bound(&mut self, x: Value, n: i64, r: Round) -> Value {
        let one = self.b.constant(1.0);
        let z = self.b.zero();
        match (n > 0, r) {
            // x >= 1: root >= 1.
            (true, Round::Down) => {
                let ge1 = self.b.cmp(Cmp::Ge, x, one);
                self.b.select(ge1, one, z)
            }
            // root <= max(x, 1).
            (true, _) => self.b.max(x, one),
            // x <= 1: x^(-1/m) >= 1.
            (false, Round::Down) => {
                let le1 = self.b.cmp(Cmp::Le, x, one);
                self.b.select(le1, one, z)
            }
            // x^(-1/m) <= max(1/x, 1).
            (false, _) => {
                let rx = self.b.div(one, x, Round::Up);
                self.b.max(rx, one)
            }
        }
    }
}
