//! The differential fuzzing over the interval classes, shared by the CPU's test
//! (`tests/cpu/class_fuzz.rs`) and the GPU's (`tests/gpu/gpu_class_fuzz.rs`): random
//! expressions over x and y, boxes drawn from the classes, each engine's results against a
//! rigorous evaluation of the expression at the boxes' witnesses (`compose.rs`).
#![allow(dead_code)]

use super::classes::{self as cl, Class};
use super::compose::{self, Tree, BINARY, UNARY};
use super::elem_oracle::{bf, Enc};
use super::oracle::Fmt;
use super::rng::splitmix64;
use astro_float::BigFloat;
use ivjit::{BackendChoice, Evaluator, Expression, Precision};
use rayon::prelude::*;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        (splitmix64(&mut self.0) % n as u64) as usize
    }
}

const CONSTS: &[f64] = &[0.5, 2.0, -1.0, 3.0, 0.0, 1e-300, 1e300, -2.5];
const POWNS: &[i64] = &[-3, -2, 2, 3, 5];

fn tree(r: &mut Rng, depth: u32) -> Tree {
    if depth == 0 || r.below(4) == 0 {
        return match r.below(5) {
            0 | 1 => Tree::X,
            2 | 3 => Tree::Y,
            _ => Tree::Const(CONSTS[r.below(CONSTS.len())]),
        };
    }
    match r.below(5) {
        0 | 1 => Tree::Un(UNARY[r.below(UNARY.len())], Box::new(tree(r, depth - 1))),
        2 => Tree::Pown(POWNS[r.below(POWNS.len())], Box::new(tree(r, depth - 1))),
        _ => Tree::Bin(
            BINARY[r.below(BINARY.len())],
            Box::new(tree(r, depth - 1)),
            Box::new(tree(r, depth - 1)),
        ),
    }
}

pub fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// At most `k` witnesses of a box: its ends (or the reals beyond an infinite one), the
/// critical values inside, and a middle float.
fn witnesses(c: &Class, k: usize) -> Vec<BigFloat> {
    let mut v = cl::points(c.lo, c.hi, cl::Grid::HalfPi);
    v.truncate(k);
    v
}

#[derive(Default)]
pub struct Counts {
    cases: AtomicUsize,
    checks: AtomicUsize,
    undecided: AtomicUsize,
    skipped_points: AtomicUsize,
}

/// The engines a fuzzing run checks.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Engines {
    /// The CPU evaluator, the reference interpreter, the mean-value and monotone forms.
    Cpu,
    /// The GPU's kernels of the expression and of its mean-value form.
    Gpu,
}

