//! The 3-D ray search with pruned tapes ([`super::tape`]), on the CPU: each block of rays
//! carries the tape pruned on its region (the hull of its rays), the blocks inside it are
//! evaluated with that tape and prune it further, and each last block's rays are searched with
//! its tape. The same tapes as the 2-D renders, with the variables t, u and v.
//!
//! Why the hits are the plain search's: every box a ray evaluates lies in its blocks' regions,
//! and on a box inside a region the pruned tape gives the full tape's enclosure (the tape
//! module's argument). With operations of the generated set the full tape's enclosures are the
//! compiled program's, so the hits are the plain search's bit for bit (the test below); with
//! point functions a ray may stop at another candidate piece, never at one that cannot hold a
//! root.

use std::sync::Arc;

use rayon::prelude::*;

use super::tape::{boxed, Bound, Chains, Tape, TapeBox};
use crate::{Error, Expression, Interval, Precision};

/// What pruning did at one level of the search.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PruneRound {
    /// Block size of the level, in rays a side (0: the rays' own search).
    pub tile: u32,
    /// Blocks evaluated (at the last entry: rays searched).
    pub boxes: u64,
    /// Mean tape instructions of the tapes the level's blocks (or rays) ran.
    pub mean_len: f64,
}

/// A block of rays on the grid: rows `r0..r1`, columns `c0..c1`.
#[derive(Clone, Copy)]
struct Block {
    r0: usize,
    r1: usize,
    c0: usize,
    c1: usize,
}

impl Block {
    /// The hull of the block's rays (grid rows of `width`): t over their segments, u and v.
    fn region(&self, rays: &[super::ray::Ray], width: usize) -> [Interval; 3] {
        let (mut u, mut v, mut t) = (
            (f64::INFINITY, f64::NEG_INFINITY),
            (f64::INFINITY, f64::NEG_INFINITY),
            (f64::INFINITY, f64::NEG_INFINITY),
        );
        for r in self.r0..self.r1 {
            for ray in &rays[r * width + self.c0..r * width + self.c1] {
                u = (u.0.min(ray.u), u.1.max(ray.u));
                v = (v.0.min(ray.v), v.1.max(ray.v));
                t = (t.0.min(ray.t0), t.1.max(ray.t1));
            }
        }
        let iv = |(lo, hi): (f64, f64)| Interval { lo, hi };
        [iv(t), iv(u), iv(v)]
    }

    /// The block cut into blocks of `size` x `size` rays (smaller at its right and bottom).
    fn split(&self, size: usize) -> Vec<Block> {
        let mut out = Vec::new();
        for r0 in (self.r0..self.r1).step_by(size) {
            for c0 in (self.c0..self.c1).step_by(size) {
                out.push(Block {
                    r0,
                    r1: (r0 + size).min(self.r1),
                    c0,
                    c1: (c0 + size).min(self.c1),
                });
            }
        }
        out
    }
}

/// The checks of [`first_hits_pruned`]'s grid, tiles, split and segments (the plain search
/// checks the expression).
fn check_grid(
    rays: &[super::ray::Ray],
    width: usize,
    tiles: &[u32],
    split: u32,
) -> Result<(), Error> {
    let bad = |s: String| Err(super::SearchError::Options(s).into());
    if width == 0 || !rays.len().is_multiple_of(width) {
        return bad(format!("{} rays do not fill rows of {width}", rays.len()));
    }
    if tiles.is_empty() || tiles.windows(2).any(|w| w[1] >= w[0]) || tiles.contains(&0) {
        return bad(format!(
            "tiles {tiles:?}: sizes from coarse to fine, at least 1"
        ));
    }
    if split < 2 {
        return bad(format!(
            "split {split}: a step splits a piece into at least 2"
        ));
    }
    if let Some(r) = rays
        .iter()
        .find(|r| !(r.t0 <= r.t1 && r.t0.is_finite() && r.t1.is_finite()))
    {
        return bad(format!(
            "a ray's segment [{}, {}] needs finite ends with t0 <= t1",
            r.t0, r.t1
        ));
    }
    Ok(())
}

/// [`super::ray::first_hits`] with pruned tapes, on the CPU, for rays laid out on a grid
/// (`width` rays per row, row-major), as `ivjit render` makes a depth map's: the grid is cut
/// into blocks of `tiles[0]` x `tiles[0]` rays, the tape of `expr` (variables t, u, v) pruned on
/// each block's region (the hull of its rays' u, v and segments), blocks of `tiles[1]` inside
/// pruned again, and so on; then each last block's rays are searched with its tape. A block
/// whose enclosure on its region excludes 0 (or is empty) holds no hit, and its rays are not
/// searched at all. Returns the hits and, per level, the blocks and the mean length of the
/// tapes that evaluated them (the last entry: the tapes the rays were searched with, per ray).
pub fn first_hits_pruned(
    expr: &Expression,
    precision: Precision,
    rays: &[super::ray::Ray],
    width: u32,
    tiles: &[u32],
    split: u32,
) -> Result<(super::ray::Hits, Vec<PruneRound>), Error> {
    let width = width as usize;
    check_grid(rays, width, tiles, split)?;
    let graph = expr.ir();
    if graph.outputs.len() != 1 {
        return Err(super::SearchError::Outputs(graph.outputs.len()).into());
    }
    // Chains as written: pruning on the CPU needs no shallow tape, and chains prune more.
    let tape =
        Tape::binding(graph, &VARIABLES, Chains::AsWritten).map_err(super::SearchError::Tape)?;
    match precision {
        Precision::F64 => search::<f64>(tape, rays, width, tiles, split),
        Precision::F32 => search::<f32>(tape, rays, width, tiles, split),
    }
}

