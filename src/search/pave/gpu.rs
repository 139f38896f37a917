//! Paving on the GPU: the work list and the three lists in device memory for the whole
//! search. Each round the host queues the list's boxes as a batch (`list.cu`), the contractor
//! on them, the decorated functions and the complement's contractors on the contracted boxes
//! (each program's own kernel, on device buffers), and `ivjit_pv_sort` (`pave.cu`), which
//! sorts every box into the lists or cuts it in two; then it reads the round's four counters.
//! The lists come back once, at the end.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, PushKernelArg};

use super::{to_box, Paver, Paving, SPLIT};
use crate::decoration::Decoration;
use crate::gpu::{self, Context, GpuError};
use crate::search::kernels::{self, config, grow, grow_keeping};
use crate::{Error, Precision};

/// The most variables a paving's device rounds take (`PV_MAXV` in pave.cu: the kernel keeps
/// three boxes per thread); a paving of more runs its rounds on the CPU.
pub(super) const MAX_VARS: usize = 16;

/// The CUDA C of the paving kernels for element type `p`.
pub(crate) fn source(p: Precision) -> String {
    let define = match p {
        Precision::F64 => "",
        Precision::F32 => "#define IVJIT_F32\n",
    };
    kernels::prelude(p) + kernels::LIST_INPUTS + define + include_str!("pave.cu")
}

/// What a paving keeps on its device between calls (one per precision): the stream, the
/// kernels and the buffers, which grow as rounds need them.
struct Buffers<T> {
    stream: Arc<CudaStream>,
    k: Arc<[CudaFunction]>,
    list: Option<CudaSlice<f64>>,
    next: Option<CudaSlice<f64>>,
    inner: Option<CudaSlice<f64>>,
    outer: Option<CudaSlice<f64>>,
    boundary: Option<CudaSlice<f64>>,
    /// The batch in, the contracted boxes, the decorated functions' values, the complement's
    /// contractors' boxes.
    inputs: Option<CudaSlice<T>>,
    contracted: Option<CudaSlice<T>>,
    values: Option<CudaSlice<T>>,
    complements: Option<CudaSlice<T>>,
    ranges: Option<CudaSlice<f64>>,
    /// The round's counters: next, inner, outer, boundary boxes; overflow.
    counters: CudaSlice<u64>,
}

/// [`Paver::pave`]'s rounds on the GPU from `work` (flat bounds, the boxes left when the CPU
/// handed over, or the root), with `out` what earlier rounds found.
pub(super) fn pave(
    paver: &Paver,
    work: Vec<f64>,
    eps: f64,
    max_boxes: usize,
    out: Paving,
) -> Result<Paving, Error> {
    let kernel = paver
        .contract
        .gpu_kernel()
        .expect("a paving on the GPU has GPU programs");
    match kernel.precision() {
        Precision::F64 => run::<f64>(paver, work, eps, max_boxes, out),
        Precision::F32 => run::<f32>(paver, work, eps, max_boxes, out),
    }
}

/// The device kernel of `eval` on the first device.
fn device_kernel(eval: &crate::Evaluator) -> &gpu::DeviceKernel {
    &eval
        .gpu_kernel()
        .expect("a paving on the GPU has GPU programs")
        .device_kernels()[0]
}

