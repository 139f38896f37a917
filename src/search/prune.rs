//! The render search with region specialization ([`crate::specialize`]), on the CPU: each
//! boundary tile carries the program specialized for it, and its children are evaluated with
//! that program and specialize it further. The classes are the plain search's, bit for bit
//! (a pruned program gives the full program's enclosures on every box inside its region), and
//! the evaluation of a tile of Prospero costs tens of times fewer instructions.
//!
//! One evaluation per tile gives both its class and its facts: the tile's program is lowered
//! with every node an output ([`NodeProgram`]), the output node among them. At the last level
//! only the outputs are needed, and the plain program runs.

use rayon::prelude::*;

use super::{classify, Plan, Rendered, Round2, BOUNDARY};
use crate::ir::sign::Fact;
use crate::ir::Graph;
use crate::specialize::{specialize, NodeProgram, Specialized};
use crate::{Error, Evaluator, Expression, Precision};

/// What pruning did in one round of the search.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PruneRound {
    /// Tile size of the round (pixels).
    pub tile: u32,
    /// Tiles evaluated.
    pub boxes: u64,
    /// Mean scalar instructions of the programs the round's tiles were evaluated with.
    pub mean_insts: f64,
}

/// [`super::render`] with region specialization, on the CPU evaluator: the same classes, and
/// per round the mean length of the programs that evaluated it. The full program's length is
/// the first round's.
pub fn render_pruned(
    expr: &Expression,
    precision: Precision,
    opts: &super::RenderOptions,
) -> Result<(Rendered, Vec<PruneRound>), Error> {
    let eval = Evaluator::new(expr, precision, crate::BackendChoice::Cpu)?;
    let plan = Plan::new(&eval, opts)?;
    let levels = &plan.levels;
    let mut classes: Vec<Vec<u8>> = levels
        .iter()
        .map(|g| vec![super::cpu::UNSET; g.rows as usize * g.cols as usize])
        .collect();
    let mut rounds = Vec::with_capacity(levels.len());
    let mut pruning = Vec::with_capacity(levels.len());
    let first = &levels[0];
    // The tiles of a round, grouped by the program they are evaluated with (their parent's).
    let root: Vec<(u32, u32)> = (0..first.rows)
        .flat_map(|r| (0..first.cols).map(move |c| (r, c)))
        .collect();
    // Each group's graph comes with the facts of its region (none for the whole image).
    let mut groups: Vec<(Specialized, Vec<(u32, u32)>)> = vec![(
        Specialized {
            graph: expr.ir().clone(),
            facts: Vec::new(),
            stats: Default::default(),
        },
        root,
    )];
    for (l, grid) in levels.iter().enumerate() {
        let last = l + 1 == levels.len();
        // Each group: its tiles' classes and, where they are boundary and a level follows,
        // the program specialized for each.
        let results: Vec<Result<Vec<Evaluated>, Error>> = groups
            .par_iter()
            .map(|(program, tiles)| evaluate_group(program, tiles, &plan, l, precision, last))
            .collect();
        let mut round = Round2 {
            tile: grid.tile,
            ..Round2::default()
        };
        let mut stats = PruneRound {
            tile: grid.tile,
            ..PruneRound::default()
        };
        let mut insts = 0usize;
        let mut next = Vec::new();
        for ((program, tiles), result) in groups.iter().zip(results) {
            let found = result?;
            let lowered = crate::lower::lower_with(&program.graph, precision, known(program))?;
            insts += tiles.len() * lowered.insts.len();
            for (&(r, c), (k, child)) in tiles.iter().zip(found) {
                classes[l][(r * grid.cols + c) as usize] = k;
                round.boxes += 1;
                match k {
                    super::INSIDE => round.inside += 1,
                    super::OUTSIDE => round.outside += 1,
                    _ => round.boundary += 1,
                }
                if let (Some(child), Some(next_grid)) = (child, levels.get(l + 1)) {
                    let kk = grid.tile / next_grid.tile;
                    let rows = kk.min(next_grid.rows - r * kk);
                    let cols = kk.min(next_grid.cols - c * kk);
                    let kids = (0..rows)
                        .flat_map(|a| (0..cols).map(move |b| (r * kk + a, c * kk + b)))
                        .collect();
                    next.push((child, kids));
                }
            }
        }
        stats.boxes = round.boxes;
        stats.mean_insts = insts as f64 / (round.boxes.max(1) as f64);
        rounds.push(round);
        pruning.push(stats);
        groups = next;
    }
    let rendered = Rendered {
        width: plan.width,
        height: plan.height,
        classes: super::cpu::compose(&plan, &classes),
        rounds,
    };
    Ok((rendered, pruning))
}

