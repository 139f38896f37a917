//! The validity check of a batch that lives in device memory (`GpuKernel::check_device`): every
//! (lo, hi) pair an interval bound, in one pass on the device, so that device arrays of other
//! libraries get the host path's guarantee ("a NaN bound inside a kernel always means empty")
//! without coming back to the host. A small NVRTC kernel, disk-cached like the runtime's.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::{CudaFunction, PushKernelArg};

use super::error::Context;
use super::{runtime, DeviceKernel, GpuError};
use crate::scalar::Precision;

/// CUDA C of the check: flag 1 when a pair is neither (lo <= hi, lo < +inf, hi > -inf) nor
/// (NaN, NaN).
fn source(p: Precision) -> String {
    let t = match p {
        Precision::F64 => "double",
        Precision::F32 => "float",
    };
    format!(
        r#"
extern "C" __global__ void ivjit_check_bounds(unsigned long long n, unsigned long long pairs,
                                              const {t}* in, unsigned int* bad) {{
    unsigned long long total = n * pairs;
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
         i < total; i += stride) {{
        unsigned long long k = i / n, j = i - k * n;
        {t} lo = in[2 * k * n + j], hi = in[(2 * k + 1) * n + j];
        bool interval = lo <= hi && lo < ({t})(1.0 / 0.0) && hi > -({t})(1.0 / 0.0);
        bool empty = lo != lo && hi != hi;
        if (!interval && !empty) atomicOr(bad, 1u);
    }}
}}
"#
    )
}

type Loaded = Mutex<HashMap<(usize, Precision), CudaFunction>>;

fn function(dk: &DeviceKernel, p: Precision) -> Result<CudaFunction, GpuError> {
    static LOADED: OnceLock<Loaded> = OnceLock::new();
    let memo = LOADED.get_or_init(Default::default);
    if let Some(f) = memo
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&(dk.ordinal, p))
    {
        return Ok(f.clone());
    }
    let cc = dk
        .ctx
        .compute_capability()
        .during("querying the compute capability")?;
    let ptx = runtime::source_ptx("check", &source(p), &runtime::arch_for(cc))?;
    let module = super::load_module(&dk.ctx, &ptx)?;
    let f = module
        .load_function("ivjit_check_bounds")
        .during("loading the bounds check")?;
    memo.lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert((dk.ordinal, p), f.clone());
    Ok(f)
}

/// Whether the `pairs` (lo, hi) pairs of `n` elements from device address `inputs` are all
/// interval bounds (see the module comment).
///
/// # Safety
/// `inputs` must be a device address in `dk`'s context, valid for `2 * pairs * n` elements of
/// the precision's type until this returns.
pub(crate) unsafe fn bounds_are_valid(
    dk: &Arc<DeviceKernel>,
    p: Precision,
    inputs: u64,
    pairs: usize,
    n: usize,
) -> Result<bool, GpuError> {
    if n == 0 || pairs == 0 {
        return Ok(true);
    }
    dk.ctx
        .bind_to_thread()
        .during("binding the device's context")?;
    let f = function(dk, p)?;
    let stream = dk.ctx.default_stream();
    let mut bad = stream
        .alloc_zeros::<u32>(1)
        .during("allocating the check's flag")?;
    let cfg = dk.launch_config(n.saturating_mul(pairs));
    let (n_arg, pairs_arg) = (n as u64, pairs as u64);
    let mut launch = stream.launch_builder(&f);
    launch
        .arg(&n_arg)
        .arg(&pairs_arg)
        .arg(&inputs)
        .arg(&mut bad);
    // SAFETY: the kernel reads 2 * pairs * n elements from `inputs` (the caller vouches for
    // them) and ORs into the one-element flag.
    unsafe { launch.launch(cfg) }.during("launching the bounds check")?;
    let flag = stream.clone_dtoh(&bad).during("reading the check's flag")?;
    Ok(flag[0] == 0)
}
