//! Where the `ivjit` binary is: the one cargo built, or, when the test executables run on the GPU
//! machine from `.gpu/` (built elsewhere), the packed copy in `.gpu/bin/`.

use std::path::{Path, PathBuf};

pub fn ivjit_binary() -> PathBuf {
    let built = PathBuf::from(env!("CARGO_BIN_EXE_ivjit"));
    if built.exists() {
        return built;
    }
    let packed =
        Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default()).join(".gpu/bin/ivjit");
    assert!(
        packed.exists(),
        "ivjit binary not found at {} or {}",
        built.display(),
        packed.display()
    );
    packed
}
