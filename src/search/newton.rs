//! Interval Newton for square systems f: R^n → R^n, in Krawczyk's form: proofs that a box holds
//! exactly one zero of f, or none, and boxes narrowed around the zeros; and [`isolate`], root
//! isolation by exclusion and Krawczyk's test.
//!
//! For a box X with a point c in it, a nonsingular point matrix Y (an approximate inverse of
//! the Jacobian's midpoint) and J an interval matrix holding f's Jacobian on X:
//!
//! `K(X) = c − Y f(c) + (I − Y J)(X − c)`.
//!
//! Every zero of f in X lies in K(X); if K(X) ∩ X is empty there is none, and if K(X) lies in
//! the interior of X, X holds exactly one (Krawczyk 1969; Rump 1983; Neumaier, *Interval
//! methods for systems of equations*, 1990, §5.1). Why it holds here: for x, c in X, each
//! component satisfies f_i(x) − f_i(c) = ⟨g_i, x − c⟩ for some g_i in the generalized gradient
//! of f_i at a point of the segment (Lebourg's mean value theorem, where f_i is Lipschitz),
//! so the matrix with rows g_i lies in J; then x − Y f(x) ∈ K(X) for every x in X. This needs
//! f continuous and defined on all of X with a bounded Jacobian enclosure: each output's flag
//! of [`crate::Expression::jacobian`] must be exactly [1, 1] and every entry finite, or the
//! verdict is [`Verdict::Unknown`].
//!
//! The operator is computed on the host with directed rounding (`crate::round`), from one
//! evaluation of the Jacobian expression on X and one on the point box c per box (all boxes
//! of a step in one batch, on the evaluator's backend, whose outputs are the same bits on the
//! CPU and the GPU). Y is ordinary floating point: any Y gives a valid K(X); a good one gives a
//! narrow one.

use super::exclude::{exclude, Ended};
use super::minimize::mid;
use crate::ir::diff::Gradient;
use crate::round::{add_f64, mul_f64, sub_f64, Round};
use crate::{Error, Evaluator};

/// An evaluator of a square system's Jacobian expression ([`crate::Expression::jacobian`])
/// and its layout.
#[derive(Clone, Copy)]
pub struct Jacobian<'a> {
    /// Evaluates the Jacobian expression.
    pub eval: &'a Evaluator,
    /// Where the outputs, flags and partial derivatives are.
    pub layout: Gradient,
}

/// What Krawczyk's test proved about a box.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The box holds exactly one zero of f.
    Unique,
    /// The box holds no zero of f.
    NoZero,
    /// Neither proven.
    Unknown,
}

/// One Krawczyk step on a box: the verdict, and the box intersected with K(X) (every zero of f
/// in the box lies in it; the box itself where nothing was computed).
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// What the step proved.
    pub verdict: Verdict,
    /// The narrowed box (`(lo, hi)` per variable).
    pub narrowed: Vec<(f64, f64)>,
}

type Iv = (f64, f64);

fn add(a: Iv, b: Iv) -> Iv {
    (add_f64(a.0, b.0, Round::Down), add_f64(a.1, b.1, Round::Up))
}

fn sub(a: Iv, b: Iv) -> Iv {
    (sub_f64(a.0, b.1, Round::Down), sub_f64(a.1, b.0, Round::Up))
}

/// The product of two intervals (bounds may be infinite after an overflow; 0 · ∞ is 0, as
/// in IEEE 1788's interval product, where the hardware says NaN).
fn mul(a: Iv, b: Iv) -> Iv {
    let p = |x: f64, y: f64, r| {
        let v = mul_f64(x, y, r);
        if v.is_nan() {
            0.0
        } else {
            v
        }
    };
    let ps = |r| {
        [
            p(a.0, b.0, r),
            p(a.0, b.1, r),
            p(a.1, b.0, r),
            p(a.1, b.1, r),
        ]
    };
    let lo = ps(Round::Down).into_iter().fold(f64::INFINITY, f64::min);
    let hi = ps(Round::Up).into_iter().fold(f64::NEG_INFINITY, f64::max);
    (lo, hi)
}

