//! The *minimize* rule (branch and bound) on the GPU.

use crate::search::kernels;
use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, PushKernelArg};

use crate::gpu::{self, Context, GpuError};
use crate::search::kernels::{config, grow};
use crate::search::minimize::{Descent, Frontier};
use crate::search::parts;
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

/// [`crate::search::minimize::minimize`] on the GPUs of `eval` from `from` (the root box, or
/// where the CPU's rounds handed over): the work lists stay on the devices; the host reads a
/// few counters per round (and one box when the upper bound improves). Rounds of at least
/// [`parts::SPLIT_BOXES`] boxes are shared among the evaluator's devices (see [`run_minimize`]).
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

/// One part of the search's device memory, on one device: the work list of the round (`n`
/// boxes, box i's side k at `list[2(i nv + k)]`), the next round's, the batch in and out, the
/// upper bound's key and six counters per round (zeroed once: st\[0\] upper key (copied),
/// st\[1\] !key of the least kept lower bound, st\[2\] kept, st\[3\] boxes written, st\[4\]
/// overflow, st\[5\] !argmin index).
struct Lists<T> {
    stream: Arc<CudaStream>,
    k: Arc<[CudaFunction]>,
    nv: usize,
    /// Boxes a next list holds at most: the search's budget, and `room`.
    cap: usize,
    /// Boxes a next list holds at most in half the memory that was free when the part was
    /// made (a part kept from an earlier search keeps it: its buffers were in that memory).
    room: usize,
    precision: Precision,
    list: Option<CudaSlice<f64>>,
    n: usize,
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
    /// An empty part on the device of `dk` (its context bound): the one the device kept
    /// from its last search of this precision and dimension (its buffers and stream), else a
    /// new one.
    fn new(dk: &gpu::DeviceKernel, p: Precision, nv: usize, max_boxes: u64) -> Result<Self, Error>
    where
        T: Send + 'static,
    {
        use crate::search::budget::MAX_ROUNDS;
        let ctx = &dk.ctx;
        ctx.bind_to_thread()
            .during("binding the device's context")?;
        if let Some(mut kept) = dk.kept.take::<Lists<T>>() {
            if kept.nv == nv && kept.precision == p {
                kept.n = 0;
                kept.cap = (kept.room as u64).min(max_boxes).max(1) as usize;
                kept.stream
                    .memset_zeros(&mut kept.slots)
                    .during("clearing the search's counters")?;
                return Ok(kept);
            }
        }
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
        let elem = std::mem::size_of::<T>();
        // Device bytes per box of a round: two lists of nv sides, the batch of the box and its
        // midpoint in and out. The lists grow with the rounds, up to half the free memory.
        let per_box = 2 * 2 * nv * 8 + 2 * (2 * nv + 2) * elem;
        let (free, _) = ctx.mem_get_info().during("querying the free memory")?;
        let room = ((free / 2 / per_box) as u64).clamp(1, u32::MAX as u64 / 2) as usize;
        let cap = (room as u64).min(max_boxes).max(1) as usize;
        let alloc = "allocating the search's work lists";
        Ok(Lists {
            room,
            precision: p,
            list: None,
            n: 0,
            next: None,
            inputs: None,
            outputs: None,
            upper_key: stream.alloc_zeros(1).during(alloc)?,
            slots: stream.alloc_zeros(6 * MAX_ROUNDS).during(alloc)?,
            stream,
            k,
            nv,
            cap,
        })
    }

    /// Device bytes the part's buffers hold.
    fn bytes(&self) -> usize {
        let f = |b: &Option<CudaSlice<f64>>| b.as_ref().map_or(0, |b| b.len() * 8);
        let t = |b: &Option<CudaSlice<T>>| b.as_ref().map_or(0, |b| b.len());
        f(&self.list) + f(&self.next) + (t(&self.inputs) + t(&self.outputs)) * size_of::<T>()
    }

    /// Writes the upper bound's key (the next kernels prune with it).
    fn write_upper(&mut self, key: u64) -> Result<(), GpuError> {
        self.stream
            .memcpy_htod(&[key], &mut self.upper_key)
            .during("writing the upper bound")
    }

    /// The first half of a round over the `n` boxes of `list`: their batch and their
    /// midpoints' evaluated, the upper bound lowered by the midpoints.
    fn bound(&mut self, dk: &gpu::DeviceKernel, n: usize) -> Result<(), GpuError> {
        let stream = self.stream.clone();
        let (nv, m) = (self.nv, 2 * n);
        grow(&stream, &mut self.inputs, 2 * nv * m)?;
        grow(&stream, &mut self.outputs, 2 * m)?;
        let (inputs, outputs) = (
            self.inputs.as_mut().expect("grown"),
            self.outputs.as_mut().expect("grown"),
        );
        let list = self.list.as_ref().expect("a round has boxes");
        let (n32, nv32) = (n as u32, nv as u32);
        let mut b = stream.launch_builder(&self.k[0]);
        b.arg(&n32).arg(&nv32).arg(list).arg(&mut *inputs);
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
        Ok(())
    }

