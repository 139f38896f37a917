//! The *classify* rule over an image: every pixel of a W x H grid over a region of the plane is
//! proven outside (f > 0 on the whole pixel), inside (f < 0 on the whole pixel), or boundary
//! (neither proven), by hierarchical subdivision (see the search module's documentation).
//! The types and the pixel boxes live here; `cpu` and `gpu` run the rounds, and the pruned
//! renders (`super::prune`, `super::tape`) reuse the plan, the axes and the classes.

use super::{filled, SearchError};
use crate::round::{add_f64, div_f64, mul_f64, Round};
use crate::{Backend, Error, Evaluator};

pub(crate) mod cpu;
pub(crate) mod gpu;

/// A level's class array before a tile of it is evaluated (its parent was decided).
pub(crate) const UNSET: u8 = 255;

/// Class of a pixel: `f > 0` on the whole pixel.
pub const OUTSIDE: u8 = 0;
/// Class of a pixel: `f < 0` on the whole pixel.
pub const INSIDE: u8 = 1;
/// Class of a pixel: neither proven (the enclosure contains 0, or is empty, or NaN).
pub const BOUNDARY: u8 = 2;

/// A W x H image over `[x0, x1] x [y0, y1]`, classified by subdivision through tiles of the given
/// sizes.
#[derive(Clone, Debug, PartialEq)]
pub struct RenderOptions {
    /// Pixels per row.
    pub width: u32,
    /// Rows.
    pub height: u32,
    /// `[x0, x1, y0, y1]`: finite, `x0 < x1`, `y0 < y1`.
    pub region: [f64; 4],
    /// Tile sizes in pixels, coarse to fine; each divides the one before it and the last is 1.
    pub tiles: Vec<u32>,
}

impl RenderOptions {
    /// The default subdivision of a W x H image over `region`: tiles of 64, 8, then 1 pixel
    /// (a pruned render on the GPU takes coarser first tiles for large images:
    /// [`crate::search::PrunedRender::default_tiles`]).
    pub fn new(width: u32, height: u32, region: [f64; 4]) -> RenderOptions {
        RenderOptions {
            width,
            height,
            region,
            tiles: vec![64, 8, 1],
        }
    }

    fn check(&self) -> Result<(), SearchError> {
        let bad = |s: String| Err(SearchError::Options(s));
        if self.width == 0 || self.height == 0 {
            return bad(format!(
                "the image size {}x{} is empty; give WIDTHxHEIGHT, e.g. 1024x1024",
                self.width, self.height
            ));
        }
        if (self.width as u64) * (self.height as u64) > 1 << 30 {
            return bad(format!(
                "{}x{} pixels is more than 2^30; render it in parts",
                self.width, self.height
            ));
        }
        let [x0, x1, y0, y1] = self.region;
        if !(x0.is_finite() && x1.is_finite() && y0.is_finite() && y1.is_finite())
            || x0 >= x1
            || y0 >= y1
        {
            return bad(format!(
                "the region x0,x1,y0,y1 = {x0},{x1},{y0},{y1} needs finite bounds with \
                 x0 < x1 and y0 < y1"
            ));
        }
        let t = &self.tiles;
        if t.last() != Some(&1)
            || t.contains(&0)
            || t.windows(2).any(|w| w[1] >= w[0] || w[0] % w[1] != 0)
            || t.len() > MAX_LEVELS
        {
            return bad(format!(
                "tile sizes {t:?}: give at most {MAX_LEVELS} decreasing sizes, each dividing the \
                 one before, ending with 1 (e.g. 64,8,1)"
            ));
        }
        Ok(())
    }
}

/// The most subdivision levels a render takes (the GPU's compose kernel has this many slots).
pub(crate) const MAX_LEVELS: usize = 8;

