//! Linear relaxations of a constrained problem on a box, and a certified lower bound of the
//! objective over the relaxation (or a proof that the box holds no feasible point).
//!
//! On a box X with lower corner x̲, where f and each g_j are continuous and defined, the mean
//! value theorem gives for every x in X, with d = x - x̲ >= 0 and F, G_j the interval
//! gradients over X (their enclosures hold every derivative there, or the generalized gradient
//! of abs, min and max):
//!
//! - f(x) >= f(x̲) + Σ_k F_k.lo d_k, a linear function of d below f (IBEX's X-Taylor
//!   relaxation at a corner: with d >= 0 each product F_k d_k is at least F_k.lo d_k);
//! - g_j(x) <= b_j implies Σ_k G_jk.lo d_k <= b_j - g_j(x̲).lo, and g_j(x) >= a_j implies
//!   Σ_k (-G_jk.hi) d_k <= g_j(x̲).hi - a_j.
//!
//! So every feasible point of X satisfies `A d <= r, 0 <= d <= w` (w the box's widths), and f
//! there is at least f(x̲).lo plus the minimum of `c·d` (c = F.lo) over that polytope: one
//! linear program per box, which couples the objective with every constraint at once. A
//! minimizer on an active constraint, where f's own gradient does not vanish, is exactly where
//! interval bounds of f alone lag behind (the cluster effect); the relaxation's bound converges
//! there like the square of the box's width.
//!
//! **Rigor** comes from weak duality, evaluated with directed rounding (Neumaier and
//! Shcherbina, "Safe bounds in linear and mixed-integer programming", 2004): for any λ >= 0
//! and any feasible d, `c·d >= (c + Aᵀλ)·d - λ·r >= Σ_k min(0, s_k w_k) - λ·r` with `s = c +
//! Aᵀλ`. Each s_k is computed rounded down, each product with w_k and the sum rounded down, λ·r
//! rounded up, and r and w themselves rounded up. The multipliers come from a float simplex
//! ([`super::lp`]); whatever they are, clamped to >= 0, the bound holds. Likewise a ray λ of
//! the dual with `Σ_k min(0, (Aᵀλ)_k w_k) - λ·r > 0` (the same rounding) proves that no d of
//! the box satisfies the rows: the box holds no feasible point.

use super::lp::{multipliers, Multipliers};
use crate::round::{add_f64, mul_f64, sub_f64};
use crate::scalar::Round;
use crate::Interval;

/// A box's linear relaxation at its lower corner: `min c·d + f0 subject to A d <= r, 0 <= d <=
/// w`, each entry finite.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Relaxation {
    /// f(x̲).lo and c = F.lo, where f is continuous and defined on the box and both are finite
    /// (else only the box's feasibility is tested).
    objective: Option<(f64, Vec<f64>)>,
    /// A's rows, `widths.len()` entries each.
    rows: Vec<f64>,
    /// r: one upper bound per row.
    rhs: Vec<f64>,
    /// w: the box's widths, rounded up.
    widths: Vec<f64>,
}

/// What a relaxation proves about its box.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Verdict {
    /// No point of the box satisfies the constraints.
    Infeasible,
    /// f is at least this at every feasible point of the box.
    Lower(f64),
}

impl Relaxation {
    /// The relaxation of `f = g_0, g_1, ..., g_m` on the box `[lo, hi]` at its lower corner:
    /// `at_corner[j]` encloses g_j(lo), `over_box[j]` g_j over the box, `slope(j, k)` the
    /// partial derivative of g_j by x_k over the box, `smooth(j)` says whether g_j is proven
    /// continuous and defined on the whole box, and `ranges[j - 1]` is constraint j's range. A
    /// constraint that is not smooth, or whose values are not finite, gives no row (fewer rows:
    /// a weaker relaxation, never a wrong one); neither does a side that the box satisfies
    /// everywhere (`over_box` inside it).
    /// None where the box is not bounded (the widths must be finite).
    pub(crate) fn at_lower_corner(
        lo: &[f64],
        hi: &[f64],
        at_corner: &[Interval],
        over_box: &[Interval],
        slope: impl Fn(usize, usize) -> Interval,
        smooth: impl Fn(usize) -> bool,
        ranges: &[Interval],
    ) -> Option<Relaxation> {
        let n = lo.len();
        let widths: Vec<f64> = (0..n).map(|k| sub_f64(hi[k], lo[k], Round::Up)).collect();
        if !widths.iter().all(|w| w.is_finite() && *w >= 0.0) {
            return None;
        }
        let usable = |j: usize| {
            smooth(j)
                && at_corner[j].lo.is_finite()
                && at_corner[j].hi.is_finite()
                && (0..n).all(|k| slope(j, k).lo.is_finite() && slope(j, k).hi.is_finite())
        };
        let objective =
            usable(0).then(|| (at_corner[0].lo, (0..n).map(|k| slope(0, k).lo).collect()));
        let (mut rows, mut rhs) = (Vec::new(), Vec::new());
        // A right-hand side that overflows to +inf is no constraint: such a row is left out.
        let mut row = |coefficients: Vec<f64>, bound: f64| {
            if bound.is_finite() {
                rows.extend(coefficients);
                rhs.push(bound);
            }
        };
        for (j, range) in ranges.iter().enumerate().map(|(i, r)| (i + 1, r)) {
            if !usable(j) {
                continue;
            }
            if over_box[j].hi > range.hi {
                // g_j(x̲).lo + G_j.lo · d <= g_j(x) <= b_j.
                row(
                    (0..n).map(|k| slope(j, k).lo).collect(),
                    sub_f64(range.hi, at_corner[j].lo, Round::Up),
                );
            }
            if over_box[j].lo < range.lo {
                // a_j <= g_j(x) <= g_j(x̲).hi + G_j.hi · d.
                row(
                    (0..n).map(|k| -slope(j, k).hi).collect(),
                    sub_f64(at_corner[j].hi, range.lo, Round::Up),
                );
            }
        }
        Some(Relaxation {
            objective,
            rows,
            rhs,
            widths,
        })
    }

