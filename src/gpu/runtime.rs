//! The GPU runtime of point functions: CUDA C generated from the point-function table
//! ([`crate::point::cuda_runtime_source`]) for exactly the functions a kernel calls, compiled by
//! NVRTC to PTX at first use and cached on disk. The PTX is relocatable (`-rdc=true`):
//! [`crate::gpu`] links it with the kernel, which declares the functions `.extern`.
//!
//! # Cache
//!
//! One entry per key in the disk cache's folder ([`cache_dir`]; the entry format is the one of
//! every disk-cache entry, `gpu::disk`): `runtime-<key>.ptx`, where the key hashes the source
//! text (which names the functions and the precision), the NVRTC version and every compile option
//! (the architecture). An entry that fails its check, or lacks a function asked for, is rebuilt.
//!
//! This file is policy (what to compile, with which options, when to reuse an entry); the NVRTC
//! calls themselves are `gpu::nvrtc`.

use std::path::Path;

use super::disk;
pub use super::disk::cache_dir;
use super::nvrtc;
pub use super::nvrtc::{nvrtc_present, nvrtc_version, RuntimeError, SOURCE_NAME};
use crate::point::cuda_runtime_source;
use crate::ptx;
use crate::scalar::{PointFn, Precision};

/// Format tag of cache entries; bump it when the entry layout changes.
const CACHE_FORMAT: &str = "ivjit-runtime-ptx v2";

/// How [`runtime_ptx_in`] obtained the PTX.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CacheOutcome {
    /// Read from a valid cache entry.
    Hit,
    /// Compiled; `stored` says whether the cache entry was written.
    Compiled {
        /// Whether the cache entry was written.
        stored: bool,
    },
    /// Compiled; no cache folder.
    NoCache,
}

/// The virtual architecture NVRTC compiles for, e.g. `compute_90` for compute capability 9.0.
pub fn arch_for(compute_capability: (i32, i32)) -> String {
    format!("compute_{}{}", compute_capability.0, compute_capability.1)
}

/// NVRTC options for the runtime, compiled for `arch` (`compute_90`). IEEE-accurate settings: no fast math, subnormals kept, IEEE division and
/// square root; `--fmad=true` is NVRTC's default and the configuration NVIDIA's accuracy tables
/// describe (the math library's own contractions are part of what was measured).
pub(crate) fn compile_options(arch: &str) -> Vec<String> {
    vec![
        format!("--gpu-architecture={arch}"),
        "--relocatable-device-code=true".to_string(),
        "--ftz=false".to_string(),
        "--prec-div=true".to_string(),
        "--prec-sqrt=true".to_string(),
        "--fmad=true".to_string(),
        "--std=c++17".to_string(),
    ]
}

/// Compiles the runtime for `fns` in precision `p` and architecture `arch` with NVRTC, without
/// the cache. Needs libnvrtc (not a GPU).
pub fn compile(arch: &str, p: Precision, fns: &[PointFn]) -> Result<String, RuntimeError> {
    compile_source(arch, &cuda_runtime_source(p, fns))
}

/// Compiles a runtime source ([`cuda_runtime_source`]) with NVRTC for `arch`.
fn compile_source(arch: &str, source: &str) -> Result<String, RuntimeError> {
    nvrtc::compile(source, &compile_options(arch))
}

/// The cache key of a compilation: hash of the format tag, the source (which names the
/// functions and the precision), the NVRTC version and the options.
pub(crate) fn cache_key(source: &str, nvrtc_version: (i32, i32), options: &[String]) -> String {
    let version = format!("{}.{}", nvrtc_version.0, nvrtc_version.1);
    let mut parts: Vec<&[u8]> = vec![source.as_bytes(), version.as_bytes()];
    parts.extend(options.iter().map(|o| o.as_bytes()));
    disk::key(CACHE_FORMAT, &parts)
}

/// The PTX of a cache entry if it is intact and declares every function wanted.
fn read_entry(path: &Path, key: &str, p: Precision, fns: &[PointFn]) -> Option<String> {
    let disk::Lookup::Valid(bytes) = disk::read(path, CACHE_FORMAT, key) else {
        return None;
    };
    let body = String::from_utf8(bytes).ok()?;
    let complete = fns.iter().all(|&f| {
        let symbol = ptx::runtime_symbol(f, p);
        body.lines()
            .any(|l| l.starts_with(".visible .func") && l.contains(&format!(" {symbol}(")))
    });
    complete.then_some(body)
}

/// The runtime's PTX for `fns` in precision `p` and architecture `arch`, from the cache in
/// `dir` when there is a valid entry, else compiled by NVRTC and stored there.
pub fn runtime_ptx_in(
    dir: Option<&Path>,
    arch: &str,
    p: Precision,
    fns: &[PointFn],
) -> Result<(String, CacheOutcome), RuntimeError> {
    let src = cuda_runtime_source(p, fns);
    let Some(dir) = dir else {
        return Ok((compile_source(arch, &src)?, CacheOutcome::NoCache));
    };
    let key = cache_key(&src, nvrtc_version()?, &compile_options(arch));
    let path = dir.join(format!("runtime-{key}.ptx"));
    if let Some(ptx) = read_entry(&path, &key, p, fns) {
        return Ok((ptx, CacheOutcome::Hit));
    }
    let ptx = compile_source(arch, &src)?;
    let stored = disk::write(dir, &path, CACHE_FORMAT, &key, ptx.as_bytes()).is_ok();
    Ok((ptx, CacheOutcome::Compiled { stored }))
}

/// The runtime's PTX through the default cache folder ([`cache_dir`]).
pub fn runtime_ptx(arch: &str, p: Precision, fns: &[PointFn]) -> Result<String, RuntimeError> {
    let dir = cache_dir();
    runtime_ptx_in(dir.as_deref(), arch, p, fns).map(|(ptx, _)| ptx)
}

/// The PTX of a self-contained CUDA C source (no point functions: the search kernels), compiled
/// with the runtime's options for `arch` and kept in the disk cache as `{prefix}-{key}.ptx`.
pub(crate) fn source_ptx(prefix: &str, source: &str, arch: &str) -> Result<String, RuntimeError> {
    let options = compile_options(arch);
    let Some(dir) = cache_dir() else {
        return nvrtc::compile(source, &options);
    };
    let key = cache_key(source, nvrtc_version()?, &options);
    let path = dir.join(format!("{prefix}-{key}.ptx"));
    if let disk::Lookup::Valid(bytes) = disk::read(&path, CACHE_FORMAT, &key) {
        if let Ok(ptx) = String::from_utf8(bytes) {
            return Ok(ptx);
        }
    }
    let ptx = nvrtc::compile(source, &options)?;
    // A cache that cannot be written costs the next process a compile, nothing else.
    let _ = disk::write(&dir, &path, CACHE_FORMAT, &key, ptx.as_bytes());
    Ok(ptx)
}
