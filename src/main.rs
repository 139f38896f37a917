//! The `ivjit` command-line tool.
//!
//! Exit status: 0 on success, 2 when the input is wrong (expression, `--var`, CSV), 1 when the
//! environment fails (no GPU with `--backend gpu`, a GPU or I/O error).

mod cli;
mod workloads;

use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "ivjit",
    version,
    about = "Interval-expression JIT: rigorous enclosures on NVIDIA GPUs or the CPU"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum BackendArg {
    Auto,
    Cpu,
    Gpu,
}

impl From<BackendArg> for ivjit::BackendChoice {
    fn from(b: BackendArg) -> Self {
        match b {
            BackendArg::Auto => ivjit::BackendChoice::Auto,
            BackendArg::Cpu => ivjit::BackendChoice::Cpu,
            BackendArg::Gpu => ivjit::BackendChoice::Gpu,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
pub enum PrecisionArg {
    F64,
    F32,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    Text,
    Json,
}

/// Where the expression comes from: the command line or a file.
#[derive(clap::Args)]
pub struct Source {
    /// The expression, e.g. 'x^4 - 5*x^2 + y' (or use -f FILE).
    #[arg(required_unless_present = "file", allow_hyphen_values = true)]
    pub expr: Option<String>,
    /// Read the expression from a file.
    #[arg(short = 'f', long = "file", conflicts_with = "expr")]
    pub file: Option<PathBuf>,
}

#[derive(Subcommand)]
enum Command {
    /// Evaluate an expression on one box (--var) or on a batch of boxes (--input).
    Eval(cli::EvalArgs),
    /// Print the interval IR after rewrites (--before: as built, before rewrites).
    Ir {
        #[command(flatten)]
        source: Source,
        #[arg(long)]
        before: bool,
        /// The IR of the expression with its gradient (the outputs are listed first).
        #[arg(long)]
        gradient: bool,
    },
    /// Print the scalar IR (every float operation with its rounding direction).
    Scalar {
        #[command(flatten)]
        source: Source,
        #[arg(long, value_enum, default_value = "f64")]
        precision: PrecisionArg,
    },
    /// Print the PTX kernel.
    Ptx {
        #[command(flatten)]
        source: Source,
        #[arg(long, value_enum, default_value = "f64")]
        precision: PrecisionArg,
    },
    /// List the functions expressions can call, with their semantics.
    Functions,
    /// IEEE 1788's comparisons of intervals: isEmpty, isEntire, isCommonInterval, ... of A,
    /// and with B the overlap state and equal, subset, interior, disjoint, less, precedes (and
    /// their strict forms). Bounds must be doubles: the comparisons are exact.
    Relate(cli::relate::RelateArgs),
    /// Classify every pixel of an image over a region of the plane by subdivision: outside
    /// (f > 0 on the whole pixel), inside (f < 0) or boundary (neither proven). f may use x and
    /// y; a .vm file (-f) is read as a Fidget/MPR tape.
    Render(cli::RenderArgs),
    /// A closed triangle mesh of the surface f = 0 over a box of space (.stl, .ply or .obj),
    /// built on an interval search of the lattice's cells, edges and faces so that parts
    /// thinner than a cell are kept (docs/mesh.md). f may use x, y and z; a .vm file (-f) is
    /// read as a Fidget/MPR tape.
    Mesh(cli::mesh::MeshArgs),
    /// Enclose the global minimum of f over a box by interval branch and bound: a certified
    /// [lower, upper] (docs/optimize.md). By default f is evaluated in the minimization form
    /// (the gradient's monotonicity test and exclusion) with a local descent for the upper
    /// bound.
    Minimize(cli::solve::MinimizeArgs),
    /// Find every zero of a square system (comma-separated outputs, as many as variables) in a
    /// box; each proven unique by interval Newton where it can be (docs/roots.md). Constraints
    /// ('x^2 + y^2 == 1, y >= x') or a Minibex file (-f problem.bch) are solved by branch and
    /// prune: every solution in a box at most --eps wide (docs/constraints.md).
    Solve(cli::solve::SolveArgs),
    /// Pave a box: the boxes proven inside the set the constraints define ('x^2 + y^2 <= 1,
    /// y >= x^3'), proven outside, or narrower than --eps (docs/constraints.md).
    Pave(cli::pave::PaveArgs),
    /// Narrow a box to the points that can satisfy constraints ('x^2 + y^2 == 1, x >= 0.6'),
    /// by HC4Revise compiled into one program; "empty" proves none does (docs/constraints.md).
    Contract(cli::pave::ContractArgs),
    /// Benchmark a suite of expressions (GPU: kernel and end-to-end time, compile latency,
    /// ceilings, hand-written CUDA baseline; CPU: boxes/s). See docs/bench.md.
    Bench(cli::BenchArgs),
}

fn main() -> ExitCode {
    // A closed output pipe (`ivjit ptx ... | head`) ends the process quietly, as other Unix
    // tools do, instead of a panic about printing to stdout (Rust ignores SIGPIPE by default).
    #[cfg(unix)]
    // SAFETY: restoring the default action of a signal before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Eval(args) => cli::eval(args),
        Command::Ir {
            source,
            before,
            gradient,
        } => cli::ir(&source, before, gradient),
        Command::Scalar { source, precision } => cli::scalar(&source, precision),
        Command::Ptx { source, precision } => cli::ptx(&source, precision),
        Command::Functions => cli::functions(),
        Command::Relate(args) => cli::relate::relate(args),
        Command::Render(args) => cli::render(args),
        Command::Mesh(args) => cli::mesh::mesh_command(args),
        Command::Minimize(args) => cli::solve::minimize(args),
        Command::Solve(args) => cli::solve::solve(args),
        Command::Pave(args) => cli::pave::pave_command(args),
        Command::Contract(args) => cli::pave::contract_command(args),
        Command::Bench(args) => cli::bench(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{}", cli::bounded(&e.message));
            ExitCode::from(e.status)
        }
    }
}
