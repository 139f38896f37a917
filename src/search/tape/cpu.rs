//! The tape rule's CPU half: this module's interpreter (the generated interval operations of
//! `crate::lower::generated`), one box per call or a group's tiles per call (lanes: each
//! instruction decoded once for up to [`LANES`] tiles), and the render's rounds over it, groups in
//! parallel (rayon), each boundary tile's children grouped under the tape it pruned.

use rayon::prelude::*;

use super::{choice, code, decode, Bound, Iv, Tape, TapeBox, TapeRound, BOTH, OUT};
use crate::search::{classify, Plan, Rendered, Round2, BOUNDARY, INSIDE};
use crate::Error;

/// Tiles per pass over a tape: a group's children in one (16 x 16 with 128, 16, 1; 64 lanes,
/// four passes there, measured 12 % slower on Prospero 1024², fortieth session).
const LANES: usize = 256;

impl Tape {
    /// The tape evaluated on a box in `T`'s precision; with `record`, each `min`/`max`'s
    /// outcome appended in order ([`super::FIRST`], [`super::SECOND`] or [`BOTH`]). (The
    /// result is the last instruction's value; the tape needs its SSA operands.)
    pub(crate) fn eval<T: Bound>(&self, vars: &TapeBox<T>, record: Option<&mut Vec<u8>>) -> Iv<T> {
        *self
            .values(vars, record)
            .last()
            .expect("a tape has an output")
    }

    /// Every instruction's value on one box, in instruction order (the SSA values, not slots:
    /// one box at a time, the reference [`Tape::eval_lanes`] is tested against); with
    /// `record`, each `min`/`max`'s outcome appended in order.
    pub(crate) fn values<T: Bound>(
        &self,
        vars: &TapeBox<T>,
        mut record: Option<&mut Vec<u8>>,
    ) -> Vec<Iv<T>> {
        let mut values: Vec<Iv<T>> = Vec::with_capacity(self.len());
        for (i, &inst) in self.insts.iter().enumerate() {
            let op = inst as u16;
            let (a, b) = (self.args[i] as u16 as usize, (self.args[i] >> 16) as usize);
            let v = match op & 0xff {
                code::CONST => {
                    let c = self.consts[a];
                    (T::lo_of(c.lo), T::hi_of(c.hi))
                }
                code::VAR => vars[a],
                code::MIN | code::MAX => {
                    if let Some(r) = record.as_deref_mut() {
                        choices(op, &[values[a]], &[values[b]], r);
                    }
                    T::apply(op & 0xff, values[a], values[b])
                }
                c if c >= code::EXT => {
                    let mut one = [values[a], values[b]];
                    self.ext.apply_lanes(op, &mut one, (0, 0, 1), 1);
                    one[0]
                }
                c => T::apply(c, values[a], values[b]),
            };
            values.push(v);
        }
        values
    }

    /// The tape evaluated on `boxes` at once (the tiles of one group, which share the tape):
    /// each instruction is decoded once and run on every box, slot `s` of box `l` at
    /// `slots[s * n + l]`. With `record`, each `min`/`max`'s outcomes are appended box by box
    /// (the k-th decision of box `l` at `record[k * n + l]`). Box for box the bits of
    /// [`Tape::eval`]: the same operations in the same order.
    pub(crate) fn eval_lanes<'s, T: Bound>(
        &self,
        boxes: &[TapeBox<T>],
        slots: &'s mut Vec<Iv<T>>,
        mut record: Option<&mut Vec<u8>>,
    ) -> &'s [Iv<T>] {
        let n = boxes.len();
        // Grown, not cleared: every instruction writes its slot before a later one reads it
        // (the slots are given to SSA values), so what an earlier pass left is never read; a
        // refill of the whole array per pass was 2 % of a render.
        let need = self.slots() * n;
        if slots.len() < need {
            slots.resize(need, (T::nan(), T::nan()));
        }
        for &inst in &self.insts {
            let (op, out, a, b) = decode(inst);
            let at = out as usize * n;
            match op & 0xff {
                // CONST and VAR name a constant and a variable, not slots.
                code::CONST => {
                    let c = self.consts[a as usize];
                    slots[at..at + n].fill((T::lo_of(c.lo), T::hi_of(c.hi)));
                }
                code::VAR => {
                    for (s, b) in slots[at..at + n].iter_mut().zip(boxes) {
                        *s = b[a as usize];
                    }
                }
                code::MIN | code::MAX => {
                    let (a, b) = (a as usize * n, b as usize * n);
                    // The decisions first: the result's slot may be an operand's.
                    if let Some(r) = record.as_deref_mut() {
                        choices(op, &slots[a..a + n], &slots[b..b + n], r);
                    }
                    T::apply_lanes(op & 0xff, slots, (at, a, b), n);
                }
                c if c >= code::EXT => {
                    let at_ab = (at, a as usize * n, b as usize * n);
                    self.ext.apply_lanes(op, slots, at_ab, n);
                }
                c => T::apply_lanes(c, slots, (at, a as usize * n, b as usize * n), n),
            }
        }
        let o = OUT as usize * n;
        &slots[o..o + n]
    }
}

