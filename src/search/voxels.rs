//! The *first filled voxel* rule: a depth map of f(x, y, z) seen from above, by classifying a
//! W x H x D grid of voxels over a box of space through tiles of pruned tapes.
//!
//! The voxels are cubes of the grid (`W` columns over x, `H` rows over y with row 0 at the
//! top, `D` layers over z with layer 0 at the top, `z1`). Cubic tiles of voxels (the options'
//! tile sizes, by default 64, 16, 4 then 1 voxel a side) are classified level by level as the
//! 2-D tape render classifies tiles of pixels: each tile's box is the rounding outward of its
//! voxels' union ([`crate::search::RenderOptions`]'s pixel boxes, with a third axis made the
//! same way), its tape is its parent's pruned by the parent's `min`/`max` outcomes, a tile
//! proven outside (`f > 0` on it) is dropped, a tile proven inside (`f < 0`) is *filled*, and
//! a tile neither proven is split into its children, down to single voxels, where it counts as
//! filled. A column's height is the top of its highest filled voxel: `k` when that voxel is
//! the k-th from the bottom, 0 when every voxel of the column was proven outside. So **no
//! point of the surface, and no point where f < 0, lies in the column above its height**.
//!
//! Occlusion: once a level is classified, a boundary tile below a filled tile of the same
//! level and column cannot raise any of its columns' heights and is not split (its children
//! are not evaluated); tiles of earlier levels need no test, since a tile whose ancestor was
//! below a filled tile was dropped with it. The CPU (`tape/cpu.rs`) and the GPU (`tape/gpu.rs`,
//! the whole search on the device) run the same rule with the same interval operations and
//! give the same heights and the same tile counts.
//!
//! How this differs from the ray search's depth map (`ray`, `ivjit render` with z before):
//! a ray is the vertical line through a pixel's center and its hit is a piece of at most
//! `(z1 - z0) / steps` at the top of which the line may meet the surface; a voxel column is
//! the whole pixel's prism, so its height bounds the surface over the entire pixel, not only
//! over its center line. The voxel height is therefore never below the ray's hit top at the
//! same resolution (up to the rounding of the pieces), and it is higher at silhouettes, where
//! part of a pixel sees the surface and its center does not.

use super::tape::{gpu, Chains, Tape, TapeBackend, TapeRound};
use super::{Plan, Round2, SearchError};
use crate::{Error, Expression, Precision};

/// A W x H x D voxel grid over `[x0, x1] x [y0, y1] x [z0, z1]`, classified through cubic
/// tiles of the given sizes.
#[derive(Clone, Debug, PartialEq)]
pub struct VoxelOptions {
    /// Voxels along x (the depth map's columns).
    pub width: u32,
    /// Voxels along y (the depth map's rows, row 0 at `y1`).
    pub height: u32,
    /// Voxels along z (layer 0 at `z1`, the viewer's side).
    pub depth: u32,
    /// `[x0, x1, y0, y1, z0, z1]`: finite, each lower bound below its upper bound.
    pub region: [f64; 6],
    /// Tile sizes in voxels, coarse to fine; each divides the one before it and the last is 1.
    pub tiles: Vec<u32>,
}

/// The most voxels a side may have (a work item names a tile's row and layer in 16 bits each).
pub const MAX_SIDE: u32 = 16384;

impl VoxelOptions {
    /// The default subdivision: tiles of 64, 16, 4 then 1 voxel a side (MPR's and Fidget's
    /// 64³ → 16³ → 4³ → voxels).
    pub fn new(width: u32, height: u32, depth: u32, region: [f64; 6]) -> VoxelOptions {
        VoxelOptions {
            width,
            height,
            depth,
            region,
            tiles: vec![64, 16, 4, 1],
        }
    }

    pub(crate) fn check(&self) -> Result<(), SearchError> {
        let bad = |s: String| Err(SearchError::Options(s));
        let (w, h, d) = (self.width, self.height, self.depth);
        if [w, h, d].iter().any(|&n| n == 0 || n > MAX_SIDE) {
            return bad(format!(
                "the voxel grid {w}x{h}x{d}: give 1 to {MAX_SIDE} voxels a side, e.g. 512x512x512"
            ));
        }
        let r = self.region;
        if r.iter().any(|v| !v.is_finite()) || !(r[0] < r[1] && r[2] < r[3] && r[4] < r[5]) {
            return bad(format!(
                "the region x0,x1,y0,y1,z0,z1 = {r:?} needs finite bounds with x0 < x1, \
                 y0 < y1 and z0 < z1"
            ));
        }
        let t = &self.tiles;
        // The first level's tiles are all evaluated: the engines list them (the GPU's work
        // lists hold at most 2^30 items).
        if let Some(&t0) = t.first().filter(|&&t0| t0 > 0) {
            let n = [w, h, d]
                .iter()
                .map(|&s| s.div_ceil(t0) as u64)
                .product::<u64>();
            if n >= 1 << 30 {
                return bad(format!(
                    "first tiles of {t0} voxels make {n} tiles of {w}x{h}x{d} voxels, more than \
                     2^30: give a coarser first tile (e.g. --tiles 256,64,16,4,1)"
                ));
            }
        }
        if t.last() != Some(&1)
            || t.contains(&0)
            || t.windows(2).any(|w| w[1] >= w[0] || w[0] % w[1] != 0)
            || t.len() > super::render::MAX_LEVELS
        {
            return bad(format!(
                "tile sizes {t:?}: give at most {} decreasing sizes, each dividing the one \
                 before, ending with 1 (e.g. 64,16,4,1)",
                super::render::MAX_LEVELS
            ));
        }
        Ok(())
    }
}

