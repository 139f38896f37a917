//! Root isolation of a one-variable expression f(x) on [lo, hi] by bisection with exclusion.
//!
//! ```sh
//! cargo run --release --example roots -- 'cos(x) - x' 0 1 [--tol 1e-12] [--backend cpu|gpu|auto]
//! cargo run --release --example roots            # a small demo list
//! ```
//!
//! The search is the library's *exclude* rule (`ivjit::search::exclude`, on the GPU with the
//! work list on the device): each round evaluates f on every remaining subinterval, drops those
//! whose image excludes 0, and bisects the rest until each is narrower than the tolerance
//! (relative or absolute: width <= tol * max(1, |x|)). Adjacent survivors are merged into
//! clusters. Because every dropped interval provably holds no root, every root of f in [lo, hi]
//! (where f is defined) lies in some cluster. A cluster is a *candidate*: it may hold no root,
//! one, or several.
//!
//! A cluster is "proven" when the enclosures of f at its two end points have certain opposite
//! signs: by the intermediate value theorem it then holds a root, **provided f is defined and
//! continuous on the cluster** (true for the demo functions; not for e.g. `1/x` or `floor(x)`).
//! A double root such as (x-2)^2 has no sign change and is honestly reported "root not proven".
use ivjit::{Backend, BackendChoice, Evaluator, Expression, Interval, Precision};
use std::time::Instant;

/// Stop when the search would evaluate more boxes than this.
const MAX_BOXES: u64 = 1 << 24;

/// One isolating interval candidate: the union of adjacent surviving subintervals.
#[derive(Clone, Debug)]
pub struct Cluster {
    pub x: Interval,
    /// Whether f(x.lo) and f(x.hi) have certain opposite signs (a root exists if f is continuous).
    pub proven: bool,
}

/// What `isolate` found and what it cost.
#[allow(dead_code)]
#[derive(Debug)]
pub struct Report {
    pub clusters: Vec<Cluster>,
    /// False if the round limit or MAX_BOXES stopped the bisection before every survivor met `tol`
    /// (the clusters still enclose every root, they are just wider).
    pub complete: bool,
    pub rounds: usize,
    pub boxes: usize,
    pub seconds: f64,
    pub backend: Backend,
    /// Why `Auto` fell back to the CPU, if it did.
    pub fallback: Option<String>,
}

/// Isolates the roots of `src` (one variable, named x) on [lo, hi].
pub fn isolate(
    src: &str,
    lo: f64,
    hi: f64,
    tol: f64,
    backend: BackendChoice,
) -> Result<Report, Box<dyn std::error::Error>> {
    let expr = Expression::parse(src)?;
    if expr.vars() != ["x"] || expr.n_outputs() != 1 {
        return Err("the expression needs one output and exactly one variable, named x".into());
    }
    if !(lo.is_finite() && hi.is_finite() && lo <= hi && tol >= 0.0) {
        return Err("need finite LO <= HI and a tolerance >= 0".into());
    }
    let eval = Evaluator::new(&expr, Precision::F64, backend)?;
    let start = Instant::now();
    // The library's exclude rule: on the GPU the work list stays on the device.
    let found = ivjit::search::exclude::exclude(&eval, &[(lo, hi)], 0.0, tol, MAX_BOXES)?;
    let complete = found.ended == ivjit::search::exclude::Ended::Done;
    let (rounds, mut boxes) = (found.rounds, found.evaluated as usize);
    // Unfinished boxes are kept: they may still hold roots.
    let mut done: Vec<(f64, f64)> = found
        .boxes
        .iter()
        .chain(found.unfinished.iter())
        .map(|b| b[0])
        .collect();

    // Merge adjacent survivors (bisection makes neighbours share an exact end point).
    done.sort_by(|p, q| p.0.total_cmp(&q.0));
    let mut merged: Vec<(f64, f64)> = Vec::new();
    for (a, b) in done {
        match merged.last_mut() {
            Some(last) if last.1 >= a => last.1 = last.1.max(b),
            _ => merged.push((a, b)),
        }
    }

    // Sign test: f on the point intervals [a, a] and [b, b] of every cluster, one batch.
    let k = merged.len();
    let ends: Vec<f64> = merged.iter().flat_map(|&(a, b)| [a, b]).collect();
    let soa: Vec<f64> = ends.iter().chain(ends.iter()).copied().collect();
    let f = eval.eval_soa(&soa, 2 * k)?; // f[j] = lo of f(end j), f[2k + j] = its hi
    boxes += 2 * k;
    let positive = |j: usize| f[j] > 0.0; // certain signs; an empty (NaN) enclosure is neither
    let negative = |j: usize| f[2 * k + j] < 0.0;
    let clusters = merged
        .iter()
        .enumerate()
        .map(|(c, &(a, b))| Cluster {
            x: Interval::new(a, b).expect("a <= b"),
            proven: (negative(2 * c) && positive(2 * c + 1))
                || (positive(2 * c) && negative(2 * c + 1)),
        })
        .collect();
    Ok(Report {
        clusters,
        complete,
        rounds,
        boxes,
        seconds: start.elapsed().as_secs_f64(),
        backend: eval.backend(),
        fallback: eval.fallback_reason().map(str::to_string),
    })
}

