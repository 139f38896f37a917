//! Region specialization: the expression that matters on a region, shorter than the whole.
//!
//! Large implicit models are min/max trees (the Prospero model: 7,866 operations, 2,878 of
//! them min or max). On a small region R most branches cannot win: where `a <= b` holds on all
//! of R, `min(a, b)` is `a` there, and `b` (with everything only it uses) can be dropped. This
//! module finds those choices and rebuilds the smaller graph, for boxes inside R.
//!
//! # Region facts
//! [`RegionFacts::eval`] evaluates *every* live node of the graph on R with the program's own
//! semantics: the graph is lowered with every node an output (the same lowering, so the same
//! code for each node as in the program that computes the outputs) and run by the CPU
//! evaluator, in the program's precision. So a node's fact is exactly the enclosure the full
//! program computes for that node on R.
//!
//! # Why a pruned program gives the same enclosures
//! Interval evaluation is inclusion-isotonic: for a box B inside R, each node's enclosure on B
//! lies inside its enclosure on R. If `hi(a on R) <= lo(b on R)`, then on B,
//! `hi(a on B) <= hi(a on R) <= lo(b on R) <= lo(b on B)`, and `min(a on B, b on B)` *is*
//! `a on B`, bound for bound. So replacing `min(a, b)` by `a` changes no bit of any output on
//! any box inside R (the tests check this on random expressions and regions), and in
//! particular no classification. Containment needs even less: `a <= b` at every point of R, so
//! `min(a, b) = a` as real functions there.
//!
//! Isotonicity is a property of the lowering's computed bounds, not only of the real
//! functions: a bound that is exact at one point and stepped outward next to it (exp(0) = 1,
//! but exp(1e-20) rounded down and stepped is below 1) was not monotone in x, so a fact drawn
//! from R (a nonnegative `exp(x) - 1` under a sqrt, a divisor away from 0) was false on a box
//! inside it. `Lowering::bound` clamps a monotone function's bound by its exact value on the
//! exact point's side (issue 29's audit); held by `tests/cpu/specialize.rs`
//! (`regions_at_exact_points_and_poles_keep_the_full_programs_bits`, and random regions). The
//! bits are the full program's up to the sign of a zero (`min(+0, -0)`), on non-empty boxes.
//!
//! The one exception is emptiness: `min(a, b)` is empty where either side is, so a side is
//! dropped only when neither side can be empty on a box inside R ([`RegionFacts::may_be_empty`]:
//! no domain-restricted operation whose argument reaches outside its domain on R). Boxes inside
//! R are not empty (a search splits non-empty boxes).
//!
//! Constant folding in the pruned graph runs in f64 (the crate's folder): exactly the run-time
//! semantics of an f64 program, but not of an f32 one, whose run time computes in f32 (a
//! subexpression such as `exp(max(|x|, 2))` becomes constant on a region where `|x| <= 2`;
//! folded in f64 and rounded to f32 it is a few ulps tighter than the f32 program computes, and
//! the bits would differ). So f32 graphs are rebuilt without folding.
//!
//! `hull` and `intersect` are not pruned: they act on the intervals, not pointwise, so their
//! result on B is not a function of one side even when the sides do not overlap on R.

use crate::interval::Interval;
use crate::ir::sign::Fact;
use crate::ir::{Graph, NodeId, Op};
use crate::lower::{lower_with, LowerError};
use crate::scalar::Precision;

/// The enclosure of every node of a graph on a region, as the program computes it.
#[derive(Clone, Debug)]
pub struct RegionFacts {
    /// By node index: the enclosure on the region (NaN bounds: empty, or a dead node).
    pub enclosures: Vec<Interval>,
    /// By node index: whether the node may be empty on some box inside the region.
    pub may_be_empty: Vec<bool>,
    /// The precision the enclosures were computed in (that of the programs to specialize).
    pub precision: Precision,
}

/// The graph with every live node an output, lowered in `precision`: one program that computes
/// every node's enclosure, and the node of each output pair.
pub struct NodeProgram {
    /// The program (output k is node `nodes[k]`).
    pub program: crate::scalar::Program,
    /// The node of each output.
    pub nodes: Vec<NodeId>,
    /// The graph's node count.
    len: usize,
}