/// A depth map by voxels: per column, the height of its highest filled voxel.
#[derive(Clone, Debug, PartialEq)]
pub struct DepthMap {
    /// Columns (voxels along x).
    pub width: u32,
    /// Rows (voxels along y).
    pub height: u32,
    /// Layers (voxels along z).
    pub depth: u32,
    /// Row-major, row 0 at `y1`: `k` in `1..=depth` when the column's highest filled voxel is
    /// the k-th from the bottom (its top at `z0 + k (z1 - z0) / depth`), 0 when every voxel of
    /// the column was proven outside.
    pub heights: Vec<u32>,
    /// One entry per level, coarse to fine: the tiles evaluated and their classes.
    pub rounds: Vec<Round2>,
}

impl DepthMap {
    /// Each column's height as a coordinate: the top of its highest filled voxel,
    /// `z0 + k (z1 - z0) / depth` (rounded to nearest), NaN for a column proven outside; row
    /// 0 at `y1`. `zrange` is the region's `(z0, z1)`.
    pub fn tops(&self, (z0, z1): (f64, f64)) -> Vec<f64> {
        let dz = (z1 - z0) / self.depth as f64;
        self.heights
            .iter()
            .map(|&k| if k == 0 { f64::NAN } else { z0 + k as f64 * dz })
            .collect()
    }
}

/// Every voxel's class: outside (f > 0 proven on it), inside (f < 0 proven) or neither, as the
/// voxel search's tiles proved them without occlusion ([`VoxelRenderer::classify`]). Kept as
/// the levels' tile classes (a voxel's class is that of the first tile holding it that was
/// proven, or boundary), so proven regions take one byte per tile, not per voxel.
#[derive(Clone, Debug, PartialEq)]
pub struct VoxelClasses {
    /// Columns (voxels along x).
    pub width: u32,
    /// Rows (voxels along y, row 0 at `y1`).
    pub height: u32,
    /// Layers (voxels along z, layer 0 at `z1`).
    pub depth: u32,
    /// Per level, coarse to fine: its tile size, and its tiles' classes by `(layer, row,
    /// column)` (`(z rows + r) cols + c`), [`UNSET`](super::render::UNSET) where a tile was
    /// not evaluated (an ancestor was proven).
    levels: Vec<(u32, Vec<u8>)>,
    /// One entry per level, coarse to fine: the tiles evaluated and their classes.
    pub rounds: Vec<Round2>,
}

impl VoxelClasses {
    /// The class of the voxel at row `i`, column `j` and layer `k`:
    /// [`OUTSIDE`](super::OUTSIDE), [`INSIDE`](super::INSIDE) or
    /// [`BOUNDARY`](super::BOUNDARY) (neither proven on any tile holding it, down to the
    /// voxel itself).
    pub fn class(&self, i: u32, j: u32, k: u32) -> u8 {
        for (tile, classes) in &self.levels {
            let (rows, cols) = (self.height.div_ceil(*tile), self.width.div_ceil(*tile));
            let at = ((k / tile) * rows + i / tile) as usize * cols as usize + (j / tile) as usize;
            let c = classes[at];
            debug_assert!(c != super::render::UNSET, "a voxel below no proven tile");
            if c != super::BOUNDARY {
                return c;
            }
        }
        super::BOUNDARY
    }

    /// The voxels neither proven, as `[row, column, layer]`, in the order layer, row, column.
    pub fn boundary(&self) -> Vec<[u32; 3]> {
        let Some((tile, last)) = self.levels.last() else {
            return Vec::new();
        };
        debug_assert_eq!(*tile, 1);
        let (w, h) = (self.width as usize, self.height as usize);
        last.iter()
            .enumerate()
            .filter(|(_, &c)| c == super::BOUNDARY)
            .map(|(p, _)| [((p / w) % h) as u32, (p % w) as u32, (p / (w * h)) as u32])
            .collect()
    }
}

/// What a voxel classification gives an engine's caller: each level's tiles' classes (by
/// `(layer, row, column)`, `UNSET` where not evaluated), the rounds, and their mean tape
/// lengths.
pub(crate) type LevelClasses = (Vec<Vec<u8>>, Vec<Round2>, Vec<TapeRound>);

/// What a voxel search gives an engine's caller: each column's height (row-major), the
/// rounds, and their mean tape lengths.
pub(crate) type Columns = (Vec<u32>, Vec<Round2>, Vec<TapeRound>);

/// Each column's certified normal, row-major (see [`VoxelRenderer::render_with_normals`]).
pub type Normals = Vec<Option<[f64; 3]>>;

/// The borrower of a lent voxel frame ([`VoxelRenderer::render_lent`]): each column's height,
/// and with normals each column's unit normal as three numbers (NaN where none).
pub type Lend<'a> = dyn FnMut(&[u32], Option<&[f64]>) + 'a;

