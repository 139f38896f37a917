//! The one loader of search kernels: a CUDA C module (compiled by NVRTC, kept in the disk
//! cache) with the expression's scalar programs linked in as device functions where the search
//! calls them, loaded once per process and device. Every search rule (`crate::search`) asks for
//! its kernels here, so that there is one memo and one link-and-cache sequence.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::{CudaContext, CudaFunction};

use super::{cache, runtime, Context, GpuError};
use crate::scalar::Program;

/// What a search module is made of.
pub(crate) struct SearchModule<'a> {
    /// A short name: the disk cache's file prefix and the link's part name.
    pub(crate) name: &'static str,
    /// The CUDA C source, complete (prelude and defines included).
    pub(crate) cuda: String,
    /// Programs the CUDA calls as `extern "C" __device__` functions, with the names it calls
    /// them by (empty: a module of its own, linked alone).
    pub(crate) linked: Vec<(&'a Program, String)>,
    /// The kernels to load from the module, in the order [`load`] returns them.
    pub(crate) kernels: &'static [&'static str],
}

/// The memo's key: the device and every text the module is made of, so that two requests
/// share kernels exactly when they would compile the same bits.
type Key = (usize, &'static str, String, Vec<String>);

/// The kernels of `module` on the device `ordinal` of `ctx`, in the order of
/// `module.kernels`: compiled, linked and loaded on the first request, from the memo after.
pub(crate) fn load(
    ctx: &Arc<CudaContext>,
    ordinal: usize,
    module: SearchModule<'_>,
) -> Result<Arc<[CudaFunction]>, GpuError> {
    static LOADED: OnceLock<Mutex<HashMap<Key, Arc<[CudaFunction]>>>> = OnceLock::new();
    let functions: Vec<String> = module
        .linked
        .iter()
        .map(|(program, name)| {
            crate::ptx::try_emit_function_named(program, name).map_err(GpuError::InvalidProgram)
        })
        .collect::<Result<_, _>>()?;
    let memo = LOADED.get_or_init(Default::default);
    let key: Key = (ordinal, module.name, module.cuda, functions);
    if let Some(k) = memo.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Ok(k.clone());
    }
    let (_, name, cuda, functions) = &key;
    let cc = ctx
        .compute_capability()
        .during("querying the compute capability")?;
    let arch = runtime::arch_for(cc);
    // A module whose every text is ivjit's own (no point-function runtime linked in) is looked
    // up in the disk cache by its source, before NVRTC is even loaded: a process's first search
    // then pays for neither (measured on an H200, the minimize module: 12.9-17 ms through the
    // PTX cache, most of it loading NVRTC's library to key that cache — loading a cubin instead
    // of the PTX alone left it at 13-17 ms — and 0.25 ms by the source's key).
    let calls_points = module.linked.iter().any(|(p, _)| p.has_point_calls());
    let dir = runtime::cache_dir();
    let source_key = (!calls_points)
        .then(|| -> Result<String, GpuError> {
            let driver = super::driver_version().during("querying the driver version")?;
            let texts: String = std::iter::once(cuda.as_str())
                .chain(functions.iter().map(String::as_str))
                .chain(runtime::compile_options(&arch).iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join("\n");
            Ok(cache::cubin_key(
                &texts,
                name,
                driver,
                &format!("sm_{}{} source", cc.0, cc.1),
            ))
        })
        .transpose()?;
    let cached = match (dir.as_deref(), source_key.as_deref()) {
        (Some(d), Some(k)) => match cache::read_cubin(d, k) {
            cache::Lookup::Valid(cubin) => {
                ctx.load_module(cudarc::nvrtc::Ptx::from_binary(cubin)).ok()
            }
            _ => None,
        },
        _ => None,
    };
    let loaded = match cached {
        Some(m) => m,
        None => {
            let search_ptx = runtime::source_ptx(name, cuda, &arch)?;
            // Always a cubin: loading the PTX would have the driver compile it again in every
            // process. A module the linker refuses is loaded from its PTX, which gives the
            // JIT's log.
            match linked_cubin(ctx, cc, &arch, &module.linked, name, &search_ptx, functions) {
                Ok(cubin) => {
                    if let (Some(d), Some(k)) = (dir.as_deref(), source_key.as_deref()) {
                        // A cache that cannot be written costs the next process a compile.
                        let _ = cache::write_cubin(d, k, &cubin);
                    }
                    ctx.load_module(cudarc::nvrtc::Ptx::from_binary(cubin))
                        .during("loading a linked search kernel")?
                }
                Err(_) if functions.is_empty() => super::load_module(ctx, &search_ptx)?,
                Err(e) => return Err(e),
            }
        }
    };
    let kernels: Arc<[CudaFunction]> = module
        .kernels
        .iter()
        .map(|k| loaded.load_function(k).during("loading a search kernel"))
        .collect::<Result<Vec<_>, _>>()?
        .into();
    memo.lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, kernels.clone());
    Ok(kernels)
}

/// The search PTX linked with the programs' functions (and the point-function runtime they
/// call; none: the search PTX alone), from the disk cache when a valid entry is there, like the
/// batch kernels.
fn linked_cubin(
    ctx: &Arc<CudaContext>,
    cc: (i32, i32),
    arch: &str,
    linked: &[(&Program, String)],
    name: &str,
    search_ptx: &str,
    functions: &[String],
) -> Result<Vec<u8>, GpuError> {
    let mut points: Vec<_> = linked
        .iter()
        .flat_map(|(program, _)| crate::ptx::point_functions(program))
        .collect();
    points.sort();
    points.dedup();
    let runtime_ptx = match (points.is_empty(), linked.first()) {
        (false, Some((program, _))) => {
            Some(runtime::runtime_ptx(arch, program.precision, &points)?)
        }
        _ => None,
    };
    let part_names: Vec<String> = std::iter::once(format!("ivjit_{name}.ptx"))
        .chain(linked.iter().map(|(_, f)| format!("{f}.ptx")))
        .collect();
    let mut parts: Vec<(&str, &str)> = vec![(part_names[0].as_str(), search_ptx)];
    for (n, text) in part_names[1..].iter().zip(functions) {
        parts.push((n.as_str(), text.as_str()));
    }
    if let Some(rt) = runtime_ptx.as_deref() {
        parts.push(("ivjit_math.ptx", rt));
    }
    let driver = super::driver_version().during("querying the driver version")?;
    let sm = format!("sm_{}{}", cc.0, cc.1);
    let all: String = parts.iter().map(|(_, t)| *t).collect();
    let disk_key = cache::cubin_key(&all, "", driver, &sm);
    let dir = runtime::cache_dir();
    if let Some(d) = dir.as_deref() {
        if let cache::Lookup::Valid(c) = cache::read_cubin(d, &disk_key) {
            return Ok(c);
        }
    }
    let cubin = super::link_cubin(ctx, &parts)?;
    if let Some(d) = dir.as_deref() {
        // A cache that cannot be written costs the next process a link, nothing else.
        let _ = cache::write_cubin(d, &disk_key, &cubin);
    }
    Ok(cubin)
}
