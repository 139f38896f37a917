//! Faults on the GPU path, through the CLI as a user meets them: concurrent processes sharing
//! one disk cache (and finding it corrupted), a device allocation that fails mid-batch, and a
//! process that exits while a kernel compiles in the background.
//! Runs with `--features gpu-tests` (ignored without it).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

use crate::common::binary as support;
use support::ivjit_binary as binary;

fn run(args: &[&str], envs: &[(&str, &Path)]) -> Output {
    let mut cmd = Command::new(binary());
    cmd.args(args);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.output().expect("ivjit runs")
}

const EXPR: &str = "exp(x) * sin(y) + x^3 - sqrt(y)";
const ARGS: [&str; 8] = [
    "eval",
    EXPR,
    "--var",
    "x=[0.5,1.5]",
    "--var",
    "y=[2,3]",
    "--backend",
    "gpu",
];

/// Runs `count` processes at once and returns their outputs.
fn concurrently(count: usize, cache: &Path) -> Vec<Output> {
    let children: Vec<_> = (0..count)
        .map(|_| {
            Command::new(binary())
                .args(ARGS)
                .env("IVJIT_CACHE_DIR", cache)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("spawn ivjit")
        })
        .collect();
    children
        .into_iter()
        .map(|c| c.wait_with_output().expect("wait"))
        .collect()
}

#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn disk_cache_survives_concurrent_processes_and_corruption() {
    crate::common::gpu::require_gpu("disk_cache_survives_concurrent_processes_and_corruption");
    let cache = tempfile::tempdir().unwrap();
    // The reference: one process, cache off to the side.
    let alone = tempfile::tempdir().unwrap();
    let reference = run(&ARGS, &[("IVJIT_CACHE_DIR", alone.path())]);
    assert!(
        reference.status.success(),
        "{}",
        String::from_utf8_lossy(&reference.stderr)
    );
    // Eight processes filling one empty cache at the same time.
    for o in concurrently(8, cache.path()) {
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(o.stdout, reference.stdout, "same answer from every process");
    }
    let entries: Vec<PathBuf> = std::fs::read_dir(cache.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(!entries.is_empty(), "the processes filled the cache");
    println!("cache entries: {entries:?}");
    // Corrupt every entry (flip bytes in one half, truncate the other), then run 8 again.
    for (i, p) in entries.iter().enumerate() {
        let mut bytes = std::fs::read(p).unwrap();
        if i % 2 == 0 {
            let (mid, len) = (bytes.len() / 2, bytes.len());
            for b in &mut bytes[mid..(mid + 16).min(len)] {
                *b ^= 0x5A;
            }
        } else {
            bytes.truncate(bytes.len() / 3);
        }
        std::fs::write(p, bytes).unwrap();
    }
    for o in concurrently(8, cache.path()) {
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(
            o.stdout, reference.stdout,
            "a corrupted cache is rebuilt, not trusted"
        );
    }
}

#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn device_allocation_failure_is_a_clear_error_and_leaves_no_output() {
    crate::common::gpu::require_gpu(
        "device_allocation_failure_is_a_clear_error_and_leaves_no_output",
    );
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("boxes.csv");
    std::fs::write(&input, "x_lo,x_hi\n1,2\n3,4\n-1,1\n").unwrap();
    let output = dir.path().join("out.csv");
    // Force chunks of 2^40 boxes: the device (and pinned host) allocation must fail.
    let mut cmd = Command::new(binary());
    cmd.args(["eval", "x*x + 1", "--input"])
        .arg(&input)
        .arg("--output")
        .arg(&output)
        .args(["--backend", "gpu"])
        .env("IVJIT_CHUNK_ELEMENTS", "1099511627776")
        .env("IVJIT_CACHE_DIR", dir.path().join("cache"));
    let o = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    println!("{err}");
    assert_eq!(o.status.code(), Some(1), "an environment failure: {err}");
    assert!(err.starts_with("error:") && err.contains("GPU"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(!output.exists(), "no output file after a failed batch");
    // And the same batch succeeds with the default chunking.
    let o = Command::new(binary())
        .args(["eval", "x*x + 1", "--input"])
        .arg(&input)
        .arg("--output")
        .arg(&output)
        .args(["--backend", "gpu"])
        .env("IVJIT_CACHE_DIR", dir.path().join("cache"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        std::fs::read_to_string(&output).unwrap(),
        "lo,hi\n2,5\n10,17\n1,2\n"
    );
}

/// A process that exits while the single kernel of a staged program is still compiling on a
/// thread of its own (`IVJIT_TIER_UP=now` starts it at once) exits cleanly, with its answer:
/// the exit waits for the compile (without that wait the driver's teardown raced the compile
/// and glibc aborted with "double free or corruption", seen on the H100). With the default
/// policy a one-box command never starts the compile, and gives the same answer. On a
/// generated program of about 7,000 instructions and on the Prospero tape (f32).
#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn exit_during_background_compile_is_clean() {
    crate::common::gpu::require_gpu("exit_during_background_compile_is_clean");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("long.txt");
    std::fs::write(&file, crate::common::workloads::generated(1000).0).unwrap();
    let prospero = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/models/prospero.vm");
    let cases: [(&Path, &[&str]); 2] = [
        (
            &file,
            &[
                "--var",
                "z=0.5",
                "--var",
                "w=[0,0.01]",
                "--precision",
                "f64",
            ],
        ),
        (&prospero, &["--precision", "f32"]),
    ];
    for (k, (file, extra)) in cases.iter().enumerate() {
        let mut answers = Vec::new();
        // `never` fills the cache with the stages; `now` then reads them from it, so the
        // tier-up's compile is the process's first (the case that aborted); `now` on an empty
        // cache compiles the stages first; `auto` never starts it for one box.
        let shared = dir.path().join(format!("cache{k}"));
        let runs = [
            ("never", shared.clone()),
            ("now", shared),
            ("now", dir.path().join(format!("cache{k}-fresh"))),
            ("auto", dir.path().join(format!("cache{k}-auto"))),
        ];
        for (policy, cache) in runs {
            let t = Instant::now();
            let o = Command::new(binary())
                .arg("eval")
                .arg("-f")
                .arg(file)
                .args([
                    "--backend",
                    "gpu",
                    "--var",
                    "x=[0.1,0.2]",
                    "--var",
                    "y=[-0.3,0.2]",
                ])
                .args(*extra)
                .env("IVJIT_CACHE_DIR", &cache)
                .env("IVJIT_TIER_UP", policy)
                // The stages before the answer, as this test's cases need (the interpreter's
                // own exit case is in gpu_interpreter.rs).
                .env("IVJIT_INTERPRETER", "never")
                .env("IVJIT_BATCH_TRACE", "1")
                .env("CUDA_CACHE_DISABLE", "1")
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            println!(
                "{} IVJIT_TIER_UP={policy}: {:?}",
                file.display(),
                t.elapsed()
            );
            assert!(
                o.status.success(),
                "IVJIT_TIER_UP={policy}: {:?}\n{err}",
                o.status
            );
            if policy == "now" {
                // One compile per device the batch engine loads the kernel on (every
                // visible GPU).
                let devices = ivjit::detect_gpu().map_or(1, |g| g.device_count);
                let waits = (1..=devices)
                    .any(|k| err.contains(&format!("exit waits for {k} kernel compile")));
                assert!(waits, "{err}");
            }
            answers.push(o.stdout);
        }
        assert!(answers.iter().all(|a| *a == answers[0] && !a.is_empty()));
    }
}
