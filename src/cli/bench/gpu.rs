//! GPU timing for `ivjit bench`: device buffers, device events, the two ceilings (device copy and
//! an FMA loop), ivjit's kernel and the CUDA C baseline, all through cudarc directly.
//!
//! Kernel-only time is the median of [`REPS`] launches, each between two device events, after
//! [`WARMUP`] launches. End-to-end time is host-to-device copy + kernel + device-to-host copy
//! (pageable host memory) between two events, median of [`E2E_REPS`].

use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::{
    sys, CudaContext, CudaFunction, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DeviceRepr,
    LaunchConfig, PushKernelArg, ValidAsZeroBits,
};
use cudarc::nvrtc::{CompileOptions, Ptx};

use super::baseline;
use ivjit::internals::gpu::Tier;
use ivjit::internals::scalar::Precision;
use ivjit::{BackendChoice, Evaluator, Expression};

/// Launches before timing.
pub const WARMUP: usize = 3;
/// Timed kernel launches (the median is reported).
pub const REPS: usize = 15;
/// Timed end-to-end runs.
pub const E2E_REPS: usize = 3;
const BLOCK: u32 = 256;
const BLOCKS_PER_SM: u32 = 8;

type R<T> = Result<T, String>;

fn d(what: &str) -> impl FnOnce(cudarc::driver::DriverError) -> String + '_ {
    move |e| format!("{what}: {e:?}")
}

/// The device, its context and a stream.
pub struct Device {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    /// e.g. "NVIDIA H200".
    pub name: String,
    /// Compute capability.
    pub cc: (i32, i32),
    sms: u32,
}

/// Timings of one expression in one precision on the GPU.
#[derive(Clone, Debug)]
pub struct GpuRow {
    /// Median kernel time (ms), device events.
    pub kernel_ms: f64,
    /// Median host-to-device + kernel + device-to-host (ms).
    pub e2e_ms: f64,
    /// parse → PTX → load/link of a new expression (ms), host clock.
    pub cold_compile_ms: f64,
    /// Of `cold_compile_ms`, the parse (rewrites and the f64 lowering included): what comes
    /// after it is lowering for f32, emitting and loading.
    pub parse_ms: f64,
    /// A second `Evaluator` for the same expression (ms).
    pub warm_compile_ms: f64,
    /// Median kernel time of the CUDA C baseline (ms), or why there is none.
    pub baseline_ms: Result<f64, String>,
    /// A program the library compiles as stages first: their count, their median time (ms),
    /// and how long its single kernel took to compile (seconds, on a thread of its own while
    /// the stages ran).
    pub staged: Option<(usize, f64, f64)>,
    /// A program the library compiles as stages: its first tiers ([`Tiers`]).
    pub tiers: Option<Tiers>,
}

/// The tiers of a program compiled as stages, timed from the start of its parse (ms, host
/// clock): the first result (one box evaluated and back on the host, through whatever answers
/// first: the interpreter while the stages compile), the stages ready, and the interpreter's
/// throughput (boxes/s, median kernel time on up to 2^16 boxes).
#[derive(Clone, Copy, Debug)]
pub struct Tiers {
    /// Parse start to the first result on the host.
    pub first_result_ms: f64,
    /// Parse start to the stages compiled (`None`: never, `IVJIT_INTERPRETER=only`).
    pub stages_ready_ms: Option<f64>,
    /// The interpreter's boxes per second (`None`: the program has no bytecode).
    pub interpreter_boxes_per_s: Option<f64>,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

impl Device {
    /// Device 0, or why there is none (never panics on a missing driver).
    pub fn open() -> R<Device> {
        let info = ivjit::detect_gpu().map_err(|e| e.to_string())?;
        let ctx = CudaContext::new(0).map_err(d("creating the context"))?;
        let stream = ctx.new_stream().map_err(d("creating a stream"))?;
        Ok(Device {
            ctx,
            stream,
            name: info.name,
            cc: info.compute_capability,
            sms: info.multiprocessors,
        })
    }

    fn cfg(&self, n: usize) -> LaunchConfig {
        let blocks = n.div_ceil(BLOCK as usize);
        let grid = blocks.min((self.sms * BLOCKS_PER_SM) as usize).max(1);
        LaunchConfig {
            grid_dim: (grid as u32, 1, 1),
            block_dim: (BLOCK, 1, 1),
            shared_mem_bytes: 0,
        }
    }

