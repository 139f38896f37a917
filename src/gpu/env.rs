//! The environment: every `IVJIT_*` variable the GPU engine reads is read here and nowhere else
//! (the CLI reads its own, `IVJIT_PROGRESS_AFTER_MS`; the CPU side one, `IVJIT_CPU_ROUNDING`, in
//! `crate::round`). An empty value counts as unset. The options that the library also takes as
//! values (`KernelOptions`) are returned as text and parsed in `options`; the rest are
//! measurement switches.

use std::ffi::OsString;

fn text(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// `IVJIT_DEVICES`: the devices to split batches across (`0,1`), unparsed.
pub(crate) fn devices() -> Option<String> {
    text("IVJIT_DEVICES")
}

/// `IVJIT_CHUNK_ELEMENTS`: elements per streamed chunk (a positive integer; anything else
/// is ignored).
pub(crate) fn chunk_elements() -> Option<usize> {
    text("IVJIT_CHUNK_ELEMENTS")
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&c| c > 0)
}

/// `IVJIT_HOST_TRANSFER`: `staged`, `pinned` or `auto` (parsed by `HostTransfer::parse`).
pub(crate) fn host_transfer() -> Option<String> {
    text("IVJIT_HOST_TRANSFER")
}

/// `IVJIT_BATCH_TRACE`: any value asks for one timing line per device and batch.
pub(crate) fn batch_trace() -> bool {
    std::env::var_os("IVJIT_BATCH_TRACE").is_some_and(|v| !v.is_empty())
}

/// `IVJIT_STAGE_INSTS`: instructions per stage of a program compiled as stages (a
/// non-negative integer; 0: never cut a program; anything else is ignored).
pub(crate) fn stage_insts() -> Option<usize> {
    text("IVJIT_STAGE_INSTS").and_then(|v| v.trim().parse::<usize>().ok())
}

/// `IVJIT_INLINE_RUNTIME=0`: link the point functions as calls instead of splicing them
/// into the kernel (`gpu::inline`).
pub fn inline_runtime() -> bool {
    text("IVJIT_INLINE_RUNTIME").as_deref().map(str::trim) != Some("0")
}

/// `IVJIT_STAGE_JIT_LEVEL`: the driver JIT's optimization level (0-4) for the stages of a
/// program compiled as stages; anything else counts as unset.
pub(crate) fn stage_jit_level() -> Option<u32> {
    text("IVJIT_STAGE_JIT_LEVEL")
        .and_then(|v| v.trim().parse::<u32>().ok())
        .filter(|&l| l <= 4)
}

/// `IVJIT_STAGE_TRACE`: any value asks for one line on the stages' compile times.
pub(crate) fn stage_trace() -> bool {
    std::env::var_os("IVJIT_STAGE_TRACE").is_some_and(|v| !v.is_empty())
}

/// `IVJIT_INTERPRETER`: `first`, `never` or `only` (read by `Policies::of`).
pub(crate) fn interpreter() -> Option<String> {
    text("IVJIT_INTERPRETER").map(|v| v.trim().to_string())
}

/// `IVJIT_TIER_UP`: `auto`, `now` or `never` (read by `Policies::of`).
pub(crate) fn tier_up() -> Option<String> {
    text("IVJIT_TIER_UP").map(|v| v.trim().to_string())
}

/// `IVJIT_TAPE_PROFILE`: any value asks the GPU tape render for one timing line per step
/// (a measurement switch).
pub(crate) fn tape_profile() -> bool {
    text("IVJIT_TAPE_PROFILE").is_some()
}

/// `IVJIT_MESH_PROFILE`: any value asks `ivjit mesh` (the library's meshes) for the time of
/// each of its steps on stderr.
pub(crate) fn mesh_profile() -> bool {
    text("IVJIT_MESH_PROFILE").is_some()
}

/// `IVJIT_TAPE_NO_ROOT`: any value keeps the GPU tape render off its root-level kernel
/// (the one that evaluates and prunes the whole image's first tile in shared memory), so
/// tests and measurements reach the general path.
pub(crate) fn tape_no_root() -> bool {
    text("IVJIT_TAPE_NO_ROOT").is_some()
}

/// `IVJIT_TAPE_SHORT_CAPS`: any value halves the capacities a GPU tape render's frame takes
/// from the frame before it, so that tests reach the kernels' guards and the reading pass that
/// follows a short capacity.
pub(crate) fn tape_short_caps() -> bool {
    text("IVJIT_TAPE_SHORT_CAPS").is_some()
}

/// `IVJIT_SEARCH_PARTS`: how many parts a search that splits among the GPUs takes (a tape
/// render's frame, its first-level rows interleaved; a ray search, its rays in blocks),
/// whatever its size, round-robin over the devices, several on one GPU when there are more
/// parts than GPUs: so that tests reach the split searches on a machine with one GPU. Unset
/// (or not a positive number): one part per device for large searches, else one.
pub(crate) fn search_parts() -> Option<usize> {
    text("IVJIT_SEARCH_PARTS")
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&k| k > 0)
}

/// `IVJIT_CACHE_DIR`: the disk cache's folder.
pub(crate) fn cache_dir() -> Option<OsString> {
    std::env::var_os("IVJIT_CACHE_DIR").filter(|v| !v.is_empty())
}
