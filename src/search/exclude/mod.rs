//! The *exclude* rule: every point of a box where f may equal a level c, to a width tolerance.
//!
//! Each round evaluates f on every live box. A box whose enclosure excludes c (or is empty: f
//! is undefined on it) provably holds no point of the level set and is dropped. A box whose
//! sides are all small (`hi - lo <= tol * max(1, |lo|, |hi|)`, relative or absolute) or whose
//! widest side cannot be halved any more is final; the others are bisected along their widest
//! side (the last such). Every point of the root box where f = c (and f is defined) lies in a
//! final box, or in an unfinished one when the budget stopped the search. Root isolation is the
//! one-variable case with c = 0 (`examples/roots.rs`).
//!
//! The CPU and the GPU find the same boxes, bit for bit when f calls no point function, in an
//! unspecified order (the GPU's differs from run to run): [`Boxes::sort`] orders them. Boxes are
//! stored flat (`n_vars` sides per box), since a search may keep millions.
//!
//! An evaluator made with `BackendChoice::Auto` that got a GPU runs the first rounds on the CPU
//! and hands the work list to the GPU once the rounds are large enough to pay for its fixed
//! cost per round (`search::handover`); [`Survivors::gpu_rounds`] says how many ran there.

use rayon::prelude::*;

use super::budget::Budget;
use super::handover::{Handover, Pace};
use super::minimize::widest;
use super::SearchError;

pub(crate) mod gpu;
use crate::{Backend, Error, Evaluator};

pub use super::budget::Ended;

/// Boxes of `n_vars` sides each, stored one after the other.
#[derive(Clone, Debug, PartialEq)]
pub struct Boxes {
    /// Sides per box.
    pub n_vars: usize,
    /// Box i is `sides[i * n_vars..(i + 1) * n_vars]`, each side `(lo, hi)` in the evaluator's
    /// variable order.
    pub sides: Vec<(f64, f64)>,
}

impl Boxes {
    /// No boxes of `n_vars` sides.
    pub fn new(n_vars: usize) -> Boxes {
        Boxes {
            n_vars,
            sides: Vec::new(),
        }
    }

    /// The number of boxes.
    pub fn len(&self) -> usize {
        self.sides.len() / self.n_vars.max(1)
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.sides.is_empty()
    }

    /// Every box, in order.
    pub fn iter(&self) -> impl Iterator<Item = &[(f64, f64)]> {
        self.sides.chunks_exact(self.n_vars.max(1))
    }

