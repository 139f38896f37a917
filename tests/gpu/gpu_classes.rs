//! The class matrix (issue 29, `tests/common/classes.rs`) on the GPU's engines, each result
//! checked against the rigorous oracles' witnesses (never against the CPU):
//! - the compiled kernel of each operation alone (`Evaluator` on the GPU): short programs,
//!   with the inline directed f32 division and f64 square root;
//! - one program of every operation applied to (x, y, z) in three rotations (every argument
//!   position, 289 outputs, over 4000 scalar instructions): run as stages and, once compiled,
//!   as one kernel (the division and root subroutines of long programs);
//! - the same for the operations without point functions, run also on the GPU interpreter of
//!   scalar bytecode.
//!
//! Containment, validity and the empty rule are asserted; the slack (steps outside the
//! witnesses' hull) is reported per operation and engine, not bounded (the GPU's point
//! functions are padded by CUDA's documented error, `ivjit functions`). Runs with
//! `--features gpu-tests` (ignored without it); `class_matrix_dry_run_on_the_cpu` runs the
//! same harness on the CPU evaluator everywhere. `IVJIT_CLASSES_OUT=DIR` writes each engine's
//! class x operation table there.

use crate::common::classes::{self as cl, Class, Expected, Memo, Op, Tally};
use crate::common::oracle::Fmt;
use cudarc::driver::{CudaContext, CudaSlice, DevicePtr, DevicePtrMut};
use ivjit::internals::gpu::{self, GpuKernel, KernelOptions, Tier};
use ivjit::{BackendChoice, Evaluator, Expression, Precision};
use rayon::prelude::*;
use std::collections::HashMap;
use std::time::Duration;

fn prec(fmt: Fmt) -> Precision {
    match fmt {
        Fmt::F64 => Precision::F64,
        Fmt::F32 => Precision::F32,
    }
}

/// One engine's tallies per operation, for the report.
struct EngineReport {
    engine: String,
    rows: Vec<(String, Fmt, Tally)>,
}

impl EngineReport {
    fn failures(&self) -> Vec<String> {
        self.rows
            .iter()
            .flat_map(|(_, _, t)| t.failures.iter().cloned())
            .collect()
    }
}

/// A row of a combined program's batch: one box per variable, and its label.
type Row = (Vec<(f64, f64)>, String);

/// The variables of the combined programs, in order.
const VARS: [&str; 6] = ["x", "y", "z", "u", "v", "w"];

/// Rows of boxes for a combined program of `nvars` variables: every class in every position
/// with companions in the others, and a third of the pairs of classes outside the binade and
/// point groups (in the first two positions).
fn combined_rows(classes: &[Class], nvars: usize) -> Vec<Row> {
    let k = cl::companions();
    let mut rows = Vec::new();
    let lab = |b: (f64, f64)| format!("[{}, {}]", cl::hx(b.0), cl::hx(b.1));
    let label = |r: &[(f64, f64)]| r.iter().map(|&x| lab(x)).collect::<Vec<_>>().join(" x ");
    for (i, c) in classes.iter().enumerate() {
        for pos in 0..nvars {
            let r: Vec<(f64, f64)> = (0..nvars)
                .map(|v| {
                    if v == pos {
                        (c.lo, c.hi)
                    } else {
                        k[(i + v) % k.len()]
                    }
                })
                .collect();
            let l = label(&r);
            rows.push((r, l));
        }
    }
    let core: Vec<&Class> = classes
        .iter()
        .filter(|c| !matches!(c.group, "binade pair" | "point"))
        .collect();
    for (i, a) in core.iter().enumerate() {
        for (j, b) in core.iter().enumerate() {
            if (i + j) % 3 == 0 {
                let mut r = vec![(a.lo, a.hi), (b.lo, b.hi)];
                r.extend((2..nvars).map(|v| k[(i + j + v) % k.len()]));
                let l = label(&r);
                rows.push((r, l));
            }
        }
    }
    rows
}

