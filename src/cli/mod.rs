//! The subcommands of the `ivjit` tool.

mod batch;
mod bench;
pub mod mesh;
mod output;
pub mod pave;
mod progress;
pub mod relate;
mod render;
pub mod solve;

pub use render::{render, RenderArgs};

use crate::{BackendArg, FormatArg, PrecisionArg, Source};
use ivjit::internals::syntax::diagnostic::Diagnostic;
use ivjit::{BackendChoice, DecoratedInterval, Error, Evaluator, Expression, Interval, Precision};
use std::path::{Path, PathBuf};

/// A failure to report: the message (already rendered) and the exit status.
#[derive(Debug)]
pub struct Failure {
    pub message: String,
    pub status: u8,
}

impl Failure {
    /// Bad input from the user: status 2.
    pub fn input(message: impl Into<String>) -> Failure {
        Failure {
            message: format!("error: {}", message.into()),
            status: 2,
        }
    }
    /// The environment failed (GPU, I/O): status 1.
    pub fn runtime(message: impl Into<String>) -> Failure {
        Failure {
            message: format!("error: {}", message.into()),
            status: 1,
        }
    }
}

/// Turns a library error into a failure, rendering diagnostics against the source.
pub(crate) fn failure(e: Error, source: &str) -> Failure {
    match e {
        Error::Compile(d) => Failure {
            message: d.render(source),
            status: 2,
        },
        // Memory is the environment's: status 1, as for a batch.
        Error::Search(ivjit::search::SearchError::OutOfMemory(_)) => {
            Failure::runtime(e.to_string())
        }
        Error::Input { .. } | Error::Shape(_) | Error::Search(_) | Error::Decoration(_) => {
            Failure::input(e.to_string())
        }
        Error::NoGpu(_) | Error::Gpu(_) => Failure::runtime(e.to_string()),
    }
}

fn precision(p: PrecisionArg) -> Precision {
    match p {
        PrecisionArg::F64 => Precision::F64,
        PrecisionArg::F32 => Precision::F32,
    }
}

/// The most read from a stream that is not a regular file (a device, a FIFO, a terminal):
/// `--input /dev/zero` must fail, not read until memory runs out.
pub const STREAM_LIMIT: u64 = 1 << 30;

/// Reads a file whole: a regular file into memory reserved for its size (failing cleanly when
/// there is not enough), any other stream up to [`STREAM_LIMIT`] bytes.
pub fn read_bytes(path: &Path, what: &str) -> Result<Vec<u8>, Failure> {
    use std::io::Read;
    let io =
        |e: std::io::Error| Failure::input(format!("cannot read {what} {}: {e}", path.display()));
    let file = std::fs::File::open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if meta.is_dir() {
        return Err(Failure::input(format!(
            "cannot read {what} {}: it is a folder",
            path.display()
        )));
    }
    let limit = if meta.is_file() {
        meta.len()
    } else {
        STREAM_LIMIT
    };
    // A regular file's size plus the byte that shows its end; a stream grows as it comes.
    let first = if meta.is_file() { limit + 1 } else { 1 << 16 };
    let mut bytes = batch::room_for::<u8>(
        usize::try_from(first).unwrap_or(usize::MAX),
        &format!("{what} {}", path.display()),
    )?;
    // One byte more than the limit shows whether the stream goes on.
    let mut reader = file.take(limit + 1);
    loop {
        if bytes.len() == bytes.capacity() {
            let more = bytes.capacity().clamp(1 << 16, 1 << 28);
            bytes.try_reserve(more).map_err(|_| {
                Failure::runtime(format!(
                    "not enough memory to read {what} {} ({} bytes read)",
                    path.display(),
                    bytes.len()
                ))
            })?;
        }
        let len = bytes.len();
        let cap = bytes.capacity();
        bytes.resize(cap, 0);
        let got = loop {
            match reader.read(&mut bytes[len..]) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                r => break r,
            }
        };
        match got {
            Ok(0) => {
                bytes.truncate(len);
                break;
            }
            Ok(k) => bytes.truncate(len + k),
            Err(e) => return Err(io(e)),
        }
    }
    if bytes.len() as u64 > limit {
        return Err(Failure::input(format!(
            "{what} {}: more than {} MiB from a stream that is not a regular file (a device \
             or a pipe that does not end?); save the data to a file",
            path.display(),
            STREAM_LIMIT >> 20
        )));
    }
    Ok(bytes)
}

