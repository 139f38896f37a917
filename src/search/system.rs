//! Systems of constraints by branch and prune: every solution of `g_j(x) ∈ c_j` in a box,
//! enclosed in boxes at most `eps` wide, each proven to hold exactly one solution where the
//! equalities form a square system with a regular Jacobian there (IBEX's `ibexsolve`).
//!
//! Each round takes the work list as one batch on the evaluator's backend:
//!
//! 1. **Contract** every box with the constraints' contractor (HC4Revise and the centered
//!    step, [`crate::Expression::contractor`]): an emptied box holds no solution.
//! 2. **Newton**: where the equalities are as many as the variables, one Krawczyk step
//!    (`search::newton`) on each contracted box with finite sides: a box proven to hold no
//!    zero of the equalities is dropped; a box proven to hold exactly one is narrowed by
//!    further steps until they stop narrowing it (a few ulps wide near a regular zero; a box
//!    still wider than `eps` where the steps converge slowly is split instead, and its zero
//!    proven again in a part) and becomes a **solution** if every other constraint is proven
//!    on it, an **undecided** box otherwise; the rest go on, narrowed to K(X) ∩ X.
//! 3. **Inner boxes**: a box on which every constraint is proven (each enclosure inside its
//!    range, every function defined: decorations) is solutions only; it is reported as
//!    **inner** and not split. A system with an equality has none (no box is one point).
//! 4. **Bisect** the rest across the variable the smear heuristic picks from the Jacobian of
//!    the Krawczyk step (`newton::smear`; the widest side where there is none); a box at most
//!    `eps` wide is reported **undecided** (it may hold solutions; none proven). Before that,
//!    Krawczyk's test is tried once more on it widened by a tenth of each side and by `eps`,
//!    which proves zeros that lie on a face of the box (where a contraction or a cut left
//!    them, out of every box's interior); such a zero is reported if its narrowed box lies in
//!    the root box.
//!
//! **Guarantee.** Every solution in the root box where the constraints are defined lies in a
//! solution, inner or undecided box, or in a box left in the work list when the budget runs
//! out ([`SystemSolution::remaining`], reported as undecided). Each solution box holds exactly
//! one zero of the equalities, and that zero satisfies every constraint. Two solution boxes
//! never hold the same zero: one whose box lies in the box where another's uniqueness was
//! proven is that one (dropped). An undecided box that lies in a box proven to hold exactly
//! one zero, where that zero is reported (or proven to violate an inequality), is dropped: it
//! holds no other.

use super::newton::{widen, width, Jacobian, Step, Verdict};
use super::pave::{check_root, cut, soa_of, Constraints, SPLIT};
use crate::decoration::{Decoration, DecorationInputs};
use crate::{BackendChoice, Error, Evaluator, Expression, Interval, Precision};

/// How far the search goes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SystemOptions {
    /// Boxes are split until they are this wide (a solution's box is narrowed further, as
    /// far as Krawczyk's steps go).
    pub eps: f64,
    /// Evaluate at most this many boxes.
    pub max_boxes: usize,
}

impl Default for SystemOptions {
    fn default() -> Self {
        SystemOptions {
            eps: 1e-8,
            max_boxes: 1 << 22,
        }
    }
}

/// A box that holds exactly one solution.
#[derive(Clone, Debug, PartialEq)]
pub struct Solution {
    /// The narrowed box that holds it.
    pub sides: Vec<Interval>,
    /// The box in which its uniqueness was proven (holds it and no other zero of the
    /// equalities).
    pub proof: Vec<Interval>,
}

/// What [`solve_system`] found.
#[derive(Clone, Debug, PartialEq)]
pub struct SystemSolution {
    /// The variables, in the boxes' order.
    pub vars: Vec<String>,
    /// Boxes proven to hold exactly one solution each.
    pub solutions: Vec<Solution>,
    /// Boxes of solutions only (systems without equalities).
    pub inner: Vec<Vec<Interval>>,
    /// Boxes that may hold solutions, none proven: at most `eps` wide, or wider where the
    /// budget stopped the search (`remaining` of them, last).
    pub undecided: Vec<Vec<Interval>>,
    /// Whether Krawczyk's test applied (as many equalities as variables).
    pub square: bool,
    /// Boxes evaluated.
    pub evaluated: usize,
    /// Rounds taken.
    pub rounds: usize,
    /// Krawczyk steps taken (on every box of a round in one batch).
    pub newton_steps: usize,
    /// Boxes left unsplit when the budget ran out (the last of `undecided`).
    pub remaining: usize,
}

