//! The CPU-side steps of compiling the 100-node benchmark expression (`ivjit bench`'s
//! `compile_100`), timed one by one. Ignored by default: it prints timings and asserts nothing
//! about speed (no speed targets in tests). Run with
//! `cargo test --release --test compile_time -- --ignored --nocapture`.

use std::time::Instant;

use ivjit::{gpu, ptx, BackendChoice, Evaluator, Expression, Precision};

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
    let (text, nodes) = ivjit::bench::generated(100);
    let expr = Expression::parse(&text).unwrap();
    let p = Precision::F64;
    let program = expr.scalar(p).unwrap();
    let reps = 200;
    println!(
        "100-node expression: {nodes} nodes, {} scalar instructions",
        program.insts.len()
    );
    println!(
        "parse (syntax + IR + rewrites + f64 lowering): {:9.1} us",
        micros(reps, || Expression::parse(&text).unwrap())
    );
    let ast = ivjit::syntax::parser::parse(&text).unwrap();
    let initial = ivjit::ir::build::build(&ast).unwrap();
    let graph = ivjit::rewrite::run_all(&initial);
    println!(
        "  syntax:                                      {:9.1} us",
        micros(reps, || ivjit::syntax::parser::parse(&text).unwrap())
    );
    println!(
        "  IR build:                                    {:9.1} us",
        micros(reps, || ivjit::ir::build::build(&ast).unwrap())
    );
    println!(
        "  rewrites:                                    {:9.1} us",
        micros(reps, || ivjit::rewrite::run_all(&initial))
    );
    println!(
        "  lowering (f64):                              {:9.1} us",
        micros(reps, || ivjit::lower::lower(&graph, p).unwrap())
    );
    println!(
        "Expression::scalar(f64):                       {:9.1} us",
        micros(reps, || expr.scalar(p).unwrap())
    );
    println!(
        "ptx::check:                                    {:9.1} us",
        micros(reps, || ptx::check(&program))
    );
    println!(
        "ptx::emit:                                     {:9.1} us",
        micros(reps, || ptx::emit(&program))
    );
    println!(
        "Expression::ptx(f64):                          {:9.1} us",
        micros(reps, || expr.ptx(p).unwrap())
    );
    println!(
        "gpu::detect:                                   {:9.1} us",
        micros(reps, gpu::detect)
    );
    println!(
        "gpu::default_devices:                          {:9.1} us",
        micros(reps, gpu::default_devices)
    );
    println!(
        "Evaluator::new(.., Cpu):                       {:9.1} us",
        micros(reps, || Evaluator::new(&expr, p, BackendChoice::Cpu)
            .unwrap())
    );
    println!(
        "Evaluator::new(.., Auto):                      {:9.1} us",
        micros(reps, || Evaluator::new(&expr, p, BackendChoice::Auto)
            .unwrap())
    );
    println!(
        "parse + Evaluator::new(.., Cpu) (bench's \"same again\" on the CPU): {:9.1} us",
        micros(reps, || {
            let e = Expression::parse(&text).unwrap();
            Evaluator::new(&e, p, BackendChoice::Cpu).unwrap()
        })
    );
    println!(
        "Evaluator::new(.., Gpu) (fails without a GPU): {:9.1} us",
        micros(reps, || Evaluator::new(&expr, p, BackendChoice::Gpu)
            .is_ok())
    );
}
