//! Reliable ray tracing of implicit surfaces f(x, y, z) = 0: every pixel's ray is searched for its
//! first root by interval bisection on t, with f composed with the ray JIT-compiled by ivjit.
//!
//! ```sh
//! cargo run --release --example raytrace -- tangle                  # one of the named scenes
//! cargo run --release --example raytrace -- --expr 'x^2 + y^2 + z^2 - 1' --size 512x512 \
//!     --eye 3,2,4 --center 0,0,0 --fov 30 --radius 1.5 --out sphere.png
//! cargo run --release --example raytrace -- tri-trumpet --compare  # point sampling beside it
//! cargo run --release --example raytrace -- table                   # the paper's four surfaces
//! ```
//!
//! **The rays.** A pinhole camera at `eye` looks at `center`. The ray of pixel (i, j) is
//! `p(t) = eye + t * (F + u*R + v*U)` with F, R, U the camera's forward, right and up vectors
//! and u, v the pixel's screen coordinates. Every one of these numbers is a double, and the
//! ray is the *exact* real line they define: the composed expression
//! `let x = ex + t*(fx + u*rx + v*ux); let y = ...; let z = ...; f` is compiled once, with the
//! camera's numbers written as exact hex-floats and u, v passed as point intervals, so ivjit's
//! outward rounding covers the rounding of p(t) as well as of f.
//!
//! **The search.** The scene is the part of f = 0 inside the ball of radius `radius` around
//! `center`; each ray is clipped to that ball (in f64, then widened by a relative 1e-9 on each
//! side). `steps` sets the resolution: a piece of the ray narrower than (t1 - t0) / steps is
//! not split further. Each pixel keeps a stack of t-intervals, front-most on top. A step pops
//! the top interval, splits it into `split` equal pieces and evaluates f on each. A piece whose
//! enclosure excludes 0 provably holds no point of the surface and is dropped; the others go
//! back on the stack in order. The library runs this search (`ivjit::search::ray`): on the GPU
//! entirely on the device, one thread per pixel, f compiled into the search kernel; on the CPU
//! one step of every unfinished pixel per batch. When the top of a stack is at the resolution, it is the pixel's hit. Because
//! every piece in front of it was excluded, **no point of the surface lies on the ray before
//! the hit piece**: no thin part is skipped. (The converse does not hold: interval
//! overestimation can report a hit within the resolution of a surface that the ray only passes
//! close to; raising `steps` narrows that margin.)
//!
//! **Point sampling** (`--compare`), the usual alternative, evaluates f at the `steps + 1`
//! evenly spaced points of the same clipped segment and reports the first sign change. A part
//! of the surface thinner than the step is missed when no sample falls inside it; the
//! comparison image shows point sampling on the left and interval bisection on the right.
//!
//! **Shading** is cosmetic: a normal by central differences of f (midpoints of point
//! enclosures) at the midpoint of the hit piece, with a headlight and a fixed key light.
use clap::Parser;
use ivjit::search::trace::{shade_hits, trace, trace_image, View};
use ivjit::{Backend, BackendChoice, Evaluator, Expression, Precision};
use rayon::iter::Either;
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// A named scene: surface, camera, clipping ball, and where the equation comes from.
#[derive(Clone, Debug)]
pub struct Scene {
    pub name: &'static str,
    pub expr: &'static str,
    pub eye: [f64; 3],
    pub center: [f64; 3],
    pub radius: f64,
    pub fov_degrees: f64,
    pub source: &'static str,
}

