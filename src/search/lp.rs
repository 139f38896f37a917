//! A small dense simplex that chooses the multipliers of a box relaxation's linear program
//! ([`super::relax`]): `min c·d subject to A d <= r, 0 <= d <= w` with a few dozen rows and
//! variables, solved once per box of a constrained search.
//!
//! Nothing here is rigorous, and nothing needs to be: the relaxation turns *any* nonnegative
//! multipliers into a certified bound, computed with directed rounding
//! ([`super::relax::Relaxation::solve`]). Better multipliers only make the bound tighter. So
//! the simplex runs in plain floats, stops after a fixed number of pivots, and a failure costs
//! tightness, never soundness. (A crate was considered: `microlp`, the maintained fork of
//! `minilp`, is a sparse LU solver that allocates its factorization per problem and documents
//! panics on hard problems; for dense programs of at most a few dozen rows a tableau is
//! simpler and cannot panic.)
//!
//! It solves the dual, `min r·λ + w·μ subject to Aᵀλ + μ >= -c, λ, μ >= 0`, whose first basis
//! needs no first phase: row k starts with `μ_k = -c_k` where `c_k <= 0`, else with its
//! surplus `c_k`. The dual is unbounded exactly where the primal is infeasible, and then its
//! ray is a Farkas certificate of that infeasibility.

/// What the simplex found for the dual.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Multipliers {
    /// Multipliers λ >= 0 of the rows of A (optimal, or the last ones reached within the pivot
    /// limit), and the primal point they price: the program's minimizer d at optimal
    /// multipliers (clamped to the box; in floats, not a certified one).
    Bound { lambda: Vec<f64>, point: Vec<f64> },
    /// A ray λ >= 0 along which the dual decreases without end: evidence that no `d` in the box
    /// satisfies `A d <= r` (the relaxation checks it rigorously).
    Ray(Vec<f64>),
}

