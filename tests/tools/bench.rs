//! `ivjit bench` through the CLI binary: the CPU suite's JSON shape and positive rates.

use std::process::Command;

use crate::common::binary as support;
use support::ivjit_binary as binary;

#[test]
fn cpu_bench_json_has_every_row_with_positive_rates() {
    let out = Command::new(binary())
        .args(["bench", "--backend", "cpu", "--boxes", "4096", "--json"])
        .output()
        .expect("run ivjit");
    assert!(
        out.status.success(),
        "ivjit bench failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!(doc["backend"], "cpu");
    assert_eq!(doc["boxes"], 4096);
    assert!(doc["compile_100"]["nodes"].as_u64().unwrap() >= 100);
    let rows = doc["rows"].as_array().expect("rows");
    let names: Vec<&str> = rows.iter().map(|r| r["name"].as_str().unwrap()).collect();
    for want in [
        "add",
        "mul",
        "div",
        "sqr",
        "sqrt",
        "exp",
        "sin",
        "tangle",
        "rosenbrock10",
        "trig",
        "generated",
        "prospero",
    ] {
        for p in ["f64", "f32"] {
            assert!(
                rows.iter()
                    .any(|r| r["name"] == want && r["precision"] == p),
                "no row {want} {p} in {names:?}"
            );
        }
    }
    for r in rows {
        let bps = r["boxes_per_s"].as_f64().expect("boxes_per_s");
        assert!(bps > 0.0 && bps.is_finite(), "{r}");
        assert!(r["ns_per_box"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["n_vars"].as_u64().unwrap() >= 1);
        assert!(r["bytes_per_box"].as_u64().unwrap() > 0);
    }
    let big = rows.iter().find(|r| r["name"] == "generated").unwrap();
    assert!(big["ir_nodes"].as_u64().unwrap() >= 2000);
}

#[test]
fn gpu_bench_without_gpu_fails_clearly_and_auto_falls_back() {
    if ivjit::internals::gpu::detect().is_ok() {
        eprintln!("skipped: a GPU is present");
        return;
    }
    let out = Command::new(binary())
        .args(["bench", "--backend", "gpu", "--boxes", "16"])
        .output()
        .expect("run ivjit");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no GPU"));
    let out = Command::new(binary())
        .args(["bench", "--boxes", "64", "--only", "add,tangle", "--json"])
        .output()
        .expect("run ivjit");
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("running the CPU suite"));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["backend"], "cpu");
    assert_eq!(doc["rows"].as_array().unwrap().len(), 4);
}

/// `ivjit bench --search --backend cpu --only NAME --json`, run and read.
fn search_json(name: &str) -> serde_json::Value {
    section_json("--search", name)
}