/// What one round of a search did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Round2 {
    /// Tile size of the round, in pixels.
    pub tile: u32,
    /// Boxes evaluated.
    pub boxes: u64,
    /// Of those, proven inside.
    pub inside: u64,
    /// Proven outside.
    pub outside: u64,
    /// Neither: split further (or boundary pixels in the last round).
    pub boundary: u64,
}

/// A classified image.
#[derive(Clone, Debug)]
pub struct Rendered {
    /// Pixels per row.
    pub width: u32,
    /// Rows.
    pub height: u32,
    /// Row-major, row 0 at the top: [`OUTSIDE`], [`INSIDE`] or [`BOUNDARY`] per pixel.
    pub classes: Vec<u8>,
    /// One entry per round, coarse to fine.
    pub rounds: Vec<Round2>,
}

impl Rendered {
    /// Boxes evaluated over all rounds.
    pub fn boxes(&self) -> u64 {
        self.rounds.iter().map(|r| r.boxes).sum()
    }
}

/// Classifies every pixel of the image by subdivision on the evaluator's backend (see the module
/// documentation).
///
/// ```
/// use ivjit::search::{render, RenderOptions, INSIDE, OUTSIDE};
/// use ivjit::{BackendChoice, Evaluator, Expression, Precision};
/// let disk = Expression::parse("x^2 + y^2 - 0.5").unwrap();
/// let eval = Evaluator::new(&disk, Precision::F64, BackendChoice::Cpu).unwrap();
/// let image = render(&eval, &RenderOptions::new(64, 64, [-1.0, 1.0, -1.0, 1.0])).unwrap();
/// assert_eq!(image.classes[32 * 64 + 32], INSIDE); // the center
/// assert_eq!(image.classes[0], OUTSIDE); // the top left corner
/// ```
pub fn render(eval: &Evaluator, opts: &RenderOptions) -> Result<Rendered, Error> {
    let plan = Plan::new(eval, opts)?;
    match eval.backend() {
        Backend::Cpu => super::on_pool(|| cpu::render(eval, &plan)),
        Backend::Gpu => gpu::render(eval, &plan),
    }
}

/// Everything both implementations derive from the options: checked sizes, per-level tile
/// grids, the axes' rounded constants, and where x and y go in a box.
#[derive(Clone, Debug)]
pub(crate) struct Plan {
    pub width: u32,
    pub height: u32,
    pub levels: Vec<LevelGrid>,
    pub axes: Axes,
    /// [`Axes::tile_box`]'s four bounds at every pixel edge, computed once: each bound of a
    /// tile's box depends on one edge (`x` lo on `j0`, `x` hi on `j1`, `y` lo on `i1`, `y` hi
    /// on `i0`), and the CPU renders ask for millions of boxes. Made at the first CPU use: the
    /// GPU kernels compute their bounds themselves, and the table took 0.10 ms at 1024² (0.38 ms
    /// at 4096²) on the development machine, before every GPU frame's first launch (a frame of
    /// 0.6-1 ms on an H200: run 44 of docs/gpu-runs.md).
    edges: std::sync::OnceLock<Edges>,
    /// A 3-D plan's z bounds at each layer edge ([`Plan::layers_box`]), made at the first
    /// use: computing them per tile was a quarter of a CPU depth map.
    z_edges: std::sync::OnceLock<Edges>,
    /// The index of x and of y among the expression's variables, if it has them.
    pub var_x: Option<usize>,
    pub var_y: Option<usize>,
    pub n_vars: usize,
    /// A 3-D plan's voxel layers (z, layer 0 at the top), None for an image.
    pub z: Option<ZAxis>,
}

/// The z axis of a 3-D plan: `depth` layers of voxels over `[z0, z1]`, layer 0 at the top
/// (`z1`), as rows are over y; its constants are [`Axes`]'s y constants for the region
/// `[x0, x1, z0, z1]` with `depth` rows, so a layer's bounds are a row's, the same bits.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ZAxis {
    pub depth: u32,
    pub axes: Axes,
}

