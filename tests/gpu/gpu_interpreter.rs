//! The GPU interpreter (`ivjit::internals::gpu::interpreter`) computes the compiled kernels' bits: the
//! same batch through the CLI on the CPU evaluator, on the GPU with `IVJIT_INTERPRETER=only`
//! (every program on the interpreter) and with `never` (compiled: stages for the long programs,
//! one kernel for the others), `.npy` outputs compared byte for byte. And a process whose
//! stages or kernel are still compiling in the background when it is done answers from the
//! interpreter and exits cleanly. Runs with `--features gpu-tests` (ignored without it).

use std::process::Command;

use crate::common::binary::ivjit_binary as binary;

/// A CSV batch of `n` boxes over `vars`: random boxes of [-3, 3] of random widths, with points,
/// boxes touching or holding 0, wide and empty ones among them.
fn boxes(vars: &[String], n: usize, seed: u64) -> String {
    let mut state = seed;
    let mut next = || {
        // SplitMix64, as `crate::common::workloads`.
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let mut text: Vec<String> = vec![vars
        .iter()
        .flat_map(|v| [format!("{v}_lo"), format!("{v}_hi")])
        .collect::<Vec<_>>()
        .join(",")];
    for row in 0..n {
        let mut cells = Vec::new();
        for _ in vars {
            let u = (next() >> 11) as f64 / (1u64 << 53) as f64;
            let w = (next() >> 11) as f64 / (1u64 << 53) as f64;
            let lo = -3.0 + 6.0 * u;
            let (lo, hi) = match (row + cells.len()) % 9 {
                0 => (lo, lo),
                1 => (0.0, w),
                2 => (-w, 0.0),
                3 => (-w, w),
                4 => (-1e300 * w, 1e300),
                5 => (0.0, 0.0),
                _ => (lo, lo + w * 10f64.powi(-((next() % 8) as i32))),
            };
            if row % 97 == 13 {
                cells.extend(["empty".to_string(), "empty".to_string()]);
            } else {
                cells.extend([format!("{lo:e}"), format!("{hi:e}")]);
            }
        }
        text.push(cells.join(","));
    }
    text.join("\n") + "\n"
}

#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn interpreter_gives_the_compiled_bits() {
    crate::common::gpu::require_gpu("interpreter_gives_the_compiled_bits");
    let dir = tempfile::tempdir().unwrap();
    let generated = crate::common::workloads::generated(300).0;
    let sources: Vec<(String, String)> = vec![
        ("powers".into(), "x^4 - 5*x^2 + y^4 - 5*y^2 + 11.8".into()),
        (
            "quotients".into(),
            "min(x, y) / max(y, x) + abs(x - y) * sqrt(abs(y)) - x*y, x / y".into(),
        ),
        (
            "rounding".into(),
            "floor(x*y) + round(y) / hull(x, y) * intersect(y, x) + ceil(x) - trunc(y) + sign(x)"
                .into(),
        ),
        ("generated".into(), generated),
        (
            "prospero".into(),
            // The text `-f prospero.vm` spells.
            crate::common::workloads::prospero(),
        ),
    ];
    for (k, (name, src)) in sources.iter().enumerate() {
        let file = dir.path().join(format!("{name}.txt"));
        std::fs::write(&file, src).unwrap();
        let expr = ivjit::Expression::parse(src).unwrap();
        let insts = expr.scalar(ivjit::Precision::F64).unwrap().insts.len();
        assert_eq!(
            insts > 4000,
            name == "prospero",
            "{name}: {insts} instructions"
        );
        let vars: Vec<String> = expr.vars().iter().map(|v| v.to_string()).collect();
        let input = dir.path().join(format!("{name}.csv"));
        std::fs::write(&input, boxes(&vars, 1500, 1788 + k as u64)).unwrap();
        for precision in ["f64", "f32"] {
            let mut outputs = Vec::new();
            let runs = [
                ("cpu", "never", "cache"),
                ("gpu", "only", "cache"),
                ("gpu", "never", "cache"),
                // An empty cache: the stages compile in the background, the interpreter
                // answers, and the process exits while they compile.
                ("gpu", "first", "fresh"),
            ];
            for (backend, policy, cache) in runs {
                let out = dir
                    .path()
                    .join(format!("{name}-{precision}-{backend}-{policy}.npy"));
                let o = Command::new(binary())
                    .arg("eval")
                    .arg("-f")
                    .arg(&file)
                    .arg("--input")
                    .arg(&input)
                    .arg("--output")
                    .arg(&out)
                    .args(["--backend", backend, "--precision", precision])
                    .env("IVJIT_INTERPRETER", policy)
                    .env("IVJIT_STAGE_TRACE", "1")
                    .env(
                        "IVJIT_CACHE_DIR",
                        dir.path().join(format!("{cache}-{name}-{precision}")),
                    )
                    .env("CUDA_CACHE_DISABLE", "1")
                    .output()
                    .unwrap();
                let err = String::from_utf8_lossy(&o.stderr);
                assert!(
                    o.status.success(),
                    "{name} {precision} {backend} {policy}: {:?}\n{err}",
                    o.status
                );
                let interpreted = err.contains("ivjit interpreter: answers");
                // Programs of more than 200 instructions without point calls answer from the
                // interpreter while their kernel (or above 4,000, their stages) compiles
                // (`gpu::staged`).
                let long = insts > 200;
                match (backend, policy) {
                    ("gpu", "only") => assert!(interpreted, "{name} {precision}: {err}"),
                    ("gpu", "first") => assert_eq!(interpreted, long, "{name}: {err}"),
                    _ => assert!(!interpreted, "{name} {precision} {policy}: {err}"),
                }
                outputs.push((backend, policy, std::fs::read(&out).unwrap()));
            }
            let (_, _, cpu) = &outputs[0];
            for (backend, policy, bytes) in &outputs[1..] {
                assert!(
                    bytes == cpu,
                    "{name} {precision}: {backend} with IVJIT_INTERPRETER={policy} differs from the CPU evaluator"
                );
            }
        }
    }
}
