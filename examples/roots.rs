//! Root isolation: every zero of f(x) on [lo, hi], or of a square system f(x, y, ...) = 0 on a
//! box, each proven unique where interval Newton can prove it.
//!
//! ```sh
//! cargo run --release --example roots -- 'cos(x) - x' 0 1 [--tol 1e-12] [--backend cpu|gpu|auto]
//! cargo run --release --example roots -- 'x^2 + y^2 - 1, y - x^3' -2 2      # a system, every variable in [-2, 2]
//! cargo run --release --example roots -- 'x^2 + y^2 - 1, y - x^3' --box x=[-2,2] --box y=[0,2]
//! cargo run --release --example roots            # a small demo list
//! ```
//!
//! Two steps, both the library's (`ivjit::search::newton::isolate`):
//! 1. *Exclusion* (`ivjit::search::exclude`, on the GPU with the work list on the device): f's
//!    residual max(|f_1|, ..., |f_n|) is evaluated on every box; boxes where it excludes 0 hold
//!    no zero and are dropped, the rest bisected until narrower than the tolerance (relative
//!    or absolute: width <= tol * max(1, |x|)). Touching survivors are merged into clusters, so
//!    every zero in the box (where f is defined) lies in some cluster.
//! 2. *Krawczyk's test* (interval Newton) on each cluster with f's Jacobian compiled into the
//!    kernel: proves that the cluster (or the cluster widened by a tenth) holds exactly one zero,
//!    then narrows its box to a few ulps; or proves it holds none. It applies where f is proven
//!    continuous and defined on the box, and fails on multiple zeros (the Jacobian is singular
//!    there): such a cluster is reported "possible root, not proven unique".
//!
//! For one variable, a cluster without a Newton proof is also checked for a sign change at its
//! ends, which proves a root only where f is continuous on the cluster: its IEEE 1788
//! decoration over the cluster (`Expression::parse_decorated`) must be `dac` or better. `1/x`
//! on [-1, 1] changes sign at 0 and has no root: "sign change at a possible discontinuity
//! (decoration trv), no proof".
use ivjit::search::newton::Solver;
use ivjit::{
    Backend, BackendChoice, DecoratedInterval, Decoration, Evaluator, Expression, Interval,
    Precision,
};
use std::time::Instant;

/// Stop when the search would evaluate more boxes than this.
const MAX_BOXES: u64 = 1 << 24;

/// A box that may hold a root.
#[derive(Clone, Debug)]
pub struct Cluster {
    /// One interval per variable, in the expression's variable order.
    pub sides: Vec<Interval>,
    /// A root is proven to exist in it: by Krawczyk's test, or (one variable) by a sign change
    /// at its ends where f's decoration on the cluster is `dac` or better (continuous there).
    pub proven: bool,
    /// Exactly one root is proven to lie in it (Krawczyk's test).
    pub unique: bool,
    /// One variable: f changes sign between the cluster's ends.
    pub sign_change: bool,
    /// One variable: f's IEEE 1788 decoration on the cluster (`dac` or better: continuous).
    pub decoration: Option<Decoration>,
}

impl Cluster {
    /// The first side (the only one for one variable).
    pub fn x(&self) -> Interval {
        self.sides[0]
    }
}

/// What `isolate` found and what it cost.
#[allow(dead_code)]
#[derive(Debug)]
pub struct Report {
    pub vars: Vec<String>,
    pub clusters: Vec<Cluster>,
    /// False if the budget or the round limit stopped the exclusion before every survivor met
    /// `tol` (the clusters still enclose every root, they are just wider).
    pub complete: bool,
    /// Boxes the exclusion evaluated.
    pub boxes: u64,
    /// Krawczyk steps (one batch over every cluster each).
    pub newton_steps: usize,
    pub seconds: f64,
    pub backend: Backend,
    /// Why `Auto` fell back to the CPU, if it did.
    pub fallback: Option<String>,
}

/// Isolates the roots of `src` (one variable) on [lo, hi].
pub fn isolate(
    src: &str,
    lo: f64,
    hi: f64,
    tol: f64,
    backend: BackendChoice,
) -> Result<Report, Box<dyn std::error::Error>> {
    let expr = Expression::parse(src)?;
    if expr.vars().len() != 1 || expr.n_outputs() != 1 {
        return Err("the expression needs one output and exactly one variable".into());
    }
    solve(src, &[(expr.vars()[0].clone(), lo, hi)], tol, backend)
}

