//! Evaluates a scalar [`Program`] over a batch of boxes in structure-of-arrays layout.
//!
//! Boxes are processed in chunks of [`LANES`]: each instruction runs over the whole chunk before
//! the next one, so the dispatch on the instruction kind is paid once per chunk and the inner
//! loops are simple enough to vectorize. Values live in slots reused once their last reader has
//! run, so memory stays proportional to the live values, not to the program length. Chunks are
//! independent and run in parallel (rayon).

use crate::cpu::lanes;
use crate::scalar::{Bound, Cmp, Inst, Precision, Program, Round, RoundInt};
use crate::{point, round};
use rayon::prelude::*;

pub(crate) use super::LANES;

/// Slot assignment for a program: which slot each instruction writes. An evaluator makes it
/// once ([`Plan::new`] costs allocations per instruction: most of a small batch's time).
#[derive(Clone, Debug)]
pub(crate) struct Plan {
    slot: Vec<u32>,
    n_slots: usize,
    /// For each value: the input column it reads (`2 * var + hi`), or [`NOT_INPUT`]. A full
    /// chunk reads its inputs where they are instead of copying them into their slots.
    column: Vec<u32>,
    /// Whether constants have slots of their own, filled once per register file
    /// ([`Plan::fill_constants`]) instead of once per chunk: where the program has at most
    /// [`PINNED_CONSTANTS`] of them (more would crowd the fast cache the chunks work in).
    pinned: bool,
}

/// [`Plan::column`] of a value that is not an input.
const NOT_INPUT: u32 = u32::MAX;

/// Constants at most for [`Plan::pinned`]: 32 of [`LANES`] values, 32 KiB with 128 lanes.
const PINNED_CONSTANTS: usize = 32;

/// A constant instruction (a float or a boolean), whose lanes never change.
fn is_constant(inst: &Inst) -> bool {
    matches!(inst, Inst::Const(_) | Inst::Bool(_))
}

impl Plan {
    pub(crate) fn new(p: &Program) -> Plan {
        let n = p.insts.len();
        let mut last_use = vec![0usize; n];
        for (i, inst) in p.insts.iter().enumerate() {
            for a in inst.operands() {
                last_use[a.index()] = i;
            }
        }
        for &(lo, hi) in &p.outputs {
            last_use[lo.index()] = usize::MAX;
            last_use[hi.index()] = usize::MAX;
        }
        // Values that die at instruction i, so their slots can be reused after it.
        let mut dying: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (v, &u) in last_use.iter().enumerate() {
            if u != usize::MAX && u > v {
                dying[u].push(v as u32);
            }
        }
        let pinned = p.insts.iter().filter(|i| is_constant(i)).count() <= PINNED_CONSTANTS;
        let keeps_its_slot = |v: usize| pinned && is_constant(&p.insts[v]);
        let mut free: Vec<u32> = Vec::new();
        let mut slot = vec![0u32; n];
        let mut n_slots = 0usize;
        for i in 0..n {
            // Operands die after this instruction reads them: their slots are free for the
            // instructions after it (not for this one, which still reads them).
            let fresh = |n_slots: &mut usize| {
                *n_slots += 1;
                (*n_slots - 1) as u32
            };
            slot[i] = if keeps_its_slot(i) {
                fresh(&mut n_slots)
            } else {
                free.pop().unwrap_or_else(|| fresh(&mut n_slots))
            };
            // A value never read (possible only for outputs) keeps its slot.
            for &v in &dying[i] {
                if !keeps_its_slot(v as usize) {
                    free.push(slot[v as usize]);
                }
            }
        }
        let column = p
            .insts
            .iter()
            .map(|inst| match *inst {
                Inst::Input { var, bound } => 2 * var + u32::from(bound == Bound::Hi),
                _ => NOT_INPUT,
            })
            .collect();
        Plan {
            slot,
            n_slots,
            column,
            pinned,
        }
    }

    /// Writes the constants of a [`Plan::pinned`] plan into their slots of `regs` (nothing for
    /// another plan, whose chunks write them).
    fn fill_constants(&self, p: &Program, regs: &mut [f64]) {
        if !self.pinned {
            return;
        }
        for (i, inst) in p.insts.iter().enumerate() {
            let value = match *inst {
                Inst::Const(c) => c,
                Inst::Bool(b) => f64::from(u8::from(b)),
                _ => continue,
            };
            let at = self.slot[i] as usize * LANES;
            regs[at..at + LANES].fill(value);
        }
    }
}

