//! The *minimize* rule: interval branch and bound for a certified enclosure `[lower, upper]`
//! of the global minimum of f over a box.
//!
//! Each round evaluates f on every live box and at every box's midpoint (a point box). The
//! upper bound U of the minimum is the least *upper* bound of any midpoint enclosure so far
//! (f(mid) <= that, and min f <= f(mid)). A box whose lower bound exceeds U cannot hold the
//! minimum and is dropped, as is a box where f is undefined (empty enclosure, NaN). The
//! others are bisected along their widest side (the last such side). The search stops when
//! U - L <= tol, L being the least lower bound over the surviving boxes, or when the next round
//! would exceed the box budget (or, on the GPU, the memory set aside for the work list); either
//! way `[L, U]` encloses the global minimum, and [`Minimum::ended`] says which.
//!
//! Rigor caveat: L is rigorous for any f (the minimum over box ∩ domain). U assumes the midpoint
//! it came from is in f's domain, which is decided from an enclosure: a point within rounding
//! distance of a domain boundary could be let through. For f defined on the whole box U is
//! rigorous.
//!
//! The CPU and the GPU take the same rounds and find the same `lower`, `upper`, `rounds`,
//! `boxes` and `remaining` bit for bit when f calls no point function (the lists are the same
//! sets of boxes, in another order on the GPU); `argmin` is a midpoint that gave `upper`, which
//! one among ties may differ.
//!
//! # Which backend runs a round
//! An evaluator made with [`crate::BackendChoice::Gpu`] runs every round on the GPU; one made
//! with `Auto` that got a GPU starts on the CPU and hands the work list to the GPU once its
//! rounds are large enough to pay for the GPU's fixed cost per round (`search::handover`);
//! [`Minimum::gpu_rounds`] says how many rounds ran there.

use rayon::prelude::*;

use super::budget::Budget;
use super::handover::{Handover, Pace};
use super::SearchError;
pub use local::Descent;

pub(crate) mod gpu;
mod local;
use crate::{Backend, Error, Evaluator};

pub use super::budget::{Ended, MAX_ROUNDS};
pub use super::handover::GPU_ROUND_SECONDS;

/// A certified enclosure of the global minimum and what it cost.
#[derive(Clone, Debug, PartialEq)]
pub struct Minimum {
    /// `lower <= min f <= upper`.
    pub lower: f64,
    /// See `lower`.
    pub upper: f64,
    /// A midpoint whose enclosure gave `upper` (variables in the evaluator's order).
    pub argmin: Vec<f64>,
    /// Why the search ended ([`Ended::Done`]: `upper - lower <= tol`).
    pub ended: Ended,
    /// Rounds taken.
    pub rounds: usize,
    /// Boxes evaluated (midpoint evaluations not counted).
    pub boxes: u64,
    /// Boxes alive at the end.
    pub remaining: usize,
    /// How many of the `rounds` (the last ones) ran on the GPU.
    pub gpu_rounds: usize,
}

impl Minimum {
    /// Whether the enclosure is as narrow as asked.
    pub fn complete(&self) -> bool {
        self.ended == Ended::Done
    }
}

/// Branch and bound over `root` (one `(lo, hi)` per variable of the evaluator, finite, in its
/// variable order) to `upper - lower <= tol`, evaluating at most `max_boxes` boxes.
pub fn minimize(
    eval: &Evaluator,
    root: &[(f64, f64)],
    tol: f64,
    max_boxes: u64,
) -> Result<Minimum, Error> {
    minimize_with(eval, root, tol, max_boxes, None)
}

/// [`minimize`], and after each round whose midpoints improved the upper bound, a local
/// descent from the best midpoint ([`Descent`]) that may improve it further (its evaluator
/// may be on either backend; both take the same steps). The search stops as soon as
/// `upper - lower <= tol` holds with the improved bound.
pub fn minimize_with(
    eval: &Evaluator,
    root: &[(f64, f64)],
    tol: f64,
    max_boxes: u64,
    descent: Option<&Descent>,
) -> Result<Minimum, Error> {
    let p = eval.program();
    let bad = |s: String| Err(SearchError::Options(s).into());
    if p.outputs.len() != 1 {
        return Err(SearchError::Outputs(p.outputs.len()).into());
    }
    if root.len() != p.n_vars() || root.is_empty() {
        return bad(format!(
            "the box has {} sides; the expression has {} variables ({})",
            root.len(),
            p.n_vars(),
            p.var_names.join(", ")
        ));
    }
    for (k, &(lo, hi)) in root.iter().enumerate() {
        if !(lo.is_finite() && hi.is_finite() && lo <= hi) {
            return bad(format!(
                "side {} ({}) = [{lo}, {hi}]: need finite lo <= hi",
                k, p.var_names[k]
            ));
        }
    }
    if tol.is_nan() || tol < 0.0 {
        return bad(format!("tol {tol}: need a number >= 0"));
    }
    if let Some(d) = descent {
        if d.layout.vars != root.len() || d.layout.outputs != 1 {
            return bad("the descent's gradient is not of this expression".into());
        }
    }
    match Handover::of(eval) {
        Some(handover) => search(eval, root, tol, max_boxes, descent, handover),
        None => gpu::minimize(eval, root, Frontier::root(root, max_boxes), tol, descent),
    }
}

