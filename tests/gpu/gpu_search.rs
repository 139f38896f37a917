//! The device-resident searches (`ivjit::search`) against the CPU implementations: the same
//! classes and hits bit for bit when the expression calls no point function, and never a
//! contradiction when it does (both are rigorous, the GPU's point bounds are wider). Runs with
//! `--features gpu-tests` (ignored without it).

use ivjit::search::ray::{first_hits, Ray};
use ivjit::search::{render, RenderOptions, BOUNDARY, INSIDE, OUTSIDE};
use ivjit::{Backend, BackendChoice, Evaluator, Expression, Precision};

fn pair(text: &str, p: Precision) -> (Evaluator, Evaluator) {
    let e = Expression::parse(text).unwrap();
    let cpu = Evaluator::new(&e, p, BackendChoice::Cpu).unwrap();
    let gpu = Evaluator::new(&e, p, BackendChoice::Gpu).unwrap();
    assert_eq!(gpu.backend(), Backend::Gpu);
    (cpu, gpu)
}

/// The Prospero model (`tests/data/models/prospero.vm`) in ivjit's syntax.
fn prospero() -> String {
    let path = std::path::Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap())
        .join("tests/data/models/prospero.vm");
    ivjit::internals::syntax::tape::to_expression_text(&std::fs::read_to_string(path).unwrap())
        .unwrap()
}

/// What two branch and bounds of the same problem agree on bit for bit (not `argmin`, one of
/// the midpoints that gave `upper`, nor where the rounds ran).
fn outcome(
    m: &ivjit::search::minimize::Minimum,
) -> (u64, u64, usize, u64, usize, ivjit::search::minimize::Ended) {
    (
        m.lower.to_bits(),
        m.upper.to_bits(),
        m.rounds,
        m.boxes,
        m.remaining,
        m.ended,
    )
}

fn opposite(a: u8, b: u8) -> bool {
    (a == INSIDE && b == OUTSIDE) || (a == OUTSIDE && b == INSIDE)
}

#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn render_on_the_gpu_equals_the_cpu() {
    crate::common::gpu::require_gpu("render_on_the_gpu_equals_the_cpu");
    let prospero = prospero();
    let cases: Vec<(String, bool)> = vec![
        ("x^2 + y^2 - 0.5".into(), true),
        ("max(abs(x) - 0.6, abs(y) - 0.3)".into(), true),
        ("y - x^3 + 0.5*x - 1/(3 + x*y)".into(), true),
        ("sin(8*x) * cos(5*y) - 0.2*x".into(), false),
        ("sqrt(x^2 + y^2) - exp(-y) + 0.3".into(), false),
        (prospero, true),
    ];
    for (text, exact) in &cases {
        for p in [Precision::F64, Precision::F32] {
            let (cpu, gpu) = pair(text, p);
            for (w, h, tiles) in [(333, 250, vec![16, 4, 1]), (256, 256, vec![64, 8, 1])] {
                let opts = RenderOptions {
                    tiles,
                    ..RenderOptions::new(w, h, [-1.1, 0.95, -1.0, 1.05])
                };
                let a = render(&cpu, &opts).unwrap();
                let b = render(&gpu, &opts).unwrap();
                let name = &text[..text.len().min(40)];
                if *exact {
                    assert!(a.classes == b.classes, "{name} {p:?}: classes differ");
                    assert_eq!(a.rounds, b.rounds, "{name} {p:?}");
                } else {
                    let bad = a
                        .classes
                        .iter()
                        .zip(&b.classes)
                        .filter(|(x, y)| opposite(**x, **y))
                        .count();
                    assert_eq!(bad, 0, "{name} {p:?}: opposite proven classes");
                    let agree = a.classes.iter().zip(&b.classes).filter(|(x, y)| x == y);
                    assert!(agree.count() * 10 > 9 * a.classes.len(), "{name} {p:?}");
                }
                assert!(b.classes.iter().all(|&c| c <= BOUNDARY));
            }
        }
    }
}

/// The tape render (per-tile pruned tapes, interpreted on the device, pruned there) gives the
/// CPU tape render's classes, rounds and mean tape lengths, and the plain GPU render's classes,
/// on Prospero and min/max models with a sqrt that may be empty, f64 and f32, three tile plans
/// (one with clipped tiles).
/// Renders over the largest floats of each precision (the width of `[-MAX, MAX]` overflows;
/// the pixel edges are weighted means of the region's ends, `Axes`): plain and pruned, the
/// GPU gives the CPU's classes and rounds, and most pixels are decided (the CPU's unit test
/// `renders_over_the_largest_floats_classify_their_pixels` checks them against exact ones).
#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn renders_over_the_largest_floats_on_the_gpu_equal_the_cpu() {
    use ivjit::search::tape::{self, TapeBackend};
    crate::common::gpu::require_gpu("renders_over_the_largest_floats_on_the_gpu_equal_the_cpu");
    let text = "min(x - y, 2*x*x + 1)";
    let expr = Expression::parse(text).unwrap();
    for (p, m) in [
        (Precision::F64, f64::MAX),
        (Precision::F32, f32::MAX as f64),
    ] {
        let (cpu, gpu) = pair(text, p);
        for region in [[-m, m, -m, m], [-m, m / 2.0, -m / 3.0, m]] {
            for (w, h, tiles) in [(333, 250, vec![16, 4, 1]), (256, 256, vec![64, 8, 1])] {
                let opts = RenderOptions {
                    tiles,
                    ..RenderOptions::new(w, h, region)
                };
                let at = format!("{p:?} {region:?} {w}x{h}");
                let a = render(&cpu, &opts).unwrap();
                let b = render(&gpu, &opts).unwrap();
                assert!(a.classes == b.classes, "{at}: plain classes differ");
                assert_eq!(a.rounds, b.rounds, "{at}");
                let (c, sc) = tape::render(&expr, p, TapeBackend::Cpu, &opts).unwrap();
                let (d, sd) = tape::render(&expr, p, TapeBackend::Gpu, &opts).unwrap();
                assert!(c.classes == d.classes, "{at}: pruned classes differ");
                assert_eq!((c.rounds, sc), (d.rounds, sd), "{at}: pruned");
                let undecided = b.classes.iter().filter(|&&c| c == BOUNDARY).count();
                assert!(
                    undecided < (w * h / 20) as usize,
                    "{at}: {undecided} undecided"
                );
            }
        }
    }
}

#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn tape_render_on_the_gpu_equals_the_cpu() {
    use ivjit::search::tape::{self, TapeBackend};
    crate::common::gpu::require_gpu("tape_render_on_the_gpu_equals_the_cpu");
    let prospero = prospero();
    let cases = [
        prospero,
        "min(min(sqrt(sqr(x - 0.3) + sqr(y)) - 0.4, sqrt(x + 0.4) - 0.3), \
         max(max(abs(x) - 0.2, abs(y + 0.5) - 0.2), -(x*y - 0.1)))"
            .to_string(),
    ];
    for text in &cases {
        let expr = Expression::parse(text).unwrap();
        let name = &text[..text.len().min(40)];
        for p in [Precision::F64, Precision::F32] {
            let plain = Evaluator::new(&expr, p, BackendChoice::Gpu).unwrap();
            for (w, h, tiles) in [
                (333, 250, vec![16, 4, 1]),
                (256, 256, vec![64, 8, 1]),
                (1024, 1024, vec![64, 8, 1]),
            ] {
                let opts = RenderOptions {
                    tiles,
                    ..RenderOptions::new(w, h, [-1.1, 0.95, -1.0, 1.05])
                };
                let (a, sa) = tape::render(&expr, p, TapeBackend::Cpu, &opts).unwrap();
                let (b, sb) = tape::render(&expr, p, TapeBackend::Gpu, &opts).unwrap();
                assert!(
                    a.classes == b.classes,
                    "{name} {p:?} {w}x{h}: classes differ"
                );
                assert_eq!(a.rounds, b.rounds, "{name} {p:?} {w}x{h}");
                assert_eq!(sa, sb, "{name} {p:?} {w}x{h}: tape lengths");
                let c = render(&plain, &opts).unwrap();
                assert!(
                    c.classes == b.classes,
                    "{name} {p:?} {w}x{h}: not the plain classes"
                );
                println!("{name} {p:?} {w}x{h}: {sb:?}");
            }
        }
    }
    // The first level one thread per tile, as for a tape whose values do not fit a block's
    // shared memory: the same classes and tapes. (Other tests preparing tapes on the GPU
    // meanwhile take that way too: the same results.)
    std::env::set_var("IVJIT_TAPE_NO_ROOT", "1");
    let expr = Expression::parse(&cases[0]).unwrap();
    for p in [Precision::F64, Precision::F32] {
        let opts = RenderOptions::new(256, 256, [-1.0, 1.0, -1.0, 1.0]);
        let (a, sa) = tape::render(&expr, p, TapeBackend::Cpu, &opts).unwrap();
        let (b, sb) = tape::render(&expr, p, TapeBackend::Gpu, &opts).unwrap();
        assert!(
            a.classes == b.classes,
            "Prospero {p:?} without the block first level"
        );
        assert_eq!((a.rounds, sa), (b.rounds, sb), "Prospero {p:?}");
    }
    std::env::remove_var("IVJIT_TAPE_NO_ROOT");
}

