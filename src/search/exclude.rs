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
//! The CPU and the GPU find the same boxes, bit for bit when f calls no point function; both
//! return them sorted (lexicographically by their sides), because the GPU's work list has no
//! fixed order.

use rayon::prelude::*;

use super::minimize::{widest, MAX_ROUNDS};
use super::SearchError;
use crate::{Backend, Error, Evaluator};

/// Why a search ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// Every live box is final.
    Done,
    /// The next round would have evaluated more boxes than the budget allows.
    Budget,
    /// The next round's boxes would not fit the device memory set aside for them.
    Memory,
    /// [`MAX_ROUNDS`] rounds.
    Rounds,
}

/// The boxes that may hold a point of the level set.
#[derive(Clone, Debug, PartialEq)]
pub struct Survivors {
    /// Final boxes (each side `(lo, hi)`, in the evaluator's variable order), sorted.
    pub boxes: Vec<Vec<(f64, f64)>>,
    /// Boxes not yet final when the search stopped early (empty when it ended `Done`), sorted.
    pub unfinished: Vec<Vec<(f64, f64)>>,
    /// Why the search ended.
    pub ended: Ended,
    /// Rounds taken.
    pub rounds: usize,
    /// Boxes evaluated.
    pub evaluated: u64,
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
    let mut s = match eval.backend() {
        Backend::Cpu => cpu(eval, root, level, tol, max_boxes)?,
        Backend::Gpu => super::gpu::exclude(eval, root, level, tol, max_boxes)?,
    };
    sort(&mut s.boxes);
    sort(&mut s.unfinished);
    Ok(s)
}

fn sort(boxes: &mut [Vec<(f64, f64)>]) {
    boxes.par_sort_unstable_by(|a, b| {
        a.iter()
            .flat_map(|s| [s.0, s.1])
            .zip(b.iter().flat_map(|s| [s.0, s.1]))
            .map(|(x, y)| x.total_cmp(&y))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
    });
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

fn cpu(
    eval: &Evaluator,
    root: &[(f64, f64)],
    level: f64,
    tol: f64,
    max_boxes: u64,
) -> Result<Survivors, Error> {
    let nv = root.len();
    let mut work: Vec<Vec<(f64, f64)>> = vec![root.to_vec()];
    let mut done = Vec::new();
    let (mut rounds, mut evaluated) = (0usize, 0u64);
    let ended = loop {
        if work.is_empty() {
            break Ended::Done;
        }
        if rounds >= MAX_ROUNDS {
            break Ended::Rounds;
        }
        if evaluated + work.len() as u64 > max_boxes {
            break Ended::Budget;
        }
        let n = work.len();
        let mut soa = vec![0.0; 2 * nv * n];
        for k in 0..nv {
            let (lo, hi) = soa[2 * k * n..2 * (k + 1) * n].split_at_mut(n);
            lo.par_iter_mut()
                .zip(hi.par_iter_mut())
                .zip(&work)
                .for_each(|((l, h), b)| (*l, *h) = b[k]);
        }
        let out = eval.eval_soa(&soa, n)?;
        rounds += 1;
        evaluated += n as u64;
        let fates: Vec<Option<Fate>> = work
            .par_iter()
            .enumerate()
            .map(|(i, b)| fate(b, out[i], out[n + i], level, tol))
            .collect();
        let mut next = Vec::with_capacity(2 * n);
        for (b, f) in work.into_iter().zip(fates) {
            match f {
                None => {}
                Some(Fate::Final) => done.push(b),
                Some(Fate::Split(k, m)) => {
                    let mut left = b.clone();
                    let mut right = b;
                    left[k].1 = m;
                    right[k].0 = m;
                    next.push(left);
                    next.push(right);
                }
            }
        }
        work = next;
    };
    Ok(Survivors {
        boxes: done,
        unfinished: work,
        ended,
        rounds,
        evaluated,
    })
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
        for b in &s.boxes {
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
