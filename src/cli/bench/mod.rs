//! `ivjit bench`: a suite of named expressions timed on the GPU (kernel alone with device
//! events, end to end with transfers, cold and cached compile latency, against a hand-written
//! CUDA C baseline and the device's measured copy bandwidth and FMA rate) or on the CPU
//! evaluator. See `docs/bench.md` for the method and the targets.
//!
//! Work is counted per box: bytes = inputs read once + outputs written once
//! (`2*n_vars*size + n_output_arrays*size`: two arrays per output, one per decoration code,
//! [`ivjit::internals::scalar::Program::output_arrays`]); floating-point operations = the scalar program's
//! rounded operations ([`ivjit::internals::scalar::Program::rounded_op_count`]: add, sub, mul, div, fma,
//! sqrt, each directed operation counted as one). Selects, compares, min/max and the point
//! functions' internal work are not counted.

pub mod baseline;
pub mod gpu;
mod render;
mod search;

use crate::workloads::{generated, has_baseline, live_nodes, random_inputs, suite, Case};
use ivjit::internals::scalar::Precision;
use ivjit::{BackendChoice, Evaluator, Expression};
use serde_json::{json, Value};
use std::fmt::Write;
use std::time::Instant;

/// Default number of boxes on the GPU.
pub const GPU_BOXES: usize = 1 << 24;
/// Default number of boxes on the CPU.
pub const CPU_BOXES: usize = 1 << 16;

/// Which backend the suite runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// The CPU evaluator.
    Cpu,
    /// The GPU; fail when there is none.
    Gpu,
    /// The GPU if there is one, else the CPU (and say so).
    Auto,
}

/// What to run.
#[derive(Clone, Debug)]
pub struct Options {
    /// Backend.
    pub target: Target,
    /// Boxes per expression (default: [`GPU_BOXES`] or [`CPU_BOXES`]).
    pub boxes: Option<usize>,
    /// Random seed (default: from the clock; fresh inputs every run).
    pub seed: Option<u64>,
    /// Only the rows whose names are listed.
    pub only: Vec<String>,
    /// The search section (`ivjit::search`) instead of the flat suite.
    pub search: bool,
    /// The render section (issue 15: Prospero and a 3-D model, full and pruned programs).
    pub render: bool,
    /// What each row evaluates: the expression, its gradient or its decorated form.
    pub variant: Variant,
}

/// What a row of the flat suite evaluates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Variant {
    /// The expression.
    #[default]
    Plain,
    /// Its gradient (`Expression::gradient`: f, its continuity flags and its partial
    /// derivatives in one kernel); rows named `NAME-grad`.
    Gradient,
    /// Its decorated form (`Expression::parse_with_decorations`, inputs decorated from their
    /// bounds: the same input bytes, one decoration output per output); rows named `NAME-dec`.
    Decorated,
}

impl Variant {
    /// The expression a row of `text` times.
    pub fn expression(self, text: &str) -> Result<Expression, String> {
        let e = |r: Result<Expression, ivjit::Error>| r.map_err(|e| e.to_string());
        match self {
            Variant::Plain => e(Expression::parse(text)),
            Variant::Gradient => Ok(e(Expression::parse(text))?
                .gradient()
                .map_err(|e| e.to_string())?
                .0),
            Variant::Decorated => e(Expression::parse_with_decorations(
                text,
                ivjit::DecorationInputs::FromBounds,
            )),
        }
    }

    /// The suffix of its rows' names.
    fn suffix(self) -> &'static str {
        match self {
            Variant::Plain => "",
            Variant::Gradient => "-grad",
            Variant::Decorated => "-dec",
        }
    }
}

/// Device ceilings measured in the same run.
#[derive(Clone, Debug)]
pub struct Ceilings {
    /// Device-to-device copy, bytes read + written per second.
    pub copy_bytes_per_s: f64,
    /// f64 FMA operations per second.
    pub fma_f64: f64,
    /// f32 FMA operations per second.
    pub fma_f32: f64,
}

