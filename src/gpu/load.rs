//! Loading one entry point of a kernel's PTX on a device: the point-function runtime linked in
//! or spliced (`gpu::inline`) where the program calls any, the linked cubin from the disk cache
//! or linked now (and stored), and the launch shape from the occupancy calculator. Every tier
//! (the single kernel, the stages, the interpreter) loads through here.

use std::sync::Arc;

use cudarc::driver::{sys, CudaContext, CudaFunction};
use cudarc::nvrtc::Ptx;

use super::{
    cache, describe, inline, link_cubin_at, load_module, runtime, Context, DiskCacheOutcome,
    GpuError,
};
use crate::ptx;
use crate::scalar::Program;

/// A compiled entry point with its launch shape.
pub(crate) struct Loaded {
    pub(crate) function: CudaFunction,
    pub(crate) block: u32,
    pub(crate) max_grid: u32,
    pub(crate) disk: DiskCacheOutcome,
}

/// Compiles (or reads from the disk cache) the PTX `text` of `program` (its point calls decide
/// the runtime linked in) and loads `entry` from it, with `ctx` current on this thread.
pub(crate) fn load_entry(
    ctx: &Arc<CudaContext>,
    program: &Program,
    (text, entry): (&str, &str),
    cache_dir: Option<&std::path::Path>,
) -> Result<Loaded, GpuError> {
    load_entry_at(ctx, program, (text, entry), cache_dir, None)
}

/// [`load_entry`] with the JIT at optimization level `level` (`None`: the driver's default).
/// The level is part of the disk cache's key.
pub(crate) fn load_entry_at(
    ctx: &Arc<CudaContext>,
    program: &Program,
    (text, entry): (&str, &str),
    cache_dir: Option<&std::path::Path>,
    level: Option<u32>,
) -> Result<Loaded, GpuError> {
    load_entry_if(ctx, program, (text, entry), cache_dir, true, level)?
        .ok_or_else(|| GpuError::Devices("compiling was asked and did not happen".to_string()))
}

/// [`load_entry`]; with `compile` false, only from the disk cache (`None` on a miss).
pub(crate) fn load_entry_if(
    ctx: &Arc<CudaContext>,
    program: &Program,
    (text, entry): (&str, &str),
    cache_dir: Option<&std::path::Path>,
    compile: bool,
    level: Option<u32>,
) -> Result<Option<Loaded>, GpuError> {
    ctx.bind_to_thread()
        .during("binding the device's context")?;
    let (major, minor) = ctx
        .compute_capability()
        .during("querying the compute capability")?;
    let runtime_ptx = if program.has_point_calls() {
        let arch = runtime::arch_for((major, minor));
        let fns = ptx::point_functions(program);
        Some(runtime::runtime_ptx(&arch, program.precision, &fns)?)
    } else {
        None
    };
    let driver_version = super::device::driver_version().during("querying the driver version")?;
    // The point functions are spliced into the kernel where the splicer recognizes both texts
    // (`gpu::inline`), else linked as calls. The key says whether splicing was asked (the
    // outcome follows from the texts), so a cache hit needs no splicing.
    let splice = runtime_ptx.is_some() && super::env::inline_runtime();
    let mut arch = format!("sm_{major}{minor}");
    if let Some(l) = level {
        arch.push_str(&format!(" -O{l}"));
    }
    if splice {
        arch.push_str(" inlined");
    }
    let key = cache::cubin_key(
        text,
        runtime_ptx.as_deref().unwrap_or(""),
        driver_version,
        &arch,
    );
    let load_cubin = |cubin: Vec<u8>| ctx.load_module(Ptx::from_binary(cubin));
    let mut found_invalid = false;
    let mut module = None;
    let mut disk = DiskCacheOutcome::NoCache;
    if let Some(dir) = cache_dir {
        match cache::read_cubin(dir, &key) {
            cache::Lookup::Valid(cubin) => {
                // A valid entry the driver still refuses is rebuilt like a corrupt one.
                match load_cubin(cubin) {
                    Ok(m) => {
                        module = Some(m);
                        disk = DiskCacheOutcome::Hit;
                    }
                    Err(_) => found_invalid = true,
                }
            }
            cache::Lookup::Invalid => found_invalid = true,
            cache::Lookup::Missing => {}
        }
    }
    if module.is_none() && !compile {
        return Ok(None);
    }
    let inlined = runtime_ptx
        .as_deref()
        .filter(|_| splice)
        .and_then(|rt| inline::inline_runtime(text, rt));
    let mut parts = vec![("ivjit_kernel.ptx", inlined.as_deref().unwrap_or(text))];
    if let (Some(rt), None) = (runtime_ptx.as_deref(), &inlined) {
        parts.push(("ivjit_math.ptx", rt));
    }
    let module = match module {
        Some(m) => m,
        None => match link_cubin_at(ctx, &parts, level) {
            Ok(cubin) => {
                let stored = match cache_dir {
                    Some(dir) => cache::write_cubin(dir, &key, &cubin).is_ok(),
                    None => false,
                };
                if cache_dir.is_some() {
                    disk = DiskCacheOutcome::Linked {
                        stored,
                        rebuilt: found_invalid,
                    };
                }
                load_cubin(cubin).map_err(|e| GpuError::PtxRejected {
                    code: describe(&e),
                    log: "(loading the linked cubin; the linker accepted it)".to_string(),
                })?
            }
            // Without point calls the plain load path gives the JIT log of a rejected
            // kernel (and works even if the linker refused for another reason).
            Err(_) if runtime_ptx.is_none() => {
                disk = DiskCacheOutcome::Ptx;
                load_module(ctx, text)?
            }
            Err(e) => return Err(e),
        },
    };
    let function = module
        .load_function(entry)
        .during("looking up the kernel in the loaded module")?;
    extern "C" fn no_dynamic_shared_memory(_block_size: std::ffi::c_int) -> usize {
        0
    }
    let (_, block) = function
        .occupancy_max_potential_block_size(no_dynamic_shared_memory, 0, 0, None)
        .during("querying the occupancy-optimal block size")?;
    let block = if block == 0 { 128 } else { block };
    Ok(Some(Loaded {
        max_grid: resident_blocks(ctx, &function, block)?,
        function,
        block,
        disk,
    }))
}

/// Blocks of `block` threads of `function` that the device of `ctx` holds at once (its
/// multiprocessors times the blocks each holds, at least one): the grid beyond which a
/// grid-stride or persistent kernel gains no more threads.
pub(crate) fn resident_blocks(
    ctx: &Arc<CudaContext>,
    function: &CudaFunction,
    block: u32,
) -> Result<u32, GpuError> {
    let sms = ctx
        .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
        .during("querying the multiprocessor count")?
        .max(1) as u32;
    let per_sm = function
        .occupancy_max_active_blocks_per_multiprocessor(block, 0, None)
        .during("querying the resident blocks per multiprocessor")?
        .max(1);
    Ok(sms.saturating_mul(per_sm).max(1))
}
