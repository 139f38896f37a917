//! Interval tapes: the program a device interpreter runs, and its pruning on a region.
//!
//! Per-tile programs cannot each be JIT-compiled (Prospero's full program takes seconds), so
//! the pruned render runs a *tape*: the expression's interval operations in order, each
//! reading and writing numbered slots (a register allocation of the SSA graph, so that the
//! slots fit a thread's local memory). One thread evaluates a tape on a box; evaluating it on
//! a tile also records, for every `min`/`max`, which side won on the whole tile; and pruning
//! ([`Tape::pruned`]) keeps what the winners use. The children of the tile run the pruned tape.
//!
//! # Why the classes do not change
//! Interval evaluation is inclusion-isotonic: on a box B inside the tile R every node's
//! enclosure lies in its enclosure on R. Where `hi(a on R) <= lo(b on R)`, on B
//! `hi(a) <= lo(b)` too, and `min(a, b)` on B is `a` on B, bound for bound (up to the sign of a
//! zero: `min(+0, -0)` is `-0` by IEEE, `+0` pruned; the set is the same). So the pruned tape
//! gives every box inside R the full tape's enclosure, and every pixel the same class. A side
//! that may be empty on some box (a `sqrt` whose argument is not >= 0 by the static sign
//! analysis of [`crate::ir::sign`], an empty constant, or a user of one) is never dropped:
//! `min` with the empty set is empty.
//!
//! That argument needs every operation's computed enclosure to be isotonic (on a smaller box,
//! a subset). The generated operations are (their bounds are correctly rounded monotone
//! formulas); an operation that calls a point function may not be in its last bits (a library
//! result padded by ulps is not monotone in its argument), and an operation run by its own
//! lowering knows none of the whole program's sign facts. Pruning stays *sound* regardless:
//! where `hi(a on R) <= lo(b on R)`, every real value of `a` on a point of R is at most every
//! value of `b` there, so `min(a, b)` *is* `a` on R as a real function, and the pruned tape
//! encloses it. With such operations a pixel's class may differ from the plain render's only
//! where one of them is not certain (a proven class is a proof either way).
//!
//! # Semantics
//! Each operation is the tightest enclosure with outward rounding (the same sets as the
//! compiled lowering; the tests compare them): `+`, `-`, `neg` bound by bound; `*` the min and
//! max of the four directed products, a product with a zero factor being 0 (no `0 * inf`);
//! `sqr` by the signs; `sqrt` on the non-negative part, empty below 0; `abs`; `min`/`max`
//! bound by bound. The empty interval is (NaN, NaN) and every operation with an empty argument
//! is empty. Every other operation of one or two arguments (the elementary functions, division,
//! integer powers and roots, roundings, ...) runs by its lowering ([`Extended`]); `fma` as a
//! product and a sum. Both interpreters (`tape/cpu.rs` and the CUDA one in `tape/gpu.rs`) run the same
//! formulas with correctly rounded operations, so they agree bit for bit. Every operation is
//! held on the interval classes (entire, half-lines, [MAX, inf], subnormals, signed zeros,
//! 0 * inf, empty) by the class matrix's tape engine (`tests/cpu/classes.rs`); the CUDA copy
//! by `tape_render_on_the_gpu_equals_the_cpu` (render boxes only: finite regions).

use std::sync::{Arc, OnceLock};

use super::{Plan, RenderOptions, Rendered, Round2};
use crate::cpu::eval::Chunk;

pub(crate) mod cpu;
pub(crate) mod gpu;
pub(crate) mod gradient;
pub(crate) mod sampled;

use crate::interval::Interval;
use crate::ir::sign::Fact;
use crate::ir::{Graph, NodeId, Op};
use crate::round::{self, Round};
use crate::scalar::emit::Ops;
use crate::{Error, Expression, Precision};
pub use sampled::PointSampler;

/// Operation codes of a tape instruction (its low byte).
pub(crate) mod code {
    pub(crate) const CONST: u16 = 0;
    pub(crate) const VAR: u16 = 1;
    pub(crate) const NEG: u16 = 3;
    pub(crate) const ADD: u16 = 4;
    pub(crate) const SUB: u16 = 5;
    pub(crate) const MUL: u16 = 6;
    pub(crate) const SQR: u16 = 7;
    pub(crate) const SQRT: u16 = 8;
    pub(crate) const ABS: u16 = 9;
    pub(crate) const MIN: u16 = 10;
    pub(crate) const MAX: u16 = 11;
    /// The generated operation after MAX: not a tape instruction (no tape is built with it),
    /// Newton's intersection of K(X) with X; numbered on so that the operations' test covers it.
    pub(crate) const INTERSECT: u16 = 12;
    /// The generated operations after it, not tape instructions either: the interval
    /// quotient and hull that a tape's derivatives compose ([`super::Tape::gradient_lanes`]).
    pub(crate) const DIV: u16 = 13;
    pub(crate) const HULL: u16 = 14;
    /// The first operation run by its lowering ([`super::Extended`]): `EXT + k` is the k-th of
    /// the tape's table, up to the low byte's 255.
    pub(crate) const EXT: u16 = 16;
    /// Flag on an operation of [`EXT`] and after: it reads two slots (else one).
    pub(crate) const BINARY: u16 = 0x400;
    /// Flag on MIN/MAX: the first argument may be empty (it is never dropped).
    pub(crate) const A_MAY_BE_EMPTY: u16 = 0x100;
    /// Flag on MIN/MAX: the second argument may be empty.
    pub(crate) const B_MAY_BE_EMPTY: u16 = 0x200;
    /// Flag on MIN/MAX: only the sign of the value matters ([`super::Tape::signs_only`]), so a
    /// side whose sign is known on a tile is dropped (a `min`'s positive side, a `max`'s
    /// negative one).
    pub(crate) const SIGN_ONLY: u16 = 0x800;
}

/// A `min`/`max`'s outcome on a tile: both sides may matter.
pub(crate) const BOTH: u8 = 0;
/// Only the first argument matters on the tile.
pub(crate) const FIRST: u8 = 1;
/// Only the second argument matters on the tile.
pub(crate) const SECOND: u8 = 2;

pub use crate::error::TapeError;

/// One instruction as the interpreter runs it: `op | out << 16 | a << 32 | b << 48`, where
/// `out`, `a` and `b` are slots (CONST: `a` is the constant's index; VAR: the variable's).
pub(crate) type Inst = u64;

fn encode(op: u16, out: u16, a: u16, b: u16) -> Inst {
    op as u64 | (out as u64) << 16 | (a as u64) << 32 | (b as u64) << 48
}

/// The fields of an instruction: (op with flags, out, a, b).
pub(crate) fn decode(i: Inst) -> (u16, u16, u16, u16) {
    (
        i as u16,
        (i >> 16) as u16,
        (i >> 32) as u16,
        (i >> 48) as u16,
    )
}

/// How many slot operands an operation reads.
pub(crate) fn arity(op: u16) -> usize {
    match op & 0xff {
        code::CONST | code::VAR => 0,
        code::ADD | code::SUB | code::MUL | code::MIN | code::MAX => 2,
        _ if op & code::BINARY != 0 => 2,
        _ => 1,
    }
}

/// The operations a tape runs by their lowering, beyond the generated set (`neg` to `max`):
/// every operation of one or two arguments that [`crate::lower::lower_op`] lowers (the
/// elementary functions, division, integer powers and roots, roundings, ...), each once per
/// tape with its arguments renamed x and y. Instruction code [`code::EXT`] + k runs the k-th.
/// The semantics are the lowering's program, run as every backend runs programs: on the CPU
/// by the evaluator ([`crate::cpu::eval::Chunk`], point functions by the reference bounds), on
/// the GPU as the PTX emitter's device function linked into the interpreter (point functions
/// by the CUDA runtime, padded). Shared by a tape and every tape pruned from it.
#[derive(Debug, Default)]
pub(crate) struct Extended {
    ops: Vec<Op>,
    /// The evaluator's programs, made on the first CPU run: f64, f32.
    chunks: [OnceLock<Vec<Chunk>>; 2],
}

impl PartialEq for Extended {
    fn eq(&self, other: &Extended) -> bool {
        self.ops == other.ops
    }
}

/// At most this many operations in one tape's [`Extended`] table (the low byte's codes).
const MAX_EXTENDED: usize = 256 - code::EXT as usize;

impl Extended {
    /// The code of `op` (arguments ignored), added to the table where new; `None` where the
    /// lowering has no program of one or two arguments for it.
    fn code_of(&mut self, op: Op) -> Result<Option<u16>, TapeError> {
        let arity = op.args().len();
        if arity == 0 || arity > 2 {
            return Ok(None);
        }
        let op = op.with_args(&[NodeId(0), NodeId(1)][..arity]);
        let k = match self.ops.iter().position(|&o| o == op) {
            Some(k) => k,
            None => {
                if crate::lower::lower_op(op, Precision::F64).is_none() {
                    return Ok(None);
                }
                if self.ops.len() >= MAX_EXTENDED {
                    return Err(TapeError::Operations(MAX_EXTENDED));
                }
                self.ops.push(op);
                self.ops.len() - 1
            }
        };
        let binary = if arity == 2 { code::BINARY } else { 0 };
        Ok(Some((code::EXT + k as u16) | binary))
    }

    /// The derivative rule of operation `code` (of [`code::EXT`] and after; flags ignored).
    pub(crate) fn rule(&self, code: u16) -> gradient::Rule {
        let k = ((code & 0xff) - code::EXT) as usize;
        self.ops
            .get(k)
            .map_or(gradient::Rule::None, |&op| gradient::Rule::of(op))
    }

    /// Each operation's derivative rule, in code order.
    pub(crate) fn rules(&self) -> Vec<gradient::Rule> {
        self.ops.iter().map(|&op| gradient::Rule::of(op)).collect()
    }

