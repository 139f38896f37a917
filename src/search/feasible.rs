//! Candidate feasible points on equality constraints: Gauss–Newton steps onto `h(x) = c`.
//!
//! A constrained search proves its upper bound U at points (every constraint's enclosure at
//! the point inside its range). Equalities, even relaxed to `|h - c| <= eq_tol`, are met only
//! on a thin shell, which box midpoints almost never land in: U stays +inf and no box can be
//! dropped by it. From a box's midpoint, a few minimum-norm Newton steps
//! `x <- x - Jᵀ (J Jᵀ)⁻¹ (h(x) - c)` (J the equalities' Jacobian at x) reach the shell to
//! within rounding when it is near. Nothing here is rigorous, and nothing needs to be: the
//! point is only a candidate, proven feasible (or not) by the caller's decorated evaluation,
//! like any midpoint.

/// One minimum-norm Newton step for `m` equalities in `n` variables from `x`: `residual[j] =
/// h_j(x) - c_j`, `jacobian[j * n + k]` = ∂h_j/∂x_k at x. None where a value is not finite or
/// J Jᵀ is singular (to working precision).
pub(crate) fn newton_step(x: &[f64], residual: &[f64], jacobian: &[f64]) -> Option<Vec<f64>> {
    let (m, n) = (residual.len(), x.len());
    debug_assert_eq!(jacobian.len(), m * n);
    if !residual.iter().chain(jacobian).all(|v| v.is_finite()) {
        return None;
    }
    // (J Jᵀ | r), solved by Gaussian elimination with partial pivoting.
    let mut a = vec![0.0; m * (m + 1)];
    for i in 0..m {
        for j in 0..m {
            a[i * (m + 1) + j] = (0..n)
                .map(|k| jacobian[i * n + k] * jacobian[j * n + k])
                .sum();
        }
        a[i * (m + 1) + m] = residual[i];
    }
    let scale = a.iter().fold(0.0f64, |s, v| s.max(v.abs()));
    for col in 0..m {
        let pivot = (col..m).max_by(|&p, &q| {
            a[p * (m + 1) + col]
                .abs()
                .total_cmp(&a[q * (m + 1) + col].abs())
        })?;
        if a[pivot * (m + 1) + col].abs() <= 1e-14 * scale {
            return None;
        }
        for j in 0..=m {
            a.swap(col * (m + 1) + j, pivot * (m + 1) + j);
        }
        for row in col + 1..m {
            let f = a[row * (m + 1) + col] / a[col * (m + 1) + col];
            for j in col..=m {
                a[row * (m + 1) + j] -= f * a[col * (m + 1) + j];
            }
        }
    }
    let mut y = vec![0.0; m];
    for i in (0..m).rev() {
        let s: f64 = (i + 1..m).map(|j| a[i * (m + 1) + j] * y[j]).sum();
        y[i] = (a[i * (m + 1) + m] - s) / a[i * (m + 1) + i];
    }
    let next: Vec<f64> = (0..n)
        .map(|k| x[k] - (0..m).map(|j| jacobian[j * n + k] * y[j]).sum::<f64>())
        .collect();
    next.iter().all(|v| v.is_finite()).then_some(next)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_reach_a_circle_and_a_line_from_nearby() {
        // h = x^2 + y^2 - 2 from (1.3, 0.9): the shell point is reached to rounding.
        let mut x = vec![1.3, 0.9];
        for _ in 0..6 {
            let r = [x[0] * x[0] + x[1] * x[1] - 2.0];
            let j = [2.0 * x[0], 2.0 * x[1]];
            x = newton_step(&x, &r, &j).unwrap();
        }
        assert!((x[0] * x[0] + x[1] * x[1] - 2.0).abs() < 1e-15, "{x:?}");
        // Two equalities in three variables: x + y + z = 1, x - y = 0 (linear: one step).
        let x0 = [0.3, -0.2, 5.0];
        let r = [x0[0] + x0[1] + x0[2] - 1.0, x0[0] - x0[1]];
        let j = [1.0, 1.0, 1.0, 1.0, -1.0, 0.0];
        let x = newton_step(&x0, &r, &j).unwrap();
        assert!((x[0] + x[1] + x[2] - 1.0).abs() < 1e-15 && (x[0] - x[1]).abs() < 1e-15);
        // The step is the least change: orthogonal to the solution set (its direction is in
        // J's row space), here (1, 1, 1) and (1, -1, 0) span it, so the change has no part
        // along (1, 1, -2), the solution set's direction.
        let d: Vec<f64> = (0..3).map(|k| x[k] - x0[k]).collect();
        assert!((d[0] + d[1] - 2.0 * d[2]).abs() < 1e-12, "{d:?}");
    }

    #[test]
    fn dependent_or_undefined_rows_give_no_step() {
        // The same equality twice: J Jᵀ is singular.
        assert!(newton_step(&[1.0, 1.0], &[0.5, 0.5], &[1.0, 1.0, 1.0, 1.0]).is_none());
        assert!(newton_step(&[1.0], &[f64::NAN], &[1.0]).is_none());
        assert!(newton_step(&[1.0], &[1.0], &[f64::INFINITY]).is_none());
    }
}