/// Which side decides each lane's `min` or `max` (`op`) of `a[l]` and `b[l]` on every box
/// inside the lane's box ([`choice`]: [`super::FIRST`], [`super::SECOND`] or [`BOTH`]), appended to
/// `record`. (An empty side, NaN, decides nothing.) One box is a lane of one. Each lane's tests
/// run without branches.
fn choices<T: Bound>(op: u16, a: &[Iv<T>], b: &[Iv<T>], record: &mut Vec<u8>) {
    /// The same loop compiled for AVX-512F (wider vector compares).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    fn wide<T: Bound>(op: u16, a: &[Iv<T>], b: &[Iv<T>], record: &mut Vec<u8>) {
        choices_body(op, a, b, record)
    }
    /// And for AVX2 (four f64 or eight f32 compares per instruction, not two or four).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn avx2<T: Bound>(op: u16, a: &[Iv<T>], b: &[Iv<T>], record: &mut Vec<u8>) {
        choices_body(op, a, b, record)
    }
    #[cfg(target_arch = "x86_64")]
    if crate::round::hardware() {
        // SAFETY: hardware() holds only where the processor has AVX-512F.
        return unsafe { wide(op, a, b, record) };
    }
    #[cfg(target_arch = "x86_64")]
    if crate::cpu::avx2::available() {
        // SAFETY: available() holds only where the processor has AVX2.
        return unsafe { avx2(op, a, b, record) };
    }
    choices_body(op, a, b, record)
}

#[inline(always)]
fn choices_body<T: Bound>(op: u16, a: &[Iv<T>], b: &[Iv<T>], record: &mut Vec<u8>) {
    let start = record.len();
    record.resize(start + a.len(), BOTH);
    for ((o, x), y) in record[start..].iter_mut().zip(a).zip(b) {
        *o = choice(op, *x, *y);
    }
}

/// A level's tile: its row, column and layer (0 in 2-D).
type At = (u32, u32, u32);

/// A level's tiles, grouped by the tape they run.
type Groups = Vec<(Tape, Tiles)>;

/// The tiles of a group: the first level's, listed; or a boundary tile's children, a block
/// of `rows x layers x cols` tiles from `first` (made when read: a list per group was a
/// tenth of a depth map in allocations).
enum Tiles {
    List(Vec<At>),
    Block {
        first: At,
        rows: u32,
        cols: u32,
        layers: u32,
    },
}

impl Tiles {
    fn len(&self) -> usize {
        match self {
            Tiles::List(v) => v.len(),
            Tiles::Block {
                rows, cols, layers, ..
            } => (rows * cols * layers) as usize,
        }
    }

    /// Tile `i`: the list's, or the block's in the order row, layer, column.
    fn get(&self, i: usize) -> At {
        match self {
            Tiles::List(v) => v[i],
            &Tiles::Block {
                first: (r, c, z),
                cols,
                layers,
                ..
            } => {
                let (i, cols, layers) = (i as u32, cols, layers);
                (
                    r + i / (cols * layers),
                    c + i % cols,
                    z + (i / cols) % layers,
                )
            }
        }
    }

    /// The tiles' boxes in order into `out` (cleared first), from the level's bounds per
    /// column, row and layer.
    fn boxes<T: Bound>(&self, xs: &[Iv<T>], ys: &[Iv<T>], zs: &[Iv<T>], out: &mut Vec<TapeBox<T>>) {
        out.clear();
        self.runs(|(r, c, z), _, len| {
            let (y, z) = (ys[r as usize], zs[z as usize]);
            out.extend(xs[c as usize..][..len].iter().map(|&x| [x, y, z]));
        });
    }

