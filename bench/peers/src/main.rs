//! Peer benchmarks for ivjit: measures inari 2.0.0 and Fidget 0.5.1 on this machine.
//!
//! Output: one line per row, tab-separated, `ROW<TAB>VALUE<TAB>UNIT<TAB>NOTE`. A row that cannot
//! be measured prints `ROW<TAB>NA<TAB>-<TAB>reason` instead; a failure (error or panic) in one row
//! never stops the others. `tools/bench-peers` builds this crate and formats the rows as a table.
//!
//! Row families (one function each):
//! - [`inari_tangle`]: rigorous f64 interval evaluation of the tangle polynomial with inari, one
//!   box per call, one thread.
//! - [`fidget_interval`]: Fidget's JIT interval evaluator (f32, not rigorous), one box per call,
//!   one thread, for tangle and trig.
//! - [`fidget_render_2d`]: Fidget's 2-D rasterizer on the Prospero model, 1024x1024.
//! - [`fidget_render_3d`]: Fidget's 3-D voxel (depth + normal image) renderer on the colonnade
//!   model, 512^3 (and the sizes of `PEERS_3D_SIZES`).
//! - [`fidget_mesh`]: Fidget's mesher (manifold dual contouring on an octree) on bear and
//!   colonnade, depth 6 (and the depths of `PEERS_MESH_DEPTHS`).
//! - [`fidget_thin_wall`]: the triangles of Fidget's mesh of a wall thinner than its cells.
//! - [`machine`]: CPU model and whether it has AVX-512F.
//!
//! Environment (for machines other than the 2-core development machine, e.g. the GPU host):
//! `PEERS_ONLY` (comma-separated families: `inari`, `interval`, `2d`, `3d`, `mesh`, `wall`; default
//! all),
//! `PEERS_THREADS` (thread counts of the render and mesh rows; default `1,2`),
//! `PEERS_3D_SIZES` (default `512`), `PEERS_MESH_DEPTHS` (default `6`), `PEERS_MESH_MODELS`
//! (default `bear,colonnade`: files `MODEL.vm` of the models folder).
//!
//! Models are read from `../../tests/data/models` relative to this crate's manifest (i.e. the
//! ivjit repository's `tests/data/models`), or from `$IVJIT_MODELS_DIR` if that is set.

use std::hint::black_box;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use fidget::context::{Context, Tree};
use fidget::jit::{JitFunction, JitShape};
use fidget::raster::{pixel, voxel};
use fidget::render::{CancelToken, ImageSize, ThreadPool, TileSizes, VoxelSize};
use fidget::shape::{BoundShape, EzShape};
use fidget::types::Interval as FidgetInterval;
use inari::Interval;

/// Number of boxes in the interval-evaluation rows (2^20).
const BOX_COUNT: usize = 1 << 20;
/// Side length of every box: each coordinate is `[a, a + BOX_SIDE]`.
const BOX_SIDE: f64 = 0.1;
/// Box corners `a` are drawn uniformly from `[BOX_LO, BOX_HI)`.
const BOX_LO: f64 = -3.0;
const BOX_HI: f64 = 3.0;
/// Seed of the splitmix64 generator that draws the box corners (fixed, so runs are comparable).
const BOX_SEED: u64 = 0x1bad_5eed_2024_0001;

/// Timed passes for the interval rows and the 3-D render; the best (shortest) one is reported.
const INTERVAL_PASSES: usize = 5;
/// Timed renders for the 2-D rows (after one untimed warm-up).
const RENDER_2D_PASSES: usize = 10;
/// Timed renders for the 3-D rows (after one untimed warm-up).
const RENDER_3D_PASSES: usize = 5;
/// Timed meshes (after one untimed warm-up).
const MESH_PASSES: usize = 3;

/// The comma-separated numbers of environment variable `name`, or `default`.
fn env_list(name: &str, default: &[usize]) -> Vec<usize> {
    match std::env::var(name) {
        Ok(v) => v
            .split(',')
            .filter_map(|t| t.trim().parse().ok())
            .collect(),
        Err(_) => default.to_vec(),
    }
}

