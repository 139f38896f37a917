//! Paving (set inversion, SIVIA with contractors): the boxes of a root box that are proven
//! inside the set `{x : every constraint holds}`, proven outside it, or too narrow to decide.
//!
//! Each round evaluates a batch of boxes on the evaluator's backend, twice: the HC4Revise
//! contractor of the constraints ([`crate::Expression::contractor`]), whose cut-off slabs are
//! outside (the contractor keeps every feasible point), and the constraint functions with IEEE
//! 1788 decorations on the contracted box, which is inside where every function's enclosure
//! lies in its range and the decoration says every function is defined on the whole box
//! (`def` or better: a range test alone would accept a box where `sqrt(x)` is undefined).
//! Boxes neither proven are cut across their widest side ([`SPLIT`]) until narrower than `eps`; then
//! they are boundary boxes. Every box of the root box ends in exactly one list (up to shared
//! faces): the lists' volumes add up to the root box's.

pub(crate) mod gpu;

use crate::decoration::{Decoration, DecorationInputs};
use crate::{BackendChoice, Error, Evaluator, Expression, Interval, Precision};

/// Where a box is cut across its widest side: at this fraction of it, IBEX's and Codac's
/// default (0.49), so that box counts compare with theirs under the same bisection. Neither
/// this nor the midpoint is better everywhere: on the five problems of docs/constraints.md the
/// midpoint gave 2.5-6 % fewer boxes on three and 3-12 % more on the other two (the 3-D ball,
/// and the trigonometric one, whose boundary meets the cuts at 0 and ±2 of [-4, 4]).
pub(super) const SPLIT: f64 = 0.49;

/// The default fixpoint ratio of [`Paver::with_ratio`].
pub const RATIO: f64 = 0.0;

/// A set of constraints `g_j(x) ∈ ranges[j]`, read from `f <= g`, `f >= g`, `f == g` (or
/// `f = g`) and `f in [a, b]`, comma-separated.
#[derive(Clone, Debug, PartialEq)]
pub struct Constraints {
    /// The constraint functions as one expression of several outputs (`(f) - (g)` for the
    /// comparisons).
    pub source: String,
    /// The allowed range of each output.
    pub ranges: Vec<Interval>,
}

/// Why a constraint text does not read.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ConstraintError {
    /// A constraint without a relation.
    #[error(
        "constraint {index} (`{text}`): expected a relation: f <= g, f >= g, f == g or f in [a, b]"
    )]
    NoRelation {
        /// 1-based position in the list.
        index: usize,
        /// The constraint's text.
        text: String,
    },
    /// The range of `f in [a, b]` is not an interval.
    #[error("constraint {index} (`{text}`): the range after `in` must be an interval like [0, 1]: {message}")]
    Range {
        /// 1-based position in the list.
        index: usize,
        /// The constraint's text.
        text: String,
        /// What is wrong with it.
        message: String,
    },
    /// An empty constraint (two commas, a trailing comma).
    #[error("constraint {index} is empty: write constraints separated by commas, like 'x^2 + y^2 <= 1, x >= 0'")]
    Empty {
        /// 1-based position in the list.
        index: usize,
    },
}

/// Splits `text` at the commas outside parentheses and brackets.
pub(super) fn split_top(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in text.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&text[start..]);
    out
}

/// The first relation outside parentheses and brackets: its byte range and kind.
fn relation(text: &str) -> Option<(usize, usize, &'static str)> {
    let b = text.as_bytes();
    let mut depth = 0i32;
    for i in 0..b.len() {
        match b[i] {
            b'(' | b'[' => depth += 1,
            b')' | b']' => depth -= 1,
            _ if depth != 0 => {}
            b'<' | b'>' | b'=' if b.get(i + 1) == Some(&b'=') => {
                let kind = match b[i] {
                    b'<' => "<=",
                    b'>' => ">=",
                    _ => "==",
                };
                return Some((i, i + 2, kind));
            }
            b'=' => return Some((i, i + 1, "==")),
            b'i' if text[i..].starts_with("in")
                && i > 0
                && b[i - 1].is_ascii_whitespace()
                && b.get(i + 2)
                    .is_some_and(|c| c.is_ascii_whitespace() || *c == b'[') =>
            {
                return Some((i, i + 2, "in"));
            }
            _ => {}
        }
    }
    None
}

