//! The driver's JIT linker and loader: the only code here that calls `cuLink*` and reads the
//! JIT logs. Policy (what to link, caching) lives in the callers.

use std::ffi::{c_void, CString};
use std::sync::Arc;

use cudarc::driver::{sys, CudaContext, CudaModule};
use cudarc::nvrtc::Ptx;

use super::{context, describe, Context, GpuError, JIT_LOG_BYTES};

/// Loads a PTX module into device 0's shared context, checking that the driver accepts it, and
/// unloads it again. The error carries the driver's JIT log. For tests and diagnostics.
pub fn validate_ptx(text: &str) -> Result<(), GpuError> {
    let ctx = context(0)?;
    load_module(&ctx, text).map(drop)
}

/// Loads PTX text; on rejection, fetches the JIT log for the error.
pub(crate) fn load_module(ctx: &Arc<CudaContext>, text: &str) -> Result<Arc<CudaModule>, GpuError> {
    ctx.load_module(Ptx::from_src(text))
        .map_err(|e| GpuError::PtxRejected {
            code: describe(&e),
            log: jit_error_log(ctx, text),
        })
}

/// Links PTX modules (`(name, text)`; the kernel and the runtime it calls) into a cubin for the
/// current device with the driver's linker (`cuLinkCreate_v2` / `cuLinkAddData_v2` /
/// `cuLinkComplete`); errors carry the linker's error and info logs.
pub fn link_cubin(ctx: &Arc<CudaContext>, parts: &[(&str, &str)]) -> Result<Vec<u8>, GpuError> {
    link_cubin_at(ctx, parts, None)
}

/// [`link_cubin`] at JIT optimization level `level` (0-4; `None`: the driver's default, 4).
pub(crate) fn link_cubin_at(
    ctx: &Arc<CudaContext>,
    parts: &[(&str, &str)],
    level: Option<u32>,
) -> Result<Vec<u8>, GpuError> {
    ctx.bind_to_thread()
        .during("binding the context for linking")?;
    let mut error_log = vec![0u8; JIT_LOG_BYTES];
    let mut info_log = vec![0u8; JIT_LOG_BYTES];
    let mut options = vec![
        sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
        sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
        sys::CUjit_option::CU_JIT_INFO_LOG_BUFFER,
        sys::CUjit_option::CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
    ];
    let mut values: Vec<*mut c_void> = vec![
        error_log.as_mut_ptr().cast(),
        std::ptr::without_provenance_mut(error_log.len()),
        info_log.as_mut_ptr().cast(),
        std::ptr::without_provenance_mut(info_log.len()),
    ];
    if let Some(level) = level {
        // An unsigned int option: its value is passed in the pointer's bits.
        options.push(sys::CUjit_option::CU_JIT_OPTIMIZATION_LEVEL);
        values.push(std::ptr::without_provenance_mut(level as usize));
    }
    let logs = |error_log: &[u8], info_log: &[u8]| {
        let text = |b: &[u8]| {
            let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
            String::from_utf8_lossy(&b[..end]).trim().to_string()
        };
        let (e, i) = (text(error_log), text(info_log));
        match (e.is_empty(), i.is_empty()) {
            (true, true) => "(the linker gave no log)".to_string(),
            (false, true) => e,
            (true, false) => i,
            (false, false) => format!("{e}\n{i}"),
        }
    };
    let mut state: sys::CUlinkState = std::ptr::null_mut();
    // SAFETY: the option arrays have the same length; the log buffers are JIT_LOG_BYTES long
    // and outlive the link state (destroyed below before they are dropped); the context is
    // current.
    let status = unsafe {
        sys::cuLinkCreate_v2(
            options.len() as u32,
            options.as_mut_ptr(),
            values.as_mut_ptr(),
            &mut state,
        )
    };
    if status != sys::CUresult::CUDA_SUCCESS {
        return Err(GpuError::LinkFailed {
            step: "creating the link state",
            code: format!("{status:?}"),
            log: logs(&error_log, &info_log),
        });
    }
    let result = (|| {
        for &(name, text) in parts {
            let Ok(data) = CString::new(text) else {
                return Err(("adding a PTX module", format!("{name} contains a NUL byte")));
            };
            let name_c = CString::new(name).unwrap_or_default();
            let bytes = data.as_bytes_with_nul();
            // SAFETY: `state` is live; `data` is a NUL-terminated PTX image of `bytes.len()`
            // bytes that outlives the call (the driver copies it); no per-input options.
            let status = unsafe {
                sys::cuLinkAddData_v2(
                    state,
                    sys::CUjitInputType::CU_JIT_INPUT_PTX,
                    bytes.as_ptr() as *mut c_void,
                    bytes.len(),
                    name_c.as_ptr(),
                    0,
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                )
            };
            if status != sys::CUresult::CUDA_SUCCESS {
                return Err(("adding a PTX module", format!("{name}: {status:?}")));
            }
        }
        let mut cubin: *mut c_void = std::ptr::null_mut();
        let mut size: usize = 0;
        // SAFETY: `state` is live; out-pointers are valid.
        let status = unsafe { sys::cuLinkComplete(state, &mut cubin, &mut size) };
        if status != sys::CUresult::CUDA_SUCCESS || cubin.is_null() {
            return Err(("completing the link", format!("{status:?}")));
        }
        // SAFETY: the driver owns `size` bytes at `cubin` until cuLinkDestroy; copy them now.
        Ok(unsafe { std::slice::from_raw_parts(cubin as *const u8, size) }.to_vec())
    })();
    // SAFETY: `state` was created above and is destroyed once; the cubin was copied.
    let _ = unsafe { sys::cuLinkDestroy(state) };
    result.map_err(|(step, code)| GpuError::LinkFailed {
        step,
        code,
        log: logs(&error_log, &info_log),
    })
}

/// Loads `text` again through `cuModuleLoadDataEx` with an error-log buffer, to get the JIT
/// compiler's message after the plain load failed.
pub(crate) fn jit_error_log(ctx: &Arc<CudaContext>, text: &str) -> String {
    if let Err(e) = ctx.bind_to_thread() {
        return format!("(no log: binding the context failed: {})", describe(&e));
    }
    let Ok(src) = CString::new(text) else {
        return "(no log: the PTX contains a NUL byte)".to_string();
    };
    let mut log = vec![0u8; JIT_LOG_BYTES];
    let mut options = [
        sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
        sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
    ];
    let mut values: [*mut c_void; 2] = [
        log.as_mut_ptr().cast(),
        std::ptr::without_provenance_mut(log.len()),
    ];
    let mut module: sys::CUmodule = std::ptr::null_mut();
    // SAFETY: `src` is a NUL-terminated image, the option arrays have two entries each, the log
    // buffer is JIT_LOG_BYTES long and outlives the call; the context is current.
    let status = unsafe {
        sys::cuModuleLoadDataEx(
            &mut module,
            src.as_ptr().cast(),
            options.len() as u32,
            options.as_mut_ptr(),
            values.as_mut_ptr(),
        )
    };
    if status == sys::CUresult::CUDA_SUCCESS && !module.is_null() {
        // It loaded this time; do not leak it.
        // SAFETY: `module` was just loaded and is not used elsewhere.
        let _ = unsafe { sys::cuModuleUnload(module) };
    }
    let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
    let message = String::from_utf8_lossy(&log[..end]).trim().to_string();
    if message.is_empty() {
        format!("(the driver gave no log; second load: {status:?})")
    } else {
        message
    }
}
