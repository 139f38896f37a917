//! A local descent for branch and bound's upper bound: from the best point the search knows,
//! a few quasi-Newton steps (BFGS with a backtracking line search, iterates kept in the root
//! box) towards a local minimizer; the upper bound of f's enclosure at the best point found
//! is an upper bound of the global minimum.
//!
//! Why: branch and bound stops when U − L ≤ tol. Where the least lower bound L is already
//! exact (a sum of squares with minimum 0: L = 0 on any box holding the minimizer), the search
//! only waits for a midpoint with f ≤ tol, which bisection finds late and after many boxes; a
//! descent from the best midpoint finds one in a few steps.
//!
//! Only the *upper bound* at the final point is used, and it comes from f's interval
//! enclosure at that point (a point box, evaluated like every other box): the descent itself
//! (directions, step lengths, the BFGS matrix) is ordinary floating point and decides nothing
//! rigorous. Its arithmetic is the same on every backend, and it reads only the evaluator's
//! outputs, which are equal bit for bit between the CPU and the GPU: both backends take the same
//! steps.

use crate::ir::diff::Gradient;
use crate::{Error, Evaluator};

/// An evaluator of f's gradient (`Expression::gradient`) and its layout, for the descent.
#[derive(Clone, Copy)]
pub struct Descent<'a> {
    /// Evaluates f's gradient expression (one output f).
    pub gradient: &'a Evaluator,
    /// Where f, its flag and its partial derivatives are among the outputs.
    pub layout: Gradient,
    /// Quasi-Newton steps at most per descent.
    pub steps: usize,
}

/// Trial step lengths per line search: 1, 1/2, ..., 2^-(TRIALS-1), evaluated in one batch.
const TRIALS: usize = 16;

impl Descent<'_> {
    /// The least upper bound of f found by descending from `x0` inside `root` (one `(lo, hi)` per
    /// variable), with the point that gave it; `None` when f's enclosure at every point tried
    /// is empty or unbounded above.
    pub(crate) fn run(
        &self,
        root: &[(f64, f64)],
        x0: &[f64],
    ) -> Result<Option<(f64, Vec<f64>)>, Error> {
        let n = root.len();
        let clamp = |x: &mut [f64]| {
            for (v, &(lo, hi)) in x.iter_mut().zip(root) {
                *v = v.clamp(lo, hi);
            }
        };
        let mut x = x0.to_vec();
        clamp(&mut x);
        let first = self.at(std::slice::from_ref(&x))?;
        let Some(mut here) = first.into_iter().next().flatten() else {
            return Ok(None);
        };
        let mut best = (here.upper, x.clone());
        // The inverse Hessian's approximation, row-major.
        let mut h = identity(n);
        for _ in 0..self.steps {
            let p: Vec<f64> = (0..n)
                .map(|i| -(0..n).map(|j| h[i * n + j] * here.grad[j]).sum::<f64>())
                .collect();
            let slope: f64 = p.iter().zip(&here.grad).map(|(a, b)| a * b).sum();
            if slope.is_nan() || slope >= 0.0 {
                // Not a descent direction (the approximation went bad): start again from the
                // gradient once, else stop.
                if h == identity(n) {
                    break;
                }
                h = identity(n);
                continue;
            }
            let trials: Vec<Vec<f64>> = (0..TRIALS)
                .map(|k| {
                    let t = 0.5f64.powi(k as i32);
                    let mut y: Vec<f64> = x.iter().zip(&p).map(|(a, d)| a + t * d).collect();
                    clamp(&mut y);
                    y
                })
                .collect();
            let found = self.at(&trials)?;
            // Armijo's condition on the step actually taken (after clamping).
            let accepted = found.into_iter().zip(trials).find_map(|(f, y)| {
                let f = f?;
                let taken: f64 = y
                    .iter()
                    .zip(&x)
                    .zip(&here.grad)
                    .map(|((a, b), g)| (a - b) * g)
                    .sum();
                (f.value <= here.value + 1e-4 * taken.min(0.0) && y != x).then_some((f, y))
            });
            let Some((next, y)) = accepted else { break };
            if next.upper < best.0 {
                best = (next.upper, y.clone());
            }
            // BFGS update of h with s = y - x, r = grad' - grad.
            let s: Vec<f64> = y.iter().zip(&x).map(|(a, b)| a - b).collect();
            let r: Vec<f64> = next
                .grad
                .iter()
                .zip(&here.grad)
                .map(|(a, b)| a - b)
                .collect();
            let sr: f64 = s.iter().zip(&r).map(|(a, b)| a * b).sum();
            let gain = here.value - next.value;
            (x, here) = (y, next);
            if sr > 0.0 && sr.is_finite() {
                bfgs_update(&mut h, &s, &r, sr);
            } else {
                h = identity(n);
            }
            if gain.is_nan() || gain <= 0.0 || gain <= 1e-15 * here.value.abs() {
                break;
            }
        }
        Ok(best.0.is_finite().then_some(best))
    }

    /// f and its gradient at each point (a point box each): `None` where f's enclosure is
    /// empty, unbounded above, or a partial derivative is not finite.
    fn at(&self, points: &[Vec<f64>]) -> Result<Vec<Option<Point>>, Error> {
        let k = points.len();
        let n = self.layout.vars;
        let mut soa = vec![0.0; 2 * n * k];
        for (i, x) in points.iter().enumerate() {
            for v in 0..n {
                soa[2 * v * k + i] = x[v];
                soa[(2 * v + 1) * k + i] = x[v];
            }
        }
        let out = self.gradient.eval_soa(&soa, k)?;
        let bounds = |o: usize, i: usize| (out[2 * o * k + i], out[(2 * o + 1) * k + i]);
        Ok((0..k)
            .map(|i| {
                let (lo, hi) = bounds(self.layout.value(0), i);
                if !(lo.is_finite() && hi.is_finite()) {
                    return None;
                }
                let grad: Option<Vec<f64>> = (0..n)
                    .map(|v| {
                        let (a, b) = bounds(self.layout.partial(0, v), i);
                        let m = 0.5 * a + 0.5 * b;
                        m.is_finite().then_some(m)
                    })
                    .collect();
                Some(Point {
                    value: 0.5 * lo + 0.5 * hi,
                    upper: hi,
                    grad: grad?,
                })
            })
            .collect())
    }
}