/// [`minimize_with`] on a GPU evaluator, its CPU running the rounds before round `round` (0:
/// none) and its GPU the rest: how the tests hold the handover to the CPU's results.
#[doc(hidden)]
pub fn minimize_handing_over(
    eval: &Evaluator,
    root: &[(f64, f64)],
    tol: f64,
    max_boxes: u64,
    descent: Option<&Descent>,
    round: usize,
) -> Result<Minimum, Error> {
    if eval.backend() != Backend::Gpu {
        return Err(SearchError::Options("the handover needs a GPU evaluator".into()).into());
    }
    search(
        eval,
        root,
        tol,
        max_boxes,
        descent,
        Handover::AtRound(round),
    )
}

/// The search from the root box: its first rounds on the CPU, the rest (if `handover` says so)
/// on `eval`'s GPU.
fn search(
    eval: &Evaluator,
    root: &[(f64, f64)],
    tol: f64,
    max_boxes: u64,
    descent: Option<&Descent>,
    handover: Handover,
) -> Result<Minimum, Error> {
    let twin = super::handover::twin(eval);
    let on_cpu = twin.as_ref().unwrap_or(eval);
    let start = Frontier::root(root, max_boxes);
    match super::on_pool(|| cpu(on_cpu, root, start, tol, descent, handover))? {
        Rounds::Found(m) => Ok(m),
        Rounds::Handed(frontier) => gpu::minimize(eval, root, frontier, tol, descent),
    }
}

/// A branch and bound between two rounds: what one backend hands the other.
pub(crate) struct Frontier {
    /// The next round's boxes: box i's side k is `list[i * nv + k]`.
    pub(crate) list: Vec<(f64, f64)>,
    /// The upper bound so far (+inf before the first round).
    pub(crate) upper: f64,
    /// The point that gave it (NaN before).
    pub(crate) argmin: Vec<f64>,
    /// What the rounds so far spent.
    pub(crate) budget: Budget,
}

impl Frontier {
    /// Before the first round: the root box alone.
    pub(crate) fn root(root: &[(f64, f64)], max_boxes: u64) -> Frontier {
        Frontier {
            list: root.to_vec(),
            upper: f64::INFINITY,
            argmin: vec![f64::NAN; root.len()],
            budget: Budget::new(max_boxes),
        }
    }
}

/// How the CPU's rounds ended: the search is over, or the GPU goes on from here.
enum Rounds {
    Found(Minimum),
    Handed(Frontier),
}

/// How branch and bound evaluates f on a box.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// The natural interval extension.
    Natural,
    /// The mean-value form intersected with the natural extension
    /// ([`crate::Expression::mean_value_form`]).
    MeanValue,
    /// The minimization form ([`crate::Expression::minimization_form`]): the mean-value form
    /// with the monotonicity test and gradient-based exclusion.
    Gradient,
}

/// An expression compiled for branch and bound over one root box: f in the chosen [`Form`],
/// and, for the descent, f's gradient on the same backend.
pub struct Minimizer {
    eval: Evaluator,
    gradient: Option<(Evaluator, crate::ir::diff::Gradient)>,
    root: Vec<(f64, f64)>,
}

impl Minimizer {
    /// Compiles `f` over `root` in `form` for `choice`, with f's gradient when `descent`.
    pub fn new(
        f: &crate::Expression,
        root: &[(f64, f64)],
        form: Form,
        descent: bool,
        precision: crate::Precision,
        choice: crate::BackendChoice,
    ) -> Result<Minimizer, Error> {
        let evaluated = match form {
            Form::Natural => f.clone(),
            Form::MeanValue => f.mean_value_form()?,
            Form::Gradient => f.minimization_form(root)?,
        };
        let eval = Evaluator::new(&evaluated, precision, choice)?;
        // The descent runs on the CPU whatever the search's backend: each of its steps is one
        // small batch (the point and its trial steps) waiting for the last, which on the GPU
        // is a launch and a synchronization per step (the six-hump camel on an H200: 4.0-4.5
        // ms for its first descent against 1.3-1.6 ms on the CPU). Both backends take the same
        // steps (see `local`), so the bound it finds is the same.
        let gradient = if descent {
            let (g, layout) = f.gradient()?;
            Some((
                Evaluator::new(&g, precision, crate::BackendChoice::Cpu)?,
                layout,
            ))
        } else {
            None
        };
        Ok(Minimizer {
            eval,
            gradient,
            root: root.to_vec(),
        })
    }