/// A finished benchmark: JSON and a table.
pub struct Report {
    /// The machine-readable result (`--json`).
    pub json: Value,
    /// The table for the terminal.
    pub text: String,
}

fn precisions() -> [Precision; 2] {
    [Precision::F64, Precision::F32]
}

fn size(p: Precision) -> usize {
    match p {
        Precision::F64 => 8,
        Precision::F32 => 4,
    }
}

fn clock_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0x5eed)
}

/// Runs the suite. Errors are messages for the user (no GPU with `Target::Gpu`, a driver error).
pub fn run(opts: &Options) -> Result<Report, String> {
    let device = match opts.target {
        Target::Cpu => None,
        Target::Gpu => Some(gpu::Device::open().map_err(|e| format!("no GPU available: {e}"))?),
        Target::Auto => match gpu::Device::open() {
            Ok(d) => Some(d),
            Err(e) => {
                eprintln!("ivjit bench: no GPU ({e}); running the CPU suite");
                None
            }
        },
    };
    if opts.render {
        let (rows, table) = render::run(device.as_ref(), &opts.only)?;
        if rows.as_array().is_some_and(|r| r.is_empty()) {
            return Err(format!(
                "--only matches no render (names: {})",
                render::NAMES.join(", ")
            ));
        }
        let head = match &device {
            Some(d) => format!(
                "ivjit bench --render: {} (sm_{}{}); pruned renders on the CPU\n",
                d.name, d.cc.0, d.cc.1
            ),
            None => "ivjit bench --render: the CPU evaluator (sizes halved)\n".to_string(),
        };
        return Ok(Report {
            json: json!({ "renders": rows }),
            text: head + &table,
        });
    }
    if opts.search {
        let (rows, mut table) = search::run(device.as_ref(), &opts.only)?;
        let with_fixed = opts.only.is_empty() || opts.only.iter().any(|o| o == "fixed");
        let with_pave = opts.only.is_empty() || opts.only.iter().any(|o| o == "pave");
        if rows.as_array().is_some_and(|r| r.is_empty()) && !with_fixed && !with_pave {
            return Err(
                "--only matches no search (names: prospero, camel, fit, fit-400, circle, tangle-rays, fixed, pave)"
                    .into(),
            );
        }
        if rows.as_array().is_some_and(|r| r.is_empty()) {
            table.clear();
        }
        let fixed = if with_fixed {
            let (fixed, fixed_table) = search::fixed(device.is_some())?;
            table.push_str(&fixed_table);
            fixed
        } else {
            Value::Null
        };
        let pavings = if with_pave {
            let (pavings, pave_table) = search::pavings(device.is_some())?;
            table.push_str(&pave_table);
            pavings
        } else {
            Value::Null
        };
        let head = match &device {
            Some(d) => format!(
                "ivjit bench --search: {} (sm_{}{})\n",
                d.name, d.cc.0, d.cc.1
            ),
            None => "ivjit bench --search: the CPU evaluator\n".to_string(),
        };
        return Ok(Report {
            json: json!({ "searches": rows, "fixed": fixed, "pavings": pavings }),
            text: head + &table,
        });
    }
    let seed = opts.seed.unwrap_or_else(clock_seed);
    let cases: Vec<Case> = suite()
        .into_iter()
        .filter(|c| opts.only.is_empty() || opts.only.iter().any(|o| o == c.name))
        .collect();
    if cases.is_empty() {
        return Err(format!(
            "--only matches no benchmark (names: {})",
            suite()
                .iter()
                .map(|c| c.name)
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    match device {
        Some(dev) => run_gpu(
            &dev,
            &cases,
            opts.boxes.unwrap_or(GPU_BOXES),
            seed,
            opts.variant,
        ),
        None => run_cpu(&cases, opts.boxes.unwrap_or(CPU_BOXES), seed, opts.variant),
    }
}

/// Common row facts.
fn row_base(case: &Case, expr: &Expression, p: Precision, n: usize) -> Result<Value, String> {
    let program = expr.scalar(p).map_err(|e| e.to_string())?;
    let nv = program.n_vars();
    let no = program.outputs.len();
    Ok(json!({
        "name": case.name,
        "precision": p.name(),
        "expr": if case.text.len() > 80 { format!("{}...", &case.text[..77]) } else { case.text.clone() },
        "n_vars": nv,
        "n_outputs": no,
        "ir_nodes": live_nodes(expr),
        "ir_nodes_before_rewrites": expr.initial_ir().live().iter().filter(|&&l| l).count(),
        "rounded_ops_per_box": program.rounded_op_count(),
        "bytes_per_box": (2 * nv + program.n_output_arrays()) * size(p),
        "boxes": n,
    }))
}

/// [`row_base`], named `NAME-grad` for a gradient's row, `NAME-dec` for a decorated one.
fn named_row(
    case: &Case,
    expr: &Expression,
    p: Precision,
    n: usize,
    variant: Variant,
) -> Result<Value, String> {
    let mut row = row_base(case, expr, p, n)?;
    row["name"] = json!(format!("{}{}", case.name, variant.suffix()));
    Ok(row)
}

fn run_cpu(cases: &[Case], n: usize, seed: u64, variant: Variant) -> Result<Report, String> {
    let threads = rayon::current_num_threads();
    let mut rows = Vec::new();
    let (c100, c100_nodes) = generated(100);
    let t = Instant::now();
    let e = Expression::parse(&c100).map_err(|e| e.to_string())?;
    Evaluator::new(&e, Precision::F64, BackendChoice::Cpu).map_err(|e| e.to_string())?;
    let compile_100_ms = t.elapsed().as_secs_f64() * 1e3;
    for (ci, case) in cases.iter().enumerate() {
        for p in precisions() {
            let t = Instant::now();
            let expr = variant.expression(&case.text)?;
            let eval = Evaluator::new(&expr, p, BackendChoice::Cpu).map_err(|e| e.to_string())?;
            let compile_ms = t.elapsed().as_secs_f64() * 1e3;
            let nv = expr.vars().len();
            let mut times = Vec::new();
            // One warm-up, then three runs on fresh inputs each; the median.
            for rep in 0..4u64 {
                let inputs = random_inputs(case, nv, n, p, seed ^ (ci as u64) << 32 ^ rep);
                let t = Instant::now();
                let out = eval.eval_soa(&inputs, n).map_err(|e| e.to_string())?;
                let s = t.elapsed().as_secs_f64();
                std::hint::black_box(&out);
                if rep > 0 {
                    times.push(s);
                }
            }
            let s = median(times);
            let mut row = named_row(case, &expr, p, n, variant)?;
            let ops = row["rounded_ops_per_box"].as_u64().unwrap_or(0) as f64;
            let o = row.as_object_mut().expect("object");
            o.insert("seconds".into(), json!(s));
            o.insert("boxes_per_s".into(), json!(n as f64 / s));
            o.insert("ns_per_box".into(), json!(s * 1e9 / n as f64));
            o.insert("rounded_ops_per_s".into(), json!(ops * n as f64 / s));
            o.insert("compile_ms".into(), json!(compile_ms));
            rows.push(row);
        }
    }
    let mut text = format!(
        "ivjit bench: CPU evaluator, {threads} threads, {n} boxes per expression, seed {seed}\n\
         compile of a {c100_nodes}-node expression (parse + rewrite + lower): {compile_100_ms:.2} ms\n"
    );
    let _ = writeln!(
        text,
        "{:<13} {:>4} {:>6} {:>7} {:>12} {:>10} {:>10} {:>10}",
        "name", "prec", "nodes", "ops/box", "boxes/s", "ns/box", "Gop/s", "compile ms"
    );
    for r in &rows {
        let _ = writeln!(
            text,
            "{:<13} {:>4} {:>6} {:>7} {:>12.3e} {:>10.1} {:>10.3} {:>10.2}",
            r["name"].as_str().unwrap_or(""),
            r["precision"].as_str().unwrap_or(""),
            r["ir_nodes"].as_u64().unwrap_or(0),
            r["rounded_ops_per_box"].as_u64().unwrap_or(0),
            r["boxes_per_s"].as_f64().unwrap_or(0.0),
            r["ns_per_box"].as_f64().unwrap_or(0.0),
            r["rounded_ops_per_s"].as_f64().unwrap_or(0.0) / 1e9,
            r["compile_ms"].as_f64().unwrap_or(0.0),
        );
    }
    let _ = writeln!(
        text,
        "ops = rounded scalar operations (add/sub/mul/div/fma/sqrt, each directed op one); \
         selects, compares, min/max and point-function internals are not counted"
    );
    Ok(Report {
        json: json!({
            "backend": "cpu",
            "device": format!("CPU ({threads} threads)"),
            "threads": threads,
            "boxes": n,
            "seed": seed,
            "ceilings": Value::Null,
            "compile_100": { "nodes": c100_nodes, "cold_ms": compile_100_ms },
            "rows": rows,
        }),
        text,
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn run_gpu(
    dev: &gpu::Device,
    cases: &[Case],
    n: usize,
    seed: u64,
    variant: Variant,
) -> Result<Report, String> {
    eprintln!(
        "ivjit bench: {} (sm_{}{}), {n} boxes",
        dev.name, dev.cc.0, dev.cc.1
    );
    // Context creation, the first module load and the interpreter's (gpu::interpreter, one
    // kernel for every program, kept in the disk cache across processes) stay out of every
    // number: a 60-node expression answers from the interpreter while its kernel compiles.
    for text in ["x + 1".to_string(), generated(60).0] {
        let warm = Expression::parse(&text).map_err(|e| e.to_string())?;
        for p in precisions() {
            let e = Evaluator::new(&warm, p, BackendChoice::Gpu).map_err(|e| e.to_string())?;
            if let Some(k) = e.gpu_kernel() {
                k.wait_for_single_kernel(std::time::Duration::from_secs(60));
            }
        }
    }
    let ceil = Ceilings {
        copy_bytes_per_s: dev.copy_bandwidth()?,
        fma_f64: dev.fma_rate(Precision::F64)?,
        fma_f32: dev.fma_rate(Precision::F32)?,
    };
    // Compile latency of a new ~100-node expression, then of the same one again.
    let (c100, c100_nodes) = generated(100);
    // Parse to the evaluator ready (ms), to a first one-box result on the host, and to the
    // compiled kernel ready (the interpreter answers the 100-node expression while its kernel
    // compiles: gpu::staged::InterpretedFirst).
    let compile = |text: &str| -> Result<(f64, f64, f64), String> {
        let t = Instant::now();
        let e = Expression::parse(text).map_err(|e| e.to_string())?;
        let eval =
            Evaluator::new(&e, Precision::F64, BackendChoice::Gpu).map_err(|e| e.to_string())?;
        let ready = t.elapsed().as_secs_f64() * 1e3;
        let one = vec![ivjit::Interval::new(0.25, 0.5).map_err(|e| e.to_string())?; e.vars().len()];
        eval.eval(&one).map_err(|e| e.to_string())?;
        let first = t.elapsed().as_secs_f64() * 1e3;
        if let Some(k) = eval.gpu_kernel() {
            k.wait_for_single_kernel(std::time::Duration::from_secs(60));
        }
        Ok((ready, first, t.elapsed().as_secs_f64() * 1e3))
    };
    let (c100_cold, c100_first, c100_kernel) = compile(&c100)?;
    let (c100_warm, _, _) = compile(&c100)?;
    let mut rows = Vec::new();
    for (ci, case) in cases.iter().enumerate() {
        for p in precisions() {
            let expr = variant.expression(&case.text)?;
            let nv = expr.vars().len();
            let inputs = random_inputs(
                case,
                nv,
                n,
                p,
                seed ^ ((ci as u64) << 32) ^ (p == Precision::F32) as u64,
            );
            let g = dev.row(
                &case.text,
                p,
                &inputs,
                n,
                gpu::RowFlags {
                    baseline: has_baseline(case) && variant == Variant::Plain,
                    variant,
                },
            )?;
            let mut row = named_row(case, &expr, p, n, variant)?;
            let ops = row["rounded_ops_per_box"].as_u64().unwrap_or(0) as f64;
            let bytes = row["bytes_per_box"].as_u64().unwrap_or(0) as f64;
            let ks = g.kernel_ms * 1e-3;
            let fma = match p {
                Precision::F64 => ceil.fma_f64,
                Precision::F32 => ceil.fma_f32,
            };
            let o = row.as_object_mut().expect("object");
            o.insert("kernel_ms".into(), json!(g.kernel_ms));
            o.insert("e2e_ms".into(), json!(g.e2e_ms));
            o.insert("boxes_per_s".into(), json!(n as f64 / ks));
            o.insert(
                "e2e_boxes_per_s".into(),
                json!(n as f64 / (g.e2e_ms * 1e-3)),
            );
            o.insert("bytes_per_s".into(), json!(bytes * n as f64 / ks));
            o.insert(
                "copy_fraction".into(),
                json!(bytes * n as f64 / ks / ceil.copy_bytes_per_s),
            );
            o.insert("rounded_ops_per_s".into(), json!(ops * n as f64 / ks));
            o.insert("fma_fraction".into(), json!(ops * n as f64 / ks / fma));
            if let Some(t) = g.tiers {
                o.insert("first_result_ms".into(), json!(t.first_result_ms));
                o.insert("stages_ready_ms".into(), json!(t.stages_ready_ms));
                o.insert(
                    "interpreter_boxes_per_s".into(),
                    json!(t.interpreter_boxes_per_s),
                );
            }
            if let Some((stages, ms, compile_s)) = g.staged {
                o.insert("stages".into(), json!(stages));
                o.insert("staged_kernel_ms".into(), json!(ms));
                o.insert("single_kernel_compile_s".into(), json!(compile_s));
            }
            o.insert("cold_compile_ms".into(), json!(g.cold_compile_ms));
            o.insert("parse_ms".into(), json!(g.parse_ms));
            o.insert("warm_compile_ms".into(), json!(g.warm_compile_ms));
            match &g.baseline_ms {
                Ok(b) => {
                    o.insert("baseline_ms".into(), json!(b));
                    o.insert("speedup_vs_baseline".into(), json!(b / g.kernel_ms));
                }
                Err(e) => {
                    o.insert("baseline_ms".into(), Value::Null);
                    o.insert("baseline_error".into(), json!(e));
                }
            }
            eprintln!("  {} {}: {:.3} ms", case.name, p.name(), g.kernel_ms);
            rows.push(row);
        }
    }
    let mut text = format!(
        "ivjit bench: {} (sm_{}{}), {n} boxes per expression, seed {seed}\n\
         ceilings: device copy {:.3} TB/s (read + write); FMA f64 {:.2} Tops/s, f32 {:.2} Tops/s\n\
         compile of a new {c100_nodes}-node expression (parse -> PTX -> load): {c100_cold:.2} ms \
         to the evaluator, {c100_first:.2} ms to a first one-box result, {c100_kernel:.2} ms to \
         the compiled kernel; same again: {c100_warm:.2} ms\n",
        dev.name,
        dev.cc.0,
        dev.cc.1,
        ceil.copy_bytes_per_s / 1e12,
        ceil.fma_f64 / 1e12,
        ceil.fma_f32 / 1e12,
    );
    let _ = writeln!(
        text,
        "{:<13} {:>4} {:>5} {:>6} {:>10} {:>7} {:>5} {:>8} {:>5} {:>9} {:>9} {:>9} {:>6} {:>8} {:>8}",
        "name", "prec", "nodes", "op/box", "boxes/s", "GB/s", "%copy", "Gop/s", "%fma",
        "kernel ms", "e2e ms", "base ms", "xbase", "cold ms", "warm ms"
    );
    let f = |r: &Value, k: &str| r[k].as_f64().unwrap_or(f64::NAN);
    for r in &rows {
        let _ = writeln!(
            text,
            "{:<13} {:>4} {:>5} {:>6} {:>10.3e} {:>7.0} {:>5.1} {:>8.0} {:>5.1} {:>9.4} {:>9.2} {:>9} {:>6} {:>8.1} {:>8.1}",
            r["name"].as_str().unwrap_or(""),
            r["precision"].as_str().unwrap_or(""),
            r["ir_nodes"].as_u64().unwrap_or(0),
            r["rounded_ops_per_box"].as_u64().unwrap_or(0),
            f(r, "boxes_per_s"),
            f(r, "bytes_per_s") / 1e9,
            100.0 * f(r, "copy_fraction"),
            f(r, "rounded_ops_per_s") / 1e9,
            100.0 * f(r, "fma_fraction"),
            f(r, "kernel_ms"),
            f(r, "e2e_ms"),
            r["baseline_ms"].as_f64().map(|b| format!("{b:.4}")).unwrap_or("-".into()),
            r["speedup_vs_baseline"].as_f64().map(|b| format!("{b:.2}")).unwrap_or("-".into()),
            f(r, "cold_compile_ms"),
            f(r, "warm_compile_ms"),
        );
    }
    let _ = writeln!(
        text,
        "kernel: median of {} launches between device events after {} warm-up; e2e: host->device + \
         kernel + device->host (pageable memory), median of {}; bytes: inputs read once + outputs \
         written once; ops: rounded scalar operations (each directed op one; selects, compares, \
         min/max and point-function internals not counted) vs FMA operations; cold ms: parse to \
         the evaluator ready (programs of more than 200 instructions without point functions \
         answer from the GPU interpreter from then on while their kernel compiles)",
        gpu::REPS,
        gpu::WARMUP,
        gpu::E2E_REPS
    );
    for r in &rows {
        if let Some(stages) = r["stages"].as_u64() {
            let _ = writeln!(
                text,
                "{} {}: compiled as {stages} stages first; from the parse's start: interpreter \
                 ready (cold ms) {:.1} ms, first result {:.1} ms (parse {:.1} ms), stages \
                 ready {:.1} ms; interpreter {:.3e} boxes/s; stages {:.4} ms per batch; the \
                 single kernel (kernel ms) compiled in {:.1} s on a thread of its own",
                r["name"].as_str().unwrap_or(""),
                r["precision"].as_str().unwrap_or(""),
                f(r, "cold_compile_ms"),
                f(r, "first_result_ms"),
                f(r, "parse_ms"),
                f(r, "stages_ready_ms"),
                f(r, "interpreter_boxes_per_s"),
                f(r, "staged_kernel_ms"),
                f(r, "single_kernel_compile_s"),
            );
        }
    }
    for r in &rows {
        if let Some(e) = r["baseline_error"].as_str() {
            let _ = writeln!(text, "baseline {} {}: {e}", r["name"], r["precision"]);
        }
    }
    Ok(Report {
        json: json!({
            "backend": "gpu",
            "device": dev.name,
            "compute_capability": [dev.cc.0, dev.cc.1],
            "boxes": n,
            "seed": seed,
            "ceilings": {
                "copy_bytes_per_s": ceil.copy_bytes_per_s,
                "fma_f64_ops_per_s": ceil.fma_f64,
                "fma_f32_ops_per_s": ceil.fma_f32,
            },
            "compile_100": {
                "nodes": c100_nodes,
                "cold_ms": c100_cold,
                "first_result_ms": c100_first,
                "kernel_ready_ms": c100_kernel,
                "warm_ms": c100_warm,
            },
            "rows": rows,
        }),
        text,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_case_parses_and_has_a_baseline() {
        for c in suite().into_iter().filter(has_baseline) {
            let e = Expression::parse(&c.text).unwrap();
            for p in precisions() {
                baseline::cuda_source(e.initial_ir(), p).unwrap();
            }
        }
    }
}