    /// The lowering of each operation in precision `p`, in code order.
    pub(crate) fn programs(&self, p: Precision) -> Vec<crate::scalar::Program> {
        self.ops
            .iter()
            .map(|&op| crate::lower::lower_op(op, p).expect("lowered when it was added"))
            .collect()
    }

    /// The evaluator's programs of precision `p`, made once.
    fn chunks(&self, p: Precision) -> &[Chunk] {
        let k = usize::from(p == Precision::F32);
        self.chunks[k].get_or_init(|| self.programs(p).into_iter().map(Chunk::new).collect())
    }

    /// Operation `code` (of [`code::EXT`] and after) on `n` boxes: `slots[out + l] =
    /// op(slots[a + l], slots[b + l])`, as [`Bound::apply_lanes`]; by the evaluator's chunks,
    /// [`crate::cpu::LANES`] boxes at a time (a tape pass has up to 256: the fortieth
    /// session's wider passes handed them to one chunk, which panicked, on every CPU render of
    /// 1024 pixels a side or more with a function run by its lowering).
    pub(crate) fn apply_lanes<T: Bound>(
        &self,
        code: u16,
        slots: &mut [Iv<T>],
        (out, a, b): (usize, usize, usize),
        n: usize,
    ) {
        thread_local! {
            static SCRATCH: std::cell::RefCell<(Vec<f64>, Vec<f64>, Vec<f64>)> =
                Default::default();
        }
        let chunk = &self.chunks(T::PRECISION)[((code & 0xff) - code::EXT) as usize];
        SCRATCH.with(|s| {
            let (inputs, regs, res) = &mut *s.borrow_mut();
            for first in (0..n).step_by(crate::cpu::LANES) {
                let m = crate::cpu::LANES.min(n - first);
                inputs.clear();
                for at in [a + first, b + first] {
                    inputs.extend(slots[at..at + m].iter().map(|v| v.0.to_f64()));
                    inputs.extend(slots[at..at + m].iter().map(|v| v.1.to_f64()));
                }
                res.resize(2 * m, 0.0);
                let columns: Vec<&[f64]> = inputs.chunks(m).collect();
                chunk.run(&columns, m, regs, res);
                for l in 0..m {
                    slots[out + first + l] = (T::exact(res[l]), T::exact(res[m + l]));
                }
            }
        });
    }
}

/// An SSA tape being built, with each instruction's depth.
#[derive(Default)]
struct Ssa {
    ops: Vec<u16>,
    args: Vec<u32>,
    depth: Vec<usize>,
}

impl Ssa {
    /// Appends an instruction; its index.
    fn push(&mut self, c: u16, a: u16, b: u16) -> Result<u16, TapeError> {
        if self.ops.len() >= u16::MAX as usize {
            return Err(TapeError::TooLarge(self.ops.len()));
        }
        let d = match arity(c) {
            0 => 0,
            1 => self.depth[a as usize] + 1,
            _ => self.depth[a as usize].max(self.depth[b as usize]) + 1,
        };
        self.depth.push(d);
        self.ops.push(c);
        self.args.push(a as u32 | (b as u32) << 16);
        Ok((self.ops.len() - 1) as u16)
    }
}

/// An interval tape over the variables x (number 0) and y (number 1), in two forms: the
/// instructions on slots that the interpreter runs, and the same instructions in SSA form
/// (each operand the index of the instruction that computes it), which pruning reads. The
/// result is the last instruction's, in slot 0.
#[derive(Clone, Debug, PartialEq)]
pub struct Tape {
    /// The instructions on slots.
    pub(crate) insts: Vec<Inst>,
    /// The SSA operands of each instruction, `a | b << 16` (CONST and VAR: as in `insts`).
    pub(crate) args: Vec<u32>,
    /// Constants, indexed by a CONST instruction's `a` (f64 bounds; an f32 run narrows them
    /// outward, as the f32 lowering does). Shared by a tape and every tape pruned from it
    /// (pruning keeps the indices): a Prospero frame holds thousands of pruned tapes.
    pub(crate) consts: Arc<[Interval]>,
    /// The operations run by their lowering (codes [`code::EXT`] and after), shared like the
    /// constants.
    pub(crate) ext: Arc<Extended>,
    /// Slots the tape uses.
    pub(crate) slots: u16,
    /// For each instruction, how many `min`/`max` come before it: where its decision is in
    /// a recording. Made at the tape's first pruning (a tape is pruned once per boundary tile
    /// of its group, and a tape for the last level never).
    choice_index: ChoiceIndex,
}

/// [`Tape::choice_index`]: derived from the instructions, so not part of a tape's identity
/// (two tapes are equal whether or not either has made it).
#[derive(Clone, Debug, Default)]
struct ChoiceIndex(OnceLock<Box<[u16]>>);

impl PartialEq for ChoiceIndex {
    fn eq(&self, _: &ChoiceIndex) -> bool {
        true
    }
}

/// The slot of a tape's result.
pub(crate) const OUT: u16 = 0;

/// Slots for an SSA tape by a backward scan: walking from the end, a value takes a free slot
/// where it is last used (the first use met) and gives it back where it is defined; the result
/// takes slot 0 ([`OUT`]). A straight-line program needs no more slots than values live at
/// once. The CUDA pruning (`tape/gpu.rs`) gives the same number of slots in parallel, handing
/// freed slots out first in first out (`group_slots` in tape.cu): other slot numbers, the same
/// instructions and values (the tests compare classes and tape lengths, not slot numbers).
fn allocate(ops: &[u16], args: &[u32]) -> Result<(Vec<Inst>, u16), TapeError> {
    thread_local! {
        // `slot_of` and `free` below, kept between calls (every pruned tape is allocated).
        static SCRATCH: std::cell::RefCell<(Vec<u16>, Vec<u16>)> = Default::default();
    }
    let n = ops.len();
    let mut scratch = SCRATCH.take();
    let (slot_of, free) = &mut scratch;
    slot_of.clear();
    slot_of.resize(n, u16::MAX);
    free.clear();
    let mut used = 1usize;
    let mut insts = vec![0; n];
    if n > 0 {
        slot_of[n - 1] = OUT;
    }
    // A value's slot: its own, or a free one (a new one when none is free).
    fn take(
        v: usize,
        slot_of: &mut [u16],
        free: &mut Vec<u16>,
        used: &mut usize,
    ) -> Result<u16, TapeError> {
        if slot_of[v] == u16::MAX {
            slot_of[v] = match free.pop() {
                Some(s) => s,
                None => {
                    *used += 1;
                    if *used >= u16::MAX as usize {
                        return Err(TapeError::TooLarge(*used));
                    }
                    (*used - 1) as u16
                }
            };
        }
        Ok(slot_of[v])
    }
    for i in (0..n).rev() {
        // Every instruction of a tape is used; a value nobody reads would still get a slot.
        let out = take(i, slot_of, free, &mut used)?;
        free.push(out);
        let (a, b) = (args[i] as u16, (args[i] >> 16) as u16);
        let (sa, sb) = match arity(ops[i]) {
            0 => (a, b),
            1 => (take(a as usize, slot_of, free, &mut used)?, 0),
            _ => {
                let sa = take(a as usize, slot_of, free, &mut used)?;
                (sa, take(b as usize, slot_of, free, &mut used)?)
            }
        };
        insts[i] = encode(ops[i], out, sa, sb);
    }
    SCRATCH.set(scratch);
    Ok((insts, used as u16))
}

/// Which nodes may be empty on a box of the render: the sign analysis of
/// [`crate::ir::sign`] (a sqrt of what may be negative, a function outside its domain, a
/// division, an empty constant, and their users), with the variables never empty. (Prospero's
/// circles are sqrts of sums of squares: a min/max with a side that may be empty is never
/// pruned, so this analysis decides whether the model prunes at all.)
fn may_be_empty(graph: &Graph) -> Vec<bool> {
    let mut facts: Vec<Fact> = Vec::with_capacity(graph.len());
    for id in graph.ids() {
        let fact = match graph.op(id) {
            Op::Var(_) => Fact {
                maybe_empty: false,
                ..Fact::UNKNOWN
            },
            op => crate::ir::sign::fact_of(op, &facts),
        };
        facts.push(fact);
    }
    facts.iter().map(|f| f.maybe_empty).collect()
}

/// The clusters of min (or of max) that [`Tape::new`] rebalances. A min used only by a min is
/// absorbed into the outermost one (the cluster's root), which combines all their arguments
/// (its leaves). min and max are exact, so any grouping gives the same set (up to the sign
/// of a zero). The leaves are merged as they are computed, two partial results of equal
/// size at a time (a binary counter): depth grows by about twice log2 of the leaves
/// instead of by their number, and only log2 partial results wait in slots. Depth is
/// what the GPU's first level waits for, level by level: Prospero's union of 784 shapes
/// as written is 676 deep.
///
/// Returns which min/max nodes are absorbed into a cluster, and for each node the roots of
/// the clusters it is a leaf of (once per occurrence).
fn min_max_clusters(graph: &Graph, live: &[bool]) -> (Vec<bool>, Vec<Vec<NodeId>>) {
    let uses = graph.use_counts();
    let same_kind = |x: Op, y: Op| {
        matches!(
            (x, y),
            (Op::Min(..), Op::Min(..)) | (Op::Max(..), Op::Max(..))
        )
    };
    let mut absorbed = vec![false; graph.len()];
    for id in graph.ids().filter(|id| live[id.index()]) {
        let op = graph.op(id);
        if matches!(op, Op::Min(..) | Op::Max(..)) {
            for a in op.args() {
                if uses[a.index()] == 1 && same_kind(graph.op(a), op) {
                    absorbed[a.index()] = true;
                }
            }
        }
    }
    // For each node, the roots of the clusters it is a leaf of (once per occurrence).
    let mut feeds: Vec<Vec<NodeId>> = vec![Vec::new(); graph.len()];
    for id in graph
        .ids()
        .filter(|id| live[id.index()] && !absorbed[id.index()])
    {
        if !matches!(graph.op(id), Op::Min(..) | Op::Max(..)) {
            continue;
        }
        let mut stack = vec![id];
        while let Some(n) = stack.pop() {
            for a in graph.op(n).args() {
                if absorbed[a.index()] {
                    stack.push(a);
                } else {
                    feeds[a.index()].push(id);
                }
            }
        }
    }
    (absorbed, feeds)
}

