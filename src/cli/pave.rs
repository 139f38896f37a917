//! `ivjit pave`: the boxes of a root box proven inside a set given by constraints, proven
//! outside it, or narrower than `--eps` (`ivjit::search::pave`; docs/constraints.md).

use std::path::PathBuf;

use super::{failure, Failure};
use crate::{BackendArg, FormatArg, PrecisionArg};
use ivjit::search::pave::{Constraints, Paver, Paving};
use ivjit::{BackendChoice, Expression, Interval, Precision};
use serde_json::json;

/// What `pave` and `contract` share: the constraints, the box, where and how they run.
#[derive(clap::Args)]
pub struct Problem {
    /// The constraints, comma-separated: f <= g, f >= g, f == g, f in [a, b]
    /// (e.g. 'x^2 + y^2 <= 1, y >= x^3').
    pub constraints: String,
    /// A variable's range: x=[-2,2]. One per variable.
    #[arg(long = "box", value_name = "NAME=INTERVAL", allow_hyphen_values = true)]
    pub boxes: Vec<String>,
    #[arg(long, value_enum, default_value = "auto")]
    pub backend: BackendArg,
    #[arg(long, value_enum, default_value = "f64")]
    pub precision: PrecisionArg,
}

#[derive(clap::Args)]
pub struct PaveArgs {
    #[command(flatten)]
    pub problem: Problem,
    /// Bisect undecided boxes down to this width.
    #[arg(long, default_value_t = 1e-2)]
    pub eps: f64,
    /// Evaluate at most this many boxes (the undecided rest is reported as boundary).
    #[arg(long, default_value_t = 1 << 22)]
    pub max_boxes: usize,
    /// Contract a box again, uncut, while one round narrows one of its sides by more than this
    /// fraction (a fixpoint ratio in [0, 1); 0: one contraction per cut, as Codac).
    #[arg(long, default_value_t = ivjit::search::pave::RATIO)]
    pub ratio: f64,
    /// text: counts and volumes; json: every box ({"vars", "inner", "boundary", "outer"},
    /// a box a list of [lo, hi] per variable, bounds as `eval` prints them).
    #[arg(long, value_enum, default_value = "text")]
    pub format: FormatArg,
    /// Where the output goes (default standard output). A name ending in .npy gets every box
    /// as one float64 array of shape (boxes, 1 + 2 n): the class (as `ivjit render`'s: 0
    /// outside, 1 inside, 2 boundary), then lo, hi of each variable in the constraints' order
    /// (printed on standard error).
    #[arg(short, long, default_value = "-")]
    pub output: PathBuf,
    /// Also draw a 2-D paving as a grey-scale PNG: inner black, boundary grey, outer white
    /// (the first variable across, the second up).
    #[arg(long, value_name = "FILE.png")]
    pub png: Option<PathBuf>,
    /// The picture's size in pixels.
    #[arg(long, default_value = "512x512")]
    pub size: String,
}

/// The paving drawn at `width` x `height` over the root box: each pixel takes the shade of the
/// boxes holding its center; outer boxes are drawn first, then inner ones, then the boundary,
/// so that a center on a shared face shows the less certain class.
fn picture(p: &Paving, root: &[Interval], (width, height): (u32, u32)) -> Vec<u8> {
    let (w, h) = (width as usize, height as usize);
    let mut pixels = vec![255u8; w * h];
    let (x, y) = (root[0], root[1]);
    let dx = (x.hi - x.lo) / w as f64;
    let dy = (y.hi - y.lo) / h as f64;
    // The pixel columns (rows) whose centers lie in [a, b].
    let cols = |a: f64, b: f64| {
        let first = ((a - x.lo) / dx - 0.5).ceil().max(0.0) as usize;
        let last = ((b - x.lo) / dx - 0.5).floor().min(w as f64 - 1.0);
        (first, last)
    };
    let rows = |c: f64, d: f64| {
        // Row j's center is y.hi - (j + 0.5) dy.
        let first = ((y.hi - d) / dy - 0.5).ceil().max(0.0) as usize;
        let last = ((y.hi - c) / dy - 0.5).floor().min(h as f64 - 1.0);
        (first, last)
    };
    for (list, shade) in [(&p.outer, 255u8), (&p.inner, 0), (&p.boundary, 128)] {
        for b in list.iter() {
            let (c0, c1) = cols(b[0].lo, b[0].hi);
            let (r0, r1) = rows(b[1].lo, b[1].hi);
            if c1 < 0.0 || r1 < 0.0 {
                continue;
            }
            for r in r0..=r1 as usize {
                for c in c0..=c1 as usize {
                    pixels[r * w + c] = shade;
                }
            }
        }
    }
    pixels
}