/// Whether row family `family` is asked for (`PEERS_ONLY`, default every family).
fn wanted(family: &str) -> bool {
    match std::env::var("PEERS_ONLY") {
        Ok(v) => v.split(',').any(|t| t.trim() == family),
        Err(_) => true,
    }
}

// ---------------------------------------------------------------------------------------------
// Output
// ---------------------------------------------------------------------------------------------

/// One measured value: printed as `VALUE<TAB>UNIT`.
struct Measured {
    value: f64,
    unit: &'static str,
    /// Appended to the row's static note (e.g. a result checksum), may be empty.
    extra_note: String,
}

/// Runs `measure` and prints one row: `name, value, unit, note` on success, or
/// `name, NA, -, reason` if it returns an error or panics.
fn row(name: &str, note: &str, measure: impl FnOnce() -> Result<Measured, String>) {
    let outcome = catch_unwind(AssertUnwindSafe(measure))
        .unwrap_or_else(|panic| Err(format!("panicked: {}", panic_message(&*panic))));
    match outcome {
        Ok(m) => {
            let value = if m.unit == "boxes/s" {
                format!("{:.3e}", m.value)
            } else {
                format!("{:.2}", m.value)
            };
            let note = if m.extra_note.is_empty() {
                note.to_string()
            } else {
                format!("{note}; {}", m.extra_note)
            };
            println!("{}\t{}\t{}\t{}", name, value, m.unit, clean(&note));
        }
        Err(reason) => println!("{}\tNA\t-\t{}", name, clean(&reason)),
    }
}

/// Keeps a note on one line and free of the field separator.
fn clean(s: &str) -> String {
    s.replace(['\t', '\n', '\r'], " ")
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic payload".to_string()
    }
}

/// Timing of repeated passes.
struct Timing {
    /// Shortest pass (the reported number).
    best: Duration,
    /// Process CPU time (all threads, user + system) over all passes divided by their total wall
    /// time: about 1 for one busy thread, about N when N threads really ran in parallel. `None`
    /// where /proc/self/stat is unreadable.
    cpu_per_wall: Option<f64>,
}

impl Timing {
    /// The CPU/wall ratio for a row's note, to show whether threads actually ran in parallel.
    fn parallelism_note(&self) -> String {
        match self.cpu_per_wall {
            Some(r) => format!("process CPU time / wall time over the timed passes {r:.2}"),
            None => "CPU time unavailable".to_string(),
        }
    }
}

/// Runs `pass` `passes` times and returns the shortest wall-clock time (and the CPU/wall ratio).
fn best_of<T>(
    passes: usize,
    mut pass: impl FnMut() -> Result<T, String>,
) -> Result<Timing, String> {
    let mut best = Duration::MAX;
    let cpu_start = process_cpu_seconds();
    let wall_start = Instant::now();
    for _ in 0..passes {
        let start = Instant::now();
        let result = pass()?;
        let elapsed = start.elapsed();
        black_box(result);
        best = best.min(elapsed);
    }
    let wall = wall_start.elapsed().as_secs_f64();
    let cpu_per_wall = match (cpu_start, process_cpu_seconds()) {
        (Some(a), Some(b)) if wall > 0.0 => Some((b - a) / wall),
        _ => None,
    };
    Ok(Timing { best, cpu_per_wall })
}

/// User + system CPU time of this process (all threads), from /proc/self/stat, in seconds
/// (10 ms resolution: Linux reports it in USER_HZ = 100 ticks per second).
fn process_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesized command name start at field 3 (state); utime and stime are
    // fields 14 and 15.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / 100.0)
}

// ---------------------------------------------------------------------------------------------
// Input boxes
// ---------------------------------------------------------------------------------------------

