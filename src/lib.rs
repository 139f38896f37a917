//! ivjit: an interval-expression JIT compiler for NVIDIA GPUs, with a rigorous CPU evaluator.
//!
//! Every output interval contains every real value the expression takes on the input box
//! (IEEE 1788 set-based semantics).
//!
//! The pipeline, one module per stage:
//! text → [`syntax`] (logos lexer, LALRPOP parser, AST with spans) → [`ir`] (hash-consed interval
//! DAG with constant folding) → [`rewrite`] (power specialization, repeated factors, squares,
//! static signs) → [`lower`] (interval semantics → [`scalar`] IR with a rounding direction on every
//! float operation) → backends: [`cpu`] (evaluator) and [`ptx`] (emitter) + [`gpu`] (cudarc).
//! Every stage reads what it knows of an elementary function from one table, [`point`].
//!
//! This file is the facade only: [`Expression`] (`expression.rs`), [`Evaluator`]
//! (`evaluator.rs`, with the input checks of `input.rs`) and [`Error`] (`error.rs`) are
//! re-exported here; `docs/architecture.md` is the map of the layers.
//!
//! ```
//! use ivjit::{Expression, Evaluator, BackendChoice, Interval, Precision};
//! let expr = Expression::parse("x^2 - 2*x").unwrap();
//! let eval = Evaluator::new(&expr, Precision::F64, BackendChoice::Cpu).unwrap();
//! let out = eval.eval(&[Interval::new(-1.0, 2.0).unwrap()]).unwrap();
//! assert!(out[0].contains(-1.0) && out[0].contains(3.0));
//! ```

#![warn(missing_docs)]

pub mod cpu;
mod error;
mod evaluator;
mod expression;
pub mod gpu;
mod input;
pub mod interval;
pub mod ir;
pub mod lower;
pub mod point;
pub mod ptx;
pub mod rewrite;
pub mod round;
pub mod scalar;
pub mod search;
pub mod shape;
pub mod specialize;
pub mod syntax;
// The benchmark's workloads are not part of the library (see the file); its unit tests use them.
#[cfg(test)]
extern crate self as ivjit;
#[cfg(test)]
mod workloads;
// The layer test: the imports against the map's table (docs/architecture.md).
#[cfg(test)]
mod layers;

pub use error::Error;
pub use evaluator::{Backend, BackendChoice, Evaluator};
pub use expression::Expression;
pub use input::Column;
pub use interval::{Interval, IntervalError};
pub use scalar::Precision;
