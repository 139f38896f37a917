//! The differential fuzzing over the interval classes (issue 29, `tests/common/class_fuzz.rs`)
//! on the GPU: random expressions on boxes drawn from the classes, the GPU kernels of each
//! expression and of its mean-value form checked against the rigorous evaluation at the
//! witnesses. `IVJIT_CLASS_FUZZ_CASES` (default 2,000: each expression compiles two kernels
//! per precision) and `IVJIT_CLASS_FUZZ_SEED` as on the CPU.

use crate::common::class_fuzz::{self, Engines};

#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn differential_fuzzing_over_interval_classes_on_the_gpu() {
    crate::common::gpu::require_gpu("differential_fuzzing_over_interval_classes_on_the_gpu");
    let cases = class_fuzz::env("IVJIT_CLASS_FUZZ_CASES", 2_000) as usize;
    let seed = class_fuzz::env("IVJIT_CLASS_FUZZ_SEED", 0x1788_0029);
    let failures = class_fuzz::run(cases, seed, Engines::Gpu);
    assert!(
        failures.is_empty(),
        "{} failures (first 30):\n{}",
        failures.len(),
        failures[..failures.len().min(30)].join("\n")
    );
}