/// splitmix64 (Steele, Lea and Flood 2014): a small, fixed, reproducible PRNG.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1): the top 53 bits as a dyadic fraction.
    fn next_unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// The benchmark's input: `BOX_COUNT` boxes, as f64 endpoints `(lo, hi)` per coordinate.
///
/// Corners `a` are uniform in `[BOX_LO, BOX_HI)`; `hi = a + BOX_SIDE` rounded to nearest f64.
/// The box is *defined* by these f64 endpoints, so every evaluator sees the same boxes.
struct Boxes {
    x: Vec<(f64, f64)>,
    y: Vec<(f64, f64)>,
    z: Vec<(f64, f64)>,
}

impl Boxes {
    fn generate() -> Self {
        let mut rng = SplitMix64(BOX_SEED);
        let mut side = || {
            let a = BOX_LO + (BOX_HI - BOX_LO) * rng.next_unit();
            (a, a + BOX_SIDE)
        };
        let (mut x, mut y, mut z) = (
            Vec::with_capacity(BOX_COUNT),
            Vec::with_capacity(BOX_COUNT),
            Vec::with_capacity(BOX_COUNT),
        );
        for _ in 0..BOX_COUNT {
            x.push(side());
            y.push(side());
            z.push(side());
        }
        Boxes { x, y, z }
    }

    /// The boxes as inari intervals (exact: the endpoints are f64 already).
    fn inari(&self) -> Result<[Vec<Interval>; 3], String> {
        let convert = |v: &[(f64, f64)]| -> Result<Vec<Interval>, String> {
            v.iter()
                .map(|&(lo, hi)| {
                    inari::interval!(lo, hi).map_err(|e| format!("bad box [{lo}, {hi}]: {e:?}"))
                })
                .collect()
        };
        Ok([convert(&self.x)?, convert(&self.y)?, convert(&self.z)?])
    }

    /// The boxes as Fidget f32 intervals, rounded outward so each f32 box encloses its f64 box.
    fn fidget(&self) -> [Vec<FidgetInterval>; 3] {
        let convert = |v: &[(f64, f64)]| -> Vec<FidgetInterval> {
            v.iter()
                .map(|&(lo, hi)| FidgetInterval::new(f32_down(lo), f32_up(hi)))
                .collect()
        };
        [convert(&self.x), convert(&self.y), convert(&self.z)]
    }
}

/// Largest f32 <= `v`.
fn f32_down(v: f64) -> f32 {
    let r = v as f32;
    if f64::from(r) > v {
        r.next_down()
    } else {
        r
    }
}

/// Smallest f32 >= `v`.
fn f32_up(v: f64) -> f32 {
    let r = v as f32;
    if f64::from(r) < v {
        r.next_up()
    } else {
        r
    }
}

// ---------------------------------------------------------------------------------------------
// a. inari: tangle, f64, rigorous
// ---------------------------------------------------------------------------------------------

/// Interval constants of tangle, as enclosures of the decimal constants.
struct TangleConstants {
    /// [5, 5] (exact in binary).
    five: Interval,
    /// The tightest f64 interval containing the decimal 11.8 (not exactly representable, so this
    /// has width one ulp), parsed by inari from the literal "[11.8]" with correct rounding.
    eleven_point_eight: Interval,
}

impl TangleConstants {
    fn new() -> Result<Self, String> {
        let eleven_point_eight =
            inari::interval!("[11.8]").map_err(|e| format!("inari cannot parse [11.8]: {e:?}"))?;
        // Sanity: 11.8 is not a binary fraction, so a correct enclosure has nonzero width.
        if !(eleven_point_eight.inf() < 11.8 || eleven_point_eight.sup() > 11.8) {
            return Err(format!("[11.8] parsed as a point: {eleven_point_eight:?}"));
        }
        Ok(TangleConstants {
            five: inari::const_interval!(5.0, 5.0),
            eleven_point_eight,
        })
    }
}

