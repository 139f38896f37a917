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

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use super::exclude::{exclude, Ended};
use super::handover::{Handover, Pace};
use super::minimize::mid;
use crate::ir::diff::Gradient;
use crate::{Error, Evaluator};

/// An evaluator of a square system's Jacobian expression ([`crate::Expression::jacobian`])
/// and its layout.
#[derive(Clone, Copy)]
pub(crate) struct Jacobian<'a> {
    /// Evaluates the Jacobian expression.
    pub eval: &'a Evaluator,
    /// Where the outputs, flags and partial derivatives are.
    pub layout: Gradient,
    /// For a GPU evaluator made with `Auto`: its CPU twin and the pace of the batches run
    /// there. A batch runs on the CPU until the CPU is predicted slower than a GPU round twice
    /// in a row (`search::handover`): Krawczyk's batches are a few clusters each, which the
    /// GPU's batch engine answers in a launch, copies and a synchronization each.
    pub on_cpu: Option<(&'a Evaluator, &'a std::sync::Mutex<Pace>)>,
    /// Where the batches are counted, if anywhere: all of them, and those run by `eval` on a
    /// GPU ([`Isolated::batches`], [`Isolated::gpu_batches`]).
    pub batches: Option<&'a [std::sync::atomic::AtomicUsize; 2]>,
}

/// What Krawczyk's test proved about a box.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
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
pub(crate) struct Step {
    /// What the step proved.
    pub verdict: Verdict,
    /// The narrowed box (`(lo, hi)` per variable).
    pub narrowed: Vec<(f64, f64)>,
    /// The variable to split the box across, by the smear heuristic (where the Jacobian's
    /// enclosure is finite; see [`smear`]).
    pub smear: Option<usize>,
}

type Iv = (f64, f64);

// The interval sum, difference and product of the Krawczyk operator, and its intersection with
// the box: the lowering's own (generated from it; 0 · ∞ is 0 as in IEEE 1788's product, where
// the hardware says NaN).
use crate::lower::generated::f64_ops::{add, intersect, mul, sub};

