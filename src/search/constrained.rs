//! Constrained global optimization: a certified enclosure `[lower, upper]` of
//! `min f(x) subject to g_j(x) ∈ c_j` over a box, by branch and bound with contractors.
//!
//! The objective and the constraints are one expression (`f, g_1, ..., g_m`), so they share
//! their variables and subexpressions. Each round takes the work list as one batch on the
//! evaluator's backend:
//!
//! 1. **Contract** every box with the constraints' contractor (HC4Revise and the centered step,
//!    [`crate::Expression::contractor`]; the objective's range is the whole line, so it is not
//!    projected): an emptied box holds no feasible point and is dropped.
//! 2. **Bound** f on the contracted box (the lower bound of its mean-value form met with the
//!    natural extension, and where a constraint may be violated on the box, the certified
//!    bound of its linear relaxation, [`super::relax`]) and drop the box where it exceeds the
//!    best upper bound U, where f is nowhere defined, or where the relaxation proves that no
//!    point of the box is feasible.
//! 3. **Upper bounds from proven-feasible points**: the contracted box's midpoint, the
//!    relaxation's minimizer, and the points Newton steps onto the equalities reach from the
//!    best boxes' midpoints ([`super::feasible`]), each evaluated as a point box with IEEE
//!    1788 decorations: where every constraint's enclosure lies in its range and every
//!    function, f included, is `def` or better (defined at the point, which a range test alone
//!    cannot show near a domain's edge), the point is feasible and f's upper bound there is an
//!    upper bound of the minimum.
//! 4. **Bisect** the rest across their widest side; a box narrower than `eps` is kept, not
//!    split, and only bounds the minimum from below.
//!
//! **Guarantee.** Every feasible point of the root box lies in a box that survives or was
//! dropped because f exceeds U there, so L (the least lower bound of the surviving boxes) is
//! at most the minimum over the feasible set, and U, f's value at a point proven feasible, is
//! at least it. **Equalities** (`h == 0`, a range that is one point) are relaxed to
//! `|h| <= eq_tol` (IBEX's `eps_h`): no float point satisfies most equalities exactly, so no
//! upper bound could be proven. The enclosure is then the relaxed problem's minimum, and
//! [`ConstrainedMinimum::relaxation`] says so; with `eq_tol` 0 the equalities stay exact and U
//! is found only at points where they hold exactly.

use rayon::prelude::*;

use super::pave::{check_root, cut, soa_of, Constraints};
use super::relax::{Relaxation, Verdict};
use crate::decoration::{Decoration, DecorationInputs};
use crate::{BackendChoice, Error, Evaluator, Expression, Interval, Precision};

/// How far the search goes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ConstrainedOptions {
    /// Stop when `upper - lower <= tol`.
    pub tol: f64,
    /// Boxes this narrow (every side) are no longer split.
    pub eps: f64,
    /// Equalities `h == c` are relaxed to `|h - c| <= eq_tol`.
    pub eq_tol: f64,
    /// Evaluate at most this many boxes.
    pub max_boxes: usize,
    /// Bound f on each box by its linear relaxation as well (one linear program per box,
    /// [`crate::search::relax`]), which also drops boxes it proves infeasible.
    pub linear_relaxation: bool,
}

impl Default for ConstrainedOptions {
    fn default() -> Self {
        ConstrainedOptions {
            tol: 1e-6,
            eps: 1e-9,
            eq_tol: 1e-6,
            max_boxes: 1 << 22,
            linear_relaxation: true,
        }
    }
}

/// Why the search stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stopped {
    /// `upper - lower <= tol`.
    Converged,
    /// No box is left to split: every survivor is narrower than `eps`.
    Narrow,
    /// The box budget ran out (the enclosure holds, but is wider than asked).
    Budget,
    /// No feasible point: every box of the root box was proven infeasible.
    Infeasible,
}