impl Constraints {
    /// Reads comma-separated constraints (see [`Constraints`]).
    ///
    /// ```
    /// use ivjit::search::pave::Constraints;
    /// let c = Constraints::parse("x^2 + y^2 <= 1, x >= y, x*y in [0, 0.25]").unwrap();
    /// assert_eq!(c.source, "(x^2 + y^2) - (1), (x) - (y), x*y");
    /// assert_eq!(c.ranges[0].to_string(), "[-inf, 0]");
    /// assert_eq!(c.ranges[2].to_string(), "[0, 0.25]");
    /// ```
    pub fn parse(text: &str) -> Result<Constraints, ConstraintError> {
        let mut sources = Vec::new();
        let mut ranges = Vec::new();
        for (k, part) in split_top(text).into_iter().enumerate() {
            let index = k + 1;
            let part = part.trim();
            if part.is_empty() {
                return Err(ConstraintError::Empty { index });
            }
            let Some((a, b, kind)) = relation(part) else {
                return Err(ConstraintError::NoRelation {
                    index,
                    text: part.to_string(),
                });
            };
            let (f, g) = (part[..a].trim(), part[b..].trim());
            let (source, range) = match kind {
                "in" => {
                    let range = Interval::parse(g).map_err(|e| ConstraintError::Range {
                        index,
                        text: part.to_string(),
                        message: e.to_string(),
                    })?;
                    (f.to_string(), range)
                }
                kind => {
                    let range = match kind {
                        "<=" => Interval {
                            lo: f64::NEG_INFINITY,
                            hi: 0.0,
                        },
                        ">=" => Interval {
                            lo: 0.0,
                            hi: f64::INFINITY,
                        },
                        _ => Interval { lo: 0.0, hi: 0.0 },
                    };
                    (format!("({f}) - ({g})"), range)
                }
            };
            sources.push(source);
            ranges.push(range);
        }
        Ok(Constraints {
            source: sources.join(", "),
            ranges,
        })
    }
}

/// A box: one interval per variable (named so as not to hide `std::boxed::Box`).
pub type IntervalBox = Vec<Interval>;

/// The result of [`pave`].
#[derive(Clone, Debug, Default)]
pub struct Paving {
    /// The variables, in the boxes' order.
    pub vars: Vec<String>,
    /// Boxes whose every point satisfies every constraint.
    pub inner: Vec<IntervalBox>,
    /// Boxes narrower than `eps` (or left when the budget ran out) that are neither.
    pub boundary: Vec<IntervalBox>,
    /// Boxes none of whose points satisfies every constraint.
    pub outer: Vec<IntervalBox>,
    /// Boxes evaluated (each by the contractor and the decorated functions).
    pub evaluated: usize,
    /// Whether the budget ran out (the undecided boxes were then reported as boundary).
    pub truncated: bool,
}

/// Paves `root` (one interval per variable of `constraints.source`, in its variable order;
/// in f32 rounded outward to f32 first) down to boxes `eps` wide, evaluating at most `max_boxes` boxes; on `choice`'s backend in
/// `precision` ([`Paver::new`], then [`Paver::pave`]).
pub fn pave(
    constraints: &Constraints,
    root: &[Interval],
    eps: f64,
    max_boxes: usize,
    precision: Precision,
    choice: BackendChoice,
) -> Result<Paving, Error> {
    Paver::new(constraints, precision, choice)?.pave(root, eps, max_boxes)
}

/// The programs of a paving, compiled once for any number of root boxes: the HC4Revise
/// contractor of the constraints (one sweep), the decorated constraint functions, and the
/// complement's contractors (one per bounded side of each range).
pub struct Paver {
    expr: Expression,
    ranges: Vec<Interval>,
    precision: Precision,
    contract: Evaluator,
    forward: Evaluator,
    complements: Vec<Evaluator>,
    /// Boxes the contractors narrow by more than this fraction of a side go round again
    /// uncut ([`Paver::with_ratio`]).
    ratio: f64,
}