/// A tile's class, and for a boundary tile with a level after it, the program specialized for
/// it.
type Evaluated = (u8, Option<Specialized>);

/// A group's region facts, if it has any.
fn known(program: &Specialized) -> Option<&[Fact]> {
    (!program.facts.is_empty()).then_some(&program.facts[..])
}

/// The boxes of `tiles` (level `l`), in the variable order of `graph`.
fn boxes(graph: &Graph, plan: &Plan, l: usize, tiles: &[(u32, u32)]) -> Vec<Vec<crate::Interval>> {
    tiles
        .iter()
        .map(|&(r, c)| {
            let (i0, i1, j0, j1) = plan.pixels(l, r, c);
            let [xl, xh, yl, yh] = plan.axes.tile_box(i0, i1, j0, j1);
            graph
                .vars
                .iter()
                .map(|v| match v.as_str() {
                    "x" => crate::Interval { lo: xl, hi: xh },
                    _ => crate::Interval { lo: yl, hi: yh },
                })
                .collect()
        })
        .collect()
}

/// Evaluates `tiles` with `program` (its graph, lowered with its region's facts): each tile's
/// class, and for a boundary tile with a level after this one, the graph specialized for it.
fn evaluate_group(
    program: &Specialized,
    tiles: &[(u32, u32)],
    plan: &Plan,
    l: usize,
    precision: Precision,
    last: bool,
) -> Result<Vec<Evaluated>, Error> {
    let graph = &program.graph;
    let regions = boxes(graph, plan, l, tiles);
    if last {
        let lowered = crate::lower::lower_with(graph, precision, known(program))?;
        let n = regions.len();
        let out = crate::specialize::eval_boxes(&lowered, &regions);
        return Ok((0..n)
            .map(|t| (classify(out[t], out[n + t]), None))
            .collect());
    }
    let nodes = NodeProgram::with_facts(graph, precision, known(program))?;
    let output = graph.outputs[0].index();
    Ok(nodes
        .facts(graph, &regions)
        .into_iter()
        .map(|facts| {
            let e = facts.enclosures[output];
            let class = classify(e.lo, e.hi);
            let child = (class == BOUNDARY).then(|| specialize(graph, &facts));
            (class, child)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::super::{render, RenderOptions};
    use super::*;
    use crate::BackendChoice;

    /// The pruned search gives the plain search's classes and rounds, on min/max models and in
    /// both precisions, and evaluates shorter programs after the first round.
    #[test]
    fn pruned_render_equals_the_plain_render() {
        let sources = [
            // Union and intersection of disks and a square (min/max of distance functions).
            "min(min(sqrt(sqr(x - 0.3) + sqr(y)) - 0.4, sqrt(sqr(x + 0.4) + sqr(y - 0.2)) - 0.3), \
             max(max(abs(x) - 0.2, abs(y + 0.5) - 0.2), -(sqrt(sqr(x) + sqr(y + 0.5)) - 0.1)))",
            "max(x*x + y*y - 0.8, -(min(x - 0.1, y + 0.2))) + min(0.05, x*y)",
        ];
        for src in sources {
            let expr = Expression::parse(src).unwrap();
            for p in [Precision::F64, Precision::F32] {
                for tiles in [vec![64, 8, 1], vec![16, 4, 2, 1]] {
                    let opts = RenderOptions {
                        tiles,
                        ..RenderOptions::new(160, 96, [-1.0, 1.0, -0.75, 0.75])
                    };
                    let eval = Evaluator::new(&expr, p, BackendChoice::Cpu).unwrap();
                    let plain = render(&eval, &opts).unwrap();
                    let (pruned, stats) = render_pruned(&expr, p, &opts).unwrap();
                    assert!(plain.classes == pruned.classes, "{src} {p}: other classes");
                    assert_eq!(plain.rounds, pruned.rounds, "{src} {p}");
                    let last = stats.last().unwrap().mean_insts;
                    assert!(last < stats[0].mean_insts, "{src} {p}: {stats:?}");
                }
            }
        }
    }
}