/// f at a point: a value near it, the upper bound of its enclosure, a gradient near it.
struct Point {
    value: f64,
    upper: f64,
    grad: Vec<f64>,
}

fn identity(n: usize) -> Vec<f64> {
    let mut h = vec![0.0; n * n];
    for i in 0..n {
        h[i * n + i] = 1.0;
    }
    h
}

/// `h ← (I − ρ s rᵀ) h (I − ρ r sᵀ) + ρ s sᵀ` with ρ = 1 / (sᵀ r).
fn bfgs_update(h: &mut [f64], s: &[f64], r: &[f64], sr: f64) {
    let n = s.len();
    let rho = 1.0 / sr;
    let hr: Vec<f64> = (0..n)
        .map(|i| (0..n).map(|j| h[i * n + j] * r[j]).sum())
        .collect();
    let rhr: f64 = r.iter().zip(&hr).map(|(a, b)| a * b).sum();
    for i in 0..n {
        for j in 0..n {
            h[i * n + j] +=
                -rho * (hr[i] * s[j] + s[i] * hr[j]) + (rho * rho * rhr + rho) * s[i] * s[j];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BackendChoice, Expression, Precision};

    #[test]
    fn descends_to_the_minimum_of_rosenbrock() {
        let (g, layout) = Expression::parse("100*(y - x^2)^2 + (1 - x)^2")
            .unwrap()
            .gradient()
            .unwrap();
        let eval = Evaluator::new(&g, Precision::F64, BackendChoice::Cpu).unwrap();
        let d = Descent {
            gradient: &eval,
            layout,
            steps: 200,
        };
        let (u, x) = d
            .run(&[(-5.0, 5.0), (-5.0, 5.0)], &[-1.2, 1.0])
            .unwrap()
            .unwrap();
        assert!(u < 1e-12, "{u} at {x:?}");
        assert!(
            (x[0] - 1.0).abs() < 1e-5 && (x[1] - 1.0).abs() < 1e-5,
            "{x:?}"
        );
        // The bound is f's enclosure's upper bound at x: never below the exact value (in
        // rational arithmetic).
        use num_rational::BigRational as Q;
        let q = |v: f64| Q::from_float(v).unwrap();
        let (a, b) = (q(x[0]), q(x[1]));
        let one = Q::from_integer(1.into());
        let e = &b - &a * &a;
        let d = &one - &a;
        let exact = Q::from_integer(100.into()) * &e * &e + &d * &d;
        assert!(q(u) >= exact, "{u} at {x:?}");
    }

    #[test]
    fn stays_in_the_root_box() {
        let (g, layout) = Expression::parse("x").unwrap().gradient().unwrap();
        let eval = Evaluator::new(&g, Precision::F64, BackendChoice::Cpu).unwrap();
        let d = Descent {
            gradient: &eval,
            layout,
            steps: 20,
        };
        let (u, x) = d.run(&[(2.0, 3.0)], &[2.5]).unwrap().unwrap();
        assert_eq!((u, x), (2.0, vec![2.0]));
    }
}