fn run<T>(
    paver: &Paver,
    mut work: Vec<f64>,
    eps: f64,
    max_boxes: usize,
    mut out: Paving,
) -> Result<Paving, Error>
where
    T: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits + Send + 'static,
{
    let nv = paver.expr.vars().len();
    let (no, nc) = (paver.ranges.len(), paver.complements.len());
    let dk = device_kernel(&paver.contract);
    let ctx = &dk.ctx;
    ctx.bind_to_thread()
        .during("binding the device's context")?;
    let mut bufs = match dk.kept.take::<Buffers<T>>() {
        Some(kept) => kept,
        None => {
            let k = gpu::search_module::load(
                ctx,
                dk.ordinal,
                gpu::search_module::SearchModule {
                    name: "pave",
                    cuda: source(paver.precision),
                    linked: Vec::new(),
                    kernels: &["ivjit_list_inputs", "ivjit_pv_sort"],
                },
            )?;
            let stream = ctx.new_stream().during("creating a stream")?;
            Buffers {
                counters: stream
                    .alloc_zeros(5)
                    .during("allocating the paving's counters")?,
                stream,
                k,
                list: None,
                next: None,
                inner: None,
                outer: None,
                boundary: None,
                inputs: None,
                contracted: None,
                values: None,
                complements: None,
                ranges: None,
            }
        }
    };
    let stream = bufs.stream.clone();
    let flat_ranges: Vec<f64> = paver.ranges.iter().flat_map(|r| [r.lo, r.hi]).collect();
    grow(&stream, &mut bufs.ranges, flat_ranges.len().max(1))?;
    if let Some(r) = bufs.ranges.as_mut().filter(|_| no > 0) {
        stream
            .memcpy_htod(&flat_ranges, &mut r.slice_mut(..flat_ranges.len()))
            .during("uploading the ranges")?;
    }
    let box_len = 2 * nv;
    grow(&stream, &mut bufs.list, work.len())?;
    if let Some(l) = bufs.list.as_mut() {
        stream
            .memcpy_htod(&work, &mut l.slice_mut(..work.len()))
            .during("uploading the boxes")?;
    }
    let mut n = work.len() / box_len;
    work.clear();
    // Boxes in the device's inner, outer and boundary lists.
    let (mut n_inner, mut n_outer, mut n_bnd) = (0usize, 0usize, 0usize);
    let maxf = match paver.precision {
        Precision::F64 => f64::MAX,
        Precision::F32 => f32::MAX as f64,
    };
    let defined = f64::from(Decoration::Def.code());
    let (a, r) = (1.0 - SPLIT, SPLIT);
    // (The fixpoint ratio as the fraction of a side that must stay for the box to be cut.)
    let keep = 1.0 - paver.ratio;
    // The decorated functions' arrays on the device: lo and hi of each function, then each
    // one's decoration code as one array (`Program::output_arrays`).
    let program = paver.forward.program();
    let value_arrays = program.output_arrays().len();
    let codes = 2 * (program.outputs.len() - program.code_outputs);
    assert_eq!(
        (codes, program.code_outputs),
        (2 * no, no),
        "the decorated functions: a pair per function, then a code per function"
    );
    let codes32 = codes as u32;
    while n > 0 {
        crate::search::interrupt::check()?;
        if out.evaluated + n > max_boxes {
            out.truncated = true;
            let left = download(&stream, &bufs.list, n * box_len)?;
            out.boundary.extend(left.chunks_exact(box_len).map(to_box));
            break;
        }
        out.evaluated += n;
        // Room for the worst case: every box cut in two, or leaving 2 nv slabs in a list.
        let slabs = box_len * n;
        grow(&stream, &mut bufs.next, box_len * 2 * n)?;
        grow(&stream, &mut bufs.inputs, box_len * n)?;
        grow(&stream, &mut bufs.contracted, box_len * n)?;
        grow(&stream, &mut bufs.values, value_arrays * n)?;
        grow(&stream, &mut bufs.complements, (nc * box_len * n).max(1))?;
        grow_keeping(
            &stream,
            &mut bufs.inner,
            box_len * (n_inner + slabs),
            box_len * n_inner,
        )?;
        grow_keeping(
            &stream,
            &mut bufs.outer,
            box_len * (n_outer + slabs),
            box_len * n_outer,
        )?;
        grow_keeping(
            &stream,
            &mut bufs.boundary,
            box_len * (n_bnd + n),
            box_len * n_bnd,
        )?;
        round::<T>(&mut bufs, paver, n)?;
        let caps =
            |b: &Option<CudaSlice<f64>>| b.as_ref().map_or(0, |b| (b.len() / box_len) as u64);
        let (n32, nv32, no32, nc32) = (n as u32, nv as u32, no as u32, nc as u32);
        let (next_cap, inner_cap, outer_cap, bnd_cap) = (
            caps(&bufs.next),
            caps(&bufs.inner),
            caps(&bufs.outer),
            caps(&bufs.boundary),
        );
        let (inner_base, outer_base, bnd_base) = (n_inner as u64, n_outer as u64, n_bnd as u64);
        stream
            .memset_zeros(&mut bufs.counters)
            .during("clearing the paving's counters")?;
        let Buffers {
            k,
            list,
            next,
            inner,
            outer,
            boundary,
            contracted,
            values,
            complements,
            ranges,
            counters,
            ..
        } = &mut bufs;
        let mut b = stream.launch_builder(&k[1]);
        b.arg(&n32).arg(&nv32).arg(&no32).arg(&nc32).arg(&codes32);
        b.arg(list.as_ref().expect("grown"))
            .arg(contracted.as_ref().expect("grown"))
            .arg(values.as_ref().expect("grown"))
            .arg(complements.as_ref().expect("grown"))
            .arg(ranges.as_ref().expect("grown"));
        b.arg(&defined)
            .arg(&eps)
            .arg(&a)
            .arg(&r)
            .arg(&maxf)
            .arg(&keep);
        b.arg(&mut *counters)
            .arg(next.as_mut().expect("grown"))
            .arg(&next_cap);
        b.arg(inner.as_mut().expect("grown"))
            .arg(&inner_base)
            .arg(&inner_cap);
        b.arg(outer.as_mut().expect("grown"))
            .arg(&outer_base)
            .arg(&outer_cap);
        b.arg(boundary.as_mut().expect("grown"))
            .arg(&bnd_base)
            .arg(&bnd_cap);
        // SAFETY: matches the kernel; the lists have room for the worst case (above) and
        // the kernel writes nothing past the capacities it is given.
        unsafe { b.launch(config(n)) }.during("launching the paving's sort kernel")?;
        let st = stream
            .clone_dtoh(&bufs.counters)
            .during("reading the paving's counters")?;
        if st[4] != 0 {
            // (Cannot happen: the host reserves the worst case above.)
            return Err(crate::search::SearchError::OutOfMemory(
                "a paving's device list had no room for a round's boxes".into(),
            )
            .into());
        }
        n_inner += st[1] as usize;
        n_outer += st[2] as usize;
        n_bnd += st[3] as usize;
        n = st[0] as usize;
        std::mem::swap(&mut bufs.list, &mut bufs.next);
    }
    for (list, count, to) in [
        (&bufs.inner, n_inner, &mut out.inner),
        (&bufs.outer, n_outer, &mut out.outer),
        (&bufs.boundary, n_bnd, &mut out.boundary),
    ] {
        let flat = download(&stream, list, count * box_len)?;
        to.extend(flat.chunks_exact(box_len).map(to_box));
    }
    dk.kept.put(bufs);
    Ok(out)
}