/// tangle with x^4 = `powi(4)` (inari's name for IEEE 1788 pown; it rounds each bound through
/// MPFR) and x^2 = `sqr()`; evaluated left to right as written.
#[inline]
fn tangle_inari_powi(x: Interval, y: Interval, z: Interval, c: &TangleConstants) -> Interval {
    x.powi(4) - c.five * x.sqr() + y.powi(4) - c.five * y.sqr() + z.powi(4) - c.five * z.sqr()
        + c.eleven_point_eight
}

/// tangle with x^4 = `sqr(sqr(x))` and x^2 = `sqr()` (both pure SIMD f64 with directed rounding),
/// x^2 computed once per variable; evaluated left to right as written.
#[inline]
fn tangle_inari_sqr_sqr(x: Interval, y: Interval, z: Interval, c: &TangleConstants) -> Interval {
    let (x2, y2, z2) = (x.sqr(), y.sqr(), z.sqr());
    x2.sqr() - c.five * x2 + y2.sqr() - c.five * y2 + z2.sqr() - c.five * z2 + c.eleven_point_eight
}

/// Rows "inari tangle ...": boxes per second, one thread, best of `INTERVAL_PASSES` passes over
/// all boxes. Each pass writes every result into a preallocated Vec and then sums the result
/// widths (so the evaluation cannot be optimized away).
fn inari_tangle(boxes: &Boxes) {
    let prepared =
        catch_unwind(|| -> Result<_, String> { Ok((boxes.inari()?, TangleConstants::new()?)) })
            .unwrap_or_else(|p| Err(format!("panicked: {}", panic_message(&*p))));
    let simd = if cfg!(target_feature = "avx512f") {
        "AVX-512F build"
    } else {
        "AVX2+FMA build"
    };
    let common = format!(
        "5 and 11.8 as enclosing intervals; {BOX_COUNT} boxes, best of {INTERVAL_PASSES}; {simd}"
    );
    inari_tangle_row(
        "inari tangle f64 powi(4) 1 thread",
        &format!(
            "rigorous (IEEE 1788), x^4 = x.powi(4) (inari 2.0.0's pown; each bound via MPFR), \
             x^2 = sqr(); {common}"
        ),
        &prepared,
        tangle_inari_powi,
    );
    inari_tangle_row(
        "inari tangle f64 sqr(sqr) 1 thread",
        &format!("rigorous (IEEE 1788), x^4 = sqr(sqr(x)), x^2 = sqr() (shared); {common}"),
        &prepared,
        tangle_inari_sqr_sqr,
    );
}

/// One inari row: times `eval` over all boxes (generic, so the loop calls `eval` directly and
/// the compiler may inline it).
fn inari_tangle_row(
    name: &str,
    note: &str,
    prepared: &Result<([Vec<Interval>; 3], TangleConstants), String>,
    eval: impl Fn(Interval, Interval, Interval, &TangleConstants) -> Interval,
) {
    row(name, note, || {
        let ([xs, ys, zs], consts) = prepared.as_ref().map_err(String::clone)?;
        let mut out = vec![Interval::EMPTY; BOX_COUNT];
        let mut checksum = 0.0;
        let timing = best_of(INTERVAL_PASSES, || {
            for i in 0..BOX_COUNT {
                out[i] = eval(xs[i], ys[i], zs[i], consts);
            }
            checksum = out.iter().map(|r| r.wid()).sum::<f64>();
            Ok(black_box(checksum))
        })?;
        Ok(Measured {
            value: BOX_COUNT as f64 / timing.best.as_secs_f64(),
            unit: "boxes/s",
            extra_note: format!("sum of widths {checksum:.6e}"),
        })
    });
}

// ---------------------------------------------------------------------------------------------
// b. Fidget: JIT interval evaluation, f32, not rigorous
// ---------------------------------------------------------------------------------------------