/// One GPU tape renderer drawing frame after frame keeps its stream and buffers between
/// frames (grown when a frame needs more): frames of different sizes, regions, tile plans and
/// level counts, in an order that shrinks and grows them, each give the classes, rounds and
/// tape lengths of a fresh CPU tape render — returned, and lent where they arrived
/// (`render_with`) — also with short capacities and with frames split among GPUs.
#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn a_tape_renderer_reuses_its_buffers_between_frames() {
    use ivjit::search::tape::{self, TapeBackend, TapeRenderer};
    crate::common::gpu::require_gpu("a_tape_renderer_reuses_its_buffers_between_frames");
    let expr = Expression::parse(&prospero()).unwrap();
    for p in [Precision::F64, Precision::F32] {
        let gpu = TapeRenderer::new(&expr, p, TapeBackend::Gpu).unwrap();
        let frames = [
            (1024, 1024, vec![64, 8, 1], [-1.0, 1.0, -1.0, 1.0]),
            (333, 250, vec![16, 4, 1], [-1.1, 0.95, -1.0, 1.05]),
            (700, 900, vec![64, 16, 4, 1], [-0.5, 1.0, -1.0, 0.7]),
            (1024, 1024, vec![64, 8, 1], [-1.0, 1.0, -1.0, 1.0]),
            (64, 64, vec![8, 1], [0.2, 0.3, -0.1, 0.0]),
            (1024, 1024, vec![64, 8, 1], [-1.0, 1.0, -1.0, 1.0]),
        ];
        for (w, h, tiles, region) in frames {
            let opts = RenderOptions {
                tiles: tiles.clone(),
                ..RenderOptions::new(w, h, region)
            };
            let (a, sa) = tape::render(&expr, p, TapeBackend::Cpu, &opts).unwrap();
            let (b, sb) = gpu.render(&opts).unwrap();
            let what = format!("{p:?} {w}x{h} {tiles:?} {region:?}");
            assert!(a.classes == b.classes, "{what}: classes differ");
            assert_eq!((&a.rounds, &sa), (&b.rounds, &sb), "{what}");
            // The same frame with the image lent where it arrived.
            // The same plan again: a frame that takes the last one's sizes as capacities
            // and reads no counter before its end.
            let mut lent = Vec::new();
            let (rounds, sl) = gpu.render_with(&opts, &mut |c| lent = c.to_vec()).unwrap();
            assert!(lent == a.classes, "{what}: lent classes differ");
            assert_eq!((&a.rounds, &sa), (&rounds, &sl), "{what}: lent");
            let (c, sc) = gpu.render(&opts).unwrap();
            assert!(c.classes == a.classes, "{what}: again");
            assert_eq!((&a.rounds, &sa), (&c.rounds, &sc), "{what}: again");
        }
    }
    // Capacities too short (halved): the kernels write nothing past them and flag it, and
    // the frame is rendered again reading its counters — the same frames. (Other tests of
    // this binary that render tapes meanwhile take the reading pass too: the same results.)
    std::env::set_var("IVJIT_TAPE_SHORT_CAPS", "1");
    for p in [Precision::F64, Precision::F32] {
        let gpu = TapeRenderer::new(&expr, p, TapeBackend::Gpu).unwrap();
        let opts = RenderOptions::new(512, 384, [-1.0, 1.0, -0.8, 0.7]);
        let (a, sa) = tape::render(&expr, p, TapeBackend::Cpu, &opts).unwrap();
        for _ in 0..3 {
            let (b, sb) = gpu.render(&opts).unwrap();
            assert!(a.classes == b.classes, "{p:?}: short capacities");
            assert_eq!(
                (&a.rounds, &sa),
                (&b.rounds, &sb),
                "{p:?}: short capacities"
            );
        }
    }
    std::env::remove_var("IVJIT_TAPE_SHORT_CAPS");
    // Frames split into parts, their first-level rows interleaved (three parts, round-robin
    // over the GPUs: on one GPU three renderers of it; two where the first level has two
    // rows), frame after frame, returned and lent, then with short capacities: the whole
    // frame's classes, rounds and tape lengths. (Other tests rendering tapes meanwhile split
    // their frames too: the same results.)
    std::env::set_var("IVJIT_SEARCH_PARTS", "3");
    for p in [Precision::F64, Precision::F32] {
        let gpu = TapeRenderer::new(&expr, p, TapeBackend::Gpu).unwrap();
        let frames = [
            (1024, 1024, vec![64, 8, 1], [-1.0, 1.0, -1.0, 1.0]),
            (333, 250, vec![16, 4, 1], [-1.1, 0.95, -1.0, 1.05]),
            (700, 900, vec![64, 16, 4, 1], [-0.5, 1.0, -1.0, 0.7]),
            (100, 60, vec![32, 8, 1], [-0.4, 0.6, -0.2, 0.1]),
            (1024, 1024, vec![64, 8, 1], [-1.0, 1.0, -1.0, 1.0]),
        ];
        for (w, h, tiles, region) in frames {
            let opts = RenderOptions {
                tiles: tiles.clone(),
                ..RenderOptions::new(w, h, region)
            };
            let what = format!("{p:?} {w}x{h} {tiles:?} {region:?} in parts");
            let (a, sa) = tape::render(&expr, p, TapeBackend::Cpu, &opts).unwrap();
            for short in [false, false, true] {
                if short {
                    std::env::set_var("IVJIT_TAPE_SHORT_CAPS", "1");
                }
                let (b, sb) = gpu.render(&opts).unwrap();
                assert!(a.classes == b.classes, "{what}: classes differ");
                assert_eq!((&a.rounds, &sa), (&b.rounds, &sb), "{what}");
                let mut lent = Vec::new();
                let (rounds, sl) = gpu.render_with(&opts, &mut |c| lent = c.to_vec()).unwrap();
                assert!(lent == a.classes, "{what}: lent classes differ");
                assert_eq!((&a.rounds, &sa), (&rounds, &sl), "{what}: lent");
                std::env::remove_var("IVJIT_TAPE_SHORT_CAPS");
            }
        }
    }
    std::env::remove_var("IVJIT_SEARCH_PARTS");
}

/// The point-sampling baseline of `ivjit bench --render` (not rigorous: the sign of f at each
/// pixel's centre) never contradicts the rigorous tape render where that one proved a class —
/// a proven pixel's centre has f of that sign, and rounding errors are far below these models'
/// margins — and agrees with it on every proven pixel: a flipped, transposed or shifted image
/// would contradict it along every edge. A circle and Prospero, f64 and f32, a non-square
/// image over an off-centre region.
#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn the_point_sampler_agrees_with_the_proven_classes() {
    use ivjit::search::tape::{PointSampler, TapeBackend, TapeRenderer};
    crate::common::gpu::require_gpu("the_point_sampler_agrees_with_the_proven_classes");
    for text in ["x^2 + y^2 - 0.5".to_string(), prospero()] {
        let expr = Expression::parse(&text).unwrap();
        let name = &text[..text.len().min(30)];
        for p in [Precision::F64, Precision::F32] {
            let rigorous = TapeRenderer::new(&expr, p, TapeBackend::Gpu).unwrap();
            let sampler = PointSampler::new(rigorous.tape(), p).unwrap();
            for (w, h, region) in [
                (512, 512, [-1.0, 1.0, -1.0, 1.0]),
                (300, 200, [-0.9, 0.6, -0.4, 0.85]),
            ] {
                let opts = RenderOptions {
                    tiles: vec![16, 4, 1],
                    ..RenderOptions::new(w, h, region)
                };
                let (proven, _) = rigorous.render(&opts).unwrap();
                let sampled = sampler.render(w, h, region).unwrap();
                assert_eq!(sampled.len(), proven.classes.len());
                let mut same = 0;
                let mut certain = 0;
                for (&a, &b) in sampled.iter().zip(&proven.classes) {
                    assert!(!opposite(a, b), "{name} {p:?} {w}x{h}: a sign contradicts");
                    if b != BOUNDARY {
                        certain += 1;
                        same += (a == b) as usize;
                    }
                }
                assert!(
                    certain > 0 && same == certain,
                    "{name} {p:?} {w}x{h}: {same} of {certain}"
                );
            }
        }
    }
}