impl Jacobian<'_> {
    /// One Krawczyk step on each box (`(lo, hi)` per variable), all evaluated in one batch.
    pub fn krawczyk(&self, boxes: &[Vec<(f64, f64)>]) -> Result<Vec<Step>, Error> {
        let n = self.layout.vars;
        assert_eq!(
            self.layout.outputs, n,
            "Krawczyk's operator needs a square system"
        );
        let k = boxes.len();
        if k == 0 {
            return Ok(Vec::new());
        }
        // Box i at i, its midpoint at k + i.
        let m = 2 * k;
        let mut soa = vec![0.0; 2 * n * m];
        let centers: Vec<Vec<f64>> = boxes
            .iter()
            .map(|b| b.iter().map(|&(lo, hi)| mid(lo, hi)).collect())
            .collect();
        for (i, b) in boxes.iter().enumerate() {
            for v in 0..n {
                soa[2 * v * m + i] = b[v].0;
                soa[(2 * v + 1) * m + i] = b[v].1;
                soa[2 * v * m + k + i] = centers[i][v];
                soa[(2 * v + 1) * m + k + i] = centers[i][v];
            }
        }
        let out = self.eval.eval_soa(&soa, m)?;
        let at = |o: usize, i: usize| (out[2 * o * m + i], out[(2 * o + 1) * m + i]);
        Ok(boxes
            .iter()
            .enumerate()
            .map(|(i, x)| {
                let unknown = Step {
                    verdict: Verdict::Unknown,
                    narrowed: x.clone(),
                };
                let proven = (0..n).all(|j| at(self.layout.defined(j), i) == (1.0, 1.0));
                let jac: Vec<Iv> = (0..n * n)
                    .map(|e| at(self.layout.partial(e / n, e % n), i))
                    .collect();
                let fc: Vec<Iv> = (0..n).map(|j| at(self.layout.value(j), k + i)).collect();
                let finite = |v: &Iv| v.0.is_finite() && v.1.is_finite() && v.0 <= v.1;
                if !proven
                    || !x.iter().all(finite)
                    || !jac.iter().all(finite)
                    || !fc.iter().all(finite)
                {
                    return unknown;
                }
                let mid_jac: Vec<f64> = jac.iter().map(|&(a, b)| mid(a, b)).collect();
                let Some(y) = inverse(&mid_jac, n) else {
                    return unknown;
                };
                operator(x, &centers[i], &fc, &jac, &y)
            })
            .collect())
    }
}

/// K(X) for one box, and the verdict.
fn operator(x: &[Iv], c: &[f64], fc: &[Iv], jac: &[Iv], y: &[f64]) -> Step {
    let n = x.len();
    let d: Vec<Iv> = x
        .iter()
        .zip(c)
        .map(|(&xi, &ci)| sub(xi, (ci, ci)))
        .collect();
    let mut narrowed = Vec::with_capacity(n);
    let (mut inside, mut disjoint) = (true, false);
    for i in 0..n {
        // c_i − Σ_l Y_il f_l(c) + Σ_k (δ_ik − Σ_l Y_il J_lk) d_k
        let mut yf = (0.0, 0.0);
        for l in 0..n {
            yf = add(yf, mul((y[i * n + l], y[i * n + l]), fc[l]));
        }
        let mut ki = sub((c[i], c[i]), yf);
        for kk in 0..n {
            let delta = if i == kk { 1.0 } else { 0.0 };
            let mut row = (delta, delta);
            for l in 0..n {
                row = sub(row, mul((y[i * n + l], y[i * n + l]), jac[l * n + kk]));
            }
            ki = add(ki, mul(row, d[kk]));
        }
        if ki.0.is_nan() || ki.1.is_nan() {
            // Cannot happen with finite inputs and 0 · ∞ = 0; if it did, nothing is proven.
            return Step {
                verdict: Verdict::Unknown,
                narrowed: x.to_vec(),
            };
        }
        if !(ki.0 > x[i].0 && ki.1 < x[i].1) {
            inside = false;
        }
        let lo = ki.0.max(x[i].0);
        let hi = ki.1.min(x[i].1);
        if lo.is_nan() || hi.is_nan() || lo > hi {
            disjoint = true;
        }
        narrowed.push((lo, hi));
    }
    if disjoint {
        return Step {
            verdict: Verdict::NoZero,
            narrowed: x.to_vec(),
        };
    }
    Step {
        verdict: if inside {
            Verdict::Unique
        } else {
            Verdict::Unknown
        },
        narrowed,
    }
}

