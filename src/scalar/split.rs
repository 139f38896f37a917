//! Cutting a long scalar program into stages that run one after the other, each a program of
//! its own, handing the values that cross a cut over through scratch arrays.
//!
//! Why: the time ptxas (or the driver's JIT) takes grows faster than the kernel does; a kernel
//! of several thousand instructions takes seconds to tens of seconds to compile and spills
//! registers, while a few kernels of a few hundred instructions each compile in a fraction of
//! that, and in parallel. Nothing changes in the arithmetic: every instruction of a stage is
//! the original instruction on the same operand values, and a value crosses a cut by a store
//! and a load of its exact bits, so the stages compute the same bits as the whole program.
//!
//! Inputs, constants and booleans are not handed over: a stage that needs one reads the
//! batch's input array again, makes the constant again, or computes the boolean again from its
//! operands (predicates are not stored; a comparison of an input, shared by hash-consing across
//! the whole program, would otherwise cross every cut). Every other value defined before a cut
//! and read after it gets a scratch array, written by the stage that defines it and read by
//! later stages; the last stage writes the program's outputs.

use std::collections::HashMap;

use super::{Bound, Inst, Program, Type, Value};

/// Where a stage's array lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Slot {
    /// Array `k` of the batch's inputs (lo of variable k / 2 for even k, hi for odd k).
    Input(usize),
    /// Scratch array `k`: a value handed from one stage to later ones.
    Scratch(usize),
    /// Array `k` of the batch's outputs in device memory ([`Program::output_arrays`]: lo of
    /// output k / 2 for even k, hi for odd k, then one array per code output).
    Output(usize),
}

/// One stage: a program whose input arrays are `reads` (array `2v` and `2v + 1` of its variable
/// `v`: `reads[2v]` and `reads[2v + 1]`) and whose output arrays are `writes` (likewise, two per
/// output pair).
#[derive(Clone, Debug, PartialEq)]
pub struct Stage {
    /// The stage's instructions as a program of the original precision.
    pub program: Program,
    /// Where each of its input arrays is (`2 * program.n_vars()` entries).
    pub reads: Vec<Slot>,
    /// Where each of its output arrays goes (`2 * program.outputs.len()` entries).
    pub writes: Vec<Slot>,
}

/// A program cut into stages.
#[derive(Clone, Debug, PartialEq)]
pub struct Staged {
    /// The stages, in the order they run.
    pub stages: Vec<Stage>,
    /// Scratch arrays the stages need (one element per box each).
    pub scratch: usize,
}

/// Whether an instruction is remade in each stage that needs it instead of handed over.
fn remade(inst: &Inst) -> bool {
    matches!(inst, Inst::Input { .. } | Inst::Const(_) | Inst::Bool(_))
}

/// Cuts `program` into stages of `target` instructions each (the last one up to a quarter
/// longer, rather than a short tail). A program of at most `target` instructions is one stage.
/// The program must be well formed ([`Program::verify`]).
///
/// Values that cross a cut go through scratch arrays of the program's own precision (no
/// f32/f64 conversion), predicates never do (they are recomputed in the stage that uses them),
/// and inputs and constants are remade: a staged program computes the single kernel's bits on
/// every box, whatever its class. Held by `stages_compute_the_whole_programs_bits` and on the
/// GPU by `staged_programs_equal_cpu` and the class matrix's combined programs (their stages
/// against the oracles, `tests/gpu/gpu_classes.rs`).
pub fn split(program: &Program, target: usize) -> Staged {
    let n = program.insts.len();
    let target = target.max(1);
    let mut cuts: Vec<usize> = (0..n).step_by(target).collect();
    if cuts.is_empty() {
        cuts.push(0);
    }
    // A short tail joins the stage before it.
    if cuts.len() > 1 && n - cuts[cuts.len() - 1] < target / 4 {
        cuts.pop();
    }
    cuts.push(n);
    // Scratch arrays: one per value handed over (defined by one stage, read by later ones,
    // directly or through a boolean remade there). A first pass over the stages finds them
    // (the builder records each float it needs from an earlier stage); the second builds the
    // stages with the arrays numbered.
    let mut scratch: HashMap<usize, usize> = HashMap::new();
    let mut needed = Vec::new();
    build(program, &cuts, &scratch, &mut needed);
    needed.sort_unstable();
    needed.dedup();
    for v in needed {
        let k = scratch.len();
        scratch.insert(v, k);
    }
    let mut unused = Vec::new();
    let stages = build(program, &cuts, &scratch, &mut unused);
    debug_assert!(
        unused.is_empty(),
        "the first pass found every handed-over value"
    );
    Staged {
        stages,
        scratch: scratch.len(),
    }
}

