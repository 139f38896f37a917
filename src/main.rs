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
    Eval {
        #[command(flatten)]
        source: Source,
        /// A variable's interval: x=[1,2], x=0.5, x=[-inf,0], x=[empty]. Repeat per variable.
        #[arg(long = "var", value_name = "NAME=INTERVAL")]
        vars: Vec<String>,
        /// Boxes: CSV with a header of NAME_lo,NAME_hi column pairs, one box per row; or a NumPy
        /// .npy array (n_boxes, 2*n_vars) of <f8/<f4, columns [x_lo, x_hi, y_lo, y_hi, ...].
        #[arg(long, value_name = "FILE")]
        input: Option<PathBuf>,
        /// Where batch results go: .npy (a <f8 array) by extension, else CSV; stdout by default.
        #[arg(long, value_name = "FILE")]
        output: Option<PathBuf>,
        #[arg(long, value_enum, default_value = "text")]
        format: FormatArg,
        #[arg(long, value_enum, default_value = "auto")]
        backend: BackendArg,
        #[arg(long, value_enum, default_value = "f64")]
        precision: PrecisionArg,
        /// Also enclose each output's partial derivatives over the box (text: a `d/dNAME` line
        /// per variable; JSON: a "gradient" array in variable order; batches: `d_NAME_lo,
        /// d_NAME_hi` columns after each output); "undefined" where a jump may lie in the box
        /// (NaN in a `.npy` output).
        #[arg(long)]
        gradient: bool,
        /// Evaluate in the mean-value form intersected with the natural extension (never
        /// wider; much narrower on small boxes of smooth expressions).
        #[arg(long, conflicts_with = "gradient")]
        mean_value: bool,
        /// Evaluate in the monotone form: the mean-value form intersected with the
        /// monotonicity test (variables whose partial derivative has a sign on the box
        /// evaluated at the ends; exact where f is monotone in every variable).
        #[arg(long, conflicts_with_all = ["gradient", "mean_value"])]
        monotone: bool,
    },
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
    /// Classify every pixel of an image over a region of the plane by subdivision: outside
    /// (f > 0 on the whole pixel), inside (f < 0) or boundary (neither proven). f may use x and
    /// y; a .vm file (-f) is read as a Fidget/MPR tape.
    Render {
        #[command(flatten)]
        source: Source,
        /// Image size in pixels, WIDTHxHEIGHT.
        #[arg(long, default_value = "1024x1024")]
        size: String,
        /// The region x0,x1,y0,y1 (row 0 of the image is at y1).
        #[arg(long, default_value = "-1,1,-1,1", allow_hyphen_values = true)]
        region: String,
        /// Tile sizes of the subdivision, coarse to fine, ending with 1.
        #[arg(long, value_delimiter = ',', default_value = "64,8,1")]
        tiles: Vec<u32>,
        /// .npy: the classes as a uint8 array (height, width), 0 outside, 1 inside, 2 boundary;
        /// .png: a picture (inside black, boundary grey, outside white).
        #[arg(long, short = 'o', value_name = "FILE")]
        output: PathBuf,
        #[arg(long, value_enum, default_value = "auto")]
        backend: BackendArg,
        #[arg(long, value_enum, default_value = "f64")]
        precision: PrecisionArg,
        /// Print the time and the boxes of each round on stderr.
        #[arg(long)]
        stats: bool,
        /// Render this many times (after one untimed warm-up render that compiles and loads
        /// the kernels) and print the fastest and the median time (implies --stats).
        #[arg(long, value_name = "N")]
        repeat: Option<usize>,
        /// 3-D (the expression uses z): the heights searched, z0,z1; each pixel's vertical line
        /// is searched from z1 down. The output is a depth map (.npy float64, NaN for a miss)
        /// or a picture of it shaded by its slopes (.png).
        #[arg(long, default_value = "-1,1", allow_hyphen_values = true)]
        zrange: String,
        /// 3-D: the resolution along each line, 1/steps of the z range.
        #[arg(long, default_value_t = 1024)]
        steps: usize,
        /// Specialize the expression per tile (min/max whose sides do not overlap on the tile
        /// take one side) and evaluate each tile's children with its shorter program: 2-D, the
        /// same classes; 3-D, blocks of rays of the --tiles sizes (1 left out), each block's
        /// rays searched with its program, the same depth map. 2-D: per-tile pruned tapes
        /// run by an interpreter on the backend, no JIT compilation (x, y, constants, +, -, *,
        /// neg, sqr, sqrt, abs, min, max: the .vm set); on the CPU, other expressions get
        /// programs specialized per tile. --stats prints the mean program length per round.
        #[arg(long)]
        prune: bool,
    },
    /// Enclose the global minimum of f over a box by interval branch and bound: a certified
    /// [lower, upper] (docs/optimize.md). By default f is evaluated in the minimization form
    /// (the gradient's monotonicity test and exclusion) with a local descent for the upper
    /// bound.
    Minimize {
        #[command(flatten)]
        source: Source,
        /// A variable's range: x=[-2,2] (finite). One per variable.
        #[arg(long = "box", value_name = "NAME=INTERVAL", allow_hyphen_values = true)]
        boxes: Vec<String>,
        /// Stop when upper - lower <= TOL.
        #[arg(long, default_value_t = 1e-6)]
        tol: f64,
        /// Evaluate at most this many boxes (the enclosure then holds but is wider).
        #[arg(long, default_value_t = 100_000_000)]
        max_boxes: u64,
        /// How f is evaluated on a box.
        #[arg(long, value_enum, default_value = "gradient")]
        form: cli::solve::FormArg,
        /// No local descent from the best midpoints (upper bounds from midpoints only).
        #[arg(long)]
        no_descent: bool,
        #[arg(long, value_enum, default_value = "auto")]
        backend: BackendArg,
        #[arg(long, value_enum, default_value = "text")]
        format: FormatArg,
    },
    /// Find every zero of a square system (comma-separated outputs, as many as variables) in a
    /// box; each proven unique by interval Newton where it can be (docs/roots.md).
    Solve {
        #[command(flatten)]
        source: Source,
        /// A variable's range: x=[-2,2] (finite). One per variable.
        #[arg(long = "box", value_name = "NAME=INTERVAL", allow_hyphen_values = true)]
        boxes: Vec<String>,
        /// Exclude down to boxes this wide (relative above 1) before the Newton test.
        #[arg(long, default_value_t = 1e-12)]
        tol: f64,
        /// Evaluate at most this many boxes in the exclusion.
        #[arg(long, default_value_t = 1 << 24)]
        max_boxes: u64,
        #[arg(long, value_enum, default_value = "auto")]
        backend: BackendArg,
        #[arg(long, value_enum, default_value = "text")]
        format: FormatArg,
    },
    /// Benchmark a suite of expressions (GPU: kernel and end-to-end time, compile latency,
    /// ceilings, hand-written CUDA baseline; CPU: boxes/s). See docs/bench.md.
    Bench {
        /// GPU if present (else the CPU suite, said on stderr), cpu, or gpu (exit 1 if none).
        #[arg(long, value_enum, default_value = "auto")]
        backend: BackendArg,
        /// Boxes per expression (default 2^24 on the GPU, 2^16 on the CPU).
        #[arg(long)]
        boxes: Option<usize>,
        /// Seed of the random inputs (default: from the clock).
        #[arg(long)]
        seed: Option<u64>,
        /// Only these benchmarks (comma-separated names, e.g. tangle,rosenbrock10).
        #[arg(long, value_delimiter = ',')]
        only: Vec<String>,
        /// Print JSON instead of the table.
        #[arg(long)]
        json: bool,
        /// Time the searches (render, minimize, exclude, rays: ivjit::search) instead of the
        /// flat suite, next to the flat kernel's rate for the same expression.
        #[arg(long)]
        search: bool,
        /// Time whole renders instead (Prospero 2-D at 512² and 1024², a 3-D depth map of the
        /// colonnade at 512²), with the program's length before and after region specialization.
        #[arg(long, conflicts_with_all = ["search", "gradient"])]
        render: bool,
        /// Time each expression's gradient (f, its continuity flags and its partial
        /// derivatives in one kernel) instead; rows are named NAME-grad.
        #[arg(long)]
        gradient: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Eval {
            source,
            vars,
            input,
            output,
            format,
            backend,
            precision,
            gradient,
            mean_value,
            monotone,
        } => cli::eval(cli::EvalArgs {
            source,
            vars,
            input,
            output,
            format,
            backend,
            precision,
            gradient,
            mean_value,
            monotone,
        }),
        Command::Ir {
            source,
            before,
            gradient,
        } => cli::ir(&source, before, gradient),
        Command::Scalar { source, precision } => cli::scalar(&source, precision),
        Command::Ptx { source, precision } => cli::ptx(&source, precision),
        Command::Functions => cli::functions(),
        Command::Render {
            source,
            size,
            region,
            tiles,
            output,
            backend,
            precision,
            stats,
            repeat,
            zrange,
            steps,
            prune,
        } => cli::render(cli::RenderArgs {
            source,
            size,
            region,
            tiles,
            output,
            backend,
            precision,
            stats,
            repeat,
            zrange,
            steps,
            prune,
        }),
        Command::Minimize {
            source,
            boxes,
            tol,
            max_boxes,
            form,
            no_descent,
            backend,
            format,
        } => cli::solve::minimize(cli::solve::MinimizeArgs {
            source,
            boxes,
            tol,
            max_boxes,
            form,
            no_descent,
            backend,
            format,
        }),
        Command::Solve {
            source,
            boxes,
            tol,
            max_boxes,
            backend,
            format,
        } => cli::solve::solve(cli::solve::SolveArgs {
            source,
            boxes,
            tol,
            max_boxes,
            backend,
            format,
        }),
        Command::Bench {
            backend,
            boxes,
            seed,
            only,
            json,
            search,
            render,
            gradient,
        } => cli::bench(cli::BenchArgs {
            backend,
            boxes,
            seed,
            only,
            json,
            search,
            render,
            gradient,
        }),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{}", cli::bounded(&e.message));
            ExitCode::from(e.status)
        }
    }
}