    /// The tiles in runs of consecutive columns, in order: `f(first tile, its index in the
    /// group, tiles in the run)`; a block's a run per row and layer, a list's a run per tile.
    /// (Per tile, [`Tiles::get`]'s divisions were 8 % of a Prospero render.)
    fn runs(&self, mut f: impl FnMut(At, usize, usize)) {
        match self {
            Tiles::List(v) => {
                for (i, &at) in v.iter().enumerate() {
                    f(at, i, 1);
                }
            }
            &Tiles::Block {
                first: (r0, c, z0),
                rows,
                cols,
                layers,
            } => {
                let mut i = 0;
                for r in r0..r0 + rows {
                    for z in z0..z0 + layers {
                        f((r, c, z), i, cols as usize);
                        i += cols as usize;
                    }
                }
            }
        }
    }
}

/// What a level of a search leaves: its tiles' classes (in 3-D for [`Mode::Classes`],
/// `UNSET` where a tile was not evaluated; a 3-D level's tile `(r, c, z)` at
/// `(z rows + r) cols + c`), or for a 3-D depth map, per column of its grid, the height of
/// its highest filled tile (see [`crate::search::voxels`]; 0: none); in 2-D nothing of its
/// own: its decided tiles are written into the image.
enum Marks {
    Classes(Vec<u8>),
    Heights(Vec<u32>),
    Image,
}

/// What a search is for.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    /// A 2-D image: each pixel's class, written by the level that decides it (the first
    /// whose tile over it is not boundary; the last level writes boundary too). Every pixel
    /// is written once, and no level keeps classes of its own: composing the image from
    /// levels of classes afterwards, and filling the pixel level's with `UNSET`, was 8 % of
    /// a 1-thread Prospero render.
    Image,
    /// The depth map: column heights, occluded tiles not split; with `keep_filled`, the
    /// filled tiles kept for the normals.
    Heights { keep_filled: bool },
    /// Every voxel's class: classes marked, no occlusion.
    Classes,
}

/// What each level of a search marked, the rounds, their mean tape lengths, and where asked
/// (3-D) the filled tiles of each level with the tape they ran.
type Levels = (Vec<Marks>, Vec<Round2>, Vec<TapeRound>, Vec<Filled>);

/// A boundary tile of a group whose children are evaluated: its index in the group, and
/// where its decisions are in the group's recordings: the k-th of the tile at
/// `record[at + k * n + lane]` (its pass over the tape had `n` lanes).
struct Decided {
    tile: usize,
    at: usize,
    lane: usize,
    n: usize,
}

/// A level's filled tiles that share a tape: the level, the tape, the tiles.
type Filled = (usize, Tape, Vec<At>);

pub(super) fn render<T: Bound>(
    tape: &Tape,
    plan: &Plan,
) -> Result<(Rendered, Vec<TapeRound>), Error> {
    assert!(plan.z.is_none(), "a 2-D plan");
    let (w, h) = (plan.width as usize, plan.height as usize);
    let what = format!("a {w}x{h} image");
    let mut image = crate::search::filled(w * h, BOUNDARY, &what)?;
    let (_, rounds, stats, _) = search::<T>(tape, plan, Mode::Image, &mut image)?;
    let rendered = Rendered {
        width: plan.width,
        height: plan.height,
        classes: image,
        rounds,
    };
    Ok((rendered, stats))
}

/// The voxel search of a 3-D plan ([`crate::search::voxels`]): each column's height, the
/// rounds and their mean tape lengths; with `normals`, each column's certified normal from
/// the gradient of the tape its top voxel's tile ran (see [`voxel_normals`]).
pub(crate) fn voxels<T: Bound>(
    tape: &Tape,
    plan: &Plan,
    normals: bool,
) -> Result<crate::search::voxels::VoxelFrame, Error> {
    let mode = Mode::Heights {
        keep_filled: normals,
    };
    let (marks, rounds, stats, filled) = search::<T>(tape, plan, mode, &mut [])?;
    let (w, h) = (plan.width as usize, plan.height as usize);
    let mut heights = crate::search::filled(w * h, 0u32, "the depth map")?;
    for (g, m) in plan.levels.iter().zip(&marks) {
        let Marks::Heights(level) = m else {
            unreachable!("a 3-D plan marks heights")
        };
        let (s, cols) = (g.tile as usize, g.cols as usize);
        for (i, row) in heights.chunks_mut(w).enumerate() {
            let up = &level[(i / s) * cols..(i / s + 1) * cols];
            for (j, v) in row.iter_mut().enumerate() {
                *v = (*v).max(up[j / s]);
            }
        }
    }
    let normals = normals.then(|| voxel_normals::<T>(plan, &heights, &filled));
    Ok(((heights, rounds, stats), normals))
}