/// The variables of a ray search, in the tape's order.
const VARIABLES: [&str; 3] = ["t", "u", "v"];

/// Blocks evaluated in one pass over a tape (the lanes of [`Tape::eval_lanes`]).
const LANES: usize = 64;

fn search<T: Bound>(
    tape: Tape,
    rays: &[super::ray::Ray],
    width: usize,
    tiles: &[u32],
    split: u32,
) -> Result<(super::ray::Hits, Vec<PruneRound>), Error> {
    use super::ray::may_vanish;
    let height = rays.len() / width;
    let whole = Block {
        r0: 0,
        r1: height,
        c0: 0,
        c1: width,
    };
    let mut groups: Vec<(Arc<Tape>, Vec<Block>)> =
        vec![(Arc::new(tape), whole.split(tiles[0] as usize))];
    let mut stats = Vec::new();
    let mut boxes = 0u64;
    for (l, &tile) in tiles.iter().enumerate() {
        let last = l + 1 == tiles.len();
        // Per group, per block: the tape pruned on the block's region, or None (no hit).
        let children: Vec<Vec<Option<Tape>>> = groups
            .par_iter()
            .map(|(tape, blocks)| {
                let (mut slots, mut record) = (Vec::new(), Vec::new());
                let mut out = Vec::with_capacity(blocks.len());
                for part in blocks.chunks(LANES) {
                    let regions: Vec<TapeBox<T>> = part
                        .iter()
                        .map(|b| boxed::<T>(&b.region(rays, width)))
                        .collect();
                    record.clear();
                    let values = tape.eval_lanes(&regions, &mut slots, Some(&mut record));
                    let n = part.len();
                    for (lane, (lo, hi)) in values.iter().enumerate() {
                        out.push(
                            may_vanish(lo.to_f64(), hi.to_f64())
                                .then(|| tape.prune_lane(&record, lane, n, true)),
                        );
                    }
                }
                out
            })
            .collect();
        let mut round = PruneRound {
            tile,
            ..PruneRound::default()
        };
        let mut length = 0usize;
        let mut next = Vec::new();
        for ((tape, blocks), found) in groups.iter().zip(children) {
            length += blocks.len() * tape.len();
            round.boxes += blocks.len() as u64;
            for (b, child) in blocks.iter().zip(found) {
                let Some(child) = child else { continue }; // no ray of the block hits
                let inner = if last {
                    vec![*b]
                } else {
                    b.split(tiles[l + 1] as usize)
                };
                next.push((Arc::new(child), inner));
            }
        }
        boxes += round.boxes;
        round.mean_len = length as f64 / (round.boxes.max(1) as f64);
        stats.push(round);
        groups = next;
    }
    let (hits, searched, last) = search_blocks::<T>(&groups, rays, width, split)?;
    stats.push(last);
    Ok((
        super::ray::Hits {
            hits,
            boxes: boxes + searched,
            finished_on_cpu: 0,
            device_seconds: 0.0,
        },
        stats,
    ))
}

/// A ray's hit: the piece of its segment where the search stopped, if any.
type Hit = Option<(f64, f64)>;

