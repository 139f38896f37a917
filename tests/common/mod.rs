//! Helpers shared by integration tests.

#![allow(dead_code, unused_imports)]

pub mod binary;
pub mod class_fuzz;
pub mod classes;
pub mod compose;
pub mod elem_oracle;
pub mod enclosure_oracle;
pub mod gpu;
pub mod itl;
pub mod mesh_check;
pub mod oracle;
pub mod power_oracle;
pub mod pown_check;
pub mod real_oracle;
pub mod reverse_oracle;
pub mod rng;
pub mod rootn_check;
pub mod tools;
#[path = "../../src/workloads.rs"]
pub mod workloads;
