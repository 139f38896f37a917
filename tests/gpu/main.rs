//! GPU tests: they run with the cargo feature `gpu-tests` (`tools/gpu-pack` sets it) and are
//! reported as ignored without it (`tests/common/gpu.rs`); the PTX checks with ptxas, NVRTC
//! and the linker run everywhere the pinned tools are installed (`tools/test` installs them).

#[path = "../common/mod.rs"]
mod common;

mod gpu_basic;
mod gpu_class_fuzz;
mod gpu_classes;
mod gpu_engine;
mod gpu_faults;
mod gpu_interpreter;
mod gpu_points;
mod gpu_powers;
mod gpu_search;
mod gpu_vs_cpu;
mod ptx_assemble;
mod runtime_nvrtc;
