//! The tests' one random number generator: SplitMix64 (Steele, Lea and Flood, "Fast splittable
//! pseudorandom number generators", OOPSLA 2014). Small, fast, any seed works, and the same
//! seed gives the same sequence on every machine, so a failure reproduces. Each test keeps its
//! own helpers for the distributions it needs on top of [`splitmix64`], which is the library's
//! (`crate::common::workloads::splitmix64`, also behind the benchmark's random boxes).

pub use crate::common::workloads::splitmix64;