/// The tiles of one level: `tile` pixels square (cubes of `tile` voxels in 3-D), `cols x rows`
/// of them (`cols x rows x layers` in 3-D, `layers` 1 in 2-D; the last ones clipped).
#[derive(Clone, Copy, Debug)]
pub(crate) struct LevelGrid {
    pub tile: u32,
    pub cols: u32,
    pub rows: u32,
    pub layers: u32,
}

impl Plan {
    pub(crate) fn new(eval: &Evaluator, opts: &RenderOptions) -> Result<Plan, Error> {
        let program = eval.program();
        Plan::of(&program.var_names, program.outputs.len(), opts)
    }

    /// The plan for an expression over `var_names` with `outputs` outputs.
    pub(crate) fn of(
        var_names: &[String],
        outputs: usize,
        opts: &RenderOptions,
    ) -> Result<Plan, Error> {
        opts.check()?;
        if outputs != 1 {
            return Err(SearchError::Outputs(outputs).into());
        }
        let (mut var_x, mut var_y) = (None, None);
        for (k, name) in var_names.iter().enumerate() {
            match name.as_str() {
                "x" => var_x = Some(k),
                "y" => var_y = Some(k),
                _ => return Err(SearchError::Variable { name: name.clone() }.into()),
            }
        }
        let levels = opts
            .tiles
            .iter()
            .map(|&tile| LevelGrid {
                tile,
                cols: opts.width.div_ceil(tile),
                rows: opts.height.div_ceil(tile),
                layers: 1,
            })
            .collect();
        let axes = Axes::new(opts.region, opts.width, opts.height);
        Ok(Plan {
            width: opts.width,
            height: opts.height,
            levels,
            edges: std::sync::OnceLock::new(),
            z_edges: std::sync::OnceLock::new(),
            axes,
            var_x,
            var_y,
            n_vars: var_names.len(),
            z: None,
        })
    }

    /// The 3-D plan of a `width x height x depth` voxel grid over `region` (`[x0, x1, y0, y1,
    /// z0, z1]`) through cubic tiles of the sizes `tiles`, for an expression of `n_vars`
    /// variables: options checked by the caller (`crate::search::voxels`).
    pub(crate) fn layered(
        width: u32,
        height: u32,
        depth: u32,
        region: [f64; 6],
        tiles: &[u32],
        n_vars: usize,
    ) -> Plan {
        let [x0, x1, y0, y1, z0, z1] = region;
        let levels = tiles
            .iter()
            .map(|&tile| LevelGrid {
                tile,
                cols: width.div_ceil(tile),
                rows: height.div_ceil(tile),
                layers: depth.div_ceil(tile),
            })
            .collect();
        Plan {
            width,
            height,
            levels,
            edges: std::sync::OnceLock::new(),
            z_edges: std::sync::OnceLock::new(),
            axes: Axes::new([x0, x1, y0, y1], width, height),
            var_x: None,
            var_y: None,
            n_vars,
            z: Some(ZAxis {
                depth,
                axes: Axes::new([x0, x1, z0, z1], width, depth),
            }),
        }
    }

    /// The box of the voxel of a 3-D plan at row `i`, column `j` and layer `k` (from the
    /// top): `[[xlo, xhi], [ylo, yhi], [zlo, zhi]]`, the bits the tile boxes' bounds have.
    pub(crate) fn voxel_box(&self, i: u32, j: u32, k: u32) -> [[f64; 2]; 3] {
        let e = self
            .edges
            .get_or_init(|| Edges::new(&self.axes, self.width, self.height));
        let (i, j) = (i as usize, j as usize);
        [
            [e.x_lo[j], e.x_hi[j + 1]],
            [e.y_lo[i + 1], e.y_hi[i]],
            self.layers_box(k, k + 1),
        ]
    }

