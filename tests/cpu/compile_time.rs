//! The CPU-side steps of compiling the 100-node benchmark expression (`ivjit bench`'s
//! `compile_100`), timed one by one. Ignored by default: it prints timings and asserts nothing
//! about speed (no speed targets in tests). Run with
//! `cargo test --release --test compile_time -- --ignored --nocapture`.

use std::time::Instant;

use ivjit::internals::{gpu, ptx};
use ivjit::{BackendChoice, Evaluator, Expression, Precision};

/// Median time of `f` in microseconds over `reps` runs, after one warm-up run.
fn micros<T>(reps: usize, mut f: impl FnMut() -> T) -> f64 {
    std::hint::black_box(f());
    let mut times: Vec<f64> = (0..reps)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(f());
            t.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

#[test]
#[ignore = "prints timings; run by hand"]
fn print_compile_steps_of_the_100_node_expression() {
    let (text, nodes) = crate::common::workloads::generated(100);
    let expr = Expression::parse(&text).unwrap();
    let p = Precision::F64;
    let program = expr.scalar(p).unwrap();
    let ast = ivjit::internals::syntax::parser::parse(&text).unwrap();
    let initial =
        ivjit::internals::ir::build::build(&ast, Some(ivjit::internals::lower::fold)).unwrap();
    let graph = ivjit::internals::rewrite::run_all(&initial);
    println!(
        "100-node expression: {nodes} nodes, {} scalar instructions; median of 200 runs",
        program.insts.len()
    );
    let reps = 200;
    let show = |what: &str, us: f64| println!("{what:<58} {us:9.1} us");
    show(
        "Expression::parse (all of the next four)",
        micros(reps, || Expression::parse(&text).unwrap()),
    );
    show(
        "  syntax",
        micros(reps, || {
            ivjit::internals::syntax::parser::parse(&text).unwrap()
        }),
    );
    show(
        "  IR build",
        micros(reps, || {
            ivjit::internals::ir::build::build(&ast, Some(ivjit::internals::lower::fold)).unwrap()
        }),
    );
    show(
        "  rewrites",
        micros(reps, || ivjit::internals::rewrite::run_all(&initial)),
    );
    show(
        "  lowering (f64)",
        micros(reps, || ivjit::internals::lower::lower(&graph, p).unwrap()),
    );
    show("Program::verify", micros(reps, || program.verify()));
    show("ptx::emit", micros(reps, || ptx::emit(&program)));
    // Calls on an expression that has been used before.
    show(
        "Expression::scalar(f64), again",
        micros(reps, || expr.scalar(p).unwrap()),
    );
    show(
        "Expression::ptx(f64), again",
        micros(reps, || expr.ptx(p).unwrap()),
    );
    // The first detection is paid once per process; these are the calls after it.
    show("gpu::detect, again", micros(reps, gpu::detect));
    show(
        "gpu::default_devices, again",
        micros(reps, gpu::default_devices),
    );
    show(
        "Evaluator::new(.., Cpu), again",
        micros(reps, || {
            Evaluator::new(&expr, p, BackendChoice::Cpu).unwrap()
        }),
    );
    show(
        "Evaluator::new(.., Auto), again",
        micros(reps, || {
            Evaluator::new(&expr, p, BackendChoice::Auto).unwrap()
        }),
    );
    show(
        "Evaluator::new(.., Gpu), again (fails without a GPU)",
        micros(reps, || {
            Evaluator::new(&expr, p, BackendChoice::Gpu).is_ok()
        }),
    );
    // What `ivjit bench` times as "same again": a new parse, then a GPU evaluator. The CPU side
    // of the GPU evaluator is the PTX (check, emit, cache key) and the cached lookups.
    show(
        "parse + Evaluator::new(.., Cpu)",
        micros(reps, || {
            let e = Expression::parse(&text).unwrap();
            Evaluator::new(&e, p, BackendChoice::Cpu).unwrap()
        }),
    );
    show(
        "parse + Expression::ptx(f64)",
        micros(reps, || {
            let e = Expression::parse(&text).unwrap();
            e.ptx(p).unwrap()
        }),
    );
}