/// The voxel classes of a 3-D plan ([`crate::search::voxels::VoxelClasses`]): each level's
/// tiles' classes (`UNSET` where not evaluated), the rounds and their mean tape lengths.
pub(crate) fn voxel_classes<T: Bound>(
    tape: &Tape,
    plan: &Plan,
) -> Result<crate::search::voxels::LevelClasses, Error> {
    let (marks, rounds, stats, _) = search::<T>(tape, plan, Mode::Classes, &mut [])?;
    let classes = marks
        .into_iter()
        .map(|m| match m {
            Marks::Classes(c) => c,
            _ => unreachable!("classes asked for"),
        })
        .collect();
    Ok((classes, rounds, stats))
}

/// Each column's certified normal, three numbers per column (NaN where none): the gradient
/// ([`Tape::gradient_lanes`]) of the tape of the filled tile that holds the column's top voxel,
/// on that voxel's box, the top voxels of a tape's tiles in passes of up to [`LANES`] (one
/// voxel per call, by the scalar operations, was half of a colonnade frame with normals).
/// (One evaluated filled tile holds it: a filled tile is not split, and tiles of a level are
/// disjoint.)
fn voxel_normals<T: Bound>(plan: &Plan, heights: &[u32], filled: &[Filled]) -> Vec<f64> {
    let z = plan.z.expect("a 3-D plan");
    let (w, h) = (plan.width, plan.height);
    let found: Vec<Vec<(usize, [f64; 3])>> = filled
        .par_iter()
        .map_init(
            || (Vec::new(), Vec::new(), Vec::new(), Vec::new()),
            |(slots, duals, boxes, columns), (l, tape, tiles)| {
                let s = plan.levels[*l].tile;
                let mut out = Vec::new();
                let mut pass = |boxes: &mut Vec<TapeBox<T>>, columns: &mut Vec<usize>| {
                    tape.gradient_lanes::<T>(boxes, slots, duals);
                    for (&p, d) in columns.iter().zip(duals.iter()) {
                        let partials = [1, 2, 3].map(|k| [d[k].0.to_f64(), d[k].1.to_f64()]);
                        out.push((p, super::gradient::certified_or_nan(partials)));
                    }
                    boxes.clear();
                    columns.clear();
                };
                for &(r, c, lz) in tiles {
                    let top = z.depth - lz * s;
                    for i in r * s..((r + 1) * s).min(h) {
                        for j in c * s..((c + 1) * s).min(w) {
                            let p = (i * w + j) as usize;
                            if heights[p] != top {
                                continue;
                            }
                            let b = plan
                                .voxel_box(i, j, lz * s)
                                .map(|[lo, hi]| (T::lo_of(lo), T::hi_of(hi)));
                            boxes.push(b);
                            columns.push(p);
                            if boxes.len() == LANES {
                                pass(boxes, columns);
                            }
                        }
                    }
                }
                if !boxes.is_empty() {
                    pass(boxes, columns);
                }
                out
            },
        )
        .collect();
    let mut normals = vec![f64::NAN; 3 * heights.len()];
    for (p, n) in found.into_iter().flatten() {
        normals[3 * p..3 * p + 3].copy_from_slice(&n);
    }
    normals
}