    fn event(&self) -> R<cudarc::driver::CudaEvent> {
        self.stream
            .record_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(d("recording an event"))
    }

    /// Median time (ms) of `f` between two events, after warm-up.
    fn time(&self, warmup: usize, reps: usize, mut f: impl FnMut() -> R<()>) -> R<f64> {
        for _ in 0..warmup {
            f()?;
        }
        let mut times = Vec::with_capacity(reps);
        for _ in 0..reps {
            let a = self.event()?;
            f()?;
            let b = self.event()?;
            let ms = a.elapsed_ms(&b).map_err(d("timing"))?;
            times.push(ms as f64);
        }
        self.stream.synchronize().map_err(d("running"))?;
        Ok(median(times))
    }

    /// NVRTC: CUDA C → PTX for this device.
    fn nvrtc(&self, src: &str, name: &str) -> R<Ptx> {
        if !ivjit::internals::gpu::runtime::nvrtc_present() {
            return Err("no NVRTC library (libnvrtc.so.13)".into());
        }
        let opts = CompileOptions {
            options: vec![format!(
                "--gpu-architecture={}",
                ivjit::internals::gpu::runtime::arch_for(self.cc)
            )],
            name: Some(name.to_string()),
            ..Default::default()
        };
        cudarc::nvrtc::compile_ptx_with_opts(src, opts).map_err(|e| format!("NVRTC: {e:?}"))
    }

    fn function(&self, ptx: Ptx, entry: &str) -> R<CudaFunction> {
        let m = self.ctx.load_module(ptx).map_err(d("loading a module"))?;
        m.load_function(entry).map_err(d("looking up the kernel"))
    }

    /// Device-to-device copy of 1 GiB: (bytes read + bytes written) / second.
    pub fn copy_bandwidth(&self) -> R<f64> {
        let len = 1usize << 27; // f64 elements: 1 GiB
        let host: Vec<f64> = (0..len).map(|i| 1.0 + i as f64 * 1e-9).collect();
        let src = self.stream.clone_htod(&host).map_err(d("copying in"))?;
        let mut dst = self
            .stream
            .alloc_zeros::<f64>(len)
            .map_err(d("allocating"))?;
        let ms = self.time(WARMUP, REPS, || {
            self.stream
                .memcpy_dtod(&src, &mut dst)
                .map_err(d("device copy"))
        })?;
        Ok(2.0 * (len * 8) as f64 / (ms * 1e-3))
    }

    /// FMA operations per second of a loop kernel with 8 independent chains per thread.
    pub fn fma_rate(&self, p: Precision) -> R<f64> {
        let src = fma_source(p);
        let f = self.function(self.nvrtc(&src, "fma_loop.cu")?, "fma_loop")?;
        let blocks = self.sms * BLOCKS_PER_SM * 4;
        let threads = (blocks * BLOCK) as usize;
        let iters: i32 = 2048;
        let cfg = LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        let ms = match p {
            Precision::F64 => {
                let mut out = self
                    .stream
                    .alloc_zeros::<f64>(threads)
                    .map_err(d("alloc"))?;
                let (b, c) = (0.999_999_f64, 1e-7_f64);
                self.time(1, 5, || {
                    let mut l = self.stream.launch_builder(&f);
                    l.arg(&mut out).arg(&iters).arg(&b).arg(&c);
                    // SAFETY: fma_loop(T*, int, T, T) writes one T per thread; `out` has one per thread.
                    unsafe { l.launch(cfg) }.map(drop).map_err(d("launch"))
                })?
            }
            Precision::F32 => {
                let mut out = self
                    .stream
                    .alloc_zeros::<f32>(threads)
                    .map_err(d("alloc"))?;
                let (b, c) = (0.999_99_f32, 1e-5_f32);
                self.time(1, 5, || {
                    let mut l = self.stream.launch_builder(&f);
                    l.arg(&mut out).arg(&iters).arg(&b).arg(&c);
                    // SAFETY: as above.
                    unsafe { l.launch(cfg) }.map(drop).map_err(d("launch"))
                })?
            }
        };
        Ok(threads as f64 * iters as f64 * 8.0 / (ms * 1e-3))
    }