/// A program of `ops` applied to `nvars` variables in every rotation (each argument position
/// sees each variable): the expression and, per output, the operation and which variables
/// its arguments are.
fn combined(ops: &[Op], nvars: usize) -> (Expression, Vec<(usize, Vec<usize>)>) {
    let mut srcs = Vec::new();
    let mut outs = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        for r in 0..nvars {
            let args: Vec<usize> = (0..op.arity).map(|a| (r + a) % nvars).collect();
            let vars: Vec<&str> = args.iter().map(|&a| VARS[a]).collect();
            srcs.push(cl::apply(&op.tmpl, &vars));
            outs.push((i, args));
        }
    }
    let expr = Expression::parse(&srcs.join(", ")).unwrap();
    assert_eq!(
        expr.vars(),
        &VARS[..nvars],
        "the combined program's variables"
    );
    (expr, outs)
}

/// Variables of the combined programs: three for every operation (12,992 f64 instructions),
/// six for those without point calls (a program of three would be 2,662 instructions, too
/// short to run as stages, and only staged programs have the interpreter tier on demand).
fn nvars_of(point_free: bool) -> usize {
    if point_free {
        6
    } else {
        3
    }
}

/// The results of a launch of `kernel` (a tier, or the single kernel when `tier` is None) on
/// the rows, as per-output pairs.
fn launch(
    kernel: &GpuKernel,
    tier: Option<Tier>,
    fmt: Fmt,
    rows: &[Row],
    n_outputs: usize,
) -> Option<Vec<Vec<(f64, f64)>>> {
    let n = rows.len();
    let nvars = rows[0].0.len();
    let mut inputs = vec![0.0; 2 * nvars * n];
    for (i, (r, _)) in rows.iter().enumerate() {
        for (v, b) in r.iter().enumerate() {
            inputs[2 * v * n + i] = b.0;
            inputs[(2 * v + 1) * n + i] = b.1;
        }
    }
    let out: Vec<f64> = match tier {
        None => kernel.eval(&inputs, n).unwrap(),
        Some(t) => {
            let ctx = CudaContext::new(kernel.device_ordinals()[0]).unwrap();
            let stream = ctx.default_stream();
            macro_rules! run {
                ($t:ty) => {{
                    let host: Vec<$t> = inputs.iter().map(|&x| x as $t).collect();
                    let d_in: CudaSlice<$t> = stream.clone_htod(&host).unwrap();
                    // Poisoned: every element must be written.
                    let poison = vec![<$t>::from(7.0f32); 2 * n_outputs * n];
                    let mut d_out: CudaSlice<$t> = stream.clone_htod(&poison).unwrap();
                    let launched = {
                        let (inp, _gi) = d_in.device_ptr(&stream);
                        let (outp, _go) = d_out.device_ptr_mut(&stream);
                        // SAFETY: n rows of nvars variables in and n_outputs out, on the
                        // stream of the kernel's device's primary context.
                        unsafe { kernel.launch_tier_on(t, &stream, n, inp, outp) }.unwrap()
                    };
                    if !launched {
                        return None;
                    }
                    stream
                        .clone_dtoh(&d_out)
                        .unwrap()
                        .into_iter()
                        .map(|x| x as f64)
                        .collect()
                }};
            }
            match fmt {
                Fmt::F64 => run!(f64),
                Fmt::F32 => run!(f32),
            }
        }
    };
    Some(
        (0..n_outputs)
            .map(|j| {
                (0..n)
                    .map(|i| (out[2 * j * n + i], out[(2 * j + 1) * n + i]))
                    .collect()
            })
            .collect(),
    )
}