/// The stages between `cuts`, reading handed-over values from the arrays `scratch` numbers;
/// values it lacks a number for are added to `missing` (and read from a placeholder).
fn build(
    program: &Program,
    cuts: &[usize],
    scratch: &HashMap<usize, usize>,
    missing: &mut Vec<usize>,
) -> Vec<Stage> {
    let insts = &program.insts;
    let n_stages = cuts.len() - 1;
    let mut stages = Vec::with_capacity(n_stages);
    for s in 0..n_stages {
        let (start, end) = (cuts[s], cuts[s + 1]);
        let last = s + 1 == n_stages;
        let mut b = StageBuilder::new(program, scratch, missing);
        for (i, inst) in insts.iter().enumerate().take(end).skip(start) {
            if remade(inst) || inst.ty() == Type::Bool {
                continue; // made where it is used
            }
            let mapped = b.map_inst(inst);
            let new = b.push(mapped);
            b.local.insert(i, new);
            if !last {
                if let Some(&k) = scratch.get(&i) {
                    b.writes.push((Slot::Scratch(k), new));
                }
            }
        }
        if last {
            for (k, v) in program.output_arrays().into_iter().enumerate() {
                let v = b.value(v);
                b.writes.push((Slot::Output(k), v));
            }
        }
        if b.writes.is_empty() {
            continue; // nothing of it is read later (dead code)
        }
        stages.push(b.finish());
    }
    stages
}

/// The instructions of one stage under construction.
struct StageBuilder<'a> {
    program: &'a Program,
    insts: Vec<Inst>,
    /// Original value -> the stage's value, for values defined or remade in this stage.
    local: HashMap<usize, Value>,
    /// The stage's input arrays, and the array index of each slot.
    reads: Vec<Slot>,
    read_index: HashMap<Slot, usize>,
    /// What the stage writes, and where.
    writes: Vec<(Slot, Value)>,
    /// Scratch array of each handed-over value.
    scratch_of: &'a HashMap<usize, usize>,
    /// Handed-over values without an array yet (the first pass collects them).
    missing: &'a mut Vec<usize>,
}

impl<'a> StageBuilder<'a> {
    fn new(
        program: &'a Program,
        scratch_of: &'a HashMap<usize, usize>,
        missing: &'a mut Vec<usize>,
    ) -> Self {
        StageBuilder {
            program,
            insts: Vec::new(),
            local: HashMap::new(),
            reads: Vec::new(),
            read_index: HashMap::new(),
            writes: Vec::new(),
            scratch_of,
            missing,
        }
    }

    fn push(&mut self, inst: Inst) -> Value {
        self.insts.push(inst);
        Value(self.insts.len() as u32 - 1)
    }

    /// An input instruction reading the array at `slot` (added to the stage's inputs once).
    fn read(&mut self, slot: Slot) -> Value {
        let k = *self.read_index.entry(slot).or_insert_with(|| {
            self.reads.push(slot);
            self.reads.len() - 1
        });
        let bound = if k.is_multiple_of(2) {
            Bound::Lo
        } else {
            Bound::Hi
        };
        self.push(Inst::Input {
            var: (k / 2) as u32,
            bound,
        })
    }

