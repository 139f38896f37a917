//! The 3-D ray search with region specialization ([`crate::specialize`]), on the CPU: each
//! block of rays carries the program specialized for its region, and the blocks inside it are
//! evaluated with that program and specialize it further. The hits are the plain search's,
//! bit for bit (a pruned program gives the full program's enclosures on every box inside its
//! region). (2-D renders prune with tapes, [`super::tape`], on both backends; 3-D joins them
//! when the tape binds a third variable.)
//!
//! One evaluation per block gives both its enclosure and its facts: the block's program is
//! lowered with every node an output ([`NodeProgram`]), the output node among them.

use rayon::prelude::*;

use crate::ir::sign::Fact;
use crate::specialize::{specialize, NodeProgram, Specialized};
use crate::{Error, Evaluator, Expression, Precision};

/// What pruning did at one level of the search.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PruneRound {
    /// Tile size of the round (pixels).
    pub tile: u32,
    /// Tiles evaluated.
    pub boxes: u64,
    /// Mean scalar instructions of the programs the round's tiles were evaluated with.
    pub mean_insts: f64,
}

/// A group's region facts, if it has any.
fn known(program: &Specialized) -> Option<&[Fact]> {
    (!program.facts.is_empty()).then_some(&program.facts[..])
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
    /// The hull of the block's rays (grid rows of `width`) as the box of the variables `vars`:
    /// u and v of the rays, t over their segments.
    fn region(
        &self,
        rays: &[super::ray::Ray],
        width: usize,
        vars: &[String],
    ) -> Vec<crate::Interval> {
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
        vars.iter()
            .map(|name| {
                let (lo, hi) = match name.as_str() {
                    "u" => u,
                    "v" => v,
                    _ => t,
                };
                crate::Interval { lo, hi }
            })
            .collect()
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

/// [`super::ray::first_hits`] with region specialization, on the CPU evaluator, for rays laid
/// out on a grid (`width` rays per row, row-major), as `ivjit render` makes a depth map's: the
/// grid is cut into blocks of `tiles[0]` x `tiles[0]` rays, each block's program specialized for
/// its region (the hull of its rays' u, v and segments), blocks of `tiles[1]` inside specialized
/// again, and so on; then each last block's rays are searched with its program (lowered with its
/// region's facts). A block whose enclosure on its region excludes 0 (or is empty) holds no
/// hit, and its rays are not searched at all. The hits are the plain search's, bit for bit:
/// every box a ray evaluates lies in its blocks' regions. Returns the hits and, per level, the
/// blocks and the mean length of the programs that evaluated them (the last entry: the
/// programs the rays were searched with, per ray).
pub fn first_hits_pruned(
    expr: &Expression,
    precision: Precision,
    rays: &[super::ray::Ray],
    width: u32,
    tiles: &[u32],
    split: u32,
) -> Result<(super::ray::Hits, Vec<PruneRound>), Error> {
    use super::ray::{may_vanish, slots, Hits};
    let width = width as usize;
    check_grid(rays, width, tiles, split)?;
    // The plain search's checks (variables t, u, v; one output).
    let plain = Evaluator::new(expr, precision, crate::BackendChoice::Cpu)?;
    slots(&plain)?;
    let height = rays.len() / width;
    let graph = expr.ir();
    let whole = Block {
        r0: 0,
        r1: height,
        c0: 0,
        c1: width,
    };
    let mut groups: Vec<(Specialized, Vec<Block>)> = vec![(
        Specialized {
            graph: graph.clone(),
            facts: Vec::new(),
            stats: Default::default(),
        },
        whole.split(tiles[0] as usize),
    )];
    let mut stats = Vec::new();
    let mut hits: Vec<Option<(f64, f64)>> = vec![None; rays.len()];
    let mut boxes = 0u64;
    for (l, &tile) in tiles.iter().enumerate() {
        let last = l + 1 == tiles.len();
        // Each group: the length of its program (outputs only: the statistic) and, per block,
        // the program specialized for it, or None (no hit possible).
        type Blocks = (usize, Vec<Option<Specialized>>);
        let evaluated: Vec<Result<Blocks, Error>> = groups
            .par_iter()
            .map(|(program, blocks)| {
                let g = &program.graph;
                let length = crate::lower::lower_with(g, precision, known(program))?
                    .insts
                    .len();
                let nodes = NodeProgram::with_facts(g, precision, known(program))?;
                let regions: Vec<Vec<crate::Interval>> = blocks
                    .iter()
                    .map(|b| b.region(rays, width, &g.vars))
                    .collect();
                let output = g.outputs[0].index();
                let children = nodes
                    .facts(g, &regions)
                    .into_iter()
                    .map(|facts| {
                        let e = facts.enclosures[output];
                        may_vanish(e.lo, e.hi).then(|| specialize(g, &facts))
                    })
                    .collect();
                Ok((length, children))
            })
            .collect();
        let mut round = PruneRound {
            tile,
            ..PruneRound::default()
        };
        let mut insts = 0usize;
        let mut next = Vec::new();
        for ((_, blocks), found) in groups.iter().zip(evaluated) {
            let (length, children) = found?;
            insts += blocks.len() * length;
            round.boxes += blocks.len() as u64;
            for (b, child) in blocks.iter().zip(children) {
                let Some(child) = child else { continue }; // no ray of the block hits
                if last {
                    next.push((child, vec![*b]));
                } else {
                    let size = tiles[l + 1] as usize;
                    next.push((child, b.split(size)));
                }
            }
        }
        boxes += round.boxes;
        round.mean_insts = insts as f64 / (round.boxes.max(1) as f64);
        stats.push(round);
        groups = next;
    }
    let last = search_blocks(
        &groups, rays, width, precision, split, &mut hits, &mut boxes,
    )?;
    stats.push(last);
    Ok((
        Hits {
            hits,
            boxes,
            finished_on_cpu: 0,
            device_seconds: 0.0,
        },
        stats,
    ))
}

/// The rays of every block that may hold a hit (`groups`: each last-level block with its
/// program), each block searched with its program: the hits written into `hits` (by ray
/// index), the boxes evaluated added to `boxes`. Returns the round's statistic (per ray).
fn search_blocks(
    groups: &[(Specialized, Vec<Block>)],
    rays: &[super::ray::Ray],
    width: usize,
    precision: Precision,
    split: u32,
    hits: &mut [Option<(f64, f64)>],
    boxes: &mut u64,
) -> Result<PruneRound, Error> {
    use super::ray::{cpu, slots};
    // Per block: each ray's index and hit, the boxes evaluated, instructions run per ray.
    type Searched = (Vec<(usize, Option<(f64, f64)>)>, u64, usize);
    let searched: Vec<Result<Searched, Error>> = groups
        .par_iter()
        .map(|(program, blocks)| {
            let b = blocks[0];
            let lowered = crate::lower::lower_with(&program.graph, precision, known(program))?;
            let length = lowered.insts.len();
            // The block's own program, its batches checked and rounded like every evaluator's.
            let eval = Evaluator::cpu_of(lowered);
            let index: Vec<usize> = (b.r0..b.r1)
                .flat_map(|r| (b.c0..b.c1).map(move |c| r * width + c))
                .collect();
            let own: Vec<super::ray::Ray> = index.iter().map(|&i| rays[i]).collect();
            let found = cpu(&eval, slots(&eval)?, &own, split)?;
            let n = own.len();
            Ok((
                index.into_iter().zip(found.hits).collect(),
                found.boxes,
                n * length,
            ))
        })
        .collect();
    let mut last = PruneRound {
        tile: 0,
        ..PruneRound::default()
    };
    let mut insts = 0usize;
    for result in searched {
        let (found, searched_boxes, ray_insts) = result?;
        last.boxes += found.len() as u64;
        insts += ray_insts;
        *boxes += searched_boxes;
        for (i, hit) in found {
            hits[i] = hit;
        }
    }
    last.mean_insts = insts as f64 / (last.boxes.max(1) as f64);
    Ok(last)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::BackendChoice;

    /// Rays on a grid searched with per-block pruned programs find the plain search's hits,
    /// bit for bit, on a union of a ball and a box cut by a slab, in f64 and f32, and search
    /// with shorter programs.
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
                let (first, last) = (stats[0].mean_insts, stats.last().unwrap().mean_insts);
                assert!(last < first, "{p} {tiles:?}: {stats:?}");
            }
        }
        // Rays that do not fill rows, and tile sizes out of order, are refused.
        assert!(first_hits_pruned(&expr, Precision::F64, &rays[..41], w, &[8], 4).is_err());
        assert!(first_hits_pruned(&expr, Precision::F64, &rays, w, &[4, 8], 4).is_err());
    }
}
