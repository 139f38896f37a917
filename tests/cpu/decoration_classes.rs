//! Decorations on the interval classes: every operator and function of the catalogue (the class
//! matrix's operations, `tests/common/classes.rs`) on every cell of the classes (unbounded
//! ends, entire, the largest floats, many periods, subnormals, signed zeros, empty), decorated
//! by `Expression::parse_decorated`, against an oracle written here from the definitions: each
//! function's domain and the points where it jumps, decided exactly (f64 comparisons; the poles
//! of tan, sec, csc and cot with pi to 2400 bits), on the CPU and the GPU, in f64 and f32.
//!
//! The oracle's decoration of a cell is the weakest of its arguments' (`newDec`) and of the
//! function's on the box: `trv` where the box leaves the domain, `def` where the function's
//! restriction to the box jumps, `dac` where the box holds a point where the function jumps
//! (but its restriction does not), else `com` if the computed result is bounded (IEEE 1788's
//! definition refers to the computed result) and `dac` if not. A decoration **stronger** than
//! the oracle's fails: it claims a fact the function does not have. A weaker one fails too,
//! except where [`weaker_expected`] says why the lowering cannot know more (tan's family with
//! an unbounded result); those are counted.

use crate::common::classes::{self as cl, Class, Op};
use crate::common::elem_oracle::{bf, le, pi_enc, Enc};
use crate::common::oracle::Fmt;
use astro_float::{BigFloat, RoundingMode as RM};
use ivjit::{
    BackendChoice, DecoratedInterval, Decoration, DecorationInputs, Evaluator, Expression,
    Precision,
};

/// What a function is on a box, from its definition.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Local {
    /// Undefined somewhere on the box.
    Undefined,
    /// Defined, but its restriction to the box jumps.
    Jumps,
    /// Defined and its restriction continuous, but the box holds a point where it jumps.
    TouchesJump,
    /// Defined and continuous at every point of the box.
    Continuous,
}

fn holds(lo: f64, hi: f64, x: f64) -> bool {
    lo <= x && x <= hi
}

/// Whether [lo, hi] holds an integer (a jump of floor and ceil) / a nonzero integer (trunc) /
/// a half-integer (round, rint).
fn holds_integer(lo: f64, hi: f64) -> bool {
    lo.ceil() <= hi
}

fn holds_nonzero_integer(lo: f64, hi: f64) -> bool {
    (hi >= 1.0 && lo.max(1.0).ceil() <= hi) || (lo <= -1.0 && lo <= hi.min(-1.0).floor())
}

fn holds_half_integer(lo: f64, hi: f64) -> bool {
    // Floats of magnitude 2^52 or more are integers: no half-integer among them.
    let big = 4503599627370496.0;
    if (lo >= big || hi <= -big) && lo.is_finite() && hi.is_finite() {
        return false;
    }
    if lo.is_infinite() || hi.is_infinite() || hi - lo >= 1.0 {
        return true;
    }
    // n + 1/2 in [lo, hi] iff an odd integer lies in [2 lo, 2 hi] (exact: |2 lo| < 2^53 + 2).
    let a = (2.0 * lo).ceil();
    let odd = if a % 2.0 != 0.0 { a } else { a + 1.0 };
    odd <= 2.0 * hi
}