/// `ivjit bench SECTION --backend cpu --only NAME --json`'s document (the run must succeed).
fn section_json(section: &str, name: &str) -> serde_json::Value {
    let out = Command::new(binary())
        .args([
            "bench",
            section,
            "--backend",
            "cpu",
            "--only",
            name,
            "--json",
        ])
        .output()
        .expect("run ivjit");
    assert!(
        out.status.success(),
        "ivjit bench {section} --only {name} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

#[test]
fn search_section_reports_boxes_rounds_and_efficiency() {
    let doc = search_json("circle");
    let rows = doc["searches"].as_array().expect("searches");
    assert_eq!(rows.len(), 1);
    let r = &rows[0];
    assert_eq!(
        (r["search"].as_str(), r["rule"].as_str()),
        (Some("circle"), Some("exclude"))
    );
    assert!(r["boxes"].as_u64().unwrap() > 1000 && r["rounds"].as_u64().unwrap() > 10);
    let e = r["efficiency"].as_f64().unwrap();
    assert!(e > 0.0 && e.is_finite(), "{r}");
    let bad = Command::new(binary())
        .args(["bench", "--search", "--backend", "cpu", "--only", "nothing"])
        .output()
        .expect("run ivjit");
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("circle"));
}

/// `bench --search --only pave` on the CPU: a row per paving of docs/constraints.md's
/// comparison with Codac, each with at most the inner and boundary boxes Codac 2.1.2's
/// paving has at the same eps (the target, measured with tools/codac-pave.py) and a
/// time.
#[test]
fn search_section_reports_the_pavings() {
    let doc = search_json("pave");
    assert!(doc["searches"].as_array().is_some_and(|r| r.is_empty()));
    let rows = doc["pavings"].as_array().expect("pavings");
    let codac = [12_931, 41_005, 73_125, 18_402, 12_938];
    assert_eq!(rows.len(), codac.len());
    for (r, codac) in rows.iter().zip(codac) {
        let boxes = r["inner"].as_u64().unwrap() + r["boundary"].as_u64().unwrap();
        assert!(
            boxes > 0 && boxes <= codac,
            "{r}: Codac's paving has {codac}"
        );
    }
    for r in rows {
        let ms = r["median_ms"].as_f64().unwrap();
        assert!(ms > 0.0 && ms.is_finite() && r["backend"] == "cpu", "{r}");
    }
}

/// `bench --render` (issue 15's section) on the CPU: the Prospero row in both precisions, with
/// the full tape's length, the pruned tapes' lengths per tile size (shorter at every
/// level below the first) and the same classes as the full render.
#[test]
fn render_section_reports_frames_and_pruned_lengths() {
    let doc = section_json("--render", "prospero-512");
    let rows = doc["renders"].as_array().expect("renders");
    assert_eq!(rows.len(), 2, "f64 and f32");
    for r in rows {
        assert_eq!(r["model"], "prospero-512");
        assert_eq!(r["same_classes"], true, "{r}");
        let full = r["tape_insts"].as_f64().unwrap();
        let levels: Vec<f64> = r["tape_insts_per_box"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        assert_eq!(levels.len(), 3);
        assert_eq!(levels[0], full, "the first tiles run the full tape");
        // Pruning works (measured 7591 / 2754 / 201; a tape that keeps both sides of every
        // sqrt-fed min/max barely shortens).
        assert!(
            levels[1] < full / 2.0 && levels[2] < levels[1] / 4.0,
            "{levels:?}"
        );
        assert!(r["frame_ms"].as_f64().unwrap() > 0.0 && r["boxes"].as_u64().unwrap() > 1000);
    }
    let bad = Command::new(binary())
        .args(["bench", "--render", "--backend", "cpu", "--only", "nothing"])
        .output()
        .expect("run ivjit");
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("colonnade-512"));
}

/// `bench --render --only mesh-colonnade` on the CPU: the colonnade's mesh at depth 5 in both
/// precisions, closed and oriented, with its counts.
#[test]
fn render_section_meshes_the_colonnade() {
    let doc = section_json("--render", "mesh-colonnade");
    let rows = doc["renders"].as_array().expect("renders");
    assert_eq!(rows.len(), 2, "f64 and f32");
    for r in rows {
        assert_eq!(r["closed"], true, "{r}");
        assert_eq!(r["cells"], 32);
        assert!(r["triangles"].as_u64().unwrap() > 10_000, "{r}");
        assert!(r["boxes"].as_u64().unwrap() > r["triangles"].as_u64().unwrap() / 2);
    }
}

/// `bench --render --only voxels-colonnade-512` on the CPU: the colonnade's depth map by
/// voxels at 256³ in both precisions (the same heights: the same tiles proven), with tapes
/// that shrink level by level, most columns filled and most of their normals certified.
#[test]
fn render_section_maps_the_colonnade_by_voxels() {
    let doc = section_json("--render", "voxels-colonnade-512");
    let rows = doc["renders"].as_array().expect("renders");
    assert_eq!(rows.len(), 2, "f64 and f32");
    for r in rows {
        assert_eq!(r["depth"], 256, "{r}");
        let filled = r["filled_columns"].as_u64().unwrap();
        assert!(filled > 256 * 256 / 2 && filled < 256 * 256, "{r}");
        let lens: Vec<f64> = r["pruned_insts_per_box"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        assert_eq!(lens.len(), 4, "{r}");
        assert!(lens.windows(2).all(|w| w[1] < w[0]), "{r}");
        assert!(r["frame_ms"].as_f64().unwrap() > 0.0, "{r}");
        // Normals from the pruned tapes: most filled columns certified (46,060 of 52,224).
        assert!(r["frame_with_normals_ms"].as_f64().unwrap() > 0.0, "{r}");
        let certified = r["certified_normals"].as_u64().unwrap();
        assert!(certified > filled * 4 / 5 && certified <= filled, "{r}");
    }
    assert_eq!(rows[0]["filled_columns"], rows[1]["filled_columns"]);
}

/// The benchmark's workloads (`src/workloads.rs`, shared with the binary): the generated
/// expression is as large as asked and the same on every call.
#[test]
fn generated_workload_is_large_and_deterministic() {
    use crate::common::workloads::{generated, BIG_NODES};
    let (a, n) = generated(BIG_NODES);
    assert!(n >= BIG_NODES);
    assert_eq!(a, generated(BIG_NODES).0);
}

/// The workloads' random boxes are intervals with nonzero bounds, in both precisions.
#[test]
fn workload_inputs_are_intervals_and_not_zero() {
    use crate::common::workloads::{random_inputs, suite};
    use ivjit::Precision;
    let c = &suite()[0];
    for p in [Precision::F64, Precision::F32] {
        let v = random_inputs(c, 2, 100, p, 7);
        for k in 0..2 {
            for i in 0..100 {
                let (lo, hi) = (v[2 * k * 100 + i], v[(2 * k + 1) * 100 + i]);
                assert!(lo < hi && lo != 0.0);
            }
        }
    }
}