/// A combined program's results on the CPU evaluator (the dry run).
fn cpu_rows(ev: &Evaluator, rows: &[Row], n_outputs: usize) -> Vec<Vec<(f64, f64)>> {
    let n = rows.len();
    let nvars = rows[0].0.len();
    let mut inputs = vec![0.0; 2 * nvars * n];
    for (i, (r, _)) in rows.iter().enumerate() {
        for (v, b) in r.iter().enumerate() {
            inputs[2 * v * n + i] = b.0;
            inputs[(2 * v + 1) * n + i] = b.1;
        }
    }
    let out = ev.eval_soa(&inputs, n).unwrap();
    (0..n_outputs)
        .map(|j| {
            (0..n)
                .map(|i| (out[2 * j * n + i], out[(2 * j + 1) * n + i]))
                .collect()
        })
        .collect()
}

/// Checks a combined program's engine results: per operation, the tally over its three
/// outputs on every row.
#[allow(clippy::too_many_arguments)]
fn check_combined(
    engine: &str,
    fmt: Fmt,
    ops: &[Op],
    classes: &[Class],
    rows: &[Row],
    outs: &[(usize, Vec<usize>)],
    expected: &CombinedExpected,
    results: &[Vec<(f64, f64)>],
) -> EngineReport {
    let mut per_op: HashMap<usize, Tally> = HashMap::new();
    for (j, (i, args)) in outs.iter().enumerate() {
        let op = &ops[*i];
        let cells: Vec<(Vec<(f64, f64)>, String)> = rows
            .iter()
            .map(|(r, label)| (args.iter().map(|&a| r[a]).collect(), label.clone()))
            .collect();
        let exp = expected.of_output(outs, j);
        let t = cl::tally(op, fmt, engine, classes, &cells, &exp, &results[j], |b| {
            !cl::trig_index_inexact(op, fmt, b)
        });
        let e = per_op.entry(*i).or_default();
        e.cells += t.cells;
        e.failures.extend(t.failures);
        e.max_slack = e.max_slack.max(t.max_slack);
        for (g, v) in t.groups {
            let w = e.groups.entry(g).or_insert((0, 0, 0, 0));
            w.0 += v.0;
            w.1 += v.1;
            w.2 = w.2.max(v.2);
            w.3 += v.3;
        }
    }
    let mut rows_out: Vec<(String, Fmt, Tally)> = per_op
        .into_iter()
        .map(|(i, t)| (ops[i].src.clone(), fmt, t))
        .collect();
    rows_out.sort_by(|a, b| a.0.cmp(&b.0));
    EngineReport {
        engine: engine.to_string(),
        rows: rows_out,
    }
}

/// The expectations of every output on every row: per operation, its distinct argument
/// boxes' expectations (computed once), and per output the index of each row's.
struct CombinedExpected {
    per_op: Vec<Vec<Expected>>,
    index: Vec<Vec<usize>>,
}

impl CombinedExpected {
    fn of_output(&self, outs: &[(usize, Vec<usize>)], j: usize) -> Vec<&Expected> {
        let op = outs[j].0;
        self.index[j].iter().map(|&k| &self.per_op[op][k]).collect()
    }
}

fn combined_expectations(
    ops: &[Op],
    rows: &[Row],
    outs: &[(usize, Vec<usize>)],
) -> CombinedExpected {
    let mut seen: Vec<HashMap<Vec<u64>, usize>> = ops.iter().map(|_| HashMap::new()).collect();
    let mut boxes_of: Vec<Vec<Vec<(f64, f64)>>> = ops.iter().map(|_| Vec::new()).collect();
    let mut index: Vec<Vec<usize>> = Vec::new();
    for (i, args) in outs {
        let mut idx = Vec::with_capacity(rows.len());
        for (r, _) in rows {
            let b: Vec<(f64, f64)> = args.iter().map(|&a| r[a]).collect();
            let key: Vec<u64> = b
                .iter()
                .flat_map(|x| [x.0.to_bits(), x.1.to_bits()])
                .collect();
            let n = boxes_of[*i].len();
            let k = *seen[*i].entry(key).or_insert(n);
            if k == n {
                boxes_of[*i].push(b);
            }
            idx.push(k);
        }
        index.push(idx);
    }
    let per_op = ops
        .par_iter()
        .zip(boxes_of.par_iter())
        .map(|(op, boxes)| {
            let mut memo = Memo::default();
            boxes.iter().map(|b| cl::expect(op, b, &mut memo)).collect()
        })
        .collect();
    CombinedExpected { per_op, index }
}

