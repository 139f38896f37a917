//! Interval branch and bound: a certified enclosure of the global minimum of f over a box.
//!
//! ```sh
//! cargo run --release --example optimize -- 'EXPR' --box x=[-2,2] --box y=[-1,1] \
//!     [--tol 1e-6] [--backend cpu|gpu|auto] [--max-boxes N] [--form natural|mean-value|gradient]
//!     [--descent]
//! cargo run --release --example optimize            # the demo problems
//! ```
//!
//! The search is the library's *minimize* rule (`ivjit::search::minimize`): on the GPU the work
//! list stays in device memory and the host reads a few counters per round. A work list of
//! boxes. Each round evaluates f on every box AND at every box's midpoint (as a point box). The upper bound U of the minimum is the least
//! *upper* bound of a midpoint enclosure (f(mid) <= that, and min f <= f(mid)). A box whose
//! lower bound exceeds U cannot hold the minimum and is dropped, as is a box where f is
//! undefined (empty enclosure). The rest are bisected along their widest side. The search stops
//! when U - L <= tol, L being the least lower bound over the surviving boxes, or when the box
//! budget runs out; either way [L, U] encloses the global minimum (a budget stop only makes it
//! wider).
//!
//! Rigor: L is rigorous for any f (min over box ∩ domain). U is an upper bound of the minimum
//! where f is defined at the midpoint it came from; the example decides that with IEEE 1788
//! decorations (`Expression::parse_decorated`, `docs/decorations.md`): f's decoration at the
//! best point `def` or better certifies U, and on the whole box it says whether f is defined
//! everywhere there (then [L, U] encloses the minimum of f over the box) or only somewhere
//! (then of f over the part of the box where it is defined). Every demo problem is `com`.
//!
//! Cost: the natural interval extension overestimates by O(width) even at a minimizer, so the
//! number of boxes grows like 1/tol near each minimizer; expressions where each variable occurs
//! once per term converge much faster.
use ivjit::search::minimize::Minimizer;
use ivjit::{
    Backend, BackendChoice, DecoratedInterval, Decoration, Evaluator, Expression, Interval,
    Precision,
};
use std::time::Instant;

/// What `minimize` found and what it cost.
#[allow(dead_code)]
#[derive(Debug)]
pub struct Report {
    /// Certified: lower <= global minimum <= upper.
    pub lower: f64,
    pub upper: f64,
    /// The midpoint whose enclosure gave `upper` (variables in `vars` order).
    pub argmin: Vec<f64>,
    pub vars: Vec<String>,
    /// True when upper - lower <= tol; false when the budget stopped the search.
    pub complete: bool,
    pub rounds: usize,
    /// Boxes evaluated (midpoint evaluations not counted).
    pub boxes: usize,
    /// Surviving boxes at the end.
    pub remaining: usize,
    /// Seconds of the search (compilation excluded) and of compilation.
    pub seconds: f64,
    pub compile_seconds: f64,
    pub backend: Backend,
    pub fallback: Option<String>,
    /// f's IEEE 1788 decoration on the whole box: `def` or better, f is defined everywhere.
    pub box_decoration: Decoration,
    /// f's decoration at the best point (`def` or better certifies `upper`); `None` when the
    /// search found no point.
    pub point_decoration: Option<Decoration>,
}

/// Minimizes `src` (one output) over the box given as (variable, lo, hi) for every variable of
/// the expression. Bounds are used exactly as given and must be finite.
pub fn minimize(
    src: &str,
    boxes: &[(String, f64, f64)],
    tol: f64,
    backend: BackendChoice,
    max_boxes: usize,
) -> Result<Report, String> {
    minimize_in(src, boxes, tol, backend, max_boxes, Form::Natural, false)
}

pub use ivjit::search::minimize::Form;

/// `--form NAME`.
fn parse_form(s: &str) -> Result<Form, String> {
    match s {
        "natural" => Ok(Form::Natural),
        "mean-value" => Ok(Form::MeanValue),
        "gradient" => Ok(Form::Gradient),
        _ => Err(format!(
            "--form {s}: expected natural, mean-value or gradient"
        )),
    }
}