    /// The second half of the `r`-th round over `n` boxes: the boxes pruned with the upper
    /// bound, the survivors' halves written to `next`.
    fn split(&mut self, n: usize, r: usize) -> Result<(), GpuError> {
        let stream = self.stream.clone();
        let (nv, room) = (self.nv, (2 * n).min(self.cap));
        grow(&stream, &mut self.next, 2 * nv * room)?;
        let next = self.next.as_mut().expect("grown");
        let (n32, nv32, room32) = (n as u32, nv as u32, room as u32);
        let mut st = self.slots.slice_mut(6 * r..6 * r + 6);
        let mut sp = stream.launch_builder(&self.k[2]);
        sp.arg(&n32)
            .arg(&nv32)
            .arg(self.list.as_ref().expect("a round has boxes"))
            .arg(self.outputs.as_ref().expect("bound"))
            .arg(&self.upper_key);
        sp.arg(&mut st).arg(&mut *next).arg(&room32);
        // SAFETY: matches the kernel; `next` holds `room` boxes and the kernel writes none at
        // or beyond it.
        unsafe { sp.launch(config(n)) }.during("launching the search's split kernel")?;
        Ok(())
    }

    /// The `r`-th round's six counters (waiting for the round).
    fn counters(&self, r: usize) -> Result<Vec<u64>, GpuError> {
        self.stream
            .clone_dtoh(&self.slots.slice(6 * r..6 * r + 6))
            .during("reading the search's counters")
    }

    /// The upper bound's key on the device (waiting for the kernels before).
    fn read_upper(&self) -> Result<u64, GpuError> {
        Ok(self
            .stream
            .clone_dtoh(&self.upper_key)
            .during("reading the upper bound")?[0])
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
        let list = self.list.as_ref().expect("a round ran");
        let sides = stream
            .clone_dtoh(&list.slice(2 * nv * i..2 * nv * (i + 1)))
            .during("reading the argmin")?;
        Ok(Some(sides.chunks(2).map(|s| mid(s[0], s[1])).collect()))
    }
}

impl<T> crate::search::parts::PartList for Lists<T> {
    fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    fn list(&mut self) -> (&mut Option<CudaSlice<f64>>, &mut usize) {
        (&mut self.list, &mut self.n)
    }

    fn width(&self) -> usize {
        2 * self.nv
    }
}

/// The search; `None` when f is undefined on every box of a round. Its list lives on the
/// first device while a round has fewer than [`parts::SPLIT_BOXES`] boxes, else spread evenly
/// over every device of the kernel (`IVJIT_SEARCH_PARTS`: that many parts for every round, round-
/// robin over the devices, several on one GPU, for tests). A shared round runs in two halves:
/// every part bounds its boxes, the host takes the least upper bound of all and writes it
/// back, every part prunes and splits with it; so the rounds keep the same boxes as on one
/// device (in another order) and the search gives the same lower and upper bounds, rounds and
/// boxes. (Only a search that runs out of one device's memory goes further on several.)
fn run_minimize<T>(
    kernel: &gpu::GpuKernel,
    root: &[(f64, f64)],
    from: Frontier,
    tol: f64,
    descent: Option<&Descent>,
) -> Result<Option<crate::search::minimize::Minimum>, Error>
where
    T: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits + Send + 'static,
{
    let devices = kernel.device_kernels();
    let mut parts: Vec<Lists<T>> = Vec::new();
    let found = search(kernel, root, from, tol, descent, &mut parts)?;
    // Each device keeps its part for the next search of the evaluator (the lists grown by
    // this one: a search of a billion boxes allocates tens of gigabytes, about a quarter of
    // its time: 711 against 522 ms, docs/gpu-runs.md runs 63-64), unless its buffers hold more than half the device's memory.
    // (Kept buffers are not free memory for other searches' room: a later search of another
    // kind on the same evaluator may stop for memory sooner.)
    for (d, l) in parts.into_iter().enumerate() {
        let dk = &devices[d % devices.len()];
        let (_, total) = dk
            .ctx
            .mem_get_info()
            .during("querying the device's memory")?;
        if l.bytes() <= total / 2 {
            dk.kept.put(l);
        }
    }
    Ok(found)
}