/// The scenes: the four surfaces of the paper's Table 5, then two with thin parts.
pub fn scenes() -> Vec<Scene> {
    vec![
        Scene {
            name: "sphere",
            expr: "x^2 + y^2 + z^2 - 1",
            eye: [2.4, 1.6, 3.2],
            center: [0.0, 0.0, 0.0],
            radius: 1.2,
            fov_degrees: 36.0,
            source: "the unit sphere",
        },
        Scene {
            name: "kusner-schmitt",
            expr: "(x^2 + 3)*(y^2 + 3)*(z^2 + 3) - 32*(x*y*z + 1)",
            eye: [2.8, 2.1, 3.5],
            center: [0.0, 0.0, 0.0],
            radius: 2.0,
            fov_degrees: 36.0,
            source: "Kusner-Schmitt surface as listed among the test surfaces of interval ray \
                     tracers (Knoll et al., Fast ray tracing of arbitrary implicit surfaces with \
                     interval and affine arithmetic, Computer Graphics Forum 28(1), 2009)",
        },
        Scene {
            name: "tangle",
            expr: "x^4 - 5*x^2 + y^4 - 5*y^2 + z^4 - 5*z^2 + 11.8",
            eye: [7.2, 5.4, 9.0],
            center: [0.0, 0.0, 0.0],
            radius: 3.2,
            fov_degrees: 36.0,
            source: "tangle cube, as given in the issue and the seed paper",
        },
        Scene {
            name: "gumdrop-torus",
            expr: "4*x^4 + 4*(y^2 + z^2)^2 + 17*x^2*(y^2 + z^2) - 20*(x^2 + y^2 + z^2) + 17",
            eye: [4.5, 3.5, 5.5],
            center: [0.0, 0.0, 0.0],
            radius: 2.5,
            fov_degrees: 36.0,
            source: "gumdrop torus as listed by Knoll et al. (2009), same test set",
        },
        Scene {
            name: "drop",
            expr: "x^4 - x^3 + y^2 + z^2",
            eye: [0.5, 0.5, 1.8],
            center: [0.5, 0.0, 0.0],
            radius: 0.7,
            fov_degrees: 40.0,
            source: "piriform (pear-shaped drop) surface x^4 - x^3 + y^2 + z^2 = 0; its radius \
                     shrinks like x^1.5 into the cusp at the origin",
        },
        Scene {
            name: "tri-trumpet",
            expr: "x^2*y^2 + y^2*z^2 + z^2*x^2 - 0.0001",
            eye: [4.0, 3.0, 5.0],
            center: [0.0, 0.0, 0.0],
            radius: 2.5,
            fov_degrees: 36.0,
            source: "three double trumpets along the axes (ours): near the x axis the surface \
                     is a tube of radius 0.01/|x|, thinner than any fixed sampling step far out",
        },
    ]
}

pub use ivjit::search::trace::{clip, ray_expression, Camera};

/// What one render found and what it cost.
#[derive(Clone, Debug)]
pub struct Frame {
    pub width: usize,
    pub height: usize,
    /// Per pixel: the hit piece [t_lo, t_hi] (first candidate root), or None.
    pub hits: Vec<Option<(f64, f64)>>,
    /// Seconds of the root search and of the shading (compilation excluded).
    pub search_seconds: f64,
    pub shade_seconds: f64,
    pub compile_seconds: f64,
    /// Rays the device could not finish (stack depth) and the CPU did; boxes evaluated.
    pub on_cpu: usize,
    pub boxes: usize,
    pub backend: Backend,
    pub fallback: Option<String>,
    /// RGB8, row-major, top row first.
    pub rgb: Vec<u8>,
}

/// Options of one render.
#[derive(Clone, Debug)]
pub struct Options {
    pub width: usize,
    pub height: usize,
    pub fov_degrees: f64,
    pub eye: [f64; 3],
    pub center: [f64; 3],
    pub radius: f64,
    pub steps: usize,
    pub split: usize,
    pub precision: Precision,
    pub backend: BackendChoice,
}

/// The library's description of a frame.
fn view(o: &Options) -> View {
    View {
        width: o.width,
        height: o.height,
        center: o.center,
        radius: o.radius,
        steps: o.steps.max(1),
        split: o.split.clamp(2, 32) as u32,
    }
}

/// A surface compiled for one camera: f along the camera's rays (in t, u, v) for the search,
/// and f itself (in its variables among x, y, z) for shading.
pub struct Surface {
    pub ray: Evaluator,
    surf: Evaluator,
    /// Where x, y and z go among the variables of `surf`.
    axes: [Option<usize>; 3],
    pub cam: Camera,
}

