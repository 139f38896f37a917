//! Diagnostics stay small whatever the input (issue 30: a 1 MB identifier gave 3 MB of stderr;
//! variable lists, `--tiles` echoes and `.npy` header errors likewise): at most 4 KiB, as
//! docs/fuzzing.md promises, still naming what is wrong.

use std::path::Path;
use std::process::{Command, Output};

use crate::common::binary::ivjit_binary as binary;

fn ivjit_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(binary())
        .current_dir(dir)
        .args(args)
        .output()
        .expect("ivjit runs")
}

#[track_caller]
fn small(o: &Output, what: &str, says: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_ne!(o.status.code(), Some(0), "{what}: succeeded");
    assert!(err.len() <= 4096, "{what}: {} bytes of stderr", err.len());
    assert!(err.contains(says), "{what}: {err}");
}

#[test]
fn diagnostics_are_at_most_4_kib() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A 1 MB identifier without a value.
    std::fs::write(
        d.join("ident.txt"),
        format!("{} + x", "a".repeat(1_000_000)),
    )
    .unwrap();
    let o = ivjit_in(
        d,
        &[
            "eval",
            "-f",
            "ident.txt",
            "--var",
            "x=1",
            "--backend",
            "cpu",
        ],
    );
    small(&o, "1 MB identifier", "has no value");
    // 100,000 variables and a --var that names none of them.
    let vars: Vec<String> = (0..100_000).map(|i| format!("v{i}")).collect();
    std::fs::write(d.join("vars.txt"), vars.join(" + ")).unwrap();
    let o = ivjit_in(
        d,
        &[
            "eval",
            "-f",
            "vars.txt",
            "--var",
            "v0=1",
            "--var",
            "zz=2",
            "--backend",
            "cpu",
        ],
    );
    small(&o, "100,000 variables", "no variable 'zz'");
    // A 100 KB --var value.
    let long = format!("x={}", "1".repeat(100_000));
    let o = ivjit_in(d, &["eval", "x + 1", "--var", &long, "--backend", "cpu"]);
    let _ = o; // a huge integer is a valid (rounded outward) value; an invalid one:
    let bad = format!("x=[{}", "1".repeat(100_000));
    let o = ivjit_in(d, &["eval", "x + 1", "--var", &bad, "--backend", "cpu"]);
    small(&o, "100 KB --var", "--var");
    // 20,000 tile sizes, one of them bad.
    let mut tiles = vec!["3"; 20_000];
    tiles.push("0");
    let tiles = tiles.join(",");
    let o = ivjit_in(
        d,
        &[
            "render",
            "x^2 + y^2 - 1",
            "--tiles",
            &tiles,
            "--size",
            "8x8",
            "-o",
            "t.npy",
        ],
    );
    small(&o, "--tiles", "error");
    // A CSV with a 1 MB cell.
    std::fs::write(
        d.join("in.csv"),
        format!("x_lo,x_hi\n1,{}\n", "9z".repeat(500_000)),
    )
    .unwrap();
    let o = ivjit_in(d, &["eval", "x", "--input", "in.csv", "--backend", "cpu"]);
    small(&o, "1 MB CSV cell", "not a number");
    // A .npy whose header is a long run of garbage.
    let mut npy = b"\x93NUMPY\x01\x00".to_vec();
    let header = format!("{{'descr': '{}'}}", "x".repeat(60_000));
    npy.extend_from_slice(&(header.len() as u16).to_le_bytes());
    npy.extend_from_slice(header.as_bytes());
    std::fs::write(d.join("bad.npy"), npy).unwrap();
    let o = ivjit_in(d, &["eval", "x", "--input", "bad.npy", "--backend", "cpu"]);
    small(&o, ".npy header", "bad.npy");
}