/// A certified enclosure of a constrained minimum.
#[derive(Clone, Debug, PartialEq)]
pub struct ConstrainedMinimum {
    /// The variables, in the points' and boxes' order.
    pub vars: Vec<String>,
    /// `lower <= min f <= upper` over the (relaxed) feasible set; `upper` is +inf until a
    /// feasible point is proven. Both are +inf when the set is proven empty.
    pub lower: f64,
    /// See `lower`.
    pub upper: f64,
    /// The point proven feasible whose value gave `upper`.
    pub argmin: Option<Vec<f64>>,
    /// The half-width to which equalities were relaxed (0: none were, or `eq_tol` was 0).
    pub relaxation: f64,
    /// Why the search stopped.
    pub stopped: Stopped,
    /// Boxes evaluated.
    pub evaluated: usize,
    /// Rounds taken.
    pub rounds: usize,
    /// Boxes left that may hold a minimizer (at most `eps` wide where the search ran out of
    /// boxes to split).
    pub remaining: usize,
}

/// The minimum of `objective` (one output) subject to `constraints` over `root` (one interval
/// per variable of `objective, constraints` in their order of first appearance, as
/// [`problem_expression`] gives them), on `choice`'s backend in `precision`.
pub fn minimize_subject_to(
    objective: &str,
    constraints: &Constraints,
    root: &[Interval],
    options: ConstrainedOptions,
    precision: Precision,
    choice: BackendChoice,
) -> Result<ConstrainedMinimum, Error> {
    let source = combined(objective, constraints);
    let expr = problem_expression(objective, constraints)?;
    let m = constraints.ranges.len();
    let n = check_root(&expr, root)?;
    // Equalities relaxed; the objective's range is the whole line (not projected).
    let relax = options.eq_tol.max(0.0);
    let mut relaxed = false;
    let ranges: Vec<Interval> = constraints
        .ranges
        .iter()
        .map(|r| {
            if r.lo == r.hi && relax > 0.0 {
                relaxed = true;
                Interval {
                    lo: crate::round::add_f64(r.lo, -relax, crate::scalar::Round::Down),
                    hi: crate::round::add_f64(r.hi, relax, crate::scalar::Round::Up),
                }
            } else {
                *r
            }
        })
        .collect();
    // The equalities (output index, value), for the Newton steps onto them.
    let equalities: Vec<(usize, f64)> = constraints
        .ranges
        .iter()
        .enumerate()
        .filter(|(_, r)| r.lo == r.hi)
        .map(|(j, r)| (j + 1, r.lo))
        .collect();
    let mut all_ranges = vec![Interval::ENTIRE];
    all_ranges.extend(&ranges);
    let contract = Evaluator::new(&expr.contractor(&all_ranges, 1)?, precision, choice)?;
    // Once a feasible value U is known, the contractor also narrows by f <= U (IBEX's
    // objective cut): the problem with one more output, `f - u`, in [-inf, 0], u a variable
    // (the last) that each box holds as [U, U]. Before that no such cut exists (u = +inf would
    // make f - u = -inf and the backward step inf - inf).
    let mut upper_var = String::from("__upper");
    while expr.vars().contains(&upper_var) {
        upper_var.push('_');
    }
    let cut_expr = Expression::parse(&format!("{source}, ({objective}) - {upper_var}"))?;
    let mut cut_ranges = all_ranges.clone();
    cut_ranges.push(Interval {
        lo: f64::NEG_INFINITY,
        hi: 0.0,
    });
    let contract_cut = Evaluator::new(&cut_expr.contractor(&cut_ranges, 1)?, precision, choice)?;
    let decorated = Expression::parse_with_decorations(&source, DecorationInputs::FromBounds)?;
    let forward = Evaluator::new(&decorated, precision, choice)?;
    // f's lower bound on a box: its mean-value form met with the natural extension (on small
    // boxes the overestimation shrinks like the square of the width: without it the boxes
    // around a minimizer multiply, the "cluster effect").
    let bound = Evaluator::new(&expr.mean_value_form()?, precision, choice)?;
    // The linear relaxation's data: f's and the g_j's values at each box's lower corner, and
    // their gradients (with the flags that they are continuous and defined) over the box.
    let (jacobian, layout) = expr.jacobian()?;
    let slopes = Evaluator::new(&jacobian, precision, choice)?;
    let plain = Evaluator::new(&expr, precision, choice)?;
    let no = m + 1;
    let defined = f64::from(Decoration::Def.code());
    let round = |x: f64| match precision {
        Precision::F64 => x,
        Precision::F32 => x as f32 as f64,
    };

    let mut out = ConstrainedMinimum {
        vars: expr.vars().to_vec(),
        lower: f64::NEG_INFINITY,
        upper: f64::INFINITY,
        argmin: None,
        relaxation: if relaxed { relax } else { 0.0 },
        stopped: Stopped::Budget,
        evaluated: 0,
        rounds: 0,
        remaining: 0,
    };
    // Boxes as flat bounds (lo, hi per variable) with the lower bound of f their parent had.
    let root: Vec<Interval> = match precision {
        Precision::F64 => root.to_vec(),
        Precision::F32 => root.iter().map(|iv| iv.to_f32_enclosure()).collect(),
    };
    let mut work: Vec<f64> = root.iter().flat_map(|iv| [iv.lo, iv.hi]).collect();
    let mut work_lower: Vec<f64> = vec![f64::NEG_INFINITY];
    // Boxes narrower than eps, with their lower bounds.
    let mut kept: Vec<(Vec<f64>, f64)> = Vec::new();
    // Rounds to go without the linear relaxation, and the length of the next such pause: a
    // round where it dropped under 1 in 5 of the boxes it was run on and did not raise the
    // round's least lower bound pauses it (1, 2, 4, ... up to 16 rounds; it costs about as
    // much as the rest of a round), a useful one resets it.
    let (mut pause, mut next_pause) = (0usize, 1usize);
    loop {
        let mk = work.len() / (2 * n);
        // The enclosure so far: the least lower bound of every box that may hold a minimizer.
        let lower = work_lower
            .iter()
            .chain(kept.iter().map(|(_, l)| l))
            .copied()
            .fold(f64::INFINITY, f64::min);
        out.lower = lower.min(out.upper);
        if mk == 0 {
            out.stopped = if kept.is_empty() && out.upper == f64::INFINITY {
                Stopped::Infeasible
            } else {
                Stopped::Narrow
            };
            break;
        }
        if out.upper - out.lower <= options.tol {
            out.stopped = Stopped::Converged;
            break;
        }
        if out.evaluated + mk > options.max_boxes {
            out.stopped = Stopped::Budget;
            break;
        }
        out.evaluated += mk;
        out.rounds += 1;
        // 1. Contract (with the objective cut once U is known).
        let narrowed = if out.upper < f64::INFINITY {
            // f32: the cut rounded up, an upper bound of U in the program's floats.
            let u = match precision {
                Precision::F64 => out.upper,
                Precision::F32 => {
                    crate::round::narrow_f32(out.upper, crate::scalar::Round::Up) as f64
                }
            };
            let mut soa = soa_of(work.chunks_exact(2 * n), n, mk);
            soa.resize(2 * (n + 1) * mk, u);
            let got = contract_cut.eval_soa(&soa, mk)?;
            // The first n variables' bounds (the last is u).
            got[..2 * n * mk].to_vec()
        } else {
            contract.eval_soa(&soa_of(work.chunks_exact(2 * n), n, mk), mk)?
        };
        let mut boxes: Vec<f64> = Vec::with_capacity(work.len());
        for i in 0..mk {
            let b: Vec<f64> = (0..2 * n).map(|k| narrowed[k * mk + i]).collect();
            if !b.iter().any(|x| x.is_nan()) {
                boxes.extend_from_slice(&b);
            }
        }
        let live = boxes.len() / (2 * n);
        if live == 0 {
            work.clear();
            work_lower.clear();
            continue;
        }
        // 2. Bound f on the boxes (and by their linear relaxations); 3. evaluate at their
        // midpoints and the relaxations' minimizers (point boxes).
        let values = bound.eval_soa(&soa_of(boxes.chunks_exact(2 * n), n, live), live)?;
        let relax_now = options.linear_relaxation && pause == 0;
        pause = pause.saturating_sub(1);
        let verdicts = if relax_now {
            // Only where the interval bound keeps the box, and a constraint may be violated on
            // it: elsewhere the program has no rows, and its bound (f's linearization at a
            // corner) is rarely above the mean-value form's.
            let undecided: Vec<bool> = (0..live)
                .map(|i| {
                    values[i] <= out.upper
                        && ranges.iter().enumerate().any(|(j, r)| {
                            let o = j + 1;
                            !(values[2 * o * live + i] >= r.lo
                                && values[(2 * o + 1) * live + i] <= r.hi)
                        })
                })
                .collect();
            relaxations(&boxes, &undecided, n, &slopes, layout, &plain, &ranges)?
        } else {
            vec![(None, None); live]
        };
        let mut candidates: Vec<f64> = boxes
            .chunks_exact(2 * n)
            .flat_map(|b| {
                (0..n).flat_map(move |k| {
                    let (lo, hi) = (b[2 * k], b[2 * k + 1]);
                    let c = round(lo / 2.0 + hi / 2.0).clamp(lo, hi);
                    let c = if c.is_finite() {
                        c
                    } else {
                        lo.max(-f64::MAX).min(hi)
                    };
                    [c, c]
                })
            })
            .collect();
        // The relaxations' minimizers, after the midpoints: x = lo + d inside the box.
        for (b, (_, d)) in boxes.chunks_exact(2 * n).zip(&verdicts) {
            if let Some(d) = d {
                for k in 0..n {
                    let (lo, hi) = (b[2 * k], b[2 * k + 1]);
                    let x = round(lo + d[k]).clamp(lo, hi);
                    candidates.extend([x, x]);
                }
            }
        }
        // Newton steps onto the equalities from the midpoints of the boxes whose lower bounds
        // are least, after those.
        if !equalities.is_empty() {
            let mut order: Vec<usize> = (0..live).filter(|&i| !values[i].is_nan()).collect();
            order.sort_by(|&a, &b| values[a].total_cmp(&values[b]).then(a.cmp(&b)));
            order.truncate(NEWTON_STARTS);
            let mut xs: Vec<Vec<f64>> = order
                .iter()
                .map(|&i| (0..n).map(|k| candidates[2 * (i * n + k)]).collect())
                .collect();
            for _ in 0..NEWTON_STEPS {
                xs = newton_steps(&xs, &slopes, layout, &equalities, &root, round)?;
            }
            for x in &xs {
                candidates.extend(x.iter().flat_map(|&v| [v, v]));
            }
        }
        let points = candidates.len() / (2 * n);
        let at_points =
            forward.eval_soa(&soa_of(candidates.chunks_exact(2 * n), n, points), points)?;
        for i in 0..points {
            let feasible = (0..no).all(|j| at_points[2 * (no + j) * points + i] >= defined)
                && ranges.iter().enumerate().all(|(j, r)| {
                    let (lo, hi) = (
                        at_points[2 * (j + 1) * points + i],
                        at_points[(2 * (j + 1) + 1) * points + i],
                    );
                    lo >= r.lo && hi <= r.hi
                });
            let f_hi = at_points[points + i];
            if feasible && f_hi < out.upper {
                out.upper = f_hi;
                out.argmin = Some((0..n).map(|k| candidates[2 * (i * n + k)]).collect());
            }
        }
        // 4. Drop, keep or bisect.
        let mut next: Vec<f64> = Vec::with_capacity(2 * boxes.len());
        let mut next_lower: Vec<f64> = Vec::with_capacity(2 * live);
        let (mut relaxed_boxes, mut dropped_by_relaxation) = (0usize, 0usize);
        // The least lower bound of the boxes kept, with and without the relaxation's bounds.
        let (mut least, mut least_interval) = (f64::INFINITY, f64::INFINITY);
        for (i, b) in boxes.chunks_exact(2 * n).enumerate() {
            relaxed_boxes += usize::from(verdicts[i].0.is_some());
            let f_lo = match verdicts[i].0 {
                Some(Verdict::Infeasible) => {
                    dropped_by_relaxation += 1;
                    continue;
                }
                Some(Verdict::Lower(v)) if !values[i].is_nan() => {
                    dropped_by_relaxation += usize::from(v > out.upper && values[i] <= out.upper);
                    values[i].max(v)
                }
                _ => values[i],
            };
            // f nowhere defined on the box (empty), or above the best feasible value.
            if f_lo.is_nan() || f_lo > out.upper {
                continue;
            }
            least = least.min(f_lo);
            least_interval = least_interval.min(values[i]);
            let widest = (0..n)
                .max_by(|&p, &q| (b[2 * p + 1] - b[2 * p]).total_cmp(&(b[2 * q + 1] - b[2 * q])))
                .unwrap_or(0);
            let (lo, hi) = (b[2 * widest], b[2 * widest + 1]);
            let mid = cut(lo, hi, 0.5, precision);
            if hi - lo <= options.eps || !(lo < mid && mid < hi) {
                kept.push((b.to_vec(), f_lo));
                continue;
            }
            for half in 0..2 {
                let at = next.len();
                next.extend_from_slice(b);
                next[at + 2 * widest + 1 - half] = mid;
                next_lower.push(f_lo);
            }
        }
        kept.retain(|(_, l)| *l <= out.upper);
        if relax_now {
            if dropped_by_relaxation * 5 < relaxed_boxes && least <= least_interval {
                pause = next_pause;
                next_pause = (2 * next_pause).min(16);
            } else {
                next_pause = 1;
            }
        }
        work = next;
        work_lower = next_lower;
    }
    out.remaining = work.len() / (2 * n) + kept.len();
    Ok(out)
}