/// Tapes with operations run by their lowering (linked into the interpreter as device
/// functions): without point functions the GPU gives the CPU's classes, rounds and tape
/// lengths bit for bit; with them (sin, exp, atan2, log: the GPU's bounds a few ulps wider)
/// never a contradiction with the CPU's tape or the GPU's plain render, and most pixels alike.
/// f64 and f32, two tile plans.
#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn tapes_with_functions_on_the_gpu() {
    use ivjit::search::tape::{self, TapeBackend};
    crate::common::gpu::require_gpu("tapes_with_functions_on_the_gpu");
    let cases = [
        ("min(x^3 - y, (x*y)/(1 + x^2) - floor(3*y)/4)", true),
        (
            "max(abs(x) - 0.7, x^5 / (0.1 + y^2) - 1) + min(0, fma(x, y, -0.2))",
            true,
        ),
        ("min(sin(4*x) - y, sqrt(sqr(x) + sqr(y)) - 0.6)", false),
        (
            "min(exp(-x*x)*cos(8*y) - 0.2, max(abs(x) - 0.5, abs(y) - 0.5))",
            false,
        ),
        (
            "max(atan2(y, x) - 0.5, min(0.1, log(x*x + y*y + 0.01)))",
            false,
        ),
    ];
    for (text, exact) in cases {
        let expr = Expression::parse(text).unwrap();
        let name = &text[..text.len().min(40)];
        for p in [Precision::F64, Precision::F32] {
            let plain = Evaluator::new(&expr, p, BackendChoice::Gpu).unwrap();
            for (w, h, tiles) in [(333, 250, vec![16, 4, 1]), (512, 512, vec![64, 8, 1])] {
                let opts = RenderOptions {
                    tiles,
                    ..RenderOptions::new(w, h, [-1.1, 0.95, -1.0, 1.05])
                };
                let (a, sa) = tape::render(&expr, p, TapeBackend::Cpu, &opts).unwrap();
                let (b, sb) = tape::render(&expr, p, TapeBackend::Gpu, &opts).unwrap();
                let c = render(&plain, &opts).unwrap();
                if exact {
                    assert!(
                        a.classes == b.classes,
                        "{name} {p:?} {w}x{h}: classes differ"
                    );
                    assert_eq!((&a.rounds, &sa), (&b.rounds, &sb), "{name} {p:?} {w}x{h}");
                }
                for (other, what) in [(&a, "the cpu's tape"), (&c, "the gpu's plain render")] {
                    let bad = other
                        .classes
                        .iter()
                        .zip(&b.classes)
                        .filter(|(x, y)| opposite(**x, **y))
                        .count();
                    assert_eq!(bad, 0, "{name} {p:?} {w}x{h}: opposite classes to {what}");
                    let agree = other.classes.iter().zip(&b.classes).filter(|(x, y)| x == y);
                    assert!(
                        agree.count() * 10 > 9 * b.classes.len(),
                        "{name} {p:?}: {what}"
                    );
                }
                assert!(b.classes.iter().all(|&k| k <= BOUNDARY));
                println!("{name} {p:?} {w}x{h}: {sb:?}");
            }
        }
    }
}

#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn ray_hits_on_the_gpu_equal_the_cpu() {
    crate::common::gpu::require_gpu("ray_hits_on_the_gpu_equal_the_cpu");
    // A tangle cube seen along rays p(t) = eye + t * (F + u R + v U), written out in t, u, v.
    let surface = "x^4 - 5*x^2 + y^4 - 5*y^2 + z^4 - 5*z^2 + 11.8";
    let text = format!(
        "let x = 7.2 - t*(0.6 + 0.4*u); let y = 5.4 - t*(0.45 - 0.5*v); \
         let z = 9 - t*(0.75 + 0.3*u - 0.2*v); {surface}"
    );
    let rays: Vec<Ray> = (0..96 * 96)
        .map(|i| Ray {
            u: (i % 96) as f64 / 48.0 - 1.0,
            v: (i / 96) as f64 / 48.0 - 1.0,
            t0: 4.0,
            t1: 20.0,
            min_width: 16.0 / 1024.0,
        })
        .collect();
    for p in [Precision::F64, Precision::F32] {
        for split in [2, 8] {
            let (cpu, gpu) = pair(&text, p);
            let a = first_hits(&cpu, &rays, split).unwrap();
            let b = first_hits(&gpu, &rays, split).unwrap();
            assert!(a.hits == b.hits, "{p:?} split {split}: hits differ");
            assert_eq!(a.boxes, b.boxes, "{p:?} split {split}");
            assert!(a.hits.iter().filter(|h| h.is_some()).count() > 1000);
            // Split into three parts (blocks of 1,024 rays dealt round-robin over the GPUs;
            // on one GPU three launches of it), the rays put back in their places.
            std::env::set_var("IVJIT_SEARCH_PARTS", "3");
            let c = first_hits(&gpu, &rays, split).unwrap();
            std::env::remove_var("IVJIT_SEARCH_PARTS");
            assert!(
                a.hits == c.hits,
                "{p:?} split {split} in parts: hits differ"
            );
            assert_eq!(a.boxes, c.boxes, "{p:?} split {split} in parts");
        }
    }
    // With point functions both searches are rigorous but the GPU's point bounds are a few
    // ulps wider, so a ray may stop at another candidate piece: most rays agree.
    let wavy = "let x = t; let y = u; let z = v; sin(3*x)*cos(3*y) + 0.2*z - 0.1";
    let rays: Vec<Ray> = (0..64 * 64)
        .map(|i| Ray {
            u: (i % 64) as f64 / 32.0 - 1.0,
            v: (i / 64) as f64 / 32.0 - 1.0,
            t0: -2.0,
            t1: 2.0,
            min_width: 4.0 / 512.0,
        })
        .collect();
    let (cpu, gpu) = pair(wavy, Precision::F64);
    let a = first_hits(&cpu, &rays, 2).unwrap();
    let b = first_hits(&gpu, &rays, 2).unwrap();
    let same = a.hits.iter().zip(&b.hits).filter(|(x, y)| x == y).count();
    assert!(
        same * 10 > 9 * rays.len(),
        "{same} of {} rays agree",
        rays.len()
    );
}

/// A depth map's rays made by the device from the grid (`DepthMap::first_hits`) give the hits
/// of the host's rays (`DepthMap::rays`) searched on the CPU, bit for bit: a ragged grid whose
/// steps are not representable, in one part and in three (the kernel's deal of blocks), and a
/// map whose segment overflows is the list's error.
#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn depth_map_rays_made_on_the_gpu_equal_the_cpu() {
    crate::common::gpu::require_gpu("depth_map_rays_made_on_the_gpu_equal_the_cpu");
    let surface =
        Expression::parse("x^2 + 1.3*y^2 + z^2 - 0.8 + 0.3*x*y - 0.2*z^3 + 0.05*sqrt(x^2 + 1)")
            .unwrap();
    let map = ivjit::search::ray::DepthMap {
        width: 333,
        height: 129,
        region: [-1.1, 0.9, -0.7, 1.3],
        zrange: (-1.0, 1.2),
        steps: 300,
    };
    let expr = map.along_rays(&surface).unwrap();
    let rays = map.rays().unwrap();
    for p in [Precision::F64, Precision::F32] {
        let (cpu, gpu) = pair(expr.source(), p);
        let a = first_hits(&cpu, &rays, 8).unwrap();
        let hit = a.hits.iter().filter(|h| h.is_some()).count();
        assert!(
            hit > rays.len() / 4 && hit < rays.len(),
            "{p:?}: {hit} hits"
        );
        for parts in [None, Some("3")] {
            if let Some(k) = parts {
                std::env::set_var("IVJIT_SEARCH_PARTS", k);
            }
            let b = map.first_hits(&gpu, 8).unwrap();
            std::env::remove_var("IVJIT_SEARCH_PARTS");
            assert!(a.hits == b.hits, "{p:?} parts {parts:?}: hits differ");
            assert_eq!(a.boxes, b.boxes, "{p:?} parts {parts:?}");
        }
    }
    // Rays whose stack runs out on the device (every piece of `(z + 1e-300) - z` may hold a
    // root: 32 pieces a step overflow the device's stack of 48 at the second step) are
    // finished on the CPU from the grid's rays: the CPU's hits.
    let flat = ivjit::search::ray::DepthMap {
        width: 40,
        height: 30,
        steps: 1 << 20,
        ..map
    };
    let expr = flat
        .along_rays(&Expression::parse("(z + 1e-300) - z").unwrap())
        .unwrap();
    let (cpu, gpu) = pair(expr.source(), Precision::F64);
    let a = first_hits(&cpu, &flat.rays().unwrap(), 32).unwrap();
    let b = flat.first_hits(&gpu, 32).unwrap();
    assert_eq!(b.finished_on_cpu, 1200);
    assert!(a.hits == b.hits && a.hits.iter().all(|h| h.is_some()));
    // The device also counts the two steps' 64 pieces of each ray it gave up.
    assert_eq!(a.boxes + 64 * 1200, b.boxes);
    // The largest spans that do not overflow (the largest floats among the pixels' centres
    // and the lines' ends): the device's rays and hits are the host's, bit for bit.
    let max = f64::MAX;
    let wide = ivjit::search::ray::DepthMap {
        width: 33,
        height: 17,
        region: [-max / 2.0, max / 2.0, 0.0, max],
        zrange: (-max / 2.0, max / 2.0),
        steps: 300,
    };
    for p in [Precision::F64, Precision::F32] {
        let (cpu, gpu) = pair(wide.along_rays(&surface).unwrap().source(), p);
        let a = first_hits(&cpu, &wide.rays().unwrap(), 8).unwrap();
        let b = wide.first_hits(&gpu, 8).unwrap();
        assert!(a.hits == b.hits, "{p:?}: the widest map's hits differ");
        assert_eq!(a.boxes, b.boxes, "{p:?}: the widest map");
    }
    // A span that overflows is the options' error, on the device as on the host.
    let far = ivjit::search::ray::DepthMap {
        region: [-max, max, -0.7, 1.3],
        ..map
    };
    let (_, gpu) = pair(map.along_rays(&surface).unwrap().source(), Precision::F64);
    let grid = far.first_hits(&gpu, 8).unwrap_err().to_string();
    assert!(grid.contains("span"), "{grid}");
    assert_eq!(far.rays().unwrap_err().to_string(), grid);
}

