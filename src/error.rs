//! The library's one error type: what went wrong, with enough context to tell the user what to
//! do (the CLI prints it and maps it to an exit status).

use crate::syntax::ast::Span;
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
    Search(#[from] SearchError),
    /// The GPU backend was asked for and there is no usable GPU.
    #[error("no GPU available: {0}")]
    NoGpu(#[from] gpu::NoGpu),
    /// The GPU failed while compiling or running the kernel.
    #[error("GPU error: {0}")]
    Gpu(#[from] gpu::GpuError),
    /// A decorated interval is malformed, or decorations were asked of an undecorated
    /// evaluator.
    #[error("{0}")]
    Decoration(#[from] crate::DecorationError),
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

/// Why a search cannot run as asked.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SearchError {
    /// The expression uses a variable the search does not bind.
    #[error(
        "the expression's variable '{name}' is not a coordinate of the image: \
         a 2-D render binds x and y only"
    )]
    Variable {
        /// The variable.
        name: String,
    },
    /// The rule classifies one output.
    #[error("the expression has {0} outputs; a render classifies exactly one")]
    Outputs(usize),
    /// The pruned render's tape interpreter does not run the expression.
    #[error(transparent)]
    Tape(#[from] TapeError),
    /// Bad image size, region or tile sizes.
    #[error("{0}")]
    Options(String),
    /// The check installed by [`crate::search::interruptible`] asked the search to stop.
    #[error("the search was interrupted")]
    Interrupted,
    /// What the search must hold from the start is more than the machine's memory.
    #[error("out of memory: {0}")]
    OutOfMemory(String),
}

/// Why an expression has no tape.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TapeError {
    /// An operation the interpreter does not run.
    #[error(
        "'{op}' (bytes {}..{} of the source) is not run by the tape interpreter of pruned \
         renders, which runs the operations of one or two arguments (and fma); render without \
         pruning",
        span.start,
        span.end
    )]
    Operation {
        /// The operation's name.
        op: &'static str,
        /// Where it is in the source.
        span: Span,
    },
    /// More distinct operations run by their lowering than the codes name.
    #[error(
        "the expression has more than {0} distinct functions (counting each integer power and \
         root apart); a tape runs at most {0}: render without pruning"
    )]
    Operations(usize),
    /// More slots or constants than an instruction can name.
    #[error("the expression needs {0} slots or constants; a tape names at most 65,535")]
    TooLarge(usize),
    /// An operation the point-sampling baseline (`search::tape::PointSampler`) does not run.
    #[error(
        "the point-sampling baseline runs constants, x, y, +, -, *, neg, sqr, sqrt, abs, min \
         and max (a .vm tape's operations), not the tape's operation code {0}"
    )]
    PointSampled(u16),
    /// A variable the render does not bind.
    #[error("the variable '{name}' is not bound by the search, which binds {binds}")]
    Variable {
        /// The variable.
        name: String,
        /// The names the search binds.
        binds: String,
    },
}