/// What the CPU's voxel frame gives: the columns, and with normals each column's certified
/// unit normal, three numbers per column (NaN where none).
pub(crate) type VoxelFrame = (Columns, Option<Vec<f64>>);

/// A depth map, each column's certified normal (row-major; see
/// [`VoxelRenderer::render_with_normals`]), and per level the tiles and their mean tape
/// length.
pub type MapWithNormals = (DepthMap, Normals, Vec<TapeRound>);

/// An expression's tape over x, y and z, ready to classify voxel grids on a backend (on the
/// GPU uploaded once, with the interpreter loaded).
pub struct VoxelRenderer {
    tape: Tape,
    vars: Vec<String>,
    precision: Precision,
    device: Option<gpu::DeviceTape>,
}

impl VoxelRenderer {
    /// Builds the tape of `expr` (an error names an operation the interpreter does not run or
    /// a variable other than x, y and z) and, for the GPU, prepares it there.
    pub fn new(
        expr: &Expression,
        precision: Precision,
        backend: TapeBackend,
    ) -> Result<VoxelRenderer, Error> {
        let graph = expr.ir();
        if graph.outputs.len() != 1 {
            return Err(SearchError::Outputs(graph.outputs.len()).into());
        }
        let tape =
            Tape::binding(graph, &["x", "y", "z"], Chains::Balanced).map_err(SearchError::Tape)?;
        // Classes only (a voxel's height is its column's highest voxel not proven outside):
        // sign demand, the same classes with shorter tapes. A normal from a pruned tape is
        // still the surface's: where a dropped side's sign is proven on the tile, f is the
        // kept side near every point of f = 0 there.
        let tape = tape.signs_only();
        let device = match backend {
            TapeBackend::Cpu => None,
            TapeBackend::Gpu => Some(gpu::DeviceTape::new(&tape, precision)?),
        };
        Ok(VoxelRenderer {
            tape,
            vars: graph.vars.clone(),
            precision,
            device,
        })
    }

    /// The tape.
    pub fn tape(&self) -> &Tape {
        &self.tape
    }

    /// Whether the tapes' derivative rules cover every operation of the expression, so that
    /// [`VoxelRenderer::render_with_normals`] can certify its normals: the generated ones,
    /// division, exp and log, but no other function run by its lowering (sin, powers, ...:
    /// their partials are entire there). Else [`VoxelRenderer::normals`] takes f's gradient
    /// program.
    pub fn differentiates(&self) -> bool {
        self.tape
            .ext
            .rules()
            .iter()
            .all(|&r| r != super::tape::gradient::Rule::None)
    }

    /// One depth map of `opts` and, per level, the tiles and their mean tape length.
    pub fn render(&self, opts: &VoxelOptions) -> Result<(DepthMap, Vec<TapeRound>), Error> {
        let (map, _, stats) = self.run(opts, false)?;
        Ok((map, stats))
    }

    /// [`VoxelRenderer::render`] with each column's certified normal from the pruned tapes:
    /// the gradient (forward differentiation, `tape::gradient`) of the tape that the filled
    /// tile holding the column's top voxel ran, enclosed on that voxel. `Some(unit normal)`
    /// (pointing to where f grows) where one partial keeps its sign on the voxel: every normal
    /// of the surface in the voxel then lies in the enclosure's cone; None where the column is
    /// empty or no normal is proven (every partial's enclosure holds 0, or a function run by
    /// its lowering, which has no derivative rule, feeds it). On the renderer's backend, in
    /// the same frame; the CPU and the GPU give the same bits.
    pub fn render_with_normals(&self, opts: &VoxelOptions) -> Result<MapWithNormals, Error> {
        let (map, normals, stats) = self.run(opts, true)?;
        Ok((map, normals.expect("asked for"), stats))
    }

    /// One frame lent to `f` where it arrived (on the GPU, page-locked memory the renderer
    /// keeps for its next frame: no copy on the host): each column's height (as
    /// [`DepthMap::heights`]) and with `normals` each column's certified unit normal as three
    /// numbers (as [`VoxelRenderer::render_with_normals`]'s, NaN where none). Returns the
    /// rounds and their mean tape lengths. For frames timed to the millisecond: at 1024² the
    /// normals are 24 MB, whose copy into fresh memory took longer than the search.
    pub fn render_lent(
        &self,
        opts: &VoxelOptions,
        normals: bool,
        f: &mut Lend<'_>,
    ) -> Result<(Vec<Round2>, Vec<TapeRound>), Error> {
        let plan = self.plan(opts)?;
        let ((heights, rounds, stats), normals) = match (&self.device, self.precision) {
            (Some(d), _) => return Ok(d.voxels(&plan, normals, f)?),
            (None, Precision::F64) => {
                super::on_pool(|| super::tape::cpu::voxels::<f64>(&self.tape, &plan, normals))?
            }
            (None, Precision::F32) => {
                super::on_pool(|| super::tape::cpu::voxels::<f32>(&self.tape, &plan, normals))?
            }
        };
        f(&heights, normals.as_deref());
        Ok((rounds, stats))
    }

