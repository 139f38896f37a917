//! Ray tracing an implicit surface f(x, y, z) = 0 with a pinhole camera: the ray rule
//! ([`super::ray`]) for every pixel, with the rays made and clipped, and the hits shaded, where
//! the search runs. On the GPU the ray search's kernel makes, clips and searches the rays and
//! a second kernel shades the hits; the host receives the image (and the hits, unless
//! [`trace_image`] leaves them on the device); on the CPU the same arithmetic runs in rayon
//! tasks.
//!
//! The ray of pixel (i, j) (column i, row j from the top) is `p(t) = eye + t d` with
//! `d = F + u R + v U`, (u, v) the pixel's screen coordinates ([`Camera::screen`]); the search
//! runs on the *exact* line these doubles define, through an expression in t, u, v that the
//! caller composes (f with the camera's numbers written exactly: see `examples/raytrace.rs`).
//! Each ray is clipped to the ball where the scene lives ([`clip`], in f64, widened by a
//! relative 1e-9), and resolved to `1/steps` of its clipped segment. The ray generation, the
//! clipping and the search use correctly rounded operations in a fixed order on both backends,
//! so the hits are the same bit for bit when the expression calls no point function. The
//! shading (a normal from central differences of f at the hit, a key light and a headlight) is
//! cosmetic and may differ in the last bit of a colour.

use rayon::prelude::*;

use super::ray::{first_hits, Ray};
use super::SearchError;

pub(crate) mod gpu;
use crate::{Backend, Error, Evaluator};

/// A pinhole camera: the eye and the forward, right and up vectors (right and up scaled to the
/// half field of view).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Camera {
    /// Where the rays start.
    pub eye: [f64; 3],
    /// The unit view direction.
    pub forward: [f64; 3],
    /// The screen's right vector, of length tan(fov / 2).
    pub right: [f64; 3],
    /// The screen's up vector, of length tan(fov / 2).
    pub up: [f64; 3],
}

fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

/// `a0 b0 + a1 b1 + a2 b2`, in that order (the GPU's order too).
pub(crate) fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

fn scale(a: [f64; 3], s: f64) -> [f64; 3] {
    [a[0] * s, a[1] * s, a[2] * s]
}

fn normalize(a: [f64; 3]) -> [f64; 3] {
    scale(a, 1.0 / dot(a, a).sqrt())
}

impl Camera {
    /// A camera at `eye` looking at `center`, y up (z up when looking along y).
    pub fn look_at(eye: [f64; 3], center: [f64; 3], fov_degrees: f64) -> Result<Camera, String> {
        let f = sub(center, eye);
        if dot(f, f) == 0.0 || !dot(f, f).is_finite() {
            return Err("the eye and the center must be distinct finite points".into());
        }
        let forward = normalize(f);
        let mut world_up = [0.0, 1.0, 0.0];
        if cross(forward, world_up) == [0.0; 3] {
            world_up = [0.0, 0.0, 1.0];
        }
        let half = (fov_degrees.to_radians() / 2.0).tan();
        if !(half.is_finite() && half > 0.0) {
            return Err(format!(
                "field of view {fov_degrees} degrees: expected an angle in (0, 180)"
            ));
        }
        let right = normalize(cross(forward, world_up));
        let up = cross(right, forward);
        Ok(Camera {
            eye,
            forward,
            right: scale(right, half),
            up: scale(up, half),
        })
    }

    /// The screen coordinates (u, v) of pixel (i, j) of a w x h image (column i, row j = 0 at
    /// the top).
    pub fn screen(i: usize, j: usize, w: usize, h: usize) -> (f64, f64) {
        let aspect = w as f64 / h as f64;
        let u = ((i as f64 + 0.5) / w as f64 * 2.0 - 1.0) * aspect;
        let v = 1.0 - (j as f64 + 0.5) / h as f64 * 2.0;
        (u, v)
    }

    /// The ray direction `F + u R + v U` in f64 (for clipping and shading; the search uses
    /// the exact direction through the composed expression).
    pub fn direction(&self, u: f64, v: f64) -> [f64; 3] {
        let mut d = [0.0; 3];
        for (k, dk) in d.iter_mut().enumerate() {
            *dk = self.forward[k] + u * self.right[k] + v * self.up[k];
        }
        d
    }
}

