//! `ivjit minimize` (interval branch and bound: a certified enclosure of the global minimum) and
//! `ivjit solve` (the zeros of a square system, proven unique by interval Newton): the library's
//! searches (`ivjit::search::minimize`, `ivjit::search::newton`) from the command line.

use std::time::Instant;

use super::{compile, failure, report_fallback, Failure};
use crate::{BackendArg, FormatArg, Source};
use ivjit::search::minimize::{Ended, Form, Minimizer};
use ivjit::search::newton::Solver;
use ivjit::{BackendChoice, Expression, Interval, Precision};

/// How `ivjit minimize` evaluates f on a box.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FormArg {
    /// The natural interval extension.
    Natural,
    /// The mean-value form intersected with the natural extension.
    MeanValue,
    /// The mean-value form with the monotonicity test and gradient-based exclusion.
    Gradient,
}

/// The options of `ivjit minimize`.
#[derive(clap::Args)]
pub struct MinimizeArgs {
    #[command(flatten)]
    pub source: Source,
    /// A variable's range: x=[-2,2] (finite). One per variable.
    #[arg(long = "box", value_name = "NAME=INTERVAL", allow_hyphen_values = true)]
    pub boxes: Vec<String>,
    /// Stop when upper - lower <= TOL.
    #[arg(long, default_value_t = 1e-6)]
    pub tol: f64,
    /// Evaluate at most this many boxes (the enclosure then holds but is wider).
    #[arg(long, default_value_t = 100_000_000)]
    pub max_boxes: u64,
    /// How f is evaluated on a box.
    #[arg(long, value_enum, default_value = "gradient")]
    pub form: FormArg,
    /// No local descent from the best midpoints (upper bounds from midpoints only).
    #[arg(long)]
    pub no_descent: bool,
    /// Constraints the minimum is subject to, comma-separated as for `ivjit pave`: f <= g,
    /// f >= g, f == g, f in [a, b] (e.g. 'x^2 + y^2 <= 1, x + y == 1'). --form and
    /// --no-descent do not apply: bounds come from the contracted boxes, their linear
    /// relaxations and the points proven feasible (midpoints, the relaxations' minimizers).
    #[arg(long = "subject-to", value_name = "CONSTRAINTS")]
    pub subject_to: Option<String>,
    /// With --subject-to: equalities h == c are relaxed to |h - c| <= EQ_TOL (0: exact).
    #[arg(long, default_value_t = 1e-6)]
    pub eq_tol: f64,
    /// With --subject-to: boxes this narrow are no longer split.
    #[arg(long, default_value_t = 1e-9)]
    pub eps: f64,
    /// With --subject-to: bound f on each box by the interval bounds alone, without the box's
    /// linear relaxation (one small linear program per box, solved with a certified bound:
    /// docs/constraints.md)
    #[arg(long)]
    pub no_relaxation: bool,
    #[arg(long, value_enum, default_value = "auto")]
    pub backend: BackendArg,
    #[arg(long, value_enum, default_value = "text")]
    pub format: FormatArg,
}

/// The options of `ivjit solve`.
#[derive(clap::Args)]
pub struct SolveArgs {
    #[command(flatten)]
    pub source: Source,
    /// A variable's range: x=[-2,2] (finite for equations; constraints and Minibex files may
    /// leave sides unbounded). One per variable.
    #[arg(long = "box", value_name = "NAME=INTERVAL", allow_hyphen_values = true)]
    pub boxes: Vec<String>,
    /// Equations (outputs = 0): exclude down to boxes this wide (relative above 1) before
    /// the Newton test.
    #[arg(long, default_value_t = 1e-12)]
    pub tol: f64,
    /// Constraints and Minibex files: split boxes down to this width, and narrow every
    /// solution to it.
    #[arg(long, default_value_t = 1e-8)]
    pub eps: f64,
    /// Evaluate at most this many boxes.
    #[arg(long, default_value_t = 1 << 24)]
    pub max_boxes: u64,
    #[arg(long, value_enum, default_value = "auto")]
    pub backend: BackendArg,
    #[arg(long, value_enum, default_value = "text")]
    pub format: FormatArg,
}

/// The root box from `--box NAME=INTERVAL` options: one finite interval per variable of the
/// expression, in its variable order.
pub(crate) fn root_box(expr: &Expression, boxes: &[String]) -> Result<Vec<(f64, f64)>, Failure> {
    root_box_of(expr, boxes, true)
}