    /// The stage's value for original value `v`: defined here, remade, or read from the array
    /// it was handed over in.
    fn value(&mut self, v: Value) -> Value {
        if let Some(&new) = self.local.get(&v.index()) {
            return new;
        }
        let new = match self.program.insts[v.index()] {
            Inst::Input { var, bound } => self.read(Slot::Input(
                2 * var as usize + usize::from(bound == Bound::Hi),
            )),
            Inst::Const(c) => self.push(Inst::Const(c)),
            Inst::Bool(b) => self.push(Inst::Bool(b)),
            // Booleans are remade from their operands wherever they are used (they never cross
            // a cut: predicates are not stored).
            ref inst if inst.ty() == Type::Bool => {
                let mapped = self.map_inst(inst);
                self.push(mapped)
            }
            _ => match self.scratch_of.get(&v.index()) {
                Some(&k) => self.read(Slot::Scratch(k)),
                None => {
                    self.missing.push(v.index());
                    self.read(Slot::Scratch(usize::MAX))
                }
            },
        };
        self.local.insert(v.index(), new);
        new
    }

    /// `inst` with its operands replaced by the stage's values.
    fn map_inst(&mut self, inst: &Inst) -> Inst {
        let mut m = |v: Value| self.value(v);
        match *inst {
            Inst::Input { .. } | Inst::Const(_) | Inst::Bool(_) => *inst,
            Inst::Add(a, b, r) => Inst::Add(m(a), m(b), r),
            Inst::Sub(a, b, r) => Inst::Sub(m(a), m(b), r),
            Inst::Mul(a, b, r) => Inst::Mul(m(a), m(b), r),
            Inst::Div(a, b, r) => Inst::Div(m(a), m(b), r),
            Inst::Fma(a, b, c, r) => {
                let (a, b) = (m(a), m(b));
                Inst::Fma(a, b, m(c), r)
            }
            Inst::Sqrt(a, r) => Inst::Sqrt(m(a), r),
            Inst::Neg(a) => Inst::Neg(m(a)),
            Inst::Abs(a) => Inst::Abs(m(a)),
            Inst::Min(a, b) => Inst::Min(m(a), m(b)),
            Inst::Max(a, b) => Inst::Max(m(a), m(b)),
            Inst::Compare(c, a, b) => Inst::Compare(c, m(a), m(b)),
            Inst::IsNan(a) => Inst::IsNan(m(a)),
            Inst::And(a, b) => Inst::And(m(a), m(b)),
            Inst::Or(a, b) => Inst::Or(m(a), m(b)),
            Inst::Not(a) => Inst::Not(m(a)),
            Inst::Select(c, a, b) => {
                let (c, a) = (m(c), m(a));
                Inst::Select(c, a, m(b))
            }
            Inst::Point1(f, a, r) => Inst::Point1(f, m(a), r),
            Inst::Point2(f, a, b, r) => Inst::Point2(f, m(a), m(b), r),
            Inst::RoundInt(k, a) => Inst::RoundInt(k, m(a)),
        }
    }