/// The rounds of a tape search over the plan's levels (2-D for [`Mode::Image`], which writes
/// `image`, else 3-D): what each level marked, the rounds and their mean tape lengths.
fn search<T: Bound>(
    tape: &Tape,
    plan: &Plan,
    mode: Mode,
    image: &mut [u8],
) -> Result<Levels, Error> {
    let keep_filled = mode == Mode::Heights { keep_filled: true };
    let heights = plan.z.is_some() && mode != Mode::Classes;
    let levels = &plan.levels;
    let first = &levels[0];
    let root: Vec<At> = (0..first.rows)
        .flat_map(|r| (0..first.layers).flat_map(move |z| (0..first.cols).map(move |c| (r, c, z))))
        .collect();
    let mut groups: Groups = vec![(tape.clone(), Tiles::List(root))];
    let mut marks = Vec::with_capacity(levels.len());
    let mut rounds = Vec::with_capacity(levels.len());
    let mut stats = Vec::with_capacity(levels.len());
    let mut filled: Vec<Filled> = Vec::new();
    for (l, grid) in levels.iter().enumerate() {
        let next_grid = levels.get(l + 1);
        let last_but_one = l + 2 == levels.len();
        // Per group, where a level follows: its boundary tiles and the `min`/`max` decisions
        // of the passes that had one, each pass's recording kept whole (read in place by the
        // pruning, not gathered per tile; pruned after the level's marks, only where children
        // are evaluated: in 3-D most boundary tiles of the last level but one are occluded.
        // Not a tape slot per tile: at the last level of Prospero that would hold 300,000
        // empty slots.)
        type Found = (Vec<Decided>, Vec<u8>);
        // The level's bounds per column, row and layer (each tile's box is made of them).
        let xs: Vec<Iv<T>> = (0..grid.cols)
            .map(|c| {
                let [xl, xh, _, _] = plan.tile_box(l, 0, c);
                (T::lo_of(xl), T::hi_of(xh))
            })
            .collect();
        let ys: Vec<Iv<T>> = (0..grid.rows)
            .map(|r| {
                let [_, _, yl, yh] = plan.tile_box(l, r, 0);
                (T::lo_of(yl), T::hi_of(yh))
            })
            .collect();
        let zs: Vec<Iv<T>> = match plan.z {
            Some(axis) => (0..grid.layers)
                .map(|z| {
                    let k0 = z * grid.tile;
                    let [zl, zh] = plan.layers_box(k0, (k0 + grid.tile).min(axis.depth));
                    (T::lo_of(zl), T::hi_of(zh))
                })
                .collect(),
            None => vec![(T::nan(), T::nan())],
        };
        let (xs, ys, zs) = (&xs, &ys, &zs);
        // The level's classes, group after group (one buffer, not one per group: the pixel
        // level has thousands of groups), and each group's part of it.
        let mut starts = Vec::with_capacity(groups.len() + 1);
        starts.push(0);
        for (_, tiles) in &groups {
            starts.push(starts[starts.len() - 1] + tiles.len());
        }
        let mut classes = vec![0u8; starts[groups.len()]];
        let mut parts = Vec::with_capacity(groups.len());
        let mut rest = &mut classes[..];
        for (_, tiles) in &groups {
            let (part, after) = rest.split_at_mut(tiles.len());
            parts.push(part);
            rest = after;
        }
        // Scratch (slots, boxes) made once per rayon job, not per group.
        let scratch = || (Vec::new(), Vec::new());
        let found: Vec<Found> = groups
            .par_iter()
            .zip(parts)
            .map_init(scratch, |(slots, boxes), ((tape, tiles), classes)| {
                let mut found: Found = (Vec::new(), Vec::new());
                let (boundary, record) = &mut found;
                if next_grid.is_some() {
                    // The recordings' bytes: without it the vector grows by copies.
                    record.reserve(tape.choices() * tiles.len());
                }
                tiles.boxes(xs, ys, zs, boxes);
                // The group's tiles LANES at a time through one pass over the tape.
                for (k, boxes) in boxes.chunks(LANES).enumerate() {
                    let (n, at) = (boxes.len(), record.len());
                    let recording = next_grid.is_some().then_some(&mut *record);
                    let values = tape.eval_lanes(boxes, slots, recording);
                    let before = boundary.len();
                    let out = &mut classes[k * LANES..k * LANES + n];
                    for (lane, (&(lo, hi), out)) in values.iter().zip(out).enumerate() {
                        let class = classify(lo.to_f64(), hi.to_f64());
                        if class == BOUNDARY && next_grid.is_some() {
                            boundary.push(Decided {
                                tile: k * LANES + lane,
                                at,
                                lane,
                                n,
                            });
                        }
                        *out = class;
                    }
                    if boundary.len() == before {
                        // No tile of this pass is pruned: its recording is not kept.
                        record.truncate(at);
                    }
                }
                found
            })
            .collect();
        let columns = grid.rows as usize * grid.cols as usize;
        let mut level = match (mode, heights) {
            (Mode::Image, _) => Marks::Image,
            (_, false) => Marks::Classes(crate::search::filled(
                columns * grid.layers as usize,
                crate::search::render::UNSET,
                "a level of the tiles' classes",
            )?),
            (_, true) => Marks::Heights(crate::search::filled(
                columns,
                0u32,
                "a level of the voxels' columns",
            )?),
        };
        let (t, w) = (grid.tile as usize, plan.width as usize);
        let mut round = Round2 {
            tile: grid.tile,
            ..Round2::default()
        };
        let mut length = 0usize;
        // A 3-D tile's top, counted in voxels from the bottom.
        let depth = plan.z.map_or(0, |a| a.depth);
        let top = |z: u32| depth - z * grid.tile;
        let mut counts = [0u64; 3];
        // Per group, its tiles that raised their column's height (for the normals).
        let mut kept_by_group: Vec<Vec<At>> = Vec::new();
        for ((tape, tiles), start) in groups.iter().zip(&starts) {
            length += tape.len() * tiles.len();
            let found = &classes[*start..*start + tiles.len()];
            let mut kept = Vec::new();
            tiles.runs(|(r, c, z), from, len| {
                let at = (r * grid.cols + c) as usize;
                let found = &found[from..from + len];
                match &mut level {
                    Marks::Classes(level) => {
                        let at = z as usize * columns + at;
                        level[at..at + len].copy_from_slice(found);
                    }
                    Marks::Image if t == 1 && next_grid.is_none() => {
                        let at = r as usize * w + c as usize;
                        image[at..at + len].copy_from_slice(found);
                    }
                    Marks::Image => {
                        let (y0, x0) = (r as usize * t, c as usize * t);
                        for (j, &class) in found.iter().enumerate() {
                            if class == BOUNDARY && next_grid.is_some() {
                                continue; // its children decide
                            }
                            let (x0, x1) = (x0 + j * t, (x0 + (j + 1) * t).min(w));
                            for row in image.chunks_exact_mut(w).skip(y0).take(t) {
                                row[x0..x1].fill(class);
                            }
                        }
                    }
                    Marks::Heights(level) => {
                        for (j, &class) in found.iter().enumerate() {
                            let filled =
                                class == INSIDE || (class == BOUNDARY && next_grid.is_none());
                            // Only a tile that raises its column can hold a pixel's top voxel:
                            // every tile of this level covers all the column's pixels, so the
                            // column's highest filled tile raises it when it comes (no tile
                            // before it is higher). The normals need no other; a group's tiles
                            // come top first, so few others are kept.
                            if filled && top(z) > level[at + j] {
                                level[at + j] = top(z);
                                if keep_filled {
                                    kept.push((r, c + j as u32, z));
                                }
                            }
                        }
                    }
                }
            });
            for &class in found {
                counts[class.min(BOUNDARY) as usize] += 1;
            }
            if keep_filled {
                kept_by_group.push(kept);
            }
        }
        round.boxes = counts.iter().sum();
        [round.outside, round.inside, round.boundary] = counts;
        // Each boundary tile's children, with its pruned tape; in 3-D none for a tile below a
        // filled tile of its column (occluded: see the voxels module). In parallel, in order.
        let mut next: Groups = Vec::new();
        if let Some(ng) = next_grid {
            let k = grid.tile / ng.tile;
            let kz = if plan.z.is_some() { k } else { 1 };
            let level = &level;
            next = groups
                .par_iter()
                .zip(found)
                .flat_map_iter(|((tape, tiles), (boundary, record))| {
                    boundary.into_iter().filter_map(move |d| {
                        let (r, c, z) = tiles.get(d.tile);
                        if let Marks::Heights(level) = level {
                            if level[(r * grid.cols + c) as usize] > top(z) {
                                return None;
                            }
                        }
                        // A tape for the last level is never pruned again: its SSA operands
                        // (a third of it) are not kept.
                        let child = tape.prune_lane(&record[d.at..], d.lane, d.n, !last_but_one);
                        let rows = k.min(ng.rows - r * k);
                        let cols = k.min(ng.cols - c * k);
                        let layers = kz.min(ng.layers - z * kz);
                        let first = (r * k, c * k, z * kz);
                        let kids = Tiles::Block {
                            first,
                            rows,
                            cols,
                            layers,
                        };
                        Some((child, kids))
                    })
                })
                .collect();
        }
        // The tapes of groups with kept tiles move to the normals (not cloned: a clone per
        // group was a tenth of a colonnade frame with normals).
        for ((tape, _), kept) in groups.into_iter().zip(kept_by_group) {
            if !kept.is_empty() {
                filled.push((l, tape, kept));
            }
        }
        stats.push(TapeRound {
            tile: grid.tile,
            boxes: round.boxes,
            mean_len: length as f64 / round.boxes.max(1) as f64,
        });
        rounds.push(round);
        marks.push(level);
        groups = next;
    }
    Ok((marks, rounds, stats, filled))
}