impl Jacobian<'_> {
    /// One Krawczyk step on each box (`(lo, hi)` per variable), all evaluated in one batch.
    pub(crate) fn krawczyk(&self, boxes: &[Vec<(f64, f64)>]) -> Result<Vec<Step>, Error> {
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
        if let Some([all, _]) = self.batches {
            all.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        let cpu = self
            .on_cpu
            .filter(|(_, pace)| !pace.lock().unwrap_or_else(|p| p.into_inner()).hand_over(m));
        let out = match cpu {
            Some((twin, pace)) => {
                let began = std::time::Instant::now();
                let out = twin.eval_soa(&soa, m)?;
                let seconds = began.elapsed().as_secs_f64();
                pace.lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .record(m, seconds);
                out
            }
            None => {
                if let Some([_, gpu]) = self.batches {
                    if self.eval.backend() == crate::Backend::Gpu {
                        gpu.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                }
                self.eval.eval_soa(&soa, m)?
            }
        };
        let at = |o: usize, i: usize| (out[2 * o * m + i], out[(2 * o + 1) * m + i]);
        Ok(boxes
            .iter()
            .enumerate()
            .map(|(i, x)| {
                let unknown = Step {
                    verdict: Verdict::Unknown,
                    narrowed: x.clone(),
                    smear: None,
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
                let mut step = operator(x, &centers[i], &fc, &jac, &y);
                step.smear = smear(x, &jac);
                step
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
                smear: None,
            };
        }
        if !(ki.0 > x[i].0 && ki.1 < x[i].1) {
            inside = false;
        }
        // K(X) ∩ X, the lowering's intersection (empty: NaN bounds).
        let (lo, hi) = intersect(ki, x[i]);
        if lo.is_nan() || hi.is_nan() {
            disjoint = true;
        }
        narrowed.push((lo, hi));
    }
    if disjoint {
        return Step {
            verdict: Verdict::NoZero,
            narrowed: x.to_vec(),
            smear: None,
        };
    }
    Step {
        verdict: if inside {
            Verdict::Unique
        } else {
            Verdict::Unknown
        },
        narrowed,
        smear: None,
    }
}

/// The smear heuristic's choice of a variable to split a box across (Kearfott and Novoa 1990;
/// IBEX's `SmearSumRelative`): the variable k with the largest `Σ_j |J_jk| w_k / Σ_l |J_jl|
/// w_l`, how much of each equation's variation over the box comes from x_k, summed over the
/// equations. `None` where no equation varies (or the sums are not finite).
pub(crate) fn smear(x: &[Iv], jac: &[Iv]) -> Option<usize> {
    let n = x.len();
    let mut score = vec![0.0; n];
    for j in 0..n {
        let terms: Vec<f64> = (0..n)
            .map(|k| {
                let (a, b) = jac[j * n + k];
                a.abs().max(b.abs()) * (x[k].1 - x[k].0)
            })
            .collect();
        let total: f64 = terms.iter().sum();
        if total > 0.0 && total.is_finite() {
            for k in 0..n {
                score[k] += terms[k] / total;
            }
        }
    }
    let best = (0..n).max_by(|&p, &q| score[p].total_cmp(&score[q]))?;
    (score[best] > 0.0).then_some(best)
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
    /// Rounds of the exclusion run on a GPU (with `Auto`, the rounds after the handover;
    /// [`Survivors::gpu_rounds`](super::exclude::Survivors)).
    pub gpu_rounds: usize,
    /// Rounds of the exclusion in all.
    pub rounds: usize,
    /// Batches of Krawczyk's steps (a step over many candidates takes several).
    pub batches: usize,
    /// Those whose Jacobian ran on a GPU (with `Auto`, those after the CPU was predicted
    /// slower).
    pub gpu_batches: usize,
}

/// Krawczyk steps at most per candidate.
const STEPS: usize = 40;

/// The zeros of a square system f in `root`: the exclusion rule ([`exclude`]) on `residual`
/// (f's [`crate::Expression::residual`], 0 exactly at f's zeros) to `tol`, the surviving boxes
/// merged into connected clusters, and each cluster's hull given to Krawczyk's test (once as
/// it is and, if that proves nothing, once widened by a tenth on each side): boxes proven to
/// hold one zero are narrowed by repeated steps, boxes proven to hold none dropped, the rest
/// reported unproven. A zero proven in a widened box is reported only if its narrowed box lies
/// in `root`. The zeros come sorted by their sides.
///
/// The time follows the budget: the exclusion evaluates at most `max_boxes` boxes, the
/// clustering takes about `k log k` steps for its `k` boxes (`clusters`), and each cluster
/// takes at most two Krawczyk steps unless it is proven to hold a zero (then at most
/// `STEPS`, a few in practice), in batches of bounded size. Between rounds, batches and
/// parts of the clustering, the check of [`super::interruptible`] may stop it.
pub(crate) fn isolate(
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
    let (ended, evaluated) = (found.ended, found.evaluated);
    let (rounds, gpu_rounds) = (found.rounds, found.gpu_rounds);
    // Every box, final or not, in one flat list (the longer one extended: one copy at most).
    let (mut sides, rest) = if found.boxes.sides.len() >= found.unfinished.sides.len() {
        (found.boxes.sides, found.unfinished.sides)
    } else {
        (found.unfinished.sides, found.boxes.sides)
    };
    sides.extend_from_slice(&rest);
    drop(rest);
    let hulls = clusters(&mut sides, root.len())?;
    drop(sides);
    let inside_root = |b: &[(f64, f64)]| b.iter().zip(root).all(|(s, r)| r.0 <= s.0 && s.1 <= r.1);
    let mut zeros = Vec::new();
    let mut newton_steps = 0;
    let mut live: Vec<Candidate> = hulls
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
    // Candidates per batch: a bounded batch of Jacobian outputs (2 boxes per candidate).
    let outputs = jacobian.eval.program().outputs.len().max(1);
    let batch = ((1usize << 22) / outputs).max(256);
    for _ in 0..STEPS {
        if live.is_empty() {
            break;
        }
        let mut steps = Vec::with_capacity(live.len());
        for part in live.chunks(batch) {
            super::interrupt::check()?;
            let boxes: Vec<Vec<(f64, f64)>> = part.iter().map(|c| c.current.clone()).collect();
            steps.extend(jacobian.krawczyk(&boxes)?);
        }
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
    // A total order (by the sides, then the verdict): the same list whatever order the
    // exclusion found the boxes in (the GPU's differs from run to run).
    zeros.sort_by(|a, b| {
        a.sides
            .iter()
            .zip(&b.sides)
            .map(|(s, t)| s.0.total_cmp(&t.0).then(s.1.total_cmp(&t.1)))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.unique.cmp(&b.unique))
    });
    Ok(Isolated {
        zeros,
        ended,
        evaluated,
        rounds,
        gpu_rounds,
        batches: jacobian
            .batches
            .map_or(0, |[all, _]| all.load(std::sync::atomic::Ordering::Relaxed)),
        gpu_batches: jacobian
            .batches
            .map_or(0, |[_, gpu]| gpu.load(std::sync::atomic::Ordering::Relaxed)),
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
    /// The Jacobian's CPU twin where the residual is a GPU evaluator made with `Auto`.
    jacobian_cpu: Option<Evaluator>,
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
        let measured = matches!(Handover::of(&residual), Some(Handover::Measured));
        let jacobian_cpu = measured.then(|| jacobian.cpu_twin());
        Ok(Solver {
            residual,
            jacobian,
            layout,
            jacobian_cpu,
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
        let pace = std::sync::Mutex::new(Pace::new());
        let batches = Default::default();
        let jacobian = Jacobian {
            eval: &self.jacobian,
            layout: self.layout,
            on_cpu: self.jacobian_cpu.as_ref().map(|twin| (twin, &pace)),
            batches: Some(&batches),
        };
        isolate(&self.residual, &jacobian, root, tol, max_boxes)
    }
}

/// The widest side of a box.
pub(crate) fn width(b: &[(f64, f64)]) -> f64 {
    b.iter().map(|s| s.1 - s.0).fold(0.0, f64::max)
}

/// The box widened by a tenth of each side's width (and a few ulps) on each end.
pub(crate) fn widen(b: &[(f64, f64)]) -> Vec<(f64, f64)> {
    b.iter()
        .map(|&(lo, hi)| {
            let w =
                0.1 * (hi - lo) + 4.0 * f64::EPSILON * lo.abs().max(hi.abs()) + f64::MIN_POSITIVE;
            (lo - w, hi + w)
        })
        .collect()
}

/// Boxes per leaf of the clustering's tree.
const LEAF: usize = 16;

/// Nodes with at least this many boxes build and search their two halves in parallel.
const PARALLEL: usize = 1 << 14;

/// The hulls of the connected groups of closed boxes (`nv` sides each, flat: box i is
/// `sides[i * nv..(i + 1) * nv]`; two boxes touch when they intersect in every side), in an
/// unspecified order. The boxes are left permuted.
///
/// The boxes are put in the order of a bounding-volume tree (each node's boxes halved at the
/// median of their centers along the widest spread, down to leaves of at most [`LEAF`]; each
/// node keeps the hull of its boxes), and the tree is searched against itself for touching
/// pairs, which a union-find joins: a node's two halves are searched first, then the pairs
/// across them, where two nodes whose hulls do not touch are skipped, and so are two nodes
/// already known to be one group each and the same one. For the boxes of a subdivision
/// (interiors disjoint, as the exclusion leaves them) this takes about `k log k` steps for `k`
/// boxes (the sort) and near-linear ones for the search; the sweep along one coordinate that
/// it replaces compared each box with every box of the slabs beside it (zeros filling a
/// volume: hours at the default budget). The groups do not depend on the order the unions
/// come in (rayon's threads run them concurrently).
fn clusters(sides: &mut [(f64, f64)], nv: usize) -> Result<Vec<Vec<(f64, f64)>>, Error> {
    let nv = nv.max(1);
    macro_rules! fixed {
        ($($n:literal)*) => {
            match nv {
                $($n => {
                    let k = sides.len() / $n;
                    // SAFETY: [(f64, f64); N] has the size and alignment of N consecutive
                    // (f64, f64), and the k * N sides lie in `sides`.
                    let boxes: &mut [[(f64, f64); $n]] = unsafe {
                        std::slice::from_raw_parts_mut(sides.as_mut_ptr().cast(), k)
                    };
                    return groups(boxes);
                })*
                _ => {}
            }
        };
    }
    fixed!(1 2 3 4 5 6 7 8);
    // Wider boxes move as references.
    let mut boxes: Vec<&[(f64, f64)]> = sides.chunks_exact(nv).collect();
    groups(&mut boxes)
}

/// [`clusters`] over boxes of any representation (sides in order).
fn groups<B>(boxes: &mut [B]) -> Result<Vec<Vec<(f64, f64)>>, Error>
where
    B: AsRef<[(f64, f64)]> + Send + Sync,
{
    let k = boxes.len();
    if k == 0 {
        return Ok(Vec::new());
    }
    let nv = boxes[0].as_ref().len();
    if u32::try_from(k).is_err() {
        // Beyond 2^32 boxes (never, in memory that holds them): one hull of them all, a
        // valid if coarse answer.
        let mut h = vec![(f64::INFINITY, f64::NEG_INFINITY); nv];
        boxes.iter().for_each(|b| grow(&mut h, b.as_ref()));
        return Ok(vec![h]);
    }
    let tree = Tree::build(boxes, nv);
    super::interrupt::check()?;
    let dsu = UnionFind::new(k);
    tree.search(&dsu, Node::ROOT.with(k));
    super::interrupt::check()?;
    // The root of each group is its least box (a root is linked below a smaller one), met
    // first in this loop.
    let mut group = vec![u32::MAX; k];
    let mut hulls: Vec<Vec<(f64, f64)>> = Vec::new();
    for (i, b) in tree.boxes.iter().enumerate() {
        let r = dsu.find(i as u32) as usize;
        if r == i {
            group[i] = hulls.len() as u32;
            hulls.push(b.as_ref().to_vec());
        } else {
            grow(&mut hulls[group[r] as usize], b.as_ref());
        }
    }
    Ok(hulls)
}

/// Widens the hull `h` to hold box `b`.
fn grow(h: &mut [(f64, f64)], b: &[(f64, f64)]) {
    for (s, t) in h.iter_mut().zip(b) {
        *s = (s.0.min(t.0), s.1.max(t.1));
    }
}

/// Whether two closed boxes intersect in every side.
fn touch(a: &[(f64, f64)], b: &[(f64, f64)]) -> bool {
    a.iter().zip(b).all(|(s, t)| s.0 <= t.1 && t.0 <= s.1)
}

/// A union-find over `0..k` that threads may join concurrently: a root is only ever linked
/// below a smaller root (so the root of every group is its least element, whatever order the
/// unions come in), and paths are halved as they are walked.
struct UnionFind {
    parent: Vec<AtomicU32>,
}

impl UnionFind {
    fn new(k: usize) -> UnionFind {
        UnionFind {
            parent: (0..k as u32).map(AtomicU32::new).collect(),
        }
    }

    fn find(&self, mut x: u32) -> u32 {
        loop {
            let p = self.parent[x as usize].load(Ordering::Acquire);
            if p == x {
                return x;
            }
            let g = self.parent[p as usize].load(Ordering::Acquire);
            if g != p {
                // Halving: any ancestor is a valid parent; a lost race changes nothing.
                let _ = self.parent[x as usize].compare_exchange(
                    p,
                    g,
                    Ordering::AcqRel,
                    Ordering::Relaxed,
                );
            }
            x = g;
        }
    }

    fn union(&self, a: u32, b: u32) {
        loop {
            let (ra, rb) = (self.find(a), self.find(b));
            if ra == rb {
                return;
            }
            let (high, low) = if ra > rb { (ra, rb) } else { (rb, ra) };
            // Links `high` only if it is still a root; otherwise look again.
            if self.parent[high as usize]
                .compare_exchange(high, low, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                return;
            }
        }
    }
}

/// A node of a [`Tree`]: its index (the root is 0, node v's halves are 2v + 1 and 2v + 2) and
/// its boxes, `start..start + len` of the tree's order.
#[derive(Clone, Copy)]
struct Node {
    index: usize,
    start: usize,
    len: usize,
}

impl Node {
    const ROOT: Node = Node {
        index: 0,
        start: 0,
        len: 0,
    };

    fn with(self, len: usize) -> Node {
        Node { len, ..self }
    }

    fn is_leaf(self) -> bool {
        self.len <= LEAF
    }

    /// The two halves (the first has `len / 2` boxes, as the tree was built).
    fn halves(self) -> (Node, Node) {
        let half = self.len / 2;
        (
            Node {
                index: 2 * self.index + 1,
                start: self.start,
                len: half,
            },
            Node {
                index: 2 * self.index + 2,
                start: self.start + half,
                len: self.len - half,
            },
        )
    }

    fn range(self) -> std::ops::Range<usize> {
        self.start..self.start + self.len
    }
}

/// A bounding-volume tree over boxes, which it holds permuted into its order: every node's
/// boxes are a contiguous range, and the node keeps their hull.
struct Tree<'b, B> {
    boxes: &'b [B],
    nv: usize,
    /// Node v's hull at `hull[v * nv..(v + 1) * nv]`.
    hull: Vec<(f64, f64)>,
    /// Whether node v's boxes are known to be one group (set by the search).
    joined: Vec<AtomicBool>,
}

impl<'b, B: AsRef<[(f64, f64)]> + Send + Sync> Tree<'b, B> {
    fn build(boxes: &'b mut [B], nv: usize) -> Tree<'b, B> {
        let k = boxes.len();
        // Levels below the root: a range of len boxes halves into len/2 and len - len/2,
        // down to at most LEAF.
        let mut depth = 0;
        while k.div_ceil(1 << depth) > LEAF {
            depth += 1;
        }
        let nodes = (2usize << depth) - 1;
        let mut hull = vec![(f64::INFINITY, f64::NEG_INFINITY); nodes * nv];
        let mut spread = vec![(f64::INFINITY, f64::NEG_INFINITY); nv];
        for b in boxes.iter() {
            for (d, s) in spread.iter_mut().enumerate() {
                let c = center(b.as_ref(), d);
                *s = (s.0.min(c), s.1.max(c));
            }
        }
        build_node(boxes, &spread, &mut Levels::new(&mut hull, nv, depth));
        Tree {
            boxes,
            nv,
            hull,
            joined: (0..nodes).map(|_| AtomicBool::new(false)).collect(),
        }
    }

    fn hull(&self, n: Node) -> &[(f64, f64)] {
        &self.hull[n.index * self.nv..(n.index + 1) * self.nv]
    }

    fn is_joined(&self, n: Node) -> bool {
        self.joined[n.index].load(Ordering::Acquire)
    }

    /// Joins every pair of touching boxes of node `n`, and records whether they are one group.
    fn search(&self, dsu: &UnionFind, n: Node) {
        let joined = if n.is_leaf() {
            for i in n.range() {
                for j in i + 1..n.start + n.len {
                    if touch(self.boxes[i].as_ref(), self.boxes[j].as_ref()) {
                        dsu.union(i as u32, j as u32);
                    }
                }
            }
            let first = dsu.find(n.start as u32);
            n.range().all(|i| dsu.find(i as u32) == first)
        } else {
            let (a, b) = n.halves();
            if n.len >= PARALLEL {
                rayon::join(|| self.search(dsu, a), || self.search(dsu, b));
            } else {
                self.search(dsu, a);
                self.search(dsu, b);
            }
            self.across(dsu, a, b);
            self.is_joined(a)
                && self.is_joined(b)
                && dsu.find(a.start as u32) == dsu.find(b.start as u32)
        };
        self.joined[n.index].store(joined, Ordering::Release);
    }

    /// Joins every pair of touching boxes, one of node `a`, one of node `b` (disjoint nodes,
    /// both searched before).
    fn across(&self, dsu: &UnionFind, a: Node, b: Node) {
        if !touch(self.hull(a), self.hull(b)) {
            return;
        }
        if self.is_joined(a)
            && self.is_joined(b)
            && dsu.find(a.start as u32) == dsu.find(b.start as u32)
        {
            return; // one group already
        }
        match (a.is_leaf(), b.is_leaf()) {
            (true, true) => {
                for i in a.range() {
                    for j in b.range() {
                        if touch(self.boxes[i].as_ref(), self.boxes[j].as_ref()) {
                            dsu.union(i as u32, j as u32);
                        }
                    }
                }
            }
            (false, _) if b.is_leaf() || a.len >= b.len => {
                let (a0, a1) = a.halves();
                self.across(dsu, a0, b);
                self.across(dsu, a1, b);
            }
            _ => {
                let (b0, b1) = b.halves();
                self.across(dsu, a, b0);
                self.across(dsu, a, b1);
            }
        }
    }
}

/// The hull array of a [`Tree`] seen level by level below one node, so that the subtrees of
/// its two halves can be written in parallel: `levels[d]` is the run of the nodes d levels
/// below it (in the array's order, a node's halves' subtrees are the two halves of each run).
struct Levels<'h> {
    nv: usize,
    levels: Vec<&'h mut [(f64, f64)]>,
}

impl<'h> Levels<'h> {
    fn new(hull: &'h mut [(f64, f64)], nv: usize, depth: usize) -> Levels<'h> {
        let mut levels = Vec::with_capacity(depth + 1);
        let mut rest = hull;
        for d in 0..=depth {
            let (level, tail) = rest.split_at_mut((1 << d) * nv);
            levels.push(level);
            rest = tail;
        }
        Levels { nv, levels }
    }

    /// The runs of the two halves' subtrees.
    fn split(&mut self) -> (Levels<'_>, Levels<'_>) {
        let (mut first, mut second) = (Vec::new(), Vec::new());
        for level in self.levels.iter_mut().skip(1) {
            let half = level.len() / 2;
            let (a, b) = level.split_at_mut(half);
            first.push(a);
            second.push(b);
        }
        let nv = self.nv;
        (Levels { nv, levels: first }, Levels { nv, levels: second })
    }
}

/// The key the tree sorts boxes by along side `d`: the center.
fn center(b: &[(f64, f64)], d: usize) -> f64 {
    0.5 * b[d].0 + 0.5 * b[d].1
}

/// Builds the node whose boxes are `boxes`: halves them at the median of their centers along
/// the widest side of `region` (the first half `len / 2` boxes), builds both halves (in
/// parallel while they are large), and stores the hull. `region` holds the centers of the
/// node's boxes: at the root, their spread; below, the parent's cut at the median (a guess
/// of the spread that costs no pass over the boxes, good enough to pick a side).
fn build_node<B: AsRef<[(f64, f64)]> + Send + Sync>(
    boxes: &mut [B],
    region: &[(f64, f64)],
    levels: &mut Levels<'_>,
) {
    let len = boxes.len();
    if len <= LEAF {
        let h = &mut *levels.levels[0];
        boxes.iter().for_each(|b| grow(h, b.as_ref()));
        return;
    }
    let width = |d: usize| region[d].1 - region[d].0;
    let axis = (0..region.len())
        .max_by(|&a, &b| width(a).total_cmp(&width(b)))
        .unwrap_or(0);
    let half = len / 2;
    let key = |b: &B| center(b.as_ref(), axis);
    boxes.select_nth_unstable_by(half, |a, b| key(a).total_cmp(&key(b)));
    let cut = key(&boxes[half]);
    let (mut below, mut above) = (region.to_vec(), region.to_vec());
    below[axis].1 = cut;
    above[axis].0 = cut;
    let (first, second) = boxes.split_at_mut(half);
    {
        let (mut l, mut r) = levels.split();
        if len >= PARALLEL {
            rayon::join(
                || build_node(first, &below, &mut l),
                || build_node(second, &above, &mut r),
            );
        } else {
            build_node(first, &below, &mut l);
            build_node(second, &above, &mut r);
        }
    }
    // The halves' hulls: the two nodes of the next level's run.
    let nv = region.len();
    let (own, below) = levels.levels.split_at_mut(1);
    let (l, r) = below[0].split_at(nv);
    for ((h, a), b) in own[0].iter_mut().zip(l).zip(r) {
        *h = (a.0.min(b.0), a.1.max(b.1));
    }
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
        let j = Jacobian {
            eval: &e,
            layout,
            on_cpu: None,
            batches: None,
        };
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

    /// The leaves of a random subdivision of [-1, 1]^nv (each node halved along a random
    /// side, to a random depth), each kept with probability 1/2, in a shuffled order.
    fn random_subdivision(nv: usize, seed: u64, max_depth: u32) -> Vec<(f64, f64)> {
        let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut leaves: Vec<Vec<(f64, f64)>> = Vec::new();
        let mut work = vec![(vec![(-1.0, 1.0); nv], 0)];
        while let Some((b, depth)) = work.pop() {
            if depth >= max_depth || (depth > 2 && next() % 4 == 0) {
                if next() % 2 == 0 {
                    leaves.push(b);
                }
                continue;
            }
            let k = (next() % nv as u64) as usize;
            let m = 0.5 * b[k].0 + 0.5 * b[k].1;
            let (mut l, mut r) = (b.clone(), b);
            l[k].1 = m;
            r[k].0 = m;
            work.push((l, depth + 1));
            work.push((r, depth + 1));
        }
        for i in (1..leaves.len()).rev() {
            leaves.swap(i, (next() % (i as u64 + 1)) as usize);
        }
        leaves.concat()
    }

    /// The groups by comparing every pair: the reference.
    fn clusters_by_pairs(sides: &[(f64, f64)], nv: usize) -> Vec<Vec<(f64, f64)>> {
        let k = sides.len() / nv;
        let dsu = UnionFind::new(k);
        for i in 0..k {
            for j in i + 1..k {
                if touch(&sides[i * nv..(i + 1) * nv], &sides[j * nv..(j + 1) * nv]) {
                    dsu.union(i as u32, j as u32);
                }
            }
        }
        let mut hulls: Vec<(usize, Vec<(f64, f64)>)> = Vec::new();
        for i in 0..k {
            let r = dsu.find(i as u32) as usize;
            let b = &sides[i * nv..(i + 1) * nv];
            match hulls.iter_mut().find(|(root, _)| *root == r) {
                Some((_, h)) => {
                    for (s, t) in h.iter_mut().zip(b) {
                        *s = (s.0.min(t.0), s.1.max(t.1));
                    }
                }
                None => hulls.push((r, b.to_vec())),
            }
        }
        hulls.into_iter().map(|(_, h)| h).collect()
    }

    fn sorted(mut hulls: Vec<Vec<(f64, f64)>>) -> Vec<Vec<(f64, f64)>> {
        hulls.sort_by(|a, b| {
            let key = |h: &Vec<(f64, f64)>| h.iter().flat_map(|s| [s.0, s.1]).collect::<Vec<_>>();
            key(a).partial_cmp(&key(b)).unwrap()
        });
        hulls
    }

    #[test]
    fn clusters_are_the_connected_groups() {
        for nv in 1..=4 {
            for seed in 0..12 {
                let sides = random_subdivision(nv, seed * 31 + nv as u64, 11);
                let want = sorted(clusters_by_pairs(&sides, nv));
                let got = sorted(clusters(&mut sides.clone(), nv).unwrap());
                assert_eq!(got, want, "{nv} sides, seed {seed}");
            }
        }
        // Corners only: two squares that share one corner are one group, a third apart not.
        let mut sides = [
            (0.0, 1.0),
            (0.0, 1.0),
            (1.0, 2.0),
            (1.0, 2.0),
            (3.0, 4.0),
            (0.0, 1.0),
        ];
        assert_eq!(
            sorted(clusters(&mut sides, 2).unwrap()),
            vec![vec![(0.0, 2.0), (0.0, 2.0)], vec![(3.0, 4.0), (0.0, 1.0)]]
        );
        assert!(clusters(&mut [], 3).unwrap().is_empty());
    }

    /// Issue 30 (7): zeros filling a volume leave the exclusion's whole work list; the sweep
    /// along one coordinate compared each box with the slabs of boxes beside it (96^3 boxes:
    /// about 10^10 comparisons). The tree takes about k log k steps.
    #[test]
    fn clusters_of_a_filled_volume_take_near_linear_time() {
        let n = 96;
        let step = 2.0 / n as f64;
        let mut sides = Vec::with_capacity(n * n * n * 3);
        for i in 0..n {
            for j in 0..n {
                for k in 0..n {
                    for c in [i, j, k] {
                        sides.push((-1.0 + c as f64 * step, -1.0 + (c + 1) as f64 * step));
                    }
                }
            }
        }
        let start = std::time::Instant::now();
        let hulls = clusters(&mut sides, 3).unwrap();
        let secs = start.elapsed().as_secs_f64();
        assert_eq!(hulls, vec![vec![(-1.0, 1.0); 3]]);
        eprintln!("{} boxes clustered in {secs:.3} s", n * n * n);
        assert!(secs < 10.0, "{secs} s for {} boxes", n * n * n);
    }

    #[test]
    fn a_filled_volume_is_one_unproven_cluster_and_can_be_interrupted() {
        let f = Expression::parse("x - x, y - y, z - z").unwrap();
        let solver = Solver::new(&f, BackendChoice::Cpu).unwrap();
        let root = [(-1.0, 1.0); 3];
        let found = solver.isolate(&root, 1e-12, 1 << 18).unwrap();
        assert_eq!(found.ended, Ended::Budget);
        assert_eq!(
            found.zeros,
            vec![Zero {
                sides: root.to_vec(),
                unique: false
            }]
        );
        let stopped =
            super::super::interruptible(|| true, || solver.isolate(&root, 1e-12, 1 << 18));
        assert!(matches!(
            stopped,
            Err(Error::Search(super::super::SearchError::Interrupted))
        ));
    }

    #[test]
    fn needs_continuity_and_definedness() {
        // sqrt(x) - 0.5 has its zero at 0.25, but the box reaches outside sqrt's domain.
        let (e, layout) = jac("sqrt(x) - 0.5");
        let j = Jacobian {
            eval: &e,
            layout,
            on_cpu: None,
            batches: None,
        };
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
        let j = Jacobian {
            eval: &e,
            layout,
            on_cpu: None,
            batches: None,
        };
        assert_eq!(
            j.krawczyk(&[vec![(0.2, 0.7)]]).unwrap()[0].verdict,
            Verdict::Unknown
        );
    }
}