/// [`minimize`], with f evaluated in the given form, and with `descent` a local descent from
/// each improved best midpoint for a better upper bound (`ivjit::search::minimize::Descent`).
pub fn minimize_in(
    src: &str,
    boxes: &[(String, f64, f64)],
    tol: f64,
    backend: BackendChoice,
    max_boxes: usize,
    form: Form,
    descent: bool,
) -> Result<Report, String> {
    let expr = Expression::parse(src).map_err(|e| e.to_string())?;
    if expr.n_outputs() != 1 {
        return Err("the expression must have exactly one output".into());
    }
    let vars = expr.vars().to_vec();
    let nv = vars.len();
    if nv == 0 {
        return Err("the expression has no variables".into());
    }
    for (name, _, _) in boxes {
        if !vars.contains(name) {
            return Err(format!(
                "--box {name}: the expression has no variable {name}"
            ));
        }
    }
    // The root box, in `vars` order: dims[k] = (lo, hi).
    let mut root = Vec::with_capacity(nv);
    for v in &vars {
        let mut found = boxes.iter().filter(|(name, _, _)| name == v);
        let (_, lo, hi) = found.next().ok_or(format!("no --box for variable {v}"))?;
        if found.next().is_some() {
            return Err(format!("two --box for variable {v}"));
        }
        if !(lo.is_finite() && hi.is_finite() && lo <= hi) {
            return Err(format!("--box {v}=[{lo}, {hi}]: need finite lo <= hi"));
        }
        root.push((*lo, *hi));
    }
    if tol.is_nan() || tol < 0.0 {
        return Err("tol must be >= 0".into());
    }

    let t0 = Instant::now();
    let search = Minimizer::new(&expr, &root, form, descent, Precision::F64, backend)
        .map_err(|e| e.to_string())?;
    let eval = search.evaluator();
    // One round with nothing to prove builds the search's device kernels: compilation too.
    search.run(f64::INFINITY, 1).map_err(|e| e.to_string())?;
    let compile_seconds = t0.elapsed().as_secs_f64();

    let t = Instant::now();
    let m = search
        .run(tol, max_boxes as u64)
        .map_err(|e| e.to_string())?;
    let seconds = t.elapsed().as_secs_f64();
    // What the bounds rest on: f's decorations on the root box and at the best point.
    let decorated = Expression::parse_decorated(src).map_err(|e| e.to_string())?;
    let d = Evaluator::new(&decorated, Precision::F64, BackendChoice::Cpu)
        .map_err(|e| e.to_string())?;
    let side = |(lo, hi): (f64, f64)| {
        Interval::new(lo, hi)
            .map(DecoratedInterval::undecorated)
            .map_err(|e| e.to_string())
    };
    let mut boxes_in = vec![root
        .iter()
        .map(|&b| side(b))
        .collect::<Result<Vec<_>, _>>()?];
    let has_point = m.argmin.len() == nv && m.argmin.iter().all(|x| x.is_finite());
    if has_point {
        boxes_in.push(
            m.argmin
                .iter()
                .map(|&x| side((x, x)))
                .collect::<Result<_, _>>()?,
        );
    }
    let decs = d.eval_decorated(&boxes_in).map_err(|e| e.to_string())?;
    Ok(Report {
        box_decoration: decs[0][0].decoration,
        point_decoration: has_point.then(|| decs[1][0].decoration),
        lower: m.lower,
        upper: m.upper,
        argmin: m.argmin.clone(),
        vars,
        complete: m.complete(),
        rounds: m.rounds,
        boxes: m.boxes as usize,
        remaining: m.remaining,
        seconds,
        compile_seconds,
        backend: eval.backend(),
        fallback: eval.fallback_reason().map(str::to_string),
    })
}

/// The demo problems: (name, expression, box per variable, known global minimum).
#[allow(dead_code, clippy::type_complexity)]
pub fn demos() -> Vec<(&'static str, String, Vec<(String, f64, f64)>, f64)> {
    let cube = |n: usize, r: f64| {
        (1..=n)
            .map(|i| (format!("x{i}"), -r, r))
            .collect::<Vec<_>>()
    };
    vec![
        (
            "six-hump camel",
            "(4 - 2.1*x1^2 + x1^4/3)*x1^2 + x1*x2 + (-4 + 4*x2^2)*x2^2".to_string(),
            vec![("x1".into(), -3.0, 3.0), ("x2".into(), -2.0, 2.0)],
            -1.031628453489877,
        ),
        ("Rosenbrock 2-D", rosenbrock(2), cube(2, 5.0), 0.0),
        ("Rosenbrock 4-D", rosenbrock(4), cube(4, 5.0), 0.0),
        ("Griewank 2-D", griewank(2), cube(2, 10.0), 0.0),
        ("Levy 2-D", levy(2), cube(2, 10.0), 0.0),
    ]
}

/// Rosenbrock in n variables x1..xn: sum 100 (x_{i+1} - x_i^2)^2 + (1 - x_i)^2; minimum 0 at 1.
pub fn rosenbrock(n: usize) -> String {
    (1..n)
        .map(|i| format!("100*(x{}-x{i}^2)^2 + (1-x{i})^2", i + 1))
        .collect::<Vec<_>>()
        .join(" + ")
}