/// A paving's programs on one backend (a [`Paver`]'s, or their CPU twins for the rounds an
/// `auto` search runs on the CPU before it hands over).
struct Programs<'a> {
    contract: &'a Evaluator,
    forward: &'a Evaluator,
    complements: Vec<&'a Evaluator>,
}

impl<'a> Programs<'a> {
    /// The programs in [`Paver::programs`]'s order.
    fn of(mut all: impl Iterator<Item = &'a Evaluator>) -> Programs<'a> {
        let contract = all.next().expect("a paving has a contractor");
        let forward = all.next().expect("a paving has its functions");
        Programs {
            contract,
            forward,
            complements: all.collect(),
        }
    }
}

impl Paver {
    /// Compiles the programs of `constraints` in `precision` on `choice`'s backend.
    pub fn new(
        constraints: &Constraints,
        precision: Precision,
        choice: BackendChoice,
    ) -> Result<Paver, Error> {
        let expr = Expression::parse(&constraints.source)?;
        let contractor = expr.contractor(&constraints.ranges, 1)?;
        let decorated =
            Expression::parse_with_decorations(&constraints.source, DecorationInputs::FromBounds)?;
        let contract = Evaluator::new(&contractor, precision, choice)?;
        let forward = Evaluator::new(&decorated, precision, choice)?;
        // The complement of the set, as one contractor per side of each range that is bounded:
        // output j below its range's lower end, or above its upper end (closures).
        let mut complements = Vec::new();
        for (j, r) in constraints.ranges.iter().enumerate() {
            let below = (r.lo > f64::NEG_INFINITY).then_some(Interval {
                lo: f64::NEG_INFINITY,
                hi: r.lo,
            });
            let above = (r.hi < f64::INFINITY).then_some(Interval {
                lo: r.hi,
                hi: f64::INFINITY,
            });
            for side in [below, above].into_iter().flatten() {
                let mut ranges = vec![Interval::ENTIRE; constraints.ranges.len()];
                ranges[j] = side;
                complements.push(Evaluator::new(
                    &expr.contractor(&ranges, 1)?,
                    precision,
                    choice,
                )?);
            }
        }
        Ok(Paver {
            expr,
            ranges: constraints.ranges.clone(),
            precision,
            contract,
            forward,
            complements,
            ratio: RATIO,
        })
    }

    /// The same paver with another fixpoint ratio: a box that one round's contractors
    /// narrow by more than `ratio` of some side's width goes back to the work list uncut, to
    /// be contracted again before it is cut (IBEX's `CtcFixPoint` ratio, iterated across
    /// rounds so that the device's rounds do it too). 0 turns it off: one contraction per
    /// cut, as Codac's `pave`. Default [`RATIO`].
    pub fn with_ratio(mut self, ratio: f64) -> Paver {
        self.ratio = ratio;
        self
    }

    /// Every program: the contractor, the decorated functions, the complement's contractors.
    fn programs(&self) -> impl Iterator<Item = &Evaluator> {
        [&self.contract, &self.forward]
            .into_iter()
            .chain(self.complements.iter())
    }

    /// The variables, in the root box's order.
    pub fn vars(&self) -> &[String] {
        self.expr.vars()
    }

    /// Waits up to `timeout` until every program runs as its own compiled kernel on the GPU
    /// (a long program answers from the GPU's interpreter or stages while its kernel compiles
    /// in the background, `GpuKernel::wait_for_single_kernel`); true when they all do (at once
    /// on the CPU). For timings of the search alone.
    pub fn wait_for_kernels(&self, timeout: std::time::Duration) -> bool {
        self.programs().all(|e| {
            e.gpu_kernel()
                .is_none_or(|k| k.wait_for_single_kernel(timeout))
        })
    }

    /// The backend the programs run on.
    pub fn backend(&self) -> crate::Backend {
        self.contract.backend()
    }