/// Evaluates `program` on `n` boxes. `inputs` holds `2 * n_vars` arrays of `n` values (the lo
/// array of variable k at `2k`, its hi array at `2k + 1`); the result holds `2 * n_outputs`
/// arrays in the same layout. Values of an f32 program are f32 values stored as f64; its inputs
/// are rounded outward to f32 as they are read (bounds already in f32 are unchanged).
pub fn eval_soa(program: &Program, inputs: &[f64], n: usize) -> Vec<f64> {
    let mut out = vec![0.0; 2 * program.outputs.len() * n];
    eval_soa_into(program, inputs, n, &mut out);
    out
}

/// [`eval_soa`] into `out`, which must hold `2 * n_outputs * n` values.
pub fn eval_soa_into(program: &Program, inputs: &[f64], n: usize, out: &mut [f64]) {
    assert_eq!(
        inputs.len(),
        2 * program.n_vars() * n,
        "inputs must hold 2 * n_vars * n values"
    );
    assert_eq!(
        out.len(),
        2 * program.outputs.len() * n,
        "out must hold 2 * n_outputs * n values"
    );
    if n == 0 {
        return;
    }
    let inputs: Vec<&[f64]> = inputs.chunks(n).collect();
    let mut outs: Vec<&mut [f64]> = out.chunks_mut(n).collect();
    eval_columns(program, &inputs, n, &mut outs);
}

thread_local! {
    /// A thread's register file, kept between batches: a fresh one per batch cost an
    /// allocation and a page-sized memset per call, most of a small batch's time.
    static REGISTERS: std::cell::Cell<Vec<f64>> = const { std::cell::Cell::new(Vec::new()) };
}

/// Boxes per parallel task: [`LANES`]-box chunks run one after the other in a task, which owns
/// its registers and writes its share of every output array directly.
const TASK: usize = 64 * LANES;

/// Evaluates `program` on `n` boxes given array by array: `inputs[2k]` and `inputs[2k + 1]`
/// are the lo and hi arrays of variable k, `outs[2j]` and `outs[2j + 1]` those of output j, each
/// `n` long.
pub fn eval_columns(program: &Program, inputs: &[&[f64]], n: usize, outs: &mut [&mut [f64]]) {
    eval_columns_planned(program, &Plan::new(program), inputs, n, outs);
}

/// [`eval_columns`] with the program's plan made beforehand.
pub(crate) fn eval_columns_planned(
    program: &Program,
    plan: &Plan,
    inputs: &[&[f64]],
    n: usize,
    outs: &mut [&mut [f64]],
) {
    assert_eq!(inputs.len(), 2 * program.n_vars(), "one array per bound");
    assert_eq!(outs.len(), 2 * program.outputs.len(), "one array per bound");
    assert!(
        inputs.iter().all(|a| a.len() == n) && outs.iter().all(|a| a.len() == n),
        "every array holds n values"
    );
    let n_out = outs.len();
    // tasks[t]: the t-th piece of every output array.
    let mut tasks: Vec<Vec<&mut [f64]>> = (0..n.div_ceil(TASK))
        .map(|_| Vec::with_capacity(n_out))
        .collect();
    for array in outs.iter_mut() {
        for (t, piece) in array.chunks_mut(TASK).enumerate() {
            tasks[t].push(piece);
        }
    }
    let task = |(t, mut pieces): (usize, Vec<&mut [f64]>)| {
        // The thread's register file from its last batch: every slot is written before it is
        // read (the program is in SSA order; pinned constants are filled here).
        let mut regs = REGISTERS.take();
        regs.resize(plan.n_slots * LANES, 0.0);
        plan.fill_constants(program, &mut regs);
        let first = t * TASK;
        let end = n.min(first + TASK);
        for start in (first..end).step_by(LANES) {
            let len = LANES.min(end - start);
            let at = start - first;
            let mut outs: Vec<&mut [f64]> =
                pieces.iter_mut().map(|p| &mut p[at..at + len]).collect();
            run_chunk(program, plan, inputs, start, len, &mut regs, &mut outs);
        }
        REGISTERS.set(regs);
    };
    // One task runs on the caller's thread: handing it to the pool costs a wake-up and a wait
    // (from a thread outside the pool, tens of microseconds: most of a small search round's
    // time, measured on the six-hump camel's branch and bound).
    if tasks.len() == 1 {
        tasks.into_iter().enumerate().for_each(task);
    } else {
        tasks.into_par_iter().enumerate().for_each(task);
    }
}

/// A program prepared to run on one chunk of at most [`LANES`] boxes at a time, on the
/// caller's thread: what an interpreter calls for an operation it runs by its lowering (the
/// tape's operations beyond its generated set, `crate::search::tape`). The slot plan is made
/// once; each run takes the caller's register file.
#[derive(Clone, Debug)]
pub(crate) struct Chunk {
    program: Program,
    plan: Plan,
}