/// An approximate inverse of the n x n matrix `a` (row-major), by Gauss-Jordan elimination with
/// partial pivoting; `None` when a pivot vanishes or the result is not finite.
fn inverse(a: &[f64], n: usize) -> Option<Vec<f64>> {
    let mut m = a.to_vec();
    let mut inv = vec![0.0; n * n];
    for i in 0..n {
        inv[i * n + i] = 1.0;
    }
    for col in 0..n {
        let p = (col..n).max_by(|&r, &s| m[r * n + col].abs().total_cmp(&m[s * n + col].abs()))?;
        if m[p * n + col] == 0.0 || !m[p * n + col].is_finite() {
            return None;
        }
        for j in 0..n {
            m.swap(col * n + j, p * n + j);
            inv.swap(col * n + j, p * n + j);
        }
        let piv = m[col * n + col];
        for j in 0..n {
            m[col * n + j] /= piv;
            inv[col * n + j] /= piv;
        }
        for r in 0..n {
            if r != col {
                let f = m[r * n + col];
                for j in 0..n {
                    m[r * n + j] -= f * m[col * n + j];
                    inv[r * n + j] -= f * inv[col * n + j];
                }
            }
        }
    }
    inv.iter().all(|v| v.is_finite()).then_some(inv)
}

/// A candidate box for a zero of the system, from [`isolate`].
#[derive(Clone, Debug, PartialEq)]
pub struct Zero {
    /// The box (`(lo, hi)` per variable).
    pub sides: Vec<(f64, f64)>,
    /// Proven by Krawczyk's test to hold exactly one zero (else it may hold none, one or
    /// several: a multiple zero, a cluster, or a box where the test does not apply).
    pub unique: bool,
}

/// What [`isolate`] found.
#[derive(Clone, Debug, PartialEq)]
pub struct Isolated {
    /// Every zero of f in the root box lies in one of these boxes (where f is defined).
    pub zeros: Vec<Zero>,
    /// How the exclusion ended ([`Ended::Done`]: every candidate narrower than the tolerance).
    pub ended: Ended,
    /// Boxes the exclusion evaluated.
    pub evaluated: u64,
    /// Krawczyk steps taken (each one batch over the candidates).
    pub newton_steps: usize,
}

/// Krawczyk steps at most per candidate.
const STEPS: usize = 40;

/// The zeros of a square system f in `root`: the exclusion rule ([`exclude`]) on `residual`
/// (f's [`crate::Expression::residual`], 0 exactly at f's zeros) to `tol`, the surviving boxes
/// merged into connected clusters, and each cluster's hull given to Krawczyk's test (once as
/// it is and, if that proves nothing, once widened by a tenth on each side): boxes proven to
/// hold one zero are narrowed by repeated steps, boxes proven to hold none dropped, the rest
/// reported unproven. A zero proven in a widened box is reported only if its narrowed box lies
/// in `root`.
pub fn isolate(
    residual: &Evaluator,
    jacobian: &Jacobian,
    root: &[(f64, f64)],
    tol: f64,
    max_boxes: u64,
) -> Result<Isolated, Error> {
    if jacobian.layout.outputs != jacobian.layout.vars || jacobian.layout.vars != root.len() {
        return Err(super::SearchError::Options(format!(
            "interval Newton needs as many equations as variables: {} equations, {} variables, \
             a box of {} sides",
            jacobian.layout.outputs,
            jacobian.layout.vars,
            root.len()
        ))
        .into());
    }
    let found = exclude(residual, root, 0.0, tol, max_boxes)?;
    let mut boxes: Vec<Vec<(f64, f64)>> = found
        .boxes
        .iter()
        .chain(found.unfinished.iter())
        .map(<[_]>::to_vec)
        .collect();
    boxes.sort_by(|a, b| a[0].0.total_cmp(&b[0].0));
    let clusters = clusters(&boxes);
    let inside_root = |b: &[(f64, f64)]| b.iter().zip(root).all(|(s, r)| r.0 <= s.0 && s.1 <= r.1);
    let mut zeros = Vec::new();
    let mut newton_steps = 0;
    let mut live: Vec<Candidate> = clusters
        .into_iter()
        .map(|b| Candidate {
            current: b.clone(),
            cluster: b,
            widened: false,
            unique: false,
        })
        .collect();
    // A candidate that ends: a proven zero where its box lies in the root box, else the
    // cluster, unproven.
    let report = |c: Candidate, zeros: &mut Vec<Zero>| {
        let unique = c.unique && inside_root(&c.current);
        zeros.push(Zero {
            sides: if unique { c.current } else { c.cluster },
            unique,
        });
    };
    for _ in 0..STEPS {
        if live.is_empty() {
            break;
        }
        let boxes: Vec<Vec<(f64, f64)>> = live.iter().map(|c| c.current.clone()).collect();
        let steps = jacobian.krawczyk(&boxes)?;
        newton_steps += 1;
        let mut next = Vec::new();
        for (mut c, step) in live.into_iter().zip(steps) {
            if c.unique {
                // Proven before (the zero is in every narrowed box): narrow while it helps.
                if step.verdict != Verdict::NoZero && width(&step.narrowed) < width(&c.current) {
                    c.current = step.narrowed;
                    next.push(c);
                } else {
                    report(c, &mut zeros);
                }
                continue;
            }
            match step.verdict {
                Verdict::NoZero => {} // no zero in the box, hence none in its cluster
                Verdict::Unique => {
                    c.current = step.narrowed;
                    c.unique = true;
                    next.push(c);
                }
                Verdict::Unknown if !c.widened => {
                    c.current = widen(&c.cluster);
                    c.widened = true;
                    next.push(c);
                }
                Verdict::Unknown => report(c, &mut zeros),
            }
        }
        live = next;
    }
    // Out of steps: what is left stands as it is.
    for c in live {
        report(c, &mut zeros);
    }
    zeros.sort_by(|a, b| a.sides[0].0.total_cmp(&b.sides[0].0));
    Ok(Isolated {
        zeros,
        ended: found.ended,
        evaluated: found.evaluated,
        newton_steps,
    })
}