    /// ivjit's kernel for `text`, loaded from `Expression::ptx` (linked with the point-function
    /// runtime when the program calls one).
    fn ivjit_function(&self, expr: &Expression, p: Precision) -> R<CudaFunction> {
        let program = expr.scalar(p).map_err(|e| e.to_string())?;
        let text = ivjit::internals::ptx::emit(&program);
        if !program.has_point_calls() {
            return self.function(Ptx::from_src(text), ivjit::internals::ptx::KERNEL_NAME);
        }
        let arch = ivjit::internals::gpu::runtime::arch_for(self.cc);
        let fns = ivjit::internals::ptx::point_functions(&program);
        let rt = ivjit::internals::gpu::runtime::runtime_ptx(&arch, p, &fns)
            .map_err(|e| e.to_string())?;
        let cubin =
            ivjit::internals::gpu::link_cubin(&self.ctx, &[("baseline", &text), ("runtime", &rt)])
                .map_err(|e| e.to_string())?;
        self.function(Ptx::from_binary(cubin), ivjit::internals::ptx::KERNEL_NAME)
    }

    /// Times one expression (or its gradient or decorated form, [`super::Variant`]): compile
    /// latency, ivjit kernel, end to end, baseline kernel.
    /// `inputs` are `2 * n_vars * n` bounds (exact values of the precision). A program the
    /// library compiles as stages is timed through the library's launch (its stages); the
    /// others through their kernel launched here. The output buffers are sized from the
    /// program's own output arrays (a caller's count once wrote past a 2^24-box buffer: run 143).
    pub fn row(
        &self,
        text: &str,
        p: Precision,
        inputs: &[f64],
        n: usize,
        RowFlags {
            baseline: with_baseline,
            variant,
        }: RowFlags,
    ) -> R<GpuRow> {
        let t0 = Instant::now();
        let expr = variant.expression(text)?;
        let parse_ms = t0.elapsed().as_secs_f64() * 1e3;
        let program = expr.program(p).map_err(|e| e.to_string())?;
        let n_out_arrays = program.n_output_arrays();
        if inputs.len() != 2 * expr.vars().len() * n {
            return Err(format!(
                "{} input bounds for {n} boxes of {} variables",
                inputs.len(),
                expr.vars().len()
            ));
        }
        let eval = Evaluator::new(&expr, p, BackendChoice::Gpu).map_err(|e| e.to_string())?;
        let cold = t0.elapsed().as_secs_f64() * 1e3;
        let tiers = match eval.gpu_kernel() {
            Some(k) if k.staged().is_some() => {
                Some(self.tiers(k, p, inputs, n, n_out_arrays, t0)?)
            }
            _ => None,
        };
        let t1 = Instant::now();
        Evaluator::new(&expr, p, BackendChoice::Gpu).map_err(|e| e.to_string())?;
        let warm = t1.elapsed().as_secs_f64() * 1e3;
        let library = eval.gpu_kernel().ok_or("no GPU kernel")?;
        // A program long enough to be staged is timed through the library's launch even when
        // its single kernel came from the disk cache (no stages then): the same launch shape
        // on an empty and a warm cache (the bench's own shape ran Prospero f64 at 331 ms
        // against the library's 268 ms on an H200).
        let long = expr.scalar(p).map_err(|e| e.to_string())?.insts.len()
            > ivjit::internals::gpu::STAGED_ABOVE;
        let kernel = if library.staged().is_some() || long {
            Kernel::Library(library)
        } else {
            Kernel::Function(self.ivjit_function(&expr, p)?)
        };
        let base = if with_baseline {
            baseline::cuda_source(expr.initial_ir(), p).and_then(|src| {
                let ptx = self.nvrtc(&src, "baseline.cu")?;
                self.function(ptx, baseline::BASELINE_NAME)
            })
        } else {
            Err("none for this case (its CUDA C would take minutes to compile)".to_string())
        };
        let out_len = n_out_arrays * n;
        let (kernel_ms, e2e_ms, baseline_ms, staged_ms) = match p {
            Precision::F64 => self.run::<f64>(&kernel, base, inputs.to_vec(), n, out_len)?,
            Precision::F32 => {
                let host: Vec<f32> = inputs.iter().map(|&x| x as f32).collect();
                self.run::<f32>(&kernel, base, host, n, out_len)?
            }
        };
        let staged = match (library.staged(), staged_ms) {
            (Some(count), Some(ms)) => {
                let compile = library
                    .single_kernel_compile_time()
                    .ok_or("the single kernel is not ready")?;
                Some((count, ms, compile.as_secs_f64()))
            }
            _ => None,
        };
        Ok(GpuRow {
            kernel_ms,
            e2e_ms,
            cold_compile_ms: cold,
            parse_ms,
            warm_compile_ms: warm,
            baseline_ms,
            staged,
            tiers,
        })
    }