impl Surface {
    /// Compiles f and checks that it is a surface in x, y, z and that `o` describes an image.
    pub fn compile(f: &str, o: &Options) -> Result<Surface, String> {
        if o.width == 0 || o.height == 0 {
            return Err("the image must have at least one pixel".into());
        }
        if !(o.radius.is_finite() && o.radius > 0.0) {
            return Err(format!("--radius {}: expected a positive number", o.radius));
        }
        let plain = Expression::parse(f).map_err(|e| e.to_string())?;
        if plain.n_outputs() != 1 {
            return Err("the surface expression must have exactly one output".into());
        }
        let cam = Camera::look_at(o.eye, o.center, o.fov_degrees)?;
        let composed = Expression::parse(&ray_expression(f, &cam)).map_err(|e| e.to_string())?;
        let ray = Evaluator::new(&composed, o.precision, o.backend).map_err(|e| e.to_string())?;
        // Shading runs where the search ran (same backend and precision; it is cosmetic).
        let shade_backend = match ray.backend() {
            Backend::Gpu => BackendChoice::Gpu,
            Backend::Cpu => BackendChoice::Cpu,
        };
        let surf = Evaluator::new(&plain, o.precision, shade_backend).map_err(|e| e.to_string())?;
        let axes = ivjit::search::trace::axes(&surf).map_err(|e| e.to_string())?;
        let surface = Surface {
            ray,
            surf,
            axes,
            cam,
        };
        // Build the tracing kernel now (a frame of one pixel), so that it counts as
        // compilation, not as the first frame's search.
        let one = Options {
            width: 1,
            height: 1,
            ..o.clone()
        };
        trace(&surface.ray, &surface.surf, &surface.cam, &view(&one)).map_err(|e| e.to_string())?;
        Ok(surface)
    }

    /// The interval search, shaded: the library's tracer (`ivjit::search::trace`), on the GPU
    /// a kernel that makes, clips and searches the rays and one that shades the hits.
    pub fn render(&self, o: &Options) -> Result<Frame, String> {
        self.traced(o, true)
    }

    /// [`Surface::render`]'s image alone (`ivjit::search::trace::trace_image`: on the GPU the
    /// hits stay on the device), as a viewer renders frames; the frame's `hits` are empty.
    pub fn render_image(&self, o: &Options) -> Result<Frame, String> {
        self.traced(o, false)
    }

    fn traced(&self, o: &Options, with_hits: bool) -> Result<Frame, String> {
        let t = Instant::now();
        let (hits, image) = if with_hits {
            trace(&self.ray, &self.surf, &self.cam, &view(o))
                .map_err(|e| e.to_string())?
                .into_parts()
        } else {
            let image = trace_image(&self.ray, &self.surf, &self.cam, &view(o))
                .map_err(|e| e.to_string())?;
            (Vec::new(), image)
        };
        let search_seconds = t.elapsed().as_secs_f64();
        Ok(Frame {
            width: o.width,
            height: o.height,
            hits,
            search_seconds,
            shade_seconds: 0.0,
            compile_seconds: 0.0,
            on_cpu: image.finished_on_cpu,
            boxes: image.boxes as usize,
            backend: self.ray.backend(),
            fallback: self.ray.fallback_reason().map(str::to_string),
            rgb: image.rgb,
        })
    }

    /// Point sampling (for the comparison), shaded.
    pub fn sample(&self, o: &Options) -> Result<Sampled, String> {
        let t = Instant::now();
        let hits = point_sample(&self.ray, &self.cam, o)?;
        let seconds = t.elapsed().as_secs_f64();
        let rgb = shade_hits(&self.surf, self.axes, &self.cam, &view(o), &hits)
            .map_err(|e| e.to_string())?;
        Ok(Sampled { hits, rgb, seconds })
    }
}

/// A pixel whose ray meets the clipping ball: (pixel, (u, v), clipped segment [t0, t1]).
type ClippedRay = (usize, (f64, f64), (f64, f64));

