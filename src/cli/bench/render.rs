//! `ivjit bench --render`: the render section of issue 15. Per model and precision, the time of
//! one frame (median of [`RUNS`] after a warm-up that compiles and loads every kernel), the
//! boxes evaluated, and the program's length before and after pruning:
//!
//! - `prospero-512`, `prospero-1024`: the Prospero challenge's 2-D model over [-1, 1]², every
//!   pixel classified inside / outside / boundary through tiles of 64, 8, 1 pixels, on the
//!   benchmark's backend with the full program (`ivjit::search::render`), and with per-tile
//!   pruned tapes run by the interpreter on the benchmark's backend (`ivjit::search::tape`,
//!   prepared once: the frame time is the search alone), with the mean tape length (interval
//!   operations) per tile at each tile size. The row says whether both give the same classes
//!   (they must). On a GPU, also the non-rigorous baseline: the same program compiled to one
//!   thread per pixel that evaluates f at the pixel's centre in round to nearest
//!   (`ivjit::search::tape::PointSampler`), its image copied back like the renders'; the row
//!   counts its pixels that contradict a proven class (rounding only; expected 0).
//! - `prospero-4096`: the same at 4096², on a GPU only.
//! - `colonnade-512`: a 3-D model from the same community set (a colonnade, 332 min/max) as a
//!   depth map seen from above: per pixel the first hit along the vertical line through
//!   [-1, 1]³, to 1/512 of the height (`ivjit render` with z: the ray rule,
//!   `ivjit::search::ray`), with the full program on the backend and with per-block pruned
//!   tapes on the CPU (`ivjit::search::prune::first_hits_pruned`, blocks of 32 and 8 rays);
//!   the row says whether both find the same hits.
//!
//! - `voxels-colonnade-512`, `voxels-colonnade-1024`: the colonnade's depth map by voxels
//!   (`ivjit render` with z, `ivjit::search::voxels`): N³ voxels over [-1, 1]³ through cubic
//!   tiles of 64, 16, 4, 1 with per-tile pruned tapes on the benchmark's backend (prepared
//!   once: the frame is the search alone, its depth map back in host memory where it arrived);
//!   median of the millisecond frames' runs; and the frame with certified normals (from the
//!   pruned tapes, `render_lent` with normals). On a GPU the row says whether the CPU's voxel
//!   search gives the same heights and normals (it must).
//! - `mesh-colonnade`: the colonnade meshed (`ivjit mesh`, `ivjit::search::mesh`) at depth 7
//!   (128³ cells) on the benchmark's backend: triangles, evaluations, the elements left
//!   uncertain, and whether the mesh is closed and consistently oriented (every directed edge
//!   has its opposite, checked here).
//!
//! Without a GPU the sizes are halved (256, 512 and a 128² map with 128 steps; the names keep
//! the GPU sizes, `what` says the real ones) and the 3-D row runs in f64 only: on a small CPU
//! the full set would take minutes.

use std::time::Instant;

use serde_json::{json, Value};

use super::gpu::Device;
use ivjit::search::prune::first_hits_pruned;
use ivjit::search::tape::{PointSampler, TapeBackend, TapeRenderer};
use ivjit::search::{pruned_tiles, ray, render, RenderOptions, INSIDE, OUTSIDE};
use ivjit::{BackendChoice, Evaluator, Expression, Precision};

/// The Prospero challenge's tape (see `search.rs`).
const PROSPERO: &str = include_str!("../../../tests/data/models/prospero.vm");
/// The colonnade (tests/data/models/colonnade.vm, MPL-2.0, from the Fidget repository; see
/// tests/data/models/README.md).
const COLONNADE: &str = include_str!("../../../tests/data/models/colonnade.vm");

/// Timed frames after the warm-up (the median is reported): the full program's, and the
/// millisecond frames' (pruned tapes, point samples).
const RUNS: usize = 3;
const FAST_RUNS: usize = 21;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Median seconds of `runs` calls after one warm-up call, and the warm-up's result.
fn timed<T>(runs: usize, mut f: impl FnMut() -> Result<T, String>) -> Result<(f64, T), String> {
    let first = f()?;
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t = Instant::now();
        f()?;
        times.push(t.elapsed().as_secs_f64());
    }
    Ok((median(times), first))
}

/// The names of the section's rows.
pub const NAMES: [&str; 7] = [
    "prospero-512",
    "prospero-1024",
    "prospero-4096",
    "colonnade-512",
    "voxels-colonnade-512",
    "voxels-colonnade-1024",
    "mesh-colonnade",
];