    /// What the relaxation proves: the box holds no feasible point, or a lower bound of f over
    /// its feasible points (None where it proves neither: no usable objective, or a bound that
    /// is not a number); and the linear program's minimizer d (offsets from the lower
    /// corner, in floats): a candidate for a feasible point where f is low, which the caller
    /// must prove feasible. (At a vertex of linear constraints, where box midpoints converge
    /// only as fast as the boxes shrink, the minimizer is the vertex.)
    pub(crate) fn solve(&self) -> (Option<Verdict>, Option<Vec<f64>>) {
        let n = self.widths.len();
        let zero = vec![0.0; n];
        let c = self.objective.as_ref().map_or(&zero, |(_, c)| c);
        match multipliers(&self.rows, &self.rhs, c, &self.widths) {
            Multipliers::Ray(ray) => {
                if self.dual_value(None, &ray).is_some_and(|v| v > 0.0) {
                    return (Some(Verdict::Infeasible), None);
                }
                // The ray proved nothing: the box's own bound, no multipliers.
                (self.lower(&vec![0.0; self.rhs.len()]), None)
            }
            Multipliers::Bound { lambda, point } => (
                self.lower(&lambda),
                self.objective.is_some().then_some(point),
            ),
        }
    }

    /// The objective's certified lower bound with multipliers `l`.
    fn lower(&self, l: &[f64]) -> Option<Verdict> {
        let (f0, c) = self.objective.as_ref()?;
        let v = self.dual_value(Some(c), l)?;
        let v = add_f64(*f0, v, Round::Down);
        (!v.is_nan()).then_some(Verdict::Lower(v))
    }