/// Reads a text file; invalid UTF-8 is reported with the byte offset where it starts.
pub fn read_text(path: &std::path::Path, what: &str) -> Result<String, Failure> {
    let bytes = read_bytes(path, what)?;
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        Failure::input(format!(
            "{what} {}: invalid UTF-8 at byte {at} (line {line}); save it as UTF-8 text",
            path.display()
        ))
    })
}

fn read_source(s: &Source) -> Result<String, Failure> {
    match (&s.expr, &s.file) {
        (Some(e), _) => Ok(e.clone()),
        (None, Some(f)) => read_text(f, "expression file"),
        (None, None) => Err(Failure::input("no expression given")),
    }
}

/// The expression and the text its spans point into. A `.vm` file is a Fidget/MPR tape: its own
/// errors point into the tape, later ones into the expression text it spells.
pub(crate) fn compile(s: &Source) -> Result<(String, Expression), Failure> {
    compile_as(s, false)
}

/// [`compile`]; `decorated`: as a decorated expression (`[nai]` and decorated literals keep
/// their meaning; the evaluation re-parses it for the decoration inputs it needs).
fn compile_as(s: &Source, decorated: bool) -> Result<(String, Expression), Failure> {
    let text = read_source(s)?;
    if s.file
        .as_deref()
        .is_some_and(ivjit::internals::syntax::tape::is_tape)
    {
        let expr = Expression::parse_tape(&text).map_err(|e| failure(e, &text))?;
        return Ok((expr.source().to_string(), expr));
    }
    let parsed = if decorated {
        Expression::parse_decorated(&text)
    } else {
        Expression::parse(&text)
    };
    let expr = parsed.map_err(|e| {
        let mut f = failure(e, &text);
        if let Some(hint) = file_hint(s, &text) {
            f.message = format!("{}\n{hint}", f.message.trim_end());
        }
        f
    })?;
    Ok((text, expr))
}

/// A hint for an expression that does not parse because it is a file's name (`ivjit render
/// prospero.vm`): the file exists, or the name ends like a tape's.
fn file_hint(s: &Source, text: &str) -> Option<String> {
    let name = text.trim();
    let looks_like_a_file = s.file.is_none()
        && !name.is_empty()
        && !name.contains(char::is_whitespace)
        && (Path::new(name).is_file() || name.ends_with(".vm"));
    looks_like_a_file.then(|| {
        format!(
            "help: `{name}` looks like a file's name; to read the expression (or a .vm tape) \
             from it, write `-f {name}`"
        )
    })
}