#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn branch_and_bound_on_the_gpu_equals_the_cpu() {
    use ivjit::search::minimize::{minimize, Ended};
    crate::common::gpu::require_gpu("branch_and_bound_on_the_gpu_equals_the_cpu");
    let camel = "4*x^2 - 2.1*x^4 + x^6/3 + x*y - 4*y^2 + 4*y^4";
    let levy = "let w1 = 1 + (x - 1)/4; let w2 = 1 + (y - 1)/4; let w3 = 1 + (z - 1)/4; \
                (w1 - 1)^2 * (1 + 10*(0.5 - 0.5*(w2 - 1))^2) + (w3 - 1)^2 + (w2 - 1)^2 * 0.5";
    type Case<'a> = (&'a str, Vec<(f64, f64)>, f64, u64);
    let cases: Vec<Case> = vec![
        (camel, vec![(-3.0, 3.0), (-2.0, 2.0)], 1e-5, 20_000_000),
        (camel, vec![(-3.0, 3.0), (-2.0, 2.0)], 1e-12, 200_000),
        (levy, vec![(-10.0, 10.0); 3], 1e-4, 20_000_000),
    ];
    for (text, root, tol, budget) in &cases {
        for p in [Precision::F64, Precision::F32] {
            let (cpu, gpu) = pair(text, p);
            let a = minimize(&cpu, root, *tol, *budget).unwrap();
            let b = minimize(&gpu, root, *tol, *budget).unwrap();
            let at = format!("{text:.20} {p:?} tol {tol}");
            assert_eq!(a.lower.to_bits(), b.lower.to_bits(), "{at}: {a:?} {b:?}");
            assert_eq!(a.upper.to_bits(), b.upper.to_bits(), "{at}");
            assert_eq!(
                (a.rounds, a.boxes, a.remaining, a.ended),
                (b.rounds, b.boxes, b.remaining, b.ended),
                "{at}"
            );
            // The argmin is a midpoint that gave `upper`: f there is at most upper.
            let e = ivjit::Expression::parse(text).unwrap();
            let ev = Evaluator::new(&e, p, BackendChoice::Cpu).unwrap();
            let at_min: Vec<ivjit::Interval> = b
                .argmin
                .iter()
                .map(|&c| ivjit::Interval::point(c).unwrap())
                .collect();
            assert!(ev.eval(&at_min).unwrap()[0].lo <= b.upper, "{at}");
            assert_eq!((a.gpu_rounds, b.gpu_rounds), (0, b.rounds), "{at}");
            // Again on the same evaluator: through the lists its device kept.
            let again = minimize(&gpu, root, *tol, *budget).unwrap();
            assert_eq!(outcome(&again), outcome(&a), "{at}: again");
            // `auto` on a GPU: the first rounds on the CPU, the rest (if any) on the GPU, with
            // the same result. Rounds of millions of boxes are never the CPU's.
            let e = ivjit::Expression::parse(text).unwrap();
            let auto = Evaluator::new(&e, p, BackendChoice::Auto).unwrap();
            assert_eq!(auto.backend(), Backend::Gpu);
            let c = minimize(&auto, root, *tol, *budget).unwrap();
            assert_eq!(outcome(&c), outcome(&a), "{at}: auto");
            if a.boxes > 1_000_000 {
                assert!(c.gpu_rounds > 0, "{at}: {c:?}");
            }
        }
    }
    let (_, gpu) = pair(camel, Precision::F64);
    let m = minimize(&gpu, &[(-3.0, 3.0), (-2.0, 2.0)], 1e-12, 200_000).unwrap();
    assert_eq!(m.ended, Ended::Budget);
    // Every round shared among three parts (round-robin over the GPUs: on one GPU three lists
    // on it), the boxes moved between them to keep them even: the same bounds, rounds, boxes.
    std::env::set_var("IVJIT_SEARCH_PARTS", "3");
    for (text, root, tol, budget) in &cases {
        for p in [Precision::F64, Precision::F32] {
            let (cpu, gpu) = pair(text, p);
            let a = minimize(&cpu, root, *tol, *budget).unwrap();
            let b = minimize(&gpu, root, *tol, *budget).unwrap();
            let at = format!("{text:.20} {p:?} tol {tol} in parts");
            assert_eq!(outcome(&b), outcome(&a), "{at}");
        }
    }
    std::env::remove_var("IVJIT_SEARCH_PARTS");
}

/// Branch and bound in the minimization form with the local descent (the gradient compiled
/// into the search's kernel, the descent's evaluations on the device, its better bound written
/// into the device's upper bound): the same enclosure, rounds and boxes as the CPU.
#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn gradient_branch_and_bound_on_the_gpu_equals_the_cpu() {
    use ivjit::search::minimize::{minimize_handing_over, minimize_with, Descent};
    crate::common::gpu::require_gpu("gradient_branch_and_bound_on_the_gpu_equals_the_cpu");
    type Case<'a> = (&'a str, Vec<(f64, f64)>, f64);
    let cases: [Case; 3] = [
        (
            "4*x^2 - 2.1*x^4 + x^6/3 + x*y - 4*y^2 + 4*y^4",
            vec![(-3.0, 3.0), (-2.0, 2.0)],
            1e-6,
        ),
        (
            "100*(y - x^2)^2 + (1 - x)^2 + 100*(z - y^2)^2 + (1 - y)^2",
            vec![(-5.0, 5.0); 3],
            1e-6,
        ),
        // No point function (sin, cos, ...): those give other bits on each backend.
        (
            "abs(x - 0.3) + (y^2 - 1)^2 / 4 + min(x, y) / 8",
            vec![(-2.0, 2.0); 2],
            1e-6,
        ),
    ];
    for (text, root, tol) in &cases {
        for p in [Precision::F64, Precision::F32] {
            let e = Expression::parse(text).unwrap();
            let form = e.minimization_form(root).unwrap();
            let (g, layout) = e.gradient().unwrap();
            let on = |b| {
                let f = Evaluator::new(&form, p, b).unwrap();
                let g = Evaluator::new(&g, p, b).unwrap();
                (f, g)
            };
            let ((fc, gc), (fg, gg)) = (on(BackendChoice::Cpu), on(BackendChoice::Gpu));
            assert_eq!(fg.backend(), Backend::Gpu);
            let d = |g| Descent {
                gradient: g,
                layout,
                steps: 100,
            };
            let a = minimize_with(&fc, root, *tol, 10_000_000, Some(&d(&gc))).unwrap();
            let b = minimize_with(&fg, root, *tol, 10_000_000, Some(&d(&gg))).unwrap();
            let at = format!("{text:.20} {p:?}");
            assert_eq!(a.lower.to_bits(), b.lower.to_bits(), "{at}: {a:?} {b:?}");
            assert_eq!(a.upper.to_bits(), b.upper.to_bits(), "{at}: {a:?} {b:?}");
            assert_eq!(
                (a.rounds, a.boxes, a.remaining, a.ended),
                (b.rounds, b.boxes, b.remaining, b.ended),
                "{at}"
            );
            assert!(a.complete(), "{at}: {a:?}");
            // Shared among three parts (the descent's bound written to every part).
            std::env::set_var("IVJIT_SEARCH_PARTS", "3");
            let c = minimize_with(&fg, root, *tol, 10_000_000, Some(&d(&gg))).unwrap();
            std::env::remove_var("IVJIT_SEARCH_PARTS");
            assert_eq!(outcome(&c), outcome(&a), "{at}: in parts");
            // Handed from the CPU to the GPU before round r (the descent on the CPU): the same
            // search, its last rounds counted as the GPU's.
            for r in [
                0,
                1,
                2,
                7,
                a.rounds / 2,
                a.rounds - 1,
                a.rounds,
                a.rounds + 3,
            ] {
                let c =
                    minimize_handing_over(&fg, root, *tol, 10_000_000, Some(&d(&gc)), r).unwrap();
                assert_eq!(outcome(&c), outcome(&a), "{at}: handed over at round {r}");
                assert_eq!(c.gpu_rounds, a.rounds.saturating_sub(r), "{at}: {r}");
            }
        }
    }
}