    /// Paves `root` (one interval per variable, in [`Paver::vars`] order; in f32 rounded
    /// outward to f32 first) down to boxes `eps` wide, evaluating at most `max_boxes` boxes.
    ///
    /// On the GPU the work list and the three lists stay in device memory until the end (each
    /// round: the contractor, the decorated functions and the complement's contractors on the
    /// round's boxes, and one kernel that sorts them into the lists and splits the rest; the
    /// host reads four counters): the same boxes as the CPU's where the programs have no point
    /// calls, in another order. An evaluator made with `auto` runs the first rounds on the
    /// CPU and hands the work list to the GPU once a round is predicted to take the CPU
    /// longer (`search::handover`).
    pub fn pave(&self, root: &[Interval], eps: f64, max_boxes: usize) -> Result<Paving, Error> {
        let n = check_root(&self.expr, root)?;
        let mut out = Paving {
            vars: self.expr.vars().to_vec(),
            ..Paving::default()
        };
        // Boxes of the precision's floats, so that every program reads them as they are (in f32
        // the root box is rounded outward first).
        let root: IntervalBox = match self.precision {
            Precision::F64 => root.to_vec(),
            Precision::F32 => root.iter().map(|iv| iv.to_f32_enclosure()).collect(),
        };
        // The work list: boxes as flat bounds, 2n values each (lo, hi per variable).
        let mut work: Vec<f64> = root.iter().flat_map(|iv| [iv.lo, iv.hi]).collect();
        // Where the rounds run: all on the GPU (an evaluator made with `gpu`), all on the CPU
        // (a CPU evaluator), or on the CPU's twins of the programs until the handover (`auto`).
        // (Every program's kernel on one device: the device rounds pass buffers between them.)
        let device = |e: &Evaluator| e.gpu_kernel().map(|k| k.device_kernels()[0].ordinal);
        let on_device = n <= gpu::MAX_VARS
            && device(&self.contract).is_some()
            && self.programs().all(|e| device(e) == device(&self.contract));
        let handover = match crate::search::handover::Handover::of(&self.contract) {
            _ if !on_device => Some(crate::search::handover::Handover::Never),
            h => h,
        };
        let twins: Vec<Evaluator> = match handover {
            Some(_) if on_device => self.programs().map(|e| e.cpu_twin()).collect(),
            _ => Vec::new(),
        };
        let cpu = match handover {
            None => None,
            Some(_) if twins.is_empty() => Some(Programs::of(self.programs())),
            Some(_) => Some(Programs::of(twins.iter())),
        };
        let mut pace = crate::search::handover::Pace::new();
        let mut rounds = 0;
        while !work.is_empty() {
            let m = work.len() / (2 * n);
            let (Some(programs), Some(h)) = (&cpu, handover) else {
                return gpu::pave(self, work, eps, max_boxes, out);
            };
            if h.now(&mut pace, rounds, m) {
                return gpu::pave(self, work, eps, max_boxes, out);
            }
            if out.evaluated + m > max_boxes {
                out.truncated = true;
                out.boundary.extend(work.chunks_exact(2 * n).map(to_box));
                break;
            }
            out.evaluated += m;
            let started = std::time::Instant::now();
            work = self.round_on_cpu(programs, &work, eps, &mut out)?;
            pace.record(m, started.elapsed().as_secs_f64());
            rounds += 1;
        }
        Ok(out)
    }

