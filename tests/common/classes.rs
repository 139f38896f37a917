//! The matrix of interval classes (issue 29): every operator and every function of
//! `ivjit functions`, each argument position, in f64 and f32, on the boxes where fast rules
//! break: entire; half-lines from and to {0, -0, +-tiny, +-1, +-huge, +-MAX}; [MAX, inf];
//! [-MAX, MAX]; two adjacent floats at the top of the range and at every binade edge; boxes of
//! many periods at huge magnitude; subnormal ends; signed zeros; points at all of these;
//! empty. Each engine's results are checked here, against one expectation per cell.
//!
//! **The oracle is a set of witnesses**, reals the box contains and the values the function
//! takes there, computed by the rigorous oracles ([`super::real_oracle::value`]: astro-float
//! with directed rounding, the float oracle's exact points), plus values the closure of the
//! range is known to hold. A result must contain every witness value; it need not be the hull
//! of the witnesses, but the distance to that hull (in steps of the precision) is reported and
//! bounded per function as the tightness check. The witnesses of a box:
//! - its finite ends, a float near its middle, and the points of {0, +-1, +-1/2, +-2} inside it;
//! - reals beyond every float for an infinite end: +-MAX (f64), +-3 * 2^1100 and +-3 * 2^(2^20)
//!   (not for trigonometric functions), where `exp`, `x * 2^-1074` or `x^31` exceed every float;
//! - +-3 * 2^-(2^20 + 2), a real below every float, where 1/x, coth, csc exceed every float;
//! - the known limits of the slowly growing functions at the box's unbounded or open ends
//!   (log at 0+ and +inf, atanh at +-1, acosh at +inf, pow at x -> 0+ with y < 0, ...), which
//!   no finite witness reaches (log(3 * 2^-(2^20)) is only -7.3e5);
//! - for sin, cos, tan, sec, csc, cot, sinpi and cospi, the multiples of pi/2 (1/2) inside the
//!   box, found from its ends and from the witnesses beyond infinite ends, with the value there
//!   (sin(k pi/2) in {0, 1, -1}) or, at a pole, the infinities on each side the box reaches.
//!   So a box between two huge floats, or up to infinity, must give [-1, 1].
//!
//! Nothing here restates ivjit's interval rules: the witnesses are reals, their values come
//! from the oracles or from the functions' mathematical limits.
#![allow(dead_code)]

use std::collections::HashMap;

use astro_float::{BigFloat, Consts, RoundingMode as RM};

use super::elem_oracle::{self as eo, bf, le, two_pow, Enc, Val};
use super::oracle::Fmt;
use super::real_oracle::{self as ro, as_f64};

/// Working precision of the first comparison (a Ziv loop raises it when undecided).
pub const P: usize = 256;

// ------------------------------------------------------------------ the classes

/// One class of interval: a label (its group first) and the bounds (NaN, NaN: empty).
#[derive(Clone, Debug)]
pub struct Class {
    pub group: &'static str,
    pub label: String,
    pub lo: f64,
    pub hi: f64,
}

/// The groups, in the order of the report's columns.
pub const GROUPS: &[&str] = &[
    "entire",
    "half-line",
    "MAX..inf",
    "-MAX..MAX",
    "top pair",
    "binade pair",
    "many periods",
    "subnormal",
    "signed zero",
    "point",
    "ordinary",
    "empty",
];

fn next_up(fmt: Fmt, x: f64) -> f64 {
    match fmt {
        Fmt::F64 => x.next_up(),
        Fmt::F32 => (x as f32).next_up() as f64,
    }
}

fn next_down(fmt: Fmt, x: f64) -> f64 {
    match fmt {
        Fmt::F64 => x.next_down(),
        Fmt::F32 => (x as f32).next_down() as f64,
    }
}

/// The precision's range constants: (MAX, smallest subnormal, smallest normal, "huge",
/// exponent range of the binades, the magnitude where floats are integers spaced by 1).
struct Range {
    max: f64,
    tiny: f64,
    min_normal: f64,
    huge: f64,
    exps: (i32, i32),
    unit_spacing: f64,
}

fn range(fmt: Fmt) -> Range {
    match fmt {
        Fmt::F64 => Range {
            max: f64::MAX,
            tiny: f64::from_bits(1),
            min_normal: f64::MIN_POSITIVE,
            huge: 2f64.powi(1000),
            exps: (-1074, 1023),
            unit_spacing: 2f64.powi(52),
        },
        Fmt::F32 => Range {
            max: f32::MAX as f64,
            tiny: f32::from_bits(1) as f64,
            min_normal: f32::MIN_POSITIVE as f64,
            huge: 2f64.powi(100),
            exps: (-149, 127),
            unit_spacing: 2f64.powi(23),
        },
    }
}

/// 2^e, subnormals included.
fn pow2(e: i32) -> f64 {
    if e >= -1022 {
        2f64.powi(e)
    } else {
        f64::from_bits(1u64 << (e + 1074))
    }
}