#[derive(clap::Args)]
pub struct EvalArgs {
    #[command(flatten)]
    pub source: Source,
    /// A variable's interval: x=[1,2], x=0.5, x=[-inf,0], x=[empty]. Repeat per variable.
    #[arg(long = "var", value_name = "NAME=INTERVAL")]
    pub vars: Vec<String>,
    /// Boxes: CSV with a header of NAME_lo,NAME_hi column pairs, one box per row; or a NumPy
    /// .npy array (n_boxes, 2*n_vars) of <f8/<f4, columns [x_lo, x_hi, y_lo, y_hi, ...].
    #[arg(long, value_name = "FILE")]
    pub input: Option<PathBuf>,
    /// Where batch results go: .npy (a <f8 array) by extension, else CSV; stdout by default.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "text")]
    pub format: FormatArg,
    #[arg(long, value_enum, default_value = "auto")]
    pub backend: BackendArg,
    #[arg(long, value_enum, default_value = "f64")]
    pub precision: PrecisionArg,
    /// Also enclose each output's partial derivatives over the box (text: a `d/dNAME` line
    /// per variable; JSON: a "gradient" array in variable order; batches: `d_NAME_lo,
    /// d_NAME_hi` columns after each output); "undefined" where a jump may lie in the box
    /// (NaN in a `.npy` output).
    #[arg(long)]
    pub gradient: bool,
    /// Evaluate in the mean-value form intersected with the natural extension (never
    /// wider; much narrower on small boxes of smooth expressions).
    #[arg(long, conflicts_with = "gradient")]
    pub mean_value: bool,
    /// Evaluate in the monotone form: the mean-value form intersected with the
    /// monotonicity test (variables whose partial derivative has a sign on the box
    /// evaluated at the ends; exact where f is monotone in every variable).
    #[arg(long, conflicts_with_all = ["gradient", "mean_value"])]
    pub monotone: bool,
    /// IEEE 1788 decorations: each output's decoration after its interval (`[0, 2]_com`;
    /// JSON: a "dec" field; batches: a `dec` column after each output's pair, the name in
    /// CSV, the code in .npy) — com: defined and continuous on the box, result bounded; dac:
    /// defined and continuous; def: defined; trv: nothing known; ill: NaI. --var values and
    /// CSV `NAME_dec` columns may carry one (`x=[0,1]_dac`); a bare box gets com (dac if
    /// unbounded, trv if empty).
    #[arg(long, conflicts_with_all = ["gradient", "mean_value", "monotone"])]
    pub decorations: bool,
}

pub fn eval(args: EvalArgs) -> Result<(), Failure> {
    // The GPU's context (0.2-0.6 s to create) is made while the expression is read and
    // lowered; the thread is joined before returning, so no exit finds it in the driver.
    let gpu = !matches!(args.backend, BackendArg::Cpu);
    let context = gpu.then(|| std::thread::spawn(ivjit::internals::gpu::prepare));
    let result = eval_with(args);
    if let Some(thread) = context {
        let _ = thread.join();
    }
    result
}