/// How a tape lays out chains of `min` (or of `max`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Chains {
    /// Rebalanced into trees ([`min_max_clusters`]): shallow, for the GPU's first level, which
    /// evaluates a tape depth by depth. A tree's node is decided against its sibling subtree
    /// only, so a leaf below (for min) every other leaf but not its sibling's is kept.
    Balanced,
    /// As the expression writes them (for Prospero and the colonnade, chains): each link
    /// compares one side with the whole rest of the chain, so pruning drops every leaf the rest
    /// dominates. On three columns of the colonnade: 1,149 instructions after pruning
    /// instead of 1,489 (`search::prune`'s test); per ray of its depth map, 621 scalar
    /// instructions instead of 885.
    AsWritten,
}

/// Variables a tape binds at most: a box is this many intervals (a 2-D render's x and y, a
/// ray search's t, u and v).
pub(crate) const VARS: usize = 3;

/// A box: the interval of each variable a tape binds, by the number its VAR instructions
/// name (unused ones anything).
pub(crate) type TapeBox<T> = [Iv<T>; VARS];

impl Tape {
    /// The tape of a graph's first output, x and y bound by name (a 2-D render's).
    pub fn new(graph: &Graph) -> Result<Tape, TapeError> {
        Tape::binding(graph, &["x", "y"], Chains::Balanced)
    }

    /// The tape of a graph's first output, its variables bound by name: `names[k]` is
    /// variable k of the boxes it runs on (at most [`VARS`]).
    pub fn binding(graph: &Graph, names: &[&str], chains: Chains) -> Result<Tape, TapeError> {
        assert!(names.len() <= VARS, "a tape binds at most {VARS} variables");
        let var_of: Vec<u16> = graph
            .vars
            .iter()
            .map(|v| match names.iter().position(|n| n == v) {
                Some(k) => Ok(k as u16),
                None => Err(TapeError::Variable {
                    name: v.to_string(),
                    binds: names.join(", "),
                }),
            })
            .collect::<Result<_, _>>()?;
        let live = graph.live();
        let maybe_empty = may_be_empty(graph);
        let (absorbed, feeds) = match chains {
            Chains::Balanced => min_max_clusters(graph, &live),
            Chains::AsWritten => (vec![false; graph.len()], vec![Vec::new(); graph.len()]),
        };
        // Each cluster's partial results: (instruction, leaves combined, may be empty).
        let mut partial: Vec<Vec<(u16, usize, bool)>> = vec![Vec::new(); graph.len()];
        let combine = |ssa: &mut Ssa, root: Op, a: (u16, usize, bool), b: (u16, usize, bool)| {
            let mut c = if matches!(root, Op::Min(..)) {
                code::MIN
            } else {
                code::MAX
            };
            if a.2 {
                c |= code::A_MAY_BE_EMPTY;
            }
            if b.2 {
                c |= code::B_MAY_BE_EMPTY;
            }
            Ok::<_, TapeError>((ssa.push(c, a.0, b.0)?, a.1 + b.1, a.2 || b.2))
        };
        // The SSA tape: each live node's instruction, its operands by instruction index.
        let mut index_of = vec![u16::MAX; graph.len()];
        let mut ssa = Ssa::default();
        let mut consts = Vec::new();
        let mut ext = Extended::default();
        for id in graph.ids().filter(|id| live[id.index()]) {
            let op = graph.op(id);
            if absorbed[id.index()] {
                continue;
            }
            let s = |n: NodeId| index_of[n.index()];
            let (c, a, b) = match op {
                Op::Min(a, b) | Op::Max(a, b) if chains == Chains::AsWritten => {
                    let leaf = |n: NodeId| (s(n), 1, maybe_empty[n.index()]);
                    let (c, _, _) = combine(&mut ssa, op, leaf(a), leaf(b))?;
                    index_of[id.index()] = c;
                    (u16::MAX, 0, 0)
                }
                Op::Min(..) | Op::Max(..) => {
                    // The cluster's root: the partial results, merged from the last.
                    let mut parts = std::mem::take(&mut partial[id.index()]);
                    while parts.len() > 1 {
                        let b = parts.pop().expect("two");
                        let a = parts.pop().expect("two");
                        parts.push(combine(&mut ssa, op, a, b)?);
                    }
                    index_of[id.index()] = parts[0].0;
                    (u16::MAX, 0, 0)
                }
                Op::Const(k) => {
                    consts.push(k);
                    (code::CONST, (consts.len() - 1) as u16, 0)
                }
                Op::Var(v) => (code::VAR, var_of[v as usize], 0),
                Op::Neg(a) => (code::NEG, s(a), 0),
                Op::Add(a, b) => (code::ADD, s(a), s(b)),
                Op::Sub(a, b) => (code::SUB, s(a), s(b)),
                Op::Mul(a, b) => (code::MUL, s(a), s(b)),
                Op::Sqr(a) | Op::Pown(a, 2) => (code::SQR, s(a), 0),
                Op::Pown(a, 1) => {
                    index_of[id.index()] = s(a);
                    (u16::MAX, 0, 0)
                }
                Op::Sqrt(a) => (code::SQRT, s(a), 0),
                Op::Abs(a) => (code::ABS, s(a), 0),
                // A product and a sum: the same set as the fused operation, rounded twice.
                Op::Fma(a, b, c) => {
                    let ab = ssa.push(code::MUL, s(a), s(b))?;
                    (code::ADD, ab, s(c))
                }
                other => match ext.code_of(other)? {
                    Some(c) => {
                        let args = other.args();
                        (c, s(args[0]), args.get(1).map_or(0, |&b| s(b)))
                    }
                    None => {
                        return Err(TapeError::Operation {
                            op: other.name(),
                            span: graph.span(id),
                        })
                    }
                },
            };
            if consts.len() >= u16::MAX as usize {
                return Err(TapeError::TooLarge(consts.len()));
            }
            if c != u16::MAX {
                index_of[id.index()] = ssa.push(c, a, b)?;
            }
            // Into the clusters this node is a leaf of, merging equal sizes.
            for &root in &feeds[id.index()] {
                let parts = &mut partial[root.index()];
                parts.push((index_of[id.index()], 1, maybe_empty[id.index()]));
                while parts.len() >= 2 && parts[parts.len() - 1].1 == parts[parts.len() - 2].1 {
                    let b = parts.pop().expect("two");
                    let a = parts.pop().expect("two");
                    parts.push(combine(&mut ssa, graph.op(root), a, b)?);
                }
            }
        }
        let Ssa {
            mut ops, mut args, ..
        } = ssa;
        // The output last: with Pown(x, 1) it may be an earlier instruction.
        let out = index_of[graph.outputs[0].index()] as usize;
        ops.truncate(out + 1);
        args.truncate(out + 1);
        Tape::from_ssa(&ops, &args, true, consts.into(), Arc::new(ext))
    }

    /// The tape of an SSA program, given slots; without `ssa`, its SSA operands are not kept
    /// (see [`Tape::prune_lane`]).
    fn from_ssa(
        ops: &[u16],
        args: &[u32],
        ssa: bool,
        consts: Arc<[Interval]>,
        ext: Arc<Extended>,
    ) -> Result<Tape, TapeError> {
        let (insts, slots) = allocate(ops, args)?;
        Ok(Tape {
            insts,
            args: if ssa { args.to_vec() } else { Vec::new() },
            consts,
            ext,
            slots,
            choice_index: ChoiceIndex::default(),
        })
    }

    /// The tape as an IR graph over the variables `names` (variable k of the tape named
    /// `names[k]`), to be lowered whole and compiled where a pruned tape runs on many boxes (a
    /// block of rays' searches): the same operations, so the same sets. Needs the SSA
    /// operands (not a tape pruned without them: [`Tape::prune_lane`]).
    ///
    /// Returns the graph and the node of each instruction.
    fn graph(&self, names: &[&str]) -> (Graph, Vec<NodeId>) {
        use crate::syntax::ast::Span;
        let vars: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let mut g = Graph::new(vars, vec![Span::default(); names.len()], None);
        let mut node: Vec<NodeId> = Vec::with_capacity(self.len());
        for (i, &inst) in self.insts.iter().enumerate() {
            let op = inst as u16;
            let (a, b) = (self.args[i] as u16, (self.args[i] >> 16) as u16);
            let (x, y) = (|| node[a as usize], || node[b as usize]);
            let op = match op & 0xff {
                code::CONST => Op::Const(self.consts[a as usize]),
                code::VAR => Op::Var(a as u32),
                code::NEG => Op::Neg(x()),
                code::ADD => Op::Add(x(), y()),
                code::SUB => Op::Sub(x(), y()),
                code::MUL => Op::Mul(x(), y()),
                code::SQR => Op::Sqr(x()),
                code::SQRT => Op::Sqrt(x()),
                code::ABS => Op::Abs(x()),
                code::MIN => Op::Min(x(), y()),
                code::MAX => Op::Max(x(), y()),
                c => {
                    let ext = self.ext.ops[(c - code::EXT) as usize];
                    ext.with_args(&[x(), y()][..arity(op)])
                }
            };
            node.push(g.add(op, Span::default()));
        }
        g.outputs.push(*node.last().expect("a tape has an output"));
        (g, node)
    }