    /// Every voxel's class ([`VoxelClasses`]): the same tiles, tapes and interval operations
    /// as [`VoxelRenderer::render`], without occlusion (every boundary tile is split down to
    /// its voxels), on the renderer's backend; the CPU and the GPU give the same classes.
    pub fn classify(&self, opts: &VoxelOptions) -> Result<(VoxelClasses, Vec<TapeRound>), Error> {
        let plan = self.plan(opts)?;
        let (levels, rounds, stats) = match (&self.device, self.precision) {
            (Some(d), _) => d.voxel_classes(&plan)?,
            (None, Precision::F64) => {
                super::on_pool(|| super::tape::cpu::voxel_classes::<f64>(&self.tape, &plan))?
            }
            (None, Precision::F32) => {
                super::on_pool(|| super::tape::cpu::voxel_classes::<f32>(&self.tape, &plan))?
            }
        };
        let levels = opts.tiles.iter().copied().zip(levels).collect();
        let classes = VoxelClasses {
            width: opts.width,
            height: opts.height,
            depth: opts.depth,
            levels,
            rounds,
        };
        Ok((classes, stats))
    }

    /// The checked options' plan.
    fn plan(&self, opts: &VoxelOptions) -> Result<Plan, Error> {
        opts.check()?;
        let o = opts;
        let n = self.vars.len();
        Ok(Plan::layered(
            o.width, o.height, o.depth, o.region, &o.tiles, n,
        ))
    }

    fn run(
        &self,
        opts: &VoxelOptions,
        normals: bool,
    ) -> Result<(DepthMap, Option<Normals>, Vec<TapeRound>), Error> {
        let (mut heights, mut found) = (Vec::new(), None);
        let (rounds, stats) = self.render_lent(opts, normals, &mut |h, n| {
            heights = h.to_vec();
            found = n.map(|n| {
                n.chunks_exact(3)
                    .map(|v| (!v[0].is_nan()).then(|| [v[0], v[1], v[2]]))
                    .collect()
            });
        })?;
        let map = DepthMap {
            width: opts.width,
            height: opts.height,
            depth: opts.depth,
            heights,
            rounds,
        };
        Ok((map, found, stats))
    }
}

impl VoxelRenderer {
    /// Certified normals of a depth map's surface (the renderer's expression f): for each
    /// filled column, f's gradient enclosed on its highest filled voxel (which holds a point
    /// of the surface or lies below one on its top face) through `gradient`, an evaluator of
    /// f's [`Expression::gradient`] on any backend. `Some(unit normal)`, pointing to where f
    /// grows, where the enclosure proves it: f continuous on the voxel and a partial of one
    /// sign there, so every normal of the surface in the voxel lies in the enclosure's cone;
    /// None where the column is empty or the enclosure holds 0 (uncertain, not invented).
    /// Row-major like [`DepthMap::heights`].
    pub fn normals(
        &self,
        gradient: &crate::Evaluator,
        map: &DepthMap,
        opts: &VoxelOptions,
    ) -> Result<Vec<Option<[f64; 3]>>, Error> {
        let plan = self.plan(opts)?;
        let (w, h, d) = (opts.width, opts.height, opts.depth);
        if (map.width, map.height, map.depth) != (w, h, d) || map.heights.len() != (w * h) as usize
        {
            return Err(SearchError::Options(format!(
                "the depth map is {}x{}x{}, the options {w}x{h}x{d}: give the options it was \
                 rendered with",
                map.width, map.height, map.depth
            ))
            .into());
        }
        let g = super::mesh::normals::Gradient::new(gradient, &self.vars)?;
        // The filled columns' top voxels (layer depth - k from the top).
        let filled: Vec<usize> = (0..map.heights.len())
            .filter(|&p| map.heights[p] > 0)
            .collect();
        let boxes: Vec<[[f64; 2]; 3]> = filled
            .iter()
            .map(|&p| {
                let (i, j) = ((p / w as usize) as u32, (p % w as usize) as u32);
                plan.voxel_box(i, j, d - map.heights[p])
            })
            .collect();
        let certified = g.certified(&boxes)?;
        let mut out = vec![None; map.heights.len()];
        for (&p, n) in filled.iter().zip(certified) {
            out[p] = n;
        }
        Ok(out)
    }
}