/// Every pixel whose ray meets the clipping ball.
fn clipped_rays(cam: &Camera, o: &Options) -> Vec<ClippedRay> {
    let (w, h) = (o.width, o.height);
    (0..w * h)
        .into_par_iter()
        .filter_map(|pixel| {
            let (u, v) = Camera::screen(pixel % w, pixel / w, w, h);
            let segment = clip(cam.eye, cam.direction(u, v), o.center, o.radius)?;
            Some((pixel, (u, v), segment))
        })
        .collect()
}

/// Places of t, u and v among the ray evaluator's variables.
fn ray_slots(ray: &Evaluator) -> [Option<usize>; 3] {
    let names = &ray.program().var_names;
    let find = |n: &str| names.iter().position(|v| v == n);
    [find("t"), find("u"), find("v")]
}

/// Evaluates the ray expression on (t, u, v) boxes given as parallel arrays; returns the
/// enclosures' (lo, hi).
fn eval_ray(
    ray: &Evaluator,
    slots: [Option<usize>; 3],
    t: &[(f64, f64)],
    uv: &[(f64, f64)],
) -> Result<Vec<(f64, f64)>, String> {
    let n = t.len();
    let nv = ray.program().n_vars();
    let mut inputs = vec![0.0; 2 * nv * n];
    for (which, slot) in slots.iter().enumerate() {
        let Some(k) = *slot else { continue };
        let (lo, hi) = inputs[2 * k * n..2 * (k + 1) * n].split_at_mut(n);
        lo.par_iter_mut()
            .zip(hi.par_iter_mut())
            .enumerate()
            .with_min_len(1 << 14)
            .for_each(|(i, (l, h))| {
                (*l, *h) = match which {
                    0 => t[i],
                    1 => (uv[i].0, uv[i].0),
                    _ => (uv[i].1, uv[i].1),
                };
            });
    }
    let out = ray.eval_soa(&inputs, n).map_err(|e| e.to_string())?;
    Ok((0..n)
        .into_par_iter()
        .with_min_len(1 << 14)
        .map(|i| (out[i], out[n + i]))
        .collect())
}

/// Point sampling: the first sign change of f over `steps + 1` evenly spaced samples.
pub fn point_sample(
    ray: &Evaluator,
    cam: &Camera,
    o: &Options,
) -> Result<Vec<Option<(f64, f64)>>, String> {
    let (w, h) = (o.width, o.height);
    let slots = ray_slots(ray);
    let steps = o.steps.max(1);
    let per_round = 32;
    let mut hits = vec![None; w * h];
    // (pixel, uv, t0, t1, next sample index, sign of the previous sample)
    type Ray = (usize, (f64, f64), f64, f64, usize, Option<bool>);
    let mut active: Vec<Ray> = clipped_rays(cam, o)
        .into_iter()
        .map(|(pixel, uv, (t0, t1))| (pixel, uv, t0, t1, 0, None))
        .collect();
    let at = |t0: f64, t1: f64, k: usize| {
        if k == steps {
            t1
        } else {
            t0 + (t1 - t0) * (k as f64 / steps as f64)
        }
    };
    while !active.is_empty() {
        let counts: Vec<usize> = active
            .iter()
            .map(|&(_, _, _, _, k, _)| per_round.min(steps + 1 - k))
            .collect();
        let mut offsets = Vec::with_capacity(active.len());
        let mut total = 0;
        for &m in &counts {
            offsets.push(total);
            total += m;
        }
        let t: Vec<(f64, f64)> = active
            .par_iter()
            .zip(&counts)
            .flat_map_iter(|(&(_, _, t0, t1, k, _), &m)| {
                (k..k + m).map(move |s| {
                    let ts = at(t0, t1, s);
                    (ts, ts)
                })
            })
            .collect();
        let uv: Vec<(f64, f64)> = active
            .par_iter()
            .zip(&counts)
            .flat_map_iter(|(a, &m)| std::iter::repeat_n(a.1, m))
            .collect();
        let f = eval_ray(ray, slots, &t, &uv)?;
        type Hit = (usize, (f64, f64));
        let (done, next): (Vec<Hit>, Vec<Ray>) = active
            .into_par_iter()
            .enumerate()
            .filter_map(|(q, (pixel, p_uv, t0, t1, k, mut prev))| {
                let (m, off) = (counts[q], offsets[q]);
                for s in 0..m {
                    let (lo, hi) = f[off + s];
                    let value = 0.5 * lo + 0.5 * hi;
                    if value.is_nan() {
                        prev = None;
                        continue;
                    }
                    let positive = value > 0.0;
                    if value == 0.0 || prev.is_some_and(|p| p != positive) {
                        let ts = at(t0, t1, k + s);
                        let before = if k + s == 0 {
                            ts
                        } else {
                            at(t0, t1, k + s - 1)
                        };
                        return Some(Either::Left((pixel, (before, ts))));
                    }
                    prev = Some(positive);
                }
                (k + m <= steps).then_some(Either::Right((pixel, p_uv, t0, t1, k + m, prev)))
            })
            .partition_map(|e| e);
        for (pixel, hit) in done {
            hits[pixel] = Some(hit);
        }
        active = next;
    }
    Ok(hits)
}