#[allow(dead_code)]
fn print(src: &str, lo: f64, hi: f64, tol: f64, r: &Report) {
    println!(
        "f(x) = {src} on [{lo}, {hi}], tol {tol:e}, backend {}",
        r.backend.name()
    );
    for c in &r.clusters {
        let verdict = if c.proven {
            "root proven (sign change; assumes f continuous)"
        } else {
            "root not proven"
        };
        println!("  {}  width {:.1e}  {verdict}", c.x, c.x.hi - c.x.lo);
    }
    let status = if r.complete {
        ""
    } else {
        " (stopped early: clusters wider than tol)"
    };
    println!(
        "  {} clusters; {} boxes in {} rounds, {:.2} ms, {:.3e} boxes/s{status}",
        r.clusters.len(),
        r.boxes,
        r.rounds,
        r.seconds * 1e3,
        r.boxes as f64 / r.seconds.max(1e-9),
    );
}

#[allow(dead_code)]
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (mut pos, mut tol, mut backend) = (Vec::new(), 1e-12, BackendChoice::Auto);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--tol" => tol = it.next().ok_or("--tol needs a value")?.parse()?,
            "--backend" => {
                backend = match it.next().map(String::as_str) {
                    Some("cpu") => BackendChoice::Cpu,
                    Some("gpu") => BackendChoice::Gpu,
                    Some("auto") => BackendChoice::Auto,
                    _ => return Err("--backend takes cpu, gpu or auto".into()),
                }
            }
            _ => pos.push(a.clone()),
        }
    }
    let jobs: Vec<(String, f64, f64)> = match pos.as_slice() {
        [] => [
            ("(x-1)*(x-2)*(x-3)", 0.0, 4.0),
            ("cos(x) - x", 0.0, 1.0),
            ("(x-2)^2", 0.0, 4.0),
            ("x^2 + 1", -5.0, 5.0),
            ("sin(x)", -10.0, 10.0),
        ]
        .iter()
        .map(|&(s, a, b)| (s.to_string(), a, b))
        .collect(),
        [e, a, b] => vec![(e.clone(), a.parse()?, b.parse()?)],
        _ => return Err("usage: roots 'EXPR' LO HI [--tol T] [--backend cpu|gpu|auto]".into()),
    };
    println!("Proofs by sign change hold only where f is continuous on the cluster.");
    for (i, (src, lo, hi)) in jobs.into_iter().enumerate() {
        let report = isolate(&src, lo, hi, tol, backend)?;
        if let (0, Some(why)) = (i, &report.fallback) {
            eprintln!("note: using the CPU evaluator ({why})");
        }
        print(&src, lo, hi, tol, &report);
    }
    Ok(())
}