/// `f` (an expression in x, y, z; `let` bindings allowed) composed with the camera's rays: an
/// expression in t, u, v, the ray of screen point (u, v) being the exact real line
/// `eye + t (F + u R + v U)` of the camera's doubles (each written as an exact hex-float), which
/// [`trace`] searches with u and v as point intervals.
///
/// ```
/// use ivjit::search::trace::{ray_expression, Camera};
/// let cam = Camera::look_at([0.0, 0.0, 3.0], [0.0; 3], 40.0).unwrap();
/// let ray = ray_expression("x^2 + y^2 + z^2 - 1", &cam);
/// let e = ivjit::Expression::parse(&ray).unwrap();
/// assert_eq!(e.vars(), ["t", "u", "v"]);
/// ```
pub fn ray_expression(f: &str, cam: &Camera) -> String {
    let exact = |x: f64| format!("({})", crate::syntax::number::hexf64(x));
    let mut s = String::new();
    for (k, name) in ["x", "y", "z"].iter().enumerate() {
        s.push_str(&format!(
            "let {name} = {} + t*({} + u*{} + v*{});\n",
            exact(cam.eye[k]),
            exact(cam.forward[k]),
            exact(cam.right[k]),
            exact(cam.up[k])
        ));
    }
    s.push_str(f);
    s
}

/// The segment `[t0, t1]` of the ray `eye + t d` inside the ball, widened by a relative 1e-9,
/// or `None` when the ray misses the ball.
pub fn clip(eye: [f64; 3], d: [f64; 3], center: [f64; 3], radius: f64) -> Option<(f64, f64)> {
    let o = sub(eye, center);
    let a = dot(d, d);
    let b = dot(o, d);
    let c = dot(o, o) - radius * radius;
    let disc = b * b - a * c;
    if disc.is_nan() || disc < 0.0 {
        return None;
    }
    let s = disc.sqrt();
    let (t0, t1) = ((-b - s) / a, (-b + s) / a);
    if t1 <= 0.0 {
        return None;
    }
    let pad = 1e-9 * (t0.abs() + t1.abs());
    Some(((t0 - pad).max(0.0), t1 + pad))
}

/// What to render: the image size, the ball the scene lives in, the resolution along a ray and
/// the pieces a step splits a piece into.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct View {
    /// Pixels per row.
    pub width: usize,
    /// Rows.
    pub height: usize,
    /// The ball's center.
    pub center: [f64; 3],
    /// The ball's radius.
    pub radius: f64,
    /// A piece at most 1/steps of the clipped segment is not split further.
    pub steps: usize,
    /// Pieces per step (2 to 32).
    pub split: u32,
}

/// A traced frame.
#[derive(Clone, Debug)]
pub struct Frame {
    /// Per pixel (row-major, top row first): the hit piece `[t_lo, t_hi]`, or `None`.
    pub hits: Vec<Option<(f64, f64)>>,
    /// RGB8 per pixel, row-major, top row first.
    pub rgb: Vec<u8>,
    /// Boxes (pieces) evaluated by the search.
    pub boxes: u64,
    /// Rays the device could not finish (stack depth), finished on the CPU.
    pub finished_on_cpu: usize,
}

impl Frame {
    /// The hits and the picture, apart.
    pub fn into_parts(self) -> (Vec<Option<(f64, f64)>>, Image) {
        let image = Image {
            rgb: self.rgb,
            boxes: self.boxes,
            finished_on_cpu: self.finished_on_cpu,
        };
        (self.hits, image)
    }
}

impl From<Image> for Frame {
    /// The frame of a picture traced without its hits (`hits` empty).
    fn from(image: Image) -> Frame {
        Frame {
            hits: Vec::new(),
            rgb: image.rgb,
            boxes: image.boxes,
            finished_on_cpu: image.finished_on_cpu,
        }
    }
}

/// Where x, y and z go among the surface's variables (`None`: it does not use that axis); an
/// error for any other variable.
pub fn axes(surface: &Evaluator) -> Result<[Option<usize>; 3], Error> {
    let mut k = [None; 3];
    for (i, v) in surface.program().var_names.iter().enumerate() {
        match v.as_str() {
            "x" => k[0] = Some(i),
            "y" => k[1] = Some(i),
            "z" => k[2] = Some(i),
            other => {
                return Err(SearchError::Options(format!(
                    "the surface may only use the variables x, y and z, not {other}"
                ))
                .into())
            }
        }
    }
    Ok(k)
}