/// The matrix's GPU run.
#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn class_matrix_on_the_gpu_engines() {
    crate::common::gpu::require_gpu("class_matrix_on_the_gpu_engines");
    class_matrix(false);
}

/// The same plumbing as the GPU run (cells, combined programs, rows, expectations, reports) with
/// the CPU evaluator in place of every GPU engine: checks the GPU test itself where there is no
/// GPU, so that its harness is not first exercised on the device machine. Every 64th class
/// (`IVJIT_CLASSES_STRIDE` overrides): the cells themselves are the CPU matrix's
/// (tests/cpu/classes.rs); this checks the plumbing, in a fifth of the time.
#[test]
fn class_matrix_dry_run_on_the_cpu() {
    class_matrix(true);
}

fn class_matrix(dry: bool) {
    let backend = if dry {
        BackendChoice::Cpu
    } else {
        BackendChoice::Gpu
    };
    let t0 = std::time::Instant::now();
    let ops = cl::selected_ops();
    let mut reports: Vec<EngineReport> = Vec::new();
    for fmt in [Fmt::F64, Fmt::F32] {
        let p = prec(fmt);
        let stride = if dry && std::env::var_os("IVJIT_CLASSES_STRIDE").is_none() {
            64
        } else {
            cl::stride()
        };
        let classes = cl::classes(fmt, stride);
        // 1. Each operation's own kernel, on its cells.
        let mut rep = EngineReport {
            engine: "gpu kernel per operation".into(),
            rows: Vec::new(),
        };
        #[allow(clippy::type_complexity)]
        let per_op: Vec<(Vec<(Vec<(f64, f64)>, String)>, Vec<Expected>)> = ops
            .par_iter()
            .map(|op| {
                let cells = cl::cells(op, &classes);
                let mut memo = Memo::default();
                let exp = cells
                    .iter()
                    .map(|(b, _)| cl::expect(op, b, &mut memo))
                    .collect();
                (cells, exp)
            })
            .collect();
        for (op, (cells, exp)) in ops.iter().zip(&per_op) {
            let expr = Expression::parse(&op.src).unwrap();
            let ev = Evaluator::new(&expr, p, backend).unwrap();
            let n = cells.len();
            let got = cl::unpack(&ev.eval_soa(&cl::soa(cells, op.arity), n).unwrap(), n);
            let exp: Vec<&Expected> = exp.iter().collect();
            let t = cl::tally(op, fmt, "gpu kernel", &classes, cells, &exp, &got, |b| {
                !cl::trig_index_inexact(op, fmt, b)
            });
            rep.rows.push((op.src.clone(), fmt, t));
        }
        reports.push(rep);
        eprintln!(
            "{fmt:?}: per-operation kernels checked at {:.1?}",
            t0.elapsed()
        );
        // 2. and 3. The combined programs: every operation, and those without point calls.
        let point_free: Vec<Op> = ops
            .iter()
            .filter(|o| {
                !Expression::parse(&o.src)
                    .unwrap()
                    .scalar(p)
                    .unwrap()
                    .has_point_calls()
            })
            .cloned()
            .collect();
        for (what, set) in [("all operations", ops.clone()), ("point-free", point_free)] {
            let nvars = nvars_of(what == "point-free");
            let rows = combined_rows(&classes, nvars);
            let (expr, outs) = combined(&set, nvars);
            let program = expr.scalar(p).unwrap();
            let expected = combined_expectations(&set, &rows, &outs);
            if dry {
                let ev = Evaluator::new(&expr, p, BackendChoice::Cpu).unwrap();
                let got = cpu_rows(&ev, &rows, outs.len());
                reports.push(check_combined(
                    &format!("cpu, dry run ({what})"),
                    fmt,
                    &set,
                    &classes,
                    &rows,
                    &outs,
                    &expected,
                    &got,
                ));
                continue;
            }
            // No disk cache: a single kernel an earlier process compiled for this program would
            // be loaded instead of the stages this test is about (run 77: the second run of
            // the suite on one machine).
            let options = KernelOptions {
                cache_dir: ivjit::CacheDir::Off,
                ..KernelOptions::default()
            };
            let kernel = GpuKernel::with_options(&program, &options).unwrap();
            eprintln!(
                "{fmt:?} {what}: {} instructions, {} outputs, {} rows, staged: {:?} ({:.1?})",
                program.insts.len(),
                outs.len(),
                rows.len(),
                kernel.staged(),
                t0.elapsed()
            );
            assert!(
                kernel.staged().is_some(),
                "{what}: the combined program must be long enough to run as stages"
            );
            let mut tiers = vec![(Some(Tier::Stages), "stages")];
            if what == "point-free" {
                tiers.push((Some(Tier::Interpreter), "gpu interpreter"));
            }
            for (tier, name) in tiers {
                let got = launch(&kernel, tier, fmt, &rows, outs.len())
                    .unwrap_or_else(|| panic!("{what}: the {name} tier did not launch"));
                reports.push(check_combined(
                    &format!("{name} ({what})"),
                    fmt,
                    &set,
                    &classes,
                    &rows,
                    &outs,
                    &expected,
                    &got,
                ));
            }
            assert!(
                kernel.wait_for_single_kernel(Duration::from_secs(480)),
                "{what}: the single kernel compiled"
            );
            let got = launch(&kernel, None, fmt, &rows, outs.len()).unwrap();
            reports.push(check_combined(
                &format!("single kernel ({what})"),
                fmt,
                &set,
                &classes,
                &rows,
                &outs,
                &expected,
                &got,
            ));
            eprintln!("{fmt:?} {what}: checked at {:.1?}", t0.elapsed());
        }
    }
    let dir = std::env::var("IVJIT_CLASSES_OUT").ok();
    let mut failures = Vec::new();
    for r in &reports {
        let cells: usize = r.rows.iter().map(|x| x.2.cells).sum();
        let f = r.failures();
        let worst = r
            .rows
            .iter()
            .max_by_key(|x| x.2.max_slack)
            .map(|x| format!("{} {:?}: {}", x.0, x.1, x.2.max_slack))
            .unwrap_or_default();
        println!(
            "{}: {} cells, {} failing; largest slack {worst}",
            r.engine,
            cells,
            f.len()
        );
        failures.extend(f);
        if let Some(d) = &dir {
            let rows: Vec<(String, Fmt, &Tally)> =
                r.rows.iter().map(|(a, b, t)| (a.clone(), *b, t)).collect();
            let name: String = r
                .engine
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                .collect();
            std::fs::write(format!("{d}/{name}.md"), cl::report(&rows)).unwrap();
        }
    }
    println!("gpu class matrix: {:.1?}", t0.elapsed());
    if let (Ok(path), false) = (std::env::var("IVJIT_CLASSES_DOC"), dry) {
        let device = gpu::detect()
            .ok()
            .map(|i| {
                format!(
                    "{} (sm_{}{})",
                    i.name, i.compute_capability.0, i.compute_capability.1
                )
            })
            .unwrap_or_default();
        let mut body = format!(
            "## Interval classes: GPU (class matrix)\n\n\
             Generated on the GPU machine by `tests/gpu/gpu_classes.rs` \
             (`--features gpu-tests`, `IVJIT_CLASSES_DOC=docs/conformance.md`), stride {}, on {}. \
             Containment, validity and the empty rule are asserted on every engine; the slack \
             is reported (the GPU's point functions are CUDA's, padded by their documented \
             error). Per engine: cells checked, failing cells, the largest slack.\n\n\
             | engine | cells | failing | largest slack |\n|---|--:|--:|---|\n",
            cl::stride(),
            device.chars().take(200).collect::<String>()
        );
        for r in &reports {
            let cells: usize = r.rows.iter().map(|x| x.2.cells).sum();
            let worst = r
                .rows
                .iter()
                .max_by_key(|x| x.2.max_slack)
                .map(|x| format!("{} ({:?}): {}", x.0, x.1, x.2.max_slack))
                .unwrap_or_default();
            body.push_str(&format!(
                "| {} | {cells} | {} | {worst} |\n",
                r.engine,
                r.failures().len()
            ));
        }
        body.push_str(&format!(
            "\nThe kernels of each operation alone, per class group:\n\n{}\n\n",
            cl::LEGEND
        ));
        let per_op: Vec<(String, Fmt, &Tally)> = reports
            .iter()
            .filter(|r| r.engine == "gpu kernel per operation")
            .flat_map(|r| r.rows.iter().map(|(a, b, t)| (a.clone(), *b, t)))
            .collect();
        body.push_str(&cl::report(&per_op));
        cl::splice_section(&path, "gpu", &body);
    }
    assert!(
        failures.is_empty(),
        "{} failures (first {}):\n{}",
        failures.len(),
        failures.len().min(60),
        failures[..failures.len().min(60)].join("\n")
    );
}