    fn finish(mut self) -> Stage {
        // Arrays come in (lo, hi) pairs: an odd count reads its last array twice, and an odd
        // number of writes stores its last value twice (the same bits to the same place).
        if self.reads.len() % 2 == 1 {
            let last = *self.reads.last().expect("odd, so not empty");
            self.reads.push(last);
        }
        if self.writes.len() % 2 == 1 {
            let last = *self.writes.last().expect("odd, so not empty");
            self.writes.push(last);
        }
        let outputs = self
            .writes
            .chunks(2)
            .map(|pair| (pair[0].1, pair[1].1))
            .collect();
        let program = Program {
            precision: self.program.precision,
            var_names: (0..self.reads.len() / 2).map(|k| format!("a{k}")).collect(),
            insts: self.insts,
            outputs,
            code_outputs: 0,
        };
        Stage {
            program,
            reads: self.reads,
            writes: self.writes.into_iter().map(|(slot, _)| slot).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::eval::eval_columns;
    use crate::{Expression, Precision};

    /// Runs the stages one after the other on the CPU evaluator, arrays as the GPU would hold
    /// them; returns the outputs in the batch layout.
    fn run(staged: &Staged, program: &Program, inputs: &[f64], n: usize) -> Vec<f64> {
        let mut scratch = vec![vec![f64::NAN; n]; staged.scratch];
        let mut out = vec![vec![f64::NAN; n]; program.n_output_arrays()];
        for stage in &staged.stages {
            stage.program.verify().unwrap();
            let reads: Vec<Vec<f64>> = stage
                .reads
                .iter()
                .map(|slot| match *slot {
                    Slot::Input(k) => inputs[k * n..(k + 1) * n].to_vec(),
                    Slot::Scratch(k) => scratch[k].clone(),
                    Slot::Output(_) => panic!("a stage reads an output"),
                })
                .collect();
            let columns: Vec<&[f64]> = reads.iter().map(Vec::as_slice).collect();
            let mut written = vec![vec![0.0; n]; stage.writes.len()];
            let mut outs: Vec<&mut [f64]> = written.iter_mut().map(Vec::as_mut_slice).collect();
            eval_columns(&stage.program, &columns, n, &mut outs);
            for (slot, values) in stage.writes.iter().zip(written) {
                match *slot {
                    Slot::Scratch(k) => scratch[k] = values,
                    Slot::Output(k) => out[k] = values,
                    Slot::Input(_) => panic!("a stage writes an input"),
                }
            }
        }
        // The host's pair layout: a code's hi is its lo.
        let mut host = vec![Vec::new(); 2 * program.outputs.len()];
        for (array, k) in out.into_iter().zip(program.output_array_hosts()) {
            if k >= 2 * (program.outputs.len() - program.code_outputs) {
                host[k + 1] = array.clone();
            }
            host[k] = array;
        }
        host.concat()
    }

    fn inputs(n_vars: usize, n: usize, p: Precision) -> Vec<f64> {
        let case = crate::workloads::suite()
            .into_iter()
            .find(|c| c.name == "tangle")
            .unwrap();
        crate::workloads::random_inputs(&case, n_vars, n, p, 1788)
    }

    /// Stages of every size give the whole program's bits, on programs with booleans, point
    /// calls, constants and inputs read in many stages, in both precisions.
    #[test]
    fn stages_compute_the_whole_programs_bits() {
        let (generated, _) = crate::workloads::generated(300);
        let sources = [
            "x^4 - 5*x^2 + y^4 - 5*y^2 + z^4 - 5*z^2 + 11.8",
            "sin(x)*cos(y) + exp(-x*y)*atan(z), x*y - z",
            "min(x, y) / max(y, z) + abs(x - z) * sqrt(abs(y)) + pown(x, 7) - rootn(z, 3)",
            "floor(x*y) + sign(z) * atan2(y, x) + round(z) / hull(x, y) * intersect(y, z)",
            generated.as_str(),
        ];
        let n = 300;
        // Decorated programs too: their codes are one array each.
        let decorated = sources[..4]
            .iter()
            .map(|s| Expression::parse_decorated(s).unwrap());
        let exprs = sources.iter().map(|s| Expression::parse(s).unwrap());
        for expr in exprs.chain(decorated) {
            let src = expr.source();
            for p in [Precision::F64, Precision::F32] {
                let program = expr.scalar(p).unwrap();
                let x = inputs(program.n_vars(), n, p);
                let want = crate::cpu::eval::eval_soa(&program, &x, n);
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                for target in [1, 3, 10, 40, 1000, usize::MAX] {
                    let staged = split(&program, target);
                    let got = run(&staged, &program, &x, n);
                    assert_eq!(bits(&got), bits(&want), "{src} {p} target {target}");
                    if target >= program.insts.len() {
                        assert_eq!(staged.stages.len(), 1, "{src}");
                        assert_eq!(staged.scratch, 0);
                    }
                }
            }
        }
    }
}