fn eval_with(args: EvalArgs) -> Result<(), Failure> {
    let (text, expr) = compile_as(&args.source, args.decorations)?;
    // The same outputs and variables, evaluated in the mean-value or the monotone form.
    let expr = if args.mean_value {
        expr.mean_value_form().map_err(|e| failure(e, &text))?
    } else if args.monotone {
        expr.monotone_form().map_err(|e| failure(e, &text))?
    } else {
        expr
    };
    let precision = precision(args.precision);
    // Values given with --var, checked against the expression's variables.
    let mut given: Vec<(String, Interval)> = Vec::new();
    let mut decorations: Vec<DecoratedInterval> = Vec::new();
    for v in &args.vars {
        let Some((name, value)) = v.split_once('=') else {
            return Err(Failure::input(format!(
                "--var {}: expected NAME=INTERVAL, like --var x=[1,2] or --var x=0.5",
                quote(v)
            )));
        };
        let name = name.trim();
        let bad = |e: String| Failure::input(format!("--var {}: {}", quote(v), quote(&e)));
        let iv = if args.decorations {
            let d = DecoratedInterval::parse(value).map_err(|e| match e {
                ivjit::DecorationError::Interval(e) => bad(e.to_string()),
                // Messages of bounded length (the suffix is shortened).
                other => Failure::input(format!("--var {}: {other}", quote(v))),
            })?;
            decorations.push(d);
            d.interval
        } else {
            Interval::parse(value).map_err(|e| {
                let mut f = bad(e.to_string());
                if value.contains("]_") || value.trim().eq_ignore_ascii_case("[nai]") {
                    f.message
                        .push_str(" (a decorated interval needs --decorations)");
                }
                f
            })?
        };
        if given.iter().any(|(n, _)| n == name) {
            return Err(Failure::input(format!(
                "--var {} is given twice",
                quote(name)
            )));
        }
        if expr.var_index(name).is_none() {
            let shown = ivjit::internals::syntax::lexer::shorten(name);
            return Err(Failure::input(format!(
                "--var {shown}: the expression has no variable '{shown}' (its variables: {})",
                list(expr.vars())
            )));
        }
        given.push((name.to_string(), iv));
    }
    let choice = BackendChoice::from(args.backend);
    if let Some(out) = &args.output {
        let inputs: Vec<&Path> = args
            .input
            .iter()
            .chain(args.source.file.iter())
            .map(PathBuf::as_path)
            .collect();
        output::check_not_an_input(out, &inputs)?;
    }
    if let Some(input) = &args.input {
        if args.format == FormatArg::Json {
            return Err(Failure::input(
                "--format json is for single boxes; batch results (--input) are written as CSV or .npy",
            ));
        }
        let mut progress = progress::Progress::new();
        let batch = batch::read(input, expr.vars(), &given, args.decorations, &mut progress)?;
        let known: std::collections::HashSet<&str> = given
            .iter()
            .map(|(n, _)| n.as_str())
            .chain(batch.columns.iter().map(String::as_str))
            .collect();
        let missing = missing_vars(&expr, &text, |name| known.contains(name));
        if let Some(f) = missing {
            return Err(f);
        }
        // The expression evaluated, its columns and its inputs: decorated (decorations given in
        // a column or with --var are program inputs; else every variable is decorated from its
        // bounds, and the batch reads no more than without), its gradient (whose flags mark
        // undefined partials), or as it is.
        let (evaluated, columns, inputs) = if args.decorations {
            let given_decorations: Vec<(String, ivjit::Decoration)> = given
                .iter()
                .zip(&decorations)
                .map(|((n, _), d)| (n.clone(), d.decoration))
                .collect();
            let any_given = batch.has_decorations()
                || decorations
                    .iter()
                    .any(|d| d.decoration != ivjit::Decoration::of(d.interval));
            let kind = if any_given {
                ivjit::DecorationInputs::Given
            } else {
                ivjit::DecorationInputs::FromBounds
            };
            let decorated = Expression::parse_with_decorations(expr.source(), kind)
                .map_err(|e| failure(e, &text))?;
            let inputs = if any_given {
                batch.soa_decorated(expr.vars(), &given, &given_decorations)?
            } else {
                batch.soa(expr.vars(), &given)?
            };
            (
                decorated,
                batch::Column::decorated(expr.n_outputs()),
                inputs,
            )
        } else if args.gradient {
            let (g, at) = expr.gradient().map_err(|e| failure(e, &text))?;
            let inputs = batch.soa(expr.vars(), &given)?;
            (g, batch::Column::gradient(at, expr.vars()), inputs)
        } else {
            let inputs = batch.soa(expr.vars(), &given)?;
            (
                expr.clone(),
                batch::Column::outputs(expr.n_outputs()),
                inputs,
            )
        };
        let evaluator =
            Evaluator::new(&evaluated, precision, choice).map_err(|e| failure(e, &text))?;
        report_fallback(&evaluator);
        let results = batch::evaluate(&evaluator, &inputs, batch.n, &mut progress, &text)?;
        drop(inputs);
        batch::write(
            args.output.as_deref(),
            &results,
            batch.n,
            &columns,
            precision,
            &mut progress,
        )?;
        progress.finish();
        return Ok(());
    }
    if args.output.is_some() {
        return Err(Failure::input("--output needs --input (a batch of boxes)"));
    }
    let by_name: std::collections::HashMap<&str, Interval> =
        given.iter().map(|(n, iv)| (n.as_str(), *iv)).collect();
    if let Some(f) = missing_vars(&expr, &text, |name| by_name.contains_key(name)) {
        return Err(f);
    }
    let inputs: Vec<Interval> = expr.vars().iter().map(|v| by_name[v.as_str()]).collect();
    if args.decorations {
        let decorated = given
            .iter()
            .map(|(n, _)| n.as_str())
            .zip(decorations)
            .collect::<std::collections::HashMap<&str, DecoratedInterval>>();
        let inputs: Vec<DecoratedInterval> =
            expr.vars().iter().map(|v| decorated[v.as_str()]).collect();
        return eval_decorated(&text, &expr, &inputs, precision, choice, args.format);
    }
    let (evaluated, layout) = if args.gradient {
        let (g, at) = expr.gradient().map_err(|e| failure(e, &text))?;
        (g, Some(at))
    } else {
        (expr.clone(), None)
    };
    let evaluator = Evaluator::new(&evaluated, precision, choice).map_err(|e| failure(e, &text))?;
    report_fallback(&evaluator);
    let out = evaluator.eval(&inputs).map_err(|e| failure(e, &text))?;
    // Per output: its value and, with --gradient, its partial derivatives (None: undefined,
    // a jump may lie in the box).
    let rows: Vec<(Interval, Vec<Option<Interval>>)> = (0..expr.n_outputs())
        .map(|j| match layout {
            None => (out[j], Vec::new()),
            Some(at) => {
                let defined = out[at.defined(j)];
                let proven = defined.lo == 1.0 && defined.hi == 1.0;
                let partials = (0..expr.vars().len())
                    .map(|v| proven.then_some(out[at.partial(j, v)]))
                    .collect();
                (out[at.value(j)], partials)
            }
        })
        .collect();
    let bound = |iv: &Interval| json_interval(iv, precision);
    match args.format {
        FormatArg::Text => {
            for (value, partials) in &rows {
                println!("{}", value.display(precision));
                for (name, d) in expr.vars().iter().zip(partials) {
                    match d {
                        Some(d) => println!("  d/d{name} {}", d.display(precision)),
                        None => println!("  d/d{name} undefined (a jump may lie in the box)"),
                    }
                }
            }
        }
        FormatArg::Json => {
            let outputs: Vec<serde_json::Value> = rows
                .iter()
                .map(|(value, partials)| {
                    let mut o = bound(value);
                    if layout.is_some() {
                        let g: Vec<serde_json::Value> = partials
                            .iter()
                            .map(|d| match d {
                                Some(d) => bound(d),
                                None => serde_json::json!({ "undefined": true }),
                            })
                            .collect();
                        o["gradient"] = serde_json::Value::Array(g);
                    }
                    o
                })
                .collect();
            print_json(&evaluator, precision, outputs);
        }
    }
    Ok(())
}