    /// The tape lowered whole (its graph over `names`) for boxes inside `region`,
    /// with the facts its instructions' enclosures on the region give (signs, nonempty,
    /// finite and nonzero bounds: the lowering drops the sign cases and emptiness tests they
    /// decide), as the region specialization of the eighth session did. Facts only for
    /// instructions of the generated set whose operands are too: their computed enclosures are
    /// isotonic (correctly rounded monotone formulas), so an enclosure on a box inside the
    /// region lies in the one on the region and the fact holds there too; an operation run by
    /// its lowering may call a point function, whose padded bounds are not isotonic in their
    /// last bits, so it and what depends on it get no fact.
    pub(crate) fn lowered_on<T: Bound>(
        &self,
        names: &[&str],
        region: &TapeBox<T>,
    ) -> Result<crate::scalar::Program, crate::lower::LowerError> {
        let (graph, node) = self.graph(names);
        let values = self.values(region, None);
        let mut facts = vec![Fact::UNKNOWN; graph.len()];
        // Per instruction: whether its enclosure gives facts, and whether it may be empty on
        // a box inside the region.
        let (mut known, mut empty) = (vec![false; self.len()], vec![true; self.len()]);
        for (i, &inst) in self.insts.iter().enumerate() {
            let op = inst as u16;
            let (a, b) = (self.args[i] as u16 as usize, (self.args[i] >> 16) as usize);
            let args: &[usize] = match arity(op) {
                0 => &[],
                1 => &[a],
                _ => &[a, b],
            };
            known[i] = op & 0xff < code::EXT && args.iter().all(|&k| known[k]);
            if !known[i] {
                continue;
            }
            empty[i] = args.iter().any(|&k| empty[k])
                || match op & 0xff {
                    code::CONST => self.consts[a].is_empty(),
                    // Not nonempty unless the argument's lower bound is >= 0 (NaN is not).
                    code::SQRT => values[a]
                        .0
                        .to_f64()
                        .partial_cmp(&0.0)
                        .is_none_or(|o| o.is_lt()),
                    _ => false,
                };
            let (lo, hi) = (values[i].0.to_f64(), values[i].1.to_f64());
            facts[node[i].index()] = Fact::of_enclosure(lo, hi, empty[i]);
        }
        crate::lower::lower_with(&graph, T::PRECISION, Some(&facts))
    }

    /// The tape for a search that asks only for the sign of the result on each box (a render's
    /// and a voxel search's classes: outside where the lower bound is > 0, inside where the
    /// upper bound is < 0): every `min`/`max` whose value reaches the result only through
    /// `min`, `max` and `neg` gets [`code::SIGN_ONLY`], and its choice on a tile may also drop
    /// a side by its sign alone (*sign demand*). The instructions and values are unchanged; the
    /// tapes pruned from it differ.
    ///
    /// Why the classes do not change: where `lo(a) > 0` on a tile, on every box inside it
    /// (isotonicity, as for today's choices) `min(a, b)`'s bounds `min(lo a, lo b)` and
    /// `min(hi a, hi b)` are each < 0, = 0 or > 0 exactly where `lo b` and `hi b` are, so `b`
    /// may stand for the `min` wherever only those signs matter; likewise `max(a, b)` where
    /// `hi(a) < 0`, and `neg` maps the signs of the bounds onto each other. By induction from
    /// the result, each flagged instruction's bounds keep their signs in every pruned tape, and
    /// so does the result: the same class on every box. And sound without isotonicity: where
    /// `a > 0` is proven on the tile, the real `min(a, b)` has `b`'s sign at each of its
    /// points. A side that may be empty is never dropped, as before. The flags survive
    /// pruning: a replaced `min`'s users become its winner's, and those were the result or
    /// flagged `min`/`max`/`neg`. Only exact operations pass the demand on: a rounded one such
    /// as `sqr` or a product may turn a tiny positive bound into 0, so the signs of its bounds
    /// are not a function of its argument's.
    pub fn signs_only(mut self) -> Tape {
        let n = self.len();
        if self.args.len() != n {
            return self;
        }
        // sign[i]: every user of instruction i seen so far (all of them by the time the
        // backward walk reaches i: users come after) is a flagged min/max or a neg whose own
        // value matters by its sign only; the result's sign is all that matters.
        let mut sign = vec![true; n];
        for i in (0..n).rev() {
            let op = self.insts[i] as u16;
            let passes = sign[i] && matches!(op & 0xff, code::MIN | code::MAX | code::NEG);
            if sign[i] && is_choice(self.insts[i]) {
                self.insts[i] |= u64::from(code::SIGN_ONLY);
            }
            let (a, b) = (self.args[i] as u16 as usize, (self.args[i] >> 16) as usize);
            match arity(op) {
                0 => {}
                1 => sign[a] &= passes,
                _ => {
                    sign[a] &= passes;
                    sign[b] &= passes;
                }
            }
        }
        self
    }

    /// Instructions.
    pub fn len(&self) -> usize {
        self.insts.len()
    }

    /// Whether the tape has no instructions (never: the output is one).
    pub fn is_empty(&self) -> bool {
        self.insts.is_empty()
    }

    /// Operations run by their lowering ([`Extended`]): distinct functions, powers, ...
    pub(crate) fn extended(&self) -> usize {
        self.ext.ops.len()
    }

    /// Slots a thread needs.
    pub(crate) fn slots(&self) -> usize {
        self.slots as usize
    }

    /// `min` and `max` instructions (the choices an evaluation records).
    pub(crate) fn choices(&self) -> usize {
        self.insts.iter().filter(|&&i| is_choice(i)).count()
    }

    /// The enclosure of the expression on the box `x` × `y`, evaluated in precision `p`
    /// (in f32 the bounds are first rounded outward to f32).
    pub fn enclosure(&self, p: Precision, x: Interval, y: Interval) -> Interval {
        fn run<T: Bound>(t: &Tape, x: Interval, y: Interval) -> Interval {
            let (lo, hi) = t.eval(&boxed::<T>(&[x, y]), None);
            Interval {
                lo: lo.to_f64(),
                hi: hi.to_f64(),
            }
        }
        match p {
            Precision::F64 => run::<f64>(self, x, y),
            Precision::F32 => run::<f32>(self, x, y),
        }
    }

    /// The tape for boxes inside the region `x` × `y`: evaluated there in precision `p`, and
    /// pruned with the outcomes of its `min`s and `max`s ([`Tape::enclosure`] on any box inside
    /// the region is the same set with either tape).
    pub fn pruned(&self, p: Precision, x: Interval, y: Interval) -> Tape {
        fn run<T: Bound>(t: &Tape, x: Interval, y: Interval) -> Tape {
            let mut choices = Vec::new();
            t.eval(&boxed::<T>(&[x, y]), Some(&mut choices));
            t.prune(&choices)
        }
        match p {
            Precision::F64 => run::<f64>(self, x, y),
            Precision::F32 => run::<f32>(self, x, y),
        }
    }

    /// The tape for boxes inside `region` (one interval per variable the tape binds, in its
    /// order): [`Tape::pruned`] for any number of variables.
    pub fn pruned_on(&self, p: Precision, region: &[Interval]) -> Tape {
        fn run<T: Bound>(t: &Tape, region: &[Interval]) -> Tape {
            let mut choices = Vec::new();
            t.eval(&boxed::<T>(region), Some(&mut choices));
            t.prune(&choices)
        }
        match p {
            Precision::F64 => run::<f64>(self, region),
            Precision::F32 => run::<f32>(self, region),
        }
    }

    /// The program the tape lowers to for boxes inside `region` in precision `p`
    /// ([`Tape::lowered_on`]; the variables named `names`, in the tape's order).
    pub fn program_on(
        &self,
        names: &[&str],
        p: Precision,
        region: &[Interval],
    ) -> Result<crate::scalar::Program, crate::lower::LowerError> {
        match p {
            Precision::F64 => self.lowered_on(names, &boxed::<f64>(region)),
            Precision::F32 => self.lowered_on(names, &boxed::<f32>(region)),
        }
    }