/// tangle as a Fidget tree, left to right as written; x^4 = `square(square(x))`, x^2 =
/// `square(x)` (one shared node per variable), constants 5.0 and 11.8 as f32 points (Fidget has
/// no interval constants; 11.8 rounds to the nearest f32).
fn tangle_tree() -> Tree {
    let (x, y, z) = Tree::axes();
    let (x2, y2, z2) = (x.square(), y.square(), z.square());
    x2.square() - 5.0 * x2 + y2.square() - 5.0 * y2 + z2.square() - 5.0 * z2 + 11.8
}

/// trig as a Fidget tree: `sin(x)*cos(y) + exp(-x*y)*atan(z)`.
fn trig_tree() -> Tree {
    let (x, y, z) = Tree::axes();
    x.sin() * y.cos() + (-(x.clone() * y.clone())).exp() * z.atan()
}

/// Rows "fidget <expr> interval ...": boxes per second of Fidget's JIT interval evaluator
/// (`JitShape::new_interval_eval()` + `ez_interval_tape()`, `eval(&tape, x, y, z)` once per box),
/// one thread, best of `INTERVAL_PASSES` passes; same boxes as inari, rounded outward to f32.
fn fidget_interval(boxes: &Boxes) {
    let [xs, ys, zs] = boxes.fidget();
    let not_rigorous =
        "f32 intervals, NOT rigorous (Fidget rounds to nearest, no outward rounding)";
    let cases = [
        (
            "fidget tangle interval JIT 1 thread",
            format!("{not_rigorous}; x^4 = square(square(x)), 11.8 as the f32 point 11.8"),
            tangle_tree(),
        ),
        (
            "fidget trig interval JIT 1 thread",
            format!("{not_rigorous}; sin(x)*cos(y) + exp(-x*y)*atan(z), all ops native to Fidget"),
            trig_tree(),
        ),
    ];
    for (name, note, tree) in cases {
        let note = format!(
            "{note}; JitShape::new_interval_eval, one eval(&tape, x, y, z) per box, \
             {BOX_COUNT} boxes, best of {INTERVAL_PASSES}"
        );
        row(name, &note, || {
            let shape = JitShape::from(tree);
            let tape = shape.ez_interval_tape();
            let mut eval = JitShape::new_interval_eval();
            let mut out = vec![FidgetInterval::new(0.0, 0.0); BOX_COUNT];
            let mut checksum = 0.0f64;
            let timing = best_of(INTERVAL_PASSES, || {
                for i in 0..BOX_COUNT {
                    let (r, _trace) = eval
                        .eval(&tape, xs[i], ys[i], zs[i])
                        .map_err(|e| format!("eval failed: {e:?}"))?;
                    out[i] = r;
                }
                checksum = out.iter().map(|r| f64::from(r.upper() - r.lower())).sum();
                Ok(black_box(checksum))
            })?;
            Ok(Measured {
                value: BOX_COUNT as f64 / timing.best.as_secs_f64(),
                unit: "boxes/s",
                extra_note: format!("sum of widths {checksum:.6e}"),
            })
        });
    }
}

// ---------------------------------------------------------------------------------------------
// c, d. Fidget rendering
// ---------------------------------------------------------------------------------------------

fn models_dir() -> PathBuf {
    match std::env::var_os("IVJIT_MODELS_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/data/models"
        )),
    }
}

/// Reads a Fidget `.vm` model and builds a JIT shape with x, y, z as its axes.
fn load_jit_shape(file: &str) -> Result<BoundShape<'static, JitFunction, f32>, String> {
    let path = models_dir().join(file);
    let text = std::fs::File::open(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let (ctx, root) =
        Context::from_text(text).map_err(|e| format!("{}: parse: {e}", path.display()))?;
    let shape = JitShape::new(&ctx, root).map_err(|e| format!("{file}: {e}"))?;
    BoundShape::try_from(shape).map_err(|e| format!("{file}: unbound variable: {e:?}"))
}

/// A pool with exactly `n` threads for Fidget's `EvalConfig::threads`, or `None` for `n == 1`
/// (Fidget then renders on the calling thread without rayon).
fn thread_pool(n: usize) -> Result<Option<ThreadPool>, String> {
    if n == 1 {
        return Ok(None);
    }
    rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build()
        .map(|p| Some(ThreadPool::Custom(p)))
        .map_err(|e| format!("cannot build a {n}-thread pool: {e}"))
}