/// A cluster of the exclusion's boxes on its way through Krawczyk's test.
struct Candidate {
    /// The box tested next.
    current: Vec<(f64, f64)>,
    /// The cluster's hull (within the root box).
    cluster: Vec<(f64, f64)>,
    /// Whether `current` is the widened cluster (or came from it).
    widened: bool,
    /// Whether `current` is proven to hold exactly one zero.
    unique: bool,
}

/// A square system compiled for [`isolate`]: its residual and its Jacobian, in f64, both on
/// the backend the residual got.
pub struct Solver {
    residual: Evaluator,
    jacobian: Evaluator,
    layout: Gradient,
}

impl Solver {
    /// Compiles `f`'s residual ([`crate::Expression::residual`]) and Jacobian
    /// ([`crate::Expression::jacobian`]) for `choice`.
    pub fn new(f: &crate::Expression, choice: crate::BackendChoice) -> Result<Solver, Error> {
        let p = crate::Precision::F64;
        let residual = Evaluator::new(&f.residual()?, p, choice)?;
        let same = match residual.backend() {
            crate::Backend::Cpu => crate::BackendChoice::Cpu,
            crate::Backend::Gpu => crate::BackendChoice::Gpu,
        };
        let (jac, layout) = f.jacobian()?;
        let jacobian = Evaluator::new(&jac, p, same)?;
        Ok(Solver {
            residual,
            jacobian,
            layout,
        })
    }

    /// The evaluator of the residual (its backend, and why `Auto` fell back if it did).
    pub fn residual(&self) -> &Evaluator {
        &self.residual
    }

    /// [`isolate`] over `root`.
    pub fn isolate(
        &self,
        root: &[(f64, f64)],
        tol: f64,
        max_boxes: u64,
    ) -> Result<Isolated, Error> {
        let jacobian = Jacobian {
            eval: &self.jacobian,
            layout: self.layout,
        };
        isolate(&self.residual, &jacobian, root, tol, max_boxes)
    }
}

/// The widest side of a box.
fn width(b: &[(f64, f64)]) -> f64 {
    b.iter().map(|s| s.1 - s.0).fold(0.0, f64::max)
}

/// The box widened by a tenth of each side's width (and a few ulps) on each end.
fn widen(b: &[(f64, f64)]) -> Vec<(f64, f64)> {
    b.iter()
        .map(|&(lo, hi)| {
            let w =
                0.1 * (hi - lo) + 4.0 * f64::EPSILON * lo.abs().max(hi.abs()) + f64::MIN_POSITIVE;
            (lo - w, hi + w)
        })
        .collect()
}