impl NodeProgram {
    /// Lowers `graph` with its live nodes as outputs.
    pub fn new(graph: &Graph, precision: Precision) -> Result<NodeProgram, LowerError> {
        NodeProgram::with_facts(graph, precision, None)
    }

    /// [`NodeProgram::new`] with facts per node that hold on every box it will be given
    /// ([`Specialized::facts`] of the region these boxes lie in).
    pub(crate) fn with_facts(
        graph: &Graph,
        precision: Precision,
        known: Option<&[Fact]>,
    ) -> Result<NodeProgram, LowerError> {
        let live = graph.live();
        let nodes: Vec<NodeId> = graph.ids().filter(|id| live[id.index()]).collect();
        let mut all = graph.clone();
        all.outputs = nodes.clone();
        let program = lower_with(&all, precision, known)?;
        Ok(NodeProgram {
            program,
            nodes,
            len: graph.len(),
        })
    }

    /// The facts of `graph` (the graph this program was made from) on each of `regions` (each
    /// one interval per variable, in the graph's variable order), evaluated together. For an
    /// f32 program the regions' bounds are rounded outward to f32 first, as the evaluator
    /// rounds a batch's.
    pub fn facts(&self, graph: &Graph, regions: &[Vec<Interval>]) -> Vec<RegionFacts> {
        let n = regions.len();
        let out = eval_boxes(&self.program, regions);
        (0..n)
            .map(|r| {
                let mut enclosures = vec![
                    Interval {
                        lo: f64::NAN,
                        hi: f64::NAN
                    };
                    self.len
                ];
                for (k, node) in self.nodes.iter().enumerate() {
                    enclosures[node.index()] = Interval {
                        lo: out[(2 * k) * n + r],
                        hi: out[(2 * k + 1) * n + r],
                    };
                }
                let may_be_empty = may_be_empty(graph, &enclosures);
                RegionFacts {
                    enclosures,
                    may_be_empty,
                    precision: self.program.precision,
                }
            })
            .collect()
    }
}

/// Runs `program` on `boxes` (one interval per variable each) on the CPU evaluator, the bounds
/// rounded outward to f32 for an f32 program; the outputs in the batch layout.
pub(crate) fn eval_boxes(program: &crate::scalar::Program, boxes: &[Vec<Interval>]) -> Vec<f64> {
    let n = boxes.len();
    let n_vars = program.n_vars();
    let mut inputs = vec![0.0; 2 * n_vars * n];
    for (r, b) in boxes.iter().enumerate() {
        for (v, &iv) in b.iter().enumerate().take(n_vars) {
            let iv = match program.precision {
                Precision::F64 => iv,
                Precision::F32 => iv.to_f32_enclosure(),
            };
            inputs[(2 * v) * n + r] = iv.lo;
            inputs[(2 * v + 1) * n + r] = iv.hi;
        }
    }
    crate::cpu::eval::eval_soa(program, &inputs, n)
}

impl RegionFacts {
    /// The facts of `graph` on one region (one interval per variable), in `precision`.
    pub fn eval(
        graph: &Graph,
        precision: Precision,
        region: &[Interval],
    ) -> Result<RegionFacts, LowerError> {
        let p = NodeProgram::new(graph, precision)?;
        Ok(p.facts(graph, &[region.to_vec()]).remove(0))
    }
}

/// Whether `iv` lies strictly inside (lo, hi).
fn strictly_inside(iv: Interval, lo: f64, hi: f64) -> bool {
    lo < iv.lo && iv.hi < hi
}