/// An interval in `eval`'s JSON: `{"lo": ..., "hi": ...}` outward, or `{"empty": true}`.
fn json_interval(iv: &Interval, precision: Precision) -> serde_json::Value {
    if iv.is_empty() {
        serde_json::json!({ "empty": true })
    } else {
        serde_json::json!({
            "lo": Interval::format_lower(iv.lo, precision),
            "hi": Interval::format_upper(iv.hi, precision),
        })
    }
}

/// `eval`'s JSON document: the backend, the precision and one object per output.
fn print_json(evaluator: &Evaluator, precision: Precision, outputs: Vec<serde_json::Value>) {
    let doc = serde_json::json!({
        "backend": evaluator.backend().name(),
        "precision": precision.name(),
        "outputs": outputs,
    });
    println!("{doc}");
}

/// `eval --decorations` of one box: each output as `[lo, hi]_dec` (JSON: with a "dec" field).
fn eval_decorated(
    text: &str,
    expr: &Expression,
    inputs: &[DecoratedInterval],
    precision: Precision,
    choice: BackendChoice,
    format: FormatArg,
) -> Result<(), Failure> {
    let decorated = Expression::parse_decorated(expr.source()).map_err(|e| failure(e, text))?;
    let evaluator = Evaluator::new(&decorated, precision, choice).map_err(|e| failure(e, text))?;
    report_fallback(&evaluator);
    let out = evaluator
        .eval_decorated(&[inputs.to_vec()])
        .map_err(|e| failure(e, text))?;
    let outputs = out.into_iter().next().unwrap_or_default();
    match format {
        FormatArg::Text => {
            for d in &outputs {
                println!("{}", d.display(precision));
            }
        }
        FormatArg::Json => {
            let outputs: Vec<serde_json::Value> = outputs
                .iter()
                .map(|d| {
                    let mut o = json_interval(&d.interval, precision);
                    o["dec"] = serde_json::Value::from(d.decoration.name());
                    o
                })
                .collect();
            print_json(&evaluator, precision, outputs);
        }
    }
    Ok(())
}