    /// The instructions by depth (an operand's depth is less than its user's): `order` lists
    /// the instruction indices depth by depth, depth d being `order[starts[d]..starts[d + 1]]`;
    /// and `choice[i]`, the number of `min`/`max` before instruction i (its choice's index in
    /// a recorded evaluation). The GPU's first level evaluates a tape depth by depth, one block
    /// per tile.
    pub(crate) fn depths(&self) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
        let n = self.len();
        let mut depth = vec![0usize; n];
        let mut choice = vec![0u32; n];
        let mut k = 0;
        for i in 0..n {
            let op = self.insts[i] as u16;
            let (a, b) = (self.args[i] as u16 as usize, (self.args[i] >> 16) as usize);
            depth[i] = match arity(op) {
                0 => 0,
                1 => depth[a] + 1,
                _ => depth[a].max(depth[b]) + 1,
            };
            choice[i] = k;
            k += u32::from(is_choice(self.insts[i]));
        }
        let levels = depth.iter().max().map_or(0, |d| d + 1);
        let mut starts = vec![0u32; levels + 1];
        for &d in &depth {
            starts[d + 1] += 1;
        }
        for d in 0..levels {
            starts[d + 1] += starts[d];
        }
        let mut next = starts.clone();
        let mut order = vec![0u32; n];
        for (i, &d) in depth.iter().enumerate() {
            order[next[d] as usize] = i as u32;
            next[d] += 1;
        }
        (order, starts, choice)
    }

    /// The tape for boxes inside a tile on which an evaluation recorded `choices`: a decided
    /// `min`/`max` is replaced by its winner wherever it is used, what only the losers used is
    /// dropped, and the rest is renumbered and given slots again.
    pub(crate) fn prune(&self, choices: &[u8]) -> Tape {
        self.prune_lane(choices, 0, 1, true)
    }

    /// [`Tape::prune`] with the decisions of lane `lane` of a recording of `lanes` lanes
    /// ([`Tape::eval_lanes`]: the k-th at `record[k * lanes + lane]`), read where they are;
    /// without `ssa`, the tape has no SSA operands: it runs as before and cannot be pruned or
    /// depth-analysed (for tapes that never are: the last level of a CPU render).
    pub(crate) fn prune_lane(&self, record: &[u8], lane: usize, lanes: usize, ssa: bool) -> Tape {
        const KEPT: u8 = 1;
        const REPLACED: u8 = 2;
        /// `live`, `state`, `m`, `reached`, `ops` and `args` below.
        type Scratch = (Vec<u64>, Vec<u8>, Vec<u16>, Vec<u16>, Vec<u16>, Vec<u32>);
        thread_local! {
            // Kept between calls: a render prunes thousands of tapes (and the SSA tape is
            // copied out only where it is kept: the last level's tapes hold none).
            static SCRATCH: std::cell::RefCell<Scratch> = Default::default();
        }
        let n = self.len();
        let mut scratch = SCRATCH.take();
        let (live, state, m, reached, ops, args) = &mut scratch;
        // Backward: which instructions the result needs (`live`, one bit each: most of a tape
        // is dead on a small tile, and a scan of one flag per instruction was a third of the
        // pruning; the bits are visited highest first, 64 dead ones per word test); state[i]
        // whether a needed one is kept or replaced, m[i] the winner of a replaced one;
        // `reached` the needed and the replaced ones, last first (the forward pass visits only
        // these). Operands come before their users, so a bit set while visiting instruction i
        // is below i and is visited after it. `state` and `m` are written before they are
        // read, for the reached instructions only: no clearing.
        live.clear();
        live.resize(n.div_ceil(64), 0);
        state.resize(n, 0);
        m.resize(n, 0);
        reached.clear();
        let mark = |live: &mut [u64], j: usize| live[j >> 6] |= 1u64 << (j & 63);
        mark(live, n - 1);
        let mut kept = 0usize;
        let index = self.choice_index.0.get_or_init(|| {
            let mut k = 0u16;
            let index = self.insts.iter().map(|&inst| {
                let at = k;
                k += u16::from(is_choice(inst));
                at
            });
            index.collect()
        });
        for w in (0..live.len()).rev() {
            while live[w] != 0 {
                let bit = 63 - live[w].leading_zeros() as usize;
                live[w] &= !(1u64 << bit);
                let i = w * 64 + bit;
                let op = self.insts[i] as u16;
                reached.push(i as u16);
                let choice = if is_choice(self.insts[i]) {
                    record[index[i] as usize * lanes + lane]
                } else {
                    BOTH
                };
                let (a, b) = (self.args[i] as u16 as usize, (self.args[i] >> 16) as usize);
                if choice == FIRST || choice == SECOND {
                    let winner = if choice == FIRST { a } else { b };
                    state[i] = REPLACED;
                    m[i] = winner as u16;
                    mark(live, winner);
                    continue;
                }
                kept += 1;
                state[i] = KEPT;
                if arity(op) >= 1 {
                    mark(live, a);
                }
                if arity(op) == 2 {
                    mark(live, b);
                }
            }
        }
        // Forward: new indices (a replaced instruction takes its winner's), the SSA tape.
        ops.clear();
        args.clear();
        ops.reserve(kept);
        args.reserve(kept);
        for &i in reached.iter().rev() {
            let i = i as usize;
            if state[i] == REPLACED {
                m[i] = m[m[i] as usize];
                continue;
            }
            let op = self.insts[i] as u16;
            let (a, b) = (self.args[i] as u16, (self.args[i] >> 16) as u16);
            let (a, b) = match arity(op) {
                0 => (a, b),
                1 => (m[a as usize], 0),
                _ => (m[a as usize], m[b as usize]),
            };
            m[i] = ops.len() as u16;
            ops.push(op);
            args.push(a as u32 | (b as u32) << 16);
        }
        let tape = Tape::from_ssa(ops, args, ssa, self.consts.clone(), self.ext.clone())
            .expect("a pruned tape needs no more slots than its parent");
        SCRATCH.set(scratch);
        tape
    }
}

/// The box of f64 intervals `vars` in `T`, each bound rounded outward (the rest NaN).
pub(crate) fn boxed<T: Bound>(vars: &[Interval]) -> TapeBox<T> {
    let mut b = [(T::nan(), T::nan()); VARS];
    for (k, v) in vars.iter().enumerate() {
        b[k] = (T::lo_of(v.lo), T::hi_of(v.hi));
    }
    b
}

/// Which side decides a `min` or `max` (`op`, with its flags) of `x` and `y` on every box
/// inside this one (the CPU interpreter's rule for each lane, `cpu.rs` `choices`, and the
/// gradient's min/max rule): [`FIRST`] where `x` lies below `y` (above, for a max) and `y`
/// cannot be empty, else [`SECOND`] likewise; where neither, with [`code::SIGN_ONLY`] (sign
/// demand, [`Tape::signs_only`]), FIRST where `y` is > 0 (< 0, for a max: a side that cannot
/// change the result's sign) and cannot be empty, else SECOND likewise; else [`BOTH`]. The
/// same tests as `step` in tape.cu, without branches.
#[inline(always)]
pub(crate) fn choice<T: Bound>(op: u16, x: Iv<T>, y: Iv<T>) -> u8 {
    let first_ok = u8::from(op & code::B_MAY_BE_EMPTY == 0);
    let second_ok = u8::from(op & code::A_MAY_BE_EMPTY == 0);
    let sign = u8::from(op & code::SIGN_ONLY != 0);
    const { assert!(BOTH == 0 && FIRST == 1 && SECOND == 2) };
    let zero = T::lo_of(0.0);
    let (a_wins, b_wins, a_by_sign, b_by_sign) = if op & 0xff == code::MIN {
        (x.1 <= y.0, y.1 <= x.0, y.0 > zero, x.0 > zero)
    } else {
        (x.0 >= y.1, y.0 >= x.1, y.1 < zero, x.1 < zero)
    };
    let first = u8::from(a_wins) & first_ok;
    let second = u8::from(b_wins) & second_ok & (first ^ 1);
    let open = sign & ((first | second) ^ 1);
    let first_s = u8::from(a_by_sign) & first_ok & open;
    let second_s = u8::from(b_by_sign) & second_ok & open & (first_s ^ 1);
    (first | first_s) | (second | second_s) << 1
}

fn is_choice(i: Inst) -> bool {
    matches!(i as u16 & 0xff, code::MIN | code::MAX)
}

/// The generated operation `code` (not `min`/`max`'s choice) on `a` (and `b`) in the
/// precision of `$ops`.
macro_rules! apply {
    ($ops:path, $code:expr, $a:expr, $b:expr) => {{
        use $ops as o;
        match $code {
            code::NEG => o::neg($a),
            code::ADD => o::add($a, $b),
            code::SUB => o::sub($a, $b),
            code::MUL => o::mul($a, $b),
            code::SQR => o::sqr($a),
            code::SQRT => o::sqrt($a),
            code::ABS => o::abs($a),
            code::MIN => o::min($a, $b),
            code::INTERSECT => o::intersect($a, $b),
            code::DIV => o::div($a, $b),
            code::HULL => o::hull($a, $b),
            _ => o::max($a, $b),
        }
    }};
}

/// A bound type of the interpreter: f64 or f32, with the correctly rounded operations of the
/// scalar IR's reference rows ([`Ops`]) that the generated operations call.
pub(crate) trait Bound: Ops<Mask = bool> + PartialOrd + Send + Sync {
    /// The precision.
    const PRECISION: Precision;
    fn nan() -> Self;
    /// An f64 lower bound in this precision (rounded down).
    fn lo_of(x: f64) -> Self;
    /// An f64 upper bound in this precision (rounded up).
    fn hi_of(x: f64) -> Self;
    fn to_f64(self) -> f64;
    /// The generated operation `code` of this precision (the codes [`code::NEG`] to
    /// [`code::MAX`] are those of [`crate::lower::interpreted::OPERATIONS`], in order).
    fn apply(code: u16, a: Iv<Self>, b: Iv<Self>) -> Iv<Self>;
    /// [`Bound::apply`] on `n` boxes at once: `slots[out + l] = op(slots[a + l], slots[b +
    /// l])` for `l < n` (the lane layout of the CPU interpreter; `out` may be `a` or `b`).
    fn apply_lanes(code: u16, slots: &mut [Iv<Self>], at: (usize, usize, usize), n: usize);
}

/// [`apply!`] over lanes `first..n`: the operation chosen once, then run on every lane.
macro_rules! apply_lanes {
    ($ops:path, $code:expr, $slots:expr, $out:expr, $a:expr, $b:expr, $first:expr, $n:expr) => {{
        use $ops as o;
        let (s, out, a, b, n) = ($slots, $out, $a, $b, $n);
        macro_rules! each {
            (|$x:ident, $y:ident| $e:expr) => {
                for l in $first..n {
                    let ($x, $y) = (s[a + l], s[b + l]);
                    s[out + l] = $e;
                }
            };
        }
        match $code {
            code::NEG => each!(|x, _y| o::neg(x)),
            code::ADD => each!(|x, y| o::add(x, y)),
            code::SUB => each!(|x, y| o::sub(x, y)),
            code::MUL => each!(|x, y| o::mul(x, y)),
            code::SQR => each!(|x, _y| o::sqr(x)),
            code::SQRT => each!(|x, _y| o::sqrt(x)),
            code::ABS => each!(|x, _y| o::abs(x)),
            code::MIN => each!(|x, y| o::min(x, y)),
            code::INTERSECT => each!(|x, y| o::intersect(x, y)),
            code::DIV => each!(|x, y| o::div(x, y)),
            code::HULL => each!(|x, y| o::hull(x, y)),
            _ => each!(|x, y| o::max(x, y)),
        }
    }};
}