/// Rows "fidget prospero 2D ...": milliseconds per 1024x1024 render of Prospero over [-1, 1]^2
/// (`pixel::RenderConfig::from_size(1024)`, identity world-to-model, z = 0,
/// pixel_perfect = false) with `pixel::render`, best of `RENDER_2D_PASSES` after one untimed
/// warm-up. Each render starts from a clone of the bound JIT shape, like Fidget's own
/// `benches/pixel.rs`, so it includes JIT-compiling the root tape.
fn fidget_render_2d() {
    let shape = load_jit_shape("prospero.vm");
    let configs: [(&str, Option<&[usize]>, &str); 2] = [
        (
            "default tiles",
            None,
            "tile_sizes None = JitFunction::tile_sizes_2d() = [128, 16]: interval evaluation \
             (with tape simplification) on 128x128 tiles, then on 16x16 subtiles; each 16x16 \
             tile not proven empty/full is evaluated per pixel (256 points) with the JIT \
             float-slice evaluator",
        ),
        (
            "tiles 64,8",
            Some(&[64, 8]),
            "tile_sizes [64, 8]: interval evaluation (with tape simplification) on 64x64 tiles, \
             then on 8x8 subtiles; each 8x8 tile not proven empty/full is evaluated per pixel \
             (64 points) with the JIT float-slice evaluator",
        ),
    ];
    for threads in env_list("PEERS_THREADS", &[1, 2]) {
        for (label, tile_sizes, what) in configs {
            let name = format!(
                "fidget prospero 2D 1024^2 {label} {threads} thread{}",
                plural(threads)
            );
            let note = format!(
                "{what}; pixel_perfect=false (tiles proven empty/full are filled, not evaluated); \
                 f32, not rigorous; {}; best of {RENDER_2D_PASSES} after 1 warm-up",
                threads_note(threads)
            );
            row(&name, &note, || {
                let shape = shape.as_ref().map_err(String::clone)?;
                let pool = thread_pool(threads)?;
                let eval_config = pixel::EvalConfig {
                    tile_sizes: tile_sizes
                        .map(TileSizes::new)
                        .transpose()
                        .map_err(|e| format!("bad tile sizes: {e:?}"))?,
                    threads: pool.as_ref(),
                    cancel: CancelToken::new(),
                };
                let render_config = pixel::RenderConfig::from_size(ImageSize::from(1024));
                let render = || {
                    pixel::render(shape.clone(), &render_config, &eval_config)
                        .ok_or_else(|| "render was cancelled".to_string())
                };
                let image = render()?; // warm-up
                let inside = image.iter().filter(|p| p.inside()).count();
                let timing = best_of(RENDER_2D_PASSES, render)?;
                Ok(Measured {
                    value: timing.best.as_secs_f64() * 1e3,
                    unit: "ms",
                    extra_note: format!("{inside} pixels inside; {}", timing.parallelism_note()),
                })
            });
        }
    }
}