    /// The evaluator of f in its form (its backend, and why `Auto` fell back if it did).
    pub fn evaluator(&self) -> &Evaluator {
        &self.eval
    }

    /// [`minimize_with`] over the root box, with the descent (100 steps at most) if compiled.
    pub fn run(&self, tol: f64, max_boxes: u64) -> Result<Minimum, Error> {
        let descent = self.gradient.as_ref().map(|(g, layout)| Descent {
            gradient: g,
            layout: *layout,
            steps: 100,
        });
        minimize_with(&self.eval, &self.root, tol, max_boxes, descent.as_ref())
    }
}

/// After a round that improved the upper bound to `upper` at `argmin`: the descent's better
/// bound and point, if it finds one.
pub(crate) fn descend(
    descent: Option<&Descent>,
    root: &[(f64, f64)],
    upper: f64,
    argmin: &[f64],
) -> Result<Option<(f64, Vec<f64>)>, Error> {
    let Some(d) = descent else { return Ok(None) };
    Ok(d.run(root, argmin)?.filter(|(u, _)| *u < upper))
}

/// A point of `[lo, hi]` near its middle (no overflow for huge bounds). The GPU computes the
/// same expression with `__dmul_rn` and `__dadd_rn`.
pub(crate) fn mid(lo: f64, hi: f64) -> f64 {
    (0.5 * lo + 0.5 * hi).clamp(lo, hi)
}

/// The side a box is bisected along: the last of its widest (on a square, the last variable),
/// as the earlier host-driven search of the example did, so that its published box counts
/// still hold.
pub(crate) fn widest(b: &[(f64, f64)]) -> usize {
    let mut k = 0;
    for (j, &(lo, hi)) in b.iter().enumerate() {
        if hi - lo >= b[k].1 - b[k].0 {
            k = j;
        }
    }
    k
}

/// The error of a search where f is undefined on every box left.
pub(crate) fn undefined() -> Error {
    SearchError::Options("f is undefined (empty enclosure) on the whole box".into()).into()
}

/// The rounds on the CPU from `from` until the search ends or `handover` says the GPU goes on.
fn cpu(
    eval: &Evaluator,
    root: &[(f64, f64)],
    from: Frontier,
    tol: f64,
    descent: Option<&Descent>,
    handover: Handover,
) -> Result<Rounds, Error> {
    let nv = root.len();
    let Frontier {
        mut list,
        mut upper,
        mut argmin,
        mut budget,
    } = from;
    let mut pace = Pace::new();
    loop {
        super::interrupt::check()?;
        let began = std::time::Instant::now();
        let n = list.len() / nv;
        if handover.now(&mut pace, budget.rounds(), n) {
            return Ok(Rounds::Handed(Frontier {
                list,
                upper,
                argmin,
                budget,
            }));
        }
        // One batch of 2n boxes: the n boxes, then their n midpoints.
        let m = 2 * n;
        let mut soa = vec![0.0; 2 * nv * m];
        for k in 0..nv {
            let (lo, rest) = soa[2 * k * m..2 * (k + 1) * m].split_at_mut(m);
            let (lo_box, lo_mid) = lo.split_at_mut(n);
            let (hi_box, hi_mid) = rest.split_at_mut(n);
            lo_box
                .par_iter_mut()
                .zip(hi_box.par_iter_mut())
                .zip(lo_mid.par_iter_mut().zip(hi_mid.par_iter_mut()))
                .enumerate()
                .with_min_len(super::PARALLEL_FROM)
                .for_each(|(i, ((l, h), (ml, mh)))| {
                    let (a, b) = list[i * nv + k];
                    (*l, *h) = (a, b);
                    let c = mid(a, b);
                    (*ml, *mh) = (c, c);
                });
        }
        let out = eval.eval_soa(&soa, m)?;
        budget.spend(n as u64);
        // The least upper bound of a midpoint enclosure (NaN, empty, is never less).
        let best = (0..n)
            .map(|i| (out[m + n + i], i))
            .fold(
                (f64::INFINITY, usize::MAX),
                |a, b| if b.0 < a.0 { b } else { a },
            );
        let improved = best.0 < upper;
        if improved {
            upper = best.0;
            argmin = (0..nv).map(|k| soa[2 * k * m + n + best.1]).collect();
        }
        // The boxes whose lower bound can still be <= U (NaN, empty, is dropped).
        let keep: Vec<usize> = (0..n).filter(|&i| out[i] <= upper).collect();
        if keep.is_empty() {
            return Err(undefined());
        }
        let lower = keep.iter().map(|&i| out[i]).fold(f64::INFINITY, f64::min);
        let mut ended = if upper - lower <= tol {
            Some(Ended::Done)
        } else {
            let next = 2 * keep.len();
            budget
                .refuses(next as u64)
                .or_else(|| (!room(next, nv)).then_some(Ended::Memory))
        };
        // The round's time without the descent, which runs on the CPU whichever backend runs
        // the rounds.
        pace.record(n, began.elapsed().as_secs_f64());
        if ended.is_none() && improved {
            if let Some((u, x)) = descend(descent, root, upper, &argmin)? {
                (upper, argmin) = (u, x);
                if upper - lower <= tol {
                    ended = Some(Ended::Done);
                }
            }
        }
        if let Some(ended) = ended {
            return Ok(Rounds::Found(Minimum {
                lower,
                upper,
                argmin,
                ended,
                rounds: budget.rounds(),
                boxes: budget.boxes(),
                remaining: keep.len(),
                gpu_rounds: 0,
            }));
        }
        // Bisect every survivor along its widest side.
        list = keep
            .par_iter()
            .with_min_len(super::PARALLEL_FROM)
            .flat_map_iter(|&i| {
                let b = &list[i * nv..(i + 1) * nv];
                let k = widest(b);
                let c = mid(b[k].0, b[k].1);
                let mut left = b.to_vec();
                let mut right = b.to_vec();
                left[k].1 = c;
                right[k].0 = c;
                left.into_iter().chain(right)
            })
            .collect();
    }
}