/// Boxes a round whose midpoints start Newton steps onto the equalities, and the steps.
const NEWTON_STARTS: usize = 16;
/// See [`NEWTON_STARTS`].
const NEWTON_STEPS: usize = 4;

/// One Newton step onto the equalities (`(output, value)`) from each point of `xs` (those that
/// take one: [`super::feasible::newton_step`]), through the gradient program `slopes` at the
/// points; each new point clamped to `root` and rounded to the program's precision.
fn newton_steps(
    xs: &[Vec<f64>],
    slopes: &Evaluator,
    layout: crate::ir::diff::Gradient,
    equalities: &[(usize, f64)],
    root: &[Interval],
    round: impl Fn(f64) -> f64,
) -> Result<Vec<Vec<f64>>, Error> {
    let k = xs.len();
    if k == 0 {
        return Ok(Vec::new());
    }
    let n = root.len();
    let flat: Vec<f64> = xs
        .iter()
        .flat_map(|x| x.iter().flat_map(|&v| [v, v]))
        .collect();
    let at = slopes.eval_soa(&soa_of(flat.chunks_exact(2 * n), n, k), k)?;
    // An output's value at point p: its enclosure's midpoint.
    let mid = |o: usize, p: usize| at[2 * o * k + p] / 2.0 + at[(2 * o + 1) * k + p] / 2.0;
    Ok(xs
        .iter()
        .enumerate()
        .filter_map(|(p, x)| {
            let residual: Vec<f64> = equalities
                .iter()
                .map(|&(o, c)| mid(layout.value(o), p) - c)
                .collect();
            let jacobian: Vec<f64> = equalities
                .iter()
                .flat_map(|&(o, _)| (0..n).map(move |v| (o, v)))
                .map(|(o, v)| mid(layout.partial(o, v), p))
                .collect();
            let next = super::feasible::newton_step(x, &residual, &jacobian)?;
            Some(
                next.iter()
                    .zip(root)
                    .map(|(&v, r)| round(v).clamp(r.lo, r.hi))
                    .collect(),
            )
        })
        .collect())
}