/// Whether [lo, hi] holds a multiple m * pi/2 with m odd (`odd`: tan, sec) or even (csc, cot),
/// with pi to 2400 bits: a float lies farther than 2^-1100 from any multiple of pi/2, and the
/// enclosure of m * pi/2 is narrower than 2^-1300 for every |m| < 2^1025.
fn holds_pole(lo: f64, hi: f64, odd: bool) -> bool {
    if lo.is_infinite() || hi.is_infinite() || hi - lo >= 4.0 {
        return true;
    }
    const P: usize = 2400;
    static HALF_PI: std::sync::OnceLock<(BigFloat, BigFloat)> = std::sync::OnceLock::new();
    let (h_lo, h_hi) = HALF_PI.get_or_init(|| {
        let pi: Enc = pi_enc(P);
        let two = BigFloat::from_u64(2, 64);
        (pi.lo.div(&two, P, RM::Down), pi.hi.div(&two, P, RM::Up))
    });
    let (blo, bhi) = (bf(lo), bf(hi));
    let two = BigFloat::from_u64(2, 64);
    // The multiples around lo: a box narrower than 4 meets at most 3 of them.
    let first = blo.div(h_hi, P, RM::Down).floor().sub(&two, P, RM::Down);
    for k in 0..8u64 {
        let m = first.add(&BigFloat::from_u64(k, 64), P, RM::Down);
        let half = m.div(&two, P, RM::Down);
        let m_odd = cmp_ne(&half.floor(), &half);
        if m_odd != odd {
            continue;
        }
        let (a, b) = if le(&BigFloat::new(64), &m) {
            (m.mul(h_lo, P, RM::Down), m.mul(h_hi, P, RM::Up))
        } else {
            (m.mul(h_hi, P, RM::Down), m.mul(h_lo, P, RM::Up))
        };
        if le(&blo, &a) && le(&b, &bhi) {
            return true;
        }
        assert!(
            le(&b, &blo) || le(&bhi, &a),
            "pi/2 to {P} bits does not decide [{lo:e}, {hi:e}]"
        );
    }
    false
}

fn cmp_ne(a: &BigFloat, b: &BigFloat) -> bool {
    !(le(a, b) && le(b, a))
}

/// The function's behaviour on the (nonempty) boxes `b`, from its definition.
fn local(op: &str, b: &[(f64, f64)]) -> Local {
    use Local::*;
    let (lo, hi) = b[0];
    let domain = |ok: bool| if ok { Continuous } else { Undefined };
    let off_zero = |(l, h): (f64, f64)| !holds(l, h, 0.0);
    let constant_piece = |f: fn(f64) -> f64, jump: bool| {
        if f(lo) != f(hi) {
            Jumps
        } else if jump {
            TouchesJump
        } else {
            Continuous
        }
    };
    if let Some(n) = op.strip_prefix("pown:") {
        let n: i64 = n.parse().unwrap();
        return domain(n >= 0 || off_zero(b[0]));
    }
    if let Some(n) = op.strip_prefix("rootn:") {
        let n: i64 = n.parse().unwrap();
        return match n {
            0 => Undefined,
            n if n > 0 && n % 2 != 0 => Continuous,
            n if n > 0 => domain(lo >= 0.0),
            n if n % 2 == 0 => domain(lo > 0.0),
            _ => domain(off_zero(b[0])),
        };
    }
    match op {
        "add" | "sub" | "mul" | "neg" | "sqr" | "abs" | "min" | "max" | "fma" | "exp" | "exp2"
        | "exp10" | "expm1" | "sin" | "cos" | "atan" | "sinh" | "cosh" | "tanh" | "asinh"
        | "cbrt" | "sinpi" | "cospi" | "erf" | "erfc" | "hypot" | "sech" => Continuous,
        "div" => domain(off_zero(b[1])),
        "recip" | "csch" | "coth" | "acsch" => domain(off_zero(b[0])),
        "sqrt" => domain(lo >= 0.0),
        "log" | "log2" | "log10" => domain(lo > 0.0),
        "log1p" => domain(lo > -1.0),
        "asin" | "acos" => domain(lo >= -1.0 && hi <= 1.0),
        "acosh" => domain(lo >= 1.0),
        "atanh" => domain(lo > -1.0 && hi < 1.0),
        "acoth" => domain(lo > 1.0 || hi < -1.0),
        "asech" => domain(lo > 0.0 && hi <= 1.0),
        "tan" | "sec" => domain(!holds_pole(lo, hi, true)),
        "csc" | "cot" => domain(!holds_pole(lo, hi, false)),
        // acot(0) = pi/2, the limit from the right; from the left it tends to -pi/2.
        "acot" => {
            if lo < 0.0 && hi >= 0.0 {
                Jumps
            } else if holds(lo, hi, 0.0) {
                TouchesJump
            } else {
                Continuous
            }
        }
        // atan2(y, x): undefined at the origin; jumps across x < 0, y = 0 (pi on and above).
        "atan2" => {
            let ((ylo, yhi), (xlo, xhi)) = (b[0], b[1]);
            if holds(ylo, yhi, 0.0) && holds(xlo, xhi, 0.0) {
                Undefined
            } else if xlo < 0.0 && ylo < 0.0 && yhi >= 0.0 {
                Jumps
            } else if xlo < 0.0 && holds(ylo, yhi, 0.0) {
                TouchesJump
            } else {
                Continuous
            }
        }
        // x^y: x > 0, or x = 0 with y > 0.
        "pow" => {
            let ((xlo, _), (ylo, _)) = (b[0], b[1]);
            domain(xlo > 0.0 || (xlo >= 0.0 && ylo > 0.0))
        }
        "floor" => constant_piece(f64::floor, holds_integer(lo, hi)),
        "ceil" => constant_piece(f64::ceil, holds_integer(lo, hi)),
        "trunc" => constant_piece(f64::trunc, holds_nonzero_integer(lo, hi)),
        "round" => constant_piece(f64::round, holds_half_integer(lo, hi)),
        "rint" => constant_piece(f64::round_ties_even, holds_half_integer(lo, hi)),
        "sign" => constant_piece(
            |x| if x == 0.0 { 0.0 } else { x.signum() },
            holds(lo, hi, 0.0),
        ),
        "hull" | "intersect" => Undefined, // trv by the standard
        "cancelMinus" | "cancelPlus" => Undefined, // trv by the standard
        "sqrRev" | "absRev" | "coshRev" | "mulRev" | "sinRev" | "cosRev" | "tanRev" | "powRev1"
        | "powRev2" | "mulRevToPair2" => Undefined, // trv (the vectors)
        "atan2Rev1" | "atan2Rev2" => Undefined, // trv, as every other set of points of x
        // The quotient y / x where x does not hold 0 (IEEE 1788 and the vectors), else a set.
        "mulRevToPair1" => domain(!holds(lo, hi, 0.0)),
        o if o.starts_with("pownRev:") => Undefined,
        // ivjit's rule for a number of the enclosure: a constant on the box, com where finite.
        "inf" | "sup" | "mid" | "rad" | "wid" | "mag" | "mig" => Continuous,
        other => panic!("no decoration oracle for {other}"),
    }
}