/// Isolates the common zeros of the outputs of `src` (as many outputs as variables) on the box
/// given per variable by name.
pub fn solve(
    src: &str,
    boxes: &[(String, f64, f64)],
    tol: f64,
    backend: BackendChoice,
) -> Result<Report, Box<dyn std::error::Error>> {
    let expr = Expression::parse(src)?;
    let vars = expr.vars().to_vec();
    if vars.is_empty() || expr.n_outputs() != vars.len() {
        return Err(format!(
            "need as many equations as variables: {} outputs, {} variables ({})",
            expr.n_outputs(),
            vars.len(),
            vars.join(", ")
        )
        .into());
    }
    let mut root = Vec::new();
    for v in &vars {
        let (_, lo, hi) = boxes
            .iter()
            .find(|b| &b.0 == v)
            .ok_or(format!("no bounds for the variable {v}"))?;
        if !(lo.is_finite() && hi.is_finite() && lo <= hi) {
            return Err(format!("{v} in [{lo}, {hi}]: need finite LO <= HI").into());
        }
        root.push((*lo, *hi));
    }
    if tol.is_nan() || tol < 0.0 {
        return Err("need a tolerance >= 0".into());
    }
    let solver = Solver::new(&expr, backend)?;
    let residual = solver.residual();
    let same = match residual.backend() {
        Backend::Cpu => BackendChoice::Cpu,
        Backend::Gpu => BackendChoice::Gpu,
    };
    let start = Instant::now();
    let found = solver.isolate(&root, tol, MAX_BOXES)?;
    let mut clusters: Vec<Cluster> = found
        .zeros
        .iter()
        .map(|z| Cluster {
            sides: z
                .sides
                .iter()
                .map(|&(a, b)| Interval::new(a, b).expect("a <= b"))
                .collect(),
            proven: z.unique,
            unique: z.unique,
            sign_change: false,
            decoration: None,
        })
        .collect();
    // One variable: a sign change at the ends of an unproven cluster shows a root exists.
    if vars.len() == 1 {
        let f = Evaluator::new(&expr, Precision::F64, same)?;
        let ends: Vec<Interval> = clusters
            .iter()
            .flat_map(|c| [c.x().lo, c.x().hi])
            .map(|e| Interval::point(e).expect("finite"))
            .collect();
        let k = ends.len();
        let soa: Vec<f64> = ends
            .iter()
            .map(|e| e.lo)
            .chain(ends.iter().map(|e| e.hi))
            .collect();
        let fe = if k == 0 {
            Vec::new()
        } else {
            f.eval_soa(&soa, k)?
        };
        let positive = |j: usize| fe[j] > 0.0; // certain signs; empty (NaN) is neither
        let negative = |j: usize| fe[k + j] < 0.0;
        // A sign change proves a root (the intermediate value theorem) only where f is
        // continuous on the whole cluster: its decoration there says so (dac or better).
        let decorated = Expression::parse_decorated(expr.source())?;
        let fd = Evaluator::new(&decorated, Precision::F64, same)?;
        let boxes: Vec<Vec<DecoratedInterval>> = clusters
            .iter()
            .map(|c| vec![DecoratedInterval::undecorated(c.x())])
            .collect();
        let decorations = if boxes.is_empty() {
            Vec::new()
        } else {
            fd.eval_decorated(&boxes)?
        };
        for (c, cluster) in clusters.iter_mut().enumerate() {
            let (a, b) = (2 * c, 2 * c + 1);
            cluster.sign_change = (negative(a) && positive(b)) || (positive(a) && negative(b));
            let d = decorations[c][0].decoration;
            cluster.decoration = Some(d);
            cluster.proven |= cluster.sign_change && d >= Decoration::Dac;
        }
    }
    Ok(Report {
        vars,
        clusters,
        complete: found.ended == ivjit::search::exclude::Ended::Done,
        boxes: found.evaluated,
        newton_steps: found.newton_steps,
        seconds: start.elapsed().as_secs_f64(),
        backend: residual.backend(),
        fallback: residual.fallback_reason().map(str::to_string),
    })
}