/// The multipliers for `min c·d subject to A d <= r, 0 <= d <= w`: `a` holds A's `r.len()`
/// rows of `c.len()` entries each. Every entry must be finite.
pub(crate) fn multipliers(a: &[f64], r: &[f64], c: &[f64], w: &[f64]) -> Multipliers {
    let (m, n) = (r.len(), c.len());
    debug_assert!(a.len() == m * n && w.len() == n);
    // Columns: λ_0..λ_m, then μ_0..μ_n, then the surpluses s_0..s_n, then the right-hand side.
    let cols = m + 2 * n;
    let width = cols + 1;
    let mut t = vec![0.0; n * width];
    let mut basis = vec![0usize; n];
    let mut sign = vec![0.0; n];
    for k in 0..n {
        let row = &mut t[k * width..(k + 1) * width];
        // Σ_j A_jk λ_j + μ_k - s_k = -c_k, negated where -c_k < 0 so that the right-hand side
        // is nonnegative and the basic column (μ_k, or s_k after the negation) is +1.
        sign[k] = if c[k] <= 0.0 { 1.0 } else { -1.0 };
        for j in 0..m {
            row[j] = sign[k] * a[j * n + k];
        }
        row[m + k] = sign[k];
        row[m + n + k] = -sign[k];
        row[cols] = -sign[k] * c[k];
        basis[k] = if sign[k] > 0.0 { m + k } else { m + n + k };
    }
    let first_basis = basis.clone();
    let cost = |j: usize| -> f64 {
        if j < m {
            r[j]
        } else if j < m + n {
            w[j - m]
        } else {
            0.0
        }
    };
    let scale = (0..cols).map(|j| cost(j).abs()).fold(1.0, f64::max);
    let tol = 1e-12 * scale;
    let lambdas = |t: &[f64], basis: &[usize]| -> Vec<f64> {
        let mut l = vec![0.0; m];
        for (k, &b) in basis.iter().enumerate() {
            if b < m {
                l[b] = t[k * width + cols].max(0.0);
            }
        }
        l
    };
    if m == 0 {
        // The box alone: each d_k at the end where c_k d_k is least.
        let point = (0..n)
            .map(|k| if c[k] < 0.0 { w[k] } else { 0.0 })
            .collect();
        return Multipliers::Bound {
            lambda: Vec::new(),
            point,
        };
    }
    // The reduced costs, a last row pivoted with the others.
    let mut z: Vec<f64> = (0..width)
        .map(|j| {
            let c = if j < cols { cost(j) } else { 0.0 };
            (0..n).fold(c, |z, k| z - cost(basis[k]) * t[k * width + j])
        })
        .collect();
    let mut basic = vec![false; cols];
    for &b in &basis {
        basic[b] = true;
    }
    // The primal point: the simplex multipliers of the dual's rows (the dual's dual is the
    // program), y_k = cost(first basic column of row k) - its reduced cost, signed as the row.
    let bound = |t: &[f64], basis: &[usize], z: &[f64]| Multipliers::Bound {
        lambda: lambdas(t, basis),
        point: (0..n)
            .map(|k| {
                let j = first_basis[k];
                (sign[k] * (cost(j) - z[j])).clamp(0.0, w[k])
            })
            .collect(),
    };
    // Bland's rule (the first improving column, the first row among ties) cannot cycle.
    for _ in 0..50 * (n + m + 1) {
        let Some(e) = (0..cols).find(|&j| !basic[j] && z[j] < -tol) else {
            return bound(&t, &basis, &z);
        };
        let mut leave: Option<(usize, f64)> = None;
        for k in 0..n {
            let p = t[k * width + e];
            if p > 1e-12 {
                let ratio = t[k * width + cols] / p;
                let better = match leave {
                    None => true,
                    Some((l, best)) => ratio < best || (ratio == best && basis[k] < basis[l]),
                };
                if better {
                    leave = Some((k, ratio));
                }
            }
        }
        let Some((l, _)) = leave else {
            // Unbounded along e: e rises by 1, each basic variable falls by its entry.
            let mut ray = vec![0.0; m];
            if e < m {
                ray[e] = 1.0;
            }
            for (k, &b) in basis.iter().enumerate() {
                if b < m {
                    ray[b] = (-t[k * width + e]).max(0.0);
                }
            }
            return Multipliers::Ray(ray);
        };
        // Pivot on (l, e).
        let p = t[l * width + e];
        for x in &mut t[l * width..(l + 1) * width] {
            *x /= p;
        }
        let (before, rest) = t.split_at_mut(l * width);
        let (pivot, after) = rest.split_at_mut(width);
        for row in before
            .chunks_exact_mut(width)
            .chain(after.chunks_exact_mut(width))
            .chain(std::iter::once(&mut z[..]))
        {
            let f = row[e];
            if f != 0.0 {
                for (x, &y) in row.iter_mut().zip(pivot.iter()) {
                    *x -= f * y;
                }
            }
        }
        basic[basis[l]] = false;
        basic[e] = true;
        basis[l] = e;
    }
    bound(&t, &basis, &z)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The dual function at λ (in plain floats: the programs below are exact in them): the
    /// minimum over the box of (c + Aᵀλ)·d, minus λ·r. Weak duality makes it a lower bound of
    /// the optimum, equal to it at optimal multipliers.
    fn dual_value(a: &[f64], r: &[f64], c: &[f64], w: &[f64], l: &[f64]) -> f64 {
        let n = c.len();
        let mut v = 0.0;
        for k in 0..n {
            let s = c[k] + (0..r.len()).map(|j| l[j] * a[j * n + k]).sum::<f64>();
            v += (s * w[k]).min(0.0);
        }
        v - (0..r.len()).map(|j| l[j] * r[j]).sum::<f64>()
    }

    #[test]
    fn the_multipliers_reach_the_optimum_of_small_programs() {
        /// (A, r, c, w, optimum, minimizer): min c·d subject to A d <= r, 0 <= d <= w.
        type Program = (
            &'static [f64],
            &'static [f64],
            [f64; 2],
            [f64; 2],
            f64,
            [f64; 2],
        );
        let programs: [Program; 3] = [
            // d0 + d1 <= 1 on [0, 2]^2 with c = (-1, -2): -2 at (0, 1).
            (
                &[1.0, 1.0],
                &[1.0],
                [-1.0, -2.0],
                [2.0, 2.0],
                -2.0,
                [0.0, 1.0],
            ),
            // d0 + d1 <= 3, d0 - d1 <= 1 on [0, 4]^2, c = (-2, -1): -5 at (2, 1).
            (
                &[1.0, 1.0, 1.0, -1.0],
                &[3.0, 1.0],
                [-2.0, -1.0],
                [4.0, 4.0],
                -5.0,
                [2.0, 1.0],
            ),
            // A row that does not bind: the box's own minimum, -2 at (2, 0).
            (
                &[1.0, 0.0],
                &[10.0],
                [-1.0, 3.0],
                [2.0, 1.0],
                -2.0,
                [2.0, 0.0],
            ),
        ];
        for (a, r, c, w, optimum, minimizer) in programs {
            let Multipliers::Bound { lambda, point } = multipliers(a, r, &c, &w) else {
                panic!("{a:?}: feasible")
            };
            let value = dual_value(a, r, &c, &w, &lambda);
            assert!((value - optimum).abs() < 1e-12, "{a:?}: {lambda:?}");
            assert!(
                (point[0] - minimizer[0]).abs() < 1e-12 && (point[1] - minimizer[1]).abs() < 1e-12,
                "{a:?}: {point:?}"
            );
        }
    }

    #[test]
    fn an_infeasible_program_gives_a_ray_that_proves_it() {
        // d0 + d1 <= -1 cannot hold for d >= 0.
        let (a, r, c, w) = ([1.0, 1.0], [-1.0], [1.0, 1.0], [1.0, 1.0]);
        let Multipliers::Ray(l) = multipliers(&a, &r, &c, &w) else {
            panic!("infeasible")
        };
        // The ray's dual function without the objective is positive: a certificate.
        assert!(dual_value(&a, &r, &[0.0, 0.0], &w, &l) > 0.0, "{l:?}");
        // -d0 <= -3 (d0 >= 3) with d0 <= 2.
        let (a, r, c, w) = ([-1.0, 0.0], [-3.0], [0.0, 1.0], [2.0, 2.0]);
        let Multipliers::Ray(l) = multipliers(&a, &r, &c, &w) else {
            panic!("infeasible")
        };
        assert!(dual_value(&a, &r, &[0.0, 0.0], &w, &l) > 0.0, "{l:?}");
    }
}