/// By node: whether the node may be empty on some non-empty box inside the region, given every
/// node's enclosure on the region. A node is non-empty when its arguments are and its operation
/// is total on their enclosures (a domain-restricted operation whose argument stays inside the
/// domain on the region stays inside it on every box inside).
fn may_be_empty(graph: &Graph, enc: &[Interval]) -> Vec<bool> {
    let mut empty = vec![true; graph.len()];
    for id in graph.ids() {
        let op = graph.op(id);
        let args = op.args();
        if args.iter().any(|a| empty[a.index()]) {
            continue; // stays "may be empty"
        }
        let e = |k: usize| enc[args[k].index()];
        let total = match op {
            Op::Var(_) => true,
            Op::Const(c) => !c.is_empty(),
            Op::Neg(_)
            | Op::Add(..)
            | Op::Sub(..)
            | Op::Mul(..)
            | Op::Sqr(_)
            | Op::Abs(_)
            | Op::Min(..)
            | Op::Max(..)
            | Op::Fma(..)
            | Op::Hull(..)
            | Op::RoundInt(..)
            | Op::Round(_)
            | Op::Sign(_) => true,
            Op::Sqrt(_) => e(0).lo >= 0.0,
            // x / [0, 0] is empty; a divisor away from 0 never is.
            Op::Div(..) => e(1).lo > 0.0 || e(1).hi < 0.0,
            // A negative power or root is empty at [0, 0] (a pole); x^n for n >= 0 never is.
            Op::Pown(_, n) => n >= 0 || e(0).lo > 0.0 || e(0).hi < 0.0,
            Op::Rootn(_, n) => {
                (n > 0 && (n % 2 != 0 || e(0).lo >= 0.0))
                    || (n < 0 && (e(0).lo > 0.0 || (n % 2 != 0 && e(0).hi < 0.0)))
            }
            Op::Elem(f, _) => {
                let d = f.row().domain;
                d.is_everywhere() || strictly_inside(e(0), d.lo, d.hi)
            }
            Op::Elem2(f, ..) => f.row().everywhere,
            Op::Mid(_) => e(0).lo.is_finite() && e(0).hi.is_finite(),
            // f, or a part of f that meets the centered form: f's own emptiness.
            Op::MeanValue(..) => true,
            // A point of x, or x: empty only where x is.
            Op::Face(..) => true,
            // May cut the box.
            Op::Descent(..) => false,
            Op::Intersect(..) | Op::Pow(..) => false,
        };
        // A NaN enclosure (empty on the region) is never "total".
        let enclosure = enc[id.index()];
        empty[id.index()] = !total || enclosure.lo.is_nan() || enclosure.hi.is_nan();
    }
    empty
}

/// What specialization did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pruned {
    /// min/max nodes replaced by one of their arguments.
    pub decided: usize,
    /// Live nodes before and after.
    pub nodes_before: usize,
    /// Live nodes after.
    pub nodes_after: usize,
}

/// A graph specialized for a region.
#[derive(Clone, Debug)]
pub struct Specialized {
    /// The smaller graph, for boxes inside the region.
    pub graph: Graph,
    /// By node of `graph`: what its enclosure on the region says on every box inside it (a
    /// sign, non-emptiness, finite nonzero bounds), for [`crate::lower::lower_with`]: products
    /// of a known sign lose their sign tests, non-empty nodes their emptiness tests.
    pub facts: Vec<Fact>,
    /// What was decided.
    pub stats: Pruned,
}

/// Whether every operation of `graph` is inclusion-isotonic (its result on a smaller box lies
/// in its result on a larger one), which region facts need: the midpoint (`Mid`) and the forms
/// built on it are not.
fn isotonic(graph: &Graph) -> bool {
    graph.ids().all(|id| {
        !matches!(
            graph.op(id),
            Op::Mid(_) | Op::MeanValue(..) | Op::Face(..) | Op::Descent(..)
        )
    })
}