/// A diagnostic for the first variable of the expression that has no value.
fn missing_vars(expr: &Expression, text: &str, has: impl Fn(&str) -> bool) -> Option<Failure> {
    let name = expr.vars().iter().find(|v| !has(v))?;
    let span = expr.var_span(name).unwrap_or_default();
    let shown = ivjit::internals::syntax::lexer::shorten(name);
    let d = Diagnostic::new(span, format!("variable '{shown}' has no value")).with_help(format!(
        "pass --var {shown}=[lo,hi], or a {shown}_lo,{shown}_hi column pair with --input"
    ));
    Some(Failure {
        message: d.render(text),
        status: 2,
    })
}

pub(crate) fn report_fallback(e: &Evaluator) {
    if let Some(why) = e.fallback_reason() {
        eprintln!("ivjit: {why}; evaluating on the CPU");
    }
}

/// Names for a message: each shortened, at most 20 (a diagnostic stays small whatever the
/// input: docs/fuzzing.md promises at most 4 KiB).
pub(crate) fn list(names: &[String]) -> String {
    const SHOWN: usize = 20;
    if names.is_empty() {
        return "none".to_string();
    }
    let mut s = names
        .iter()
        .take(SHOWN)
        .map(|n| ivjit::internals::syntax::lexer::shorten(n))
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > SHOWN {
        s.push_str(&format!(", ... ({} more)", names.len() - SHOWN));
    }
    s
}

/// A piece of the user's input quoted in a message: at most 120 characters.
pub(crate) fn quote(s: &str) -> String {
    const MAX: usize = 120;
    match s.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}... ({} bytes)", &s[..i], s.len()),
        None => s.to_string(),
    }
}

/// The most a diagnostic prints (docs/fuzzing.md): longer ones keep their start and end.
pub const MAX_MESSAGE: usize = 4096;

/// `message` cut to [`MAX_MESSAGE`] bytes at character boundaries, keeping its start and its
/// last line (a diagnostic's caret or help).
pub fn bounded(message: &str) -> String {
    if message.len() <= MAX_MESSAGE {
        return message.to_string();
    }
    let cut = |s: &str, n: usize| -> String {
        let mut end = n.min(s.len());
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s[..end].to_string()
    };
    let last = message.rsplit('\n').next().unwrap_or("");
    let tail = if last.len() <= 600 { last } else { "" };
    format!(
        "{}\n... ({} bytes left out)\n{}",
        cut(message, MAX_MESSAGE - 700),
        message.len(),
        tail
    )
}

pub fn ir(s: &Source, before: bool, gradient: bool) -> Result<(), Failure> {
    let (text, expr) = compile(s)?;
    if gradient {
        let (g, at) = expr.gradient().map_err(|e| failure(e, &text))?;
        let graph = if before { g.initial_ir() } else { g.ir() };
        let mut names = Vec::new();
        for j in 0..at.outputs {
            names.push(format!("out{}: f{j}", at.value(j)));
        }
        for j in 0..at.outputs {
            names.push(format!(
                "out{}: f{j} continuous on the box when [1, 1]",
                at.defined(j)
            ));
            for (v, name) in expr.vars().iter().enumerate() {
                names.push(format!("out{}: df{j}/d{name}", at.partial(j, v)));
            }
        }
        println!("; gradient outputs: {}", names.join("; "));
        print!("{}", ivjit::internals::ir::text::to_text(graph));
        return Ok(());
    }
    if before {
        print!("{}", ivjit::internals::ir::text::to_text(expr.initial_ir()));
    } else {
        print!("{}", expr.ir_text());
    }
    Ok(())
}

pub fn scalar(s: &Source, p: PrecisionArg) -> Result<(), Failure> {
    let (text, expr) = compile(s)?;
    let prog = expr.scalar(precision(p)).map_err(|e| failure(e, &text))?;
    print!("{prog}");
    Ok(())
}