/// The hulls of the connected groups of boxes (touching or overlapping in every side), the
/// boxes sorted by their first side's lower bound.
fn clusters(boxes: &[Vec<(f64, f64)>]) -> Vec<Vec<(f64, f64)>> {
    let k = boxes.len();
    let mut parent: Vec<usize> = (0..k).collect();
    fn find(p: &mut [usize], mut i: usize) -> usize {
        while p[i] != i {
            p[i] = p[p[i]];
            i = p[i];
        }
        i
    }
    let touch =
        |a: &[(f64, f64)], b: &[(f64, f64)]| a.iter().zip(b).all(|(s, t)| s.0 <= t.1 && t.0 <= s.1);
    for i in 0..k {
        for j in i + 1..k {
            // Sorted by the first side's lo: no later box can touch box i once past its hi.
            if boxes[j][0].0 > boxes[i][0].1 {
                break;
            }
            if touch(&boxes[i], &boxes[j]) {
                let (a, b) = (find(&mut parent, i), find(&mut parent, j));
                parent[a] = b;
            }
        }
    }
    let mut hulls: std::collections::BTreeMap<usize, Vec<(f64, f64)>> = Default::default();
    for (i, b) in boxes.iter().enumerate() {
        let r = find(&mut parent, i);
        hulls
            .entry(r)
            .and_modify(|h| {
                for (s, t) in h.iter_mut().zip(b) {
                    *s = (s.0.min(t.0), s.1.max(t.1));
                }
            })
            .or_insert_with(|| b.clone());
    }
    hulls.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BackendChoice, Expression, Precision};

    fn jac(text: &str) -> (Evaluator, Gradient) {
        let (g, layout) = Expression::parse(text).unwrap().jacobian().unwrap();
        (
            Evaluator::new(&g, Precision::F64, BackendChoice::Cpu).unwrap(),
            layout,
        )
    }

    #[test]
    fn products_follow_the_interval_rules() {
        assert_eq!(mul((-1.0, 2.0), (3.0, 4.0)), (-4.0, 8.0));
        // 0 · ∞ is 0: an overflowed row times a point side is [0, 0], not empty.
        assert_eq!(
            mul((f64::NEG_INFINITY, f64::INFINITY), (0.0, 0.0)),
            (0.0, 0.0)
        );
        assert_eq!(mul((1.0, f64::INFINITY), (0.0, 1.0)), (0.0, f64::INFINITY));
        // Rounded down and up: the bounds enclose the real product of the double 0.1 and 3.
        let (lo, hi) = mul((0.1, 0.1), (3.0, 3.0));
        assert!(lo < hi && lo <= 0.30000000000000004 && hi >= 0.3);
    }

    #[test]
    fn proves_a_simple_zero_and_excludes_a_box_without_one() {
        let (e, layout) = jac("x^2 - 2");
        let j = Jacobian { eval: &e, layout };
        let s = j
            .krawczyk(&[vec![(1.4, 1.5)], vec![(2.0, 3.0)], vec![(-1.0, 1.0)]])
            .unwrap();
        assert_eq!(s[0].verdict, Verdict::Unique);
        let r = s[0].narrowed[0];
        assert!(r.0 <= std::f64::consts::SQRT_2 && std::f64::consts::SQRT_2 <= r.1);
        assert!(r.1 - r.0 < 0.01, "{r:?}");
        assert_eq!(s[1].verdict, Verdict::NoZero);
        // The derivative holds 0 there: nothing proven, nothing lost.
        assert_eq!(s[2].verdict, Verdict::Unknown);
    }

    #[test]
    fn needs_continuity_and_definedness() {
        // sqrt(x) - 0.5 has its zero at 0.25, but the box reaches outside sqrt's domain.
        let (e, layout) = jac("sqrt(x) - 0.5");
        let j = Jacobian { eval: &e, layout };
        assert_eq!(
            j.krawczyk(&[vec![(-0.1, 0.4)]]).unwrap()[0].verdict,
            Verdict::Unknown
        );
        assert_eq!(
            j.krawczyk(&[vec![(0.2, 0.3)]]).unwrap()[0].verdict,
            Verdict::Unique
        );
        // floor may jump in the box: no proof, whatever the numbers say.
        let (e, layout) = jac("x - 0.5 + 0.001 * floor(4 * x)");
        let j = Jacobian { eval: &e, layout };
        assert_eq!(
            j.krawczyk(&[vec![(0.2, 0.7)]]).unwrap()[0].verdict,
            Verdict::Unknown
        );
    }
}
