//! The `.sir` files of `tests/sir/`: small scalar programs in the IR's text form, each with the
//! exact results it must give (`#! eval` lines, worked out by hand from IEEE 754 and explained in
//! the file's comments). Every file runs on the reference interpreter, the CPU evaluator and,
//! when there is one, the GPU; every backend must give the stated bits (NaN as any NaN).
//!
//! Directive: `#! eval NAME=[lo, hi] ... => [lo, hi] ...`: the input box per variable (in the
//! header's order), then one (lo, hi) pair per output; numbers as hex-floats, `nan`, `inf`.
//! Also checked: the text reads back to the same program (`Display` of the parse is the file's
//! program text).

use ivjit::internals::gpu::GpuKernel;
use ivjit::internals::scalar::text::parse_constant;
use ivjit::internals::scalar::{interp, Program};
use std::path::PathBuf;

struct Case {
    file: String,
    program: Program,
    inputs: Vec<(f64, f64)>,
    outputs: Vec<(f64, f64)>,
}

fn pairs(text: &str, file: &str) -> Vec<(String, (f64, f64))> {
    let mut out = Vec::new();
    for part in text.split(']').map(str::trim).filter(|p| !p.is_empty()) {
        let (name, body) = part.split_once('[').unwrap_or_else(|| {
            panic!("{file}: expected NAME=[lo, hi] or [lo, hi], found `{part}`")
        });
        let (lo, hi) = body
            .split_once(',')
            .unwrap_or_else(|| panic!("{file}: expected lo, hi in `{part}`"));
        let num = |t: &str| parse_constant(t.trim()).unwrap_or_else(|e| panic!("{file}: {e}"));
        out.push((
            name.trim().trim_end_matches('=').to_string(),
            (num(lo), num(hi)),
        ));
    }
    out
}

fn cases() -> Vec<Case> {
    let dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")))
        .join("tests/sir");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "sir"))
        .collect();
    paths.sort();
    assert!(
        paths.len() >= 5,
        "the .sir files are missing from {}",
        dir.display()
    );
    let mut cases = Vec::new();
    for path in paths {
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).unwrap();
        let program: Program = text.parse().unwrap_or_else(|e| panic!("{file}: {e}"));
        // The program part of the file (no comments) is exactly what Display prints.
        let body: String = text
            .lines()
            .filter(|l| !l.trim_start().starts_with('#') && !l.trim().is_empty())
            .map(|l| format!("{}\n", l.split('#').next().unwrap().trim_end()))
            .collect();
        assert_eq!(program.to_string(), body, "{file}: text does not read back");
        let mut n = 0;
        for l in text.lines() {
            let Some(d) = l.trim().strip_prefix("#! eval") else {
                continue;
            };
            let (ins, outs) = d
                .split_once("=>")
                .unwrap_or_else(|| panic!("{file}: `#! eval` needs `=>`"));
            let ins = pairs(ins, &file);
            let names: Vec<&String> = ins.iter().map(|(n, _)| n).collect();
            assert_eq!(
                names,
                program.var_names.iter().collect::<Vec<_>>(),
                "{file}: the eval line names the inputs in the header's order"
            );
            let outputs: Vec<(f64, f64)> = pairs(outs, &file).into_iter().map(|(_, p)| p).collect();
            assert_eq!(
                outputs.len(),
                program.outputs.len(),
                "{file}: one pair per output"
            );
            cases.push(Case {
                file: file.clone(),
                program: program.clone(),
                inputs: ins.into_iter().map(|(_, p)| p).collect(),
                outputs,
            });
            n += 1;
        }
        assert!(n > 0, "{file}: no `#! eval` line");
    }
    cases
}

fn same(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

fn check(case: &Case, backend: &str, got: &[(f64, f64)]) {
    for (k, (&(gl, gh), &(wl, wh))) in got.iter().zip(&case.outputs).enumerate() {
        assert!(
            same(gl, wl) && same(gh, wh),
            "{} on {backend}: out{k} = [{gl:e}, {gh:e}] ({:#x}, {:#x}), expected [{wl:e}, {wh:e}]",
            case.file,
            gl.to_bits(),
            gh.to_bits()
        );
    }
}

/// Structure of arrays for one box: lo of variable k at 2k, hi at 2k + 1.
fn soa(inputs: &[(f64, f64)]) -> Vec<f64> {
    inputs.iter().flat_map(|&(lo, hi)| [lo, hi]).collect()
}

fn from_soa(out: &[f64]) -> Vec<(f64, f64)> {
    out.chunks(2).map(|c| (c[0], c[1])).collect()
}

#[test]
fn reference_interpreter() {
    for case in cases() {
        let got = interp::eval(&case.program, &case.inputs).unwrap();
        check(&case, "the interpreter", &got);
    }
}

#[test]
fn cpu_evaluator() {
    for case in cases() {
        let got = ivjit::internals::cpu::eval::eval_soa(&case.program, &soa(&case.inputs), 1);
        check(&case, "the CPU evaluator", &from_soa(&got));
    }
}

#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn gpu() {
    crate::common::gpu::require_gpu("sir gpu");
    for case in cases() {
        let kernel = GpuKernel::new(&case.program).unwrap();
        let got = kernel.eval(&soa(&case.inputs), 1).unwrap();
        check(&case, "the GPU", &from_soa(&got));
    }
}