/// The classes of one precision. `stride` thins the binade edges (1: every binade; the
/// binades near 0, 1, the subnormal edge, the spacing 1 and the top are always in).
pub fn classes(fmt: Fmt, stride: usize) -> Vec<Class> {
    let r = range(fmt);
    let inf = f64::INFINITY;
    let mut v: Vec<Class> = Vec::new();
    let mut add = |group: &'static str, lo: f64, hi: f64| {
        let label = if lo.is_nan() {
            "[empty]".to_string()
        } else {
            format!("[{}, {}]", hx(lo), hx(hi))
        };
        v.push(Class {
            group,
            label,
            lo,
            hi,
        });
    };
    add("entire", -inf, inf);
    for a in [
        0.0, -0.0, r.tiny, -r.tiny, 1.0, -1.0, r.huge, -r.huge, r.max, -r.max,
    ] {
        if a != r.max {
            add("half-line", a, inf);
        }
        if a != -r.max {
            add("half-line", -inf, a);
        }
    }
    add("MAX..inf", r.max, inf);
    add("MAX..inf", -inf, -r.max);
    add("-MAX..MAX", -r.max, r.max);
    let below_max = next_down(fmt, r.max);
    add("top pair", below_max, r.max);
    add("top pair", -r.max, -below_max);
    add("top pair", next_down(fmt, below_max), below_max);
    // Binade edges: [prev(2^k), 2^k] and [2^k, next(2^k)], both signs.
    let (e0, e1) = r.exps;
    let always = |k: i32| {
        k <= e0 + 3
            || k >= e1 - 3
            || (-3..=3).contains(&k)
            || matches!(fmt, Fmt::F64) && (50..=54).contains(&k)
            || matches!(fmt, Fmt::F32) && (21..=25).contains(&k)
            || (k - (if matches!(fmt, Fmt::F64) { -1022 } else { -126 })).abs() <= 1
    };
    for k in e0..=e1 {
        if !((k - e0) as usize).is_multiple_of(stride) && !always(k) {
            continue;
        }
        let t = pow2(k);
        for s in [1.0, -1.0] {
            let (a, b) = (s * next_down(fmt, t), s * t);
            add("binade pair", a.min(b), a.max(b));
            if t < r.max {
                let (a, b) = (s * t, s * next_up(fmt, t));
                add("binade pair", a.min(b), a.max(b));
            }
        }
    }
    // Many periods at huge magnitude.
    let sp = r.unit_spacing;
    for (lo, hi) in [
        (sp, sp + 64.0),
        (sp - 8.0, sp + 8.0),
        (-sp - 64.0, -sp),
        (2.0 * sp, 2.0 * sp + 128.0),
        (4.0 * sp, 8.0 * sp),
        (pow2(e1), r.max),
        (-r.max, -pow2(e1)),
        (r.huge, next_up(fmt, next_up(fmt, r.huge))),
    ] {
        add("many periods", lo, hi);
    }
    // Subnormal ends.
    let t = r.tiny;
    for (lo, hi) in [
        (t, 2.0 * t),
        (-t, t),
        (t, r.min_normal),
        (-r.min_normal, -t),
        (0.0, t),
        (-t, -0.0),
        (3.0 * t, 5.0 * t),
        (next_down(fmt, r.min_normal), r.min_normal),
    ] {
        add("subnormal", lo, hi);
    }
    for (lo, hi) in [
        (-0.0, -0.0),
        (-0.0, 0.0),
        (0.0, 0.0),
        (0.0, -0.0),
        (-0.0, 1.0),
        (-1.0, -0.0),
        (-0.0, inf),
        (-inf, 0.0),
    ] {
        add("signed zero", lo, hi);
    }
    for x in [
        t,
        -t,
        r.min_normal,
        -r.min_normal,
        1.0,
        -1.0,
        0.5,
        2.0,
        r.huge,
        -r.huge,
        r.max,
        -r.max,
        below_max,
        sp + 1.0,
        -sp - 3.0,
        std::f64::consts::FRAC_PI_2,
        -3.0 * std::f64::consts::FRAC_PI_2,
    ] {
        let x = match fmt {
            Fmt::F64 => x,
            Fmt::F32 => x as f32 as f64,
        };
        add("point", x, x);
    }
    for (lo, hi) in [
        (-2.0, 3.0),
        (0.5, 4.0),
        (-5.0, -0.125),
        (1.0, 2.0),
        (-1.0, 1.0),
        (0.25, 0.75),
    ] {
        add("ordinary", lo, hi);
    }
    add("empty", f64::NAN, f64::NAN);
    v
}

/// The boxes other argument positions take while one position runs through the classes.
pub fn companions() -> Vec<(f64, f64)> {
    vec![(0.75, 0.75), (-2.0, 3.0), (0.5, 4.0), (-5.0, -0.125)]
}

pub fn hx(x: f64) -> String {
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if x == 0.0 {
        return if x.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    ivjit::internals::syntax::number::hexf64(x)
}

// ------------------------------------------------------------------ the operations

/// How the trigonometric witnesses are placed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Grid {
    None,
    /// Multiples of pi/2 (sin, cos, tan, sec, csc, cot).
    HalfPi,
    /// Multiples of 1/2 (sinpi, cospi).
    Half,
}

/// One operation of the matrix.
#[derive(Clone, Debug)]
pub struct Op {
    /// The real oracle's name (`sin`, `add`, `pown:3`, ...).
    pub oracle: String,
    /// The expression over x, y, z.
    pub src: String,
    /// The expression with `{0}`, `{1}`, `{2}` for its arguments (for programs that apply it
    /// to other variables).
    pub tmpl: String,
    pub arity: usize,
    pub grid: Grid,
    /// hull and intersect: set operations, checked exactly.
    pub set_op: bool,
    /// inf, sup, mid, ..., cancelMinus: functions of the argument's enclosure, checked exactly
    /// against `enclosure_oracle` (no real oracle: they are not functions of points).
    pub enclosure_op: bool,
    /// sqrRev, ..., mulRev: sets of points of x, checked against the inner hull of the exact
    /// set (`reverse_oracle`); the oracle name is the function's (`pownRev:N` for pownRev).
    pub reverse_op: bool,
}

/// Exponents of pown (and `x^n`) in the matrix: the special small ones, the chains, and the
/// huge ones whose overflow thresholds broke (issue 29's audit).
pub const POWN_EXPONENTS: &[i64] = &[
    -4,
    -3,
    -2,
    -1,
    0,
    1,
    2,
    3,
    4,
    5,
    8,
    15,
    31,
    (1 << 40) + 1,
    3 << 51,
    (1 << 53) - 1,
    -((1 << 53) - 1),
    3 << 61,
];

/// Arguments n of rootn in the matrix.
pub const ROOTN_EXPONENTS: &[i64] = &[
    -3,
    -2,
    -1,
    0,
    1,
    2,
    3,
    4,
    5,
    8,
    (1 << 20) + 1,
    1 << 30,
    (1 << 30) + 1,
    -(1 << 30),
    (1 << 53) - 1,
];

/// The real oracle's name of each function of the catalogue (`ivjit functions`); `None` for
/// one the matrix does not know, which fails the matrix (a function added without an oracle
/// must not drop out silently).
fn oracle_name(f: &str) -> Option<&'static str> {
    const SAME: &[&str] = &[
        "neg",
        "sqr",
        "sqrt",
        "abs",
        "min",
        "max",
        "fma",
        "recip",
        "exp",
        "exp2",
        "exp10",
        "expm1",
        "log",
        "log2",
        "log10",
        "log1p",
        "sin",
        "cos",
        "tan",
        "asin",
        "acos",
        "atan",
        "sinh",
        "cosh",
        "tanh",
        "asinh",
        "acosh",
        "atanh",
        "cbrt",
        "sinpi",
        "cospi",
        "erf",
        "erfc",
        "atan2",
        "pow",
        "hypot",
        "sec",
        "csc",
        "cot",
        "acot",
        "sech",
        "csch",
        "coth",
        "acoth",
        "asech",
        "acsch",
        "floor",
        "ceil",
        "trunc",
        "round",
        "rint",
        "sign",
        "hull",
        "intersect",
    ];
    SAME.iter().find(|s| **s == f).copied()
}

fn grid_of(f: &str) -> Grid {
    match f {
        "sin" | "cos" | "tan" | "sec" | "csc" | "cot" => Grid::HalfPi,
        "sinpi" | "cospi" => Grid::Half,
        _ => Grid::None,
    }
}

