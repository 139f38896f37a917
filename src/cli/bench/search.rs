//! `ivjit bench --search`: the searches of `ivjit::search` timed end to end (median of several
//! runs after a warm-up run that compiles and loads every kernel), next to the flat kernel's
//! rate for the same expression. The ratio of boxes/s inside the search to the flat kernel's
//! boxes/s is the engine's efficiency (the issue asks for at least 0.3).
//!
//! The flat rate on the GPU is the expression kernel alone on 2^24 random boxes (device events,
//! as in the main suite); for Prospero it is the render with one box per pixel (a single level:
//! one launch of the expression kernel over every pixel, plus the small box and classify
//! kernels), because loading the Prospero kernel a second time outside the disk cache costs
//! a 15-second compile. On the CPU the flat rate is the evaluator on the same number of boxes.

use std::time::Instant;

use serde_json::{json, Value};

use super::gpu::{Device, RowFlags};
use crate::workloads::{random_inputs, Case};
use ivjit::search::{exclude, minimize, ray, render, RenderOptions};
use ivjit::{Backend, BackendChoice, Evaluator, Expression, Precision};

/// The Prospero challenge's tape (tests/data/models/prospero.vm, MPL-2.0, from the Fidget
/// repository; see tests/data/models/README.md).
const PROSPERO: &str = include_str!("../../../tests/data/models/prospero.vm");

const CAMEL: &str = "(4 - 2.1*x1^2 + x1^4/3)*x1^2 + x1*x2 + (-4 + 4*x2^2)*x2^2";
const TANGLE_RAYS: &str = "let x = 7.2 - t*(0.6 + 0.4*u); let y = 5.4 - t*(0.45 - 0.5*v); \
     let z = 9 - t*(0.75 + 0.3*u - 0.2*v); x^4 - 5*x^2 + y^4 - 5*y^2 + z^4 - 5*z^2 + 11.8";

/// Timed runs after the warm-up (the median is reported).
const RUNS: usize = 5;

/// Runs a search once on an evaluator: (boxes evaluated, rounds).
type RunOnce = Box<dyn Fn(&Evaluator) -> Result<(u64, usize), String>>;

/// One search: what it ran, and what a run found (boxes evaluated, rounds).
struct Search {
    name: &'static str,
    rule: &'static str,
    what: String,
    expr: Expression,
    run: RunOnce,
    /// Boxes for the flat rate: (center range, maximum half-width) of random boxes.
    flat: (f64, f64, f64),
}

fn searches(gpu: bool) -> Result<Vec<Search>, String> {
    let e = |t: &str| Expression::parse(t).map_err(|e| e.to_string());
    let size = if gpu { 1024 } else { 256 };
    let tol = if gpu { 1e-6 } else { 1e-4 };
    // The fit's search grows tenfold per decade of width (0.66 G boxes at 1e-9 on a GPU).
    let fit_tol = if gpu { 1e-9 } else { 1e-5 };
    // Ten times the work per box, about as many boxes a decade wider (0.9 G at 1e-8).
    let fit400_tol = if gpu { 1e-8 } else { 1e-4 };
    let prospero = Expression::parse_tape(PROSPERO).map_err(|e| e.to_string())?;
    let rays: Vec<ray::Ray> = (0..size * size)
        .map(|i| ray::Ray {
            u: (i % size) as f64 / (size / 2) as f64 - 1.0,
            v: (i / size) as f64 / (size / 2) as f64 - 1.0,
            t0: 4.0,
            t1: 20.0,
            min_width: 16.0 / 1024.0,
        })
        .collect();
    Ok(vec![
        Search {
            name: "prospero",
            rule: "render",
            what: format!("{size}x{size} pixels, tiles 64,8,1"),
            expr: prospero,
            run: Box::new(move |ev| {
                let opts = RenderOptions::new(size as u32, size as u32, [-1.0, 1.0, -1.0, 1.0]);
                let r = render(ev, &opts).map_err(|e| e.to_string())?;
                Ok((r.boxes(), r.rounds.len()))
            }),
            flat: (-1.0, 1.0, 0.001),
        },
        Search {
            name: "camel",
            rule: "minimize",
            what: format!("to width {tol:e}, budget 2e8 boxes"),
            expr: e(CAMEL)?,
            run: Box::new(move |ev| {
                let m = minimize::minimize(ev, &[(-3.0, 3.0), (-2.0, 2.0)], tol, 200_000_000)
                    .map_err(|e| e.to_string())?;
                Ok((2 * m.boxes, m.rounds))
            }),
            flat: (-2.0, 2.0, 0.001),
        },
        Search {
            name: "fit",
            rule: "minimize",
            what: format!("least squares of a e^(bt) to 40 points, to width {fit_tol:e}"),
            expr: e(&fit(40))?,
            run: Box::new(move |ev| {
                let m = minimize::minimize(ev, &[(0.0, 5.0), (-3.0, 0.0)], fit_tol, 40_000_000_000)
                    .map_err(|e| e.to_string())?;
                Ok((2 * m.boxes, m.rounds))
            }),
            flat: (-1.5, 1.5, 0.001),
        },
        Search {
            name: "fit-400",
            rule: "minimize",
            what: format!("least squares of a e^(bt) to 400 points, to width {fit400_tol:e}"),
            expr: e(&fit(400))?,
            run: Box::new(move |ev| {
                let root = [(0.0, 5.0), (-3.0, 0.0)];
                let m = minimize::minimize(ev, &root, fit400_tol, 40_000_000_000)
                    .map_err(|e| e.to_string())?;
                Ok((2 * m.boxes, m.rounds))
            }),
            flat: (-1.5, 1.5, 0.001),
        },
        Search {
            name: "circle",
            rule: "exclude",
            what: format!("x^2 + y^2 = 1 to {tol:e}"),
            expr: e("x^2 + y^2")?,
            run: Box::new(move |ev| {
                let s = exclude::exclude(ev, &[(-2.0, 2.0), (-1.5, 1.5)], 1.0, tol, 1 << 31)
                    .map_err(|e| e.to_string())?;
                Ok((s.evaluated, s.rounds))
            }),
            flat: (-1.5, 1.5, 0.001),
        },
        Search {
            name: "tangle-rays",
            rule: "ray",
            what: format!("{size}x{size} rays, 1024 steps, split 8"),
            expr: e(TANGLE_RAYS)?,
            run: Box::new(move |ev| {
                let h = ray::first_hits(ev, &rays, 8).map_err(|e| e.to_string())?;
                Ok((h.boxes, 1))
            }),
            flat: (-1.0, 1.0, 0.01),
        },
    ])
}