    /// `Σ_k min(0, s_k w_k) - λ·r` with `s = c + Aᵀλ` (c = 0 where None), rounded down: at most
    /// `c·d` at every d of the box with `A d <= r`. λ's entries below 0 count as 0.
    fn dual_value(&self, c: Option<&Vec<f64>>, l: &[f64]) -> Option<f64> {
        let n = self.widths.len();
        let mut total = 0.0;
        for (k, &w) in self.widths.iter().enumerate() {
            let mut s = c.map_or(0.0, |c| c[k]);
            for (j, &lj) in l.iter().enumerate() {
                // Each term rounded down: s stays at most the exact c_k + (Aᵀλ)_k.
                let term = mul_f64(lj.max(0.0), self.rows[j * n + k], Round::Down);
                s = add_f64(s, term, Round::Down);
            }
            if s.is_nan() {
                return None;
            }
            // s d_k >= s w_k for d_k in [0, w_k] when s < 0 (w_k is rounded up), else >= 0.
            if s < 0.0 {
                total = add_f64(total, mul_f64(s, w, Round::Down), Round::Down);
            }
        }
        let mut lr = 0.0;
        for (&lj, &r) in l.iter().zip(&self.rhs) {
            lr = add_f64(lr, mul_f64(lj.max(0.0), r, Round::Up), Round::Up);
        }
        let v = sub_f64(total, lr, Round::Down);
        (!v.is_nan()).then_some(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_bigint::BigInt;
    use num_rational::BigRational as Q;
    use num_traits::{Signed, Zero};

    fn q(x: f64) -> Q {
        Q::from_float(x).expect("finite")
    }

    /// A small deterministic generator of floats in [lo, hi) (53 random bits: the data are not
    /// exact in few bits, so every rounding of the bound matters).
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self, lo: f64, hi: f64) -> f64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            lo + (hi - lo) * ((self.0 >> 11) as f64 / (1u64 << 53) as f64)
        }
    }

    fn random(g: &mut Lcg, n: usize, m: usize) -> Relaxation {
        Relaxation {
            objective: Some((
                g.next(-4.0, 4.0),
                (0..n).map(|_| g.next(-2.0, 2.0)).collect(),
            )),
            rows: (0..m * n).map(|_| g.next(-2.0, 2.0)).collect(),
            rhs: (0..m).map(|_| g.next(-1.0, 3.0)).collect(),
            widths: (0..n).map(|_| g.next(0.01, 2.0)).collect(),
        }
    }

    /// f0 + c·d, exactly.
    fn objective_at(r: &Relaxation, d: &[Q]) -> Q {
        let (f0, c) = r.objective.as_ref().unwrap();
        d.iter().zip(c).fold(q(*f0), |s, (x, &c)| s + x * q(c))
    }

    /// Whether d satisfies the relaxation's rows and box, exactly.
    fn feasible(r: &Relaxation, d: &[Q]) -> bool {
        let n = r.widths.len();
        let in_box = d
            .iter()
            .zip(&r.widths)
            .all(|(x, &w)| !x.is_negative() && *x <= q(w));
        in_box
            && r.rhs.iter().enumerate().all(|(j, &rhs)| {
                let lhs = (0..n).fold(Q::zero(), |s, k| s + &d[k] * q(r.rows[j * n + k]));
                lhs <= q(rhs)
            })
    }

    /// The exact minimum of a 2-variable relaxation (None: infeasible): the least objective
    /// over the vertices, the feasible intersections of two of its lines (rows and box sides),
    /// solved by Cramer's rule in rationals. A nonempty bounded polygon has a vertex, and a
    /// linear function's minimum over it is at one.
    fn exact_minimum_2d(r: &Relaxation) -> Option<Q> {
        let mut lines: Vec<(Q, Q, Q)> = Vec::new();
        for j in 0..r.rhs.len() {
            lines.push((q(r.rows[2 * j]), q(r.rows[2 * j + 1]), q(r.rhs[j])));
        }
        let (one, zero) = (Q::from_integer(BigInt::from(1)), Q::zero());
        lines.push((one.clone(), zero.clone(), zero.clone()));
        lines.push((one.clone(), zero.clone(), q(r.widths[0])));
        lines.push((zero.clone(), one.clone(), zero.clone()));
        lines.push((zero.clone(), one.clone(), q(r.widths[1])));
        let mut best: Option<Q> = None;
        for (i, (a1, b1, c1)) in lines.iter().enumerate() {
            for (a2, b2, c2) in &lines[i + 1..] {
                let det = a1 * b2 - a2 * b1;
                if det.is_zero() {
                    continue;
                }
                let d = [(c1 * b2 - c2 * b1) / &det, (a1 * c2 - a2 * c1) / &det];
                if feasible(r, &d) {
                    let v = objective_at(r, &d);
                    if best.as_ref().is_none_or(|b| v < *b) {
                        best = Some(v);
                    }
                }
            }
        }
        best
    }

    #[test]
    fn the_bound_never_exceeds_the_exact_minimum_and_reaches_it() {
        let mut g = Lcg(7);
        let (mut infeasible, mut proven) = (0, 0);
        for case in 0..3000 {
            let r = random(&mut g, 2, 1 + case % 4);
            let exact = exact_minimum_2d(&r);
            match (r.solve().0, &exact) {
                (Some(Verdict::Infeasible), Some(m)) => {
                    panic!("case {case}: proven infeasible, but the minimum is {m}: {r:?}")
                }
                (Some(Verdict::Infeasible), None) => proven += 1,
                (Some(Verdict::Lower(b)), Some(m)) => {
                    assert!(
                        q(b) <= *m,
                        "case {case}: bound {b} above the minimum {m}: {r:?}"
                    );
                    // The simplex's multipliers are optimal: the bound is the minimum up to
                    // the rounding of the certificate.
                    let gap = (m - q(b)).abs();
                    assert!(gap <= q(1e-9), "case {case}: bound {b}, minimum {m}: {r:?}");
                }
                (Some(Verdict::Lower(_)), None) => infeasible += 1,
                (None, _) => panic!("case {case}: no verdict on a usable relaxation: {r:?}"),
            }
        }
        // The generator makes both kinds, and the rays prove almost every infeasible one.
        assert!(proven > 100, "{proven} proven infeasible, {infeasible} not");
        assert!(
            infeasible * 20 <= proven,
            "{proven} proven infeasible, {infeasible} not"
        );
    }

    #[test]
    fn boxes_and_constraints_outside_the_guard_give_no_relaxation_or_no_row() {
        let unit = |lo: f64, hi: f64| Interval { lo, hi };
        let point = |v: f64| unit(v, v);
        let relax = |lo: [f64; 2], hi: [f64; 2], corner: [Interval; 2], smooth: bool| {
            Relaxation::at_lower_corner(
                &lo,
                &hi,
                &corner,
                &[unit(-1.0, 5.0), unit(-1.0, 5.0)],
                |_, _| unit(1.0, 2.0),
                |j| j == 0 || smooth,
                &[unit(f64::NEG_INFINITY, 1.0)],
            )
        };
        let corner = [point(0.0), point(0.5)];
        // An unbounded side, or widths that overflow (the largest floats): no relaxation.
        for (lo, hi) in [
            ([f64::NEG_INFINITY, 0.0], [0.0, 1.0]),
            ([0.0, 0.0], [f64::INFINITY, 1.0]),
            ([-f64::MAX, 0.0], [f64::MAX, 1.0]),
        ] {
            assert_eq!(relax(lo, hi, corner, true), None, "{lo:?} {hi:?}");
        }
        // A bounded box with signed zeros and subnormal widths: one row, g <= 1.
        let tiny = f64::from_bits(1);
        let r = relax([-0.0, 0.0], [tiny, 3.0 * tiny], corner, true).unwrap();
        assert_eq!((r.rhs.len(), r.widths.clone()), (1, vec![tiny, 3.0 * tiny]));
        // A constraint not proven continuous and defined gives no row; one whose corner value
        // is not finite neither, and an objective whose corner value is not finite is unused.
        assert!(relax([0.0, 0.0], [1.0, 1.0], corner, false)
            .unwrap()
            .rhs
            .is_empty());
        let r = relax(
            [0.0, 0.0],
            [1.0, 1.0],
            [point(0.0), unit(f64::NEG_INFINITY, 0.5)],
            true,
        );
        assert!(r.unwrap().rhs.is_empty());
        let r = relax(
            [0.0, 0.0],
            [1.0, 1.0],
            [unit(f64::NEG_INFINITY, 0.0), point(0.5)],
            true,
        );
        assert!(r.unwrap().objective.is_none());
        // A right-hand side that overflows (b - g(x̲).lo = MAX - (-MAX), rounded up) gives no
        // row.
        let r = Relaxation::at_lower_corner(
            &[0.0],
            &[1.0],
            &[point(0.0), point(-f64::MAX)],
            &[unit(-1.0, 5.0), unit(-f64::MAX, f64::INFINITY)],
            |_, _| unit(1.0, 2.0),
            |_| true,
            &[unit(f64::NEG_INFINITY, f64::MAX)],
        )
        .unwrap();
        assert!(r.rhs.is_empty(), "{r:?}");
    }

    #[test]
    fn any_multipliers_give_a_sound_bound() {
        // The certificate's rounding, not the simplex, makes the bound rigorous: random
        // multipliers (small, large, some negative: clamped to 0) never exceed the minimum.
        let mut g = Lcg(11);
        for case in 0..2000 {
            let r = random(&mut g, 2, 1 + case % 3);
            let Some(m) = exact_minimum_2d(&r) else {
                continue;
            };
            let scale = [1e-3, 1.0, 1e3][case % 3];
            let l: Vec<f64> = (0..r.rhs.len())
                .map(|_| g.next(-0.5, 2.0) * scale)
                .collect();
            match r.lower(&l) {
                Some(Verdict::Lower(b)) => {
                    assert!(
                        q(b) <= m,
                        "case {case}: bound {b} above {m} with {l:?}: {r:?}"
                    )
                }
                other => panic!("case {case}: {other:?}"),
            }
        }
    }

    #[test]
    fn in_more_dimensions_no_feasible_point_lies_below_the_bound() {
        // Four variables, up to five rows: random points of the box, those that satisfy the
        // rows exactly, each at least the bound (and never a feasible one in a box proven
        // infeasible).
        let mut g = Lcg(3);
        let mut checked = 0;
        for case in 0..400 {
            let r = random(&mut g, 4, 1 + case % 5);
            let verdict = r.solve().0.expect("a verdict");
            for _ in 0..200 {
                let d: Vec<Q> = r.widths.iter().map(|&w| q(g.next(0.0, w))).collect();
                if !feasible(&r, &d) {
                    continue;
                }
                checked += 1;
                match verdict {
                    Verdict::Infeasible => panic!("case {case}: feasible {d:?} in {r:?}"),
                    Verdict::Lower(b) => {
                        assert!(q(b) <= objective_at(&r, &d), "case {case}: {b}: {r:?}")
                    }
                }
            }
        }
        assert!(checked > 10_000, "{checked} feasible points");
    }
}