pub fn ptx(s: &Source, p: PrecisionArg) -> Result<(), Failure> {
    let (text, expr) = compile(s)?;
    print!("{}", expr.ptx(precision(p)).map_err(|e| failure(e, &text))?);
    Ok(())
}

pub fn functions() -> Result<(), Failure> {
    use ivjit::internals::scalar::PointFn;
    for f in ivjit::internals::ir::functions::FUNCTIONS.iter() {
        println!("{}({})", f.name, arg_names(f.arity));
        println!("    {}", f.semantics);
        println!("    domain: {}; accuracy: {}", f.domain, f.accuracy);
        println!("    derivative: {}", f.derivative);
        if let Some(p) = PointFn::from_name(f.name) {
            let cuda = p.cuda();
            println!(
                "    GPU: CUDA max error {} ulp (f64), {} ulp (f32) (CUDA C++ Programming Guide \
                 13.0, table {}), padded one step more",
                cuda.ulps(Precision::F64),
                cuda.ulps(Precision::F32),
                cuda.table
            );
        }
    }
    println!("operators: + - * / ^ (x^n integer n -> pown, x^0.5 -> sqrt), unary -");
    println!("constants: pi, e (tight enclosures); literals: 0.1, 1e-3, 0x1.8p-3, [a, b], [empty], [entire]");
    Ok(())
}

fn arg_names(n: usize) -> String {
    ["x", "y", "z"][..n.min(3)].join(", ")
}

/// `ivjit bench`: the suite of docs/bench.md on the GPU or the CPU evaluator.
/// The options of `ivjit bench`.
#[derive(clap::Args)]
pub struct BenchArgs {
    /// GPU if present (else the CPU suite, said on stderr), cpu, or gpu (exit 1 if none).
    #[arg(long, value_enum, default_value = "auto")]
    pub backend: BackendArg,
    /// Boxes per expression (default 2^24 on the GPU, 2^16 on the CPU).
    #[arg(long)]
    pub boxes: Option<usize>,
    /// Seed of the random inputs (default: from the clock).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Only these benchmarks (comma-separated names, e.g. tangle,rosenbrock10).
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    /// Print JSON instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Time the searches (render, minimize, exclude, rays: ivjit::search) instead of the
    /// flat suite, next to the flat kernel's rate for the same expression.
    #[arg(long)]
    pub search: bool,
    /// Time whole renders instead (Prospero 2-D at 512², 1024² and on a GPU 4096², a 3-D depth
    /// map of the colonnade at 512²), with the program's length before and after pruning and,
    /// on a GPU, a non-rigorous point-sampling kernel of the same program for comparison.
    #[arg(long, conflicts_with_all = ["search", "gradient", "decorations"])]
    pub render: bool,
    /// Time each expression's gradient (f, its continuity flags and its partial
    /// derivatives in one kernel) instead; rows are named NAME-grad.
    #[arg(long)]
    pub gradient: bool,
    /// Time each expression with IEEE 1788 decorations (inputs decorated from their bounds,
    /// one decoration output per output) instead; rows are named NAME-dec.
    #[arg(long, conflicts_with_all = ["search", "gradient"])]
    pub decorations: bool,
}

pub fn bench(args: BenchArgs) -> Result<(), Failure> {
    use bench::{Options, Target};
    let BenchArgs {
        backend,
        boxes,
        seed,
        only,
        json,
        search,
        render,
        gradient,
        decorations,
    } = args;
    if boxes == Some(0) {
        return Err(Failure::input("--boxes must be at least 1"));
    }
    let target = match backend {
        BackendArg::Auto => Target::Auto,
        BackendArg::Cpu => Target::Cpu,
        BackendArg::Gpu => Target::Gpu,
    };
    let report = bench::run(&Options {
        target,
        boxes,
        seed,
        only,
        search,
        render,
        variant: if gradient {
            bench::Variant::Gradient
        } else if decorations {
            bench::Variant::Decorated
        } else {
            bench::Variant::Plain
        },
    })
    .map_err(Failure::runtime)?;
    if json {
        println!("{}", report.json);
    } else {
        print!("{}", report.text);
    }
    Ok(())
}