impl Chunk {
    /// `program`, its slots planned.
    pub(crate) fn new(program: Program) -> Chunk {
        let plan = Plan::new(&program);
        Chunk { program, plan }
    }

    /// Runs the program on `len <= LANES` boxes: `inputs[2k]` and `inputs[2k + 1]` the lo
    /// and hi values of variable k (at least `len` each), `res` receiving output j's lo
    /// values at `res[2j * len..]` and its hi values at `res[(2j + 1) * len..]`. `regs` is
    /// grown to the plan's register file.
    pub(crate) fn run(&self, inputs: &[&[f64]], len: usize, regs: &mut Vec<f64>, res: &mut [f64]) {
        assert!(len <= LANES, "at most LANES boxes per run");
        if regs.len() < self.plan.n_slots * LANES {
            regs.resize(self.plan.n_slots * LANES, 0.0);
        }
        if len == 0 {
            return;
        }
        let mut outs: Vec<&mut [f64]> = res.chunks_mut(len).collect();
        // The caller's register file may have run another program since.
        self.plan.fill_constants(&self.program, regs);
        run_chunk(&self.program, &self.plan, inputs, 0, len, regs, &mut outs);
    }
}

/// Runs one chunk through the copy of the loop [`chosen_copy`] picks for the processor (in
/// tests, the one a test forces).
#[allow(clippy::too_many_arguments)]
fn run_chunk(
    p: &Program,
    plan: &Plan,
    inputs: &[&[f64]],
    start: usize,
    len: usize,
    regs: &mut [f64],
    outs: &mut [&mut [f64]],
) {
    #[cfg(test)]
    let isa = tests::FORCED_ISA.get().unwrap_or_else(chosen_copy);
    #[cfg(not(test))]
    let isa = chosen_copy();
    run_copy(isa, p, plan, inputs, start, len, regs, outs)
}

/// The copy of the chunk loop this process runs, decided once: AVX-512's embedded rounding
/// where the processor has AVX-512F ([`super::hardware_rounding`]), else the switched MXCSR
/// mode where it has AVX2 and FMA ([`super::mode_switching`]), else AVX2's software vectors
/// (`IVJIT_CPU_ROUNDING=software`, or a mode that did not round as asked), else the portable
/// loop. The copies compiled for AVX2 and FMA also make `f64::mul_add` one instruction.
fn chosen_copy() -> u8 {
    static ISA: std::sync::OnceLock<u8> = std::sync::OnceLock::new();
    *ISA.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        {
            if super::hardware_rounding() {
                return AVX512;
            }
            if super::mode_switching() {
                return MXCSR;
            }
            if super::avx2::available() {
                return AVX2;
            }
        }
        PORTABLE
    })
}

/// Runs one chunk through the copy of the loop for `isa`, which the processor must be able to
/// run: [`chosen_copy`]'s, or in tests one of `tests::runnable_isas`.
#[allow(clippy::too_many_arguments)]
fn run_copy(
    isa: u8,
    p: &Program,
    plan: &Plan,
    inputs: &[&[f64]],
    start: usize,
    len: usize,
    regs: &mut [f64],
    outs: &mut [&mut [f64]],
) {
    // SAFETY (each call): `isa` names a copy whose features the processor has (this
    // function's contract: chosen_copy checks them, and the tests force only runnable ones).
    #[cfg(target_arch = "x86_64")]
    match isa {
        AVX512 => return unsafe { run_chunk_avx512(p, plan, inputs, start, len, regs, outs) },
        MXCSR => return unsafe { run_chunk_mxcsr(p, plan, inputs, start, len, regs, outs) },
        AVX2 => return unsafe { run_chunk_avx2_fma(p, plan, inputs, start, len, regs, outs) },
        _ => {}
    }
    let _ = isa;
    by_width::<PORTABLE>(p, plan, inputs, start, len, regs, outs)
}

/// A copy of [`run_chunk_body`] compiled for the target features `$features`, its directed
/// operations by the instruction set `$isa`.
macro_rules! chunk_copy {
    ($(#[doc = $doc:expr])* $name:ident, $features:literal, $isa:ident) => {
        $(#[doc = $doc])*
        ///
        /// # Safety
        #[doc = concat!("The processor must support ", $features, ".")]
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = $features)]
        #[allow(clippy::too_many_arguments)]
        unsafe fn $name(
            p: &Program,
            plan: &Plan,
            inputs: &[&[f64]],
            start: usize,
            len: usize,
            regs: &mut [f64],
            outs: &mut [&mut [f64]],
        ) {
            by_width::<$isa>(p, plan, inputs, start, len, regs, outs)
        }
    };
}