/// A least-squares fit, the objective of a parameter estimation: `sum (y_i - a e^(b t_i))^2`
/// over `points` points `t_i = 5 i / points` in (0, 5], `y_i = 2 e^(-0.7 t_i) + 0.3 e^(-3
/// t_i)` to four decimals (a sum of two decays fitted by one: the minimum is not zero, so its
/// lower bounds close slowly and the branch and bound is long: docs/optimize.md, "Several
/// GPUs").
pub fn fit(points: usize) -> String {
    let terms: Vec<String> = (1..=points)
        .map(|i| {
            let t = i as f64 * 5.0 / points as f64;
            let y = 2.0 * (-0.7 * t).exp() + 0.3 * (-3.0 * t).exp();
            format!("({y:.4} - a*exp(b*{t}))^2")
        })
        .collect();
    terms.join(" + ")
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Runs the search section; `only` filters by name. Returns the JSON rows and the table.
pub fn run(device: Option<&Device>, only: &[String]) -> Result<(Value, String), String> {
    let choice = if device.is_some() {
        BackendChoice::Gpu
    } else {
        BackendChoice::Cpu
    };
    let mut rows = Vec::new();
    let mut text = String::from(
        "\n| search | rule | what | boxes | rounds | median ms | ms/round | boxes/s | flat boxes/s | efficiency |\n\
         |---|---|---|---|---|---|---|---|---|---|\n",
    );
    for s in searches(device.is_some())? {
        if !only.is_empty() && !only.iter().any(|o| o == s.name) {
            continue;
        }
        let p = Precision::F64;
        let ev = Evaluator::new(&s.expr, p, choice).map_err(|e| e.to_string())?;
        let (boxes, rounds) = (s.run)(&ev)?; // warm-up: compiles and loads the kernels
        let mut times = Vec::with_capacity(RUNS);
        for _ in 0..RUNS {
            let t = Instant::now();
            (s.run)(&ev)?;
            times.push(t.elapsed().as_secs_f64());
        }
        let secs = median(times);
        let rate = boxes as f64 / secs;
        let flat = flat_rate(device, &s, &ev)?;
        let row = json!({
            "search": s.name, "rule": s.rule, "what": s.what, "backend": ev.backend().name(),
            "boxes": boxes, "rounds": rounds, "median_ms": secs * 1e3,
            "ms_per_round": secs * 1e3 / rounds as f64, "boxes_per_s": rate,
            "flat_boxes_per_s": flat, "efficiency": rate / flat,
        });
        text.push_str(&format!(
            "| {} | {} | {} | {} | {} | {:.2} | {:.3} | {:.2e} | {:.2e} | {:.2} |\n",
            s.name,
            s.rule,
            s.what,
            boxes,
            rounds,
            secs * 1e3,
            secs * 1e3 / rounds as f64,
            rate,
            flat,
            rate / flat
        ));
        rows.push(row);
    }
    Ok((Value::Array(rows), text))
}

/// The backends a section compares: on a GPU machine `gpu`, `cpu` and `auto`; else `cpu`.
fn choices(gpu: bool) -> Vec<BackendChoice> {
    if gpu {
        vec![BackendChoice::Gpu, BackendChoice::Cpu, BackendChoice::Auto]
    } else {
        vec![BackendChoice::Cpu]
    }
}

/// A backend choice as the tables name it.
fn backend_name(choice: BackendChoice) -> &'static str {
    match choice {
        BackendChoice::Gpu => "gpu",
        BackendChoice::Cpu => "cpu",
        BackendChoice::Auto => "auto",
    }
}