/// A box's relaxation: what it proves, and its minimizer (offsets from the lower corner).
type Solved = (Option<Verdict>, Option<Vec<f64>>);

/// What each box's linear relaxation at its lower corner proves (`boxes`: `n` (lo, hi) pairs
/// each, those where `wanted` holds; `slopes` evaluates `f, g_1, ..., g_m`'s gradients laid
/// out as `layout`, `plain` their values; `ranges`: the constraints' ranges).
fn relaxations(
    boxes: &[f64],
    wanted: &[bool],
    n: usize,
    slopes: &Evaluator,
    layout: crate::ir::diff::Gradient,
    plain: &Evaluator,
    ranges: &[Interval],
) -> Result<Vec<Solved>, Error> {
    let all = boxes.len() / (2 * n);
    // Boxes with a side not bounded have no relaxation (its widths must be finite).
    let bounded: Vec<usize> = (0..all)
        .filter(|&i| {
            wanted[i]
                && boxes[2 * n * i..2 * n * (i + 1)]
                    .iter()
                    .all(|x| x.is_finite())
        })
        .collect();
    let live = bounded.len();
    if live == 0 {
        return Ok(vec![(None, None); all]);
    }
    let boxes: Vec<f64> = bounded
        .iter()
        .flat_map(|&i| boxes[2 * n * i..2 * n * (i + 1)].iter().copied())
        .collect();
    let over_box = slopes.eval_soa(&soa_of(boxes.chunks_exact(2 * n), n, live), live)?;
    let corners: Vec<f64> = boxes
        .chunks_exact(2 * n)
        .flat_map(|b| (0..n).flat_map(move |k| [b[2 * k], b[2 * k]]))
        .collect();
    let at_corners = plain.eval_soa(&soa_of(corners.chunks_exact(2 * n), n, live), live)?;
    let outputs = ranges.len() + 1;
    let iv = |values: &[f64], o: usize, i: usize| Interval {
        lo: values[2 * o * live + i],
        hi: values[(2 * o + 1) * live + i],
    };
    let found: Vec<Solved> = (0..live)
        .into_par_iter()
        .map(|i| {
            let b = &boxes[2 * n * i..2 * n * (i + 1)];
            let lo: Vec<f64> = (0..n).map(|k| b[2 * k]).collect();
            let hi: Vec<f64> = (0..n).map(|k| b[2 * k + 1]).collect();
            let at_corner: Vec<Interval> = (0..outputs).map(|j| iv(&at_corners, j, i)).collect();
            let over: Vec<Interval> = (0..outputs)
                .map(|j| iv(&over_box, layout.value(j), i))
                .collect();
            let Some(relaxation) = Relaxation::at_lower_corner(
                &lo,
                &hi,
                &at_corner,
                &over,
                |j, k| iv(&over_box, layout.partial(j, k), i),
                |j| {
                    let flag = iv(&over_box, layout.defined(j), i);
                    flag.lo == 1.0 && flag.hi == 1.0
                },
                ranges,
            ) else {
                return (None, None);
            };
            relaxation.solve()
        })
        .collect();
    let mut verdicts = vec![(None, None); all];
    for (i, v) in bounded.into_iter().zip(found) {
        verdicts[i] = v;
    }
    Ok(verdicts)
}

/// The one expression of the objective and the constraint functions, in that order.
fn combined(objective: &str, constraints: &Constraints) -> String {
    format!("{objective}, {}", constraints.source)
}

/// The expression `objective, g_1, ..., g_m` of a constrained problem: its variables are the
/// order in which [`minimize_subject_to`] takes the root box (first appearance in the
/// objective, then in the constraints). An objective of several outputs is an error.
pub fn problem_expression(objective: &str, constraints: &Constraints) -> Result<Expression, Error> {
    let expr = Expression::parse(&combined(objective, constraints))?;
    let m = constraints.ranges.len();
    if expr.n_outputs() != m + 1 {
        return Err(crate::error::SearchError::Options(format!(
            "the objective `{objective}` must be one expression (it has {} outputs)",
            expr.n_outputs() - m
        ))
        .into());
    }
    Ok(expr)
}