/// A traced picture without the hits: what a viewer needs ([`trace_image`]).
#[derive(Clone, Debug)]
pub struct Image {
    /// RGB8 per pixel, row-major, top row first.
    pub rgb: Vec<u8>,
    /// Boxes (pieces) evaluated by the search.
    pub boxes: u64,
    /// Rays the device could not finish (stack depth), finished on the CPU.
    pub finished_on_cpu: usize,
}

/// Traces every pixel: `ray` is f composed with the camera's rays (variables t, u, v),
/// `surface` is f itself (variables among x, y, z, one output) for the shading.
pub fn trace(
    ray: &Evaluator,
    surface: &Evaluator,
    cam: &Camera,
    view: &View,
) -> Result<Frame, Error> {
    traced(ray, surface, cam, view, Want::Hits)
}

/// [`trace`]'s image alone. On the GPU the hits stay on the device (at 1024², 20 MB less to
/// copy back and a 24 MB vector less to build: about a third of a frame after the kernels);
/// the image is the same.
pub fn trace_image(
    ray: &Evaluator,
    surface: &Evaluator,
    cam: &Camera,
    view: &View,
) -> Result<Image, Error> {
    let f = traced(ray, surface, cam, view, Want::Image)?;
    Ok(Image {
        rgb: f.rgb,
        boxes: f.boxes,
        finished_on_cpu: f.finished_on_cpu,
    })
}

/// What the caller of a trace wants back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Want {
    /// The image and every pixel's hit.
    Hits,
    /// The image alone (the frame's hits are left empty).
    Image,
}

fn traced(
    ray: &Evaluator,
    surface: &Evaluator,
    cam: &Camera,
    view: &View,
    want: Want,
) -> Result<Frame, Error> {
    if view.width == 0 || view.height == 0 || view.steps == 0 {
        return Err(SearchError::Options(
            "the image needs a pixel and the rays a step".to_string(),
        )
        .into());
    }
    if !(view.radius.is_finite() && view.radius > 0.0) {
        return Err(SearchError::Options(format!("radius {}: need > 0", view.radius)).into());
    }
    let k = axes(surface)?;
    match (ray.backend(), surface.backend()) {
        (Backend::Gpu, Backend::Gpu) => gpu::trace(ray, surface, k, cam, view, want),
        _ => cpu(ray, surface, k, cam, view),
    }
}

/// The background of pixel row `row`: a dark vertical gradient.
fn background(row: usize, height: usize) -> [u8; 3] {
    let g = 20.0 + 30.0 * row as f64 / height as f64;
    [g as u8, g as u8, (g + 12.0) as u8]
}

/// The colour of a hit from the surface's values at the six points `p +- step e_k` (lo and hi
/// of each enclosure) and the ray's direction.
pub(crate) fn shade(values: [(f64, f64); 6], d: [f64; 3]) -> [u8; 3] {
    let f = |s: usize| 0.5 * values[s].0 + 0.5 * values[s].1;
    let grad = [f(0) - f(1), f(2) - f(3), f(4) - f(5)];
    let len = dot(grad, grad).sqrt();
    let view = normalize(scale(d, -1.0));
    let normal = if len.is_finite() && len > 0.0 {
        let nrm = scale(grad, 1.0 / len);
        // Two-sided: face the viewer.
        if dot(nrm, view) < 0.0 {
            scale(nrm, -1.0)
        } else {
            nrm
        }
    } else {
        view
    };
    let key = normalize([-0.4, 0.8, 0.45]);
    let diffuse = 0.55 * dot(normal, key).max(0.0) + 0.35 * dot(normal, view).max(0.0);
    let c = (0.12 + diffuse).min(1.0);
    [1.0, 0.72, 0.38].map(|b: f64| (255.0 * c * b).round().clamp(0.0, 255.0) as u8)
}

/// The picture of `hits` (per pixel, as [`Frame::hits`]): each hit shaded from the surface's
/// values around its middle point, on the surface evaluator's backend, and the background
/// elsewhere.
pub fn shade_hits(
    surface: &Evaluator,
    axes_of: [Option<usize>; 3],
    cam: &Camera,
    view: &View,
    hits: &[Option<(f64, f64)>],
) -> Result<Vec<u8>, Error> {
    let (w, h) = (view.width, view.height);
    let found: Vec<(usize, (f64, f64))> = hits
        .par_iter()
        .enumerate()
        .filter_map(|(p, hit)| hit.map(|hit| (p, hit)))
        .collect();
    let colors = hit_colors(surface, axes_of, cam, view, &found)?;
    let mut rgb = vec![0u8; 3 * w * h];
    rgb.par_chunks_mut(3 * w)
        .enumerate()
        .for_each(|(row, line)| {
            let c = background(row, h);
            for px in line.chunks_mut(3) {
                px.copy_from_slice(&c);
            }
        });
    for (p, c) in colors {
        rgb[3 * p..3 * p + 3].copy_from_slice(&c);
    }
    Ok(rgb)
}

