//! Library tests that need no GPU and run no binaries: containment, the elementary
//! functions against their oracles, the ITF1788 vectors, number parsing, directed rounding,
//! semantics, tightness, fuzzing, `.sir` files, compile time, threads, name resolution at
//! scale. One binary (links the crate once); each file is a module, named in the test names
//! (`containment::...`).

#[path = "../common/mod.rs"]
mod common;

mod atan2_rev;
mod class_fuzz;
mod classes;
mod compile_time;
mod constrained;
mod constraint_classes;
mod containment;
mod contract;
mod decoration_classes;
mod elementary;
mod fuzz;
mod gradient;
mod itf1788;
mod itf1788_decorated;
mod itf1788_enclosure;
mod itf1788_library;
mod itf1788_reverse;
mod mesh;
mod names;
mod number;
mod pave;
mod powers;
mod region_pruning;
mod round;
mod semantics;
mod sir;
mod system;
mod threads;
mod tightest;