/// The oracle's decoration of a cell, given the computed result `got` (for `com`'s bound).
fn oracle(op: &Op, b: &[(f64, f64)], got: &DecoratedInterval) -> Decoration {
    if b.iter().any(|(l, _)| l.is_nan()) {
        return Decoration::Trv;
    }
    let mut d = match local(&op.oracle, b) {
        Local::Undefined => Decoration::Trv,
        Local::Jumps => Decoration::Def,
        Local::TouchesJump => Decoration::Dac,
        Local::Continuous => Decoration::of(got.interval).max(Decoration::Dac),
    };
    for &(l, h) in b {
        d = d.min(Decoration::of(ivjit::Interval { lo: l, hi: h }));
    }
    d
}

/// Where a weaker decoration than the oracle's is expected: tan's family where the computed
/// result is unbounded. The rigorous enclosure of cos (sin) on the box then reaches 0 (a float
/// next to a pole, a box from the smallest subnormal, an f32 box at 2^24 that tan's reduction
/// answers [entire]), so the lowering cannot tell a pole from a value beyond the floats: it
/// says `trv`, as it must where it cannot prove the function defined.
fn weaker_expected(op: &Op, got: &DecoratedInterval) -> bool {
    let i = got.interval;
    matches!(op.oracle.as_str(), "tan" | "sec" | "csc" | "cot")
        && !i.is_empty()
        && (i.lo.is_infinite() || i.hi.is_infinite())
}

struct Tally {
    cells: usize,
    exact: usize,
    /// Weaker where [`weaker_expected`] says so.
    weaker: usize,
    failures: Vec<String>,
}