/// For each pixel in `pixels` with a hit piece: whether `samples` evenly spaced points of the
/// piece show a *certain* sign change of f (one enclosure > 0, the next < 0, or the reverse). f
/// is then proven to vanish on the ray (intermediate value theorem, for f continuous, as every
/// scene is): the surface is really there.
pub fn prove_hits(
    ray: &Evaluator,
    o: &Options,
    hits: &[Option<(f64, f64)>],
    pixels: &[usize],
    samples: usize,
) -> Result<Vec<bool>, String> {
    let (w, h) = (o.width, o.height);
    let slots = ray_slots(ray);
    let samples = samples.max(2);
    let mut t = Vec::new();
    let mut uv = Vec::new();
    for &p in pixels {
        let (lo, hi) = hits[p].unwrap_or((0.0, 0.0));
        let screen = Camera::screen(p % w, p / w, w, h);
        for k in 0..samples {
            let ts = if k + 1 == samples {
                hi
            } else {
                lo + (hi - lo) * (k as f64 / (samples - 1) as f64)
            };
            t.push((ts, ts));
            uv.push(screen);
        }
    }
    let f = eval_ray(ray, slots, &t, &uv)?;
    Ok(pixels
        .iter()
        .enumerate()
        .map(|(q, &p)| {
            hits[p].is_some() && {
                let vals = &f[q * samples..(q + 1) * samples];
                let pos = vals.iter().any(|&(lo, _)| lo > 0.0);
                let neg = vals.iter().any(|&(_, hi)| hi < 0.0);
                pos && neg
            }
        })
        .collect())
}

/// Compiles f and renders it with the interval search (compilation in `compile_seconds`);
/// the compiled surface is returned too, to sample or prove with.
pub fn compile_and_render(f: &str, o: &Options) -> Result<(Surface, Frame), String> {
    let t0 = Instant::now();
    let surface = Surface::compile(f, o)?;
    let compile_seconds = t0.elapsed().as_secs_f64();
    let frame = Frame {
        compile_seconds,
        ..surface.render(o)?
    };
    Ok((surface, frame))
}

/// Renders f = 0 with the interval search.
pub fn render(f: &str, o: &Options) -> Result<Frame, String> {
    Ok(compile_and_render(f, o)?.1)
}

/// A point-sampled frame.
pub struct Sampled {
    pub hits: Vec<Option<(f64, f64)>>,
    pub rgb: Vec<u8>,
    pub seconds: f64,
}

/// Writes an RGB8 image as PNG.
pub fn write_png(path: &Path, w: usize, h: usize, rgb: &[u8]) -> Result<(), String> {
    let file = std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), w as u32, h as u32);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let mut writer = enc
        .write_header()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    writer
        .write_image_data(rgb)
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// Two images of the same size side by side with a 4-pixel gap.
fn side_by_side(w: usize, h: usize, left: &[u8], right: &[u8]) -> Vec<u8> {
    let gap = 4;
    let ww = 2 * w + gap;
    let mut out = vec![255u8; 3 * ww * h];
    for j in 0..h {
        out[3 * j * ww..3 * (j * ww + w)].copy_from_slice(&left[3 * j * w..3 * (j + 1) * w]);
        out[3 * (j * ww + w + gap)..3 * (j + 1) * ww]
            .copy_from_slice(&right[3 * j * w..3 * (j + 1) * w]);
    }
    out
}