impl SystemSolution {
    /// Whether the search ended with every box decided or at `eps` (else the budget stopped
    /// it, and `remaining` boxes are wider).
    pub fn complete(&self) -> bool {
        self.remaining == 0
    }
}

/// Krawczyk steps at most to narrow a proven solution.
const NARROW_STEPS: usize = 40;

type Iv = (f64, f64);

/// A box proven to hold exactly one zero, and the narrowed box that holds it.
type Proven = (Vec<Iv>, Vec<Iv>);

/// The solutions of `constraints` over `root` (one interval per variable of the constraints'
/// expression, in the order of first appearance), on `choice`'s backend in f64.
pub fn solve_system(
    constraints: &Constraints,
    root: &[Interval],
    options: SystemOptions,
    choice: BackendChoice,
) -> Result<SystemSolution, Error> {
    let expr = Expression::parse(&constraints.source)?;
    let n = check_root(&expr, root)?;
    let m = constraints.ranges.len();
    if expr.n_outputs() != m {
        return Err(super::SearchError::Options(format!(
            "{} constraints but {} constraint functions",
            m,
            expr.n_outputs()
        ))
        .into());
    }
    let precision = Precision::F64;
    // One sweep per round: three took 0.57-1.34x the boxes and 1.0-2.3x the time on six of
    // IBEX's problems (Kin1, cyclohexan3D, Rose, Pramanik, Caprasse, Num-analysis92191).
    let contract = Evaluator::new(&expr.contractor(&constraints.ranges, 1)?, precision, choice)?;
    let decorated =
        Expression::parse_with_decorations(&constraints.source, DecorationInputs::FromBounds)?;
    let forward = Evaluator::new(&decorated, precision, choice)?;
    // The equalities as a system f(x) = 0 over the same variables, for Krawczyk's test.
    let equalities: Vec<usize> = (0..m)
        .filter(|&j| constraints.ranges[j].lo == constraints.ranges[j].hi)
        .collect();
    let newton = if equalities.len() == n && n > 0 {
        Some(equality_system(constraints, &equalities, &expr, choice)?)
    } else {
        None
    };
    let jacobian = newton.as_ref().map(|(eval, layout)| Jacobian {
        eval,
        layout: *layout,
        on_cpu: None,
        batches: None,
    });
    let defined = f64::from(Decoration::Def.code());
    let mut out = SystemSolution {
        vars: expr.vars().to_vec(),
        solutions: Vec::new(),
        inner: Vec::new(),
        undecided: Vec::new(),
        square: newton.is_some(),
        evaluated: 0,
        rounds: 0,
        newton_steps: 0,
        remaining: 0,
    };
    let root_sides: Vec<Iv> = root.iter().map(|iv| (iv.lo, iv.hi)).collect();
    let mut work: Vec<f64> = root.iter().flat_map(|iv| [iv.lo, iv.hi]).collect();
    // Boxes at eps, decided at the end (after every solution is known).
    let mut narrow: Vec<Vec<Iv>> = Vec::new();
    // Proven zeros of the equalities where an inequality is undecided.
    let mut held: Vec<Vec<Interval>> = Vec::new();
    // Boxes proven to hold exactly one zero, that zero accounted for (`accept`).
    let mut covered: Vec<Vec<Iv>> = Vec::new();
    loop {
        super::interrupt::check()?;
        let mk = work.len() / (2 * n.max(1));
        if mk == 0 || n == 0 {
            break;
        }
        if out.evaluated + mk > options.max_boxes {
            break;
        }
        out.evaluated += mk;
        out.rounds += 1;
        // 1. Contract.
        let narrowed = contract.eval_soa(&soa_of(work.chunks_exact(2 * n), n, mk), mk)?;
        let mut boxes: Vec<Vec<Iv>> = Vec::with_capacity(mk);
        // The variable to split each box across, where the Jacobian chose one.
        let mut split: Vec<Option<usize>> = Vec::new();
        for i in 0..mk {
            let b: Vec<Iv> = (0..n)
                .map(|k| (narrowed[2 * k * mk + i], narrowed[(2 * k + 1) * mk + i]))
                .collect();
            if !b.iter().any(|s| s.0.is_nan() || s.1.is_nan()) {
                boxes.push(b);
            }
        }
        // 2. Newton.
        if let Some(jac) = &jacobian {
            let steps = krawczyk(jac, &boxes, &mut out.newton_steps)?;
            let mut rest = Vec::with_capacity(boxes.len());
            let mut proven = Vec::new();
            for (b, s) in boxes.into_iter().zip(steps) {
                match s.verdict {
                    Verdict::NoZero => {}
                    Verdict::Unique => proven.push((b, s.narrowed)),
                    Verdict::Unknown => {
                        rest.push(s.narrowed);
                        split.push(s.smear);
                    }
                }
            }
            let (found, slow) = narrow_solutions(jac, proven, options.eps, &mut out.newton_steps)?;
            for (_, b) in slow {
                rest.push(b);
                split.push(None);
            }
            boxes = rest;
            accept(
                &mut out,
                &mut held,
                &mut covered,
                found,
                &forward,
                constraints,
                &root_sides,
            )?;
        }
        // 3. Inner boxes (no equalities) and the constraints' verdicts on the boxes.
        let live = boxes.len();
        let mut next: Vec<f64> = Vec::with_capacity(4 * n * live);
        if live == 0 {
            work = next;
            continue;
        }
        // (A system with an equality has no inner box: no evaluation.)
        let values = if equalities.is_empty() {
            Some(forward.eval_soa(&soa_of_boxes(&boxes), live)?)
        } else {
            None
        };
        for (i, b) in boxes.into_iter().enumerate() {
            if let Some(v) = &values {
                let inside = (0..m).all(|j| {
                    v[2 * (m + j) * live + i] >= defined
                        && v[2 * j * live + i] >= constraints.ranges[j].lo
                        && v[(2 * j + 1) * live + i] <= constraints.ranges[j].hi
                });
                if inside {
                    out.inner.push(to_intervals(&b));
                    continue;
                }
            }
            // 4. Bisect (across the smear heuristic's variable where it is wider than eps,
            // else the widest), or keep at eps.
            let widest = split
                .get(i)
                .copied()
                .flatten()
                .filter(|&k| b[k].1 - b[k].0 > options.eps)
                .or_else(|| (0..n).max_by(|&p, &q| (b[p].1 - b[p].0).total_cmp(&(b[q].1 - b[q].0))))
                .unwrap_or(0);
            let (lo, hi) = b[widest];
            let at = cut(lo, hi, SPLIT, precision);
            if width(&b) <= options.eps || !(lo < at && at < hi) {
                narrow.push(b);
                continue;
            }
            for half in 0..2 {
                for (k, &(l, h)) in b.iter().enumerate() {
                    let (l, h) = match (k == widest, half) {
                        (false, _) => (l, h),
                        (true, 0) => (l, at),
                        (true, _) => (at, h),
                    };
                    next.extend_from_slice(&[l, h]);
                }
            }
        }
        work = next;
    }
    // The boxes at eps: zeros on a face, proven in the box widened.
    if let Some(jac) = &jacobian {
        if !narrow.is_empty() {
            let wide: Vec<Vec<Iv>> = narrow.iter().map(|b| inflate(b, options.eps)).collect();
            let steps = krawczyk(jac, &wide, &mut out.newton_steps)?;
            let mut proven = Vec::new();
            let mut keep = Vec::new();
            for ((b, w), s) in narrow.into_iter().zip(wide).zip(steps) {
                match s.verdict {
                    // No zero in the widened box: none in the box.
                    Verdict::NoZero => {}
                    Verdict::Unique => {
                        proven.push((w, s.narrowed));
                        keep.push(b);
                    }
                    Verdict::Unknown => keep.push(b),
                }
            }
            narrow = keep;
            let (mut found, slow) =
                narrow_solutions(jac, proven, options.eps, &mut out.newton_steps)?;
            found.extend(slow);
            accept(
                &mut out,
                &mut held,
                &mut covered,
                found,
                &forward,
                constraints,
                &root_sides,
            )?;
        }
    }
    // An undecided box inside a box proven to hold one zero holds no zero but that one,
    // which is accounted for.
    let known = |b: &[Iv]| {
        covered
            .iter()
            .any(|p| b.iter().zip(p).all(|(x, p)| p.0 <= x.0 && x.1 <= p.1))
    };
    let undecided: Vec<Vec<Interval>> = narrow
        .iter()
        .filter(|b| !known(b))
        .map(|b| to_intervals(b))
        .collect();
    out.undecided = undecided;
    out.undecided.extend(held);
    out.remaining = work.len() / (2 * n.max(1));
    out.undecided.extend(
        work.chunks_exact(2 * n.max(1))
            .map(|b| b.chunks_exact(2).map(|s| iv(s[0], s[1])).collect()),
    );
    out.solutions.sort_by(|a, b| {
        a.sides
            .iter()
            .zip(&b.sides)
            .map(|(x, y)| x.lo.total_cmp(&y.lo))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    Ok(out)
}

/// The equalities `g_j(x) = c_j` (`j` in `which`) as the system `g_j(x) - c_j = 0` over the
/// variables of `whole` in their order, its Jacobian compiled (`Expression::jacobian`).
fn equality_system(
    constraints: &Constraints,
    which: &[usize],
    whole: &Expression,
    choice: BackendChoice,
) -> Result<(Evaluator, crate::ir::diff::Gradient), Error> {
    let zeros: Vec<(usize, f64)> = which
        .iter()
        .map(|&j| (j, constraints.ranges[j].lo))
        .collect();
    let (jac, layout) = whole.equalities(&zeros)?.jacobian()?;
    Ok((Evaluator::new(&jac, Precision::F64, choice)?, layout))
}

/// Krawczyk's step on the boxes with finite sides (its operator needs them, and so does the
/// midpoint it evaluates at); the others are left as they are, nothing proven. `count`
/// counts the batch.
fn krawczyk(jac: &Jacobian, boxes: &[Vec<Iv>], count: &mut usize) -> Result<Vec<Step>, Error> {
    let finite = |b: &Vec<Iv>| b.iter().all(|s| s.0.is_finite() && s.1.is_finite());
    let bounded: Vec<Vec<Iv>> = boxes.iter().filter(|b| finite(b)).cloned().collect();
    if !bounded.is_empty() {
        *count += 1;
    }
    let mut steps = jac.krawczyk(&bounded)?.into_iter();
    Ok(boxes
        .iter()
        .map(|b| {
            if finite(b) {
                steps.next().expect("one step per bounded box")
            } else {
                Step {
                    verdict: Verdict::Unknown,
                    narrowed: b.clone(),
                    smear: None,
                }
            }
        })
        .collect())
}

/// Narrows proven boxes (each holds exactly one zero: `(proof box, narrowed box)`) by
/// Krawczyk steps: near a regular zero they converge quadratically, to a few ulps in a few
/// steps, far below `eps`. Returns the boxes narrowed until a step changed nothing (at the
/// floats' resolution, or at the width that interval constants in the system leave), and
/// those still wider than `eps` (relative above 1) where a step took off less than half: the
/// caller splits those (on a wide box the steps converge only linearly).
fn narrow_solutions(
    jac: &Jacobian,
    mut pending: Vec<Proven>,
    eps: f64,
    steps: &mut usize,
) -> Result<(Vec<Proven>, Vec<Proven>), Error> {
    let (mut done, mut slow) = (Vec::new(), Vec::new());
    for _ in 0..NARROW_STEPS {
        let wide = std::mem::take(&mut pending);
        if wide.is_empty() {
            break;
        }
        *steps += 1;
        let boxes: Vec<Vec<Iv>> = wide.iter().map(|(_, b)| b.clone()).collect();
        let next = jac.krawczyk(&boxes)?;
        for ((proof, b), s) in wide.into_iter().zip(next) {
            // The zero lies in K(X) ∩ X whatever the verdict (NoZero cannot happen: the box
            // holds one; if rounding said so, keep the box).
            if s.verdict == Verdict::NoZero {
                done.push((proof, b));
                continue;
            }
            let (before, after) = (width(&b), width(&s.narrowed));
            if after >= before {
                done.push((proof, s.narrowed));
            } else if after < 0.5 * before || narrow_enough(&s.narrowed, eps) {
                pending.push((proof, s.narrowed));
            } else {
                slow.push((proof, s.narrowed));
            }
        }
    }
    // Still narrowing after the last step: as far as it went.
    done.extend(pending);
    Ok((done, slow))
}

/// The box widened on each end by a tenth of each side's width and by `eps` (relative above
/// 1): room for K(X) around a zero on a face, also where a side is a few ulps wide (there a
/// tenth of the width is less than K(X)'s own rounding).
fn inflate(b: &[Iv], eps: f64) -> Vec<Iv> {
    widen(b)
        .into_iter()
        .map(|(lo, hi)| {
            let w = eps * lo.abs().max(hi.abs()).max(1.0);
            (lo - w, hi + w)
        })
        .collect()
}

/// Whether every side is at most `eps` wide, relative to its magnitude above 1.
fn narrow_enough(b: &[Iv], eps: f64) -> bool {
    b.iter()
        .all(|&(lo, hi)| hi - lo <= eps * lo.abs().max(hi.abs()).max(1.0))
}

/// Adds the proven boxes `found` (`(proof box, narrowed box)`) to `out`: as solutions where
/// every constraint is proven on the narrowed box (the inequalities inside their ranges; the
/// equalities hold at the zero), as undecided boxes where an inequality is not; dropped where
/// one is proven violated, where the zero may lie outside the root box, or where the zero is
/// one already found.
fn accept(
    out: &mut SystemSolution,
    held: &mut Vec<Vec<Interval>>,
    covered: &mut Vec<Vec<Iv>>,
    found: Vec<Proven>,
    forward: &Evaluator,
    constraints: &Constraints,
    root: &[Iv],
) -> Result<(), Error> {
    let found: Vec<Proven> = found
        .into_iter()
        .filter(|(_, b)| b.iter().zip(root).all(|(s, r)| r.0 <= s.0 && s.1 <= r.1))
        .collect();
    // Each of these proof boxes' one zero ends reported (a solution, an undecided box, one
    // found before) or proven infeasible.
    covered.extend(found.iter().map(|(proof, _)| proof.clone()));
    let k = found.len();
    if k == 0 {
        return Ok(());
    }
    let narrowed: Vec<Vec<Iv>> = found.iter().map(|(_, b)| b.clone()).collect();
    let v = forward.eval_soa(&soa_of_boxes(&narrowed), k)?;
    let m = constraints.ranges.len();
    let defined = f64::from(Decoration::Def.code());
    for (i, (proof, b)) in found.into_iter().enumerate() {
        let (mut proven, mut violated) = (true, false);
        for j in 0..m {
            let r = constraints.ranges[j];
            let (lo, hi) = (v[2 * j * k + i], v[(2 * j + 1) * k + i]);
            if r.lo == r.hi {
                continue;
            }
            if lo > r.hi || hi < r.lo {
                violated = true;
                break;
            }
            if !(v[2 * (m + j) * k + i] >= defined && lo >= r.lo && hi <= r.hi) {
                proven = false;
            }
        }
        // The zero violates an inequality: not a solution.
        if violated {
            continue;
        }
        let same = out.solutions.iter().any(|s| {
            inside(&b, &s.proof)
                || s.sides
                    .iter()
                    .zip(&proof)
                    .all(|(x, p)| p.0 <= x.lo && x.hi <= p.1)
        });
        if same {
            continue;
        }
        if proven {
            out.solutions.push(Solution {
                sides: to_intervals(&b),
                proof: to_intervals(&proof),
            });
        } else {
            held.push(to_intervals(&b));
        }
    }
    Ok(())
}

/// Boxes as the evaluators' structure of arrays (`search::pave::soa_of`'s layout: bound k of
/// box i at `k * count + i`).
fn soa_of_boxes(boxes: &[Vec<Iv>]) -> Vec<f64> {
    let count = boxes.len();
    let n = boxes.first().map_or(0, Vec::len);
    let mut soa = vec![0.0; 2 * n * count];
    for (i, b) in boxes.iter().enumerate() {
        for (k, &(lo, hi)) in b.iter().enumerate() {
            soa[2 * k * count + i] = lo;
            soa[(2 * k + 1) * count + i] = hi;
        }
    }
    soa
}

/// Whether box `b` lies in the box `p`.
fn inside(b: &[Iv], p: &[Interval]) -> bool {
    b.iter().zip(p).all(|(x, p)| p.lo <= x.0 && x.1 <= p.hi)
}

fn iv(lo: f64, hi: f64) -> Interval {
    Interval { lo, hi }
}

fn to_intervals(b: &[Iv]) -> Vec<Interval> {
    b.iter().map(|&(lo, hi)| iv(lo, hi)).collect()
}
