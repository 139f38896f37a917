//! The *classify* rule over an image: every pixel of a W x H grid over a region of the plane is
//! proven outside (f > 0 on the whole pixel), inside (f < 0 on the whole pixel), or boundary
//! (neither proven), by hierarchical subdivision (see the search module's documentation).
//! The types and the pixel boxes live here; `cpu` and `gpu` run the rounds, and the pruned
//! renders (`super::prune`, `super::tape`) reuse the plan, the axes and the classes.

use super::{filled, SearchError};
use crate::round::{add_f64, div_f64, mul_f64, sub_f64, Round};
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

/// The region's constants, rounded once: `x0`, `y1`, the widths rounded down and up, and the
/// image size. The GPU kernels receive exactly these values.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Axes {
    pub x0: f64,
    pub y1: f64,
    pub wx_lo: f64,
    pub wx_hi: f64,
    pub wy_lo: f64,
    pub wy_hi: f64,
    pub w: f64,
    pub h: f64,
}

impl Axes {
    pub(crate) fn new([x0, x1, y0, y1]: [f64; 4], width: u32, height: u32) -> Axes {
        Axes {
            x0,
            y1,
            wx_lo: sub_f64(x1, x0, Round::Down),
            wx_hi: sub_f64(x1, x0, Round::Up),
            wy_lo: sub_f64(y1, y0, Round::Down),
            wy_hi: sub_f64(y1, y0, Round::Up),
            w: width as f64,
            h: height as f64,
        }
    }

    /// `[xlo, xhi, ylo, yhi]` enclosing the pixels `i0..i1` x `j0..j1`. Every quantity below is
    /// non-negative, so rounding each step down (up) bounds the real value from below (above):
    /// `x0 + j0 (x1 - x0) / W >= RD(x0 + RD(RD(j0 RD(x1 - x0)) / W))`, and so on.
    pub(crate) fn tile_box(&self, i0: u32, i1: u32, j0: u32, j1: u32) -> [f64; 4] {
        let (d, u) = (Round::Down, Round::Up);
        let a = self;
        [
            add_f64(a.x0, div_f64(mul_f64(j0 as f64, a.wx_lo, d), a.w, d), d),
            add_f64(a.x0, div_f64(mul_f64(j1 as f64, a.wx_hi, u), a.w, u), u),
            sub_f64(a.y1, div_f64(mul_f64(i1 as f64, a.wy_hi, u), a.h, u), d),
            sub_f64(a.y1, div_f64(mul_f64(i0 as f64, a.wy_lo, d), a.h, d), u),
        ]
    }
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

    /// Pixel boxes contain the exact real pixel: checked with exact rational arithmetic on
    /// a region whose bounds are not representable sums.
    #[test]
    fn pixel_boxes_enclose_the_real_pixels() {
        use num_rational::BigRational;
        let q = |x: f64| BigRational::from_float(x).unwrap();
        let region = [-1.1, 0.7, -0.3, 2.9];
        let (w, h) = (37u32, 23u32);
        let axes = Axes::new(region, w, h);
        for i in 0..h {
            for j in 0..w {
                let [xl, xh, yl, yh] = axes.tile_box(i, i + 1, j, j + 1);
                let dx = (q(region[1]) - q(region[0])) / q(w as f64);
                let dy = (q(region[3]) - q(region[2])) / q(h as f64);
                let rx0 = q(region[0]) + q(j as f64) * &dx;
                let rx1 = q(region[0]) + q((j + 1) as f64) * &dx;
                let ry0 = q(region[3]) - q((i + 1) as f64) * &dy;
                let ry1 = q(region[3]) - q(i as f64) * &dy;
                assert!(q(xl) <= rx0 && rx1 <= q(xh), "pixel ({i}, {j}) x");
                assert!(q(yl) <= ry0 && ry1 <= q(yh), "pixel ({i}, {j}) y");
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