#[derive(Parser, Debug, Clone)]
#[command(about = "Reliable ray tracing of implicit surfaces f(x, y, z) = 0 with ivjit")]
struct Cli {
    /// A named scene (sphere, kusner-schmitt, tangle, gumdrop-torus, drop, tri-trumpet), `all`
    /// (every scene), or `table` (the paper's four surfaces, GPU and CPU). Ignored with --expr.
    #[arg(default_value = "tangle")]
    scene: String,
    /// The surface f(x, y, z) = 0 to render instead of a named scene.
    #[arg(long)]
    expr: Option<String>,
    /// Image size WxH (default 1024x1024 on the GPU, 256x256 on the CPU).
    #[arg(long)]
    size: Option<String>,
    /// Camera position x,y,z.
    #[arg(long, allow_hyphen_values = true)]
    eye: Option<String>,
    /// The point the camera looks at, also the center of the clipping ball, x,y,z.
    #[arg(long, allow_hyphen_values = true)]
    center: Option<String>,
    /// Radius of the clipping ball around the center.
    #[arg(long)]
    radius: Option<f64>,
    /// Vertical field of view in degrees.
    #[arg(long)]
    fov: Option<f64>,
    /// Resolution along each ray: the clipped segment is resolved to 1/steps of its length.
    #[arg(long, default_value_t = 1024)]
    steps: usize,
    /// Pieces an interval is split into per round.
    #[arg(long, default_value_t = 8)]
    split: usize,
    #[arg(long, default_value = "auto")]
    backend: String,
    #[arg(long, default_value = "f64")]
    precision: String,
    /// Output folder for the PNG images.
    #[arg(long, default_value = "raytrace-out")]
    out_dir: PathBuf,
    /// Also render by point sampling with the same step count and write both side by side.
    #[arg(long)]
    compare: bool,
    /// Render this many more frames of each scene and print the fastest and the median frame
    /// time (the first frame pays for allocations the next ones reuse from the driver).
    #[arg(long, default_value_t = 0)]
    repeat: usize,
    /// Trace the image alone, as a viewer does (`trace_image`: on the GPU the hits stay on the
    /// device), the first frame and the repeated ones; no hit count is printed. Not with
    /// --compare or `table`, which compare hits.
    #[arg(long, conflicts_with = "compare")]
    images: bool,
}

fn parse_vec3(text: &str, what: &str) -> Result<[f64; 3], String> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    let bad = || format!("--{what} {text}: expected three numbers x,y,z");
    if parts.len() != 3 {
        return Err(bad());
    }
    let mut v = [0.0; 3];
    for (k, p) in parts.iter().enumerate() {
        v[k] = p.parse::<f64>().map_err(|_| bad())?;
        if !v[k].is_finite() {
            return Err(bad());
        }
    }
    Ok(v)
}

fn parse_size(text: &str) -> Result<(usize, usize), String> {
    let bad = || format!("--size {text}: expected WxH such as 1024x1024");
    let (w, h) = text.split_once(['x', 'X']).ok_or_else(bad)?;
    let w: usize = w.trim().parse().map_err(|_| bad())?;
    let h: usize = h.trim().parse().map_err(|_| bad())?;
    if w == 0 || h == 0 || w > 16384 || h > 16384 {
        return Err(bad());
    }
    Ok((w, h))
}

fn backend_choice(text: &str) -> Result<BackendChoice, String> {
    match text {
        "auto" => Ok(BackendChoice::Auto),
        "cpu" => Ok(BackendChoice::Cpu),
        "gpu" => Ok(BackendChoice::Gpu),
        other => Err(format!("--backend {other}: expected auto, cpu or gpu")),
    }
}