/// [`VoxelRenderer::render`] once.
pub fn depth_map(
    expr: &Expression,
    precision: Precision,
    backend: TapeBackend,
    opts: &VoxelOptions,
) -> Result<(DepthMap, Vec<TapeRound>), Error> {
    VoxelRenderer::new(expr, precision, backend)?.render(opts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::{BOUNDARY, INSIDE, OUTSIDE};

    /// The union of two balls, `|p|² < 0.6` and `|p - (0.5, -0.25, 0.5)|² < 0.1`, with the
    /// exact heights of its voxel grids: on regions whose voxel edges are multiples of 1/16
    /// every box, square and sum below is exact in f32 and f64, so a voxel is proven outside
    /// exactly when its box misses both closed balls (the constants 0.6 and 0.1 are not
    /// multiples of 1/256, so no box touches a sphere), and the heights follow in integers.
    pub(crate) const BALLS: &str =
        "min(x*x + y*y + z*z - 0.6, sqr(x - 0.5) + sqr(y + 0.25) + sqr(z - 0.5) - 0.1)";

    /// Regions whose voxels are 1/16 a side: `(width, height, depth)` and the region.
    pub(crate) fn sixteenths() -> Vec<VoxelOptions> {
        vec![
            VoxelOptions::new(32, 32, 32, [-1.0, 1.0, -1.0, 1.0, -1.0, 1.0]),
            VoxelOptions::new(40, 24, 36, [-1.25, 1.25, -0.75, 0.75, -1.125, 1.125]),
        ]
    }

    /// The exact heights of [`BALLS`] on `opts`'s grid (voxels 1/16 a side).
    pub(crate) fn balls_heights(opts: &VoxelOptions) -> Vec<u32> {
        // Coordinates in sixteenths: voxel edges are integers.
        let at = |lo: f64, k: u32| (lo * 16.0) as i64 + k as i64;
        // The least of (t - c)² over [p, q] (sixteenths), in 1/256 units.
        let least = |p: i64, q: i64, c: i64| -> i64 {
            if p <= c && c <= q {
                0
            } else {
                (p - c).pow(2).min((q - c).pow(2))
            }
        };
        let [x0, _, _, y1, _, z1] = opts.region;
        let mut out = Vec::new();
        for i in 0..opts.height {
            for j in 0..opts.width {
                let (xp, yq) = (at(x0, j), at(y1, 0) - i as i64);
                let mut h = 0;
                for k in 0..opts.depth {
                    let zq = at(z1, 0) - k as i64;
                    let big = least(xp, xp + 1, 0) + least(yq - 1, yq, 0) + least(zq - 1, zq, 0);
                    let small = least(xp, xp + 1, 8) + least(yq - 1, yq, -4) + least(zq - 1, zq, 8);
                    // 0.6 * 256 = 153.6 and 0.1 * 256 = 25.6.
                    if big <= 153 || small <= 25 {
                        h = opts.depth - k;
                        break;
                    }
                }
                out.push(h);
            }
        }
        out
    }

    /// The exact class of every voxel of [`BALLS`] on `opts`'s grid (voxels 1/16 a side), by
    /// `[row, column, layer]`: outside when the voxel misses both closed balls, inside when it
    /// lies in one open ball (its farthest corner inside), else boundary. The interval
    /// operations are exact on these boxes, so the search proves exactly these.
    pub(crate) fn balls_classes(opts: &VoxelOptions) -> Vec<u8> {
        let at = |lo: f64, k: u32| (lo * 16.0) as i64 + k as i64;
        let least = |p: i64, q: i64, c: i64| -> i64 {
            if p <= c && c <= q {
                0
            } else {
                (p - c).pow(2).min((q - c).pow(2))
            }
        };
        let most = |p: i64, q: i64, c: i64| -> i64 { (p - c).pow(2).max((q - c).pow(2)) };
        let [x0, _, _, y1, _, z1] = opts.region;
        let mut out = Vec::new();
        for k in 0..opts.depth {
            for i in 0..opts.height {
                for j in 0..opts.width {
                    let (xp, yq, zq) = (at(x0, j), at(y1, 0) - i as i64, at(z1, 0) - k as i64);
                    let ((x0, x1), (y0, y1), (z0, z1)) = ((xp, xp + 1), (yq - 1, yq), (zq - 1, zq));
                    let span = |f: &dyn Fn(i64, i64, i64) -> i64, c: [i64; 3]| {
                        f(x0, x1, c[0]) + f(y0, y1, c[1]) + f(z0, z1, c[2])
                    };
                    let (big, small) = ([0, 0, 0], [8, -4, 8]);
                    // 0.6 * 256 = 153.6 and 0.1 * 256 = 25.6.
                    out.push(if span(&most, big) <= 153 || span(&most, small) <= 25 {
                        INSIDE
                    } else if span(&least, big) <= 153 || span(&least, small) <= 25 {
                        BOUNDARY
                    } else {
                        OUTSIDE
                    });
                }
            }
        }
        out
    }

    /// Every voxel's class of `classes`, layer by layer, row by row.
    pub(crate) fn every_class(classes: &VoxelClasses) -> Vec<u8> {
        let mut out = Vec::new();
        for k in 0..classes.depth {
            for i in 0..classes.height {
                out.extend((0..classes.width).map(|j| classes.class(i, j, k)));
            }
        }
        out
    }

    #[test]
    fn the_classes_of_two_balls_are_exact_on_the_cpu() {
        let expr = Expression::parse(BALLS).unwrap();
        for p in [Precision::F64, Precision::F32] {
            let r = VoxelRenderer::new(&expr, p, TapeBackend::Cpu).unwrap();
            for base in sixteenths() {
                let want = balls_classes(&base);
                for class in [OUTSIDE, INSIDE, BOUNDARY] {
                    assert!(want.contains(&class));
                }
                for tiles in plans() {
                    let opts = VoxelOptions {
                        tiles: tiles.clone(),
                        ..base.clone()
                    };
                    let (classes, _) = r.classify(&opts).unwrap();
                    assert_eq!(every_class(&classes), want, "{p} {tiles:?}");
                    // The boundary list: the boundary voxels, in the same order.
                    let (w, h) = (opts.width as usize, opts.height as usize);
                    let listed: Vec<usize> = classes
                        .boundary()
                        .iter()
                        .map(|&[i, j, k]| (k as usize * h + i as usize) * w + j as usize)
                        .collect();
                    let boundary: Vec<usize> =
                        (0..want.len()).filter(|&v| want[v] == BOUNDARY).collect();
                    assert_eq!(listed, boundary);
                    // No occlusion: the last level evaluates the children of every boundary
                    // tile before it, more than the depth map's search (where a level
                    // before it fills a tile: not the plan of 16 then voxels, whose tiles
                    // are wider than the balls' cores).
                    let (map, _) = r.render(&opts).unwrap();
                    let last = |r: &[Round2]| r.last().unwrap().boxes;
                    let (all, seen) = (last(&classes.rounds), last(&map.rounds));
                    assert!(all > seen || (tiles[0] == 16 && all == seen), "{tiles:?}");
                }
            }
        }
    }

    /// Tile plans for the tests: the default, a plan of 8, 2, 1 and one of 16 then voxels.
    pub(crate) fn plans() -> [Vec<u32>; 3] {
        [vec![64, 16, 4, 1], vec![8, 2, 1], vec![16, 1]]
    }

    #[test]
    fn the_heights_of_two_balls_are_exact_on_the_cpu() {
        let expr = Expression::parse(BALLS).unwrap();
        for p in [Precision::F64, Precision::F32] {
            let r = VoxelRenderer::new(&expr, p, TapeBackend::Cpu).unwrap();
            for base in sixteenths() {
                let want = balls_heights(&base);
                assert!(want.contains(&0) && want.iter().any(|&h| h > 0));
                for tiles in plans() {
                    let opts = VoxelOptions {
                        tiles: tiles.clone(),
                        ..base.clone()
                    };
                    let (map, stats) = r.render(&opts).unwrap();
                    assert_eq!(map.heights, want, "{p} {tiles:?} {:?}", opts.region);
                    assert_eq!(map.rounds.len(), tiles.len());
                    // The union's tape is pruned (where the first tiles are smaller than a
                    // ball): the voxels run fewer instructions than the first level.
                    if tiles[0] == 8 {
                        let last = stats.last().unwrap().mean_len;
                        assert!(last < stats[0].mean_len, "{stats:?}");
                    }
                }
            }
        }
    }

    /// Occlusion: where the first level proves the top half inside, the boundary tiles below
    /// it are not split; where the top half is proven outside, the boundary tiles below are.
    #[test]
    fn tiles_below_a_filled_tile_are_not_split() {
        let opts = VoxelOptions {
            tiles: vec![4, 1],
            ..VoxelOptions::new(8, 8, 8, [-1.0, 1.0, -1.0, 1.0, -1.0, 1.0])
        };
        let run = |src: &str| {
            let expr = Expression::parse(src).unwrap();
            depth_map(&expr, Precision::F64, TapeBackend::Cpu, &opts)
                .unwrap()
                .0
        };
        // Below z = -0.01: the top tiles (z in [0, 1]) inside, the bottom ones boundary.
        let map = run("-(z + 0.01)");
        assert!(map.heights.iter().all(|&h| h == 8), "{:?}", map.heights);
        assert_eq!((map.rounds[0].inside, map.rounds[0].boundary), (4, 4));
        assert_eq!(map.rounds[1].boxes, 0, "{:?}", map.rounds);
        // Above z = -0.01: the top tiles outside, the bottom ones split into their voxels;
        // the voxels in [-0.25, 0] are the highest not proven outside.
        let map = run("z + 0.01");
        assert!(map.heights.iter().all(|&h| h == 4), "{:?}", map.heights);
        assert_eq!((map.rounds[0].outside, map.rounds[0].boundary), (4, 4));
        assert_eq!(map.rounds[1].boxes, 4 * 64, "{:?}", map.rounds);
    }

    /// Soundness on regions of every class (ordinary, huge, the largest floats, subnormal,
    /// an off-center one), in f64 and f32: no column's height is below a voxel that holds a
    /// point where `z - x/2 + y <= 0`. The oracle is exact: the voxels' real bounds and the
    /// plane's least value on each (at the corner of largest x, least y and z) in rationals.
    #[test]
    fn no_column_is_below_the_solid_on_regions_of_every_class() {
        use num_rational::BigRational;
        let q = |x: f64| BigRational::from_float(x).unwrap();
        let big = f64::MAX;
        let regions = [
            [-1.0, 1.0, -1.0, 1.0, -1.0, 1.0],
            [-1e300, 1e300, -1e300, 1e300, -1e300, 1e300],
            [-big, big, -big, big, -big, big],
            [-1e-310, 1e-310, -1e-310, 1e-310, -1e-310, 1e-310],
            [0.3, 7.9, -2.2, 1e10, -3.0, -1e-5],
        ];
        let expr = Expression::parse("z - 0.5*x + y").unwrap();
        let (w, h, d) = (9u32, 7u32, 11u32);
        for p in [Precision::F64, Precision::F32] {
            let r = VoxelRenderer::new(&expr, p, TapeBackend::Cpu).unwrap();
            for region in regions {
                let opts = VoxelOptions {
                    tiles: vec![4, 2, 1],
                    ..VoxelOptions::new(w, h, d, region)
                };
                let (map, _) = r.render(&opts).unwrap();
                let [x0, x1, y0, y1, z0, z1] = region.map(q);
                let half = BigRational::new(1.into(), 2.into());
                for i in 0..h {
                    for j in 0..w {
                        let at = |a: &BigRational, b: &BigRational, k: u32, n: u32| {
                            a + (b - a) * BigRational::new(k.into(), n.into())
                        };
                        let x_hi = at(&x0, &x1, j + 1, w);
                        let y_lo = at(&y1, &y0, i + 1, h);
                        // The highest voxel (k-th from the bottom) holding a point of the
                        // solid: its least value z_lo - x_hi / 2 + y_lo <= 0.
                        let top = (1..=d)
                            .rev()
                            .find(|&k| at(&z0, &z1, k - 1, d) - &half * &x_hi + &y_lo <= q(0.0))
                            .unwrap_or(0);
                        let got = map.heights[(i * w + j) as usize];
                        assert!(
                            got >= top,
                            "{p} {region:?} column ({i}, {j}): {got} < {top}"
                        );
                    }
                }
            }
        }
    }

    /// Normals of a ball's depth map: every filled column's normal is certified (the top
    /// voxels keep z > 0 or x or y away from 0) and lies within the cone of its voxel's
    /// gradients, which for |p|² is the cone of the voxel's corners: checked on the true
    /// normal p / |p| at the surface point on the column's center line where that point lies
    /// in the top voxel. A ball smaller than a voxel around the origin, where the gradient's
    /// enclosure holds 0, gets no normal.
    #[test]
    fn normals_of_a_ball_lie_in_their_voxels_cones() {
        let text = "x*x + y*y + z*z - 0.6";
        let expr = Expression::parse(text).unwrap();
        let (g, _) = expr.gradient().unwrap();
        let opts = VoxelOptions::new(32, 32, 32, [-1.0, 1.0, -1.0, 1.0, -1.0, 1.0]);
        let gradient =
            crate::Evaluator::new(&g, Precision::F64, crate::BackendChoice::Cpu).unwrap();
        let r = VoxelRenderer::new(&expr, Precision::F64, TapeBackend::Cpu).unwrap();
        let (map, _) = r.render(&opts).unwrap();
        // From f's gradient program and from the pruned tapes in the frame: both certified,
        // both in the cones (the same heights).
        let by_program = r.normals(&gradient, &map, &opts).unwrap();
        let (again, by_tapes, _) = r.render_with_normals(&opts).unwrap();
        assert_eq!(again.heights, map.heights);
        for normals in [by_program, by_tapes] {
            check_ball_normals(&map, &normals);
        }
        // A ball inside the voxel at the origin's corner: the gradient's enclosure holds 0.
        let tiny = Expression::parse("x*x + y*y + z*z - 1e-6").unwrap();
        let (g, _) = tiny.gradient().unwrap();
        let gradient =
            crate::Evaluator::new(&g, Precision::F64, crate::BackendChoice::Cpu).unwrap();
        let r = VoxelRenderer::new(&tiny, Precision::F64, TapeBackend::Cpu).unwrap();
        let (map, _) = r.render(&opts).unwrap();
        let by_program = r.normals(&gradient, &map, &opts).unwrap();
        let (_, by_tapes, _) = r.render_with_normals(&opts).unwrap();
        let filled: Vec<usize> = (0..map.heights.len())
            .filter(|&p| map.heights[p] > 0)
            .collect();
        assert_eq!(filled.len(), 4, "the four columns around the origin");
        for normals in [by_program, by_tapes] {
            assert!(filled.iter().all(|&p| normals[p].is_none()), "{normals:?}");
        }
        // A function run by its lowering has no derivative rule: no normal from the tapes.
        let waves = Expression::parse("z - 0.1*sin(4*x)").unwrap();
        let r = VoxelRenderer::new(&waves, Precision::F64, TapeBackend::Cpu).unwrap();
        assert!(!r.differentiates());
        let (map, normals, _) = r.render_with_normals(&opts).unwrap();
        assert!(map.heights.iter().all(|&h| h > 0) && normals.iter().all(Option::is_none));
    }

    /// [`normals_of_a_ball_lie_in_their_voxels_cones`]'s check of one set of normals of the
    /// ball `|p|² <= 0.6` on 32³ voxels over [-1, 1]³.
    fn check_ball_normals(map: &DepthMap, normals: &[Option<[f64; 3]>]) {
        let checked = check_union_normals(&[([0.0; 3], 0.6)], map, normals, true);
        assert!(checked > 150, "{checked} columns checked");
    }

    /// The normals of a union of balls (center, squared radius) on 32³ voxels over [-1, 1]³:
    /// at each filled column whose top surface point on the center line (the highest of the
    /// balls') lies in its top voxel, a certified normal is within that ball's cone of the
    /// voxel (the directions from its center to the voxel's corners); with `all`, every filled
    /// column is certified. How many columns were checked.
    fn check_union_normals(
        balls: &[([f64; 3], f64)],
        map: &DepthMap,
        normals: &[Option<[f64; 3]>],
        all: bool,
    ) -> usize {
        let unit = |v: [f64; 3]| {
            let l = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
            v.map(|t| t / l)
        };
        let dot = |a: [f64; 3], b: [f64; 3]| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
        let mut checked = 0;
        for i in 0..32usize {
            for j in 0..32usize {
                let (k, n) = (map.heights[i * 32 + j], normals[i * 32 + j]);
                if k == 0 {
                    assert!(n.is_none());
                    continue;
                }
                if all {
                    assert!(n.is_some(), "({i}, {j}): no normal");
                }
                let Some(n) = n else { continue };
                let (x, y) = (
                    -1.0 + (j as f64 + 0.5) / 16.0,
                    1.0 - (i as f64 + 0.5) / 16.0,
                );
                let (ztop, zbot) = (-1.0 + k as f64 / 16.0, -1.0 + (k - 1) as f64 / 16.0);
                // The top surface point on the center line, and its ball.
                let top = balls
                    .iter()
                    .filter_map(|&(c, r2)| {
                        let h2 = r2 - (x - c[0]) * (x - c[0]) - (y - c[1]) * (y - c[1]);
                        (h2 >= 0.0).then(|| (c[2] + h2.sqrt(), c))
                    })
                    .max_by(|a, b| a.0.total_cmp(&b.0));
                let Some((z, c)) = top else { continue };
                if !(zbot..=ztop).contains(&z) {
                    continue;
                }
                let truth = unit([x - c[0], y - c[1], z - c[2]]);
                // The widest angle of the cone: its corners' directions.
                let xs = [-1.0 + j as f64 / 16.0, -1.0 + (j + 1) as f64 / 16.0];
                let ys = [1.0 - (i + 1) as f64 / 16.0, 1.0 - i as f64 / 16.0];
                let mut widest = 1.0f64;
                for cx in xs {
                    for cy in ys {
                        for cz in [zbot, ztop] {
                            widest = widest.min(dot(n, unit([cx - c[0], cy - c[1], cz - c[2]])));
                        }
                    }
                }
                assert!(
                    dot(n, truth) >= widest - 1e-12,
                    "({i}, {j}): {n:?} vs {truth:?}"
                );
                checked += 1;
            }
        }
        checked
    }

    /// Normals of a union of two balls, whose `min` sign demand decides by sign on voxels
    /// where one ball's function is > 0 (neither below the other): each certified normal is its
    /// top ball's, within the cone, from the pruned tapes and from f's gradient program; and
    /// the tapes certify at least as many columns as the program (they drop the far ball).
    #[test]
    fn normals_of_a_union_of_balls_lie_in_their_voxels_cones() {
        let balls = [([-0.3, 0.1, 0.0], 0.3), ([0.35, -0.2, 0.1], 0.25)];
        let text = "min(sqr(x + 0.3) + sqr(y - 0.1) + z*z - 0.3, \
                    sqr(x - 0.35) + sqr(y + 0.2) + sqr(z - 0.1) - 0.25)";
        let expr = Expression::parse(text).unwrap();
        let (g, _) = expr.gradient().unwrap();
        let opts = VoxelOptions::new(32, 32, 32, [-1.0, 1.0, -1.0, 1.0, -1.0, 1.0]);
        for p in [Precision::F64, Precision::F32] {
            let gradient = crate::Evaluator::new(&g, p, crate::BackendChoice::Cpu).unwrap();
            let r = VoxelRenderer::new(&expr, p, TapeBackend::Cpu).unwrap();
            let (map, by_tapes, _) = r.render_with_normals(&opts).unwrap();
            let by_program = r.normals(&gradient, &map, &opts).unwrap();
            let a = check_union_normals(&balls, &map, &by_tapes, false);
            let b = check_union_normals(&balls, &map, &by_program, false);
            let count = |v: &[Option<[f64; 3]>]| v.iter().flatten().count();
            assert!(a > 150 && b > 150, "{p}: {a} {b} columns checked");
            assert!(count(&by_tapes) >= count(&by_program), "{p}");
        }
    }

    #[test]
    fn options_and_variables_are_checked() {
        let ok = VoxelOptions::new(8, 8, 8, [-1.0, 1.0, -1.0, 1.0, -1.0, 1.0]);
        let err = |src: &str, o: &VoxelOptions| {
            depth_map(
                &Expression::parse(src).unwrap(),
                Precision::F64,
                TapeBackend::Cpu,
                o,
            )
            .unwrap_err()
            .to_string()
        };
        assert!(err("x + w", &ok).contains("'w'"), "{}", err("x + w", &ok));
        assert!(err("x, y", &ok).contains("2 outputs"));
        let huge = VoxelOptions {
            tiles: vec![2, 1],
            ..VoxelOptions::new(4096, 4096, 512, ok.region)
        };
        assert!(
            err("x", &huge).contains("coarser first tile"),
            "{}",
            err("x", &huge)
        );
        for bad in [
            VoxelOptions {
                depth: 0,
                ..ok.clone()
            },
            VoxelOptions {
                width: MAX_SIDE + 1,
                ..ok.clone()
            },
        ] {
            assert!(err("x", &bad).contains("voxels a side"));
        }
        let bad = VoxelOptions {
            region: [-1.0, 1.0, -1.0, 1.0, 1.0, 1.0],
            ..ok.clone()
        };
        assert!(err("x", &bad).contains("z0 < z1"));
        let bad = VoxelOptions {
            tiles: vec![8, 3, 1],
            ..ok
        };
        assert!(err("x", &bad).contains("tile sizes"));
    }
}