    /// `[zlo, zhi]` enclosing the layers `k0..k1` of a 3-D plan: the bounds of rows `k0..k1`
    /// on the z axis's constants ([`Axes::tile_box`] of [`ZAxis::axes`], the GPU's
    /// `layer_box`), from the table of layer edges.
    pub(crate) fn layers_box(&self, k0: u32, k1: u32) -> [f64; 2] {
        let z = self.z.expect("a 3-D plan");
        let e = self.z_edges.get_or_init(|| Edges::new(&z.axes, 0, z.depth));
        [e.y_lo[k1 as usize], e.y_hi[k0 as usize]]
    }

    /// The pixel rectangle of tile `(row, col)` of level `l`: rows `i0..i1`, columns `j0..j1`.
    pub(crate) fn pixels(&self, l: usize, row: u32, col: u32) -> (u32, u32, u32, u32) {
        let s = self.levels[l].tile;
        let (i0, j0) = (row * s, col * s);
        (i0, (i0 + s).min(self.height), j0, (j0 + s).min(self.width))
    }

    /// `[xlo, xhi, ylo, yhi]` of tile `(row, col)` of level `l`: [`Axes::tile_box`] of its
    /// pixels, the same bits, from the table of edges.
    pub(crate) fn tile_box(&self, l: usize, row: u32, col: u32) -> [f64; 4] {
        let (i0, i1, j0, j1) = self.pixels(l, row, col);
        let e = self
            .edges
            .get_or_init(|| Edges::new(&self.axes, self.width, self.height));
        [
            e.x_lo[j0 as usize],
            e.x_hi[j1 as usize],
            e.y_lo[i1 as usize],
            e.y_hi[i0 as usize],
        ]
    }
}

/// [`Axes::tile_box`]'s bounds at each pixel edge (see [`Plan`]).
#[derive(Clone, Debug)]
struct Edges {
    x_lo: Vec<f64>,
    x_hi: Vec<f64>,
    y_lo: Vec<f64>,
    y_hi: Vec<f64>,
}

impl Edges {
    fn new(axes: &Axes, width: u32, height: u32) -> Edges {
        // One box per edge gives both bounds of its axis.
        let (x_lo, x_hi) = (0..=width)
            .map(|j| axes.tile_box(0, 0, j, j))
            .map(|b| (b[0], b[1]))
            .unzip();
        let (y_lo, y_hi) = (0..=height)
            .map(|i| axes.tile_box(i, i, 0, 0))
            .map(|b| (b[2], b[3]))
            .unzip();
        Edges {
            x_lo,
            x_hi,
            y_lo,
            y_hi,
        }
    }
}

/// The region's constants, rounded once: each end of each axis divided by the image's size
/// in pixels along it, rounded down and up. The GPU kernels receive exactly these values
/// (`tile_bounds` in src/search/tile.cu).
///
/// A pixel edge is the weighted mean of the region's ends, `x(j) = x0 (W - j) / W + x1 j / W`
/// (and `y(i) = y1 (H - i) / H + y0 i / H`, rows from the top): two products and a sum, each
/// rounded in the bound's direction, from `x0 / W` and `x1 / W` rounded the same way. Every
/// weight (`W - j`, `j`) is a nonnegative integer, so each step keeps the bound whatever the
/// signs of the ends. Unlike `x0 + j (x1 - x0) / W`, no intermediate exceeds the region's
/// largest end in magnitude, so a region as wide as `[-MAX, MAX]` (whose width overflows to
/// infinity) still gets pixels of their true size. A rounded sum can step one ulp past MAX
/// and overflow; the real edge lies within the (finite) region, so the bounds are clamped to
/// `[-MAX, MAX]`. Each bound is within a few ulps of the largest end in magnitude (two
/// roundings of each product, one of the sum) plus, where the ends are subnormal, one quantum
/// per pixel (`x0 / W` rounded, multiplied by up to W).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Axes {
    /// `[x0 / W, x1 / W]` rounded down, then the same rounded up.
    pub x_lo: [f64; 2],
    pub x_hi: [f64; 2],
    /// `[y1 / H, y0 / H]` (top first, as rows count from the top) rounded down, then up.
    pub y_lo: [f64; 2],
    pub y_hi: [f64; 2],
    pub w: u32,
    pub h: u32,
}