/// Options for `scene` from the command line (scene defaults where not given).
fn options_for(cli: &Cli, scene: &Scene, backend: BackendChoice) -> Result<Options, String> {
    let precision = match cli.precision.as_str() {
        "f64" => Precision::F64,
        "f32" => Precision::F32,
        other => return Err(format!("--precision {other}: expected f64 or f32")),
    };
    let gpu = match backend {
        BackendChoice::Cpu => false,
        BackendChoice::Gpu => true,
        BackendChoice::Auto => ivjit::detect_gpu().is_ok(),
    };
    let (width, height) = match &cli.size {
        Some(s) => parse_size(s)?,
        None if gpu => (1024, 1024),
        None => (256, 256),
    };
    Ok(Options {
        width,
        height,
        fov_degrees: cli.fov.unwrap_or(scene.fov_degrees),
        eye: match &cli.eye {
            Some(e) => parse_vec3(e, "eye")?,
            None => scene.eye,
        },
        center: match &cli.center {
            Some(c) => parse_vec3(c, "center")?,
            None => scene.center,
        },
        radius: cli.radius.unwrap_or(scene.radius),
        steps: cli.steps.max(1),
        split: cli.split.max(2),
        precision,
        backend,
    })
}

fn hit_count(hits: &[Option<(f64, f64)>]) -> usize {
    hits.iter().filter(|h| h.is_some()).count()
}

fn describe(frame: &Frame) -> String {
    format!(
        "{}x{} on the {}: search {:.4} s ({:.3e} boxes, {} rays finished on the CPU), shade {:.3} s, frame {:.3} s \
         (compile {:.3} s); {}",
        frame.width,
        frame.height,
        frame.backend.name(),
        frame.search_seconds,
        frame.boxes as f64,
        frame.on_cpu,
        frame.shade_seconds,
        frame.search_seconds + frame.shade_seconds,
        frame.compile_seconds,
        if frame.hits.is_empty() && frame.width * frame.height > 0 {
            "hits not read (--images)".to_string()
        } else {
            format!("{} hit pixels", hit_count(&frame.hits))
        }
    )
}

fn render_scene(cli: &Cli, scene: &Scene, backend: BackendChoice) -> Result<Frame, String> {
    let o = options_for(cli, scene, backend)?;
    std::fs::create_dir_all(&cli.out_dir).map_err(|e| format!("{}: {e}", cli.out_dir.display()))?;
    let (surface, frame) = if cli.images {
        let t0 = Instant::now();
        let surface = Surface::compile(scene.expr, &o)?;
        let compile_seconds = t0.elapsed().as_secs_f64();
        let frame = Frame {
            compile_seconds,
            ..surface.render_image(&o)?
        };
        (surface, frame)
    } else {
        compile_and_render(scene.expr, &o)?
    };
    if let Some(why) = &frame.fallback {
        eprintln!("note: no GPU ({why}); rendering on the CPU evaluator");
    }
    let path = cli.out_dir.join(format!("{}.png", scene.name));
    write_png(&path, o.width, o.height, &frame.rgb)?;
    println!("{}: {} -> {}", scene.name, describe(&frame), path.display());
    if cli.repeat > 0 {
        let mut times = Vec::with_capacity(cli.repeat);
        for _ in 0..cli.repeat {
            let f = if cli.images {
                surface.render_image(&o)?
            } else {
                surface.render(&o)?
            };
            times.push(f.search_seconds + f.shade_seconds);
        }
        times.sort_by(f64::total_cmp);
        println!(
            "  {} more {}: fastest {:.2} ms, median {:.2} ms",
            cli.repeat,
            if cli.images { "images" } else { "frames" },
            times[0] * 1e3,
            times[times.len() / 2] * 1e3
        );
    }
    if cli.compare {
        let sampled = surface.sample(&o)?;
        let lost: Vec<usize> = (0..frame.hits.len())
            .filter(|&p| frame.hits[p].is_some() && sampled.hits[p].is_none())
            .collect();
        let extra = (0..frame.hits.len())
            .filter(|&p| frame.hits[p].is_none() && sampled.hits[p].is_some())
            .count();
        let proven = prove_hits(&surface.ray, &o, &frame.hits, &lost, 1025)?
            .into_iter()
            .filter(|&b| b)
            .count();
        let path = cli.out_dir.join(format!("{}-compare.png", scene.name));
        write_png(
            &path,
            2 * o.width + 4,
            o.height,
            &side_by_side(o.width, o.height, &sampled.rgb, &frame.rgb),
        )?;
        println!(
            "  point sampling, {} steps ({:.3} s): {} hit pixels; {} pixels hit by the interval \
             search are missed by sampling ({} of them proven to hold a surface point: a certain \
             sign change among 1025 samples of the hit piece), {} the other way -> {}",
            o.steps,
            sampled.seconds,
            hit_count(&sampled.hits),
            lost.len(),
            proven,
            extra,
            path.display()
        );
    }
    Ok(frame)
}

