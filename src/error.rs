//! The library's one error type: what went wrong, with enough context to tell the user what to
//! do (the CLI prints it and maps it to an exit status).

use crate::syntax::diagnostic::Diagnostic;
use crate::{gpu, shape, IntervalError};

/// Everything that can go wrong, with enough context to tell the user what to do.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The expression is malformed or uses something unknown; the diagnostic points into it.
    #[error("{0}")]
    Compile(Diagnostic),
    /// A box bound is not a valid interval.
    #[error("input {name}: {error}")]
    Input {
        /// Which input: the box and variable, or the `--var` name.
        name: String,
        /// What is wrong with its bounds.
        error: IntervalError,
    },
    /// A batch of the wrong shape: a box with the wrong number of intervals, or buffers of the
    /// wrong length.
    #[error("{0}")]
    Shape(#[from] shape::ShapeError),
    /// A search cannot run as asked (variables, outputs, image options).
    #[error("{0}")]
    Search(#[from] crate::search::SearchError),
    /// The GPU backend was asked for and there is no usable GPU.
    #[error("no GPU available: {0}")]
    NoGpu(#[from] gpu::NoGpu),
    /// The GPU failed while compiling or running the kernel.
    #[error("GPU error: {0}")]
    Gpu(#[from] gpu::GpuError),
}

/// A lowering failure is a compile error pointing into the expression.
impl From<crate::lower::LowerError> for Error {
    fn from(e: crate::lower::LowerError) -> Error {
        let d = Diagnostic::new(e.span, e.message);
        Error::Compile(match e.help {
            Some(h) => d.with_help(h),
            None => d,
        })
    }
}