/// Queues the round's batch and programs: the list's `n` boxes as the batch, the contractor on
/// it, the decorated functions and the complement's contractors on the contracted boxes.
/// (Every program but the decorated functions has 2 nv output arrays, the contracted box.)
fn round<T>(bufs: &mut Buffers<T>, paver: &Paver, n: usize) -> Result<(), Error>
where
    T: cudarc::driver::DeviceRepr,
{
    let stream = bufs.stream.clone();
    let nv = paver.expr.vars().len();
    let elem = std::mem::size_of::<T>();
    let (n32, nv32) = (n as u32, nv as u32);
    let (list, inputs, contracted, values, complements) = (
        bufs.list.as_ref().expect("a round has boxes"),
        bufs.inputs.as_mut().expect("grown"),
        bufs.contracted.as_mut().expect("grown"),
        bufs.values.as_mut().expect("grown"),
        bufs.complements.as_mut().expect("grown"),
    );
    let mut b = stream.launch_builder(&bufs.k[0]);
    b.arg(&n32).arg(&nv32).arg(list).arg(&mut *inputs);
    // SAFETY: matches the kernel; `list` holds n boxes, `inputs` 2 nv n values.
    unsafe { b.launch(config(n)) }.during("launching the paving's input kernel")?;
    let (inp, _gi) = inputs.device_ptr(&stream);
    let (cp, _gc) = contracted.device_ptr_mut(&stream);
    let (vp, _gv) = values.device_ptr_mut(&stream);
    let (kp, _gk) = complements.device_ptr_mut(&stream);
    let launch = |eval: &crate::Evaluator, from: u64, to: u64| -> Result<(), Error> {
        // SAFETY: each program reads 2 nv n values (a box per variable) and writes its outputs'
        // 2 n values each, stride n: the contractor and the complement's 2 nv, the decorated
        // functions 4 no; the buffers were grown to those sizes.
        unsafe { device_kernel(eval).launch_soa(&stream, n, from, to) }
            .during("launching a paving program")?;
        Ok(())
    };
    launch(&paver.contract, inp, cp)?;
    launch(&paver.forward, cp, vp)?;
    for (j, c) in paver.complements.iter().enumerate() {
        launch(c, cp, kp + (j * 2 * nv * n * elem) as u64)?;
    }
    Ok(())
}

/// The first `len` values of `buf`, copied back.
fn download(
    stream: &Arc<CudaStream>,
    buf: &Option<CudaSlice<f64>>,
    len: usize,
) -> Result<Vec<f64>, GpuError> {
    match buf.as_ref().filter(|_| len > 0) {
        Some(b) => stream
            .clone_dtoh(&b.slice(..len))
            .during("downloading the paving's boxes"),
        None => Ok(Vec::new()),
    }
}
