//! ivjit: an interval-expression JIT compiler for NVIDIA GPUs, with a rigorous CPU evaluator.
//!
//! Every output interval contains every real value the expression takes on the input box
//! (IEEE 1788 set-based semantics).
//!
//! The pipeline, one private module per stage:
//! text → `syntax` (logos lexer, LALRPOP parser, AST with spans) → `ir` (hash-consed interval
//! DAG with constant folding) → `rewrite` (power specialization, repeated factors, squares,
//! static signs) → `lower` (interval semantics → `scalar` IR with a rounding direction on every
//! float operation) → backends: `cpu` (evaluator) and `ptx` (emitter) + `gpu` (cudarc).
//! Every stage reads what it knows of an elementary function from one table, `point`.
//!
//! The library's interface is this page: [`Expression`] (parse, rewrite, lower and emit once
//! per precision), [`Evaluator`] (the backend choice and the batch entry points, with the GPU
//! engine's [`KernelOptions`] and page-locked [`HostBuffer`]s), [`Interval`], [`Error`],
//! [`detect_gpu`] (is there a GPU to use, and which), and the searches of [`search`]. The stages are private; `docs/architecture.md` is
//! the map of their layers, and `cargo doc --document-private-items` documents them. The
//! command-line tool, the Python package and the tests reach them through a hidden module,
//! `internals`, which is not part of the interface.
//!
//! ```
//! use ivjit::{Expression, Evaluator, BackendChoice, Interval, Precision};
//! let expr = Expression::parse("x^2 - 2*x").unwrap();
//! let eval = Evaluator::new(&expr, Precision::F64, BackendChoice::Cpu).unwrap();
//! let out = eval.eval(&[Interval::new(-1.0, 2.0).unwrap()]).unwrap();
//! assert!(out[0].contains(-1.0) && out[0].contains(3.0));
//! ```

#![warn(missing_docs)]
// The stages are private modules whose items the hidden `internals` module re-exports, so their
// documentation links to each other's crate-private items; `cargo doc --document-private-items`
// (run by CI with warnings as errors) resolves every such link.
#![allow(rustdoc::private_intra_doc_links)]

mod cpu;
mod decoration;
mod error;
mod evaluator;
mod expression;
mod gpu;
mod input;
mod interval;
mod ir;
pub mod literal;
mod lower;
mod point;
mod ptx;
pub mod reduction;
pub mod relation;
mod rewrite;
mod round;
mod scalar;
pub mod search;
mod shape;
mod syntax;
// The benchmark's workloads are not part of the library (see the file); its unit tests use them.
#[cfg(test)]
extern crate self as ivjit;
#[cfg(test)]
mod workloads;
// The layer test: the imports against the map's table (docs/architecture.md).
#[cfg(test)]
mod layers;

/// The pipeline's stages, for the `ivjit` command-line tool, the Python package, the benchmarks
/// and the tests: not part of the library's interface (hidden from its documentation, free to
/// change). A user of the library needs only the items above and [`search`].
#[doc(hidden)]
pub mod internals {
    pub mod cpu {
        //! See the stage module of the same name.
        pub use crate::cpu::*;
    }
    pub mod gpu {
        //! See the stage module of the same name.
        pub use crate::gpu::*;
    }
    pub mod interval {
        //! See the stage module of the same name.
        pub use crate::interval::*;
    }
    pub mod ir {
        //! See the stage module of the same name.
        pub use crate::ir::*;
    }
    pub mod lower {
        //! See the stage module of the same name.
        pub use crate::lower::*;
    }
    pub mod point {
        //! See the stage module of the same name.
        pub use crate::point::*;
    }
    pub mod ptx {
        //! See the stage module of the same name.
        pub use crate::ptx::*;
    }
    pub mod rewrite {
        //! See the stage module of the same name.
        pub use crate::rewrite::*;
    }
    pub mod round {
        //! See the stage module of the same name.
        pub use crate::round::*;
    }
    pub mod scalar {
        //! See the stage module of the same name.
        pub use crate::scalar::*;
    }
    pub mod shape {
        //! See the stage module of the same name.
        pub use crate::shape::*;
    }
    pub mod syntax {
        //! See the stage module of the same name.
        pub use crate::syntax::*;
    }
}

pub use decoration::{DecoratedInterval, Decoration, DecorationError, DecorationInputs};
pub use error::Error;
pub use evaluator::{Backend, BackendChoice, Evaluator};
pub use expression::Expression;
pub use gpu::{
    detect as detect_gpu, CacheDir, GpuInfo, HostAllocError, HostBuffer, HostTransfer,
    InterpreterPolicy, KernelOptions, NoGpu, TierUpPolicy,
};
pub use input::Column;
pub use interval::{Interval, IntervalError};
pub use relation::Overlap;
pub use round::Round;
pub use scalar::Precision;
