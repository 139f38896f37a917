//! GPU tests are compiled to run only with the cargo feature `gpu-tests` (`tools/gpu-pack`
//! turns it on for the GPU machine; `tools/test --features gpu-tests` on a machine with Rust and
//! a GPU). Without it they carry `#[ignore]` and cargo reports them as ignored, never as passed:
//! a reader of a CI log can tell what ran. Built with the feature, a GPU test on a machine
//! without a usable GPU fails, since it was asked to run.

use ivjit::internals::gpu::GpuInfo;

// Every GPU test carries, written out (the attribute takes a literal):
// `#[cfg_attr(not(feature = "gpu-tests"), ignore = "needs a GPU: --features gpu-tests")]`.
// One without it calls `require_gpu` in CI, which has no GPU, and fails there: it cannot pass
// unnoticed.

/// The GPU this test runs on; panics, naming the test and the reason, when there is none.
pub fn require_gpu(test: &str) -> GpuInfo {
    ivjit::internals::gpu::detect().unwrap_or_else(|why| {
        panic!(
            "{test}: built with --features gpu-tests but there is no usable GPU: {why}. \
             Build without the feature to report GPU tests as ignored."
        )
    })
}