/// Root isolation with interval Newton (the residual's exclusion and Krawczyk's test, both
/// evaluated on the device): the same boxes and verdicts as the CPU.
#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn newton_isolation_on_the_gpu_equals_the_cpu() {
    use ivjit::search::newton::Solver;
    crate::common::gpu::require_gpu("newton_isolation_on_the_gpu_equals_the_cpu");
    let w20: Vec<String> = (1..=20).map(|i| format!("(x-{i})")).collect();
    let cases = [
        (w20.join("*"), vec![(0.0, 21.0)]),
        ("x^2 + y^2 - 1, y - x^3".to_string(), vec![(-2.0, 2.0); 2]),
        ("(x-2)^2".to_string(), vec![(0.0, 4.0)]),
    ];
    for (text, root) in &cases {
        let e = Expression::parse(text).unwrap();
        let run = |b| {
            let solver = Solver::new(&e, b).unwrap();
            solver.isolate(root, 1e-12, 1 << 24).unwrap()
        };
        // What the backends agree on: all but where the rounds and batches ran.
        let same = |m: &ivjit::search::newton::Isolated| {
            (
                m.zeros.clone(),
                m.ended,
                m.evaluated,
                m.rounds,
                m.batches,
                m.newton_steps,
            )
        };
        let (a, b) = (run(BackendChoice::Cpu), run(BackendChoice::Gpu));
        assert_eq!(same(&a), same(&b), "{text:.30}");
        assert_eq!((a.gpu_rounds, a.gpu_batches), (0, 0), "{text:.30}");
        assert_eq!(
            (b.gpu_rounds, b.gpu_batches),
            (b.rounds, b.batches),
            "{text:.30}"
        );
        // `auto`: the exclusion handed over by its pace, Krawczyk's batches on the CPU while
        // they are small; the same zeros, and a count of each that ran on the GPU.
        let c = run(BackendChoice::Auto);
        assert_eq!(same(&a), same(&c), "{text:.30}: auto");
        assert!(c.gpu_rounds <= c.rounds && c.gpu_batches <= c.batches);
        assert!(!a.zeros.is_empty());
    }
}

#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn exclusion_on_the_gpu_equals_the_cpu() {
    use ivjit::search::exclude::{exclude, exclude_handing_over, Ended};
    crate::common::gpu::require_gpu("exclusion_on_the_gpu_equals_the_cpu");
    type Case<'a> = (&'a str, Vec<(f64, f64)>, f64, f64, u64);
    let cases: Vec<Case> = vec![
        (
            "x^2 + y^2",
            vec![(-2.0, 2.0), (-1.5, 1.5)],
            1.0,
            1e-4,
            50_000_000,
        ),
        (
            "x^2 + y^2",
            vec![(-2.0, 2.0), (-1.5, 1.5)],
            1.0,
            1e-9,
            300_000,
        ),
        (
            "(x - 1)*(x - 2)*(x - 3)",
            vec![(0.0, 4.0)],
            0.0,
            1e-12,
            1 << 20,
        ),
        (
            "x*y*z - 0.1 + x^2",
            vec![(-1.0, 1.0); 3],
            0.0,
            1e-2,
            20_000_000,
        ),
        (
            "sin(5*x) - y",
            vec![(-2.0, 2.0), (-1.0, 1.0)],
            0.0,
            1e-4,
            50_000_000,
        ),
    ];
    for (text, root, level, tol, budget) in &cases {
        for p in [Precision::F64, Precision::F32] {
            let (cpu, gpu) = pair(text, p);
            let mut a = exclude(&cpu, root, *level, *tol, *budget).unwrap();
            let mut b = exclude(&gpu, root, *level, *tol, *budget).unwrap();
            for s in [&mut a, &mut b] {
                s.boxes.sort();
                s.unfinished.sort();
            }
            let at = format!("{text} {p:?} tol {tol}");
            if text.contains("sin") {
                // Point bounds differ: both cover the level set, most boxes agree.
                let theirs: std::collections::HashSet<Vec<u64>> = b
                    .boxes
                    .iter()
                    .map(|x| {
                        x.iter()
                            .flat_map(|s| [s.0.to_bits(), s.1.to_bits()])
                            .collect()
                    })
                    .collect();
                let same = a
                    .boxes
                    .iter()
                    .filter(|x| {
                        let k: Vec<u64> = x
                            .iter()
                            .flat_map(|s| [s.0.to_bits(), s.1.to_bits()])
                            .collect();
                        theirs.contains(&k)
                    })
                    .count();
                assert!(same * 10 >= 9 * a.boxes.len(), "{at}");
            } else {
                assert_eq!(
                    (a.ended, a.rounds, a.evaluated),
                    (b.ended, b.rounds, b.evaluated),
                    "{at}"
                );
                assert!(a.boxes == b.boxes, "{at}: final boxes differ");
                assert!(
                    a.unfinished == b.unfinished,
                    "{at}: unfinished boxes differ"
                );
                // The same rounds, evaluations and boxes (in any order) as the CPU's.
                let same_as_cpu = |mut c: ivjit::search::exclude::Survivors, what: &str| {
                    c.boxes.sort();
                    c.unfinished.sort();
                    assert_eq!(
                        (c.ended, c.rounds, c.evaluated),
                        (a.ended, a.rounds, a.evaluated),
                        "{at}: {what}"
                    );
                    assert!(
                        c.boxes == a.boxes && c.unfinished == a.unfinished,
                        "{at}: {what}"
                    );
                    c
                };
                // Every round shared among three parts (round-robin over the GPUs; on one
                // GPU three lists on it).
                std::env::set_var("IVJIT_SEARCH_PARTS", "3");
                let c = exclude(&gpu, root, *level, *tol, *budget).unwrap();
                std::env::remove_var("IVJIT_SEARCH_PARTS");
                same_as_cpu(c, "in parts");
                // Handed from the CPU to the GPU before round r, and on `auto`: the same
                // boxes, the last rounds counted as the GPU's.
                let auto =
                    Evaluator::new(&Expression::parse(text).unwrap(), p, BackendChoice::Auto)
                        .unwrap();
                let rounds = [0, 1, 5, a.rounds / 2, a.rounds - 1, a.rounds + 2];
                for r in rounds.into_iter().map(Some).chain([None]) {
                    let c = match r {
                        Some(r) => exclude_handing_over(&gpu, root, *level, *tol, *budget, r),
                        None => exclude(&auto, root, *level, *tol, *budget),
                    }
                    .unwrap();
                    let c = same_as_cpu(c, &format!("handed over at {r:?}"));
                    if let Some(r) = r {
                        assert_eq!(c.gpu_rounds, a.rounds.saturating_sub(r), "{at}: {r}");
                    } else if a.evaluated > 10_000_000 {
                        assert!(c.gpu_rounds > 0, "{at}: auto");
                    }
                }
            }
            assert!(a.ended != Ended::Memory, "{at}");
            assert!(!a.boxes.is_empty() || !a.unfinished.is_empty(), "{at}");
        }
    }
}

#[path = "../../examples/raytrace.rs"]
#[allow(dead_code)]
mod raytrace_example;

/// The tracer: the GPU makes, clips and searches every pixel's ray (the ray search's kernel)
/// and shades the hits; its hits equal the CPU's bit for bit (no point functions), the
/// pictures agree but for rounding in the cosmetic shading, and the image alone
/// (`trace_image`, the hits left on the device) is the frame's.
#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn tracing_on_the_gpu_equals_the_cpu() {
    use ivjit::search::trace::{trace, trace_image, Camera, View};
    crate::common::gpu::require_gpu("tracing_on_the_gpu_equals_the_cpu");
    for scene in raytrace_example::scenes().into_iter().take(4) {
        for p in [Precision::F64, Precision::F32] {
            let cam = Camera::look_at(scene.eye, scene.center, scene.fov_degrees).unwrap();
            let composed = raytrace_example::ray_expression(scene.expr, &cam);
            let (ray_cpu, ray_gpu) = pair(&composed, p);
            let (surf_cpu, surf_gpu) = pair(scene.expr, p);
            let view = View {
                width: 160,
                height: 120,
                center: scene.center,
                radius: scene.radius,
                steps: 1024,
                split: 8,
            };
            let a = trace(&ray_cpu, &surf_cpu, &cam, &view).unwrap();
            let b = trace(&ray_gpu, &surf_gpu, &cam, &view).unwrap();
            let at = format!("{} {p:?}", scene.name);
            assert!(a.hits == b.hits, "{at}: hits differ");
            assert_eq!(a.boxes, b.boxes, "{at}");
            assert!(a.hits.iter().filter(|h| h.is_some()).count() > 1000, "{at}");
            let close = a
                .rgb
                .iter()
                .zip(&b.rgb)
                .filter(|(x, y)| x.abs_diff(**y) <= 2)
                .count();
            assert!(close * 100 >= 99 * a.rgb.len(), "{at}: pictures differ");
            // The image alone (the hits left on the device) is the frame's, bit for bit.
            let c = trace_image(&ray_gpu, &surf_gpu, &cam, &view).unwrap();
            assert!(c.rgb == b.rgb, "{at}: the image alone differs");
            assert_eq!((c.boxes, c.finished_on_cpu), (b.boxes, 0), "{at}");
        }
    }
    // Rays whose stack runs out on the device (every piece of `(x + 1e-300) - x` may hold a
    // root: 32 pieces a step overflow the stack of 48 at the second step) are finished on the
    // CPU: the CPU's hits, frame after frame (the second reuses the first's buffers).
    let scene = &raytrace_example::scenes()[0];
    let cam = Camera::look_at(scene.eye, scene.center, scene.fov_degrees).unwrap();
    let flat = "(x + 1e-300) - x";
    let (ray_cpu, ray_gpu) = pair(
        &raytrace_example::ray_expression(flat, &cam),
        Precision::F64,
    );
    let (surf_cpu, surf_gpu) = pair(flat, Precision::F64);
    let view = View {
        width: 40,
        height: 30,
        center: scene.center,
        radius: scene.radius,
        steps: 1 << 20,
        split: 32,
    };
    let a = trace(&ray_cpu, &surf_cpu, &cam, &view).unwrap();
    for frame in 0..2 {
        let b = trace(&ray_gpu, &surf_gpu, &cam, &view).unwrap();
        assert!(
            b.finished_on_cpu > 100,
            "frame {frame}: {}",
            b.finished_on_cpu
        );
        assert!(a.hits == b.hits, "frame {frame}: hits differ");
        // The device also counts the two steps' 64 pieces of each ray it gave up.
        let given_up = 64 * b.finished_on_cpu as u64;
        assert_eq!(a.boxes + given_up, b.boxes, "frame {frame}");
        // The image alone finds the given-up rays without the hits and shades them as the
        // frame does.
        let c = trace_image(&ray_gpu, &surf_gpu, &cam, &view).unwrap();
        assert_eq!(c.finished_on_cpu, b.finished_on_cpu, "frame {frame}");
        assert_eq!(c.boxes, b.boxes, "frame {frame}");
        assert!(c.rgb == b.rgb, "frame {frame}: the image alone differs");
    }
}