/// [`apply_lanes!`] on the first whole vectors of lanes (`$v`: [`crate::cpu::simd::F64x8`] or
/// `F32x16`, or [`crate::cpu::avx2::F64x4`]: the generated operations run on vectors); how many
/// lanes it did. The caller is compiled for the vector type's instructions.
#[cfg(target_arch = "x86_64")]
macro_rules! apply_vectors {
    ($ops:path, $v:ty, $code:expr, $slots:expr, $out:expr, $a:expr, $b:expr, $n:expr) => {{
        use crate::cpu::simd::Pairs;
        use $ops as o;
        let (s, out, a, b, n) = ($slots, $out, $a, $b, $n);
        assert!(out.max(a).max(b) + n <= s.len(), "lanes inside the slots");
        let width = <$v as Pairs>::WIDTH;
        let whole = n / width * width;
        let p = s.as_mut_ptr() as *mut <$v as Pairs>::Scalar;
        macro_rules! each {
            (|$x:ident, $y:ident| $e:expr) => {
                for l in (0..whole).step_by(width) {
                    // SAFETY: lanes l..l + width of each run lie inside the slots (asserted),
                    // a pair is two scalars (asserted at compile time), the processor has
                    // AVX-512F (the caller's contract), and `out` is written after `a` and `b`
                    // are read (it may be one of them).
                    unsafe {
                        let $x: ($v, $v) = Pairs::load(p.add(2 * (a + l)));
                        let $y: ($v, $v) = Pairs::load(p.add(2 * (b + l)));
                        Pairs::store(p.add(2 * (out + l)), $e);
                    }
                }
            };
        }
        match $code {
            code::NEG => each!(|x, _y| o::neg(x)),
            code::ADD => each!(|x, y| o::add(x, y)),
            code::SUB => each!(|x, y| o::sub(x, y)),
            code::MUL => each!(|x, y| o::mul(x, y)),
            code::SQR => each!(|x, _y| o::sqr(x)),
            code::SQRT => each!(|x, _y| o::sqrt(x)),
            code::ABS => each!(|x, _y| o::abs(x)),
            code::MIN => each!(|x, y| o::min(x, y)),
            code::INTERSECT => each!(|x, y| o::intersect(x, y)),
            code::DIV => each!(|x, y| o::div(x, y)),
            code::HULL => each!(|x, y| o::hull(x, y)),
            _ => each!(|x, y| o::max(x, y)),
        }
        whole
    }};
}

// An interval pair is two scalars, lower bound first: the vector lanes load pairs as pairs of
// scalars.
const _: () = assert!(
    std::mem::size_of::<(f64, f64)>() == 16
        && std::mem::offset_of!((f64, f64), 1) == 8
        && std::mem::size_of::<(f32, f32)>() == 8
        && std::mem::offset_of!((f32, f32), 1) == 4
);

/// The whole vectors of [`Bound::apply_lanes`] (`$v`: [`crate::cpu::simd::F64x8`] for `$t` =
/// f64, `F32x16` for f32) where the processor rounds by AVX-512 ([`round::hardware`]); the
/// lanes done (none elsewhere).
macro_rules! vector_lanes {
    ($ops:path, $v:ty, $t:ty, $code:expr, $slots:expr, $at:expr, $n:expr) => {{
        let (code, slots, at, n): (u16, &mut [Iv<$t>], (usize, usize, usize), usize) =
            ($code, $slots, $at, $n);
        #[cfg(target_arch = "x86_64")]
        {
            #[target_feature(enable = "avx512f")]
            fn run(code: u16, s: &mut [Iv<$t>], at: (usize, usize, usize), n: usize) -> usize {
                let (out, a, b) = at;
                apply_vectors!($ops, $v, code, s, out, a, b, n)
            }
            if round::hardware() {
                // SAFETY: hardware() holds only where the processor has AVX-512F.
                unsafe { run(code, slots, at, n) }
            } else {
                0
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (code, slots, at, n);
            0
        }
    }};
}

/// [`Bound::apply_lanes`] of bound type `$t`: the whole AVX-512 vectors `$wide` where the
/// processor rounds by AVX-512 ([`vector_lanes!`]); the lanes left, on a processor with AVX2
/// and FMA, as whole vectors — `$up` ([`crate::cpu::upward::F64x4Up`], four lanes, or
/// `F32x8Up`, eight) inside one upward-rounding region where the evaluator switches MXCSR
/// ([`crate::cpu::mode_switching`]), else
/// `$quad` ([`crate::cpu::avx2::F64x4`] or `F32x4`, the software directed operations four
/// lanes at a time), the bits of the scalar rows either way — then one at a time in the same
/// copy compiled for AVX2 + FMA (the directed operations' `mul_add` one instruction, not a
/// library call); elsewhere one at a time.
macro_rules! bound_lanes {
    ($ops:path, $wide:ty, $quad:ty, $up:ty, $t:ty, $code:expr, $slots:expr, $at:expr, $n:expr) => {{
        let (code, slots, (out, a, b), n): (u16, &mut [Iv<$t>], (usize, usize, usize), usize) =
            ($code, $slots, $at, $n);
        let done = vector_lanes!($ops, $wide, $t, code, slots, (out, a, b), n);
        /// The lanes left, one at a time.
        #[inline(always)]
        fn rest(code: u16, slots: &mut [Iv<$t>], at: (usize, usize, usize), done: usize, n: usize) {
            let (out, a, b) = at;
            apply_lanes!($ops, code, slots, out, a, b, done, n)
        }
        /// The lanes left on a processor with AVX2 and FMA.
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,fma")]
        fn fused(
            code: u16,
            slots: &mut [Iv<$t>],
            (out, a, b): (usize, usize, usize),
            done: usize,
            n: usize,
        ) {
            let (o, x, y) = (out + done, a + done, b + done);
            let quads = if crate::cpu::mode_switching() {
                // SAFETY: between here and the region's drop only the generated operation runs
                // on `$up` vectors (rounded operations by assembly, the rest compares,
                // selects, loads and stores: `upward`'s contract).
                let region = unsafe { crate::cpu::upward::Upward::enter() };
                let quads = apply_vectors!($ops, $up, code, &mut *slots, o, x, y, n - done);
                drop(region);
                quads
            } else {
                apply_vectors!($ops, $quad, code, &mut *slots, o, x, y, n - done)
            };
            rest(code, slots, (out, a, b), done + quads, n)
        }
        #[cfg(target_arch = "x86_64")]
        if done < n && crate::cpu::avx2::available() {
            // SAFETY: the processor has AVX2 and FMA (available).
            return unsafe { fused(code, slots, (out, a, b), done, n) };
        }
        rest(code, slots, (out, a, b), done, n)
    }};
}

impl Bound for f64 {
    const PRECISION: Precision = Precision::F64;
    fn nan() -> f64 {
        f64::NAN
    }
    fn lo_of(x: f64) -> f64 {
        x
    }
    fn hi_of(x: f64) -> f64 {
        x
    }
    fn to_f64(self) -> f64 {
        self
    }
    fn apply(code: u16, a: Iv<f64>, b: Iv<f64>) -> Iv<f64> {
        apply!(crate::lower::generated::f64_ops, code, a, b)
    }
    fn apply_lanes(code: u16, slots: &mut [Iv<f64>], at: (usize, usize, usize), n: usize) {
        bound_lanes!(
            crate::lower::generated::f64_ops,
            crate::cpu::simd::F64x8,
            crate::cpu::avx2::F64x4,
            crate::cpu::upward::F64x4Up,
            f64,
            code,
            slots,
            at,
            n
        )
    }
}

impl Bound for f32 {
    const PRECISION: Precision = Precision::F32;
    fn nan() -> f32 {
        f32::NAN
    }
    fn lo_of(x: f64) -> f32 {
        round::narrow_f32(x, Round::Down)
    }
    fn hi_of(x: f64) -> f32 {
        round::narrow_f32(x, Round::Up)
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn apply(code: u16, a: Iv<f32>, b: Iv<f32>) -> Iv<f32> {
        apply!(crate::lower::generated::f32_ops, code, a, b)
    }
    fn apply_lanes(code: u16, slots: &mut [Iv<f32>], at: (usize, usize, usize), n: usize) {
        bound_lanes!(
            crate::lower::generated::f32_ops,
            crate::cpu::simd::F32x16,
            crate::cpu::avx2::F32x4,
            crate::cpu::upward::F32x8Up,
            f32,
            code,
            slots,
            at,
            n
        )
    }
}

type Iv<T> = (T, T);

/// What the tape render did in one round.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TapeRound {
    /// Tile size of the round (pixels).
    pub tile: u32,
    /// Tiles evaluated.
    pub boxes: u64,
    /// Mean tape instructions (interval operations) per tile evaluated.
    pub mean_len: f64,
}

/// Where a tape render runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TapeBackend {
    /// The CPU interpreter (`tape/cpu.rs`), tiles in parallel (rayon).
    Cpu,
    /// The CUDA interpreter (`tape/gpu.rs`): the search on the device.
    Gpu,
}

/// [`super::render()`] with per-tile pruned tapes run by an interpreter (no JIT compilation):
/// each boundary tile prunes its parent's tape with the `min`/`max` outcomes of its own
/// evaluation, and its children run the pruned tape. The classes are the plain render's
/// (see the module documentation); the two backends give the same classes and statistics.
/// Returns the image and, per round, the tiles and the mean tape length they ran. To render
/// several frames, prepare a [`TapeRenderer`] once.
pub fn render(
    expr: &Expression,
    precision: Precision,
    backend: TapeBackend,
    opts: &RenderOptions,
) -> Result<(Rendered, Vec<TapeRound>), Error> {
    TapeRenderer::new(expr, precision, backend)?.render(opts)
}