/// The combined programs are long enough to be compiled as stages (the stages and the
/// interpreter tiers run only for those), in both precisions; checked without a GPU.
#[test]
fn combined_class_programs_run_as_stages() {
    for p in [Precision::F64, Precision::F32] {
        let ops = cl::ops();
        let point_free: Vec<Op> = ops
            .iter()
            .filter(|o| {
                !Expression::parse(&o.src)
                    .unwrap()
                    .scalar(p)
                    .unwrap()
                    .has_point_calls()
            })
            .cloned()
            .collect();
        for (what, set) in [("all", ops), ("point-free", point_free)] {
            let (expr, outs) = combined(&set, nvars_of(what == "point-free"));
            let program = expr.scalar(p).unwrap();
            println!(
                "{p:?} {what}: {} operations, {} outputs, {} instructions",
                set.len(),
                outs.len(),
                program.insts.len()
            );
            assert!(
                program.insts.len() > ivjit::internals::gpu::STAGED_ABOVE,
                "{p:?} {what}"
            );
            assert_eq!(program.has_point_calls(), what == "all");
        }
    }
}

/// Issue 29's cases on the GPU (the CPU's are in tests/cpu/semantics.rs): a box between two
/// huge floats, or up to infinity, spans astronomically many periods; [-1, 1] is the true
/// range and the tightest enclosure.
#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn periodic_functions_on_unbounded_and_huge_boxes_on_the_gpu() {
    crate::common::gpu::require_gpu("periodic_functions_on_unbounded_and_huge_boxes_on_the_gpu");
    use ivjit::Interval;
    let iv = |lo: f64, hi: f64| Interval::new(lo, hi).unwrap();
    let (inf, max) = (f64::INFINITY, f64::MAX);
    let max32 = f32::MAX as f64;
    let below_max32 = f32::from_bits(f32::MAX.to_bits() - 1) as f64;
    let cases: &[(&str, Precision, Interval)] = &[
        ("sinpi(x)", Precision::F32, iv(max32, inf)),
        ("cospi(x)", Precision::F32, iv(max32, inf)),
        ("sinpi(x)", Precision::F32, iv(below_max32, max32)),
        ("sinpi(x)", Precision::F64, iv(-inf, -1e308)),
        ("cospi(x)", Precision::F64, iv(max, inf)),
        ("sin(x)", Precision::F64, iv(max, inf)),
        ("cos(x)", Precision::F32, iv(-inf, -max32)),
    ];
    for (src, p, x) in cases {
        let e = Expression::parse(src).unwrap();
        let ev = Evaluator::new(&e, *p, BackendChoice::Gpu).unwrap();
        let got = ev.eval(&[*x]).unwrap()[0];
        assert_eq!(got, iv(-1.0, 1.0), "{src} ({p:?}) on {x}");
    }
}