#[derive(clap::Args)]
pub struct ContractArgs {
    #[command(flatten)]
    pub problem: Problem,
    /// Forward-backward sweeps (HC4Revise).
    #[arg(long, default_value_t = 3)]
    pub sweeps: usize,
    #[arg(long, value_enum, default_value = "text")]
    pub format: FormatArg,
}

/// The constraints read and compiled, with the root box from `--box` (shared by `pave` and
/// `contract`); a compile error shows the user's text beside the built one.
fn constraints_and_root(
    text: &str,
    boxes: &[String],
) -> Result<(Constraints, Expression, Vec<Interval>), Failure> {
    let constraints = Constraints::parse(text).map_err(|e| Failure::input(e.to_string()))?;
    let expr = Expression::parse(&constraints.source).map_err(|e| match e {
        // The source is built from the constraints: show the user's text, not the built one.
        ivjit::Error::Compile(d) => Failure {
            message: format!(
                "in the constraints '{}' (read as '{}'):\n{}",
                text,
                constraints.source,
                d.render(&constraints.source)
            ),
            status: 2,
        },
        e => failure(e, &constraints.source),
    })?;
    let root = super::solve::root_box(&expr, boxes)?;
    let root = root.iter().map(|&(lo, hi)| Interval { lo, hi }).collect();
    Ok((constraints, expr, root))
}

fn precision_of(p: PrecisionArg) -> Precision {
    match p {
        PrecisionArg::F64 => Precision::F64,
        PrecisionArg::F32 => Precision::F32,
    }
}

fn choice_of(b: BackendArg) -> BackendChoice {
    BackendChoice::from(b)
}

/// `ivjit contract`: the box narrowed by the constraints' HC4Revise contractor
/// (`Expression::contractor`), or "empty" where no point of it satisfies them.
pub fn contract_command(args: ContractArgs) -> Result<(), Failure> {
    let (constraints, expr, root) =
        constraints_and_root(&args.problem.constraints, &args.problem.boxes)?;
    let precision = precision_of(args.problem.precision);
    let contractor = expr
        .contractor(&constraints.ranges, args.sweeps.max(1))
        .map_err(|e| failure(e, &constraints.source))?;
    let eval = ivjit::Evaluator::new(&contractor, precision, choice_of(args.problem.backend))
        .map_err(|e| failure(e, &constraints.source))?;
    let out = eval
        .eval(&root)
        .map_err(|e| failure(e, &constraints.source))?;
    let empty = out.iter().any(Interval::is_empty);
    let text = match args.format {
        FormatArg::Json => {
            let boxed: Option<Vec<serde_json::Value>> = (!empty).then(|| {
                out.iter()
                    .map(|iv| {
                        json!([
                            Interval::format_lower(iv.lo, precision),
                            Interval::format_upper(iv.hi, precision)
                        ])
                    })
                    .collect()
            });
            format!("{}\n", json!({"vars": expr.vars(), "box": boxed}))
        }
        FormatArg::Text if empty => {
            "empty: no point of the box satisfies the constraints\n".to_string()
        }
        FormatArg::Text => expr
            .vars()
            .iter()
            .zip(&out)
            .map(|(v, iv)| format!("{v} = {}\n", iv.display(precision)))
            .collect(),
    };
    print!("{text}");
    Ok(())
}

/// The volume of a list of boxes (0 for none: an empty sum of floats is -0, printed
/// "-0.000000").
fn volume(boxes: &[Vec<Interval>]) -> f64 {
    boxes
        .iter()
        .map(|b| b.iter().map(|iv| iv.hi - iv.lo).product::<f64>())
        .fold(0.0, |a, v| a + v)
}

fn json_of(p: &Paving, precision: Precision) -> serde_json::Value {
    let boxes = |list: &[Vec<Interval>]| -> serde_json::Value {
        list.iter()
            .map(|b| {
                b.iter()
                    .map(|iv| {
                        json!([
                            Interval::format_lower(iv.lo, precision),
                            Interval::format_upper(iv.hi, precision)
                        ])
                    })
                    .collect::<Vec<_>>()
            })
            .collect::<Vec<_>>()
            .into()
    };
    json!({
        "vars": p.vars,
        "inner": boxes(&p.inner),
        "boundary": boxes(&p.boundary),
        "outer": boxes(&p.outer),
        "evaluated": p.evaluated,
        "truncated": p.truncated,
    })
}

