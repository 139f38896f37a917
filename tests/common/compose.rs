//! A rigorous evaluator of random expressions at real points, for the differential fuzzing
//! over interval classes (`tests/cpu/class_fuzz.rs`): each node's value is enclosed in big
//! floats ([`Enc`]) from its children's enclosures, every function applied through the real
//! oracle ([`super::real_oracle::value`]) at the enclosure's ends where it is monotone there,
//! with the critical value added where the (tiny) enclosure holds a critical point. Where the
//! enclosure of an argument straddles a pole, a branch cut or a domain edge, the point is left
//! out (`None`): the answer would not be a value the expression takes there.
#![allow(dead_code)]

use astro_float::{BigFloat, RoundingMode as RM};

use super::elem_oracle::{self as eo, bf, le, Enc, Val};
use super::real_oracle as ro;

/// A random expression over x and y.
#[derive(Clone, Debug)]
pub enum Tree {
    X,
    Y,
    /// A constant (a float, so that the expression text is exact).
    Const(f64),
    Un(&'static str, Box<Tree>),
    /// pown with its exponent.
    Pown(i64, Box<Tree>),
    Bin(&'static str, Box<Tree>, Box<Tree>),
}

/// Unary functions of the fuzzing, with how they behave: monotone increasing, decreasing, or
/// with critical points to add.
pub const UNARY: &[&str] = &[
    "neg", "sqr", "sqrt", "abs", "recip", "exp", "exp2", "expm1", "log", "log2", "log1p", "sin",
    "cos", "tan", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "asin", "acos",
    "cbrt", "sinpi", "cospi", "floor", "ceil", "sign", "exp10", "log10", "trunc", "round", "rint",
];

const ERF: &str = "the real oracle's erf takes float arguments only (the series of \
                   tests/common/elem_oracle.rs); tests/cpu/elementary.rs and the class matrix test it";
const DERIVED: &str =
    "derived: expands into operations the trees call (ivjit::internals::point::DerivedFn); \
                       the class matrix tests it directly";

/// The functions of `ivjit functions` the fuzzing's trees never call, each with the reason
/// (checked against the catalogue by `tests/cpu/class_fuzz.rs`: a new function must land in
/// one list or the other). `pown` has a node of its own ([`Tree::Pown`]).
pub const LEFT_OUT: &[(&str, &str)] = &[
    ("pown", "a node of its own, Tree::Pown"),
    ("erf", ERF),
    ("erfc", ERF),
    ("fma", "ternary: the trees are unary and binary"),
    ("hull", "a set operation, not a function of the point"),
    ("intersect", "a set operation, not a function of the point"),
    (
        "rootn",
        "covered by the class matrix and tests/cpu/powers.rs; no node for its integer argument",
    ),
    ("sec", DERIVED),
    ("csc", DERIVED),
    ("cot", DERIVED),
    ("acot", DERIVED),
    ("sech", DERIVED),
    ("csch", DERIVED),
    ("coth", DERIVED),
    ("acoth", DERIVED),
    ("asech", DERIVED),
    ("acsch", DERIVED),
    ("inf", ENCLOSURE),
    ("sup", ENCLOSURE),
    ("mid", ENCLOSURE),
    ("rad", ENCLOSURE),
    ("wid", ENCLOSURE),
    ("mag", ENCLOSURE),
    ("mig", ENCLOSURE),
    ("cancelMinus", ENCLOSURE),
    ("cancelPlus", ENCLOSURE),
    ("sqrRev", REVERSE),
    ("absRev", REVERSE),
    ("coshRev", REVERSE),
    ("pownRev", REVERSE),
    ("mulRev", REVERSE),
    ("sinRev", REVERSE),
    ("cosRev", REVERSE),
    ("tanRev", REVERSE),
    ("powRev1", REVERSE),
    ("mulRevToPair1", REVERSE),
    ("mulRevToPair2", REVERSE),
    ("powRev2", REVERSE),
    ("atan2Rev1", REVERSE),
    ("atan2Rev2", REVERSE),
];

/// Why the reverse operations are left out: a set of points of x, not a function of its
/// arguments' points (no real oracle composes them).
const REVERSE: &str = "a reverse operation, a set of points of x: the class matrix checks it \
     against tests/common/reverse_oracle.rs";

/// Why the operations on an enclosure are left out: no real oracle.
const ENCLOSURE: &str = "a function of the argument's enclosure, not of its points: the class \
     matrix checks it exactly (tests/common/enclosure_oracle.rs)";

pub const BINARY: &[&str] = &[
    "add", "sub", "mul", "div", "min", "max", "atan2", "hypot", "pow",
];

impl Tree {
    pub fn text(&self) -> String {
        match self {
            Tree::X => "x".into(),
            Tree::Y => "y".into(),
            Tree::Const(c) => {
                if *c < 0.0 {
                    format!("({})", ivjit::internals::syntax::number::hexf64(*c))
                } else {
                    ivjit::internals::syntax::number::hexf64(*c)
                }
            }
            Tree::Un(f, a) => match *f {
                "neg" => format!("(-{})", a.text()),
                f => format!("{f}({})", a.text()),
            },
            Tree::Pown(n, a) => format!("pown({}, {n})", a.text()),
            Tree::Bin(f, a, b) => match *f {
                "add" => format!("({} + {})", a.text(), b.text()),
                "sub" => format!("({} - {})", a.text(), b.text()),
                "mul" => format!("({} * {})", a.text(), b.text()),
                "div" => format!("({} / {})", a.text(), b.text()),
                f => format!("{f}({}, {})", a.text(), b.text()),
            },
        }
    }

    pub fn uses(&self, v: &Tree) -> bool {
        match (self, v) {
            (Tree::X, Tree::X) | (Tree::Y, Tree::Y) => true,
            (Tree::Un(_, a), _) | (Tree::Pown(_, a), _) => a.uses(v),
            (Tree::Bin(_, a, b), _) => a.uses(v) || b.uses(v),
            _ => false,
        }
    }
}

fn point(f: &str, args: &[BigFloat]) -> Option<Enc> {
    // An enclosure reaching past every float (exp of a huge value) has an infinite end: the
    // oracle takes reals only.
    if args.iter().any(|a| a.is_inf() || a.is_nan()) {
        return None;
    }
    match ro::value(f, args, 256) {
        Val::In(e) => Some(e),
        Val::Out => None,
    }
}

/// The lower end of an increasing function's value at an enclosure's lower end x: at
/// x = -inf (the enclosure's real lies somewhere below every float), -inf is still a lower
/// bound.
fn lo_of(f: &str, x: &BigFloat) -> Option<BigFloat> {
    if x.is_inf_neg() {
        return Some(astro_float::INF_NEG);
    }
    point(f, std::slice::from_ref(x)).map(|e| e.lo)
}

fn hi_of(f: &str, x: &BigFloat) -> Option<BigFloat> {
    if x.is_inf_pos() {
        return Some(astro_float::INF_POS);
    }
    point(f, std::slice::from_ref(x)).map(|e| e.hi)
}

fn contains(e: &Enc, c: f64) -> bool {
    let c = bf(c);
    le(&e.lo, &c) && le(&c, &e.hi)
}

/// Whether the enclosure holds a multiple of q (pi/2 for the trigonometric functions, 1/2
/// for sinpi and cospi), checked with a 512-bit pi: then the point is near an extremum or a
/// pole, and left out unless the enclosure is a single point.
fn near_grid(e: &Enc, half: bool) -> bool {
    if eo::cmp(&e.lo, &e.hi).is_eq() && !half {
        return false; // a single real: sin there is what the oracle says
    }
    let bits = 512 + e.hi.abs().exponent().unwrap_or(0).max(0) as usize;
    let q = if half {
        eo::two_pow(-1)
    } else {
        let mut p = eo::with_cc(|cc| cc.pi(bits, RM::ToEven));
        p.set_exponent(p.exponent().unwrap() - 1);
        p
    };
    let a = e.lo.div(&q, bits, RM::Down).floor();
    let b = e.hi.div(&q, bits, RM::Up).floor();
    // A multiple k q in [lo, hi] exists when floor(hi/q) > floor(lo/q) or lo/q is one.
    !eo::cmp(&a, &b).is_eq() || e.lo.div(&q, bits, RM::Down).is_int()
}

/// The enclosure of the tree's value at the point (x, y), or None (undefined there, or too
/// near a pole, a cut or a domain edge to enclose).
pub fn eval(t: &Tree, x: &BigFloat, y: &BigFloat) -> Option<Enc> {
    match t {
        Tree::X => Some(Enc::point(x.clone())),
        Tree::Y => Some(Enc::point(y.clone())),
        Tree::Const(c) => Some(Enc::exact(*c)),
        Tree::Un(f, a) => {
            let a = eval(a, x, y)?;
            unary(f, &a)
        }
        Tree::Pown(n, a) => {
            let a = eval(a, x, y)?;
            let f = format!("pown:{n}");
            // Even n: decreasing then increasing through 0; odd: increasing (negative n: with
            // a pole at 0).
            if contains(&a, 0.0) && !(eo::cmp(&a.lo, &a.hi).is_eq()) {
                return None;
            }
            let (l, h) = (
                point(&f, std::slice::from_ref(&a.lo))?,
                point(&f, std::slice::from_ref(&a.hi))?,
            );
            Some(hull(&l, &h))
        }
        Tree::Bin(f, a, b) => {
            let (a, b) = (eval(a, x, y)?, eval(b, x, y)?);
            binary(f, &a, &b)
        }
    }
}

fn hull(a: &Enc, b: &Enc) -> Enc {
    Enc {
        lo: eo::min_b(a.lo.clone(), b.lo.clone()),
        hi: eo::max_b(a.hi.clone(), b.hi.clone()),
    }
}

fn unary(f: &str, a: &Enc) -> Option<Enc> {
    let single = eo::cmp(&a.lo, &a.hi).is_eq();
    let at = |v: &BigFloat| point(f, std::slice::from_ref(v));
    match f {
        // Increasing on their domains.
        "neg" => Some(a.neg()),
        "sqrt" | "exp" | "exp2" | "expm1" | "log" | "log2" | "log1p" | "atan" | "sinh" | "tanh"
        | "asinh" | "acosh" | "atanh" | "asin" | "cbrt" | "floor" | "ceil" | "sign" | "exp10"
        | "log10" | "trunc" | "round" | "rint" => Some(Enc {
            lo: lo_of(f, &a.lo)?,
            hi: hi_of(f, &a.hi)?,
        }),
        "acos" | "recip" => {
            if f == "recip" && contains(a, 0.0) {
                return None;
            }
            // Decreasing: the ends swap (an infinite end leaves that side unbounded).
            let lo = if a.hi.is_inf() {
                astro_float::INF_NEG
            } else {
                point(f, std::slice::from_ref(&a.hi))?.lo
            };
            let hi = if a.lo.is_inf() {
                astro_float::INF_POS
            } else {
                point(f, std::slice::from_ref(&a.lo))?.hi
            };
            Some(Enc { lo, hi })
        }
        // Even, increasing in |x|.
        "sqr" | "abs" | "cosh" => {
            let (l, h) = (at(&a.lo)?, at(&a.hi)?);
            let mut e = hull(&l, &h);
            if contains(a, 0.0) && !single {
                e.lo = at(&BigFloat::new(64))?.lo;
            }
            Some(e)
        }
        "sin" | "cos" | "tan" | "sinpi" | "cospi" => {
            if near_grid(a, matches!(f, "sinpi" | "cospi")) && !single {
                return None;
            }
            let (l, h) = (at(&a.lo)?, at(&a.hi)?);
            Some(hull(&l, &h))
        }
        _ => panic!("compose: unknown unary {f}"),
    }
}

fn binary(f: &str, a: &Enc, b: &Enc) -> Option<Enc> {
    let p = 512;
    let infinite = |e: &Enc| e.lo.is_inf() || e.hi.is_inf();
    if matches!(f, "mul" | "div") && (infinite(a) || infinite(b)) {
        return None; // 0 * inf
    }
    match f {
        "add" => Some(eo::add_e(a, b, p)),
        "sub" => Some(eo::add_e(a, &b.neg(), p)),
        "mul" => Some(eo::mul_e(a, b, p)),
        "div" => eo::div_e(a, b, p),
        "min" => Some(Enc {
            lo: eo::min_b(a.lo.clone(), b.lo.clone()),
            hi: eo::min_b(a.hi.clone(), b.hi.clone()),
        }),
        "max" => Some(Enc {
            lo: eo::max_b(a.lo.clone(), b.lo.clone()),
            hi: eo::max_b(a.hi.clone(), b.hi.clone()),
        }),
        "atan2" | "hypot" | "pow" => {
            // Monotone in each argument away from the cut (atan2: y = 0, x < 0), the origin
            // and, for pow, x = 0 and y = 0: the corners. Straddling one of those: left out.
            let single = |e: &Enc| eo::cmp(&e.lo, &e.hi).is_eq();
            if !(single(a) && single(b)) {
                let risky = match f {
                    "atan2" => contains(a, 0.0) || contains(b, 0.0),
                    "hypot" => contains(a, 0.0) || contains(b, 0.0),
                    _ => contains(a, 0.0) || contains(a, 1.0) || contains(b, 0.0),
                };
                if risky {
                    return None;
                }
            }
            let mut e: Option<Enc> = None;
            for u in [&a.lo, &a.hi] {
                for v in [&b.lo, &b.hi] {
                    let w = point(f, &[u.clone(), v.clone()])?;
                    e = Some(match e {
                        None => w,
                        Some(h) => hull(&h, &w),
                    });
                }
            }
            e
        }
        _ => panic!("compose: unknown binary {f}"),
    }
}