/// Every operator and function, from the catalogue; panics on a function without an oracle.
pub fn ops() -> Vec<Op> {
    let mut v = Vec::new();
    let vars = ["x", "y", "z"];
    for info in ivjit::internals::ir::functions::FUNCTIONS.iter() {
        match info.name {
            "pown" => {
                for &n in POWN_EXPONENTS {
                    v.push(Op {
                        oracle: format!("pown:{n}"),
                        src: format!("pown(x, {n})"),
                        tmpl: format!("pown({{0}}, {n})"),
                        arity: 1,
                        grid: Grid::None,
                        set_op: false,
                        enclosure_op: false,
                        reverse_op: false,
                    });
                }
            }
            "rootn" => {
                for &n in ROOTN_EXPONENTS {
                    v.push(Op {
                        oracle: format!("rootn:{n}"),
                        src: format!("rootn(x, {n})"),
                        tmpl: format!("rootn({{0}}, {n})"),
                        arity: 1,
                        grid: Grid::None,
                        set_op: false,
                        enclosure_op: false,
                        reverse_op: false,
                    });
                }
            }
            "pownRev" => {
                for &n in super::reverse_oracle::POWN_EXPONENTS {
                    v.push(Op {
                        oracle: format!("pownRev:{n}"),
                        src: format!("pownRev(x, y, {n})"),
                        tmpl: format!("pownRev({{0}}, {{1}}, {n})"),
                        arity: 2,
                        grid: Grid::None,
                        set_op: false,
                        enclosure_op: false,
                        reverse_op: true,
                    });
                }
            }
            name => {
                let enclosure_op = super::enclosure_oracle::is_enclosure_op(name);
                let reverse_op = super::reverse_oracle::is_reverse_op(name);
                let oracle = oracle_name(name)
                    .or((enclosure_op || reverse_op).then_some(name))
                    .unwrap_or_else(|| {
                        panic!("the class matrix has no oracle for `{name}`: add it to oracle_name")
                    });
                let args = vars[..info.arity].join(", ");
                let slots = ["{0}", "{1}", "{2}"][..info.arity].join(", ");
                v.push(Op {
                    oracle: oracle.to_string(),
                    src: format!("{name}({args})"),
                    tmpl: format!("{name}({slots})"),
                    arity: info.arity,
                    grid: grid_of(name),
                    set_op: matches!(name, "hull" | "intersect"),
                    enclosure_op,
                    reverse_op,
                });
            }
        }
    }
    // The operators.
    for (oracle, tmpl, arity) in [
        ("add", "{0} + {1}", 2),
        ("sub", "{0} - {1}", 2),
        ("mul", "{0} * {1}", 2),
        ("div", "{0} / {1}", 2),
        ("neg", "-{0}", 1),
        ("pown:3", "{0}^3", 1),
        ("pown:-2", "{0}^-2", 1),
        ("sqrt", "{0}^0.5", 1),
        ("pow", "{0}^{1}", 2),
    ] {
        v.push(Op {
            oracle: oracle.to_string(),
            src: apply(tmpl, &vars),
            tmpl: tmpl.to_string(),
            arity,
            grid: Grid::None,
            set_op: false,
            enclosure_op: false,
            reverse_op: false,
        });
    }
    v
}

/// A template with its slots filled by `args`.
pub fn apply(tmpl: &str, args: &[&str]) -> String {
    let mut s = tmpl.to_string();
    for (i, a) in args.iter().enumerate() {
        s = s.replace(&format!("{{{i}}}"), a);
    }
    s
}