impl Axes {
    pub(crate) fn new([x0, x1, y0, y1]: [f64; 4], width: u32, height: u32) -> Axes {
        let (w, h) = (width.max(1) as f64, height.max(1) as f64);
        let (d, u) = (Round::Down, Round::Up);
        Axes {
            x_lo: [div_f64(x0, w, d), div_f64(x1, w, d)],
            x_hi: [div_f64(x0, w, u), div_f64(x1, w, u)],
            y_lo: [div_f64(y1, h, d), div_f64(y0, h, d)],
            y_hi: [div_f64(y1, h, u), div_f64(y0, h, u)],
            w: width,
            h: height,
        }
    }

    /// The eight constants in the order the GPU kernels take them: x's down, x's up, y's
    /// down, y's up.
    pub(crate) fn constants(&self) -> [f64; 8] {
        let [a, b, c, e] = [self.x_lo, self.x_hi, self.y_lo, self.y_hi];
        [a[0], a[1], b[0], b[1], c[0], c[1], e[0], e[1]]
    }

    /// `[xlo, xhi, ylo, yhi]` enclosing the pixels `i0..i1` x `j0..j1` (see [`Axes`]).
    pub(crate) fn tile_box(&self, i0: u32, i1: u32, j0: u32, j1: u32) -> [f64; 4] {
        [
            edge(self.x_lo, self.w, j0, Round::Down),
            edge(self.x_hi, self.w, j1, Round::Up),
            edge(self.y_lo, self.h, i1, Round::Down),
            edge(self.y_hi, self.h, i0, Round::Up),
        ]
    }
}

/// `a0 (n - k) + a1 k` with every step rounded `r`, clamped to the finite floats (see
/// [`Axes`]).
fn edge([a0, a1]: [f64; 2], n: u32, k: u32, r: Round) -> f64 {
    let s = add_f64(mul_f64(a0, (n - k) as f64, r), mul_f64(a1, k as f64, r), r);
    s.clamp(-f64::MAX, f64::MAX)
}

/// The class of an enclosure `[lo, hi]` of f (NaN bounds, the empty set, give [`BOUNDARY`]:
/// nothing is proven).
pub(crate) fn classify(lo: f64, hi: f64) -> u8 {
    if lo > 0.0 {
        OUTSIDE
    } else if hi < 0.0 {
        INSIDE
    } else {
        BOUNDARY
    }
}

/// Min/max models with a sqrt whose argument may be negative: the pruned renders' test cases.
#[cfg(test)]
pub(crate) const PRUNING_MODELS: [&str; 3] = [
    // Union and intersection of disks and a square (min/max of distance functions).
    "min(min(sqrt(sqr(x - 0.3) + sqr(y)) - 0.4, sqrt(sqr(x + 0.4) + sqr(y - 0.2)) - 0.3), \
     max(max(abs(x) - 0.2, abs(y + 0.5) - 0.2), -(sqrt(sqr(x) + sqr(y + 0.5)) - 0.1)))",
    "max(x*x + y*y - 0.8, -(min(x - 0.1, y + 0.2))) + min(0.05, x*y)",
    // A sqrt whose argument may be negative: its side of a min is never dropped.
    "min(sqrt(x - 0.2) - 0.3, max(y, -0.5))",
];