chunk_copy!(
    /// [`run_chunk_body`] with the directed operations (f64 and f32) rounded by AVX-512's
    /// embedded rounding (`super::avx512`).
    run_chunk_avx512,
    "avx512f,avx2,fma",
    AVX512
);
chunk_copy!(
    /// [`run_chunk_body`] with the f64 directed operations in software on
    /// [`super::avx2::F64x4`] vectors.
    run_chunk_avx2_fma,
    "avx2,fma",
    AVX2
);
chunk_copy!(
    /// [`run_chunk_body`] with the directed operations (f64 and f32) rounded by the hardware
    /// under a switched MXCSR mode (`super::mxcsr`).
    run_chunk_mxcsr,
    "avx2,fma",
    MXCSR
);

/// The instruction set a copy of [`run_chunk_body`] is compiled for: none beyond the target's
/// ([`PORTABLE`]), AVX2 + FMA (f64 directed operations by [`super::avx2`]'s vectors), or
/// AVX-512F (directed operations by embedded rounding, [`super::avx512`]).
const PORTABLE: u8 = 0;
/// See [`PORTABLE`].
const AVX2: u8 = 1;
/// See [`PORTABLE`].
const AVX512: u8 = 2;
/// AVX2 + FMA with the directed operations rounded by a switched MXCSR mode ([`super::mxcsr`]).
const MXCSR: u8 = 3;

/// Lanes of a narrow chunk: a chunk of at most this many boxes runs every instruction over
/// this many lanes instead of [`LANES`] (a small search's rounds and a descent's steps are a
/// few boxes each; over 128 lanes each of their instructions cost as much as a full chunk's).
const NARROW: usize = 32;

/// [`run_chunk_body`] over [`NARROW`] lanes where the chunk fits them, else over [`LANES`].
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn by_width<const ISA: u8>(
    p: &Program,
    plan: &Plan,
    inputs: &[&[f64]],
    start: usize,
    len: usize,
    regs: &mut [f64],
    outs: &mut [&mut [f64]],
) {
    if len <= NARROW {
        run_chunk_body::<NARROW, ISA>(p, plan, inputs, start, len, regs, outs)
    } else {
        run_chunk_body::<LANES, ISA>(p, plan, inputs, start, len, regs, outs)
    }
}