fn run(choice: BackendChoice, fmt: Fmt) -> Tally {
    let precision = match fmt {
        Fmt::F64 => Precision::F64,
        Fmt::F32 => Precision::F32,
    };
    let classes: Vec<Class> = cl::classes(fmt, cl::stride());
    let mut t = Tally {
        cells: 0,
        exact: 0,
        weaker: 0,
        failures: Vec::new(),
    };
    for op in cl::ops() {
        let expr = Expression::parse_decorated(&op.src)
            .unwrap_or_else(|e| panic!("{}: does not compile decorated: {e}", op.src));
        let eval = Evaluator::new(&expr, precision, choice).expect("evaluator");
        let cells = cl::cells(&op, &classes);
        let boxes: Vec<Vec<DecoratedInterval>> = cells
            .iter()
            .map(|(b, _)| {
                b.iter()
                    .map(|&(lo, hi)| DecoratedInterval::undecorated(ivjit::Interval { lo, hi }))
                    .collect()
            })
            .collect();
        let got = eval.eval_decorated(&boxes).expect("eval_decorated");
        // The program that decorates the variables from their bounds (bare batches), whose
        // variables carry no code where an empty box empties the output: the same answers.
        let bare = Expression::parse_with_decorations(&op.src, DecorationInputs::FromBounds)
            .unwrap_or_else(|e| panic!("{}: does not compile from the bounds: {e}", op.src));
        let bare = Evaluator::new(&bare, precision, choice).expect("evaluator");
        let from_bounds = bare.eval_decorated(&boxes).expect("eval_decorated");
        for (((b, label), row), fb) in cells.iter().zip(&got).zip(&from_bounds) {
            t.cells += 1;
            let g = row[0];
            let same = |x: &DecoratedInterval, y: &DecoratedInterval| {
                x.decoration == y.decoration
                    && x.interval.lo.to_bits() == y.interval.lo.to_bits()
                    && x.interval.hi.to_bits() == y.interval.hi.to_bits()
            };
            if !same(&g, &fb[0]) {
                t.failures.push(format!(
                    "{} on {label}: {} with given decorations, {} from the bounds",
                    op.src,
                    g.display(precision),
                    fb[0].display(precision)
                ));
                continue;
            }
            // The boxes are already of the precision (the classes are), so the oracle's
            // facts are about the very boxes evaluated.
            let want = oracle(&op, b, &g);
            if g.decoration > Decoration::of(g.interval) && g.decoration > Decoration::Trv {
                t.failures.push(format!(
                    "{} on {label}: {} claims more than its interval may carry",
                    op.src,
                    g.display(precision)
                ));
            } else if g.decoration > want {
                t.failures.push(format!(
                    "{} on {label}: {} is stronger than {want}",
                    op.src,
                    g.display(precision)
                ));
            } else if g.decoration < want && weaker_expected(&op, &g) {
                t.weaker += 1;
            } else if g.decoration < want {
                t.failures.push(format!(
                    "{} on {label}: {} is weaker than {want}",
                    op.src,
                    g.display(precision)
                ));
            } else {
                t.exact += 1;
            }
        }
    }
    t
}

fn check(choice: BackendChoice, fmt: Fmt, what: &str) {
    let t = run(choice, fmt);
    println!(
        "{what}: {} cells, {} decorations as the oracle's, {} weaker (tan's family, unbounded \
         results)",
        t.cells, t.exact, t.weaker
    );
    assert!(
        t.failures.is_empty(),
        "{what}: {} cells fail:\n{}",
        t.failures.len(),
        t.failures[..t.failures.len().min(400)].join("\n")
    );
}

#[test]
fn cpu_decorations_on_the_classes() {
    check(BackendChoice::Cpu, Fmt::F64, "CPU f64");
}

#[test]
fn cpu_decorations_on_the_classes_f32() {
    check(BackendChoice::Cpu, Fmt::F32, "CPU f32");
}

#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn gpu_decorations_on_the_classes() {
    crate::common::gpu::require_gpu("gpu_decorations_on_the_classes");
    check(BackendChoice::Gpu, Fmt::F64, "GPU f64");
    check(BackendChoice::Gpu, Fmt::F32, "GPU f32");
}
