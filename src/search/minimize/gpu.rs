//! The *minimize* rule (branch and bound) on the GPU.

use crate::search::kernels;
use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, PushKernelArg};

use crate::gpu::{self, Context, GpuError};
use crate::search::kernels::{config, grow};
use crate::search::minimize::{Descent, Frontier};
use crate::{Error, Evaluator, Precision};

/// The CUDA C of the branch-and-bound kernels for element type `p` (the expression is the
/// batch kernel, launched between them). Bounds are compared through an order-preserving
/// map of doubles onto u64 (`key`), so that atomicMin keeps the least.
pub(crate) fn minimize_source(p: Precision) -> String {
    kernels::prelude(p) + include_str!("minimize.cu")
}

/// The order-preserving map of [`minimize_source`]'s `key`, on the host.
fn key(x: f64) -> u64 {
    let b = x.to_bits();
    if b >> 63 == 1 {
        !b
    } else {
        b | 1 << 63
    }
}

fn unkey(k: u64) -> f64 {
    f64::from_bits(if k >> 63 == 1 { k & !(1 << 63) } else { !k })
}

/// [`crate::search::minimize::minimize`] on the GPU of `eval` from `from` (the root box, or where
/// the CPU's rounds handed over): the work list stays on the device; the host reads five
/// counters per round (and one box when the upper bound improves).
pub(crate) fn minimize(
    eval: &Evaluator,
    root: &[(f64, f64)],
    from: Frontier,
    tol: f64,
    descent: Option<&Descent>,
) -> Result<crate::search::minimize::Minimum, Error> {
    let kernel = eval.gpu_kernel().expect("a GPU evaluator has a kernel");
    let found = match kernel.precision() {
        Precision::F64 => run_minimize::<f64>(kernel, root, from, tol, descent)?,
        Precision::F32 => run_minimize::<f32>(kernel, root, from, tol, descent)?,
    };
    found.ok_or_else(crate::search::minimize::undefined)
}

/// The search's device memory: the work list of the round (`list`, box i's side k at
/// `list[2(i nv + k)]`), the next round's, the batch in and out, the upper bound's key and
/// six counters per round (zeroed once: st\[0\] upper key (copied), st\[1\] !key of the least
/// kept lower bound, st\[2\] kept, st\[3\] boxes written, st\[4\] overflow, st\[5\] !argmin index).
struct Lists<T> {
    stream: Arc<CudaStream>,
    k: Arc<[CudaFunction]>,
    nv: usize,
    /// Boxes a next list holds at most.
    cap: usize,
    list: CudaSlice<f64>,
    next: Option<CudaSlice<f64>>,
    inputs: Option<CudaSlice<T>>,
    outputs: Option<CudaSlice<T>>,
    upper_key: CudaSlice<u64>,
    slots: CudaSlice<u64>,
}

impl<T> Lists<T>
where
    T: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits,
{
    /// One round over the `n` boxes of `list`, the `r`-th: their batch and their midpoints'
    /// evaluated, the upper bound lowered, the survivors' halves written to `next`. Returns
    /// the round's six counters.
    fn round(&mut self, dk: &gpu::DeviceKernel, n: usize, r: usize) -> Result<Vec<u64>, GpuError> {
        let stream = self.stream.clone();
        let (nv, m, room) = (self.nv, 2 * n, (2 * n).min(self.cap));
        grow(&stream, &mut self.next, 2 * nv * room)?;
        grow(&stream, &mut self.inputs, 2 * nv * m)?;
        grow(&stream, &mut self.outputs, 2 * m)?;
        let (next, inputs, outputs) = (
            self.next.as_mut().expect("grown"),
            self.inputs.as_mut().expect("grown"),
            self.outputs.as_mut().expect("grown"),
        );
        let (n32, nv32, room32) = (n as u32, nv as u32, room as u32);
        let mut b = stream.launch_builder(&self.k[0]);
        b.arg(&n32).arg(&nv32).arg(&self.list).arg(&mut *inputs);
        // SAFETY: matches the kernel; `list` holds n boxes, `inputs` 2 nv 2n values.
        unsafe { b.launch(config(n)) }.during("launching the search's input kernel")?;
        {
            let (inp, _gi) = inputs.device_ptr(&stream);
            let (outp, _go) = outputs.device_ptr_mut(&stream);
            // SAFETY: the expression reads 2 nv m and writes 2 m values with stride m.
            unsafe { dk.launch_soa(&stream, m, inp, outp) }
                .during("launching the expression kernel")?;
        }
        let mut u = stream.launch_builder(&self.k[1]);
        u.arg(&n32).arg(&*outputs).arg(&mut self.upper_key);
        // SAFETY: matches the kernel; `outputs` holds 2m values.
        unsafe { u.launch(config(n)) }.during("launching the search's bound kernel")?;
        let mut st = self.slots.slice_mut(6 * r..6 * r + 6);
        let mut sp = stream.launch_builder(&self.k[2]);
        sp.arg(&n32)
            .arg(&nv32)
            .arg(&self.list)
            .arg(&*outputs)
            .arg(&self.upper_key);
        sp.arg(&mut st).arg(&mut *next).arg(&room32);
        // SAFETY: matches the kernel; `next` holds `room` boxes and the kernel writes none at
        // or beyond it.
        unsafe { sp.launch(config(n)) }.during("launching the search's split kernel")?;
        stream
            .clone_dtoh(&st)
            .during("reading the search's counters")
    }

    /// The midpoint of the box of the `r`-th round (of `n` boxes) whose midpoint gave the
    /// upper bound, or `None` when no box did.
    fn argmin(&mut self, n: usize, r: usize) -> Result<Option<Vec<f64>>, GpuError> {
        use crate::search::minimize::mid;
        let stream = &self.stream;
        let n32 = n as u32;
        let mut st = self.slots.slice_mut(6 * r..6 * r + 6);
        let mut a = stream.launch_builder(&self.k[3]);
        a.arg(&n32)
            .arg(self.outputs.as_ref().expect("a round ran"))
            .arg(&self.upper_key)
            .arg(&mut st);
        // SAFETY: matches the kernel.
        unsafe { a.launch(config(n)) }.during("launching the search's argmin kernel")?;
        let i = !stream.clone_dtoh(&st).during("reading the argmin")?[5] as usize;
        if i >= n {
            return Ok(None);
        }
        let nv = self.nv;
        let sides = stream
            .clone_dtoh(&self.list.slice(2 * nv * i..2 * nv * (i + 1)))
            .during("reading the argmin")?;
        Ok(Some(sides.chunks(2).map(|s| mid(s[0], s[1])).collect()))
    }
}