/// Griewank in n variables: 1 + sum x_i^2 / 4000 - prod cos(x_i / sqrt(i)); minimum 0 at 0.
pub fn griewank(n: usize) -> String {
    let sum: Vec<String> = (1..=n).map(|i| format!("x{i}^2")).collect();
    let prod: Vec<String> = (1..=n)
        .map(|i| {
            if i == 1 {
                "cos(x1)".to_string()
            } else {
                format!("cos(x{i}/sqrt({i}))")
            }
        })
        .collect();
    format!("1 + ({})/4000 - {}", sum.join(" + "), prod.join("*"))
}

/// Levy in n variables (w_i = 1 + (x_i - 1)/4):
/// `sin(pi w_1)^2 + sum_{i<n} (w_i - 1)^2 (1 + 10 sin(pi w_i + 1)^2) + (w_n - 1)^2 (1 + sin(2 pi w_n)^2)`;
/// minimum 0 at 1.
pub fn levy(n: usize) -> String {
    let mut s: String = (1..=n)
        .map(|i| format!("let w{i} = 1 + (x{i} - 1)/4; "))
        .collect();
    s.push_str("sin(pi*w1)^2");
    for i in 1..n {
        s.push_str(&format!(" + (w{i} - 1)^2*(1 + 10*sin(pi*w{i} + 1)^2)"));
    }
    s.push_str(&format!(" + (w{n} - 1)^2*(1 + sin(2*pi*w{n})^2)"));
    s
}

/// The dimension-scaling suite of `optimize table`: (name, dims, expression, box, minimum).
#[allow(dead_code, clippy::type_complexity)]
pub fn scaling_suite() -> Vec<(&'static str, usize, String, Vec<(String, f64, f64)>, f64)> {
    let cube = |n: usize, r: f64| {
        (1..=n)
            .map(|i| (format!("x{i}"), -r, r))
            .collect::<Vec<_>>()
    };
    let (camel, src, boxes, known) = demos().swap_remove(0);
    let mut v = vec![(camel, 2, src, boxes, known)];
    for n in [2, 4, 8] {
        v.push(("Rosenbrock", n, rosenbrock(n), cube(n, 5.0), 0.0));
    }
    for n in [2, 4, 8] {
        // Off-center box: on a box symmetric about 0 the first midpoint is the minimizer.
        let b = (1..=n).map(|i| (format!("x{i}"), -7.0, 10.0)).collect();
        v.push(("Griewank", n, griewank(n), b, 0.0));
    }
    for n in [2, 4, 8] {
        v.push(("Levy", n, levy(n), cube(n, 10.0), 0.0));
    }
    v
}

/// A bound as the expression language writes it (`[-2, 2]`, `0.1`, `pi`), rounded outward.
fn parse_bounds(text: &str) -> Result<(f64, f64), String> {
    let expr = Expression::parse(text).map_err(|e| e.to_string())?;
    if !expr.vars().is_empty() || expr.n_outputs() != 1 {
        return Err(format!("{text}: expected an interval such as [-2, 2]"));
    }
    let eval =
        Evaluator::new(&expr, Precision::F64, BackendChoice::Cpu).map_err(|e| e.to_string())?;
    let iv = eval.eval(&[]).map_err(|e| e.to_string())?[0];
    Ok((iv.lo, iv.hi))
}

fn print(name: &str, src: &str, r: &Report, known: Option<f64>) {
    println!("{name}: {src}");
    let point: Vec<String> = r
        .vars
        .iter()
        .zip(&r.argmin)
        .map(|(v, x)| format!("{v}={x:.9}"))
        .collect();
    println!(
        "  minimum in [{:.15e}, {:.15e}]  width {:.2e}  {}",
        r.lower,
        r.upper,
        r.upper - r.lower,
        if r.complete {
            "(tol met)"
        } else {
            "(BUDGET HIT: tol not met)"
        }
    );
    if let Some(k) = known {
        let ok = r.lower <= k && k <= r.upper;
        println!(
            "  known minimum {k:e}: {}",
            if ok { "inside" } else { "OUTSIDE (bug!)" }
        );
    }
    println!("  best point {}", point.join(" "));
    let certified = r.point_decoration.is_some_and(|d| d >= Decoration::Def);
    let upper = match r.point_decoration {
        Some(d) if certified => {
            format!("f is defined at the best point ({d}): the upper bound is certified")
        }
        Some(d) => {
            format!("f may be undefined at the best point ({d}): the upper bound is not certified")
        }
        None => "no point found: no upper bound".to_string(),
    };
    let whole = if r.box_decoration >= Decoration::Def {
        format!("f is defined on the whole box ({})", r.box_decoration)
    } else {
        format!(
            "f may be undefined on parts of the box ({}): the enclosure is of f's minimum where \
             it is defined",
            r.box_decoration
        )
    };
    println!("  decorations: {whole}; {upper}");
    println!(
        "  {} boxes in {} rounds, {} left; {:.3} s ({:.2e} boxes/s, x2 evaluations with midpoints); \
         compile {:.3} s; backend {}",
        r.boxes,
        r.rounds,
        r.remaining,
        r.seconds,
        r.boxes as f64 / r.seconds,
        r.compile_seconds,
        r.backend.name()
    );
    if let Some(why) = &r.fallback {
        println!("  (CPU fallback: {why})");
    }
}

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(2);
    }
}