/// Rows "fidget colonnade 3D ...": milliseconds per N^3 voxel render of the colonnade over
/// [-1, 1]^3 (`voxel::RenderConfig::from_size(N)`, identity world-to-model, `voxel::render`;
/// the result is an NxN image of depth + normal per pixel), Fidget's default 3-D tile sizes
/// for the JIT, best of `RENDER_3D_PASSES` after one untimed warm-up.
fn fidget_render_3d() {
    let shape = load_jit_shape("colonnade.vm");
    for size in env_list("PEERS_3D_SIZES", &[512]) {
        for threads in env_list("PEERS_THREADS", &[1, 2]) {
            let name = format!(
                "fidget colonnade 3D {size}^3 {threads} thread{}",
                plural(threads)
            );
            let note = format!(
                "voxel::render, tile_sizes None = JitFunction::tile_sizes_3d() = [64, 16, 8]: \
                 interval evaluation (with tape simplification) on 64^3, 16^3, 8^3 tiles front \
                 to back, JIT float-slice evaluation of the 512 voxels of each remaining 8^3 \
                 tile, JIT gradient evaluation at the first inside voxel of each column; \
                 output: depth + normal image {size}x{size}; f32, not rigorous; {}; best of \
                 {RENDER_3D_PASSES} after 1 warm-up",
                threads_note(threads)
            );
            row(&name, &note, || {
                let shape = shape.as_ref().map_err(String::clone)?;
                let pool = thread_pool(threads)?;
                let eval_config = voxel::EvalConfig {
                    tile_sizes: None,
                    threads: pool.as_ref(),
                    cancel: CancelToken::new(),
                };
                let render_config = voxel::RenderConfig::from_size(VoxelSize::from(size as u32));
                let render = || {
                    voxel::render(shape.clone(), &render_config, &eval_config)
                        .ok_or_else(|| "render was cancelled".to_string())
                };
                let image = render()?; // warm-up
                let covered = image.iter().filter(|p| p.depth > 0).count();
                let timing = best_of(RENDER_3D_PASSES, render)?;
                Ok(Measured {
                    value: timing.best.as_secs_f64() * 1e3,
                    unit: "ms",
                    extra_note: format!(
                        "{covered} pixels with depth > 0; {}",
                        timing.parallelism_note()
                    ),
                })
            });
        }
    }
}

/// Rows "fidget mesh MODEL depth D ...": milliseconds per mesh of MODEL over [-1, 1]^3 by
/// `fidget::mesh::Octree::build` (an octree of depth D: 2^D cells a side, cells proven empty or
/// full by interval evaluation are not split) and `walk_dual` (manifold dual contouring: one
/// vertex per leaf cell placed by a QEF), best of `MESH_PASSES` after one untimed warm-up.
fn fidget_mesh() {
    let models = std::env::var("PEERS_MESH_MODELS").unwrap_or_else(|_| "bear,colonnade".into());
    for label in models.split(',').map(str::trim).filter(|m| !m.is_empty()) {
        let shape = load_jit_shape(&format!("{label}.vm"));
        for depth in env_list("PEERS_MESH_DEPTHS", &[6]) {
            for threads in env_list("PEERS_THREADS", &[1, 2]) {
                let name = format!(
                    "fidget mesh {label} depth {depth} {threads} thread{}",
                    plural(threads)
                );
                let note = format!(
                    "mesh::Octree::build (depth {depth}: {} cells a side, [-1, 1]^3) then \
                     walk_dual (manifold dual contouring); f32 point samples and QEF vertices, \
                     not rigorous, thin parts between samples may be lost; {}; best of \
                     {MESH_PASSES} after 1 warm-up",
                    1u64 << depth,
                    threads_note(threads)
                );
                row(&name, &note, || {
                    let shape = shape.as_ref().map_err(String::clone)?;
                    let pool = thread_pool(threads)?;
                    let settings = fidget::mesh::Settings {
                        depth: depth as u8,
                        threads: pool.as_ref(),
                        ..Default::default()
                    };
                    let mesh = || {
                        fidget::mesh::Octree::build(shape, &settings)
                            .map(|o| o.walk_dual())
                            .ok_or_else(|| "meshing was cancelled".to_string())
                    };
                    let m = mesh()?; // warm-up
                    let (triangles, vertices) = (m.triangles.len(), m.vertices.len());
                    let timing = best_of(MESH_PASSES, mesh)?;
                    Ok(Measured {
                        value: timing.best.as_secs_f64() * 1e3,
                        unit: "ms",
                        extra_note: format!(
                            "{triangles} triangles, {vertices} vertices; {}",
                            timing.parallelism_note()
                        ),
                    })
                });
            }
        }
    }
}