    /// One round on the CPU: the boxes of `work` (flat bounds, 2n values each) sorted into
    /// `out`'s lists or split; returns the next round's boxes.
    fn round_on_cpu(
        &self,
        programs: &Programs,
        work: &[f64],
        eps: f64,
        out: &mut Paving,
    ) -> Result<Vec<f64>, Error> {
        let n = self.expr.vars().len();
        let no = self.ranges.len();
        let m = work.len() / (2 * n);
        // The contractor on the batch (structure of arrays: lo and hi array per variable).
        let narrowed = programs
            .contract
            .eval_soa(&soa_of(work.chunks_exact(2 * n), n, m), m)?;
        // Contracted boxes that are not empty, their slabs outside; then the decorated
        // functions on them (outputs: each function's bounds, then each one's decoration
        // code as [c, c]).
        let mut kept: Vec<f64> = Vec::with_capacity(work.len());
        // The index in `work` of each kept box (the box before this round's contraction).
        let mut kept_from: Vec<usize> = Vec::with_capacity(m);
        let mut c = vec![0.0; 2 * n];
        for (i, b) in work.chunks_exact(2 * n).enumerate() {
            for k in 0..2 * n {
                c[k] = narrowed[k * m + i];
            }
            if c.iter().any(|x| x.is_nan()) {
                out.outer.push(to_box(b));
                continue;
            }
            slabs(&to_box(b), &to_box(&c), &mut out.outer);
            kept.extend_from_slice(&c);
            kept_from.push(i);
        }
        let mk = kept.len() / (2 * n);
        if mk == 0 {
            return Ok(Vec::new());
        }
        let values = programs
            .forward
            .eval_soa(&soa_of(kept.chunks_exact(2 * n), n, mk), mk)?;
        let defined = f64::from(Decoration::Def.code());
        // Undecided boxes, and whether every function is defined on all of each.
        let mut undecided: Vec<f64> = Vec::with_capacity(kept.len());
        let mut undecided_from: Vec<usize> = Vec::new();
        let mut everywhere: Vec<bool> = Vec::new();
        for (i, b) in kept.chunks_exact(2 * n).enumerate() {
            let is_defined = (0..no).all(|j| values[2 * (no + j) * mk + i] >= defined);
            let inside = is_defined
                && self.ranges.iter().enumerate().all(|(j, r)| {
                    let (lo, hi) = (values[2 * j * mk + i], values[(2 * j + 1) * mk + i]);
                    !lo.is_nan() && lo >= r.lo && hi <= r.hi
                });
            if inside {
                out.inner.push(to_box(b));
            } else {
                undecided.extend_from_slice(b);
                undecided_from.push(kept_from[i]);
                everywhere.push(is_defined);
            }
        }
        // Where every function is defined on the box, the complement's contractors: a point
        // outside every one's result violates no constraint, so the slabs they cut off are
        // inside, and only the hull of their results stays undecided.
        let (remaining, remaining_from) = inner_slabs(
            &programs.complements,
            &undecided,
            &everywhere,
            n,
            &mut out.inner,
        )?;
        let mut next: Vec<f64> = Vec::with_capacity(2 * remaining.len());
        for (b, &u) in remaining.chunks_exact(2 * n).zip(&remaining_from) {
            // The last widest side (as the GPU's kernel picks it).
            let mut widest = 0;
            for k in 0..n {
                if b[2 * k + 1] - b[2 * k] >= b[2 * widest + 1] - b[2 * widest] {
                    widest = k;
                }
            }
            let (lo, hi) = (b[2 * widest], b[2 * widest + 1]);
            let mid = cut(lo, hi, SPLIT, self.precision);
            if hi - lo <= eps || !(lo < mid && mid < hi) {
                out.boundary.push(to_box(b));
                continue;
            }
            // Narrowed by more than the ratio this round: contracted again, uncut.
            let before = &work[2 * n * undecided_from[u]..][..2 * n];
            if shrank(before, b, self.ratio) {
                next.extend_from_slice(b);
                continue;
            }
            let at = next.len();
            next.extend_from_slice(b);
            next[at + 2 * widest + 1] = mid;
            let at = next.len();
            next.extend_from_slice(b);
            next[at + 2 * widest] = mid;
        }
        Ok(next)
    }
}

/// The number of variables of `expr`, or the error that `root` has another number of sides.
pub(super) fn check_root(expr: &Expression, root: &[Interval]) -> Result<usize, Error> {
    let n = expr.vars().len();
    if root.len() != n {
        return Err(crate::shape::ShapeError::Box {
            expected: n,
            found: root.len(),
            vars: expr.vars().join(", "),
        }
        .into());
    }
    Ok(n)
}

/// Where to cut the side [lo, hi] (a float of `precision`): at `ratio` of it when it is
/// bounded; an unbounded side at 0 when it holds 0 inside, else at twice its finite end (at
/// least 1 from 0; the largest float where that overflows), so that bisection walks out to
/// infinity in a few hundred steps instead of never starting. The caller checks
/// `lo < cut < hi` (a side of adjacent floats cannot be cut).
pub(super) fn cut(lo: f64, hi: f64, ratio: f64, precision: Precision) -> f64 {
    let max = match precision {
        Precision::F64 => f64::MAX,
        Precision::F32 => f32::MAX as f64,
    };
    let m = match (lo.is_finite(), hi.is_finite()) {
        (true, true) => (1.0 - ratio) * lo + ratio * hi,
        _ if lo < 0.0 && hi > 0.0 => 0.0,
        (true, false) => (2.0 * lo).max(1.0).min(max),
        (false, true) => (2.0 * hi).min(-1.0).max(-max),
        (false, false) => 0.0,
    };
    match precision {
        Precision::F64 => m,
        Precision::F32 => m as f32 as f64,
    }
}

/// The boxes of `undecided` (flat bounds, 2n per box) narrowed by the complement's
/// contractors where `everywhere` says every constraint function is defined on the box: each
/// box's parts outside the hull of the contractors' results are pushed to `inner` (a box the
/// contractors empty entirely), and the hulls, with the other boxes unchanged, are returned
/// with the index in `undecided` each comes from.
/// (Where a function may be undefined the contractors, which drop points outside domains,
/// would drop infeasible points: those boxes are not narrowed.)
fn inner_slabs(
    complements: &[&Evaluator],
    undecided: &[f64],
    everywhere: &[bool],
    n: usize,
    inner: &mut Vec<IntervalBox>,
) -> Result<(Vec<f64>, Vec<usize>), Error> {
    let boxes: Vec<&[f64]> = undecided.chunks_exact(2 * n).collect();
    let chosen: Vec<usize> = (0..boxes.len()).filter(|&i| everywhere[i]).collect();
    let m = chosen.len();
    if complements.is_empty() || m == 0 {
        return Ok((undecided.to_vec(), (0..boxes.len()).collect()));
    }
    let soa = soa_of(chosen.iter().map(|&i| boxes[i]), n, m);
    // The hull of the complement contractors' results, per chosen box (NaN: empty so far).
    let mut hull = vec![f64::NAN; 2 * n * m];
    for c in complements {
        let got = c.eval_soa(&soa, m)?;
        for r in 0..m {
            if (0..2 * n).any(|k| got[k * m + r].is_nan()) {
                continue; // this side holds no point of the box
            }
            for v in 0..n {
                let (lo, hi) = (2 * v * m + r, (2 * v + 1) * m + r);
                // (Comparisons, not min and max, so that a tie keeps the first result's
                // zero, as the GPU's kernel does.)
                if hull[lo].is_nan() || got[lo] < hull[lo] {
                    hull[lo] = got[lo];
                }
                if hull[hi].is_nan() || got[hi] > hull[hi] {
                    hull[hi] = got[hi];
                }
            }
        }
    }
    let mut out = Vec::with_capacity(undecided.len());
    let mut from = Vec::with_capacity(boxes.len());
    let mut row = 0;
    for (i, b) in boxes.iter().enumerate() {
        if !everywhere[i] {
            out.extend_from_slice(b);
            from.push(i);
            continue;
        }
        let r = row;
        row += 1;
        let h: Vec<f64> = (0..2 * n).map(|k| hull[k * m + r]).collect();
        if h[0].is_nan() {
            inner.push(to_box(b)); // no point of the box violates a constraint
            continue;
        }
        slabs(&to_box(b), &to_box(&h), inner);
        out.extend_from_slice(&h);
        from.push(i);
    }
    Ok((out, from))
}

/// Whether the contractors narrowed box `b` (flat bounds) to `h` by more than `ratio` of
/// some side's width: `width(h_k) < (1 - ratio) width(b_k)` for some k (a side that was
/// unbounded and is now bounded counts). Never with `ratio <= 0`. Widths and the product
/// rounded to nearest, as the GPU's kernel computes them (`pv_shrank`), so that both backends
/// requeue the same boxes.
pub(super) fn shrank(b: &[f64], h: &[f64], ratio: f64) -> bool {
    ratio > 0.0
        && b.chunks_exact(2)
            .zip(h.chunks_exact(2))
            .any(|(b, h)| h[1] - h[0] < (1.0 - ratio) * (b[1] - b[0]))
}

/// A box given as flat bounds (lo, hi per variable) as an [`IntervalBox`].
fn to_box(b: &[f64]) -> IntervalBox {
    b.chunks_exact(2)
        .map(|p| Interval { lo: p[0], hi: p[1] })
        .collect()
}

/// `m` boxes of flat bounds (2n values each) as a batch's structure of arrays: the lo and hi
/// array of each variable.
pub(super) fn soa_of<'a>(boxes: impl Iterator<Item = &'a [f64]>, n: usize, m: usize) -> Vec<f64> {
    let mut soa = vec![0.0; 2 * n * m];
    for (i, b) in boxes.enumerate() {
        for (k, &x) in b.iter().enumerate() {
            soa[k * m + i] = x;
        }
    }
    soa
}