/// The colour of each hit `(pixel, hit)`, in their order: shaded from the surface's values at
/// the six points around the hit's middle, all in one batch on the surface evaluator's
/// backend. The one shading rule of the CPU (the GPU's `ivjit_shade` makes the same bytes).
pub(crate) fn hit_colors(
    surface: &Evaluator,
    axes_of: [Option<usize>; 3],
    cam: &Camera,
    view: &View,
    hits: &[(usize, (f64, f64))],
) -> Result<Vec<(usize, [u8; 3])>, Error> {
    let (w, h) = (view.width, view.height);
    // f at p +- step along each axis, for every hit, in one batch.
    let step = 1e-5 * view.radius;
    let points: Vec<(usize, [f64; 3], [f64; 3])> = hits
        .par_iter()
        .map(|&(p, (lo, hi))| {
            let (u, v) = Camera::screen(p % w, p / w, w, h);
            let d = cam.direction(u, v);
            let t = 0.5 * lo + 0.5 * hi;
            (p, [0, 1, 2].map(|a| cam.eye[a] + t * d[a]), d)
        })
        .collect();
    let nv = surface.program().n_vars();
    let n = 6 * points.len();
    let mut inputs = vec![0.0; 2 * nv * n];
    for (axis, slot) in axes_of.iter().enumerate() {
        let Some(slot) = *slot else { continue };
        let (lo, hi) = inputs[2 * slot * n..2 * (slot + 1) * n].split_at_mut(n);
        lo.par_chunks_mut(6)
            .zip(hi.par_chunks_mut(6))
            .zip(&points)
            .for_each(|((lo, hi), (_, x, _))| {
                for s in 0..6 {
                    let mut q = *x;
                    q[s / 2] += if s % 2 == 0 { step } else { -step };
                    (lo[s], hi[s]) = (q[axis], q[axis]);
                }
            });
    }
    let values = if n > 0 {
        surface.eval_soa(&inputs, n)?
    } else {
        Vec::new()
    };
    Ok(points
        .par_iter()
        .enumerate()
        .map(|(q, (p, _, d))| {
            let v = std::array::from_fn(|s| (values[6 * q + s], values[n + 6 * q + s]));
            (*p, shade(v, *d))
        })
        .collect())
}

fn cpu(
    ray: &Evaluator,
    surface: &Evaluator,
    k: [Option<usize>; 3],
    cam: &Camera,
    view: &View,
) -> Result<Frame, Error> {
    let (w, h) = (view.width, view.height);
    // Per pixel: its screen coordinates and clipped segment, if its ray meets the ball.
    type Clipped = Option<((f64, f64), (f64, f64))>;
    let clipped: Vec<Clipped> = (0..w * h)
        .into_par_iter()
        .map(|p| {
            let (u, v) = Camera::screen(p % w, p / w, w, h);
            clip(cam.eye, cam.direction(u, v), view.center, view.radius).map(|s| ((u, v), s))
        })
        .collect();
    let pixels: Vec<usize> = (0..w * h).filter(|&p| clipped[p].is_some()).collect();
    let rays: Vec<Ray> = pixels
        .par_iter()
        .map(|&p| {
            let ((u, v), (t0, t1)) = clipped[p].expect("clipped");
            Ray {
                u,
                v,
                t0,
                t1,
                min_width: (t1 - t0) / view.steps as f64,
            }
        })
        .collect();
    let found = first_hits(&ray.cpu_twin(), &rays, view.split)?;
    let mut hits = vec![None; w * h];
    for (&p, hit) in pixels.iter().zip(found.hits) {
        hits[p] = hit;
    }
    let rgb = shade_hits(&surface.cpu_twin(), k, cam, view, &hits)?;
    Ok(Frame {
        hits,
        rgb,
        boxes: found.boxes,
        finished_on_cpu: 0,
    })
}
