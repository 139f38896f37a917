//! The ray-tracing example (`examples/raytrace.rs`) on small images, CPU backend: hits against
//! the analytic ray-sphere intersection, and a thin surface that point sampling loses.
#[path = "../../examples/raytrace.rs"]
#[allow(dead_code)]
mod example;

use example::{compile_and_render, point_sample, prove_hits, render, scenes, Camera, Options};
use ivjit::{BackendChoice, Precision};

fn options(name: &str, size: usize, steps: usize) -> (String, Options) {
    let s = scenes().into_iter().find(|s| s.name == name).unwrap();
    let o = Options {
        width: size,
        height: size,
        fov_degrees: s.fov_degrees,
        eye: s.eye,
        center: s.center,
        radius: s.radius,
        steps,
        split: 8,
        precision: Precision::F64,
        backend: BackendChoice::Cpu,
    };
    (s.expr.to_string(), o)
}

/// The unit sphere: every pixel whose ray clearly crosses the sphere is a hit, no hit lies
/// behind the true first intersection (rigor), and the hit is within a few steps of it; rays
/// that clearly pass by are misses.
#[test]
fn sphere_hits_match_the_analytic_intersection() {
    let (f, o) = options("sphere", 48, 1024);
    let frame = render(&f, &o).unwrap();
    let cam = Camera::look_at(o.eye, o.center, o.fov_degrees).unwrap();
    let (mut hits, mut misses) = (0, 0);
    for (p, hit) in frame.hits.iter().enumerate() {
        let (u, v) = Camera::screen(p % o.width, p / o.width, o.width, o.height);
        let d = cam.direction(u, v);
        // |e + t d|^2 = 1: a t^2 + 2 b t + c = 0.
        let a = d.iter().map(|x| x * x).sum::<f64>();
        let b = (0..3).map(|k| cam.eye[k] * d[k]).sum::<f64>();
        let c = cam.eye.iter().map(|x| x * x).sum::<f64>() - 1.0;
        // Squared distance of the ray's line from the center.
        let dist2 = c + 1.0 - b * b / a;
        if dist2 < 1.0 - 1e-6 {
            let t_star = (-b - (b * b - a * c).sqrt()) / a;
            let (lo, hi) = hit.unwrap_or_else(|| panic!("pixel {p}: the ray crosses the sphere"));
            assert!(
                lo <= t_star * (1.0 + 1e-12),
                "pixel {p}: hit [{lo}, {hi}] skips the root {t_star}"
            );
            // The clipped segment is at most the ball's diameter (plus its 1e-9 padding), so
            // one step is at most this long.
            let max_step = 2.0 * o.radius * (1.0 + 1e-6) / o.steps as f64;
            assert!(
                hi >= t_star - 4.0 * max_step,
                "pixel {p}: hit [{lo}, {hi}] far in front of the root {t_star}"
            );
            hits += 1;
        } else if dist2 > 1.02 * 1.02 {
            assert!(hit.is_none(), "pixel {p}: the ray misses the sphere");
            misses += 1;
        }
    }
    assert!(hits > 500 && misses > 500, "hits {hits}, misses {misses}");
    assert!(frame.boxes > 0 && frame.on_cpu == 0);
    assert_eq!(frame.rgb.len(), 3 * 48 * 48);
}

/// Three thin trumpets: point sampling with the same step count loses pixels the interval
/// search finds, some of them proven to hold a surface point; and every pixel where sampling
/// proves a crossing is also a hit of the interval search, no later than the sampled crossing.
#[test]
fn point_sampling_loses_thin_parts_the_interval_search_keeps() {
    let (f, o) = options("tri-trumpet", 64, 128);
    let (surface, frame) = compile_and_render(&f, &o).unwrap();
    let sampled = surface.sample(&o).unwrap();
    let lost: Vec<usize> = (0..frame.hits.len())
        .filter(|&p| frame.hits[p].is_some() && sampled.hits[p].is_none())
        .collect();
    let proven = prove_hits(&surface.ray, &o, &frame.hits, &lost, 1025).unwrap();
    let proven_lost = proven.iter().filter(|&&b| b).count();
    assert!(
        proven_lost > 0,
        "expected thin parts missed by sampling ({} lost, none proven)",
        lost.len()
    );
    // Sampled crossings that are certain must be found by the interval search, no later.
    let sampled_pixels: Vec<usize> = (0..sampled.hits.len())
        .filter(|&p| sampled.hits[p].is_some())
        .collect();
    let certain = prove_hits(&surface.ray, &o, &sampled.hits, &sampled_pixels, 2).unwrap();
    let mut checked = 0;
    for (&p, &ok) in sampled_pixels.iter().zip(&certain) {
        if ok {
            let (_, sample_hi) = sampled.hits[p].unwrap();
            let (lo, _) = frame.hits[p].unwrap_or_else(|| panic!("pixel {p}: root skipped"));
            assert!(lo <= sample_hi, "pixel {p}: hit after a proven crossing");
            checked += 1;
        }
    }
    assert!(checked > 20, "only {checked} proven sampled crossings");
}

/// Point sampling on its own finds the sphere where it is thick.
#[test]
fn point_sampling_finds_the_sphere() {
    let (f, o) = options("sphere", 16, 64);
    let (surface, _) = compile_and_render(&f, &o).unwrap();
    let s = surface.sample(&o).unwrap();
    let cam = surface.cam;
    let centre = (o.height / 2) * o.width + o.width / 2;
    assert!(s.hits[centre].is_some());
    assert!(s.hits[0].is_none(), "the corner ray misses the sphere");
    let again = point_sample(&surface.ray, &cam, &o).unwrap();
    assert_eq!(again, s.hits, "deterministic");
}

#[test]
fn surfaces_must_be_in_x_y_z() {
    let (_, o) = options("sphere", 8, 16);
    let err = render("x^2 + w^2 - 1", &o).unwrap_err();
    assert!(err.contains("x, y and z") && err.contains('w'), "{err}");
    let err = render("x, y", &o).unwrap_err();
    assert!(err.contains("one output"), "{err}");
    // A surface of fewer variables is fine: the cylinder x^2 + y^2 = 1 (infinite along z,
    // clipped by the ball).
    let frame = render("x^2 + y^2 - 1", &o).unwrap();
    assert!(frame.hits.iter().any(|h| h.is_some()));
}

/// Every named scene renders (tiny), and the custom expression path composes exactly.
#[test]
fn every_scene_renders() {
    for s in scenes() {
        let (f, o) = options(s.name, 12, 64);
        let frame = render(&f, &o).unwrap();
        assert!(
            frame.hits.iter().any(|h| h.is_some()),
            "{}: nothing visible",
            s.name
        );
    }
    let cam = Camera::look_at([1.0, 2.0, 3.0], [0.0; 3], 30.0).unwrap();
    let text = example::ray_expression("x + y + z", &cam);
    assert!(text.contains("let x = (0x1p+0) + t*("), "{text}");
    assert!(ivjit::Expression::parse(&text).is_ok());
}