/// Timed runs of each fixed-cost search (the median is reported).
const FIXED_RUNS: usize = 21;

/// The searches' fixed costs on each backend (on a GPU machine: `gpu`, `cpu` and `auto`): a
/// search of one round, and one of about fifty rounds of one or two boxes each, whose
/// difference per round is what a round costs beyond its boxes. Branch and bound of
/// `(x - 1/3)^2` over [0, 1] (tol 1e300: one round; 1e-20: many) and the exclusion of
/// `x - 1/3` = level over [0, 1] (level 5: one round; 0 to 1e-15: many).
pub fn fixed(gpu: bool) -> Result<(Value, String), String> {
    let choices = choices(gpu);
    let mut rows = Vec::new();
    let mut text = String::from(
        "\n| fixed cost | backend | rounds | one-round search µs | per round µs |\n\
         |---|---|---|---|---|\n",
    );
    let root = [(0.0, 1.0)];
    for rule in ["minimize", "exclude"] {
        let expr = Expression::parse(if rule == "minimize" {
            "(x - 1/3)^2"
        } else {
            "x - 1/3"
        })
        .map_err(|e| e.to_string())?;
        for &choice in &choices {
            let ev = Evaluator::new(&expr, Precision::F64, choice).map_err(|e| e.to_string())?;
            // A search: (rounds, rounds on the GPU).
            let run = |long: bool| -> Result<(usize, usize), String> {
                if rule == "minimize" {
                    let tol = if long { 1e-20 } else { 1e300 };
                    let m =
                        minimize::minimize(&ev, &root, tol, 1 << 30).map_err(|e| e.to_string())?;
                    Ok((m.rounds, m.gpu_rounds))
                } else {
                    let level = if long { 0.0 } else { 5.0 };
                    let s = exclude::exclude(&ev, &root, level, 1e-15, 1 << 30)
                        .map_err(|e| e.to_string())?;
                    Ok((s.rounds, s.gpu_rounds))
                }
            };
            let timed = |long: bool| -> Result<(f64, usize, usize), String> {
                let (rounds, on_gpu) = run(long)?; // warm-up
                let mut times = Vec::with_capacity(FIXED_RUNS);
                for _ in 0..FIXED_RUNS {
                    let t = Instant::now();
                    run(long)?;
                    times.push(t.elapsed().as_secs_f64());
                }
                Ok((median(times), rounds, on_gpu))
            };
            let (one, one_rounds, _) = timed(false)?;
            let (many, rounds, on_gpu) = timed(true)?;
            let per_round = (many - one) / (rounds - one_rounds).max(1) as f64;
            let backend = backend_name(choice);
            rows.push(json!({
                "rule": rule, "backend": backend, "rounds": rounds, "gpu_rounds": on_gpu,
                "one_round_us": one * 1e6, "per_round_us": per_round * 1e6,
            }));
            text.push_str(&format!(
                "| {rule} | {backend}{} | {rounds} | {:.1} | {:.1} |\n",
                if choice == BackendChoice::Auto {
                    format!(" ({on_gpu} rounds on the gpu)")
                } else {
                    String::new()
                },
                one * 1e6,
                per_round * 1e6
            ));
        }
    }
    Ok((Value::Array(rows), text))
}

/// The pavings of docs/constraints.md's comparison with Codac (tools/codac-pave.py): name,
/// constraints, root side (the box [-side, side]^dims), eps.
fn paving_problems() -> Vec<(&'static str, String, usize, f64, f64)> {
    let planes: Vec<String> = (0..12)
        .map(|k| {
            let t = 2.0 * std::f64::consts::PI * k as f64 / 12.0;
            format!("{:?}*x + {:?}*y <= 1", t.cos(), t.sin())
        })
        .collect();
    vec![
        (
            "disk and cubic",
            "x^2 + y^2 <= 1, y >= x^3".into(),
            2,
            2.0,
            1e-3,
        ),
        (
            "annulus, rational",
            "x^2 + y^2 in [1, 4], x / (1 + y^2) in [-0.5, 1]".into(),
            2,
            3.0,
            1e-3,
        ),
        (
            "ball and half-space",
            "x^2 + y^2 + z^2 <= 1, x + y + z >= 0.5".into(),
            3,
            2.0,
            2e-2,
        ),
        (
            "trigonometric",
            "sin(x) + cos(y) >= 0.5, x^2 + y^2 <= 9".into(),
            2,
            4.0,
            2e-3,
        ),
        ("12 half-planes", planes.join(", "), 2, 2.0, 1e-3),
    ]
}