/// One chunk of `len <= N` boxes, each instruction over `N` lanes of its slot (slots are
/// [`LANES`] apart whatever `N`); `ISA`: the instruction set the caller is compiled for, which
/// the directed operations use ([`PORTABLE`]).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn run_chunk_body<const N: usize, const ISA: u8>(
    p: &Program,
    plan: &Plan,
    inputs: &[&[f64]],
    start: usize,
    len: usize,
    regs: &mut [f64],
    outs: &mut [&mut [f64]],
) {
    let f32p = p.precision == Precision::F32;
    assert!(
        N <= LANES && regs.len() >= plan.n_slots * LANES,
        "a register file for the plan"
    );
    let base = regs.as_mut_ptr();
    // A full chunk of an f64 program reads its inputs in place (a last, shorter chunk copies
    // them into their slots: the operations read whole chunks; an f32 program rounds them).
    let in_place = !f32p && len == N && inputs.iter().all(|a| a.len() >= start + N);
    // Where value v's lanes are: its input column's run of N values, or its slot.
    let at = |v: usize| -> *const f64 {
        let k = plan.column[v];
        if in_place && k != NOT_INPUT {
            // SAFETY: `in_place` checked that every column holds N values from `start`.
            unsafe { inputs[k as usize].as_ptr().add(start) }
        } else {
            // SAFETY: a slot of the plan: `slot * LANES + LANES <= regs.len()` (asserted).
            unsafe { base.add(plan.slot[v] as usize * LANES) }
        }
    };
    let mut last_point = LastPoint::<N>::new();
    for (i, inst) in p.insts.iter().enumerate() {
        let dst = plan.slot[i] as usize * LANES;
        // Operands and the result are read and written in place, in the register file: the
        // plan never gives an instruction's result the slot of one of its operands (a slot is
        // freed only after the instruction that last reads it has its own), and slots are
        // disjoint runs of LANES values. (Lanes past `len` in the last chunk hold earlier
        // values; every operation is lane by lane, so they change no lane below `len`.)
        macro_rules! lanes {
            ($v:expr) => {{
                let o = at($v.index());
                debug_assert!(
                    o != base.wrapping_add(dst) as *const f64,
                    "an operand in the result's slot"
                );
                // SAFETY: `o` is a run of N <= LANES values (see `at`); the result's slot, the only
                // one written, is another run (see above), and the inputs are not written.
                unsafe { &*(o as *const [f64; N]) }
            }};
        }
        // SAFETY: as for the operands; nothing else refers to this slot while it is written.
        let out: &mut [f64; N] = unsafe { &mut *(base.add(dst) as *mut [f64; N]) };
        match *inst {
            Inst::Input { .. } if in_place => {}
            Inst::Input { var, bound } => {
                let k = 2 * var as usize + usize::from(bound == Bound::Hi);
                out[..len].copy_from_slice(&inputs[k][start..start + len]);
                if f32p {
                    // Outward to f32 (a bound already in f32 is unchanged).
                    let r = if bound == Bound::Lo {
                        Round::Down
                    } else {
                        Round::Up
                    };
                    narrow_f32::<N, ISA>(out, r);
                }
            }
            // Written once per register file (`Plan::fill_constants`).
            Inst::Const(_) | Inst::Bool(_) if plan.pinned => {}
            Inst::Const(c) => out.fill(c),
            Inst::Bool(b) => out.fill(if b { 1.0 } else { 0.0 }),
            Inst::Add(a, b, rd) => {
                binary::<N, ISA>(out, lanes!(a), lanes!(b), len, f32p, rd, lanes::Op::Add)
            }
            Inst::Sub(a, b, rd) => {
                binary::<N, ISA>(out, lanes!(a), lanes!(b), len, f32p, rd, lanes::Op::Sub)
            }
            Inst::Mul(a, b, rd) => {
                binary::<N, ISA>(out, lanes!(a), lanes!(b), len, f32p, rd, lanes::Op::Mul)
            }
            Inst::Div(a, b, rd) => {
                binary::<N, ISA>(out, lanes!(a), lanes!(b), len, f32p, rd, lanes::Op::Div)
            }
            Inst::Fma(a, b, c, rd) => {
                let (x, y, z) = (lanes!(a), lanes!(b), lanes!(c));
                // SAFETY: ISA is AVX512 only in run_chunk_avx512 (AVX-512F), AVX2 only in
                // run_chunk_avx2_fma (AVX2 and FMA).
                let done = unsafe { isa_fma::<N, ISA>(out, x, y, z, f32p, rd) };
                if !done && f32p {
                    lanes::fma_f32(out, x, y, z, len, rd);
                } else if !done {
                    lanes::fma_f64(out, x, y, z, len, rd);
                }
            }
            Inst::Sqrt(a, rd) => {
                let x = lanes!(a);
                // SAFETY: as for the fma.
                let done = unsafe { isa_sqrt::<N, ISA>(out, x, f32p, rd) };
                if !done {
                    lanes::sqrt(out, x, len, rd, f32p);
                }
            }
            Inst::Point1(f, a, rd) => {
                let x = lanes!(a);
                let nearest = last_point.get(*inst, len, |l| {
                    if f32p {
                        point::nearest_f32(f, x[l] as f32) as f64
                    } else {
                        point::nearest_f64(f, x[l])
                    }
                });
                step_lanes(out, nearest, len, f32p, rd);
            }
            Inst::Point2(f, a, b, rd) => {
                let (x, y) = (lanes!(a), lanes!(b));
                let nearest = last_point.get(*inst, len, |l| {
                    if f32p {
                        point::nearest2_f32(f, x[l] as f32, y[l] as f32) as f64
                    } else {
                        point::nearest2_f64(f, x[l], y[l])
                    }
                });
                step_lanes(out, nearest, len, f32p, rd);
            }
            Inst::RoundInt(k, a) => {
                let x = lanes!(a);
                // An f32 value widened to f64 rounds to the same integral value.
                match k {
                    RoundInt::Floor => lanes::map(out, x, f64::floor),
                    RoundInt::Ceil => lanes::map(out, x, f64::ceil),
                    RoundInt::Trunc => lanes::map(out, x, f64::trunc),
                    RoundInt::Even => lanes::map(out, x, f64::round_ties_even),
                }
            }
            Inst::Neg(a) => lanes::map(out, lanes!(a), |x| -x),
            Inst::Abs(a) => lanes::map(out, lanes!(a), f64::abs),
            Inst::Min(a, b) => lanes::each(out, lanes!(a), lanes!(b), lanes::min),
            Inst::Max(a, b) => lanes::each(out, lanes!(a), lanes!(b), lanes::max),
            Inst::Compare(c, a, b) => {
                let (x, y) = (lanes!(a), lanes!(b));
                // One loop per comparison, so that each compiles to vector compares.
                match c {
                    Cmp::Lt => lanes::test2(out, x, y, |x, y| x < y),
                    Cmp::Le => lanes::test2(out, x, y, |x, y| x <= y),
                    Cmp::Gt => lanes::test2(out, x, y, |x, y| x > y),
                    Cmp::Ge => lanes::test2(out, x, y, |x, y| x >= y),
                    Cmp::Eq => lanes::test2(out, x, y, |x, y| x == y),
                }
            }
            Inst::IsNan(a) => lanes::test2(out, lanes!(a), lanes!(a), |x, _| x.is_nan()),
            Inst::And(a, b) => {
                lanes::test2(out, lanes!(a), lanes!(b), |x, y| (x != 0.0) & (y != 0.0))
            }
            Inst::Or(a, b) => {
                lanes::test2(out, lanes!(a), lanes!(b), |x, y| (x != 0.0) | (y != 0.0))
            }
            Inst::Not(a) => lanes::test2(out, lanes!(a), lanes!(a), |x, _| x == 0.0),
            Inst::Select(c, a, b) => lanes::select(out, lanes!(c), lanes!(a), lanes!(b)),
        }
    }
    for (k, &(lo, hi)) in p.outputs.iter().enumerate() {
        for (j, v) in [lo, hi].into_iter().enumerate() {
            // SAFETY: a run of LANES >= len values (see `at`).
            let lanes = unsafe { std::slice::from_raw_parts(at(v.index()), len) };
            outs[2 * k + j][..len].copy_from_slice(lanes);
        }
    }
}