/// Whether the host can hold a round of `n` boxes of `nv` sides: their list and their batch
/// (boxes and midpoints), each allocated and let go. A budget beyond the memory then stops
/// the search ([`Ended::Memory`]) instead of failing an allocation.
fn room(n: usize, nv: usize) -> bool {
    let fits = |len: Option<usize>| {
        len.is_some_and(|len| Vec::<f64>::new().try_reserve_exact(len).is_ok())
    };
    fits(n.checked_mul(2 * nv)) && fits(n.checked_mul(4 * nv))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BackendChoice, Expression, Precision};

    fn cpu_eval(text: &str) -> Evaluator {
        Evaluator::new(
            &Expression::parse(text).unwrap(),
            Precision::F64,
            BackendChoice::Cpu,
        )
        .unwrap()
    }

    #[test]
    fn encloses_known_minima() {
        // Six-hump camel: min -1.0316284534898774 at (0.0898, -0.7126) and its mirror.
        let camel = cpu_eval("4*x^2 - 2.1*x^4 + x^6/3 + x*y - 4*y^2 + 4*y^4");
        let m = minimize(&camel, &[(-3.0, 3.0), (-2.0, 2.0)], 1e-4, 10_000_000).unwrap();
        assert!(m.complete(), "{m:?}");
        assert!(m.upper - m.lower <= 1e-4);
        assert!(
            m.lower <= -1.0316284534898774 && -1.031628453489877 <= m.upper,
            "{m:?}"
        );
        // A budget stop is reported and still encloses the minimum.
        let b = minimize(&camel, &[(-3.0, 3.0), (-2.0, 2.0)], 1e-9, 1000).unwrap();
        assert_eq!(b.ended, Ended::Budget);
        assert!(b.lower <= -1.0316284534898774 && -1.031628453489877 <= b.upper);
        assert!(b.boxes <= 1000);
    }

    #[test]
    fn a_cpu_evaluator_is_not_handed_over() {
        let f = cpu_eval("x^2 + y");
        let m = minimize(&f, &[(0.0, 1.0), (0.0, 1.0)], 1e-6, 10_000).unwrap();
        assert_eq!(m.gpu_rounds, 0);
        assert!(minimize_handing_over(&f, &[(0.0, 1.0), (0.0, 1.0)], 1e-6, 100, None, 0).is_err());
    }

    #[test]
    fn bad_input_is_an_error() {
        let f = cpu_eval("x^2 + y");
        assert!(minimize(&f, &[(0.0, 1.0)], 1e-6, 100).is_err());
        assert!(minimize(&f, &[(0.0, 1.0), (2.0, 1.0)], 1e-6, 100).is_err());
        assert!(minimize(&f, &[(0.0, 1.0), (0.0, f64::INFINITY)], 1e-6, 100).is_err());
        assert!(minimize(&f, &[(0.0, 1.0), (0.0, 1.0)], -1.0, 100).is_err());
        let g = cpu_eval("sqrt(x - 5)");
        assert!(minimize(&g, &[(0.0, 1.0)], 1e-6, 100).is_err());
    }
}