    /// Orders the boxes lexicographically by their sides (lo then hi of side 0, then side 1...).
    pub fn sort(&mut self) {
        let nv = self.n_vars.max(1);
        let mut order: Vec<usize> = (0..self.len()).collect();
        let key = |i: usize| {
            self.sides[i * nv..(i + 1) * nv]
                .iter()
                .flat_map(|s| [s.0, s.1])
        };
        order.par_sort_unstable_by(|&a, &b| {
            key(a)
                .zip(key(b))
                .map(|(x, y)| x.total_cmp(&y))
                .find(|o| o.is_ne())
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        self.sides = order
            .iter()
            .flat_map(|&i| self.sides[i * nv..(i + 1) * nv].iter().copied())
            .collect();
    }
}

/// The boxes that may hold a point of the level set.
#[derive(Clone, Debug, PartialEq)]
pub struct Survivors {
    /// Final boxes.
    pub boxes: Boxes,
    /// Boxes not yet final when the search stopped early (none when it ended `Done`).
    pub unfinished: Boxes,
    /// Why the search ended.
    pub ended: Ended,
    /// Rounds taken.
    pub rounds: usize,
    /// Boxes evaluated.
    pub evaluated: u64,
    /// How many of the `rounds` (the last ones) ran on the GPU.
    pub gpu_rounds: usize,
}

/// Every box of `root` where f may equal `level`, to `tol`, evaluating at most `max_boxes`.
pub fn exclude(
    eval: &Evaluator,
    root: &[(f64, f64)],
    level: f64,
    tol: f64,
    max_boxes: u64,
) -> Result<Survivors, Error> {
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
    if root
        .iter()
        .any(|&(lo, hi)| !(lo.is_finite() && hi.is_finite() && lo <= hi))
    {
        return bad(format!("the box {root:?} needs finite sides with lo <= hi"));
    }
    if tol.is_nan() || tol < 0.0 || !level.is_finite() {
        return bad(format!(
            "tol {tol}, level {level}: need tol >= 0 and a finite level"
        ));
    }
    match Handover::of(eval) {
        Some(handover) => search(eval, root, level, tol, max_boxes, handover),
        None => gpu::exclude(eval, Frontier::root(root, max_boxes), level, tol),
    }
}

/// [`exclude`] on a GPU evaluator, its CPU running the rounds before round `round` (0: none)
/// and its GPU the rest: how the tests hold the handover to the CPU's results.
#[doc(hidden)]
pub fn exclude_handing_over(
    eval: &Evaluator,
    root: &[(f64, f64)],
    level: f64,
    tol: f64,
    max_boxes: u64,
    round: usize,
) -> Result<Survivors, Error> {
    if eval.backend() != Backend::Gpu {
        return Err(SearchError::Options("the handover needs a GPU evaluator".into()).into());
    }
    search(eval, root, level, tol, max_boxes, Handover::AtRound(round))
}

/// The search from the root box: its first rounds on the CPU, the rest (if `handover` says so)
/// on `eval`'s GPU.
fn search(
    eval: &Evaluator,
    root: &[(f64, f64)],
    level: f64,
    tol: f64,
    max_boxes: u64,
    handover: Handover,
) -> Result<Survivors, Error> {
    let twin = super::handover::twin(eval);
    let on_cpu = twin.as_ref().unwrap_or(eval);
    let start = Frontier::root(root, max_boxes);
    match super::on_pool(|| cpu(on_cpu, start, level, tol, handover))? {
        Rounds::Found(s) => Ok(s),
        Rounds::Handed(frontier) => gpu::exclude(eval, frontier, level, tol),
    }
}

/// An exclusion between two rounds: what one backend hands the other.
pub(crate) struct Frontier {
    /// The next round's boxes.
    pub(crate) work: Boxes,
    /// The final boxes so far.
    pub(crate) done: Boxes,
    /// What the rounds so far spent.
    pub(crate) budget: Budget,
}

impl Frontier {
    fn root(root: &[(f64, f64)], max_boxes: u64) -> Frontier {
        Frontier {
            work: Boxes {
                n_vars: root.len(),
                sides: root.to_vec(),
            },
            done: Boxes::new(root.len()),
            budget: Budget::new(max_boxes),
        }
    }
}

/// How the CPU's rounds ended: the search is over, or the GPU goes on from here.
enum Rounds {
    Found(Survivors),
    Handed(Frontier),
}

/// Whether a side is at the tolerance. (The GPU kernel computes the same.)
pub(crate) fn small(lo: f64, hi: f64, tol: f64) -> bool {
    hi - lo <= tol * lo.abs().max(hi.abs()).max(1.0)
}

/// The fate of one box: `None` when f excludes the level; else final or split along `k` at
/// `m` (`0.5 lo + 0.5 hi`, strictly inside).
pub(crate) fn fate(b: &[(f64, f64)], flo: f64, fhi: f64, level: f64, tol: f64) -> Option<Fate> {
    if !(flo <= level && level <= fhi) {
        return None;
    }
    if b.iter().all(|&(lo, hi)| small(lo, hi, tol)) {
        return Some(Fate::Final);
    }
    let k = widest(b);
    let (lo, hi) = b[k];
    let m = 0.5 * lo + 0.5 * hi;
    if lo < m && m < hi {
        Some(Fate::Split(k, m))
    } else {
        Some(Fate::Final)
    }
}

/// See [`fate`].
pub(crate) enum Fate {
    Final,
    Split(usize, f64),
}

/// Boxes whose fates are decided at a time (the CPU search).
const FATES: usize = 1 << 16;

/// The rounds on the CPU from `from` until the search ends or `handover` says the GPU goes on.
fn cpu(
    eval: &Evaluator,
    from: Frontier,
    level: f64,
    tol: f64,
    handover: Handover,
) -> Result<Rounds, Error> {
    let nv = from.work.n_vars;
    // Box i's side k is work[i * nv + k].
    let mut work: Vec<(f64, f64)> = from.work.sides;
    let mut done = from.done;
    let mut budget = from.budget;
    let mut pace = Pace::new();
    let ended = loop {
        super::interrupt::check()?;
        let began = std::time::Instant::now();
        let n = work.len() / nv;
        if n == 0 {
            break Ended::Done;
        }
        if let Some(ended) = budget.refuses(n as u64) {
            break ended;
        }
        if handover.now(&mut pace, budget.rounds(), n) {
            return Ok(Rounds::Handed(Frontier {
                work: Boxes {
                    n_vars: nv,
                    sides: work,
                },
                done,
                budget,
            }));
        }
        // The round's batch, and room for its halves: a budget larger than the memory ends
        // the search here (the boxes left unfinished), not in an allocation failure.
        let Some(mut soa) = zeros(2 * nv * n) else {
            break Ended::Memory;
        };
        let mut next: Vec<(f64, f64)> = Vec::new();
        if next.try_reserve_exact(2 * work.len()).is_err() {
            break Ended::Memory;
        }
        for k in 0..nv {
            let (lo, hi) = soa[2 * k * n..2 * (k + 1) * n].split_at_mut(n);
            lo.par_iter_mut()
                .zip(hi.par_iter_mut())
                .enumerate()
                .with_min_len(super::PARALLEL_FROM)
                .for_each(|(i, (l, h))| (*l, *h) = work[i * nv + k]);
        }
        let out = eval.eval_soa(&soa, n)?;
        drop(soa);
        budget.spend(n as u64);
        // The fates in parts, so that they take little memory beside the lists.
        for part in (0..n).step_by(FATES) {
            let end = n.min(part + FATES);
            let fates: Vec<Option<Fate>> = (part..end)
                .into_par_iter()
                .with_min_len(super::PARALLEL_FROM)
                .map(|i| fate(&work[i * nv..(i + 1) * nv], out[i], out[n + i], level, tol))
                .collect();
            for (b, f) in work[part * nv..end * nv].chunks_exact(nv).zip(fates) {
                match f {
                    None => {}
                    Some(Fate::Final) => done.sides.extend_from_slice(b),
                    Some(Fate::Split(k, m)) => {
                        let start = next.len();
                        next.extend_from_slice(b);
                        next.extend_from_slice(b);
                        next[start + k].1 = m;
                        next[start + nv + k].0 = m;
                    }
                }
            }
        }
        drop(out);
        work = next;
        pace.record(n, began.elapsed().as_secs_f64());
    };
    Ok(Rounds::Found(Survivors {
        boxes: done,
        unfinished: Boxes {
            n_vars: nv,
            sides: if ended == Ended::Done {
                Vec::new()
            } else {
                work
            },
        },
        ended,
        rounds: budget.rounds(),
        evaluated: budget.boxes(),
        gpu_rounds: 0,
    }))
}

/// `len` zeros, or `None` when the memory cannot be had (or the size overflows).
fn zeros(len: usize) -> Option<Vec<f64>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).ok()?;
    v.resize(len, 0.0);
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BackendChoice, Expression, Precision};

    #[test]
    fn the_unit_circle_is_covered_and_nothing_else() {
        let e = Expression::parse("x^2 + y^2").unwrap();
        let eval = Evaluator::new(&e, Precision::F64, BackendChoice::Cpu).unwrap();
        let s = exclude(&eval, &[(-2.0, 2.0), (-1.5, 1.5)], 1.0, 1e-3, 10_000_000).unwrap();
        assert_eq!(s.ended, Ended::Done);
        assert!(s.unfinished.is_empty() && s.boxes.len() > 1000);
        // Points of the circle lie in some box; every box touches the annulus 1 +- 0.01.
        for t in 0..360 {
            let (x, y) = ((t as f64).to_radians().cos(), (t as f64).to_radians().sin());
            assert!(s
                .boxes
                .iter()
                .any(|b| b[0].0 <= x && x <= b[0].1 && b[1].0 <= y && y <= b[1].1));
        }
        for b in s.boxes.iter() {
            let near = |(lo, hi): (f64, f64)| {
                if lo > 0.0 {
                    lo
                } else if hi < 0.0 {
                    -hi
                } else {
                    0.0
                }
            };
            let far = |(lo, hi): (f64, f64)| lo.abs().max(hi.abs());
            let (r0, r1) = (near(b[0]).hypot(near(b[1])), far(b[0]).hypot(far(b[1])));
            assert!(r0 <= 1.0 + 1e-2 && r1 >= 1.0 - 1e-2, "{b:?}");
        }
        // A budget stop keeps the unfinished boxes.
        let b = exclude(&eval, &[(-2.0, 2.0), (-1.5, 1.5)], 1.0, 1e-9, 5000).unwrap();
        assert_eq!(b.ended, Ended::Budget);
        assert!(!b.unfinished.is_empty() && b.evaluated <= 5000);
    }
}
