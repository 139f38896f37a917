//! `pown` and `rootn` on the GPU within one ulp per bound of the tightest enclosure, f64 and
//! f32, with the same arguments and exact oracles as the CPU checks (`tests/common/pown_check.rs`,
//! `tests/common/rootn_check.rs`). pown is a program of correctly rounded operations, so the GPU
//! must also equal the CPU bit for bit (`gpu_vs_cpu.rs` checks that on random boxes); rootn's
//! starting estimate comes from each backend's `pow`, and only its verified result is promised.
//!
//! Runs with `--features gpu-tests` (ignored without it; without a GPU it then fails).

use crate::common::{oracle::Fmt, pown_check, rootn_check};
use ivjit::BackendChoice;

#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn gpu_pown_and_rootn_within_one_ulp() {
    crate::common::gpu::require_gpu("gpu_pown_and_rootn_within_one_ulp");
    for (fmt, seed) in [(Fmt::F64, 0x9064), (Fmt::F32, 0x9032)] {
        pown_check::run(fmt, seed, BackendChoice::Gpu);
    }
    for (fmt, seed) in [(Fmt::F64, 0x2007_0064), (Fmt::F32, 0x2007_0032)] {
        rootn_check::run(fmt, seed, BackendChoice::Gpu);
    }
}