/// An expression's tape, ready to render frames on a backend: built once, and on the GPU
/// uploaded once with the interpreter loaded; each [`TapeRenderer::render`] runs only the
/// search.
pub struct TapeRenderer {
    tape: Tape,
    vars: Vec<String>,
    outputs: usize,
    precision: Precision,
    device: Option<gpu::DeviceTape>,
}

impl TapeRenderer {
    /// Builds the tape of `expr` (a [`TapeError`] for an operation the interpreter does not
    /// run) and, for the GPU, prepares it there.
    pub fn new(
        expr: &Expression,
        precision: Precision,
        backend: TapeBackend,
    ) -> Result<TapeRenderer, Error> {
        let tape = Tape::new(expr.ir()).map_err(super::SearchError::Tape);
        TapeRenderer::with_tape(expr, tape?, precision, backend)
    }

    /// [`TapeRenderer::new`] with `expr`'s tape already built (by a caller that looked at it
    /// first: `search::default_pruned` measures its length).
    pub(crate) fn with_tape(
        expr: &Expression,
        tape: Tape,
        precision: Precision,
        backend: TapeBackend,
    ) -> Result<TapeRenderer, Error> {
        let graph = expr.ir();
        if graph.outputs.len() != 1 {
            return Err(super::SearchError::Outputs(graph.outputs.len()).into());
        }
        // A render asks for classes only: sign demand (the same classes, shorter tapes).
        let tape = tape.signs_only();
        let device = match backend {
            TapeBackend::Cpu => None,
            TapeBackend::Gpu => Some(gpu::DeviceTape::new(&tape, precision)?),
        };
        Ok(TapeRenderer {
            tape,
            vars: graph.vars.clone(),
            outputs: graph.outputs.len(),
            precision,
            device,
        })
    }

    /// The tape.
    pub fn tape(&self) -> &Tape {
        &self.tape
    }

    /// One frame: the image of `opts` and, per round, the tiles and their mean tape length.
    pub fn render(&self, opts: &RenderOptions) -> Result<(Rendered, Vec<TapeRound>), Error> {
        let plan = Plan::of(&self.vars, self.outputs, opts)?;
        match (&self.device, self.precision) {
            (Some(d), _) => {
                let mut classes = Vec::new();
                let (rounds, stats) = d.render_with(&plan, &mut |b| classes = b.to_vec())?;
                let (width, height) = (plan.width, plan.height);
                let image = Rendered {
                    width,
                    height,
                    classes,
                    rounds,
                };
                Ok((image, stats))
            }
            (None, Precision::F64) => cpu::render::<f64>(&self.tape, &plan),
            (None, Precision::F32) => cpu::render::<f32>(&self.tape, &plan),
        }
    }

