//! The NVRTC calls, and nothing else: whether the library loads, its version, and compiling one
//! CUDA C source to PTX with given options. What to compile and when to reuse a cached result
//! is [`super::runtime`]'s business.

use std::ffi::{c_char, CString};

use cudarc::nvrtc::{result, sys};

/// File name NVRTC reports in its messages.
pub const SOURCE_NAME: &str = "ivjit_math.cu";

/// Why the runtime's PTX could not be produced.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RuntimeError {
    /// `libnvrtc.so.13` could not be loaded.
    #[error(
        "NVRTC (libnvrtc.so.13) was not found; point functions on the GPU need it \
         (install the CUDA toolkit's NVRTC or put its folder on LD_LIBRARY_PATH)"
    )]
    NoNvrtc,
    /// An NVRTC call failed.
    #[error("NVRTC failed while {step}: {message}")]
    Nvrtc {
        /// What was being done.
        step: &'static str,
        /// NVRTC's error.
        message: String,
    },
    /// NVRTC rejected the runtime's CUDA source.
    #[error("NVRTC rejected {SOURCE_NAME} ({code}) with options {options}:\n{log}")]
    Compile {
        /// NVRTC's result code.
        code: String,
        /// The compiler options used.
        options: String,
        /// NVRTC's compilation log.
        log: String,
    },
}

/// Runs `f`, turning a panic of the NVRTC bindings (a missing entry point) into an error.
fn guarded<T>(
    step: &'static str,
    f: impl FnOnce() -> Result<T, RuntimeError>,
) -> Result<T, RuntimeError> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(panic) => {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "panic in the NVRTC bindings".to_string());
            Err(RuntimeError::Nvrtc { step, message })
        }
    }
}

/// Whether libnvrtc can be loaded. Never panics.
pub fn nvrtc_present() -> bool {
    // SAFETY: only tries to open the library.
    std::panic::catch_unwind(|| unsafe { sys::is_culib_present() }).unwrap_or(false)
}

/// NVRTC's version (major, minor).
pub fn nvrtc_version() -> Result<(i32, i32), RuntimeError> {
    if !nvrtc_present() {
        return Err(RuntimeError::NoNvrtc);
    }
    guarded("querying its version", || {
        let (mut major, mut minor) = (0, 0);
        // SAFETY: two valid out-pointers.
        unsafe { sys::nvrtcVersion(&mut major, &mut minor) }
            .result()
            .map_err(|e| RuntimeError::Nvrtc {
                step: "querying its version",
                message: format!("{e:?}"),
            })?;
        Ok((major, minor))
    })
}

// `c_char` is i8 on x86-64 and u8 on aarch64, where the cast is the identity.
#[allow(clippy::unnecessary_cast)]
fn c_string_lossy(bytes: &[c_char]) -> String {
    let bytes: Vec<u8> = bytes.iter().map(|&c| c as u8).collect();
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

/// Compiles CUDA C `source` (named [`SOURCE_NAME`] in messages) to PTX with NVRTC and the given
/// options; a rejection carries NVRTC's log.
pub(crate) fn compile(source: &str, options: &[String]) -> Result<String, RuntimeError> {
    if !nvrtc_present() {
        return Err(RuntimeError::NoNvrtc);
    }
    let src = CString::new(source).expect("the runtime source has no NUL byte");
    let name = CString::new(SOURCE_NAME).expect("no NUL byte");
    guarded("compiling the runtime", || {
        let nvrtc = |step: &'static str| {
            move |e: result::NvrtcError| RuntimeError::Nvrtc {
                step,
                message: format!("{e:?}"),
            }
        };
        let prog =
            result::create_program(&src, Some(&name)).map_err(nvrtc("creating the program"))?;
        // SAFETY: `prog` is a live program until destroyed below; `src` and `name` outlive it.
        let compiled = unsafe { result::compile_program(prog, options) };
        let out = match compiled {
            Ok(()) => {
                // SAFETY: as above.
                unsafe { result::get_ptx(prog) }
                    .map(|ptx| c_string_lossy(&ptx))
                    .map_err(nvrtc("fetching the PTX"))
            }
            Err(e) => {
                // SAFETY: as above.
                let log = unsafe { result::get_program_log(prog) }
                    .map(|l| c_string_lossy(&l))
                    .unwrap_or_else(|e| format!("(no log: {e:?})"));
                Err(RuntimeError::Compile {
                    code: format!("{:?}", e.0),
                    options: options.join(" "),
                    log: log.trim().to_string(),
                })
            }
        };
        // SAFETY: destroyed once, not used afterwards.
        let _ = unsafe { result::destroy_program(prog) };
        out
    })
}