/// Checks a pruned render against the plain one on [`PRUNING_MODELS`], f64 and f32, two tile
/// plans: `pruned` returns the image and the mean program length per round, which must give
/// the plain render's classes and rounds and end shorter than it starts.
#[cfg(test)]
pub(crate) fn assert_pruned_render_is_plain(
    pruned: impl Fn(&crate::Expression, crate::Precision, &RenderOptions) -> (Rendered, Vec<f64>),
) {
    use crate::{BackendChoice, Expression, Precision};
    for src in PRUNING_MODELS {
        let expr = Expression::parse(src).unwrap();
        for p in [Precision::F64, Precision::F32] {
            for tiles in [vec![64, 8, 1], vec![16, 4, 2, 1]] {
                let opts = RenderOptions {
                    tiles,
                    ..RenderOptions::new(160, 96, [-1.0, 1.0, -0.75, 0.75])
                };
                let eval = Evaluator::new(&expr, p, BackendChoice::Cpu).unwrap();
                let plain = render(&eval, &opts).unwrap();
                let (image, lengths) = pruned(&expr, p, &opts);
                assert!(plain.classes == image.classes, "{src} {p}: other classes");
                assert_eq!(plain.rounds, image.rounds, "{src} {p}");
                let last = lengths.last().unwrap();
                assert!(last < &lengths[0], "{src} {p}: {lengths:?}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BackendChoice, Expression, Precision};

    fn cpu(text: &str) -> Evaluator {
        Evaluator::new(
            &Expression::parse(text).unwrap(),
            Precision::F64,
            BackendChoice::Cpu,
        )
        .unwrap()
    }

    /// Pixel boxes contain the exact real pixel, and are tight (each bound within 8 ulps of
    /// the region's largest end, plus one subnormal quantum per pixel of the axis, as
    /// `x0 / W` rounded is multiplied by up to W): checked with exact rational arithmetic on regions whose
    /// bounds are not representable sums, on one of the largest floats and on `[-MAX, MAX]`,
    /// whose width overflows (the old `x0 + j (x1 - x0) / W` gave every pixel `[.., inf]`).
    #[test]
    fn pixel_boxes_enclose_the_real_pixels() {
        use num_rational::BigRational;
        let q = |x: f64| BigRational::from_float(x).unwrap();
        let m = f64::MAX;
        let regions = [
            [-1.1, 0.7, -0.3, 2.9],
            [-m, m, -m, m],
            [-m, -m / 3.0, 0.5 * m, m],
            [1e300, 1.0000001e300, -5e-324, 1e-310],
        ];
        for region in regions {
            let (w, h) = (37u32, 23u32);
            let axes = Axes::new(region, w, h);
            // 8 ulps of the larger end of each axis, as a rational.
            let tol = |a: f64, b: f64, n: u32| {
                q(a.abs().max(b.abs()) * f64::EPSILON * 8.0) + q(n as f64 * 5e-324)
            };
            let (tx, ty) = (tol(region[0], region[1], w), tol(region[2], region[3], h));
            for i in 0..h {
                for j in 0..w {
                    let [xl, xh, yl, yh] = axes.tile_box(i, i + 1, j, j + 1);
                    let dx = (q(region[1]) - q(region[0])) / q(w as f64);
                    let dy = (q(region[3]) - q(region[2])) / q(h as f64);
                    let rx0 = q(region[0]) + q(j as f64) * &dx;
                    let rx1 = q(region[0]) + q((j + 1) as f64) * &dx;
                    let ry0 = q(region[3]) - q((i + 1) as f64) * &dy;
                    let ry1 = q(region[3]) - q(i as f64) * &dy;
                    let at = format!("pixel ({i}, {j}) of {region:?}");
                    assert!(q(xl) <= rx0 && rx1 <= q(xh), "{at}: x");
                    assert!(q(yl) <= ry0 && ry1 <= q(yh), "{at}: y");
                    assert!(&rx0 - q(xl) <= tx && q(xh) - &rx1 <= tx, "{at}: x tight");
                    assert!(&ry0 - q(yl) <= ty && q(yh) - &ry1 <= ty, "{at}: y tight");
                }
            }
        }
    }

    /// Renders over regions of the largest floats (the width of `[-MAX, MAX]` overflows):
    /// plain and pruned, f64 and f32, every proven class agrees with the exact class of the
    /// real pixel (rational arithmetic; f = x - y, whose sign on a box is decided by its
    /// corners), and only pixels next to the diagonal are left undecided. Before the
    /// weighted-mean edges every pixel of `[-MAX, MAX]^2` was undecided.
    #[test]
    fn renders_over_the_largest_floats_classify_their_pixels() {
        use crate::search::tape::{self, TapeBackend};
        use crate::{BackendChoice, Expression, Precision};
        use num_rational::BigRational;
        let q = |x: f64| BigRational::from_float(x).unwrap();
        let (w, h) = (40u32, 30u32);
        // Each precision on its own largest floats (f64's overflow f32's boxes: entire).
        for (p, m) in [
            (Precision::F64, f64::MAX),
            (Precision::F32, f32::MAX as f64),
        ] {
            for region in [[-m, m, -m, m], [-m, m / 2.0, -m / 3.0, m]] {
                let opts = RenderOptions {
                    tiles: vec![8, 2, 1],
                    ..RenderOptions::new(w, h, region)
                };
                let dx = (q(region[1]) - q(region[0])) / q(w as f64);
                let dy = (q(region[3]) - q(region[2])) / q(h as f64);
                let mut exact = Vec::new();
                for i in 0..h {
                    for j in 0..w {
                        let x_lo = q(region[0]) + q(j as f64) * &dx;
                        let x_hi = &x_lo + &dx;
                        let y_hi = q(region[3]) - q(i as f64) * &dy;
                        let y_lo = &y_hi - &dy;
                        exact.push(if x_lo > y_hi {
                            OUTSIDE
                        } else if x_hi < y_lo {
                            INSIDE
                        } else {
                            BOUNDARY
                        });
                    }
                }
                let undecided = exact.iter().filter(|&&c| c == BOUNDARY).count();
                // The min's second side is positive on the whole region's boxes: pruned away.
                let text = "min(x - y, 2*x*x + 1)";
                let expr = Expression::parse(text).unwrap();
                let eval = Evaluator::new(&expr, p, BackendChoice::Cpu).unwrap();
                let plain = render(&eval, &opts).unwrap().classes;
                let pruned = tape::render(&expr, p, TapeBackend::Cpu, &opts)
                    .unwrap()
                    .0
                    .classes;
                for (name, got) in [("plain", &plain), ("pruned", &pruned)] {
                    let at = format!("{name} {p} {region:?}");
                    for (k, (&g, &e)) in got.iter().zip(&exact).enumerate() {
                        assert!(g == BOUNDARY || g == e, "{at}: pixel {k} is {g}, not {e}");
                    }
                    let left = got.iter().filter(|&&c| c == BOUNDARY).count();
                    let most = undecided + 2 * (w + h) as usize;
                    assert!(left <= most, "{at}: {left} undecided, {undecided} exactly");
                }
            }
        }
    }

    #[test]
    fn options_and_expressions_are_checked() {
        let opts = RenderOptions::new(8, 8, [-1.0, 1.0, -1.0, 1.0]);
        let err = |e: &Evaluator, o: &RenderOptions| render(e, o).unwrap_err().to_string();
        assert!(err(&cpu("x + z"), &opts).contains("'z'"));
        assert!(err(&cpu("x, y"), &opts).contains("2 outputs"));
        for tiles in [vec![8, 2], vec![8, 3, 1], vec![2, 4, 1], vec![]] {
            let o = RenderOptions {
                tiles,
                ..opts.clone()
            };
            assert!(err(&cpu("x"), &o).contains("tile sizes"));
        }
        let o = RenderOptions {
            region: [1.0, 1.0, 0.0, 1.0],
            ..opts.clone()
        };
        assert!(err(&cpu("x"), &o).contains("x0 < x1"));
        let o = RenderOptions { width: 0, ..opts };
        assert!(err(&cpu("x"), &o).contains("empty"));
    }
}