    /// [`TapeRenderer::render`] with the image lent to `f` (row-major classes, as
    /// [`Rendered::classes`]; called once) instead of returned: on the GPU it is read where it
    /// arrived, in page-locked memory the renderer keeps for its next frame, so a frame pays no
    /// host copy of the image (at 4096², 16 MB: about 2 ms on the H200's host, longer than the
    /// search). Returns the rounds and their mean tape lengths.
    pub fn render_with(
        &self,
        opts: &RenderOptions,
        f: &mut dyn FnMut(&[u8]),
    ) -> Result<(Vec<Round2>, Vec<TapeRound>), Error> {
        let plan = Plan::of(&self.vars, self.outputs, opts)?;
        match (&self.device, self.precision) {
            (Some(d), _) => Ok(d.render_with(&plan, f)?),
            (None, p) => {
                let (image, stats) = match p {
                    Precision::F64 => cpu::render::<f64>(&self.tape, &plan)?,
                    Precision::F32 => cpu::render::<f32>(&self.tape, &plan)?,
                };
                f(&image.classes);
                Ok((image.rounds, stats))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Intervals of every class, for the operations' tests: empty, entire, half-lines, zero with
    /// either sign, subnormal, ordinary, huge (many periods), the largest floats of f32 (and
    /// f64's, rounded outward to infinity in f32).
    fn classes() -> Vec<(f64, f64)> {
        let inf = f64::INFINITY;
        vec![
            (f64::NAN, f64::NAN),
            (-inf, inf),
            (-inf, -1.0),
            (2.0, inf),
            (0.0, 0.0),
            (-0.0, 0.0),
            (-0.0, -0.0),
            (0.0, 1e-45),
            (-1e-45, 1e-45),
            (-3.0, 2.0),
            (0.25, 0.5),
            (1.5, 2.5),
            (-2.0, -0.5),
            (1e300, 1e308),
            (-f32::MAX as f64, f32::MAX as f64),
            (f32::MAX as f64, inf),
            (f64::MAX, inf),
        ]
    }

    /// Every generated operation over lanes (AVX-512 vectors of 8 or 16 boxes where the
    /// processor has them, the rest lane by lane) gives each lane the one-box bits: all pairs of
    /// the interval classes (empty, entire, half-lines, signed zeros, subnormals, huge, f32::MAX
    /// and f64::MAX to inf), in place (the result over an operand, as the interpreter's slots
    /// allow) and apart, both precisions. 289 lanes: whole vectors and a ragged tail.
    #[test]
    fn every_operation_over_lanes_gives_the_one_box_bits() {
        fn check<T: Bound + std::fmt::Debug>(classes: &[(f64, f64)]) {
            let iv = |(lo, hi): (f64, f64)| (T::lo_of(lo), T::hi_of(hi));
            let pairs: Vec<(Iv<T>, Iv<T>)> = classes
                .iter()
                .flat_map(|&a| classes.iter().map(move |&b| (iv(a), iv(b))))
                .collect();
            let n = pairs.len();
            for code in code::NEG..=code::HULL {
                for out_at in [2 * n, 0] {
                    // Slots: the first operands at 0, the second ones at n, the results at
                    // `out_at` (0: over the first operands).
                    let mut slots: Vec<Iv<T>> = pairs.iter().map(|p| p.0).collect();
                    slots.extend(pairs.iter().map(|p| p.1));
                    slots.resize(3 * n, (T::nan(), T::nan()));
                    T::apply_lanes(code, &mut slots, (out_at, 0, n), n);
                    for (l, &(a, b)) in pairs.iter().enumerate() {
                        let want = T::apply(code, a, b);
                        assert!(
                            same_bits(slots[out_at + l], want),
                            "{:?} op {code} lane {l} of {a:?}, {b:?}: {:?} in lanes, {want:?} alone",
                            T::PRECISION,
                            slots[out_at + l]
                        );
                    }
                }
            }
        }
        check::<f64>(&classes());
        check::<f32>(&classes());
    }

    /// Sides of the lane tests' boxes: ordinary tiles, a point, entire, half-lines, [MAX, inf],
    /// subnormal, signed zeros, empty, one ulp wide, huge.
    pub(super) fn lane_sides() -> Vec<(f64, f64)> {
        let (inf, max, tiny) = (f64::INFINITY, f64::MAX, 5e-324);
        vec![
            (-0.5, -0.25),
            (0.1, 0.1),
            (-1.0, 1.0),
            (-inf, inf),
            (-inf, 0.0),
            (0.0, inf),
            (max, inf),
            (-tiny, tiny),
            (-0.0, 0.0),
            (f64::NAN, f64::NAN),
            (0.3, 0.30000000000000004),
            (1.5, 2.5),
            (-3.0, -2.0),
            (1e300, 1e308),
        ]
    }

    /// `n` boxes in `T` whose three sides run through `sides` at different strides (each
    /// bound rounded outward).
    pub(super) fn lane_boxes<T: Bound>(n: usize, sides: &[(f64, f64)]) -> Vec<TapeBox<T>> {
        let iv = |k: usize| {
            let (lo, hi) = sides[k % sides.len()];
            (T::lo_of(lo), T::hi_of(hi))
        };
        (0..n)
            .map(|k| [iv(k), iv(k * 7 + 3), iv(k * 5 + 1)])
            .collect()
    }

    /// Bit for bit, NaN (the empty set's bounds) for any NaN: its payload and sign may differ
    /// between vector and scalar instructions and mean nothing.
    pub(super) fn same_bits<T: Bound>(a: Iv<T>, b: Iv<T>) -> bool {
        let bits = |x: T| {
            let x = x.to_f64();
            if x.is_nan() {
                u64::MAX
            } else {
                x.to_bits()
            }
        };
        bits(a.0) == bits(b.0) && bits(a.1) == bits(b.1)
    }

    /// Operations run by their lowering (sin, exp, a quotient, a power) over a pass of more
    /// lanes than the evaluator's chunk holds (a tape pass has up to 256 tiles, a chunk 128:
    /// the fortieth session's passes of 256 panicked there) give each box the one-box bits,
    /// on boxes of every class, both precisions.
    #[test]
    fn lowered_operations_over_a_whole_pass_give_the_one_box_bits() {
        fn check<T: Bound + std::fmt::Debug>(tape: &Tape, classes: &[(f64, f64)]) {
            let boxes: Vec<TapeBox<T>> = lane_boxes(300, classes);
            let mut slots = Vec::new();
            let lanes = tape.eval_lanes(&boxes, &mut slots, None);
            for (l, b) in boxes.iter().enumerate() {
                let one = tape.eval(b, None);
                assert!(
                    same_bits(one, lanes[l]),
                    "{:?} box {l} {b:?}: {one:?} alone, {:?} in lanes",
                    T::PRECISION,
                    lanes[l]
                );
            }
        }
        let expr = Expression::parse("sin(x) * exp(y) + x / (y - 1) - min(x^3, y)").unwrap();
        let tape = Tape::binding(expr.ir(), &["x", "y", "z"], Chains::Balanced).unwrap();
        assert!(tape.extended() >= 3, "operations run by their lowering");
        check::<f64>(&tape, &classes());
        check::<f32>(&tape, &classes());
    }

    /// The tape render gives the plain render's classes and rounds on min/max models, in both
    /// precisions and two tile plans, and runs shorter tapes after the first round.
    #[test]
    fn tape_render_equals_the_plain_render() {
        crate::search::render::assert_pruned_render_is_plain(|expr, p, opts| {
            let (image, stats) = render(expr, p, TapeBackend::Cpu, opts).unwrap();
            (image, stats.iter().map(|s| s.mean_len).collect())
        });
    }

    /// The lane interpreter (a group's tiles in one pass) gives, box for box, the bits and the
    /// min/max decisions of the one-box interpreter: Prospero's tape on 64 boxes of every class
    /// (ordinary tiles, points, entire, half-lines, [MAX, inf], subnormal, signed zeros,
    /// empty), both precisions, with fresh slots and with slots full of another pass's values.
    #[test]
    fn lanes_give_the_one_box_bits() {
        fn check<T: Bound + std::fmt::Debug>(tape: &Tape, sides: &[(f64, f64)]) {
            let boxes: Vec<TapeBox<T>> = lane_boxes(64, sides);
            let same = |a: T, b: T| a.to_f64().to_bits() == b.to_f64().to_bits();
            // Slots fresh, and slots left by other passes (the render keeps them between
            // groups and never refills them): here a reversed interval in every slot, more
            // slots than the tape needs; no slot is read before this pass writes it.
            let junk = (T::lo_of(1.0), T::hi_of(-1.0));
            let fresh: Vec<Iv<T>> = Vec::new();
            let left: Vec<Iv<T>> = vec![junk; tape.slots() * 64 + 77];
            for mut slots in [fresh, left] {
                let mut record = Vec::new();
                let lanes = tape.eval_lanes(&boxes, &mut slots, Some(&mut record));
                for (l, b) in boxes.iter().enumerate() {
                    let mut choices = Vec::new();
                    let one = tape.eval(b, Some(&mut choices));
                    assert!(
                        same(one.0, lanes[l].0) && same(one.1, lanes[l].1),
                        "box {l}: {one:?} one by one, {:?} in lanes",
                        lanes[l]
                    );
                    let lane: Vec<u8> = record.iter().skip(l).step_by(64).copied().collect();
                    assert_eq!(choices, lane, "box {l}: decisions");
                    // The pruning that reads the lane in place is the one of its decisions;
                    // without SSA operands, the same instructions.
                    let pruned = tape.prune(&choices);
                    assert_eq!(tape.prune_lane(&record, l, 64, true), pruned, "box {l}");
                    let bare = tape.prune_lane(&record, l, 64, false);
                    assert!(
                        bare.insts == pruned.insts && bare.args.is_empty(),
                        "box {l}"
                    );
                }
            }
        }
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(root.join("tests/data/models/prospero.vm")).unwrap();
        let tape = Tape::new(Expression::parse_tape(&text).unwrap().ir()).unwrap();
        let sides = lane_sides();
        check::<f64>(&tape, &sides);
        check::<f32>(&tape, &sides);
    }

    /// Prospero's chains of min and max are rebalanced: the tape's depth (what the GPU's first
    /// level waits for, level by level) falls from 676 as written to a few dozen.
    #[test]
    fn prospero_is_shallow() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(root.join("tests/data/models/prospero.vm")).unwrap();
        let tape = Tape::new(Expression::parse_tape(&text).unwrap().ir()).unwrap();
        let (_, starts, _) = tape.depths();
        let depth = starts.len() - 1;
        eprintln!(
            "Prospero: {} instructions, depth {depth}, {} slots",
            tape.len(),
            tape.slots()
        );
        assert!(depth < 64, "depth {depth}");
    }

    /// A third variable is refused with what to do; functions, powers and fma run.
    #[test]
    fn what_the_interpreter_does_not_run_is_refused() {
        let opts = RenderOptions::new(8, 8, [-1.0, 1.0, -1.0, 1.0]);
        let run = |s: &str| {
            let e = Expression::parse(s).unwrap();
            render(&e, Precision::F64, TapeBackend::Cpu, &opts).map_err(|e| e.to_string())
        };
        assert!(run("x + z").unwrap_err().contains("'z'"));
        for ok in [
            "sin(x) + y",
            "x^3 / (1 + y^2)",
            "fma(x, y, x) - atan2(y, x)",
            "x^y",
        ] {
            run(ok).unwrap_or_else(|e| panic!("{ok}: {e}"));
        }
    }

    /// Every operation the tape runs by its lowering (every unary and binary function of the
    /// function table, division, integer powers and roots, the roundings, sign, hull,
    /// intersection, midpoint) gives, one box at a time and in lanes, the bits the scalar IR's
    /// reference interpreter gives for its lowering, on intervals of every class, all pairs,
    /// both precisions. A function added to the table is in the list by construction.
    #[test]
    fn the_extended_operations_run_their_lowering() {
        use crate::point::{BinaryFn, UnaryFn};
        use crate::scalar::RoundInt;
        let (x, y) = (NodeId(0), NodeId(1));
        let mut ops: Vec<Op> = UnaryFn::ALL.iter().map(|&f| Op::Elem(f, x)).collect();
        ops.extend(BinaryFn::ALL.iter().map(|&f| Op::Elem2(f, x, y)));
        ops.extend([
            Op::Div(x, y),
            Op::Hull(x, y),
            Op::Intersect(x, y),
            Op::Mid(x),
        ]);
        ops.extend([0, 3, 4, 7].map(|n| Op::Pown(x, n)));
        ops.extend([1, 2, 3, 4].map(|n| Op::Rootn(x, n)));
        ops.extend(
            [
                RoundInt::Floor,
                RoundInt::Ceil,
                RoundInt::Trunc,
                RoundInt::Even,
            ]
            .map(|k| Op::RoundInt(k, x)),
        );
        ops.extend([Op::Round(x), Op::Sign(x)]);
        let classes = classes();
        fn check<T: Bound + std::fmt::Debug>(op: Op, classes: &[(f64, f64)]) {
            let p = T::PRECISION;
            let arity = op.args().len();
            let mut graph = Graph::new(
                vec!["x".into(), "y".into()],
                vec![Default::default(); 2],
                None,
            );
            let vars = [
                graph.add(Op::Var(0), Default::default()),
                graph.add(Op::Var(1), Default::default()),
            ];
            let node = graph.add(op.with_args(&vars[..arity]), Default::default());
            graph.outputs.push(node);
            let tape = Tape::new(&graph).unwrap_or_else(|e| panic!("{op:?}: {e}"));
            assert!(
                tape.insts.iter().any(|&i| i as u16 & 0xff >= code::EXT),
                "{op:?} extended"
            );
            let program = crate::lower::lower_op(op, p).unwrap();
            let iv = |(lo, hi): (f64, f64)| (T::lo_of(lo), T::hi_of(hi));
            let same = |a: f64, b: f64| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
            let pairs: Vec<TapeBox<T>> = classes
                .iter()
                .flat_map(|&a| classes.iter().map(move |&b| [iv(a), iv(b), iv(a)]))
                .collect();
            let mut slots = Vec::new();
            for part in pairs.chunks(64) {
                let lanes = tape.eval_lanes(part, &mut slots, None);
                for (k, ab) in part.iter().enumerate() {
                    let [a, b, _] = *ab;
                    let inputs = [(a.0.to_f64(), a.1.to_f64()), (b.0.to_f64(), b.1.to_f64())];
                    let want = crate::scalar::interp::eval(&program, &inputs[..arity]).unwrap()[0];
                    let one = tape.eval(ab, None);
                    for (how, got) in [("one box", one), ("lanes", lanes[k])] {
                        assert!(
                            same(got.0.to_f64(), want.0) && same(got.1.to_f64(), want.1),
                            "{op:?} {p} on {inputs:?} ({how}): tape ({:?}, {:?}), lowering {want:?}",
                            got.0, got.1
                        );
                    }
                }
            }
        }
        for op in ops {
            check::<f64>(op, &classes);
            check::<f32>(op, &classes);
        }
    }

    /// Each generated operation gives the bits the scalar IR's reference interpreter gives for
    /// the lowering it was generated from, on intervals of every class (empty, entire,
    /// half-unbounded, zero with either sign, subnormal, the largest floats, ordinary), all
    /// pairs, in both precisions: the Rust rows of `crate::scalar::emit` are faithful.
    #[test]
    fn the_generated_operations_run_as_the_interpreter_runs_the_lowering() {
        let classes = classes();
        fn check<T: Bound>(p: Precision, classes: &[(f64, f64)], to: fn(f64) -> T) {
            let same = |a: f64, b: f64| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
            use crate::lower::interpreted::OPERATIONS;
            for (k, (name, op)) in OPERATIONS.iter().enumerate() {
                let program = crate::lower::lower_op(*op, p).unwrap();
                let code = code::NEG + k as u16;
                // The classes in T (f32 rounds 1e-45 to its least subnormal, ...).
                let exact = |(lo, hi): (f64, f64)| (to(lo).to_f64(), to(hi).to_f64());
                for &x in classes {
                    for &y in classes {
                        let (x, y) = (exact(x), exact(y));
                        let inputs = [x, y];
                        let want =
                            crate::scalar::interp::eval(&program, &inputs[..program.n_vars()])
                                .unwrap()[0];
                        let got = T::apply(code, (to(x.0), to(x.1)), (to(y.0), to(y.1)));
                        assert!(
                            same(got.0.to_f64(), want.0) && same(got.1.to_f64(), want.1),
                            "{name} {p} on {x:?}, {y:?}: generated ({}, {}), interpreter {want:?}",
                            got.0.to_f64(),
                            got.1.to_f64()
                        );
                    }
                }
            }
        }
        check::<f64>(Precision::F64, &classes, |v| v);
        check::<f32>(Precision::F32, &classes, |v| v as f32);
    }
}