/// A paving's lists in one order (the GPU's rounds write each list in the order its boxes
/// reserve room, not the CPU's).
fn sorted_paving(mut p: ivjit::search::pave::Paving) -> ivjit::search::pave::Paving {
    let order = |a: &Vec<ivjit::Interval>, b: &Vec<ivjit::Interval>| {
        a.iter()
            .flat_map(|iv| [iv.lo, iv.hi])
            .zip(b.iter().flat_map(|iv| [iv.lo, iv.hi]))
            .map(|(x, y)| x.total_cmp(&y))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
    };
    p.inner.sort_by(order);
    p.boundary.sort_by(order);
    p.outer.sort_by(order);
    p
}

/// The three lists of two pavings hold the same boxes, bit for bit (signed zeros included).
fn assert_same_paving(
    cpu: ivjit::search::pave::Paving,
    gpu: ivjit::search::pave::Paving,
    what: &str,
) {
    assert_eq!(cpu.evaluated, gpu.evaluated, "{what}: boxes evaluated");
    assert_eq!(cpu.truncated, gpu.truncated, "{what}: truncated");
    let (cpu, gpu) = (sorted_paving(cpu), sorted_paving(gpu));
    let bits = |l: &[Vec<ivjit::Interval>]| -> Vec<u64> {
        l.iter()
            .flat_map(|b| b.iter().flat_map(|iv| [iv.lo.to_bits(), iv.hi.to_bits()]))
            .collect()
    };
    assert_eq!(bits(&cpu.inner), bits(&gpu.inner), "{what}: inner");
    assert_eq!(bits(&cpu.boundary), bits(&gpu.boundary), "{what}: boundary");
    assert_eq!(bits(&cpu.outer), bits(&gpu.outer), "{what}: outer");
}

/// Paving (`ivjit::search::pave`) on the GPU, its rounds on the device (the contractor, the
/// decorated functions and the complement's contractors on device buffers, one kernel sorting
/// the boxes into the lists), gives the CPU's three lists box for box (in another order): the
/// programs have no point calls (sin's would differ by ulps: both rigorous, not the same
/// bits), which both backends run bit for bit. Also on `auto` (the
/// first rounds on the CPU, the rest handed to the GPU), in 3-D, and with a budget that stops
/// the search early (the rest reported as boundary by both).
#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn paving_on_the_gpu_equals_the_cpu() {
    crate::common::gpu::require_gpu("paving_on_the_gpu_equals_the_cpu");
    use ivjit::search::pave::{Constraints, Paver};
    use ivjit::BackendChoice::{Auto, Cpu, Gpu};
    let iv = |a: f64, b: f64| ivjit::Interval::new(a, b).unwrap();
    let cases = [
        (
            "x^2 + y^2 in [1, 4], x / (1 + y^2) in [-0.5, 1]",
            vec![iv(-3.0, 3.0), iv(-3.0, 3.0)],
            0.005,
        ),
        (
            "x^2 + y^2 + z^2 <= 1, x + y + z >= 0.5",
            vec![iv(-2.0, 2.0), iv(-2.0, 2.0), iv(-2.0, 2.0)],
            0.05,
        ),
        // (sqrt is undefined on part of the box: decorations decide the inner boxes.)
        (
            "x^2 + y^2 <= 9, sqrt(x + 2) >= y, x*y in [-2, 1]",
            vec![iv(-4.0, 4.0), iv(-4.0, 4.0)],
            0.01,
        ),
    ];
    for (text, root, eps) in cases {
        let c = Constraints::parse(text).unwrap();
        for p in [ivjit::Precision::F64, ivjit::Precision::F32] {
            let cpu = Paver::new(&c, p, Cpu).unwrap();
            let gpu = Paver::new(&c, p, Gpu).unwrap();
            let auto = Paver::new(&c, p, Auto).unwrap();
            let want = cpu.pave(&root, eps, 1 << 22).unwrap();
            let t = std::time::Instant::now();
            let got = gpu.pave(&root, eps, 1 << 22).unwrap();
            eprintln!(
                "{text} {p:?}: {} inner, {} boundary, {} outer, {} evaluated; GPU {:?}",
                got.inner.len(),
                got.boundary.len(),
                got.outer.len(),
                got.evaluated,
                t.elapsed()
            );
            assert!(!got.inner.is_empty() && !got.boundary.is_empty() && !got.outer.is_empty());
            assert_same_paving(want.clone(), got, &format!("{text} {p:?} gpu"));
            let got = auto.pave(&root, eps, 1 << 22).unwrap();
            assert_same_paving(want.clone(), got, &format!("{text} {p:?} auto"));
            // A budget that ends the search in the middle of a round.
            let budget = want.evaluated / 3;
            let want = cpu.pave(&root, eps, budget).unwrap();
            assert!(want.truncated);
            let got = gpu.pave(&root, eps, budget).unwrap();
            assert_same_paving(want, got, &format!("{text} {p:?} budget {budget}"));
            // A fixpoint ratio: the same boxes go round again uncut on both.
            let want = cpu.with_ratio(0.2).pave(&root, eps, 1 << 22).unwrap();
            let got = gpu.with_ratio(0.2).pave(&root, eps, 1 << 22).unwrap();
            assert_same_paving(want, got, &format!("{text} {p:?} ratio 0.2"));
        }
    }
}

/// Paving with an unbounded root side and a constraint where x repeats (so the contractor
/// takes the centered step, with IEEE 1788's `mid` of the unbounded side): the GPU's paving is
/// the CPU's, bit for bit.
#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn unbounded_paving_with_the_centered_step_on_the_gpu_equals_the_cpu() {
    crate::common::gpu::require_gpu(
        "unbounded_paving_with_the_centered_step_on_the_gpu_equals_the_cpu",
    );
    use ivjit::search::pave::{pave, Constraints};
    let c = Constraints::parse("x^2 + y^2 <= 4, x*y - x^3 in [-0.5, 0.5]").unwrap();
    let root = [
        ivjit::Interval::ENTIRE,
        ivjit::Interval::new(-2.0, 2.0).unwrap(),
    ];
    for p in [ivjit::Precision::F64, ivjit::Precision::F32] {
        let cpu = pave(&c, &root, 0.01, 1 << 20, p, ivjit::BackendChoice::Cpu).unwrap();
        let gpu = pave(&c, &root, 0.01, 1 << 20, p, ivjit::BackendChoice::Gpu).unwrap();
        eprintln!(
            "{p:?}: {} inner, {} boundary, {} outer, {} evaluated",
            gpu.inner.len(),
            gpu.boundary.len(),
            gpu.outer.len(),
            gpu.evaluated
        );
        assert!(!gpu.inner.is_empty() && !gpu.boundary.is_empty());
        assert_same_paving(cpu, gpu, &format!("{p:?}"));
        // A fixpoint ratio over the unbounded side (it becomes bounded: a shrink, so the box
        // goes round again uncut) on both.
        let with = |b| {
            ivjit::search::pave::Paver::new(&c, p, b)
                .unwrap()
                .with_ratio(0.2)
                .pave(&root, 0.01, 1 << 20)
                .unwrap()
        };
        let (cpu, gpu) = (
            with(ivjit::BackendChoice::Cpu),
            with(ivjit::BackendChoice::Gpu),
        );
        assert_same_paving(cpu, gpu, &format!("{p:?} ratio 0.2"));
    }
}