/// `x` rounded in direction `r` to f32 in place, every lane.
#[inline(always)]
fn narrow_f32<const N: usize, const ISA: u8>(x: &mut [f64; N], r: Round) {
    let copy = *x;
    #[cfg(target_arch = "x86_64")]
    if ISA == AVX512 {
        // SAFETY: ISA is AVX512 only in run_chunk_avx512 (AVX-512F).
        unsafe { super::avx512::narrow_f32(x, &copy, r) };
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if ISA == MXCSR {
        // SAFETY: ISA is MXCSR only in run_chunk_mxcsr (AVX2 and FMA).
        unsafe { super::mxcsr::narrow_f32(x, &copy, r) };
        return;
    }
    lanes::map(x, &copy, |v| f64::from(round::narrow_f32(v, r)));
}

/// A directed fma over the chunk by the instruction set `ISA`: AVX-512's embedded rounding (f64
/// and f32), or AVX2 vectors ([`super::avx2::fma`], f64); false (nothing done: `lanes` does it)
/// for round-to-nearest, the portable copy, f32 on AVX2, or off x86-64.
///
/// # Safety
/// The processor has `ISA`'s instructions (the caller is the copy of [`run_chunk_body`]
/// compiled for them).
#[inline(always)]
unsafe fn isa_fma<const N: usize, const ISA: u8>(
    out: &mut [f64; N],
    x: &[f64; N],
    y: &[f64; N],
    z: &[f64; N],
    f32p: bool,
    rd: Round,
) -> bool {
    #[cfg(target_arch = "x86_64")]
    if rd != Round::Nearest {
        // SAFETY: the processor has ISA's instructions (this function's contract).
        unsafe {
            match (ISA, f32p) {
                (AVX512, true) => super::avx512::fma_f32(out, x, y, z, rd),
                (AVX512, false) => super::avx512::fma(out, x, y, z, rd),
                (MXCSR, true) => super::mxcsr::fma_f32(out, x, y, z, rd),
                (MXCSR, false) => super::mxcsr::fma(out, x, y, z, rd),
                (AVX2, false) => super::avx2::fma(out, x, y, z, rd),
                _ => return false,
            }
        };
        return true;
    }
    let _ = (out, x, y, z, f32p, rd);
    false
}

/// A directed square root over the chunk by `ISA`; false as [`isa_fma`].
///
/// # Safety
/// As [`isa_fma`].
#[inline(always)]
unsafe fn isa_sqrt<const N: usize, const ISA: u8>(
    out: &mut [f64; N],
    x: &[f64; N],
    f32p: bool,
    rd: Round,
) -> bool {
    #[cfg(target_arch = "x86_64")]
    if rd != Round::Nearest {
        // SAFETY: the processor has ISA's instructions (this function's contract).
        unsafe {
            match (ISA, f32p) {
                (AVX512, true) => super::avx512::sqrt_f32(out, x, rd),
                (AVX512, false) => super::avx512::sqrt(out, x, rd),
                (MXCSR, true) => super::mxcsr::sqrt_f32(out, x, rd),
                (MXCSR, false) => super::mxcsr::sqrt(out, x, rd),
                (AVX2, false) => super::avx2::sqrt(out, x, rd),
                _ => return false,
            }
        };
        return true;
    }
    let _ = (out, x, f32p, rd);
    false
}

/// A directed binary operation over the chunk by the instruction set `ISA`, else by `lanes`.
#[inline(always)]
fn binary<const N: usize, const ISA: u8>(
    out: &mut [f64; N],
    x: &[f64; N],
    y: &[f64; N],
    len: usize,
    f32p: bool,
    rd: Round,
    op: lanes::Op,
) {
    #[cfg(target_arch = "x86_64")]
    if rd != Round::Nearest {
        // SAFETY: ISA is AVX512 only in run_chunk_avx512 (AVX-512F), AVX2 and MXCSR only in
        // copies compiled for AVX2 and FMA, called where the processor has them.
        unsafe {
            match (ISA, f32p) {
                (AVX512, true) => super::avx512::binary_f32(out, x, y, rd, op),
                (AVX512, false) => super::avx512::binary(out, x, y, rd, op),
                (MXCSR, true) => super::mxcsr::binary_f32(out, x, y, rd, op),
                (MXCSR, false) => super::mxcsr::binary(out, x, y, rd, op),
                (AVX2, _) => super::avx2::binary(out, x, y, rd, op, f32p),
                _ => return lanes_binary(out, x, y, len, f32p, rd, op),
            }
        }
        return;
    }
    lanes_binary(out, x, y, len, f32p, rd, op)
}

/// [`binary`] by `lanes`, the portable path.
#[inline(always)]
fn lanes_binary<const N: usize>(
    out: &mut [f64; N],
    x: &[f64; N],
    y: &[f64; N],
    len: usize,
    f32p: bool,
    rd: Round,
    op: lanes::Op,
) {
    if f32p {
        lanes::binary_f32(out, x, y, len, rd, op);
    } else {
        lanes::binary_f64(out, x, y, len, rd, op);
    }
}

/// The last point function a chunk computed, rounded to nearest, lane by lane: a
/// non-monotone function's lowering asks for both bounds at the same argument (`sin.rd %0`
/// then `sin.ru %0`), and the CPU's bounds are one correctly rounded value stepped down or up
/// ([`crate::point`]), so the second bound reuses the first's library calls instead of
/// repeating them (half of the calls of `sin`, `cos`, `tan`, ...).
struct LastPoint<const N: usize> {
    /// The point instruction the values belong to, its rounding set to `Nearest` (its
    /// operands are SSA values, so the same instruction has the same arguments in a chunk).
    key: Option<Inst>,
    nearest: [f64; N],
}

impl<const N: usize> LastPoint<N> {
    fn new() -> Self {
        LastPoint {
            key: None,
            nearest: [0.0; N],
        }
    }

    /// The nearest values of point instruction `inst` over `len` lanes: `compute(l)` for each
    /// lane unless the last instruction asked for had the same function and operands.
    fn get(&mut self, inst: Inst, len: usize, compute: impl Fn(usize) -> f64) -> &[f64; N] {
        let key = match inst {
            Inst::Point1(f, a, _) => Inst::Point1(f, a, Round::Nearest),
            Inst::Point2(f, a, b, _) => Inst::Point2(f, a, b, Round::Nearest),
            _ => unreachable!("only point instructions are cached"),
        };
        if self.key != Some(key) {
            for (l, v) in self.nearest[..len].iter_mut().enumerate() {
                *v = compute(l);
            }
            self.key = Some(key);
        }
        &self.nearest
    }
}

/// `out = nearest` stepped one float in `rd`'s direction, in the program's precision: a point
/// function's rigorous bound from its correctly rounded value ([`point::step_f64`]), in
/// branch-free loops that compile to vector code ([`lanes::next_up_f64`]).
fn step_lanes<const N: usize>(
    out: &mut [f64; N],
    nearest: &[f64; N],
    len: usize,
    f32p: bool,
    rd: Round,
) {
    let (out, nearest) = (&mut out[..len], &nearest[..len]);
    match (rd, f32p) {
        (Round::Nearest, _) => out.copy_from_slice(nearest),
        (Round::Up, false) => {
            for (o, &v) in out.iter_mut().zip(nearest) {
                *o = lanes::next_up_f64(v);
            }
        }
        (Round::Down, false) => {
            for (o, &v) in out.iter_mut().zip(nearest) {
                *o = lanes::next_down_f64(v);
            }
        }
        (Round::Up, true) => {
            for (o, &v) in out.iter_mut().zip(nearest) {
                *o = lanes::next_up_f32(v as f32) as f64;
            }
        }
        (Round::Down, true) => {
            for (o, &v) in out.iter_mut().zip(nearest) {
                *o = lanes::next_down_f32(v as f32) as f64;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scalar::interp;
    use crate::Expression;

    thread_local! {
        /// The copy of the chunk loop a test asks for on its thread (`None`: the one
        /// `run_chunk` picks for the processor).
        pub(super) static FORCED_ISA: std::cell::Cell<Option<u8>> = const { std::cell::Cell::new(None) };
    }

    /// The copies of the chunk loop this processor can run: the portable one always; the AVX2
    /// ones (software vectors, switched mode) and the AVX-512 one where it has them.
    fn runnable_isas() -> Vec<u8> {
        let mut isas = vec![PORTABLE];
        #[cfg(target_arch = "x86_64")]
        {
            if super::super::avx2::available() {
                isas.extend([AVX2, MXCSR]);
            }
            if std::arch::is_x86_feature_detected!("avx512f") {
                isas.push(AVX512);
            }
        }
        isas
    }

    /// Every copy of the chunk loop the processor runs (portable; AVX2 with software vectors
    /// and with the switched rounding mode; AVX-512) gives the reference interpreter's bits on
    /// programs of every directed operation (sums, sign-case products, quotients, square roots,
    /// the double-word power's fmas) and on point functions whose lowering asks for both bounds
    /// at one argument (and several arguments in a row, so that a bound taken from the wrong
    /// argument shows; [`LastPoint`]), over a full chunk, a narrow one and a short last one, in
    /// f64 and f32 (whose inputs the evaluator narrows outward, the interpreter given them
    /// narrowed). The boxes hold the interval classes: unbounded ends, the largest floats,
    /// subnormals, signed zeros, a point, and huge arguments with many periods.
    #[test]
    fn every_chunk_loop_equals_the_reference_interpreter() {
        for isa in runnable_isas() {
            FORCED_ISA.set(Some(isa));
            let done = std::panic::catch_unwind(chunk_loop_equals_the_reference_interpreter);
            FORCED_ISA.set(None);
            if let Err(e) = done {
                eprintln!("the chunk loop copy {isa} differs");
                std::panic::resume_unwind(e);
            }
        }
    }

    fn chunk_loop_equals_the_reference_interpreter() {
        let boxes: Vec<(f64, f64)> = [
            (0.5, 2.0),
            (-3.0, 1e-3),
            (-0.0, 0.0),
            (1e300, f64::MAX),
            (f64::NEG_INFINITY, 2.0),
            (-1e-310, 4e-320),
            (7.0, 7.0),
            (-100.0, -99.0),
            (1.0, 40.0),
            (f64::NEG_INFINITY, f64::INFINITY),
            (2.0, f64::INFINITY),
            (0.1, 0.7),
            (-f64::MAX, -1e-300),
            (1e-41, 3e-39),
        ]
        .into_iter()
        .cycle()
        .take(LANES + 7)
        .collect();
        for src in [
            "sin(x) + cos(y)",
            "sin(x) * sin(y) - cos(x) * cos(y)",
            "tan(y) + atan2(y, x) + atan2(x, y)",
            "sinpi(y) * cospi(x) + cosh(x - y)",
            "x^4 - 5*x^2 + y*y - x*y + x/y + sqrt(y) + 1/3",
            "y^7 + x^3 * (x - y) / (y*y + 1/7) - sqrt(x*x + y*y)",
        ] {
            let expr = Expression::parse(src).unwrap();
            for precision in [Precision::F64, Precision::F32] {
                let p = expr.scalar(precision).unwrap();
                for n in [boxes.len(), NARROW - 3, 3] {
                    // y runs over the boxes backwards, so x's and y's arguments differ.
                    // The interpreter reads f32 inputs as they are: they are given in f32.
                    let given = |(lo, hi): (f64, f64)| match precision {
                        Precision::F32 => (
                            round::narrow_f32(lo, Round::Down) as f64,
                            round::narrow_f32(hi, Round::Up) as f64,
                        ),
                        Precision::F64 => (lo, hi),
                    };
                    let pairs: Vec<[(f64, f64); 2]> = (0..n)
                        .map(|i| [given(boxes[i]), given(boxes[n - 1 - i])])
                        .collect();
                    // The evaluator is given the boxes as they are (it narrows f32 inputs).
                    let mut soa = vec![0.0; 4 * n];
                    let raw = (0..n).map(|i| [boxes[i], boxes[n - 1 - i]]);
                    for (i, [x, y]) in raw.enumerate() {
                        for (k, v) in [x.0, x.1, y.0, y.1].into_iter().enumerate() {
                            soa[k * n + i] = v;
                        }
                    }
                    let got = eval_soa(&p, &soa, n);
                    for (i, b) in pairs.iter().enumerate() {
                        let (lo, hi) = interp::eval(&p, b).unwrap()[0];
                        let (glo, ghi) = (got[i], got[n + i]);
                        assert!(
                            glo.to_bits() == lo.to_bits() && ghi.to_bits() == hi.to_bits()
                                || (glo.is_nan() && lo.is_nan() && ghi.is_nan() && hi.is_nan()),
                            "{src} {precision:?} on {b:?}: [{glo:e}, {ghi:e}], interpreter [{lo:e}, {hi:e}]"
                        );
                    }
                }
            }
        }
    }
}