/// The pavings (`ivjit::search::pave`) of [`paving_problems`] on each backend (on a GPU
/// machine `gpu`, `cpu` and `auto`, each also at a tenth of its eps): the programs compiled
/// once, each to its own kernel (the time reported separately: the process's first paving of
/// a problem pays it, from the disk cache or NVRTC), then the median of [`RUNS`] pavings after
/// a warm-up.
pub fn pavings(gpu: bool) -> Result<(Value, String), String> {
    use ivjit::search::pave::{Constraints, Paver};
    let choices = choices(gpu);
    let mut rows = Vec::new();
    let mut text = String::from(
        "\n| paving | eps | backend | inner + boundary | evaluated | compile ms | median ms | boxes/s |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    for (name, constraints, dims, side, eps) in paving_problems() {
        let c = Constraints::parse(&constraints).map_err(|e| e.to_string())?;
        let root = vec![ivjit::Interval::new(-side, side).map_err(|e| e.to_string())?; dims];
        let epsilons = if gpu {
            vec![eps, eps / 10.0]
        } else {
            vec![eps]
        };
        for eps in epsilons {
            for &choice in &choices {
                let t = Instant::now();
                let paver = Paver::new(&c, Precision::F64, choice).map_err(|e| e.to_string())?;
                paver.wait_for_kernels(std::time::Duration::from_secs(600));
                let compile = t.elapsed().as_secs_f64();
                let run = || paver.pave(&root, eps, 1 << 26).map_err(|e| e.to_string());
                let p = run()?; // warm-up: loads the search's kernels
                let mut times = Vec::with_capacity(RUNS);
                for _ in 0..RUNS {
                    let t = Instant::now();
                    run()?;
                    times.push(t.elapsed().as_secs_f64());
                }
                let secs = median(times);
                let backend = backend_name(choice);
                rows.push(json!({
                    "paving": name, "eps": eps, "backend": backend, "inner": p.inner.len(),
                    "boundary": p.boundary.len(), "outer": p.outer.len(),
                    "evaluated": p.evaluated, "compile_ms": compile * 1e3,
                    "median_ms": secs * 1e3, "boxes_per_s": p.evaluated as f64 / secs,
                }));
                text.push_str(&format!(
                    "| {name} | {eps:e} | {backend} | {} + {} | {} | {:.1} | {:.2} | {:.2e} |\n",
                    p.inner.len(),
                    p.boundary.len(),
                    p.evaluated,
                    compile * 1e3,
                    secs * 1e3,
                    p.evaluated as f64 / secs
                ));
            }
        }
    }
    Ok((Value::Array(rows), text))
}

/// The flat kernel's boxes/s for the search's expression (see the module documentation).
fn flat_rate(device: Option<&Device>, s: &Search, ev: &Evaluator) -> Result<f64, String> {
    if s.rule == "render" {
        let size = if device.is_some() { 1024 } else { 256 };
        let opts = RenderOptions {
            tiles: vec![1],
            ..RenderOptions::new(size, size, [-1.0, 1.0, -1.0, 1.0])
        };
        render(ev, &opts).map_err(|e| e.to_string())?;
        let mut times = Vec::new();
        for _ in 0..RUNS {
            let t = Instant::now();
            render(ev, &opts).map_err(|e| e.to_string())?;
            times.push(t.elapsed().as_secs_f64());
        }
        return Ok((size * size) as f64 / median(times));
    }
    let n = if device.is_some() { 1 << 24 } else { 1 << 18 };
    let case = Case {
        name: s.name,
        text: s.expr.source().to_string(),
        centers: (s.flat.0, s.flat.1),
        max_half_width: s.flat.2,
    };
    let nv = s.expr.vars().len();
    let inputs = random_inputs(&case, nv, n, Precision::F64, 0x5eed);
    match device {
        Some(dev) if ev.backend() == Backend::Gpu => {
            let row = dev.row(
                s.expr.source(),
                Precision::F64,
                &inputs,
                n,
                RowFlags::default(),
            )?;
            Ok(n as f64 / (row.kernel_ms * 1e-3))
        }
        _ => {
            let mut out = vec![0.0; 2 * n];
            ev.eval_soa_into(&inputs, n, &mut out)
                .map_err(|e| e.to_string())?;
            let t = Instant::now();
            ev.eval_soa_into(&inputs, n, &mut out)
                .map_err(|e| e.to_string())?;
            Ok(n as f64 / t.elapsed().as_secs_f64())
        }
    }
}