/// Systems by branch and prune (`ivjit::search::system`) on the GPU: its rounds are batches
/// of the contractor, the Jacobian (Krawczyk's steps) and the decorated constraints, the same
/// bits as the CPU's for these programs without point calls, so the solutions, undecided and
/// inner boxes are the CPU's — also from an unbounded root box.
#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn system_solutions_on_the_gpu_equal_the_cpu() {
    crate::common::gpu::require_gpu("system_solutions_on_the_gpu_equal_the_cpu");
    use ivjit::search::pave::Constraints;
    use ivjit::search::system::{solve_system, SystemOptions};
    let iv = |a: f64, b: f64| ivjit::Interval::new(a, b).unwrap();
    let problems = [
        (
            "x^2 + y^2 == 5, x*y == 2, x >= 0",
            vec![iv(-3.0, 3.0), iv(-3.0, 3.0)],
            2,
        ),
        (
            "x*y == 1, x == y",
            vec![ivjit::Interval::ENTIRE, ivjit::Interval::ENTIRE],
            2,
        ),
        (
            "x^2 + y^2 + z^2 == 3, x*y*z == 1, x - y == 0",
            vec![iv(-2.0, 2.0), iv(-2.0, 2.0), iv(-2.0, 2.0)],
            0,
        ),
        (
            "x^2 + y^2 <= 1, y >= x^3",
            vec![iv(-2.0, 2.0), iv(-2.0, 2.0)],
            0,
        ),
    ];
    for (text, root, at_least) in problems {
        let c = Constraints::parse(text).unwrap();
        let o = SystemOptions {
            eps: if c.ranges.iter().any(|r| r.lo == r.hi) {
                1e-8
            } else {
                1e-2
            },
            max_boxes: 1 << 20,
        };
        let cpu = solve_system(&c, &root, o, ivjit::BackendChoice::Cpu).unwrap();
        let t = std::time::Instant::now();
        let gpu = solve_system(&c, &root, o, ivjit::BackendChoice::Gpu).unwrap();
        eprintln!(
            "{text}: {} solutions, {} undecided, {} inner, {} boxes; GPU {:?}",
            gpu.solutions.len(),
            gpu.undecided.len(),
            gpu.inner.len(),
            gpu.evaluated,
            t.elapsed()
        );
        assert!(gpu.solutions.len() >= at_least, "{text}: {gpu:?}");
        assert_eq!(cpu, gpu, "{text}");
    }
}

/// Constrained minimization (`ivjit::search::constrained`) on the GPU gives the CPU's
/// enclosure, best point and counts bit for bit: its rounds are batches of the contractors
/// (with and without the objective cut) and of the decorated problem, programs without point
/// calls here.
#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn constrained_minimum_on_the_gpu_equals_the_cpu() {
    crate::common::gpu::require_gpu("constrained_minimum_on_the_gpu_equals_the_cpu");
    use ivjit::search::constrained::{minimize_subject_to, ConstrainedOptions};
    use ivjit::search::pave::Constraints;
    let problems = [
        ("x + y", "x^2 + y^2 <= 1"),
        ("(x - 2)^2 + (y - 1)^2", "x^2 - y <= 0, x + y <= 2"),
        ("x*y + z", "x^2 + y^2 == 2, z >= x^3"),
    ];
    for (f, c) in problems {
        let c = Constraints::parse(c).unwrap();
        let n = ivjit::search::constrained::problem_expression(f, &c)
            .unwrap()
            .vars()
            .len();
        let root = vec![ivjit::Interval::new(-3.0, 3.0).unwrap(); n];
        for p in [ivjit::Precision::F64, ivjit::Precision::F32] {
            let o = ConstrainedOptions {
                tol: if p == ivjit::Precision::F64 {
                    1e-6
                } else {
                    1e-3
                },
                ..ConstrainedOptions::default()
            };
            let cpu = minimize_subject_to(f, &c, &root, o, p, ivjit::BackendChoice::Cpu).unwrap();
            let t = std::time::Instant::now();
            let gpu = minimize_subject_to(f, &c, &root, o, p, ivjit::BackendChoice::Gpu).unwrap();
            eprintln!(
                "{f} {p:?}: [{:e}, {:e}], {} boxes, {} rounds; GPU {:?}",
                gpu.lower,
                gpu.upper,
                gpu.evaluated,
                gpu.rounds,
                t.elapsed()
            );
            assert_eq!(cpu, gpu, "{f} {p:?}");
        }
    }
}

/// Meshes with the evaluations on the GPU: the CPU's mesh bit for bit (every vertex, triangle,
/// normal and count) where f calls no point function, f64 and f32, also on regions of every
/// class (huge, subnormal, reaching f64::MAX) and where f is undefined on part of the region;
/// with sin and cos (point calls, whose last bits differ between the backends) a closed
/// 2-manifold mesh either way.
#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn mesh_on_the_gpu_equals_the_cpu() {
    use ivjit::search::mesh::{mesh, MeshOptions};
    crate::common::gpu::require_gpu("mesh_on_the_gpu_equals_the_cpu");
    let base = MeshOptions {
        depth: 5,
        ..MeshOptions::default()
    };
    let cases = [
        ("x^2 + y^2 + z^2 - 0.36", base.clone()),
        ("sqr(x^2 + y^2 + z^2 + 0.21) - (x^2 + y^2)", base.clone()),
        (
            "abs(z - 0.013) - 0.001",
            MeshOptions {
                witness_levels: 4,
                ..base.clone()
            },
        ),
        ("sqrt(sqr(y - 0.03) + sqr(z + 0.03)) - 0.02", base.clone()),
        // A wall between the samples that 3 levels find: the device's witness search (the
        // case above, at 4 levels, runs the host's).
        ("abs(z - 0.013) - 0.003", base.clone()),
        (
            "max(abs(x) - 0.5, abs(y) - 0.4) - min(z, 0.2)",
            MeshOptions {
                region: [-2.0, 1.0, -1.0, 1.5, -0.5, 0.5],
                ..base.clone()
            },
        ),
    ];
    for p in [Precision::F64, Precision::F32] {
        for (text, o) in &cases {
            let (cpu, gpu) = pair(text, p);
            let (a, b) = (mesh(&cpu, o).unwrap(), mesh(&gpu, o).unwrap());
            assert!(!a.triangles.is_empty(), "{text} {p:?}: an empty mesh");
            if text.starts_with("abs(z") {
                let s = &a.stats;
                let found = s.cell_witnesses + s.face_witnesses + s.edge_witnesses;
                assert!(found > 0, "{text} {p:?}: the wall needs witnesses");
            }
            assert_eq!(a.stats, b.stats, "{text} {p:?}");
            assert_eq!(a.triangles, b.triangles, "{text} {p:?}");
            let bits = |m: &ivjit::search::mesh::Mesh| -> Vec<[u64; 3]> {
                m.vertices.iter().map(|v| v.map(f64::to_bits)).collect()
            };
            assert_eq!(bits(&a), bits(&b), "{text} {p:?}");
        }
        // Regions of every class (huge, subnormal, reaching the largest doubles) and f
        // undefined on part of the region, in f64: the CPU's mesh bit for bit.
        if p == Precision::F64 {
            let at = |region: [f64; 6]| MeshOptions {
                depth: 3,
                region,
                ..base.clone()
            };
            let big = f64::MAX;
            for (text, o) in [
                (
                    "x - 1e299",
                    at([-1e300, 1e300, -1e300, 1e300, -1e300, 1e300]),
                ),
                (
                    "x - 1e-311",
                    at([-1e-310, 1e-310, -1e-310, 1e-310, -1e-310, 1e-310]),
                ),
                ("x - 1e308", at([-big, big, -1.0, 1.0, -1.0, 1.0])),
                ("sqrt(x) - 0.5 + 0*y*z", base.clone()),
            ] {
                let (cpu, gpu) = pair(text, p);
                let (a, b) = (mesh(&cpu, &o).unwrap(), mesh(&gpu, &o).unwrap());
                assert!(!a.triangles.is_empty(), "{text}: an empty mesh");
                assert_eq!(a.stats, b.stats, "{text}");
                assert_eq!(a.triangles, b.triangles, "{text}");
                let bits = |m: &ivjit::search::mesh::Mesh| -> Vec<[u64; 3]> {
                    m.vertices.iter().map(|v| v.map(f64::to_bits)).collect()
                };
                assert_eq!(bits(&a), bits(&b), "{text}");
            }
        }
        // Normals from the gradient's program on each backend: the same bits.
        let text = "x^2 + y^2 + z^2 - 0.36";
        let (g, _) = Expression::parse(text).unwrap().gradient().unwrap();
        let (cpu, gpu) = pair(text, p);
        let grad_cpu = Evaluator::new(&g, p, BackendChoice::Cpu).unwrap();
        let grad_gpu = Evaluator::new(&g, p, BackendChoice::Gpu).unwrap();
        let a = ivjit::search::mesh::mesh_with_normals(&cpu, &grad_cpu, &base).unwrap();
        let b = ivjit::search::mesh::mesh_with_normals(&gpu, &grad_gpu, &base).unwrap();
        assert_eq!(a.stats, b.stats, "normals {p:?}");
        assert_eq!(a.normal_certain, b.normal_certain);
        let bits =
            |v: &[[f64; 3]]| -> Vec<[u64; 3]> { v.iter().map(|x| x.map(f64::to_bits)).collect() };
        assert_eq!(bits(&a.normals), bits(&b.normals), "normals {p:?}");
        assert!(a.normal_certain.iter().all(|&c| c));
        let (_, gpu) = pair("sin(4*x) * cos(3*y) + z/2", p);
        let m = mesh(&gpu, &base).unwrap();
        assert!(!m.triangles.is_empty());
        crate::common::mesh_check::topology(&m);
    }
}