/// The graph for boxes inside the region whose facts are `facts`: every min/max whose sides do
/// not overlap there (and cannot be empty) replaced by the side that wins, and what only the
/// other side used dropped; with every remaining node's region facts. A graph with an
/// operation that is not inclusion-isotonic (the mean-value form's midpoint) is returned as it
/// is, with no facts: its enclosure on the region says nothing about a box inside.
pub fn specialize(graph: &Graph, facts: &RegionFacts) -> Specialized {
    let enc = &facts.enclosures;
    let empty = &facts.may_be_empty;
    let mut decided = 0;
    let unfolded;
    let graph = match facts.precision {
        Precision::F64 => graph,
        Precision::F32 => {
            unfolded = graph.clone().with_folder(None);
            &unfolded
        }
    };
    let count = |g: &Graph| g.live().iter().filter(|&&l| l).count();
    if !isotonic(graph) {
        return Specialized {
            graph: graph.clone(),
            facts: Vec::new(),
            stats: Pruned {
                decided: 0,
                nodes_before: count(graph),
                nodes_after: count(graph),
            },
        };
    }
    // Region facts by node of the graph being built (several old nodes may map to one).
    let mut known: Vec<Fact> = Vec::new();
    let note = |known: &mut Vec<Fact>, new: NodeId, f: Fact| {
        if known.len() <= new.index() {
            known.resize(new.index() + 1, Fact::UNKNOWN);
        }
        known[new.index()] = known[new.index()].and(f);
    };
    // `rebuild` keeps every node live in the old graph; the second pass drops the ones only a
    // losing side used.
    let chosen = graph.rebuild(|g, op, old, map| {
        let old_op = graph.op(old);
        let pick = match old_op {
            Op::Min(a, b) | Op::Max(a, b) if !empty[a.index()] && !empty[b.index()] => {
                let (ea, eb) = (enc[a.index()], enc[b.index()]);
                let a_below = ea.hi <= eb.lo;
                let b_below = eb.hi <= ea.lo;
                match (old_op, a_below, b_below) {
                    (Op::Min(..), true, _) | (Op::Max(..), _, true) => Some(a),
                    (Op::Min(..), _, true) | (Op::Max(..), true, _) => Some(b),
                    _ => None,
                }
            }
            _ => None,
        };
        let new = match pick {
            Some(side) => {
                decided += 1;
                map[side.index()].expect("arguments precede users")
            }
            None => g.add(op, Default::default()),
        };
        let e = enc[old.index()];
        note(
            &mut known,
            new,
            Fact::of_enclosure(e.lo, e.hi, empty[old.index()]),
        );
        new
    });
    let mut facts2: Vec<Fact> = Vec::new();
    let pruned = chosen.rebuild(|g, op, old, _| {
        let new = g.add(op, Default::default());
        let f = known.get(old.index()).copied().unwrap_or(Fact::UNKNOWN);
        note(&mut facts2, new, f);
        new
    });
    facts2.resize(pruned.len(), Fact::UNKNOWN);
    let stats = Pruned {
        decided,
        nodes_before: count(graph),
        nodes_after: count(&pruned),
    };
    Specialized {
        graph: pruned,
        facts: facts2,
        stats,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Expression;

    fn iv(lo: f64, hi: f64) -> Interval {
        Interval { lo, hi }
    }

    #[test]
    fn min_takes_the_side_that_wins_on_the_region() {
        let e = Expression::parse("min(x, y + 10) + max(x*x, -1)").unwrap();
        let g = e.ir();
        let facts = RegionFacts::eval(g, Precision::F64, &[iv(-1.0, 1.0), iv(0.0, 1.0)]).unwrap();
        let Specialized {
            graph: p, stats, ..
        } = specialize(g, &facts);
        assert_eq!(stats.decided, 2);
        let text = crate::ir::text::to_text(&p);
        assert!(!text.contains("min") && !text.contains("max"), "{text}");
        // Overlapping sides stay.
        let facts = RegionFacts::eval(g, Precision::F64, &[iv(-1.0, 20.0), iv(0.0, 1.0)]).unwrap();
        let stats = specialize(g, &facts).stats;
        assert_eq!(stats.decided, 1, "only the max is decided");
    }

    #[test]
    fn forms_with_a_midpoint_are_not_specialized() {
        // On [0, 1] the midpoint is 0.5, so min(mid(x), 0.5) looks decided; on [0.8, 1] it is
        // 0.5 while mid(x) is 0.9: a region's facts say nothing about a box inside for an
        // operation that is not inclusion-isotonic.
        let e = Expression::parse("min(x*x, 0.5) + x").unwrap();
        let g = e.mean_value_form().unwrap().ir().clone();
        let facts = RegionFacts::eval(&g, Precision::F64, &[iv(0.0, 1.0)]).unwrap();
        let s = specialize(&g, &facts);
        assert_eq!(s.stats.decided, 0);
        assert!(s.facts.is_empty());
    }

    #[test]
    fn a_side_that_may_be_empty_is_kept() {
        // sqrt(x) is empty for x < 0: min(sqrt(x), 5) must stay empty there.
        let e = Expression::parse("min(sqrt(x), 5 + y)").unwrap();
        let g = e.ir();
        let facts = RegionFacts::eval(g, Precision::F64, &[iv(-1.0, 1.0), iv(0.0, 1.0)]).unwrap();
        assert_eq!(specialize(g, &facts).stats.decided, 0);
        let facts = RegionFacts::eval(g, Precision::F64, &[iv(0.0, 1.0), iv(0.0, 1.0)]).unwrap();
        assert_eq!(specialize(g, &facts).stats.decided, 1);
    }
}