pub fn pave_command(args: PaveArgs) -> Result<(), Failure> {
    let (constraints, _, root) =
        constraints_and_root(&args.problem.constraints, &args.problem.boxes)?;
    if args.eps.is_nan() || args.eps <= 0.0 {
        return Err(Failure::input(format!(
            "--eps {}: the width must be positive",
            args.eps
        )));
    }
    if !(0.0..1.0).contains(&args.ratio) {
        return Err(Failure::input(format!(
            "--ratio {}: the fixpoint ratio must be in [0, 1) (0 turns it off)",
            args.ratio
        )));
    }
    let (precision, choice) = (
        precision_of(args.problem.precision),
        choice_of(args.problem.backend),
    );
    let paving = Paver::new(&constraints, precision, choice)
        .and_then(|p| {
            p.with_ratio(args.ratio)
                .pave(&root, args.eps, args.max_boxes)
        })
        .map_err(|e| failure(e, &constraints.source))?;
    let text = match args.format {
        FormatArg::Json => format!("{}\n", json_of(&paving, precision)),
        FormatArg::Text => format!(
            "inner: {} boxes, volume {:.6}\nboundary: {} boxes, volume {:.6}\nouter: {} boxes, \
             volume {:.6}\n{} boxes evaluated{}\n",
            paving.inner.len(),
            volume(&paving.inner),
            paving.boundary.len(),
            volume(&paving.boundary),
            paving.outer.len(),
            volume(&paving.outer),
            paving.evaluated,
            if paving.truncated {
                " (budget reached: the undecided boxes are reported as boundary)"
            } else {
                ""
            }
        ),
    };
    if args.output.extension().is_some_and(|e| e == "npy") {
        eprintln!("ivjit pave: variables {}", paving.vars.join(", "));
        super::output::write(&args.output, &npy_of(&paving)?)?;
        return draw(&args, &paving, &root);
    }
    draw(&args, &paving, &root)?;
    super::output::write(&args.output, text.as_bytes())
}

/// Every box of the paving as a float64 array of shape (boxes, 1 + 2n): the class (render's
/// OUTSIDE, INSIDE, BOUNDARY), then lo and hi per variable.
fn npy_of(paving: &Paving) -> Result<Vec<u8>, Failure> {
    use ivjit::search::{BOUNDARY, INSIDE, OUTSIDE};
    use npyz::WriterBuilder;
    let n = paving.vars.len();
    let lists = [
        (INSIDE, &paving.inner),
        (BOUNDARY, &paving.boundary),
        (OUTSIDE, &paving.outer),
    ];
    let count: usize = lists.iter().map(|(_, l)| l.len()).sum();
    let mut out = Vec::with_capacity(128 + 8 * count * (1 + 2 * n));
    let fail = |e: std::io::Error| Failure::runtime(format!("cannot encode the paving: {e}"));
    let mut w = npyz::WriteOptions::new()
        .default_dtype()
        .shape(&[count as u64, (1 + 2 * n) as u64])
        .writer(&mut out)
        .begin_nd()
        .map_err(fail)?;
    for (class, list) in lists {
        for b in list.iter() {
            w.push(&f64::from(class)).map_err(fail)?;
            for iv in b {
                w.push(&iv.lo).map_err(fail)?;
                w.push(&iv.hi).map_err(fail)?;
            }
        }
    }
    w.finish().map_err(fail)?;
    Ok(out)
}

/// `--png`: the picture of a 2-D paving, where asked.
fn draw(args: &PaveArgs, paving: &Paving, root: &[Interval]) -> Result<(), Failure> {
    if let Some(path) = &args.png {
        if root.len() != 2 {
            return Err(Failure::input(format!(
                "--png draws a paving of 2 variables; these constraints have {} ({})",
                root.len(),
                paving.vars.join(", ")
            )));
        }
        let size = super::render::parse_size(&args.size)?;
        let image = super::render::grey_png(&picture(paving, root, size), size.0, size.1)?;
        super::output::write(path, &image)?;
    }
    Ok(())
}