/// The cells of one operation: each argument position in turn runs through the classes while
/// the others take the companions; binary operations also take every pair of the classes
/// outside the binade and point groups. Each cell: its boxes and a label.
pub fn cells(op: &Op, classes: &[Class]) -> Vec<(Vec<(f64, f64)>, String)> {
    let mut out = Vec::new();
    let comps = companions();
    for pos in 0..op.arity {
        for c in classes {
            if op.arity == 1 {
                out.push((vec![(c.lo, c.hi)], c.label.clone()));
                continue;
            }
            for k in &comps {
                let mut b = vec![*k; op.arity];
                b[pos] = (c.lo, c.hi);
                let label = (0..op.arity)
                    .map(|i| {
                        if i == pos {
                            c.label.clone()
                        } else {
                            format!("[{}, {}]", hx(k.0), hx(k.1))
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(" x ");
                out.push((b, label));
            }
        }
    }
    if op.arity == 2 {
        let core: Vec<&Class> = classes
            .iter()
            .filter(|c| !matches!(c.group, "binade pair" | "point"))
            .collect();
        for a in &core {
            for b in &core {
                out.push((
                    vec![(a.lo, a.hi), (b.lo, b.hi)],
                    format!("{} x {}", a.label, b.label),
                ));
            }
        }
    }
    out
}

/// The group of a cell's class (the position under test; pairs count as their first class).
pub fn group_of(classes: &[Class], label: &str) -> &'static str {
    let first = label.split(" x ").next().unwrap_or(label);
    classes
        .iter()
        .find(|c| c.label == first)
        .or_else(|| {
            // A companion first: the class is the first part that is a class.
            label
                .split(" x ")
                .find_map(|part| classes.iter().find(|c| c.label == part))
        })
        .map(|c| c.group)
        .unwrap_or("ordinary")
}

// ------------------------------------------------------------------ the witnesses

/// One witness of a cell: a point of the box (a real per argument), or a value the closure of
/// the range is known to hold.
#[derive(Clone)]
pub enum Witness {
    /// The point and its memo key.
    At(Vec<BigFloat>, Vec<u64>),
    Value(BigFloat, &'static str),
}

fn exp_big(e: i32, mult: u64) -> BigFloat {
    let mut b = BigFloat::from_u64(mult, 64);
    let be = b.exponent().unwrap();
    b.set_exponent(be + e);
    b
}

/// 3 * 2^1100.
fn huge_real() -> BigFloat {
    exp_big(1100, 3)
}

/// 3 * 2^(2^20).
fn big_real() -> BigFloat {
    exp_big(1 << 20, 3)
}

/// 3 * 2^-(2^20 + 2): below every float.
fn small_real() -> BigFloat {
    exp_big(-(1 << 20) - 2, 3)
}

fn inside(x: &BigFloat, lo: f64, hi: f64) -> bool {
    le(&bf(lo), x) && le(x, &bf(hi))
}

/// The points of one argument's box.
pub fn points(lo: f64, hi: f64, grid: Grid) -> Vec<BigFloat> {
    if lo.is_nan() {
        return vec![];
    }
    let mut v: Vec<BigFloat> = Vec::new();
    for e in [lo, hi] {
        if e.is_finite() {
            v.push(bf(e));
        }
    }
    // Beyond every float: MAX, MAX + 1/2 and MAX + 1 (reals, not floats: sinpi is 1 and cospi
    // -1 there), 3 * 2^1100 and (not for the periodic functions) 3 * 2^(2^20).
    let max = bf(f64::MAX);
    let mut beyond = vec![
        max.clone(),
        max.add(&two_pow(-1), 1100, RM::None),
        max.add(&bf(1.0), 1100, RM::None),
        huge_real(),
    ];
    if grid == Grid::None {
        beyond.push(big_real());
    }
    if hi == f64::INFINITY {
        v.extend(beyond.iter().cloned());
    }
    if lo == f64::NEG_INFINITY {
        v.extend(beyond.iter().map(|b| b.neg()));
    }
    for c in [0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0] {
        if lo <= c && c <= hi {
            v.push(bf(c));
        }
    }
    let s = small_real();
    for x in [s.clone(), s.neg()] {
        if inside(&x, lo, hi) {
            v.push(x);
        }
    }
    if lo.is_finite() && hi.is_finite() && lo < hi {
        let mid = lo / 2.0 + hi / 2.0;
        if lo < mid && mid < hi {
            v.push(bf(mid));
        }
    }
    // Between two huge floats: the reals lo + 1/2 and lo + 1, where floats are integers (a
    // box of two adjacent floats there holds many of them).
    if lo.is_finite() && lo.abs() >= 2f64.powi(52) && lo < hi {
        for d in [two_pow(-1), bf(1.0)] {
            let x = bf(lo).add(&d, 1100, RM::None);
            if inside(&x, lo, hi) {
                v.push(x);
            }
        }
    }
    v
}

/// A box's witness points with their memo keys.
type Keyed = std::rc::Rc<Vec<(BigFloat, Vec<u64>)>>;

thread_local! {
    static POINTS: std::cell::RefCell<HashMap<(u64, u64, u8), Keyed>> =
        std::cell::RefCell::new(HashMap::new());
}

/// [`points`] with their memo keys, computed once per box (the classes repeat in many cells).
fn keyed_points(lo: f64, hi: f64, grid: Grid) -> Keyed {
    let k = (lo.to_bits(), hi.to_bits(), grid as u8);
    if let Some(v) = POINTS.with(|m| m.borrow().get(&k).cloned()) {
        return v;
    }
    let v: Keyed = std::rc::Rc::new(
        points(lo, hi, grid)
            .into_iter()
            .map(|b| {
                let key = key(&b);
                (b, key)
            })
            .collect(),
    );
    POINTS.with(|m| m.borrow_mut().insert(k, v.clone()));
    v
}

/// Where a function's slow limits are: at an unbounded end, or approached from above (below)
/// a finite point.
#[derive(Clone, Copy)]
enum Edge {
    PlusInf,
    MinusInf,
    Above(f64),
    Below(f64),
}

fn reaches(e: Edge, lo: f64, hi: f64) -> bool {
    if lo.is_nan() {
        return false;
    }
    match e {
        Edge::PlusInf => hi == f64::INFINITY,
        Edge::MinusInf => lo == f64::NEG_INFINITY,
        Edge::Above(c) => lo <= c && c < hi,
        Edge::Below(c) => lo < c && c <= hi,
    }
}

/// The infinite limits of the functions that no finite witness shows (they grow like a
/// logarithm, or like a root of high order).
fn slow_limits(oracle: &str) -> Vec<(Edge, f64)> {
    use Edge::*;
    let inf = f64::INFINITY;
    if let Some(("rootn", n)) = oracle.split_once(':') {
        let n: i64 = n.parse().unwrap();
        let odd = n % 2 != 0;
        let mut v = Vec::new();
        if n > 0 {
            v.push((PlusInf, inf));
            if odd {
                v.push((MinusInf, -inf));
            }
        } else if n < 0 {
            v.push((Above(0.0), inf));
            v.push((PlusInf, 0.0));
            if odd {
                v.push((Below(0.0), -inf));
                v.push((MinusInf, 0.0));
            }
        }
        return v;
    }
    match oracle {
        "log" | "log2" | "log10" => vec![(Above(0.0), -inf), (PlusInf, inf)],
        "log1p" => vec![(Above(-1.0), -inf), (PlusInf, inf)],
        "asinh" => vec![(MinusInf, -inf), (PlusInf, inf)],
        "acosh" => vec![(PlusInf, inf)],
        "atanh" => vec![(Above(-1.0), -inf), (Below(1.0), inf)],
        "acoth" => vec![(Below(-1.0), -inf), (Above(1.0), inf)],
        "asech" => vec![(Above(0.0), inf)],
        "acsch" => vec![(Below(0.0), -inf), (Above(0.0), inf)],
        "sqrt" | "cbrt" => {
            let mut v = vec![(PlusInf, inf)];
            if oracle == "cbrt" {
                v.push((MinusInf, -inf));
            }
            v
        }
        _ => vec![],
    }
}

/// pow's limits at the corners of its domain: x -> 0+ with y < 0 gives +inf, x -> +inf with
/// y > 0 gives +inf and with y < 0 gives 0.
fn pow_limits(x: (f64, f64), y: (f64, f64)) -> Vec<f64> {
    let mut v = Vec::new();
    if x.0.is_nan() || y.0.is_nan() {
        return v;
    }
    let to_zero = x.0 <= 0.0 && 0.0 < x.1;
    let to_inf = x.1 == f64::INFINITY;
    if to_zero && y.0 < 0.0 {
        v.push(f64::INFINITY);
    }
    if to_inf && y.1 > 0.0 {
        v.push(f64::INFINITY);
    }
    if to_inf && y.0 < 0.0 {
        v.push(0.0);
    }
    v
}

thread_local! {
    static CC: std::cell::RefCell<Consts> = std::cell::RefCell::new(Consts::new().unwrap());
}

/// An enclosure of k * q (q = pi/2, or 1/2 exactly).
fn grid_point(k: &BigFloat, grid: Grid) -> Enc {
    match grid {
        Grid::Half => {
            let mut g = k.clone();
            if !g.is_zero() {
                g.set_exponent(g.exponent().unwrap() - 1);
            }
            Enc::point(g)
        }
        _ => {
            let bits = 256 + k.exponent().unwrap_or(0).max(0) as usize + 64;
            let (pl, ph) = CC.with(|c| {
                let mut c = c.borrow_mut();
                (c.pi(bits, RM::Down), c.pi(bits, RM::Up))
            });
            let (mut a, mut b) = (k.mul(&pl, bits, RM::Down), k.mul(&ph, bits, RM::Up));
            if k.is_negative() {
                std::mem::swap(&mut a, &mut b);
            }
            for g in [&mut a, &mut b] {
                if !g.is_zero() {
                    g.set_exponent(g.exponent().unwrap() - 1);
                }
            }
            Enc { lo: a, hi: b }
        }
    }
}

/// k mod 4 of an integer big float.
fn mod4(k: &BigFloat) -> u32 {
    let mut q = k.clone();
    if !q.is_zero() {
        q.set_exponent(q.exponent().unwrap() - 2);
    }
    let f = q.floor();
    let mut f4 = f.clone();
    if !f4.is_zero() {
        f4.set_exponent(f4.exponent().unwrap() + 2);
    }
    let bits = k.mantissa_max_bit_len().unwrap_or(64) + 8;
    let m = k.sub(&f4, bits, RM::None);
    (0..4u32)
        .find(|i| eo::cmp(&m, &BigFloat::from_u64(*i as u64, 64)).is_eq())
        .expect("k mod 4")
}

/// What f is at k q: a value, or a pole with the limits from the left and from the right.
enum AtGrid {
    Value(f64),
    Pole(f64, f64),
}

fn at_grid(f: &str, k4: u32) -> Option<AtGrid> {
    use AtGrid::*;
    let inf = f64::INFINITY;
    let sin = [0.0, 1.0, 0.0, -1.0][k4 as usize];
    let cos = [1.0, 0.0, -1.0, 0.0][k4 as usize];
    Some(match f {
        "sin" | "sinpi" => Value(sin),
        "cos" | "cospi" => Value(cos),
        "tan" if k4.is_multiple_of(2) => Value(0.0),
        "tan" => Pole(inf, -inf),
        "sec" => match k4 {
            0 => Value(1.0),
            2 => Value(-1.0),
            1 => Pole(inf, -inf),
            _ => Pole(-inf, inf),
        },
        "csc" => match k4 {
            1 => Value(1.0),
            3 => Value(-1.0),
            0 => Pole(-inf, inf),
            _ => Pole(inf, -inf),
        },
        "cot" if k4 % 2 == 1 => Value(0.0),
        "cot" => Pole(-inf, inf),
        _ => return None,
    })
}

/// The grid witnesses of a box: from each anchor (the finite ends, and the reals beyond an
/// infinite end), the multiples k q with k within 5 of the anchor's, that the box holds.
fn grid_witnesses(f: &str, grid: Grid, lo: f64, hi: f64) -> Vec<Witness> {
    if grid == Grid::None || lo.is_nan() {
        return vec![];
    }
    let mut anchors: Vec<BigFloat> = Vec::new();
    for e in [lo, hi] {
        if e.is_finite() {
            anchors.push(bf(e));
        }
    }
    for b in [bf(f64::MAX), huge_real(), bf(0.0)] {
        if hi == f64::INFINITY {
            anchors.push(b.clone());
        }
        if lo == f64::NEG_INFINITY {
            anchors.push(b.neg());
        }
    }
    let mut seen: Vec<BigFloat> = Vec::new();
    let mut out = Vec::new();
    for a in anchors {
        // k0 ~ a / q
        // q to the anchor's magnitude plus 128 bits, so that k0 is within one of a / q.
        let bits = 128 + a.exponent().unwrap_or(0).max(0) as usize;
        let q = match grid {
            Grid::Half => two_pow(-1),
            _ => {
                let mut pi = CC.with(|c| c.borrow_mut().pi(bits, RM::ToEven));
                pi.set_exponent(pi.exponent().unwrap() - 1);
                pi
            }
        };
        let k0 = a.div(&q, bits, RM::ToEven).floor();
        for j in -5i64..=5 {
            let k = k0.add(&BigFloat::from_i64(j, 64), bits + 8, RM::None);
            if seen.iter().any(|s| eo::cmp(s, &k).is_eq()) {
                continue;
            }
            seen.push(k.clone());
            let g = grid_point(&k, grid);
            // The box holds k q when its ends hold the enclosure; a pole is approached from
            // the left when the box starts below k q, from the right when it ends above.
            let holds = le(&bf(lo), &g.lo) && le(&g.hi, &bf(hi));
            let left = holds && !le(&g.lo, &bf(lo));
            let right = holds && !le(&bf(hi), &g.hi);
            if !holds {
                continue;
            }
            match at_grid(f, mod4(&k)) {
                Some(AtGrid::Value(v)) => out.push(Witness::Value(bf(v), "k q")),
                Some(AtGrid::Pole(l, r)) => {
                    if left {
                        out.push(Witness::Value(bf(l), "pole from the left"));
                    }
                    if right {
                        out.push(Witness::Value(bf(r), "pole from the right"));
                    }
                }
                None => {}
            }
        }
    }
    out
}

/// Every witness of a cell (see the module comment).
pub fn witnesses(op: &Op, boxes: &[(f64, f64)]) -> Vec<Witness> {
    let mut out = Vec::new();
    let per: Vec<Keyed> = boxes
        .iter()
        .map(|&(lo, hi)| keyed_points(lo, hi, op.grid))
        .collect();
    // The cartesian product of the points.
    let mut idx = vec![0usize; per.len()];
    if per.iter().all(|p| !p.is_empty()) {
        loop {
            let mut k: Vec<u64> = Vec::new();
            let mut args = Vec::with_capacity(idx.len());
            for (i, &j) in idx.iter().enumerate() {
                args.push(per[i][j].0.clone());
                k.extend_from_slice(&per[i][j].1);
                k.push(u64::MAX); // separator
            }
            out.push(Witness::At(args, k));
            let mut d = 0;
            loop {
                if d == idx.len() {
                    break;
                }
                idx[d] += 1;
                if idx[d] < per[d].len() {
                    break;
                }
                idx[d] = 0;
                d += 1;
            }
            if d == idx.len() {
                break;
            }
        }
    }
    if op.arity == 1 {
        let (lo, hi) = boxes[0];
        for (e, v) in slow_limits(&op.oracle) {
            if reaches(e, lo, hi) {
                out.push(Witness::Value(bf(v), "limit"));
            }
        }
        out.extend(grid_witnesses(&op.oracle, op.grid, lo, hi));
    }
    if op.oracle == "pow" {
        for v in pow_limits(boxes[0], boxes[1]) {
            out.push(Witness::Value(bf(v), "limit"));
        }
    }
    out
}

// ------------------------------------------------------------------ the check

/// A cell's expectation, summarized so that checking an engine's result costs four float
/// comparisons: with H the hull of the witness enclosures and G the hull of their inner ends
/// (the smallest upper and the largest lower end), a result holds every witness when
/// `lo <= H.lo` and `hi >= H.hi`, and certainly misses one when `lo > G.lo` or `hi < G.hi`;
/// otherwise the witnesses near a bound are refined (a Ziv loop, then exact checks).
pub struct Expected {
    /// RD(H.lo), RU(H.hi) in f64 (exact comparisons with float bounds), `None`: no witness.
    pub hull: Option<(f64, f64)>,
    /// RD(G.lo), RU(G.hi).
    pub inner: (f64, f64),
    /// The witnesses with their points, for the refinement.
    pub values: Vec<(Option<Vec<BigFloat>>, Enc, &'static str)>,
    pub any_empty: bool,
}

/// A memo of oracle values per operation (the classes share many points).
#[derive(Default)]
pub struct Memo(HashMap<Vec<u64>, Option<Enc>>);

pub fn key(x: &BigFloat) -> Vec<u64> {
    if let Some(f) = as_f64(x) {
        return vec![0, f.to_bits()];
    }
    let (words, _, sign, e, _) = x.as_raw_parts().expect("a number");
    let mut k = vec![1, sign.to_int() as u64, e as u64];
    let mut w: Vec<u64> = words.to_vec();
    while w.first() == Some(&0) {
        w.remove(0);
    }
    k.extend(w);
    k
}

pub fn expect(op: &Op, boxes: &[(f64, f64)], memo: &mut Memo) -> Expected {
    let any_empty = boxes.iter().any(|b| b.0.is_nan());
    let mut values = Vec::new();
    if !any_empty && !op.set_op && !op.enclosure_op && !op.reverse_op {
        for w in witnesses(op, boxes) {
            match w {
                Witness::At(args, k) => {
                    let v = memo
                        .0
                        .entry(k)
                        .or_insert_with(|| match ro::value(&op.oracle, &args, P) {
                            Val::In(e) => Some(e),
                            Val::Out => None,
                        })
                        .clone();
                    if let Some(e) = v {
                        values.push((Some(args), e, "point"));
                    }
                }
                Witness::Value(v, why) => values.push((None, Enc::point(v), why)),
            }
        }
    }
    let mut hull: Option<(BigFloat, BigFloat, BigFloat, BigFloat)> = None;
    for (_, e, _) in &values {
        hull = Some(match hull {
            None => (e.lo.clone(), e.hi.clone(), e.hi.clone(), e.lo.clone()),
            Some((a, b, c, d)) => (
                eo::min_b(a, e.lo.clone()),
                eo::max_b(b, e.hi.clone()),
                eo::min_b(c, e.hi.clone()),
                eo::max_b(d, e.lo.clone()),
            ),
        });
    }
    let (hull, inner) = match hull {
        None => (None, (f64::INFINITY, f64::NEG_INFINITY)),
        Some((a, b, c, d)) => (
            Some((eo::round_down(&a), eo::round_up(&b))),
            (eo::round_down(&c), eo::round_up(&d)),
        ),
    };
    Expected {
        hull,
        inner,
        values,
        any_empty,
    }
}

/// Steps of the precision from `a` up to `b` (0 when b <= a); the infinities count as one
/// step beyond the largest finite values.
pub fn steps(fmt: Fmt, a: f64, b: f64) -> u64 {
    if a.partial_cmp(&b) != Some(std::cmp::Ordering::Less) {
        return 0;
    }
    let ord = |x: f64| -> i64 {
        match fmt {
            Fmt::F64 => {
                let i = x.to_bits() as i64;
                if x.is_sign_negative() {
                    -(i & i64::MAX)
                } else {
                    i
                }
            }
            Fmt::F32 => {
                let i = (x as f32).to_bits() as i64;
                if x.is_sign_negative() {
                    -(i & 0x7fff_ffff)
                } else {
                    i
                }
            }
        }
    };
    (ord(b) as i128 - ord(a) as i128) as u64
}

/// An f64 rounded down (up) to the precision.
fn to_fmt(fmt: Fmt, d: f64, down: bool) -> f64 {
    match fmt {
        Fmt::F64 => d,
        Fmt::F32 => {
            let f = d as f32;
            let f = if down && (f as f64) > d {
                f.next_down()
            } else if !down && (f as f64) < d {
                f.next_up()
            } else {
                f
            };
            f as f64
        }
    }
}

/// The verdict on one engine's result for one cell.
pub struct Verdict {
    /// Why the result is wrong (containment, validity, emptiness), if it is.
    pub failure: Option<String>,
    /// Steps outside the witnesses' hull rounded outward to the precision, per bound (None:
    /// no witness in the domain).
    pub slack: Option<(u64, u64)>,
}

/// Checks `got` against the expectation. `got` is empty when both bounds are NaN.
/// A reverse operation's result must hold the inner hull of the exact set (`reverse_oracle`);
/// an empty argument gives the empty set.
fn check_reverse_op(op: &Op, boxes: &[(f64, f64)], got: (f64, f64), ok: Verdict) -> Verdict {
    let empty = got.0.is_nan();
    if boxes.iter().any(|b| b.0.is_nan()) {
        return if empty {
            ok
        } else {
            Verdict {
                failure: Some("an empty argument must give the empty set".into()),
                slack: None,
            }
        };
    }
    let (name, n) = match op.oracle.split_once(':') {
        Some((name, n)) => (name, n.parse().expect("an exponent")),
        None => (op.oracle.as_str(), 0),
    };
    match super::reverse_oracle::inner(name, n, boxes) {
        Some(s) if !super::reverse_oracle::holds(got, &s) => Verdict {
            failure: Some(format!(
                "[{}, {}] misses points of the exact set, which holds {}",
                hx(got.0),
                hx(got.1),
                super::reverse_oracle::describe(&s)
            )),
            slack: None,
        },
        _ => ok,
    }
}

pub fn check(op: &Op, boxes: &[(f64, f64)], exp: &Expected, got: (f64, f64), fmt: Fmt) -> Verdict {
    let (lo, hi) = got;
    let fail = |why: String| Verdict {
        failure: Some(why),
        slack: None,
    };
    let empty = lo.is_nan() && hi.is_nan();
    if lo.is_nan() != hi.is_nan() {
        return fail(format!("half-NaN result [{lo}, {hi}]"));
    }
    if !empty && (lo > hi || lo == f64::INFINITY || hi == f64::NEG_INFINITY) {
        return fail(format!("not an interval: [{lo}, {hi}]"));
    }
    if fmt == Fmt::F32 && !empty {
        for b in [lo, hi] {
            if !b.is_infinite() && b as f32 as f64 != b {
                return fail(format!("bound {b:e} is not an f32 value"));
            }
        }
    }
    if op.set_op {
        return check_set_op(op, boxes, got);
    }
    if op.enclosure_op {
        let want = super::enclosure_oracle::expected(&op.oracle, boxes, fmt);
        let ok = super::enclosure_oracle::same(want, got);
        return Verdict {
            failure: (!ok).then(|| format!("the function of the enclosure should give {want:?}")),
            slack: Some((0, 0)),
        };
    }
    let ok = Verdict {
        failure: None,
        slack: None,
    };
    if op.reverse_op {
        return check_reverse_op(op, boxes, got, ok);
    }
    if exp.any_empty {
        return if empty {
            ok
        } else {
            fail("an empty argument must give the empty set".into())
        };
    }
    let Some((h_lo, h_hi)) = exp.hull else {
        return ok; // no witness in the domain: any result holds the (empty) set of values
    };
    if empty {
        return fail(format!(
            "empty, but the box holds values in [{}, {}]",
            hx(h_lo),
            hx(h_hi)
        ));
    }
    let contained = lo <= h_lo && hi >= h_hi;
    if !contained {
        if lo > exp.inner.0 || hi < exp.inner.1 {
            return fail(miss(op, lo, hi, exp));
        }
        // Near a bound: refine the witnesses that straddle it.
        for (args, e, why) in &exp.values {
            if decide(lo, hi, e) == Some(true) {
                continue;
            }
            let mut verdict = decide(lo, hi, e);
            let mut e = e.clone();
            if std::env::var_os("IVJIT_CLASSES_TRACE").is_some() {
                eprintln!(
                    "refine {} at {:?}: [{lo}, {hi}] vs {}",
                    op.src,
                    args.as_deref().map(describe_args),
                    e.describe()
                );
            }
            if let Some(a) = args {
                for p in [768, 2048, 4096] {
                    if verdict.is_some() {
                        break;
                    }
                    if let Val::In(e2) = ro::value(&op.oracle, a, p) {
                        e = e2;
                    }
                    verdict = decide(lo, hi, &e);
                }
                if verdict.is_none()
                    && (ro::is_exact(&op.oracle, a, lo) || ro::is_exact(&op.oracle, a, hi))
                {
                    verdict = Some(true);
                }
            }
            match verdict {
                Some(true) => {}
                Some(false) => return fail(miss_one(&e, why, args.as_deref())),
                None => {
                    return fail(format!(
                        "undecided against {} ({why}): the oracle cannot separate it",
                        e.describe()
                    ))
                }
            }
        }
    }
    let (t_lo, t_hi) = (to_fmt(fmt, h_lo, true), to_fmt(fmt, h_hi, false));
    // An infinite bound more than a few steps beyond the witnesses' hull: unbounded slack
    // (MAX stepped outward is one step to infinity, which counts as one).
    let unbounded = |b: f64, st: u64| {
        if b.is_infinite() && st > 16 {
            u64::MAX
        } else {
            st
        }
    };
    let s_lo = unbounded(lo, steps(fmt, lo, t_lo));
    let s_hi = unbounded(hi, steps(fmt, t_hi, hi));
    Verdict {
        failure: None,
        slack: Some((s_lo, s_hi)),
    }
}

fn miss(op: &Op, lo: f64, hi: f64, exp: &Expected) -> String {
    for (args, e, why) in &exp.values {
        if decide(lo, hi, e) == Some(false) {
            return miss_one(e, why, args.as_deref());
        }
    }
    format!("{}: misses a witness", op.src)
}

fn miss_one(e: &Enc, why: &str, args: Option<&[BigFloat]>) -> String {
    format!(
        "misses the value {} ({why}{})",
        e.describe(),
        args.map(|a| format!(" at {}", describe_args(a)))
            .unwrap_or_default()
    )
}

/// Some(true): [lo, hi] holds the enclosure; Some(false): certainly misses the value (a
/// float is below a big float b exactly when it is below RD(b)).
pub fn decide(lo: f64, hi: f64, e: &Enc) -> Option<bool> {
    if lo <= eo::round_down(&e.lo) && hi >= eo::round_up(&e.hi) {
        return Some(true);
    }
    if lo > eo::round_down(&e.hi) || hi < eo::round_up(&e.lo) {
        return Some(false);
    }
    None
}

fn describe_args(a: &[BigFloat]) -> String {
    a.iter()
        .map(|x| match as_f64(x) {
            Some(f) => hx(f),
            None => {
                let e = x.exponent().unwrap_or(0);
                format!("(a real near 2^{e})")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// hull and intersect on sets: exactly the convex hull of the union, and the intersection.
fn check_set_op(op: &Op, boxes: &[(f64, f64)], got: (f64, f64)) -> Verdict {
    let (a, b) = (boxes[0], boxes[1]);
    let ea = a.0.is_nan();
    let eb = b.0.is_nan();
    let want: Option<(f64, f64)> = if op.oracle == "hull" {
        match (ea, eb) {
            (true, true) => None,
            (true, false) => Some(b),
            (false, true) => Some(a),
            _ => Some((a.0.min(b.0), a.1.max(b.1))),
        }
    } else if ea || eb {
        None
    } else {
        let (l, h) = (a.0.max(b.0), a.1.min(b.1));
        if l <= h {
            Some((l, h))
        } else {
            None
        }
    };
    let ok = match want {
        None => got.0.is_nan() && got.1.is_nan(),
        Some((l, h)) => got.0 == l && got.1 == h,
    };
    Verdict {
        failure: (!ok).then(|| format!("the set operation should give {want:?}")),
        slack: Some((0, 0)),
    }
}

// ------------------------------------------------------------------ running an engine

/// A structure-of-arrays batch of the cells (the layout of `Evaluator::eval_soa`).
pub fn soa(cells: &[(Vec<(f64, f64)>, String)], arity: usize) -> Vec<f64> {
    let n = cells.len();
    let mut v = vec![0.0; 2 * arity * n];
    for (i, (b, _)) in cells.iter().enumerate() {
        for (k, (l, h)) in b.iter().enumerate() {
            v[2 * k * n + i] = *l;
            v[(2 * k + 1) * n + i] = *h;
        }
    }
    v
}

/// Per-cell pairs out of an `eval_soa` result with one output.
pub fn unpack(out: &[f64], n: usize) -> Vec<(f64, f64)> {
    (0..n).map(|i| (out[i], out[n + i])).collect()
}

/// What one engine gave on one operation: failures (with their cells) and the worst slack.
#[derive(Default, Clone)]
pub struct Tally {
    pub cells: usize,
    pub failures: Vec<String>,
    /// Per group: cells, failures, the largest slack (steps) of either bound among the cells
    /// with a finite one, and the count of cells with an unbounded slack (an infinite bound
    /// where the witnesses' hull is finite).
    pub groups: HashMap<&'static str, (usize, usize, u64, usize)>,
    pub max_slack: u64,
    /// The cell of the largest slack.
    pub worst: String,
    /// The first cells with an unbounded slack.
    pub unbounded: Vec<String>,
    /// Cells where a derivative was checked against difference quotients (gradient).
    pub quotients: usize,
}

impl Tally {
    pub fn add(&mut self, group: &'static str, what: &str, v: &Verdict) {
        self.cells += 1;
        let g = self.groups.entry(group).or_insert((0, 0, 0, 0));
        g.0 += 1;
        if let Some(f) = &v.failure {
            g.1 += 1;
            if self.failures.len() < 20 {
                self.failures.push(format!("{what}: {f}"));
            }
        }
        if let Some((a, b)) = v.slack {
            let m = a.max(b);
            if m == u64::MAX {
                g.3 += 1;
                if self.unbounded.len() < 8 {
                    self.unbounded.push(what.to_string());
                }
            } else {
                g.2 = g.2.max(m);
                if m > self.max_slack || self.worst.is_empty() {
                    self.worst = what.to_string();
                }
                self.max_slack = self.max_slack.max(m);
            }
        }
    }
}

/// Checks one engine's results on the cells of one operation. `slack_for(boxes)` says whether
/// the cell's tightness is tallied.
#[allow(clippy::too_many_arguments)]
pub fn tally(
    op: &Op,
    fmt: Fmt,
    engine: &str,
    classes: &[Class],
    cells: &[(Vec<(f64, f64)>, String)],
    expected: &[&Expected],
    results: &[(f64, f64)],
    slack_for: impl Fn(&[(f64, f64)]) -> bool,
) -> Tally {
    let mut t = Tally::default();
    for (((b, label), e), r) in cells.iter().zip(expected).zip(results) {
        let mut v = check(op, b, e, *r, fmt);
        if !slack_for(b) {
            v.slack = None;
        }
        let what = format!(
            "{} ({fmt:?}, {engine}) on {label}: got [{}, {}]",
            op.src,
            hx(r.0),
            hx(r.1)
        );
        t.add(group_of(classes, label), &what, &v);
    }
    t
}

/// The class x operation table (Markdown): per group, the cells, the largest slack in steps
/// of the precision, the cells with an unbounded slack and the failures.
pub fn report(rows: &[(String, Fmt, &Tally)]) -> String {
    let mut s = String::new();
    s.push_str("| expression | precision |");
    for g in GROUPS {
        s.push_str(&format!(" {g} |"));
    }
    s.push_str(" max slack |\n|---|---|");
    for _ in GROUPS {
        s.push_str("--:|");
    }
    s.push_str("--:|\n");
    for (name, fmt, t) in rows {
        s.push_str(&format!("| `{name}` | {fmt:?} |"));
        for g in GROUPS {
            match t.groups.get(g) {
                None => s.push_str(" - |"),
                Some((n, f, m, unb)) => {
                    let fail = if *f > 0 {
                        format!(" **{f} FAIL**")
                    } else {
                        String::new()
                    };
                    let unb = if *unb > 0 {
                        format!(" ({unb} inf)")
                    } else {
                        String::new()
                    };
                    s.push_str(&format!(" {n}: {m}{unb}{fail} |"));
                }
            }
        }
        s.push_str(&format!(" {} |\n", t.max_slack));
    }
    s
}

/// Where a trigonometric function's tightness is not asserted: boxes beyond 2^51 (f64) or
/// 2^22 (f32) in magnitude, where the quarter-period indices (2x / pi, 2x) pass 2^53 (2^24)
/// and are no longer exact, so the extremum tests answer "may be inside" (module comment of
/// `src/lower/elementary.rs`): sin on [2^54 - 2, 2^54] gives [-1, 1]. Containment is checked
/// there like everywhere.
pub fn trig_index_inexact(op: &Op, fmt: Fmt, boxes: &[(f64, f64)]) -> bool {
    let limit = match fmt {
        Fmt::F64 => 2f64.powi(51),
        Fmt::F32 => 2f64.powi(22),
    };
    op.grid != Grid::None && boxes.iter().any(|b| b.0.abs().max(b.1.abs()) >= limit)
}

/// The binade stride of the matrix: `IVJIT_CLASSES_STRIDE` (1: every binade edge), else 16.
pub fn stride() -> usize {
    std::env::var("IVJIT_CLASSES_STRIDE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(16)
        .max(1)
}

/// The operations of the matrix, or those `IVJIT_CLASSES_ONLY` names.
pub fn selected_ops() -> Vec<Op> {
    let only = std::env::var("IVJIT_CLASSES_ONLY").ok();
    ops()
        .into_iter()
        .filter(|o| {
            only.as_deref()
                .is_none_or(|w| o.oracle == w || o.src.contains(w))
        })
        .collect()
}

/// The gradient's check on one cell of a unary operation (mean value theorem): for two
/// witnesses p < q of the box where f is defined, (f(q) - f(p)) / (q - p) is f' at some point
/// of [p, q], so the derivative's enclosure `d` must meet the quotient's. It applies where the
/// gradient claims f continuous with a bounded derivative on the box (`flag` [1, 1], `d`
/// finite): then f is Lipschitz on the box's part of its domain, an interval. acot jumps at 0
/// (acot(0) = pi/2, from the left -pi/2) with a bounded derivative: its pairs may not cross 0.
pub fn check_derivative(
    op: &Op,
    exp: &Expected,
    flag: (f64, f64),
    d: (f64, f64),
) -> Option<String> {
    if flag != (1.0, 1.0) || !d.0.is_finite() || !d.1.is_finite() {
        return None;
    }
    let mut pts: Vec<(&BigFloat, &Enc)> = exp
        .values
        .iter()
        .filter_map(|(a, e, _)| a.as_ref().map(|a| (&a[0], e)))
        .filter(|(_, e)| !e.lo.is_inf() && !e.hi.is_inf())
        .collect();
    pts.sort_by(|a, b| eo::cmp(a.0, b.0));
    for w in pts.windows(2) {
        let ((p, fp), (q, fq)) = (w[0], w[1]);
        if !eo::cmp(p, q).is_lt() {
            continue;
        }
        if op.oracle == "acot" && !p.is_positive() && !q.is_negative() {
            continue;
        }
        let bits = 2 * P + 64;
        let h_lo = q.sub(p, bits, RM::Down);
        let h_hi = q.sub(p, bits, RM::Up);
        let n_lo = fq.lo.sub(&fp.hi, bits, RM::Down);
        let n_hi = fq.hi.sub(&fp.lo, bits, RM::Up);
        // The quotient's enclosure (h > 0).
        let q_lo = eo::min_b(
            n_lo.div(&h_lo, bits, RM::Down),
            n_lo.div(&h_hi, bits, RM::Down),
        );
        let q_hi = eo::max_b(n_hi.div(&h_lo, bits, RM::Up), n_hi.div(&h_hi, bits, RM::Up));
        if d.0 > eo::round_down(&q_hi) || d.1 < eo::round_up(&q_lo) {
            return Some(format!(
                "the derivative [{}, {}] misses the difference quotient [{}, {}] between {} and {}",
                hx(d.0),
                hx(d.1),
                hx(eo::round_down(&q_lo)),
                hx(eo::round_up(&q_hi)),
                describe_args(std::slice::from_ref(p)),
                describe_args(std::slice::from_ref(q))
            ));
        }
    }
    None
}

/// Writes `body` between `<!-- classes:{tag}:begin -->` and `<!-- classes:{tag}:end -->` in
/// the Markdown file `path` (appended when the markers are not there yet), keeping the rest.
pub fn splice_section(path: &str, tag: &str, body: &str) {
    splice_marked(
        path,
        &format!("<!-- classes:{tag}:begin -->"),
        &format!("<!-- classes:{tag}:end -->"),
        body,
    );
}

/// Held by every writer of a generated document: the tests of one binary run in parallel
/// threads, and an unlocked read-modify-write loses another's section (run 77: the ITF1788
/// harnesses on 16 cores left docs/conformance.md without its CPU sections).
pub static DOC_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Writes `body` between the markers `begin` and `end` in the Markdown file `path` (appended
/// when the markers are not there yet), keeping the rest.
pub fn splice_marked(path: &str, begin: &str, end: &str, body: &str) {
    let _guard = DOC_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let old = std::fs::read_to_string(path).unwrap_or_default();
    let new = match (old.find(begin), old.find(end)) {
        (Some(a), Some(b)) if a < b => {
            format!("{}{begin}\n{}\n{}", &old[..a], body.trim_end(), &old[b..])
        }
        _ => format!(
            "{}\n\n{begin}\n{}\n{end}\n",
            old.trim_end(),
            body.trim_end()
        ),
    };
    std::fs::write(path, new).unwrap_or_else(|e| panic!("cannot write {path}: {e}"));
}

/// The legend of the class tables in docs/conformance.md.
pub const LEGEND: &str = "Each cell: the number of cells of that class group (the class in \
each argument position, the other arguments taking the companions [0.75, 0.75], [-2, 3], \
[0.5, 4] and [-5, -0.125]; binary operations also on every pair of the non-binade, non-point \
classes), then the largest *slack* of a result: the steps of the precision by which a bound \
lies outside the hull of the witness values rounded outward (0: the tightest enclosure of \
what the witnesses show; the witnesses include the extrema, so the hull is the range up to \
their own distance from it), then (k inf) for cells where a bound is infinite while the \
witnesses are finite, and **k FAIL** for cells that miss a witness value (containment), are \
not intervals, or are not empty on an empty argument. Trigonometric cells beyond 2^51 (f64) \
and 2^22 (f32) are checked for containment only: their quarter indices are no longer exact \
there and the extremum tests answer \"may be inside\" (src/lower/elementary.rs).";