/// Rows "fidget mesh thin wall depth D": the triangles of Fidget's mesh of a wall 0.002 thick at
/// z = 0.013, `abs(z - 0.013) - 0.001`, over [-1, 1]^3 at depth D (cells 2/2^D wide), the
/// example of docs/mesh.md: a mesher that samples f at points keeps the wall only where a sample
/// falls inside it. (ivjit's mesh at depth 5 with 4 witness levels is a closed sheet there.)
fn fidget_thin_wall() {
    for depth in [5u8, 6, 7, 8] {
        let name = format!("fidget mesh thin wall depth {depth}");
        let note = format!(
            "abs(z - 0.013) - 0.001 (a wall 0.002 thick) by mesh::Octree::build (depth \
             {depth}: cells {} wide) then walk_dual; the value is the mesh's triangle count \
             (0: the wall is lost)",
            2.0 / f64::from(1u32 << depth)
        );
        row(&name, &note, || {
            let (_, _, z) = Tree::axes();
            let tree = (z - 0.013).abs() - 0.001;
            let shape = BoundShape::try_from(JitShape::from(tree))
                .map_err(|e| format!("unbound variable: {e:?}"))?;
            let settings = fidget::mesh::Settings {
                depth,
                threads: None,
                ..Default::default()
            };
            let m = fidget::mesh::Octree::build(&shape, &settings)
                .map(|o| o.walk_dual())
                .ok_or_else(|| "meshing was cancelled".to_string())?;
            Ok(Measured {
                value: m.triangles.len() as f64,
                unit: "triangles",
                extra_note: format!("{} vertices", m.vertices.len()),
            })
        });
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn threads_note(threads: usize) -> String {
    if threads == 1 {
        "EvalConfig.threads = None (calling thread only)".to_string()
    } else {
        format!("EvalConfig.threads = a {threads}-thread rayon pool (ThreadPool::Custom)")
    }
}

// ---------------------------------------------------------------------------------------------
// e. Machine
// ---------------------------------------------------------------------------------------------

/// Row "machine": CPU model (first `model name` of /proc/cpuinfo), logical CPU count, whether
/// the CPU has AVX-512F (cpuinfo flags), whether this binary was compiled to use it, and the load
/// average when the run started.
fn machine() {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo");
    match cpuinfo {
        Ok(info) => {
            let field = |key: &str| {
                info.lines()
                    .find(|l| l.split(':').next().map(str::trim) == Some(key))
                    .and_then(|l| l.split_once(':'))
                    .map(|(_, v)| v.trim().to_string())
            };
            let model = field("model name").unwrap_or_else(|| "unknown CPU".to_string());
            let avx512f =
                field("flags").is_some_and(|f| f.split_whitespace().any(|w| w == "avx512f"));
            let cpus = info.lines().filter(|l| l.starts_with("processor")).count();
            // Other work on the machine skews every row (and hides the 2-thread speedup).
            let load = std::fs::read_to_string("/proc/loadavg")
                .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
                .unwrap_or_else(|_| "unknown".to_string());
            println!(
                "machine\t{}\t-\t{} logical CPUs; avx512f {}; this binary compiled {} AVX-512F; \
                 load average (1, 5, 15 min) at start: {}",
                clean(&model),
                cpus,
                if avx512f { "present" } else { "absent" },
                if cfg!(target_feature = "avx512f") {
                    "with"
                } else {
                    "without"
                },
                load,
            );
        }
        Err(e) => println!("machine\tNA\t-\tcannot read /proc/cpuinfo: {e}"),
    }
}

fn main() {
    machine();
    if wanted("inari") || wanted("interval") {
        let boxes = Boxes::generate();
        if wanted("inari") {
            inari_tangle(&boxes);
        }
        if wanted("interval") {
            fidget_interval(&boxes);
        }
    }
    if wanted("2d") {
        fidget_render_2d();
    }
    if wanted("3d") {
        fidget_render_3d();
    }
    if wanted("mesh") {
        fidget_mesh();
    }
    if wanted("wall") {
        fidget_thin_wall();
    }
}