    /// [`Tiers`] of `k` (built from `t0` on), on the first boxes of `inputs`.
    fn tiers(
        &self,
        k: &ivjit::internals::gpu::GpuKernel,
        p: Precision,
        inputs: &[f64],
        n: usize,
        n_out_arrays: usize,
        t0: Instant,
    ) -> R<Tiers> {
        let arrays = inputs.len() / n.max(1);
        let first = |m: usize| -> Vec<f64> {
            (0..arrays)
                .flat_map(|a| inputs[a * n..a * n + m].iter().copied())
                .collect()
        };
        let m = n.min(1 << 16);
        match p {
            Precision::F64 => self.tiers_t::<f64>(k, first(1), first(m), m, n_out_arrays, t0),
            Precision::F32 => {
                let f = |v: Vec<f64>| v.into_iter().map(|x| x as f32).collect::<Vec<f32>>();
                self.tiers_t::<f32>(k, f(first(1)), f(first(m)), m, n_out_arrays, t0)
            }
        }
    }

    fn tiers_t<T: DeviceRepr + ValidAsZeroBits + Copy + Default>(
        &self,
        k: &ivjit::internals::gpu::GpuKernel,
        one: Vec<T>,
        many: Vec<T>,
        m: usize,
        n_out_arrays: usize,
        t0: Instant,
    ) -> R<Tiers> {
        let s = &self.stream;
        // One box, in and out as a user's first evaluation.
        let d_one: CudaSlice<T> = s.clone_htod(&one).map_err(d("copying in"))?;
        let mut d_out1: CudaSlice<T> = s.alloc_zeros(n_out_arrays).map_err(d("allocating"))?;
        {
            let (inp, _gi) = d_one.device_ptr(s);
            let (outp, _go) = d_out1.device_ptr_mut(s);
            // SAFETY: one box's inputs and outputs, on this stream of device 0's primary context.
            unsafe { k.launch_on(s, 1, inp, outp) }.map_err(|e| e.to_string())?;
        }
        s.clone_dtoh(&d_out1).map_err(d("copying out"))?;
        let first_result_ms = t0.elapsed().as_secs_f64() * 1e3;
        // The stages, compiled in the background meanwhile (polled every 2 ms).
        let stages_ready_ms = k
            .wait_for_stages(std::time::Duration::from_secs(600))
            .map(|_| t0.elapsed().as_secs_f64() * 1e3);
        let d_in: CudaSlice<T> = s.clone_htod(&many).map_err(d("copying in"))?;
        let mut d_out: CudaSlice<T> = s.alloc_zeros(n_out_arrays * m).map_err(d("allocating"))?;
        let mut interpreted = true;
        let ms = self.time(1, 5, || {
            let (inp, _gi) = d_in.device_ptr(s);
            let (outp, _go) = d_out.device_ptr_mut(s);
            // SAFETY: m boxes' inputs and outputs, on this stream of device 0's primary context.
            interpreted = unsafe { k.launch_tier_on(Tier::Interpreter, s, m, inp, outp) }
                .map_err(|e| e.to_string())?;
            Ok(())
        })?;
        Ok(Tiers {
            first_result_ms,
            stages_ready_ms,
            interpreter_boxes_per_s: interpreted.then(|| m as f64 / (ms * 1e-3)),
        })
    }