/// Runs the render section; `only` filters by name. Returns the JSON rows and the table.
pub fn run(device: Option<&Device>, only: &[String]) -> Result<(Value, String), String> {
    let gpu = device.is_some();
    let choice = if gpu {
        BackendChoice::Gpu
    } else {
        BackendChoice::Cpu
    };
    let wanted = |name: &str| only.is_empty() || only.iter().any(|o| o == name);
    let mut rows = Vec::new();
    let mut text = String::from(
        "\n| model | what | precision | backend | frame ms | boxes | full program (scalar insts) | \
         pruned by | pruned frame ms | point-sampled frame ms (not rigorous) | \
         pruned program per box, by level | same result |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    let prospero = Expression::parse_tape(PROSPERO).map_err(|e| e.to_string())?;
    for (name, full_size) in [
        ("prospero-512", 512u32),
        ("prospero-1024", 1024),
        ("prospero-4096", 4096),
    ] {
        // 4096² on the GPU only (on a small CPU the full program would take minutes).
        if !wanted(name) || (!gpu && full_size > 1024) {
            continue;
        }
        let size = if gpu { full_size } else { full_size / 2 };
        let opts = RenderOptions::new(size, size, [-1.0, 1.0, -1.0, 1.0]);
        for p in [Precision::F64, Precision::F32] {
            let ev = Evaluator::new(&prospero, p, choice).map_err(|e| e.to_string())?;
            let insts = prospero.scalar(p).map_err(|e| e.to_string())?.insts.len();
            let (secs, full) = timed(RUNS, || render(&ev, &opts).map_err(|e| e.to_string()))?;
            // Tapes interpreted (no JIT), pruned per tile on the backend, prepared once.
            let backend = if gpu {
                TapeBackend::Gpu
            } else {
                TapeBackend::Cpu
            };
            let renderer = TapeRenderer::new(&prospero, p, backend).map_err(|e| e.to_string())?;
            // The pruned render's own default plan (on the GPU, coarser first tiles beyond
            // 1024²; the classes do not depend on the plan). The image compared; the timed
            // frames leave theirs where it arrived (on the GPU, page-locked host memory), as
            // the point kernel's below.
            let tape_opts = RenderOptions {
                tiles: pruned_tiles(ev.backend(), size, size),
                ..opts.clone()
            };
            let (taped, tape_levels) = renderer.render(&tape_opts).map_err(|e| e.to_string())?;
            let (tape_secs, _) = timed(FAST_RUNS, || {
                renderer
                    .render_with(&tape_opts, &mut |_| {})
                    .map_err(|e| e.to_string())
            })?;
            let same = taped.classes == full.classes;
            // The non-rigorous baseline on the GPU: each pixel's centre in round to nearest,
            // the whole program compiled (`PointSampler`); its pixels whose sign contradicts
            // a proven class are counted (rounding errors only: the centre is in the pixel).
            let point = match gpu {
                false => None,
                true => {
                    let sampler =
                        PointSampler::new(renderer.tape(), p).map_err(|e| e.to_string())?;
                    let image = sampler
                        .render(size, size, opts.region)
                        .map_err(|e| e.to_string())?;
                    let (ms, _) = timed(FAST_RUNS, || {
                        sampler
                            .render_with(size, size, opts.region, &mut |_| {})
                            .map_err(|e| e.to_string())
                    })?;
                    let contradicting = image
                        .iter()
                        .zip(&taped.classes)
                        .filter(|&(&a, &b)| {
                            (a == INSIDE && b == OUTSIDE) || (a == OUTSIDE && b == INSIDE)
                        })
                        .count();
                    Some((ms * 1e3, contradicting))
                }
            };
            let tape_per_level: Vec<f64> = tape_levels.iter().map(|l| l.mean_len).collect();
            rows.push(json!({
                "model": name, "kind": "2-D classes", "width": size, "height": size,
                "tiles": opts.tiles, "precision": p.name(), "backend": ev.backend().name(),
                "frame_ms": secs * 1e3, "boxes": full.boxes(), "rounds": full.rounds.len(),
                "full_insts": insts,
                "tape_frame_ms": tape_secs * 1e3, "tape_backend": ev.backend().name(),
                "tape_tiles": tape_opts.tiles,
                "tape_insts": renderer.tape().len(), "tape_insts_per_box": tape_per_level,
                "same_classes": same,
                "point_frame_ms": point.map(|p| p.0),
                "point_pixels_contradicting": point.map(|p| p.1),
            }));
            let tape_shown: Vec<String> = tape_levels
                .iter()
                .map(|l| format!("{:.1}", l.mean_len))
                .collect();
            let point_shown = match point {
                None => "—".to_string(),
                Some((ms, 0)) => format!("{ms:.2}"),
                Some((ms, bad)) => format!("{ms:.2} ({bad} pixels contradict proven classes)"),
            };
            text.push_str(&format!(
                "| {name} | {size}x{size}, tiles 64,8,1 (pruned: {}) | {} | {} | {:.2} | {} | {insts} | tapes, {} | {:.2} | {point_shown} | {} tape insts | {} |\n",
                tape_opts.tiles.iter().map(|t| t.to_string()).collect::<Vec<_>>().join(","),
                p.name(),
                ev.backend().name(),
                secs * 1e3,
                full.boxes(),
                ev.backend().name(),
                tape_secs * 1e3,
                tape_shown.join(" / "),
                if same { "yes" } else { "NO (bug!)" },
            ));
        }
    }
    if wanted("colonnade-512") {
        let (size, steps) = if gpu { (512u32, 512usize) } else { (128, 128) };
        let precisions: &[Precision] = if gpu {
            &[Precision::F64, Precision::F32]
        } else {
            &[Precision::F64]
        };
        // Seen from above over [-1, 1]^3: f along the vertical lines, one ray per pixel.
        let model = Expression::parse_tape(COLONNADE).map_err(|e| e.to_string())?;
        let map = ray::DepthMap {
            width: size,
            height: size,
            region: [-1.0, 1.0, -1.0, 1.0],
            zrange: (-1.0, 1.0),
            steps,
        };
        let expr = map.along_rays(&model).map_err(|e| e.to_string())?;
        let rays = map.rays().map_err(|e| e.to_string())?;
        for &p in precisions {
            let ev = Evaluator::new(&expr, p, choice).map_err(|e| e.to_string())?;
            let insts = model.scalar(p).map_err(|e| e.to_string())?.insts.len();
            let (secs, hits) = timed(RUNS, || map.first_hits(&ev, 8).map_err(|e| e.to_string()))?;
            let (pruned_secs, (pruned, levels)) = timed(RUNS, || {
                first_hits_pruned(&expr, p, &rays, size, &[32, 8], 8).map_err(|e| e.to_string())
            })?;
            let same = pruned.hits == hits.hits;
            let hit = hits.hits.iter().filter(|h| h.is_some()).count();
            let per_level: Vec<f64> = levels.iter().map(|l| l.mean_len).collect();
            rows.push(json!({
                "model": "colonnade-512", "kind": "3-D depth map", "width": size,
                "height": size, "steps": steps, "precision": p.name(),
                "backend": ev.backend().name(), "frame_ms": secs * 1e3, "boxes": hits.boxes,
                "full_insts": insts, "pixels_hit": hit,
                "rays_finished_on_cpu": hits.finished_on_cpu,
                "pruned_frame_ms": pruned_secs * 1e3, "pruned_boxes": pruned.boxes,
                "pruned_insts_per_box": per_level, "same_hits": same,
            }));
            let shown: Vec<String> = levels
                .iter()
                .map(|l| match l.tile {
                    0 => format!("rays: {:.1}", l.mean_len),
                    t => format!("{t} rays: {:.1}", l.mean_len),
                })
                .collect();
            text.push_str(&format!(
                "| colonnade-512 | {size}x{size} depth map, {steps} steps, {hit} pixels hit | {} | {} | {:.2} | {} | {insts} | tapes, cpu | {:.1} | — | {} tape insts | {} |\n",
                p.name(),
                ev.backend().name(),
                secs * 1e3,
                hits.boxes,
                pruned_secs * 1e3,
                shown.join("; "),
                if same { "yes" } else { "NO (bug!)" },
            ));
        }
    }
    for (name, full_size) in [
        ("voxels-colonnade-512", 512u32),
        ("voxels-colonnade-1024", 1024),
    ] {
        use ivjit::search::voxels::{VoxelOptions, VoxelRenderer};
        if !wanted(name) {
            continue;
        }
        let size = if gpu { full_size } else { full_size / 2 };
        let model = Expression::parse_tape(COLONNADE).map_err(|e| e.to_string())?;
        let opts = VoxelOptions::new(size, size, size, [-1.0, 1.0, -1.0, 1.0, -1.0, 1.0]);
        let backend = if gpu {
            TapeBackend::Gpu
        } else {
            TapeBackend::Cpu
        };
        for p in [Precision::F64, Precision::F32] {
            let insts = model.scalar(p).map_err(|e| e.to_string())?.insts.len();
            let renderer = VoxelRenderer::new(&model, p, backend).map_err(|e| e.to_string())?;
            let (map, normals, stats) = renderer
                .render_with_normals(&opts)
                .map_err(|e| e.to_string())?;
            // Frames lent where they arrived (on the GPU, page-locked memory kept between
            // frames), without and with the normals.
            let frame = |with: bool| {
                timed(FAST_RUNS, || {
                    renderer
                        .render_lent(&opts, with, &mut |_, _| {})
                        .map_err(|e| e.to_string())
                })
            };
            let (secs, _) = frame(false)?;
            let (normals_secs, _) = frame(true)?;
            let certified = normals.iter().filter(|n| n.is_some()).count();
            // On a GPU, the CPU's voxel search of the same grid: the same heights and normals.
            let same = if gpu {
                let cpu = VoxelRenderer::new(&model, p, TapeBackend::Cpu)
                    .and_then(|r| r.render_with_normals(&opts))
                    .map_err(|e| e.to_string())?;
                let bits = |v: &[Option<[f64; 3]>]| -> Vec<Option<[u64; 3]>> {
                    v.iter().map(|n| n.map(|n| n.map(f64::to_bits))).collect()
                };
                Some(cpu.0.heights == map.heights && bits(&cpu.1) == bits(&normals))
            } else {
                None
            };
            let tiles: u64 = map.rounds.iter().map(|r| r.boxes).sum();
            let filled = map.heights.iter().filter(|&&h| h > 0).count();
            let per_level: Vec<f64> = stats.iter().map(|s| s.mean_len).collect();
            let backend_name = if gpu { "gpu" } else { "cpu" };
            rows.push(json!({
                "model": name, "kind": "3-D depth map by voxels", "width": size,
                "height": size, "depth": size, "precision": p.name(), "backend": backend_name,
                "frame_ms": secs * 1e3, "boxes": tiles, "full_insts": insts,
                "frame_with_normals_ms": normals_secs * 1e3, "certified_normals": certified,
                "filled_columns": filled, "pruned_insts_per_box": per_level,
                "tiles_per_level": map.rounds.iter().map(|r| r.boxes).collect::<Vec<_>>(),
                "same_as_cpu": same,
            }));
            let shown: Vec<String> = stats
                .iter()
                .map(|s| format!("{}: {:.1}", s.tile, s.mean_len))
                .collect();
            text.push_str(&format!(
                "| {name} | {size}³ voxels, tiles 64,16,4,1, {filled} columns filled; with normals ({certified} certified): {:.2} ms | {} | {backend_name} | {:.2} | {tiles} | {insts} | tapes, {backend_name} | {:.2} | — | {} tape insts | {} |\n",
                normals_secs * 1e3,
                p.name(),
                secs * 1e3,
                secs * 1e3,
                shown.join("; "),
                match same {
                    Some(true) => "yes (the CPU's heights and normals)",
                    Some(false) => "NO (bug!)",
                    None => "—",
                },
            ));
        }
    }
    if wanted("mesh-colonnade") {
        use ivjit::search::mesh::{mesh, MeshOptions};
        let depth = if gpu { 7 } else { 5 };
        let model = Expression::parse_tape(COLONNADE).map_err(|e| e.to_string())?;
        let opts = MeshOptions {
            depth,
            ..MeshOptions::default()
        };
        for p in [Precision::F64, Precision::F32] {
            let ev = Evaluator::new(&model, p, choice).map_err(|e| e.to_string())?;
            let insts = model.scalar(p).map_err(|e| e.to_string())?.insts.len();
            let (secs, m) = timed(RUNS, || mesh(&ev, &opts).map_err(|e| e.to_string()))?;
            let closed = closed_and_oriented(&m.triangles);
            let cells = 1u32 << depth;
            rows.push(json!({
                "model": "mesh-colonnade", "kind": "mesh", "cells": cells,
                "precision": p.name(), "backend": ev.backend().name(),
                "frame_ms": secs * 1e3, "boxes": m.stats.evaluations, "full_insts": insts,
                "triangles": m.triangles.len(), "vertices": m.vertices.len(),
                "boundary_cells": m.stats.boundary_cells, "uncertain": m.stats.uncertain,
                "closed": closed,
            }));
            text.push_str(&format!(
                "| mesh-colonnade | mesh of {cells}³ cells: {} triangles, {} elements uncertain | {} | {} | {:.1} | {} | {insts} | — | — | — | — | {} |\n",
                m.triangles.len(),
                m.stats.uncertain,
                p.name(),
                ev.backend().name(),
                secs * 1e3,
                m.stats.evaluations,
                if closed { "closed, oriented" } else { "NOT CLOSED (bug!)" },
            ));
        }
    }
    Ok((Value::Array(rows), text))
}

/// Every directed edge of the triangles is used once and its opposite once too: the mesh is
/// closed and consistently oriented.
fn closed_and_oriented(triangles: &[[u32; 3]]) -> bool {
    let mut edges: Vec<(u32, u32)> = triangles
        .iter()
        .flat_map(|&[a, b, c]| [(a, b), (b, c), (c, a)])
        .collect();
    edges.sort_unstable();
    let unique = edges.windows(2).all(|w| w[0] != w[1]);
    unique
        && edges
            .iter()
            .all(|&(a, b)| edges.binary_search(&(b, a)).is_ok())
}