/// The parts of `b` outside its sub-box `c`, as disjoint slabs (up to shared faces): per
/// variable k, the parts of the remaining slab below and above `c` in k.
fn slabs(b: &[Interval], c: &[Interval], out: &mut Vec<IntervalBox>) {
    let mut rest = b.to_vec();
    for k in 0..b.len() {
        if c[k].lo > rest[k].lo {
            let mut s = rest.clone();
            s[k].hi = c[k].lo;
            out.push(s);
        }
        if c[k].hi < rest[k].hi {
            let mut s = rest.clone();
            s[k].lo = c[k].hi;
            out.push(s);
        }
        rest[k] = c[k];
    }
}

#[cfg(test)]
mod tests {
    use super::shrank;

    /// The fixpoint test on the interval classes of a side: an unbounded side that becomes
    /// bounded has shrunk, one that stays unbounded (entire or a half-line) has not; a point
    /// (zero width, signed zeros) never shrinks; subnormal and the largest widths compare as
    /// any others; ratio 0, a negative one and NaN turn it off; one side suffices.
    #[test]
    fn shrank_on_the_interval_classes() {
        let (inf, max, tiny) = (f64::INFINITY, f64::MAX, f64::from_bits(1));
        let side = |b: [f64; 2], h: [f64; 2], r: f64| shrank(&b, &h, r);
        assert!(side([-inf, inf], [-3.0, 2.0], 0.1));
        assert!(side([-inf, 5.0], [-7.0, 5.0], 0.1));
        assert!(!side([-inf, inf], [-inf, 2.0], 0.1));
        assert!(!side([2.0, inf], [3.0, inf], 0.1));
        assert!(!side([-max, max], [-max, max], 0.1)); // width inf, unchanged
        assert!(side([-max, max], [0.0, max], 0.1));
        assert!(!side([0.0, 0.0], [0.0, 0.0], 0.1));
        assert!(!side([-0.0, 0.0], [0.0, 0.0], 0.1));
        assert!(side([0.0, 4.0 * tiny], [0.0, tiny], 0.1));
        assert!(!side([0.0, 4.0 * tiny], [tiny, 4.0 * tiny], 0.5)); // 3/4 kept, not < 1/2
        assert!(side([0.0, 1.0], [0.0, 0.89], 0.1));
        assert!(!side([0.0, 1.0], [0.0, 0.9], 0.1)); // exactly 1 - ratio: not below
        for r in [0.0, -0.5, f64::NAN] {
            assert!(!side([-inf, inf], [0.0, 1.0], r), "ratio {r}");
        }
        assert!(shrank(&[0.0, 1.0, 0.0, 1.0], &[0.0, 1.0, 0.0, 0.5], 0.1));
        assert!(!shrank(&[0.0, 1.0, 0.0, 1.0], &[0.0, 0.95, 0.0, 0.95], 0.1));
    }
}