    #[allow(clippy::type_complexity)]
    fn run<T: DeviceRepr + ValidAsZeroBits + Copy + Default>(
        &self,
        kernel: &Kernel<'_>,
        base: R<CudaFunction>,
        host_in: Vec<T>,
        n: usize,
        out_len: usize,
    ) -> R<(f64, f64, Result<f64, String>, Option<f64>)> {
        let s = &self.stream;
        let mut d_in: CudaSlice<T> = s.clone_htod(&host_in).map_err(d("copying in"))?;
        let mut d_out: CudaSlice<T> = s.alloc_zeros(out_len).map_err(d("allocating"))?;
        let cfg = self.cfg(n);
        let n_arg = n as u64;
        let flags = 0u64;
        let launch = |f: &CudaFunction, d_in: &CudaSlice<T>, d_out: &mut CudaSlice<T>| -> R<()> {
            let mut l = s.launch_builder(f);
            l.arg(&n_arg).arg(d_in).arg(d_out).arg(&flags);
            // SAFETY: both kernels take (u64 n, T* in, T* out, u64 flags), read 2*n_vars*n and
            // write n_out_arrays*n elements: the buffers' lengths.
            unsafe { l.launch(cfg) }.map(drop).map_err(d("launching"))
        };
        let ivjit = |d_in: &CudaSlice<T>, d_out: &mut CudaSlice<T>, stages: bool| -> R<()> {
            match kernel {
                Kernel::Function(f) => launch(f, d_in, d_out),
                Kernel::Library(k) => {
                    let (inp, _gi) = d_in.device_ptr(s);
                    let (outp, _go) = d_out.device_ptr_mut(s);
                    // SAFETY: the buffers hold the batch's inputs and outputs, on this
                    // stream of device 0's primary context.
                    unsafe {
                        if stages {
                            k.launch_tier_on(Tier::Stages, s, n, inp, outp).map(drop)
                        } else {
                            k.launch_on(s, n, inp, outp)
                        }
                    }
                    .map_err(|e| e.to_string())
                }
            }
        };
        // A staged program: its stages first, then (once compiled) its single kernel.
        let staged = match kernel {
            Kernel::Library(k) => {
                let ms = self.time(WARMUP, REPS, || ivjit(&d_in, &mut d_out, true))?;
                if !k.wait_for_single_kernel(std::time::Duration::from_secs(600)) {
                    return Err("the single kernel did not compile within 600 s".into());
                }
                Some(ms)
            }
            Kernel::Function(_) => None,
        };
        let kernel = self.time(WARMUP, REPS, || ivjit(&d_in, &mut d_out, false))?;
        let mut host_out = vec![T::default(); out_len];
        let e2e = self.time(1, E2E_REPS, || {
            s.memcpy_htod(&host_in, &mut d_in).map_err(d("htod"))?;
            ivjit(&d_in, &mut d_out, false)?;
            s.memcpy_dtoh(&d_out, &mut host_out).map_err(d("dtoh"))
        })?;
        let baseline = match base {
            Ok(b) => self.time(WARMUP, REPS, || launch(&b, &d_in, &mut d_out)),
            Err(e) => Err(e),
        };
        Ok((kernel, e2e, baseline, staged))
    }
}

/// What a row times besides ivjit's kernel.
#[derive(Clone, Copy, Debug, Default)]
pub struct RowFlags {
    /// The hand-written CUDA baseline too.
    pub baseline: bool,
    /// The expression, its gradient or its decorated form.
    pub variant: super::Variant,
}

/// What `ivjit bench` times for ivjit: its kernel, loaded here, or the library's launch (the
/// stages of a program compiled as stages).
enum Kernel<'a> {
    Function(CudaFunction),
    Library(&'a ivjit::internals::gpu::GpuKernel),
}

/// CUDA C of the FMA-rate kernel: 8 independent `fma` chains per thread, `iters` rounds.
pub fn fma_source(p: Precision) -> String {
    let (t, fma) = match p {
        Precision::F64 => ("double", "__fma_rn"),
        Precision::F32 => ("float", "__fmaf_rn"),
    };
    format!(
        r#"extern "C" __global__ void fma_loop({t}* out, int iters, {t} b, {t} c) {{
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    {t} a0 = ({t})i * ({t})1e-9, a1 = a0 + ({t})1, a2 = a0 + ({t})2, a3 = a0 + ({t})3;
    {t} a4 = a0 + ({t})4, a5 = a0 + ({t})5, a6 = a0 + ({t})6, a7 = a0 + ({t})7;
    for (int k = 0; k < iters; k++) {{
    a0 = {fma}(a0, b, c); a1 = {fma}(a1, b, c); a2 = {fma}(a2, b, c); a3 = {fma}(a3, b, c);
    a4 = {fma}(a4, b, c); a5 = {fma}(a5, b, c); a6 = {fma}(a6, b, c); a7 = {fma}(a7, b, c);
    }}
    out[i] = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
}}
"#
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn fma_kernel_compiles_with_nvrtc() {
        if !ivjit::internals::gpu::runtime::nvrtc_present() {
            eprintln!("skipped: no libnvrtc");
            return;
        }
        for p in [super::Precision::F64, super::Precision::F32] {
            let opts = cudarc::nvrtc::CompileOptions {
                options: vec!["--gpu-architecture=compute_90".into()],
                ..Default::default()
            };
            let ptx = cudarc::nvrtc::compile_ptx_with_opts(super::fma_source(p), opts).unwrap();
            assert!(ptx.to_src().contains("fma.rn"));
        }
    }
}