#[allow(dead_code)]
fn print(src: &str, boxes: &[(String, f64, f64)], tol: f64, r: &Report) {
    let region: Vec<String> = boxes
        .iter()
        .map(|(v, a, b)| format!("{v} in [{a}, {b}]"))
        .collect();
    println!(
        "{src} = 0 for {}, tol {tol:e}, backend {}",
        region.join(", "),
        r.backend.name()
    );
    for c in &r.clusters {
        let verdict = if c.unique {
            "unique root proven (interval Newton)".to_string()
        } else if c.proven {
            "root exists (sign change, f continuous on the box), not proven unique".to_string()
        } else if c.sign_change {
            format!(
                "sign change at a possible discontinuity (decoration {}), no proof",
                c.decoration.map_or("?", |d| d.name())
            )
        } else {
            "possible root, not proven (a multiple root, a cluster, or none)".to_string()
        };
        let sides: Vec<String> = r
            .vars
            .iter()
            .zip(&c.sides)
            .map(|(v, s)| format!("{v} in {s}"))
            .collect();
        let width = c.sides.iter().map(|s| s.hi - s.lo).fold(0.0, f64::max);
        println!("  {}  width {width:.1e}  {verdict}", sides.join(", "));
    }
    let status = if r.complete {
        ""
    } else {
        " (stopped early: clusters wider than tol)"
    };
    println!(
        "  {} clusters; {} boxes excluded, {} Newton steps, {:.2} ms{status}",
        r.clusters.len(),
        r.boxes,
        r.newton_steps,
        r.seconds * 1e3,
    );
}

/// The demo list: (expression, bounds of every variable).
fn demos() -> Vec<(String, f64, f64)> {
    let w20: Vec<String> = (1..=20).map(|i| format!("(x-{i})")).collect();
    [
        ("(x-1)*(x-2)*(x-3)".to_string(), 0.0, 4.0),
        ("cos(x) - x".into(), 0.0, 1.0),
        ("(x-2)^2".into(), 0.0, 4.0),
        ("x^2 + 1".into(), -5.0, 5.0),
        ("sin(x)".into(), -10.0, 10.0),
        ("1/x".into(), -1.0, 2.0),
        (w20.join("*"), 0.0, 21.0),
        ("x^2 + y^2 - 1, y - x^3".into(), -2.0, 2.0),
    ]
    .into_iter()
    .collect()
}

#[allow(dead_code)]
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let usage = "usage: roots 'EXPR' LO HI | roots 'EXPR' --box NAME=[LO,HI] ... [--tol T] \
                 [--backend cpu|gpu|auto]";
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (mut pos, mut tol, mut backend) = (Vec::new(), 1e-12, BackendChoice::Auto);
    let mut named: Vec<(String, f64, f64)> = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--tol" => tol = it.next().ok_or("--tol needs a value")?.parse()?,
            "--box" => {
                let b = it.next().ok_or("--box needs NAME=[LO,HI]")?;
                let (name, bounds) = b.split_once('=').ok_or("--box takes NAME=[LO,HI]")?;
                let iv = Interval::parse(bounds.trim()).map_err(|e| format!("--box {b}: {e}"))?;
                named.push((name.trim().to_string(), iv.lo, iv.hi));
            }
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
    // (expression, bounds per variable)
    let every = |src: &str, lo: f64, hi: f64| -> Result<_, Box<dyn std::error::Error>> {
        let vars = Expression::parse(src)?.vars().to_vec();
        Ok(vars.into_iter().map(|v| (v, lo, hi)).collect::<Vec<_>>())
    };
    type Job = (String, Vec<(String, f64, f64)>);
    let jobs: Vec<Job> = match pos.as_slice() {
        [] if named.is_empty() => demos()
            .into_iter()
            .map(|(s, a, b)| Ok((s.clone(), every(&s, a, b)?)))
            .collect::<Result<_, Box<dyn std::error::Error>>>()?,
        [e] if !named.is_empty() => vec![(e.clone(), named.clone())],
        [e, a, b] if named.is_empty() => vec![(e.clone(), every(e, a.parse()?, b.parse()?)?)],
        _ => return Err(usage.into()),
    };
    for (i, (src, boxes)) in jobs.into_iter().enumerate() {
        let report = solve(&src, &boxes, tol, backend)?;
        if let (0, Some(why)) = (i, &report.fallback) {
            eprintln!("note: using the CPU evaluator ({why})");
        }
        print(&src, &boxes, tol, &report);
    }
    Ok(())
}