/// [`run_minimize`]'s rounds, with the parts it makes left in `parts`.
fn search<T>(
    kernel: &gpu::GpuKernel,
    root: &[(f64, f64)],
    from: Frontier,
    tol: f64,
    descent: Option<&Descent>,
    parts: &mut Vec<Lists<T>>,
) -> Result<Option<crate::search::minimize::Minimum>, Error>
where
    T: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits + Send + 'static,
{
    use crate::search::budget::Ended;
    use crate::search::minimize::Minimum;
    let devices = kernel.device_kernels();
    let forced = gpu::env::search_parts();
    let dk_of = |part: usize| &devices[part % devices.len()];
    let p = kernel.precision();
    let trace = gpu::env::batch_trace().then(std::time::Instant::now);
    let Frontier {
        list,
        mut upper,
        mut argmin,
        mut budget,
    } = from;
    let nv = root.len();
    let first_round = budget.rounds();
    parts.push(Lists::<T>::new(dk_of(0), p, nv, budget.max_boxes())?);
    {
        let first = &mut parts[0];
        let alloc = "allocating the search's work lists";
        let flat: Vec<f64> = list.iter().flat_map(|&(a, b)| [a, b]).collect();
        grow(&first.stream, &mut first.list, flat.len())?;
        let l = first.list.as_mut().expect("grown");
        first
            .stream
            .memcpy_htod(&flat, &mut l.slice_mut(..flat.len()))
            .during(alloc)?;
        first.n = list.len() / nv;
        first.write_upper(key(upper))?;
    }
    loop {
        crate::search::interrupt::check()?;
        let r = budget.rounds();
        let total: usize = parts.iter().map(|l| l.n).sum();
        let want = parts::wanted(total, devices.len(), forced);
        while parts.len() < want {
            let part = Lists::new(dk_of(parts.len()), p, nv, budget.max_boxes())?;
            parts.push(part);
        }
        parts::balance(parts, want)?;
        if let Some(t) = trace {
            eprintln!(
                "ivjit minimize: round {r}: {total} boxes in {want} part(s) at {:.2} ms",
                t.elapsed().as_secs_f64() * 1e3
            );
        }
        // Each part's kept boxes: its next round's are their halves.
        let mut kept_by = vec![0usize; parts.len()];
        let (s, best) = if want == 1 {
            // One device: the round in one go, one read.
            let l = &mut parts[0];
            l.bound(dk_of(0), l.n)?;
            l.split(l.n, r)?;
            let s = l.counters(r)?;
            kept_by[0] = s[2] as usize;
            (s, 0)
        } else {
            // The first half everywhere, the least upper bound agreed, the second half.
            for (d, l) in parts.iter_mut().enumerate().filter(|(_, l)| l.n > 0) {
                dk_of(d)
                    .ctx
                    .bind_to_thread()
                    .during("binding a device's context")?;
                l.write_upper(key(upper))?;
                l.bound(dk_of(d), l.n)?;
            }
            let mut keys = vec![u64::MAX; parts.len()];
            for (d, l) in parts.iter().enumerate().filter(|(_, l)| l.n > 0) {
                keys[d] = l.read_upper()?;
            }
            let least = keys.iter().copied().min().unwrap_or(u64::MAX);
            let best = keys.iter().position(|&k| k == least).unwrap_or(0);
            let mut s = vec![least, 0, 0, 0, 0, 0];
            for (d, l) in parts.iter_mut().enumerate().filter(|(_, l)| l.n > 0) {
                dk_of(d)
                    .ctx
                    .bind_to_thread()
                    .during("binding a device's context")?;
                if keys[d] != least {
                    l.write_upper(least)?;
                }
                l.split(l.n, r)?;
            }
            for (d, l) in parts.iter().enumerate().filter(|(_, l)| l.n > 0) {
                let c = l.counters(r)?;
                kept_by[d] = c[2] as usize;
                s[1] = s[1].max(c[1]);
                (s[2], s[3]) = (s[2] + c[2], s[3] + c[3]);
                s[4] = s[4].max(c[4]);
            }
            (s, best)
        };
        budget.spend(total as u64);
        let kept = s[2] as usize;
        if kept == 0 {
            return Ok(None);
        }
        let round_upper = unkey(s[0]);
        let improved = round_upper < upper;
        if improved {
            upper = round_upper;
            let l = &mut parts[best];
            dk_of(best)
                .ctx
                .bind_to_thread()
                .during("binding a device's context")?;
            if let Some(x) = l.argmin(l.n, r)? {
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
                for (d, l) in parts.iter_mut().enumerate() {
                    dk_of(d)
                        .ctx
                        .bind_to_thread()
                        .during("binding a device's context")?;
                    l.write_upper(key(upper))?;
                }
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
        // Each part's survivors' halves are its next round's boxes.
        for (l, kept) in parts.iter_mut().zip(kept_by).filter(|(l, _)| l.n > 0) {
            std::mem::swap(&mut l.list, &mut l.next);
            l.n = 2 * kept;
        }
    }
}
