//! Where the tests find things outside the crate: the checkout's root and the CUDA tools the
//! pinned wheels install (`tools/test` runs `tools/install-ptxas` and `tools/install-nvrtc`),
//! and the full name of a test for re-running it in a child process.

use std::path::{Path, PathBuf};

/// The crate root: `$CARGO_MANIFEST_DIR` at run time (the GPU runner sets it to the copy's
/// root), else where the test was built.
pub fn root() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")))
}

/// A CUDA tool: `$var`, else `.tools/<name>` under the crate root, else
/// `/usr/local/cuda/bin/<name>`; panics with what to install when none exists.
pub fn tool(var: &str, name: &str, installer: &str) -> PathBuf {
    if let Some(p) = std::env::var_os(var).filter(|v| !v.is_empty()) {
        let p = PathBuf::from(p);
        assert!(
            p.is_file(),
            "{var}={} does not name a file; unset it or run {installer}",
            p.display()
        );
        return p;
    }
    let local = root().join(".tools").join(name);
    if local.is_file() {
        return local;
    }
    let system = Path::new("/usr/local/cuda/bin").join(name);
    if system.is_file() {
        return system;
    }
    panic!(
        "{name} not found: set {var} or run {installer} (the README's test command does; it puts \
         {name} at {})",
        local.display()
    );
}

/// ptxas (`$IVJIT_PTXAS`, `.tools/ptxas`, or the CUDA toolkit's).
pub fn ptxas() -> PathBuf {
    tool("IVJIT_PTXAS", "ptxas", "tools/install-ptxas")
}

/// The name libtest gives test `name` of the module whose `module_path!()` is `module`
/// (`gpu::runtime_nvrtc` → `runtime_nvrtc::name`), for `--exact` in a child process.
pub fn test_name(module: &str, name: &str) -> String {
    match module.split_once("::") {
        Some((_, inner)) => format!("{inner}::{name}"),
        None => name.to_string(),
    }
}