/// [`root_box`]; `finite`: whether bounds must be finite (the searches with contractors take
/// unbounded sides: the constraints narrow them first).
pub(crate) fn root_box_of(
    expr: &Expression,
    boxes: &[String],
    finite: bool,
) -> Result<Vec<(f64, f64)>, Failure> {
    let mut given: Vec<(String, Interval)> = Vec::new();
    for b in boxes {
        let Some((name, value)) = b.split_once('=') else {
            return Err(Failure::input(format!(
                "--box {b}: expected NAME=[LO,HI], like --box x=[-2,2]"
            )));
        };
        let name = name.trim();
        let iv = Interval::parse(value).map_err(|e| Failure::input(format!("--box {b}: {e}")))?;
        if finite && !(iv.lo.is_finite() && iv.hi.is_finite()) {
            return Err(Failure::input(format!(
                "--box {b}: the search needs finite bounds"
            )));
        }
        if expr.var_index(name).is_none() {
            return Err(Failure::input(format!(
                "--box {name}: the expression has no variable '{name}' (its variables: {})",
                expr.vars().join(", ")
            )));
        }
        if given.iter().any(|(n, _)| n == name) {
            return Err(Failure::input(format!("--box {name} is given twice")));
        }
        given.push((name.to_string(), iv));
    }
    let by_name: std::collections::HashMap<&str, Interval> =
        given.iter().map(|(n, iv)| (n.as_str(), *iv)).collect();
    expr.vars()
        .iter()
        .map(|v| match by_name.get(v.as_str()) {
            Some(iv) => Ok((iv.lo, iv.hi)),
            None => Err(Failure::input(format!(
                "the variable '{v}' has no --box; pass --box {v}=[LO,HI]"
            ))),
        })
        .collect()
}