/// Runs one expression on `n_boxes` boxes per precision; returns the failures.
fn run_expression(
    t: &Tree,
    seed: u64,
    n_boxes: usize,
    counts: &Counts,
    which: Engines,
) -> Vec<String> {
    let src = t.text();
    let expr = Expression::parse(&src).unwrap_or_else(|e| panic!("{src}: {e}"));
    let vars = expr.vars().to_vec();
    let mut failures = Vec::new();
    let mut memo: HashMap<(Vec<u64>, Vec<u64>), Option<Enc>> = HashMap::new();
    let mut r = Rng(seed);
    for fmt in [Fmt::F64, Fmt::F32] {
        let p = match fmt {
            Fmt::F64 => Precision::F64,
            Fmt::F32 => Precision::F32,
        };
        let classes = cl::classes(fmt, 8);
        let mut engines: Vec<(&str, Evaluator)> = vec![(
            "cpu evaluator",
            Evaluator::new(&expr, p, BackendChoice::Cpu).unwrap(),
        )];
        for (name, form) in [
            ("mean-value form", expr.mean_value_form()),
            ("monotone form", expr.monotone_form()),
        ] {
            engines.push((
                name,
                Evaluator::new(&form.unwrap(), p, BackendChoice::Cpu).unwrap(),
            ));
        }
        let program = expr.scalar(p).unwrap();
        // The boxes: a class per variable.
        let boxes: Vec<(usize, usize)> = (0..n_boxes)
            .map(|_| (r.below(classes.len()), r.below(classes.len())))
            .collect();
        let n = boxes.len();
        let mut inputs = vec![0.0; 2 * vars.len() * n];
        for (i, (a, b)) in boxes.iter().enumerate() {
            for (k, v) in vars.iter().enumerate() {
                let c = &classes[if v == "x" { *a } else { *b }];
                inputs[2 * k * n + i] = c.lo;
                inputs[(2 * k + 1) * n + i] = c.hi;
            }
        }
        let mut results: Vec<(&str, Vec<(f64, f64)>)> = engines
            .iter()
            .map(|(name, ev)| (*name, cl::unpack(&ev.eval_soa(&inputs, n).unwrap(), n)))
            .collect();
        let interp: Vec<(f64, f64)> = boxes
            .iter()
            .map(|(a, b)| {
                let args: Vec<(f64, f64)> = vars
                    .iter()
                    .map(|v| {
                        let c = &classes[if v == "x" { *a } else { *b }];
                        (c.lo, c.hi)
                    })
                    .collect();
                ivjit::internals::scalar::interp::eval(&program, &args).unwrap()[0]
            })
            .collect();
        if which == Engines::Cpu {
            results.push(("reference interpreter", interp));
        }
        for (i, (a, b)) in boxes.iter().enumerate() {
            counts.cases.fetch_add(1, Relaxed);
            let (cx, cy) = (&classes[*a], &classes[*b]);
            let empty =
                (t.uses(&Tree::X) && cx.lo.is_nan()) || (t.uses(&Tree::Y) && cy.lo.is_nan());
            // The witnesses' values (x alone if y is unused, and the reverse).
            let wx = if t.uses(&Tree::X) {
                witnesses(cx, 8)
            } else {
                vec![bf(0.0)]
            };
            let wy = if t.uses(&Tree::Y) {
                witnesses(cy, 8)
            } else {
                vec![bf(0.0)]
            };
            let mut values: Vec<(String, Enc)> = Vec::new();
            if !empty {
                for x in &wx {
                    for y in &wy {
                        let key = (cl::key(x), cl::key(y));
                        let v = memo
                            .entry(key)
                            .or_insert_with(|| compose::eval(t, x, y))
                            .clone();
                        match v {
                            Some(e) => values
                                .push((format!("({}, {})", cl::hx(ro_f(x)), cl::hx(ro_f(y))), e)),
                            None => {
                                counts.skipped_points.fetch_add(1, Relaxed);
                            }
                        }
                    }
                }
            }
            for (engine, res) in &results {
                let (lo, hi) = res[i];
                let what = || {
                    format!(
                        "{src} ({fmt:?}, {engine}) on x = {}, y = {}: got [{}, {}]",
                        cx.label,
                        cy.label,
                        cl::hx(lo),
                        cl::hx(hi)
                    )
                };
                let is_empty = lo.is_nan() && hi.is_nan();
                if lo.is_nan() != hi.is_nan()
                    || (!is_empty && (lo > hi || lo == f64::INFINITY || hi == f64::NEG_INFINITY))
                {
                    failures.push(format!("{}: not an interval", what()));
                    continue;
                }
                if empty {
                    if !is_empty {
                        failures.push(format!(
                            "{}: an empty argument must give the empty set",
                            what()
                        ));
                    }
                    continue;
                }
                for (at, e) in &values {
                    counts.checks.fetch_add(1, Relaxed);
                    match cl::decide(lo, hi, e) {
                        Some(true) => {}
                        Some(false) => {
                            failures.push(format!("{}: misses {} at {at}", what(), e.describe()));
                            break;
                        }
                        None => {
                            counts.undecided.fetch_add(1, Relaxed);
                        }
                    }
                }
            }
        }
    }
    failures
}

/// A witness as a float for the message (the reals beyond the floats show as infinities).
fn ro_f(x: &BigFloat) -> f64 {
    crate::common::real_oracle::as_f64(x).unwrap_or_else(|| {
        if x.is_negative() {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        }
    })
}

/// Runs `cases` cases (expression x box x precision) from `seed` on `which` engines; prints
/// the counts and returns the failures.
pub fn run(cases: usize, seed: u64, which: Engines) -> Vec<String> {
    let per_expr = 50; // boxes per expression and precision
    let n_exprs = cases.div_ceil(2 * per_expr).max(1);
    let counts = Counts::default();
    let t0 = std::time::Instant::now();
    let job = |k: usize| {
        let mut r = Rng(seed ^ (k as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let t = tree(&mut r, 4);
        run_expression(&t, splitmix64(&mut r.0), per_expr, &counts, which)
    };
    let failures: Vec<String> = match which {
        Engines::Cpu => (0..n_exprs).into_par_iter().flat_map_iter(job).collect(),
        // One expression at a time: each compiles kernels.
        Engines::Gpu => (0..n_exprs).flat_map(job).collect(),
    };
    println!(
        "class fuzzing: {n_exprs} expressions, {} cases (expression x box x precision, each on \
         every engine), {} containment checks, {} undecided (the oracle's enclosure meets a \
         bound), {} witness points left out (near a pole, cut or edge), {} failures, {:.1} s \
         (seed {seed})",
        counts.cases.load(Relaxed),
        counts.checks.load(Relaxed),
        counts.undecided.load(Relaxed),
        counts.skipped_points.load(Relaxed),
        failures.len(),
        t0.elapsed().as_secs_f64()
    );
    failures
}