fn run() -> Result<(), String> {
    let cli = Cli::parse();
    let backend = backend_choice(&cli.backend)?;
    if let Some(expr) = &cli.expr {
        let scene = Scene {
            name: "custom",
            expr: Box::leak(expr.clone().into_boxed_str()),
            eye: [6.0, 4.5, 7.5],
            center: [0.0, 0.0, 0.0],
            radius: 3.0,
            fov_degrees: 36.0,
            source: "command line",
        };
        render_scene(&cli, &scene, backend)?;
        return Ok(());
    }
    let all = scenes();
    match cli.scene.as_str() {
        "all" => {
            for s in &all {
                render_scene(&cli, s, backend)?;
            }
        }
        "table" => {
            // The paper's Table 5: the four surfaces, per-frame time on the GPU and the CPU.
            let paper = [
                ("sphere", 300.0, 2.0),
                ("kusner-schmitt", 720.0, 2.0),
                ("tangle", 900.0, 3.0),
                ("gumdrop-torus", 1080.0, 3.0),
            ];
            // The paper's size on both backends, unless --size says otherwise; the hits are
            // compared, so they are read back.
            let mut cli = cli.clone();
            cli.images = false;
            cli.size.get_or_insert_with(|| "1024x1024".to_string());
            let cli = &cli;
            let mut rows = Vec::new();
            for (name, cpu_paper, gpu_paper) in paper {
                let s = all.iter().find(|s| s.name == name).expect("a table scene");
                let gpu = if ivjit::detect_gpu().is_ok() && backend != BackendChoice::Cpu {
                    Some(render_scene(cli, s, BackendChoice::Gpu)?)
                } else {
                    None
                };
                let cpu = render_scene(cli, s, BackendChoice::Cpu)?;
                rows.push((name, cpu_paper, gpu_paper, gpu, cpu));
            }
            println!();
            println!(
                "| surface | size | paper CPU s | paper GPU s | ivjit GPU s/frame | ivjit CPU s/frame | hit pixels | GPU hits = CPU hits |"
            );
            println!("|---|---|---|---|---|---|---|---|");
            for (name, cp, gp, gpu, cpu) in rows {
                let frame_s = |f: &Frame| f.search_seconds + f.shade_seconds;
                let same = gpu
                    .as_ref()
                    .map_or("-", |g| if g.hits == cpu.hits { "yes" } else { "NO" });
                println!(
                    "| {name} | {}x{} | {cp} | {gp} | {} | {:.2} | {} | {same} |",
                    cpu.width,
                    cpu.height,
                    gpu.as_ref()
                        .map_or("-".to_string(), |g| format!("{:.3}", frame_s(g))),
                    frame_s(&cpu),
                    hit_count(&cpu.hits)
                );
                if same == "NO" {
                    return Err(format!("{name}: the GPU's hits differ from the CPU's"));
                }
            }
        }
        name => {
            let s = all.iter().find(|s| s.name == name).ok_or_else(|| {
                format!(
                    "unknown scene {name}; the scenes are {}, all, table (or give --expr)",
                    all.iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
                )
            })?;
            render_scene(&cli, s, backend)?;
        }
    }
    Ok(())
}

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(2);
    }
}