/// The search; `None` when f is undefined on every box of a round.
fn run_minimize<T>(
    kernel: &gpu::GpuKernel,
    root: &[(f64, f64)],
    from: Frontier,
    tol: f64,
    descent: Option<&Descent>,
) -> Result<Option<crate::search::minimize::Minimum>, Error>
where
    T: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits,
{
    use crate::search::budget::{Ended, MAX_ROUNDS};
    use crate::search::minimize::Minimum;
    let dk = kernel.primary();
    let ctx = &dk.ctx;
    ctx.bind_to_thread()
        .during("binding the device's context")?;
    let p = kernel.precision();
    let k = gpu::search_module::load(
        ctx,
        dk.ordinal,
        gpu::search_module::SearchModule {
            name: "minimize",
            cuda: minimize_source(p),
            linked: Vec::new(),
            kernels: &[
                "ivjit_mz_inputs",
                "ivjit_mz_upper",
                "ivjit_mz_split",
                "ivjit_mz_argmin",
            ],
        },
    )?;
    let stream = ctx.new_stream().during("creating a stream")?;
    let Frontier {
        list,
        mut upper,
        mut argmin,
        mut budget,
    } = from;
    let nv = root.len();
    let first_round = budget.rounds();
    let elem = std::mem::size_of::<T>();
    // Device bytes per box of a round: two lists of nv sides, the batch of the box and its
    // midpoint in and out. The lists grow with the rounds, up to half the free memory.
    let per_box = 2 * 2 * nv * 8 + 2 * (2 * nv + 2) * elem;
    let (free, _) = ctx.mem_get_info().during("querying the free memory")?;
    let cap = ((free / 2 / per_box) as u64)
        .min(budget.max_boxes())
        .clamp(1, u32::MAX as u64 / 2) as usize;
    let alloc = "allocating the search's work lists";
    let flat: Vec<f64> = list.iter().flat_map(|&(a, b)| [a, b]).collect();
    let mut lists = Lists::<T> {
        list: stream.clone_htod(&flat).during(alloc)?,
        next: None,
        inputs: None,
        outputs: None,
        upper_key: stream.clone_htod(&[key(upper)]).during(alloc)?,
        slots: stream.alloc_zeros(6 * MAX_ROUNDS).during(alloc)?,
        stream,
        k,
        nv,
        cap,
    };
    let mut n = list.len() / nv;
    loop {
        crate::search::interrupt::check()?;
        let r = budget.rounds();
        let s = lists.round(dk, n, r)?;
        budget.spend(n as u64);
        let kept = s[2] as usize;
        if kept == 0 {
            return Ok(None);
        }
        let round_upper = unkey(s[0]);
        let improved = round_upper < upper;
        if improved {
            upper = round_upper;
            if let Some(x) = lists.argmin(n, r)? {
                argmin = x;
            }
        }
        let lower = unkey(!s[1]);
        let mut ended = if upper - lower <= tol {
            Some(Ended::Done)
        } else {
            budget
                .refuses(2 * kept as u64)
                .or((s[4] != 0).then_some(Ended::Memory))
        };
        if ended.is_none() && improved {
            let better = crate::search::minimize::descend(descent, root, upper, &argmin)?;
            if let Some((u, x)) = better {
                (upper, argmin) = (u, x);
                // The next round prunes with it (its midpoints' bound is a minimum with it).
                lists
                    .stream
                    .memcpy_htod(&[key(upper)], &mut lists.upper_key)
                    .during("writing the upper bound")?;
                if upper - lower <= tol {
                    ended = Some(Ended::Done);
                }
            }
        }
        if let Some(ended) = ended {
            return Ok(Some(Minimum {
                lower,
                upper,
                argmin,
                ended,
                rounds: budget.rounds(),
                boxes: budget.boxes(),
                remaining: kept,
                gpu_rounds: budget.rounds() - first_round,
            }));
        }
        std::mem::swap(&mut lists.list, lists.next.as_mut().expect("grown"));
        n = 2 * kept;
    }
}