fn point(vars: &[String], x: &[f64]) -> String {
    vars.iter()
        .zip(x)
        .map(|(v, c)| format!("{v}={c}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A Minibex problem file (`-f problem.bch` or `.mbx`), if that is the source.
fn minibex_file(s: &Source) -> Option<&std::path::Path> {
    s.file
        .as_deref()
        .filter(|p| p.extension().is_some_and(|e| e == "bch" || e == "mbx"))
}

/// `--box` options for a Minibex file's variables: the file's domains, each replaced by the
/// command line's where one is given there.
fn minibex_boxes(p: &ivjit::search::minibex::MinibexProblem, given: &[String]) -> Vec<String> {
    let named = |b: &String| b.split_once('=').map(|(n, _)| n.trim().to_string());
    let mut boxes: Vec<String> = p
        .vars
        .iter()
        .filter(|(name, _)| !given.iter().any(|b| named(b).as_deref() == Some(name)))
        .map(|(name, iv)| {
            // The bounds exactly (rounded outward, which changes nothing for a double):
            // `{}`'s shortest decimal would be read back one ulp wider.
            let (lo, hi) = (
                Interval::format_lower(iv.lo, Precision::F64),
                Interval::format_upper(iv.hi, Precision::F64),
            );
            format!("{name}=[{lo},{hi}]")
        })
        .collect();
    boxes.extend(given.iter().cloned());
    boxes
}

/// `ivjit minimize`.
pub fn minimize(args: MinimizeArgs) -> Result<(), Failure> {
    if let Some(path) = minibex_file(&args.source) {
        // A Minibex problem: its objective, constraints and domains.
        let text = std::fs::read_to_string(path)
            .map_err(|e| Failure::input(format!("cannot read {}: {e}", path.display())))?;
        let p = ivjit::search::minibex::parse(&text)
            .map_err(|e| Failure::input(format!("{}: {e}", path.display())))?;
        let Some(objective) = p.objective.clone() else {
            return Err(Failure::input(format!(
                "{}: no `minimize`: this is a system; use ivjit solve",
                path.display()
            )));
        };
        // The problem's variables: a declared variable that nothing reads has no box.
        let vars: Vec<String> = if p.constraints.is_empty() {
            Expression::parse(&objective).map(|e| e.vars().to_vec())
        } else {
            ivjit::search::pave::Constraints::parse(&p.constraints)
                .map_err(|e| {
                    ivjit::Error::Search(ivjit::search::SearchError::Options(e.to_string()))
                })
                .and_then(|c| ivjit::search::constrained::problem_expression(&objective, &c))
                .map(|e| e.vars().to_vec())
        }
        .map_err(|e| failure(e, &objective))?;
        let mut p = p;
        p.vars.retain(|(name, _)| vars.contains(name));
        let boxes = minibex_boxes(&p, &args.boxes);
        if p.constraints.is_empty() {
            let expr = Expression::parse(&objective).map_err(|e| failure(e, &objective))?;
            return unconstrained(&args, &objective, &expr, &boxes);
        }
        return minimize_subject_to(&args, &objective, &p.constraints, &boxes);
    }
    let (text, expr) = compile(&args.source)?;
    if let Some(c) = &args.subject_to {
        return minimize_subject_to(&args, &text, c, &args.boxes);
    }
    unconstrained(&args, &text, &expr, &args.boxes)
}

/// `ivjit minimize` without constraints (`ivjit::search::minimize`).
fn unconstrained(
    args: &MinimizeArgs,
    text: &str,
    expr: &Expression,
    boxes: &[String],
) -> Result<(), Failure> {
    let (text, expr) = (text.to_string(), expr.clone());
    if expr.n_outputs() != 1 {
        return Err(Failure::input(format!(
            "minimize needs one output; the expression has {}",
            expr.n_outputs()
        )));
    }
    let root = root_box(&expr, boxes)?;
    if args.tol.is_nan() || args.tol < 0.0 {
        return Err(Failure::input("--tol must be a number >= 0"));
    }
    let form = match args.form {
        FormArg::Natural => Form::Natural,
        FormArg::MeanValue => Form::MeanValue,
        FormArg::Gradient => Form::Gradient,
    };
    let search = Minimizer::new(
        &expr,
        &root,
        form,
        !args.no_descent,
        Precision::F64,
        BackendChoice::from(args.backend),
    )
    .map_err(|e| failure(e, &text))?;
    let eval = search.evaluator();
    report_fallback(eval);
    let start = Instant::now();
    let m = search
        .run(args.tol, args.max_boxes)
        .map_err(|e| failure(e, &text))?;
    let secs = start.elapsed().as_secs_f64();
    // Where the rounds ran: `auto` on a GPU starts on the CPU (search::minimize).
    let ran_on = match (eval.backend(), m.gpu_rounds) {
        (ivjit::Backend::Cpu, _) | (_, 0) => "cpu",
        _ if m.gpu_rounds == m.rounds => "gpu",
        _ => "cpu+gpu",
    };
    let stopped = match m.ended {
        Ended::Done => "converged",
        Ended::Budget => "budget",
        Ended::Memory => "memory",
        Ended::Rounds => "rounds",
    };
    match args.format {
        FormatArg::Text => {
            println!("minimum in [{:e}, {:e}]", m.lower, m.upper);
            println!(
                "  width {:.2e}, {stopped}{}",
                m.upper - m.lower,
                if m.complete() {
                    ""
                } else {
                    " (the enclosure holds, but is wider than --tol)"
                }
            );
            println!("  best point {}", point(expr.vars(), &m.argmin));
            let on = match ran_on {
                "cpu+gpu" => format!(
                    "the cpu (rounds 1-{}) and the gpu ({}-{})",
                    m.rounds - m.gpu_rounds,
                    m.rounds - m.gpu_rounds + 1,
                    m.rounds
                ),
                one => format!("the {one}"),
            };
            println!(
                "  {} boxes in {} rounds, {} left, {:.3} s on {on}",
                m.boxes, m.rounds, m.remaining, secs,
            );
        }
        FormatArg::Json => {
            let argmin: serde_json::Map<String, serde_json::Value> = expr
                .vars()
                .iter()
                .zip(&m.argmin)
                .map(|(v, c)| (v.clone(), serde_json::json!(c)))
                .collect();
            let doc = serde_json::json!({
                "lower": m.lower, "upper": m.upper, "argmin": argmin, "stopped": stopped,
                "rounds": m.rounds, "boxes": m.boxes, "remaining": m.remaining,
                "seconds": secs, "backend": ran_on, "gpu_rounds": m.gpu_rounds,
            });
            println!("{doc}");
        }
    }
    Ok(())
}

/// `ivjit minimize F --subject-to CONSTRAINTS` (`ivjit::search::constrained`), or a Minibex
/// file's problem.
fn minimize_subject_to(
    args: &MinimizeArgs,
    text: &str,
    given: &str,
    boxes: &[String],
) -> Result<(), Failure> {
    use ivjit::search::constrained::{self, ConstrainedOptions, Stopped};
    let constraints = ivjit::search::pave::Constraints::parse(given)
        .map_err(|e| Failure::input(format!("--subject-to: {e}")))?;
    let expr = constrained::problem_expression(text, &constraints).map_err(|e| match e {
        // The expression is built from the user's two texts: show them, not the built one.
        ivjit::Error::Compile(d) => {
            let built = format!("{text}, {}", constraints.source);
            Failure {
                message: format!(
                    "in the objective '{text}' with the constraints '{given}' (read as '{built}'):\n{}",
                    d.render(&built)
                ),
                status: 2,
            }
        }
        e => failure(e, text),
    })?;
    let root: Vec<Interval> = root_box_of(&expr, boxes, false)?
        .iter()
        .map(|&(lo, hi)| Interval { lo, hi })
        .collect();
    for (name, v) in [
        ("--tol", args.tol),
        ("--eq-tol", args.eq_tol),
        ("--eps", args.eps),
    ] {
        if v.is_nan() || v < 0.0 {
            return Err(Failure::input(format!("{name} must be a number >= 0")));
        }
    }
    let options = ConstrainedOptions {
        tol: args.tol,
        eps: args.eps,
        eq_tol: args.eq_tol,
        max_boxes: args.max_boxes.min(usize::MAX as u64) as usize,
        linear_relaxation: !args.no_relaxation,
    };
    let start = Instant::now();
    let m = constrained::minimize_subject_to(
        text,
        &constraints,
        &root,
        options,
        Precision::F64,
        BackendChoice::from(args.backend),
    )
    .map_err(|e| failure(e, text))?;
    let secs = start.elapsed().as_secs_f64();
    let stopped = match m.stopped {
        Stopped::Converged => "converged",
        Stopped::Narrow => "narrow",
        Stopped::Budget => "budget",
        Stopped::Infeasible => "infeasible",
    };
    match args.format {
        FormatArg::Text => {
            if m.stopped == Stopped::Infeasible {
                println!("infeasible: no point of the box satisfies the constraints");
            } else {
                println!("minimum in [{:e}, {:e}]", m.lower, m.upper);
                let why = match m.stopped {
                    Stopped::Converged => String::new(),
                    Stopped::Narrow => {
                        " (every box left is narrower than --eps: the enclosure holds, but is wider than --tol)".into()
                    }
                    _ => " (the enclosure holds, but is wider than --tol)".into(),
                };
                println!("  width {:.2e}, {stopped}{why}", m.upper - m.lower);
                match &m.argmin {
                    Some(x) => println!("  best point {} (proven feasible)", point(&m.vars, x)),
                    None => println!("  no feasible point proven yet: the upper bound is +inf"),
                }
            }
            if m.relaxation > 0.0 {
                println!(
                    "  equalities relaxed to |h| <= {:e} (--eq-tol): the enclosure is the relaxed problem's",
                    m.relaxation
                );
            }
            println!(
                "  {} boxes in {} rounds, {} left, {:.3} s",
                m.evaluated, m.rounds, m.remaining, secs
            );
        }
        FormatArg::Json => {
            let argmin = m.argmin.as_ref().map(|x| {
                m.vars
                    .iter()
                    .zip(x)
                    .map(|(v, c)| (v.clone(), serde_json::json!(c)))
                    .collect::<serde_json::Map<String, serde_json::Value>>()
            });
            let finite = |x: f64| {
                if x.is_finite() {
                    serde_json::json!(x)
                } else {
                    serde_json::json!(x.to_string())
                }
            };
            let doc = serde_json::json!({
                "lower": finite(m.lower), "upper": finite(m.upper), "argmin": argmin,
                "stopped": stopped, "relaxation": m.relaxation, "rounds": m.rounds,
                "boxes": m.evaluated, "remaining": m.remaining, "seconds": secs,
            });
            println!("{doc}");
        }
    }
    Ok(())
}

/// `ivjit solve`.
pub fn solve(args: SolveArgs) -> Result<(), Failure> {
    if let Some(path) = minibex_file(&args.source) {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Failure::input(format!("cannot read {}: {e}", path.display())))?;
        let p = ivjit::search::minibex::parse(&text)
            .map_err(|e| Failure::input(format!("{}: {e}", path.display())))?;
        if p.objective.is_some() {
            return Err(Failure::input(format!(
                "{}: the problem has `minimize`: use ivjit minimize",
                path.display()
            )));
        }
        if p.constraints.is_empty() {
            return Err(Failure::input(format!(
                "{}: no constraints to solve",
                path.display()
            )));
        }
        let constraints = ivjit::search::pave::Constraints::parse(&p.constraints)
            .map_err(|e| Failure::input(format!("{}: {e}", path.display())))?;
        let expr =
            Expression::parse(&constraints.source).map_err(|e| failure(e, &constraints.source))?;
        // The problem's variables: a declared variable that nothing reads has no box.
        let mut p = p;
        p.vars.retain(|(name, _)| expr.var_index(name).is_some());
        let boxes = minibex_boxes(&p, &args.boxes);
        let declared: Vec<String> = p.vars.iter().map(|(n, _)| n.clone()).collect();
        return system(&args, &constraints, &boxes, Some(&declared));
    }
    // Constraints (with relations) rather than equations.
    if let Some(text) = &args.source.expr {
        if let Ok(constraints) = ivjit::search::pave::Constraints::parse(text) {
            return system(&args, &constraints, &args.boxes, None);
        }
    }
    let (text, expr) = compile(&args.source)?;
    if expr.n_outputs() != expr.vars().len() {
        return Err(Failure::input(format!(
            "solve needs as many equations (comma-separated outputs) as variables: {} outputs, \
             {} variables ({})",
            expr.n_outputs(),
            expr.vars().len(),
            expr.vars().join(", ")
        )));
    }
    let root = root_box(&expr, &args.boxes)?;
    if args.tol.is_nan() || args.tol < 0.0 {
        return Err(Failure::input("--tol must be a number >= 0"));
    }
    let solver =
        Solver::new(&expr, BackendChoice::from(args.backend)).map_err(|e| failure(e, &text))?;
    let residual = solver.residual();
    report_fallback(residual);
    let start = Instant::now();
    let found = solver
        .isolate(&root, args.tol, args.max_boxes)
        .map_err(|e| failure(e, &text))?;
    let secs = start.elapsed().as_secs_f64();
    let complete = found.ended == ivjit::search::exclude::Ended::Done;
    // Where it ran: `auto` on a GPU starts the exclusion and Krawczyk's batches on the CPU
    // and moves each to the GPU only when the CPU is predicted slower.
    let on_gpu = found.gpu_rounds + found.gpu_batches;
    let ran_on = match residual.backend() {
        ivjit::Backend::Cpu => "cpu",
        _ if on_gpu == 0 => "cpu",
        _ if found.gpu_rounds == found.rounds && found.gpu_batches == found.batches => "gpu",
        _ => "cpu+gpu",
    };
    let where_text = match ran_on {
        "cpu+gpu" => format!(
            "on the cpu and the gpu (exclusion rounds on the gpu: {} of {}; Newton batches: {} \
             of {})",
            found.gpu_rounds, found.rounds, found.gpu_batches, found.batches
        ),
        one => format!("on the {one}"),
    };
    match args.format {
        FormatArg::Text => {
            for z in &found.zeros {
                let sides: Vec<String> = expr
                    .vars()
                    .iter()
                    .zip(&z.sides)
                    .map(|(v, &(lo, hi))| format!("{v} in [{lo:e}, {hi:e}]"))
                    .collect();
                let verdict = if z.unique {
                    "unique zero proven (interval Newton)"
                } else {
                    "possible zero, not proven (a multiple zero, a cluster, or none)"
                };
                println!("{}  {verdict}", sides.join(", "));
            }
            println!(
                "{} boxes; {} proven unique; every zero in the box lies in one{}; {} boxes \
                 excluded, {} Newton steps, {:.3} s {where_text}",
                found.zeros.len(),
                found.zeros.iter().filter(|z| z.unique).count(),
                if complete {
                    ""
                } else {
                    " (the budget stopped the exclusion: some boxes are wider than --tol)"
                },
                found.evaluated,
                found.newton_steps,
                secs,
            );
        }
        FormatArg::Json => {
            let zeros: Vec<serde_json::Value> = found
                .zeros
                .iter()
                .map(|z| {
                    let sides: serde_json::Map<String, serde_json::Value> = expr
                        .vars()
                        .iter()
                        .zip(&z.sides)
                        .map(|(v, &(lo, hi))| (v.clone(), serde_json::json!([lo, hi])))
                        .collect();
                    serde_json::json!({ "box": sides, "unique": z.unique })
                })
                .collect();
            let doc = serde_json::json!({
                "zeros": zeros, "complete": complete, "excluded_boxes": found.evaluated,
                "newton_steps": found.newton_steps, "seconds": secs,
                "backend": ran_on, "gpu_rounds": found.gpu_rounds,
                "gpu_newton_batches": found.gpu_batches,
            });
            println!("{doc}");
        }
    }
    Ok(())
}

/// `ivjit solve` on constraints (`f == g, h <= 0, ...`) or a Minibex file: branch and prune
/// (`ivjit::search::system`). `declared`: a file's variables (those the constraints read), in
/// the order its boxes are printed.
fn system(
    args: &SolveArgs,
    constraints: &ivjit::search::pave::Constraints,
    boxes: &[String],
    declared: Option<&[String]>,
) -> Result<(), Failure> {
    use ivjit::search::system::{solve_system, SystemOptions};
    let expr =
        Expression::parse(&constraints.source).map_err(|e| failure(e, &constraints.source))?;
    let root: Vec<Interval> = root_box_of(&expr, boxes, false)?
        .into_iter()
        .map(|(lo, hi)| Interval { lo, hi })
        .collect();
    if args.eps.is_nan() || args.eps <= 0.0 {
        return Err(Failure::input(format!(
            "--eps {}: the width must be positive",
            args.eps
        )));
    }
    let options = SystemOptions {
        eps: args.eps,
        max_boxes: usize::try_from(args.max_boxes).unwrap_or(usize::MAX),
    };
    let start = Instant::now();
    let found = solve_system(
        constraints,
        &root,
        options,
        BackendChoice::from(args.backend),
    )
    .map_err(|e| failure(e, &constraints.source))?;
    let secs = start.elapsed().as_secs_f64();
    let p = Precision::F64;
    // The sides in the file's order (else the constraints' order of first appearance).
    let order: Vec<usize> = match declared {
        Some(d) => d.iter().filter_map(|v| expr.var_index(v)).collect(),
        None => (0..found.vars.len()).collect(),
    };
    let vars: Vec<&String> = order.iter().map(|&k| &found.vars[k]).collect();
    let bounds = |b: &[Interval]| -> Vec<serde_json::Value> {
        order
            .iter()
            .map(|&k| b[k])
            .map(|iv| {
                serde_json::json!([
                    Interval::format_lower(iv.lo, p),
                    Interval::format_upper(iv.hi, p)
                ])
            })
            .collect()
    };
    match args.format {
        FormatArg::Text => {
            for s in &found.solutions {
                let sides: Vec<String> = order
                    .iter()
                    .map(|&k| format!("{} in {}", found.vars[k], s.sides[k].display(p)))
                    .collect();
                println!("{}  unique solution proven (Krawczyk)", sides.join(", "));
            }
            println!(
                "{} solutions proven unique; {} undecided boxes{}; {} inner boxes; {} boxes, {} \
                 Newton steps, {:.3} s{}",
                found.solutions.len(),
                found.undecided.len(),
                if found.remaining > 0 {
                    format!(
                        " ({} of them wider than --eps: the budget stopped the search)",
                        found.remaining
                    )
                } else if found.undecided.is_empty() {
                    String::new()
                } else {
                    " (at most --eps wide: each may hold solutions, none proven; --format json \
                     lists them)"
                        .to_string()
                },
                found.inner.len(),
                found.evaluated,
                found.newton_steps,
                secs,
                if found.square {
                    ""
                } else {
                    " (not a square system of equalities: no uniqueness proofs)"
                }
            );
        }
        FormatArg::Json => {
            let doc = serde_json::json!({
                "vars": vars,
                "solutions": found.solutions.iter().map(|s| bounds(&s.sides)).collect::<Vec<_>>(),
                "undecided": found.undecided.iter().map(|b| bounds(b)).collect::<Vec<_>>(),
                "inner": found.inner.iter().map(|b| bounds(b)).collect::<Vec<_>>(),
                "complete": found.complete(), "square": found.square,
                "boxes": found.evaluated, "newton_steps": found.newton_steps,
                "seconds": secs,
            });
            println!("{doc}");
        }
    }
    Ok(())
}