fn run() -> Result<(), String> {
    let usage = "usage: optimize 'EXPR' --box x=[-2,2] ... [--tol T] [--backend cpu|gpu|auto] \
                 [--max-boxes N] [--form natural|mean-value|gradient] [--descent], or optimize table \
                 [--tol T] [--max-boxes N] [--form F] [--descent]";
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (mut src, mut boxes, mut tol) = (None, Vec::new(), 1e-6);
    let (mut backend, mut max_boxes) = (BackendChoice::Auto, 5_000_000usize);
    let mut form = Form::Natural;
    let mut descent = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || it.next().ok_or(format!("{a} needs a value; {usage}"));
        match a.as_str() {
            "--box" => {
                let v = value()?;
                let (name, b) = v
                    .split_once('=')
                    .ok_or(format!("--box {v}: expected NAME=[LO,HI]"))?;
                let (lo, hi) = parse_bounds(b)?;
                boxes.push((name.trim().to_string(), lo, hi));
            }
            "--tol" => tol = value()?.parse().map_err(|_| "--tol takes a number")?,
            "--mean-value" => form = Form::MeanValue,
            "--form" => form = parse_form(value()?)?,
            "--descent" => descent = true,
            "--max-boxes" => {
                max_boxes = value()?.parse().map_err(|_| "--max-boxes takes a count")?
            }
            "--backend" => {
                backend = match value()?.as_str() {
                    "cpu" => BackendChoice::Cpu,
                    "gpu" => BackendChoice::Gpu,
                    "auto" => BackendChoice::Auto,
                    _ => return Err("--backend takes cpu, gpu or auto".into()),
                }
            }
            s if src.is_none() && !s.starts_with("--") => src = Some(s.to_string()),
            _ => return Err(format!("unexpected argument {a}; {usage}")),
        }
    }
    match src {
        Some(t) if t == "table" => table(tol, backend, max_boxes, form, descent)?,
        Some(src) => {
            let r = minimize_in(&src, &boxes, tol, backend, max_boxes, form, descent)?;
            print("minimize", &src, &r, None);
        }
        None if boxes.is_empty() => {
            for (name, src, boxes, known) in demos() {
                let r = minimize_in(&src, &boxes, tol, backend, max_boxes, form, descent)?;
                print(name, &src, &r, Some(known));
            }
        }
        None => return Err(usage.into()),
    }
    Ok(())
}

/// `optimize table`: the scaling suite on the GPU (when there is one and `backend` allows it)
/// and on the CPU evaluator, as a markdown table.
fn table(
    tol: f64,
    backend: BackendChoice,
    max_boxes: usize,
    form: Form,
    descent: bool,
) -> Result<(), String> {
    let mut backends = Vec::new();
    if backend != BackendChoice::Cpu && ivjit::detect_gpu().is_ok() {
        backends.push(BackendChoice::Gpu);
    }
    if backend != BackendChoice::Gpu {
        backends.push(BackendChoice::Cpu);
    }
    println!("tolerance {tol:e}, budget {max_boxes} boxes");
    println!();
    println!(
        "| problem | dims | backend | certified enclosure of the minimum | width | known inside | \
         boxes | rounds | seconds | boxes/s |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for (name, dims, src, boxes, known) in scaling_suite() {
        for &b in &backends {
            let r = minimize_in(&src, &boxes, tol, b, max_boxes, form, descent)?;
            println!(
                "| {name} | {dims} | {} | [{:.10e}, {:.10e}] | {:.1e}{} | {} | {} | {} | {:.3} | {:.2e} |",
                r.backend.name(),
                r.lower + 0.0, // no "-0"
                r.upper + 0.0,
                r.upper - r.lower,
                if r.complete { "" } else { " (budget)" },
                if r.lower <= known && known <= r.upper {
                    "yes"
                } else {
                    "NO (bug!)"
                },
                r.boxes,
                r.rounds,
                r.seconds,
                r.boxes as f64 / r.seconds
            );
        }
    }
    Ok(())
}