/// The rays of every block that may hold a hit (`groups`: each last-level block with its
/// tape), each block's rays searched with its tape: the hits by ray index, the boxes
/// evaluated, and the statistic of the rays' searches (per ray).
fn search_blocks<T: Bound>(
    groups: &[(Arc<Tape>, Vec<Block>)],
    rays: &[super::ray::Ray],
    width: usize,
    split: u32,
) -> Result<(Vec<Hit>, u64, PruneRound), Error> {
    // Per block: each ray's index and hit, the boxes evaluated, instructions run per ray.
    type Searched = (Vec<(usize, Option<(f64, f64)>)>, u64, usize);
    let searched: Vec<Result<Searched, Error>> = groups
        .par_iter()
        .map(|(tape, blocks)| {
            let b = blocks[0];
            let index: Vec<usize> = (b.r0..b.r1)
                .flat_map(|r| (b.c0..b.c1).map(move |c| r * width + c))
                .collect();
            let own: Vec<super::ray::Ray> = index.iter().map(|&i| rays[i]).collect();
            // Each ray evaluates its block's tape on tens of boxes: the tape lowered with its
            // facts on the block's region and run by the CPU evaluator (its lanes vectorized)
            // instead of the interpreter.
            let region = boxed::<T>(&b.region(rays, width));
            let program = tape.lowered_on(&VARIABLES, &region)?;
            let eval = crate::Evaluator::cpu_of(program);
            let found = super::ray::cpu(&eval, super::ray::slots(&eval)?, &own, split)?;
            let n = own.len();
            Ok((
                index.into_iter().zip(found.hits).collect(),
                found.boxes,
                n * tape.len(),
            ))
        })
        .collect();
    let mut last = PruneRound {
        tile: 0,
        ..PruneRound::default()
    };
    let (mut hits, mut boxes, mut length) = (vec![None; rays.len()], 0u64, 0usize);
    for result in searched {
        let (found, searched_boxes, ray_length) = result?;
        last.boxes += found.len() as u64;
        length += ray_length;
        boxes += searched_boxes;
        for (i, hit) in found {
            hits[i] = hit;
        }
    }
    last.mean_len = length as f64 / (last.boxes.max(1) as f64);
    Ok((hits, boxes, last))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BackendChoice, Evaluator};

    /// Rays on a grid searched with per-block pruned tapes find the plain search's hits,
    /// bit for bit, on a union of a ball and a box cut by a slab, in f64 and f32, and search
    /// with shorter tapes.
    #[test]
    fn pruned_rays_equal_the_plain_rays() {
        use super::super::ray::{first_hits, Ray};
        let src = "let x = u; let y = v; let z = 1 - t; \
                   max(min(sqrt(x^2 + y^2 + z^2) - 0.5, \
                   max(abs(x - 0.45) - 0.25, max(abs(y + 0.1) - 0.3, abs(z) - 0.6))), \
                   -(0.3 - abs(y - 0.5)))";
        let expr = Expression::parse(src).unwrap();
        let (w, h) = (40u32, 32u32);
        let rays: Vec<Ray> = (0..w * h)
            .map(|p| Ray {
                u: -1.0 + (2.0 * (p % w) as f64 + 1.0) / w as f64,
                v: 1.0 - (2.0 * (p / w) as f64 + 1.0) / h as f64,
                t0: 0.0,
                t1: 2.0,
                min_width: 2.0 / 64.0,
            })
            .collect();
        for p in [Precision::F64, Precision::F32] {
            let eval = Evaluator::new(&expr, p, BackendChoice::Cpu).unwrap();
            let plain = first_hits(&eval, &rays, 4).unwrap();
            for tiles in [vec![16, 4], vec![8], vec![32, 8, 2]] {
                let (pruned, stats) = first_hits_pruned(&expr, p, &rays, w, &tiles, 4).unwrap();
                assert!(plain.hits == pruned.hits, "{p} {tiles:?}: other hits");
                let hit = plain.hits.iter().filter(|h| h.is_some()).count();
                assert!(hit > 30 && hit < (w * h) as usize - 30, "{hit}");
                let (first, last) = (stats[0].mean_len, stats.last().unwrap().mean_len);
                assert!(last < first, "{p} {tiles:?}: {stats:?}");
            }
        }
        // Rays that do not fill rows, and tile sizes out of order, are refused.
        assert!(first_hits_pruned(&expr, Precision::F64, &rays[..41], w, &[8], 4).is_err());
        assert!(first_hits_pruned(&expr, Precision::F64, &rays, w, &[4, 8], 4).is_err());
    }

    /// Chains of min/max kept as written prune more than balanced trees (a tree's node is
    /// decided only against its sibling subtree): the colonnade's tape on three columns of
    /// its space.
    #[test]
    fn chains_as_written_prune_more_than_trees() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(root.join("tests/data/models/colonnade.vm")).unwrap();
        let expr = Expression::parse_tape(&text).unwrap();
        let names = ["x", "y", "z"];
        let chains = Tape::binding(expr.ir(), &names, Chains::AsWritten).unwrap();
        let trees = Tape::binding(expr.ir(), &names, Chains::Balanced).unwrap();
        let (mut a, mut b) = (0, 0);
        for (x0, y0) in [(0.1, 0.1), (-0.5, 0.3), (0.7, -0.2)] {
            let iv = |lo, hi| Interval { lo, hi };
            let region = boxed::<f64>(&[iv(x0, x0 + 0.05), iv(y0, y0 + 0.05), iv(-1.0, 1.0)]);
            for (tape, n) in [(&chains, &mut a), (&trees, &mut b)] {
                let mut choices = Vec::new();
                tape.eval(&region, Some(&mut choices));
                *n += tape.prune(&choices).len();
            }
        }
        eprintln!("colonnade on three columns: {a} instructions as written, {b} as trees");
        assert!(a * 5 < b * 4, "{a} against {b}");
    }
}