/// Voxel depth maps (`search::voxels`) on the GPU against the CPU: the same heights, rounds
/// and tape lengths, for the union of two balls (whose heights the CPU's unit test checks
/// exactly), the colonnade, functions run by their lowering, and regions of every class
/// (huge, the largest floats, subnormal), frame after frame on one renderer (sizes and plans
/// that shrink and grow, each frame twice: the second takes the first's sizes as capacities);
/// and the certified normals, from the pruned tapes in the frame and from the gradient's
/// program on each backend, the same bits.
#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn voxel_depth_maps_on_the_gpu_equal_the_cpu() {
    use ivjit::search::tape::TapeBackend;
    use ivjit::search::voxels::{VoxelOptions, VoxelRenderer};
    crate::common::gpu::require_gpu("voxel_depth_maps_on_the_gpu_equal_the_cpu");
    let colonnade = {
        let path = std::path::Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap())
            .join("tests/data/models/colonnade.vm");
        ivjit::internals::syntax::tape::to_expression_text(&std::fs::read_to_string(path).unwrap())
            .unwrap()
    };
    let unit = [-1.0, 1.0, -1.0, 1.0, -1.0, 1.0];
    let big = f64::MAX;
    let frames = |region: [f64; 6]| {
        vec![
            VoxelOptions::new(64, 64, 64, region),
            VoxelOptions {
                tiles: vec![16, 4, 1],
                ..VoxelOptions::new(50, 37, 70, region)
            },
            VoxelOptions::new(128, 128, 128, region),
            VoxelOptions {
                tiles: vec![8, 2, 1],
                ..VoxelOptions::new(33, 40, 20, region)
            },
        ]
    };
    let cases: Vec<(String, Vec<VoxelOptions>)> = vec![
        (
            "min(x*x + y*y + z*z - 0.6, sqr(x - 0.5) + sqr(y + 0.25) + sqr(z - 0.5) - 0.1)"
                .to_string(),
            frames(unit),
        ),
        (colonnade, frames(unit)),
        (
            "max(sin(3*x) * cos(2*y) - z, x^2 + y^2 + z^2 - 0.9)".to_string(),
            frames(unit),
        ),
        // A smooth union (log-sum-exp) and a quotient: the derivative rules of the operations
        // run by their lowering.
        (
            "-0.1 * log(exp(-10*(x*x + y*y + z*z - 0.5)) + exp(-10*(z + 0.5))) - 0.05 / (1 + x*x)"
                .to_string(),
            frames(unit),
        ),
        (
            "x*x + y*y + z*z - 1e300".to_string(),
            frames([-1e200, 1e200, -1e200, 1e200, -1e200, 1e200]),
        ),
        (
            "z - 0.5*x + y".to_string(),
            frames([-big, big, -big, big, -big, big]),
        ),
        (
            "min(z - x, y + 1e-310)".to_string(),
            frames([-1e-308, 1e-308, -1e-308, 1e-308, -1e-308, 1e-308]),
        ),
    ];
    for (text, frames) in &cases {
        let expr = Expression::parse(text).unwrap();
        let name = &text[..text.len().min(40)];
        for p in [Precision::F64, Precision::F32] {
            let cpu = VoxelRenderer::new(&expr, p, TapeBackend::Cpu).unwrap();
            let gpu = VoxelRenderer::new(&expr, p, TapeBackend::Gpu).unwrap();
            for o in frames {
                let (a, sa) = cpu.render(o).unwrap();
                for again in 0..2 {
                    let (b, sb) = gpu.render(o).unwrap();
                    let what = format!("{name} {p:?} {:?} {:?} frame {again}", o.tiles, o.region);
                    assert!(a.heights == b.heights, "{what}: heights differ");
                    assert_eq!(a.rounds, b.rounds, "{what}");
                    assert_eq!(sa, sb, "{what}: tape lengths");
                }
                // Every voxel's class (no occlusion; twice, then a depth map again on the
                // same renderer): the CPU's classes, rounds and tape lengths.
                let (ca, sa) = cpu.classify(o).unwrap();
                for again in 0..2 {
                    let (cb, sb) = gpu.classify(o).unwrap();
                    let what = format!("{name} {p:?} {:?} {:?} classes {again}", o.tiles, o.region);
                    assert!(ca == cb, "{what}: classes differ");
                    assert_eq!(sa, sb, "{what}: tape lengths");
                }
                assert!(
                    gpu.render(o).unwrap().0.heights == a.heights,
                    "{name}: after classes"
                );
                // Normals from the pruned tapes in the frame (twice: with the buffers kept):
                // the CPU's bits.
                let bits = |v: &[Option<[f64; 3]>]| -> Vec<Option<[u64; 3]>> {
                    v.iter().map(|n| n.map(|n| n.map(f64::to_bits))).collect()
                };
                let (ma, na, _) = cpu.render_with_normals(o).unwrap();
                for again in 0..2 {
                    let (mb, nb, _) = gpu.render_with_normals(o).unwrap();
                    assert!(
                        ma.heights == mb.heights,
                        "{name} {p:?}: heights with normals"
                    );
                    if text.contains("exp") {
                        // Point functions (exp, log): the GPU's last bits differ; where both
                        // certify a normal, the two agree closely, and they certify as many.
                        // (A few ulps of the partials' bounds: run 113 saw 1.1e-6 in f32.)
                        let tol = if p == Precision::F32 { 1e-4 } else { 1e-9 };
                        let both = na.iter().zip(&nb).filter_map(|(a, b)| a.zip(*b));
                        for (a, b) in both {
                            let d: f64 = (0..3).map(|k| (a[k] - b[k]).abs()).sum();
                            assert!(d < tol, "{name} {p:?}: {a:?} against {b:?}");
                        }
                        let count = |v: &[Option<[f64; 3]>]| v.iter().flatten().count();
                        let (ca, cb) = (count(&na), count(&nb));
                        assert!(
                            ca.abs_diff(cb) * 100 <= ca.max(1),
                            "{name}: {ca} against {cb}"
                        );
                        assert!(ca > 0, "{name}: no normal certified");
                        continue;
                    }
                    assert!(
                        bits(&na) == bits(&nb),
                        "{name} {p:?} {:?} frame {again}: pruned normals differ",
                        o.tiles
                    );
                }
                // Normals from the gradient's program on each backend: the same bits where the
                // expression calls no point function (not the sin/cos and exp/log models).
                if !text.contains("sin") && !text.contains("exp") {
                    let (g, _) = expr.gradient().unwrap();
                    let on = |b| Evaluator::new(&g, p, b).unwrap();
                    let na = cpu.normals(&on(BackendChoice::Cpu), &a, o).unwrap();
                    let nb = gpu.normals(&on(BackendChoice::Gpu), &a, o).unwrap();
                    assert!(
                        bits(&na) == bits(&nb),
                        "{name} {p:?} {:?}: normals differ",
                        o.tiles
                    );
                }
                println!(
                    "{name} {p:?} {}x{}x{}: {} filled columns, {} boundary voxels",
                    o.width,
                    o.height,
                    o.depth,
                    a.heights.iter().filter(|&&h| h > 0).count(),
                    ca.boundary().len()
                );
            }
        }
    }
    // Capacities too short (halved: the 64^3 frame's one first-level boundary tile becomes a
    // capacity of none, so no pruning runs to flag it): the frame is rendered again reading
    // its counters — the same heights and voxel classes. Before the host checked the counts
    // itself, such a frame's columns came back too low. (Other tests rendering tapes meanwhile
    // take the reading pass too: the same results.)
    std::env::set_var("IVJIT_TAPE_SHORT_CAPS", "1");
    let expr = Expression::parse(&cases[0].0).unwrap();
    for p in [Precision::F64, Precision::F32] {
        let cpu = VoxelRenderer::new(&expr, p, TapeBackend::Cpu).unwrap();
        let gpu = VoxelRenderer::new(&expr, p, TapeBackend::Gpu).unwrap();
        for o in &frames(unit) {
            let (a, sa) = cpu.render(o).unwrap();
            let (ca, _) = cpu.classify(o).unwrap();
            for again in 0..3 {
                let what = format!("{p:?} {:?} frame {again}, short capacities", o.tiles);
                let (b, sb) = gpu.render(o).unwrap();
                assert!(a.heights == b.heights, "{what}: heights differ");
                assert_eq!((&a.rounds, &sa), (&b.rounds, &sb), "{what}");
                let (cb, _) = gpu.classify(o).unwrap();
                assert!(ca == cb, "{what}: classes differ");
            }
        }
    }
    std::env::remove_var("IVJIT_TAPE_SHORT_CAPS");
}
