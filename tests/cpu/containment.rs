//! Containment: every output interval contains every real value the expression takes on the box.
//!
//! Random expression trees over x, y, z (with `let` bindings, one or two outputs) built from
//! `+ - * / neg sqr sqrt pown(x, n) (n in -4..=7) abs min max fma recip`, `^n` and `^0.5`, and
//! constants (small integers, dyadic numbers as hex-float or exact decimals, inexact decimals
//! such as `0.1`), are printed as ivjit source. Random boxes (small, wide, near zero, subnormal,
//! signed zeros, huge, half-unbounded, entire, points, empty) are evaluated in one `eval_many`
//! batch per precision (f64, and f32 with f32 box bounds). In every nonempty box we sample
//! points (finite endpoints, huge finite points for infinite bounds, interior points) and
//! evaluate the tree there EXACTLY with big rationals: every float is the rational its bits
//! denote, decimal constants are their exact decimal value, square roots are exact for rational
//! squares and otherwise enclosed in dyadic intervals of relative width ~2^-200, carried on with
//! exact rational interval arithmetic. Points where the expression has no value (a zero divisor,
//! sqrt of a negative number, a negative power of zero) are skipped, as set-based semantics
//! allows; points where the oracle's enclosure cannot decide the domain (it straddles 0 under a
//! sqrt or a divisor) are skipped and counted. ivjit's output must contain the oracle interval
//! (exact rational comparison; an infinite bound contains everything on its side); an
//! undecided comparison is retried with 2000-bit square roots.
//!
//! The proptest seed is fixed; `CONTAINMENT_SEED=<u64>` runs another one.

use crate::common;

use common::oracle::*;
use ivjit::{BackendChoice, Evaluator, Expression, Interval, Precision};
use num_bigint::BigInt;
use num_traits::{One, Signed, Zero};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestCaseError, TestRunner};
use std::cmp::Ordering;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

// ---------------------------------------------------------------------------------------------
// Expression trees
// ---------------------------------------------------------------------------------------------

/// A constant: its source text (parenthesized when negative) and its exact value.
#[derive(Clone, Debug)]
struct Const {
    text: String,
    value: Q,
}

#[derive(Clone, Copy, Debug)]
enum Bin {
    Add,
    Sub,
    Mul,
    Div,
    Min,
    Max,
}

#[derive(Clone, Copy, Debug)]
enum Un {
    Neg,
    Sqr,
    Sqrt,
    /// `(e)^0.5`
    SqrtPow,
    Abs,
    Recip,
}

#[derive(Clone, Debug)]
enum Node {
    /// 0, 1, 2: x, y, z; 3 + i: the let-bound `t{i}`.
    Var(u8),
    Const(Const),
    Un(Un, Box<Node>),
    Bin(Bin, Box<Node>, Box<Node>),
    /// pown(e, n), printed as `(e)^n` when the flag is set.
    Pown(Box<Node>, i32, bool),
    Fma(Box<Node>, Box<Node>, Box<Node>),
}

const VAR_NAMES: [&str; 3] = ["x", "y", "z"];

impl Node {
    /// Replaces references to let bindings that are not available (index >= avail) by variables.
    fn normalize(self, avail: u8) -> Node {
        let b = |n: Box<Node>| Box::new(n.normalize(avail));
        match self {
            Node::Var(v) if v >= 3 && v - 3 >= avail => Node::Var(v % 3),
            Node::Var(v) => Node::Var(v),
            Node::Const(c) => Node::Const(c),
            Node::Un(op, a) => Node::Un(op, b(a)),
            Node::Bin(op, a, c) => Node::Bin(op, b(a), b(c)),
            Node::Pown(a, n, caret) => Node::Pown(b(a), n, caret),
            Node::Fma(a, c, d) => Node::Fma(b(a), b(c), b(d)),
        }
    }

    fn print(&self) -> String {
        match self {
            Node::Var(v) if *v < 3 => VAR_NAMES[*v as usize].to_string(),
            Node::Var(v) => format!("t{}", v - 3),
            Node::Const(c) => c.text.clone(),
            Node::Un(op, a) => {
                let a = a.print();
                match op {
                    Un::Neg => format!("(-{a})"),
                    Un::Sqr => format!("sqr({a})"),
                    Un::Sqrt => format!("sqrt({a})"),
                    Un::SqrtPow => format!("({a})^0.5"),
                    Un::Abs => format!("abs({a})"),
                    Un::Recip => format!("recip({a})"),
                }
            }
            Node::Bin(op, a, b) => {
                let (a, b) = (a.print(), b.print());
                match op {
                    Bin::Add => format!("({a} + {b})"),
                    Bin::Sub => format!("({a} - {b})"),
                    Bin::Mul => format!("({a} * {b})"),
                    Bin::Div => format!("({a} / {b})"),
                    Bin::Min => format!("min({a}, {b})"),
                    Bin::Max => format!("max({a}, {b})"),
                }
            }
            Node::Pown(a, n, true) => format!("({})^{n}", a.print()),
            Node::Pown(a, n, false) => format!("pown({}, {n})", a.print()),
            Node::Fma(a, b, c) => format!("fma({}, {}, {})", a.print(), b.print(), c.print()),
        }
    }
}

/// `let t0 = ...; let t1 = ...; out0, out1`
#[derive(Clone, Debug)]
struct Program {
    lets: Vec<Node>,
    outs: Vec<Node>,
}

impl Program {
    fn source(&self) -> String {
        let mut s = String::new();
        for (i, l) in self.lets.iter().enumerate() {
            s.push_str(&format!("let t{i} = {}; ", l.print()));
        }
        let outs: Vec<String> = self.outs.iter().map(|o| o.print()).collect();
        s.push_str(&outs.join(", "));
        s
    }
}

// ---------------------------------------------------------------------------------------------
// Strategies
// ---------------------------------------------------------------------------------------------

fn q_int(n: i64) -> Q {
    Q::from_integer(BigInt::from(n))
}

fn pow10(k: i32) -> Q {
    let t = Q::from_integer(BigInt::from(10).pow(k.unsigned_abs()));
    if k >= 0 {
        t
    } else {
        t.recip()
    }
}

fn signed_text(neg: bool, text: String) -> String {
    if neg {
        format!("(-{text})")
    } else {
        text
    }
}

fn int_const(n: i64) -> Const {
    Const {
        text: signed_text(n < 0, n.unsigned_abs().to_string()),
        value: q_int(n),
    }
}

/// m * 2^e, as hex-float or as an exact decimal.
fn dyadic_const(m: i64, e: i32, as_hex: bool) -> Const {
    let v = m as f64 * 2f64.powi(e);
    let text = if as_hex {
        hex(v.abs())
    } else if e >= 0 {
        (m.unsigned_abs() << e).to_string()
    } else {
        // |m| / 2^k = |m| * 5^k / 10^k
        let k = (-e) as usize;
        let digits = (BigInt::from(m.unsigned_abs()) * BigInt::from(5).pow(k as u32)).to_string();
        let digits = format!("{digits:0>width$}", width = k + 1);
        let (ip, fp) = digits.split_at(digits.len() - k);
        format!("{ip}.{fp}")
    };
    Const {
        text: signed_text(m < 0, text),
        value: q_of(v),
    }
}

/// `ip.frac` or `ip.frac e exp`, usually not representable in binary.
fn decimal_const(neg: bool, ip: u32, frac: u32, len: u32, exp: Option<i32>) -> Const {
    let frac = frac % 10u32.pow(len);
    let mut text = format!("{ip}.{frac:0>width$}", width = len as usize);
    let mut value = (q_int(ip as i64) * pow10(len as i32) + q_int(frac as i64)) / pow10(len as i32);
    if let Some(e) = exp {
        text.push_str(&format!("e{e}"));
        value *= pow10(e);
    }
    Const {
        text: signed_text(neg, text),
        value: if neg { -value } else { value },
    }
}

fn const_strategy() -> impl Strategy<Value = Const> {
    prop_oneof![
        3 => (-5i64..=20).prop_map(int_const),
        2 => (-64i64..=64, -10i32..=4, any::<bool>()).prop_map(|(m, e, h)| dyadic_const(m, e, h)),
        3 => (
            any::<bool>(),
            0u32..=12,
            any::<u32>(),
            1u32..=3,
            prop_oneof![4 => Just(None), 2 => (-12i32..=12).prop_map(Some), 1 => (-320i32..=310).prop_map(Some)],
        )
            .prop_map(|(n, ip, f, l, e)| decimal_const(n, ip, f, l, e)),
    ]
}

fn node_strategy() -> impl Strategy<Value = Node> {
    let leaf = prop_oneof![
        4 => (0u8..5).prop_map(Node::Var),
        2 => const_strategy().prop_map(Node::Const),
    ];
    leaf.prop_recursive(5, 24, 3, |inner| {
        let un = prop_oneof![
            Just(Un::Neg),
            Just(Un::Sqr),
            Just(Un::Sqrt),
            Just(Un::SqrtPow),
            Just(Un::Abs),
            Just(Un::Recip)
        ];
        let bin = prop_oneof![
            2 => Just(Bin::Add),
            2 => Just(Bin::Sub),
            2 => Just(Bin::Mul),
            2 => Just(Bin::Div),
            1 => Just(Bin::Min),
            1 => Just(Bin::Max)
        ];
        prop_oneof![
            3 => (un, inner.clone()).prop_map(|(op, a)| Node::Un(op, Box::new(a))),
            5 => (bin, inner.clone(), inner.clone())
                .prop_map(|(op, a, b)| Node::Bin(op, Box::new(a), Box::new(b))),
            2 => (inner.clone(), -4i32..=7, any::<bool>())
                .prop_map(|(a, n, c)| Node::Pown(Box::new(a), n, c)),
            1 => (inner.clone(), inner.clone(), inner)
                .prop_map(|(a, b, c)| Node::Fma(Box::new(a), Box::new(b), Box::new(c))),
        ]
    })
}

fn program_strategy() -> impl Strategy<Value = Program> {
    (
        prop::collection::vec(node_strategy(), 0..=2),
        prop::collection::vec(node_strategy(), 1..=2),
    )
        .prop_map(|(lets, outs)| {
            let n = lets.len() as u8;
            Program {
                lets: lets
                    .into_iter()
                    .enumerate()
                    .map(|(i, l)| l.normalize(i as u8))
                    .collect(),
                outs: outs.into_iter().map(|o| o.normalize(n)).collect(),
            }
        })
}

fn sign(neg: bool, x: f64) -> f64 {
    if neg {
        -x
    } else {
        x
    }
}

fn bound_strategy() -> impl Strategy<Value = f64> {
    prop_oneof![
        3 => (-10i32..=10).prop_map(|n| n as f64),
        3 => -10.0f64..10.0,
        2 => (any::<bool>(), 0.0f64..10.0).prop_map(|(s, e)| sign(s, 10f64.powf(e))),
        2 => (any::<bool>(), -320.0f64..-1.0).prop_map(|(s, e)| sign(s, 10f64.powf(e))),
        1 => (any::<bool>(), 1u64..(1u64 << 52)).prop_map(|(s, b)| sign(s, f64::from_bits(b))),
        1 => prop_oneof![Just(0.0), Just(-0.0)],
        1 => (any::<bool>(), 10.0f64..300.0).prop_map(|(s, e)| sign(s, 10f64.powf(e))),
        1 => prop_oneof![Just(f64::MAX), Just(-f64::MAX)],
        1 => prop_oneof![Just(f64::INFINITY), Just(f64::NEG_INFINITY)],
    ]
}

fn interval_strategy() -> impl Strategy<Value = Interval> {
    (bound_strategy(), bound_strategy(), 0u8..40).prop_map(|(a, b, kind)| match kind {
        0 => Interval::EMPTY,
        1 => Interval::ENTIRE,
        2..=5 => {
            let p = if a.is_finite() {
                a
            } else if b.is_finite() {
                b
            } else {
                1.0
            };
            Interval { lo: p, hi: p }
        }
        _ => {
            let (mut lo, mut hi) = if a <= b { (a, b) } else { (b, a) };
            if lo == f64::INFINITY {
                lo = f64::MAX;
            }
            if hi == f64::NEG_INFINITY {
                hi = -f64::MAX;
            }
            Interval::new(lo, hi).unwrap()
        }
    })
}

#[derive(Clone)]
struct Case {
    program: Program,
    boxes: Vec<[Interval; 3]>,
    seed: u64,
}

/// Shown by proptest for the (shrunk) failing case: the source and the boxes in hex-float.
impl std::fmt::Debug for Case {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "expression: {}", self.program.source())?;
        for (i, b) in self.boxes.iter().enumerate() {
            let ivs: Vec<String> = b
                .iter()
                .zip(VAR_NAMES)
                .map(|(iv, n)| format!("{n} = {}", hex_iv(iv)))
                .collect();
            writeln!(f, "box {i}: {}", ivs.join(", "))?;
        }
        write!(f, "point seed: {}", self.seed)
    }
}

fn case_strategy() -> impl Strategy<Value = Case> {
    (
        program_strategy(),
        prop::collection::vec(
            [
                interval_strategy(),
                interval_strategy(),
                interval_strategy(),
            ],
            1..=6,
        ),
        any::<u64>(),
    )
        .prop_map(|(program, boxes, seed)| Case {
            program,
            boxes,
            seed,
        })
}

// ---------------------------------------------------------------------------------------------
// Point sampling
// ---------------------------------------------------------------------------------------------

/// splitmix64, for points (which need no shrinking).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        common::rng::splitmix64(&mut self.0)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Rounds an f64 to the nearest value of the format, then clamps into [lo, hi] (values of it).
fn to_fmt_in(x: f64, lo: f64, hi: f64, fmt: Fmt) -> f64 {
    let x = match fmt {
        Fmt::F64 => x,
        Fmt::F32 => (x as f32) as f64,
    };
    x.max(lo).min(hi)
}

/// A finite value of the format inside the nonempty interval `iv`. `mode` 0: the lower end (a
/// huge finite value when unbounded), 1: the upper end, otherwise an interior point.
fn sample(iv: &Interval, fmt: Fmt, rng: &mut Rng, mode: u64) -> f64 {
    let max = fmt.max();
    // Finite stand-ins for the bounds.
    let flo = iv.lo.max(-max);
    let fhi = iv.hi.min(max);
    let huge = |rng: &mut Rng| -> f64 {
        // log-uniform between 1e5 and the format's top
        let top = max.log10();
        10f64.powf(5.0 + rng.unit() * (top - 5.0)).min(max)
    };
    let v = match mode {
        0 => {
            if iv.lo.is_finite() || rng.below(2) == 0 {
                flo
            } else {
                -huge(rng)
            }
        }
        1 => {
            if iv.hi.is_finite() || rng.below(2) == 0 {
                fhi
            } else {
                huge(rng)
            }
        }
        _ => match rng.below(7) {
            0 | 1 => {
                let t = rng.unit();
                flo * (1.0 - t) + fhi * t
            }
            2 => 0.0,
            3 => fmt.next_up(flo),
            4 => fmt.next_down(fhi),
            5 => rng.below(21) as f64 - 10.0,
            _ => {
                // log-uniform magnitude over the whole range, random sign
                let e = -320.0 + rng.unit() * 630.0;
                let s = rng.below(2) == 0;
                sign(s, 10f64.powf(e))
            }
        },
    };
    let v = to_fmt_in(v, flo, fhi, fmt);
    debug_assert!(v.is_finite() && fmt.holds(v) && iv.contains(v));
    v
}

// ---------------------------------------------------------------------------------------------
// The exact oracle
// ---------------------------------------------------------------------------------------------

/// A rational interval enclosing the exact value (a point when nothing irrational happened).
#[derive(Clone, Debug)]
struct QI {
    lo: Q,
    hi: Q,
    pt: bool,
}

impl QI {
    fn point(q: Q) -> QI {
        QI {
            lo: q.clone(),
            hi: q,
            pt: true,
        }
    }
    fn range(lo: Q, hi: Q) -> QI {
        debug_assert!(lo <= hi);
        let pt = lo == hi;
        QI { lo, hi, pt }
    }
    fn contains_zero(&self) -> bool {
        !self.lo.is_positive() && !self.hi.is_negative()
    }
}

/// The oracle's verdict on one point: a value, no value, or undecidable at this precision.
#[derive(Clone, Debug)]
enum OV {
    Val(QI),
    Undef,
    Ambig,
}

fn neg(a: &QI) -> QI {
    QI {
        lo: -&a.hi,
        hi: -&a.lo,
        pt: a.pt,
    }
}

fn add(a: &QI, b: &QI) -> QI {
    if a.pt && b.pt {
        QI::point(&a.lo + &b.lo)
    } else {
        QI::range(&a.lo + &b.lo, &a.hi + &b.hi)
    }
}

fn mul(a: &QI, b: &QI) -> QI {
    if a.pt && b.pt {
        return QI::point(&a.lo * &b.lo);
    }
    let p = [&a.lo * &b.lo, &a.lo * &b.hi, &a.hi * &b.lo, &a.hi * &b.hi];
    let lo = p.iter().min().unwrap().clone();
    let hi = p.iter().max().unwrap().clone();
    QI::range(lo, hi)
}

fn div(a: &QI, b: &QI) -> OV {
    if b.pt {
        if b.lo.is_zero() {
            return OV::Undef;
        }
        let r = b.lo.recip();
        return OV::Val(mul(a, &QI::point(r)));
    }
    if b.contains_zero() {
        return OV::Ambig; // the divisor may or may not be exactly zero
    }
    OV::Val(mul(a, &QI::range(b.hi.recip(), b.lo.recip())))
}

fn sqrt(a: &QI, prec: i64) -> OV {
    if a.hi.is_negative() {
        return OV::Undef;
    }
    if a.lo.is_negative() {
        return OV::Ambig; // not a point: the argument may be negative or not
    }
    let (l, lu) = sqrt_enclosure(&a.lo, prec);
    if a.pt {
        return OV::Val(QI::range(l, lu));
    }
    let (_, u) = sqrt_enclosure(&a.hi, prec);
    OV::Val(QI::range(l, u))
}

fn pown(a: &QI, n: i32, prec: i64) -> OV {
    let _ = prec;
    if n == 0 {
        return OV::Val(QI::point(Q::one()));
    }
    if n < 0 {
        return match pown(a, -n, prec) {
            OV::Val(p) => div(&QI::point(Q::one()), &p),
            other => other,
        };
    }
    if a.pt {
        return OV::Val(QI::point(a.lo.pow(n)));
    }
    let (l, h) = (a.lo.pow(n), a.hi.pow(n));
    OV::Val(if n % 2 == 1 || !a.lo.is_negative() {
        QI::range(l, h)
    } else if !a.hi.is_positive() {
        QI::range(h, l)
    } else {
        QI::range(Q::zero(), l.max(h))
    })
}

fn abs(a: &QI) -> QI {
    if !a.lo.is_negative() {
        a.clone()
    } else if !a.hi.is_positive() {
        neg(a)
    } else {
        QI::range(Q::zero(), (-&a.lo).max(a.hi.clone()))
    }
}

fn min(a: &QI, b: &QI) -> QI {
    QI::range(
        a.lo.clone().min(b.lo.clone()),
        a.hi.clone().min(b.hi.clone()),
    )
}

fn max(a: &QI, b: &QI) -> QI {
    QI::range(
        a.lo.clone().max(b.lo.clone()),
        a.hi.clone().max(b.hi.clone()),
    )
}

/// Combines children: any undefined child makes the point undefined (every function here is
/// strict); otherwise any undecidable child makes it undecidable.
#[allow(clippy::result_large_err)] // a small test helper; the error is the value itself
fn strict(children: Vec<OV>) -> Result<Vec<QI>, OV> {
    if children.iter().any(|c| matches!(c, OV::Undef)) {
        return Err(OV::Undef);
    }
    if children.iter().any(|c| matches!(c, OV::Ambig)) {
        return Err(OV::Ambig);
    }
    Ok(children
        .into_iter()
        .map(|c| match c {
            OV::Val(v) => v,
            _ => unreachable!(),
        })
        .collect())
}

fn eval_node(n: &Node, env: &[OV], prec: i64) -> OV {
    let go = |c: &Node| eval_node(c, env, prec);
    match n {
        Node::Var(v) => env[*v as usize].clone(),
        Node::Const(c) => OV::Val(QI::point(c.value.clone())),
        Node::Un(op, a) => {
            let a = match strict(vec![go(a)]) {
                Ok(v) => v.into_iter().next().unwrap(),
                Err(e) => return e,
            };
            match op {
                Un::Neg => OV::Val(neg(&a)),
                Un::Sqr => pown(&a, 2, prec),
                Un::Sqrt | Un::SqrtPow => sqrt(&a, prec),
                Un::Abs => OV::Val(abs(&a)),
                Un::Recip => div(&QI::point(Q::one()), &a),
            }
        }
        Node::Bin(op, a, b) => {
            let v = match strict(vec![go(a), go(b)]) {
                Ok(v) => v,
                Err(e) => return e,
            };
            let (a, b) = (&v[0], &v[1]);
            match op {
                Bin::Add => OV::Val(add(a, b)),
                Bin::Sub => OV::Val(add(a, &neg(b))),
                Bin::Mul => OV::Val(mul(a, b)),
                Bin::Div => div(a, b),
                Bin::Min => OV::Val(min(a, b)),
                Bin::Max => OV::Val(max(a, b)),
            }
        }
        Node::Pown(a, k, _) => match strict(vec![go(a)]) {
            Ok(v) => pown(&v[0], *k, prec),
            Err(e) => e,
        },
        Node::Fma(a, b, c) => match strict(vec![go(a), go(b), go(c)]) {
            Ok(v) => OV::Val(add(&mul(&v[0], &v[1]), &v[2])),
            Err(e) => e,
        },
    }
}

/// The oracle's value of every output at a point (x, y, z; unused ones are 0).
fn eval_program(p: &Program, point: &[Q; 3], prec: i64) -> Vec<OV> {
    let mut env: Vec<OV> = point
        .iter()
        .map(|q| OV::Val(QI::point(q.clone())))
        .collect();
    for l in &p.lets {
        let v = eval_node(l, &env, prec);
        env.push(v);
    }
    p.outs.iter().map(|o| eval_node(o, &env, prec)).collect()
}

// ---------------------------------------------------------------------------------------------
// The check
// ---------------------------------------------------------------------------------------------

enum Verdict {
    Pass,
    Fail,
    Unsure,
}

/// Whether ivjit's `out` contains the exact value known to lie in `v`.
fn verdict(out: &Interval, v: &QI) -> Verdict {
    if out.is_empty() {
        return Verdict::Fail;
    }
    let lo_ok = cmp_f_q(out.lo, &v.lo) != Ordering::Greater;
    let hi_ok = cmp_f_q(out.hi, &v.hi) != Ordering::Less;
    if lo_ok && hi_ok {
        Verdict::Pass
    } else if v.pt
        || cmp_f_q(out.lo, &v.hi) == Ordering::Greater
        || cmp_f_q(out.hi, &v.lo) == Ordering::Less
    {
        Verdict::Fail
    } else {
        Verdict::Unsure
    }
}

static CASES: AtomicU64 = AtomicU64::new(0);
static BOXES: AtomicU64 = AtomicU64::new(0);
static EMPTY_BOXES: AtomicU64 = AtomicU64::new(0);
static POINTS: AtomicU64 = AtomicU64::new(0);
static CHECKED: AtomicU64 = AtomicU64::new(0);
static SKIP_UNDEF: AtomicU64 = AtomicU64::new(0);
static SKIP_AMBIG: AtomicU64 = AtomicU64::new(0);
static RETRIED: AtomicU64 = AtomicU64::new(0);
static EMPTY_OUTPUTS: AtomicU64 = AtomicU64::new(0);

const PREC: i64 = 200;
const PREC_RETRY: i64 = 2000;
const POINTS_PER_BOX: usize = 6;

fn qi_text(v: &QI) -> String {
    let exact = |q: &Q| {
        let s = q.to_string();
        if s.len() <= 120 {
            s
        } else {
            approx(q).to_string()
        }
    };
    if v.pt {
        format!("{} (exact: {})", approx(&v.lo), exact(&v.lo))
    } else {
        format!(
            "[{}, {}] (exact: [{}, {}])",
            approx(&v.lo),
            approx(&v.hi),
            exact(&v.lo),
            exact(&v.hi)
        )
    }
}

fn narrow_box(b: &[Interval; 3], fmt: Fmt) -> [Interval; 3] {
    b.map(|iv| {
        if fmt == Fmt::F64 || iv.is_empty() {
            return iv;
        }
        let lo = if iv.lo.is_finite() && iv.lo != 0.0 {
            round_down(&q_of(iv.lo), fmt)
        } else {
            iv.lo
        };
        let hi = if iv.hi.is_finite() && iv.hi != 0.0 {
            round_up(&q_of(iv.hi), fmt)
        } else {
            iv.hi
        };
        Interval::new(lo, hi).unwrap()
    })
}

/// Runs ivjit code, turning a panic into a test failure that names the expression.
fn guard<T>(src: &str, what: &str, f: impl FnOnce() -> T) -> Result<T, TestCaseError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|p| {
        let msg = p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        TestCaseError::fail(format!("ivjit panicked while {what} `{src}`: {msg}"))
    })
}

fn check_case(case: &Case) -> Result<(), TestCaseError> {
    CASES.fetch_add(1, Relaxed);
    let src = case.program.source();
    let expr = guard(&src, "parsing", || Expression::parse(&src))?
        .map_err(|e| TestCaseError::fail(format!("ivjit rejected `{src}`: {e}")))?;
    let vars: Vec<usize> = expr
        .vars()
        .iter()
        .map(|n| {
            VAR_NAMES
                .iter()
                .position(|v| v == n)
                .unwrap_or_else(|| panic!("unexpected variable {n} in {src}"))
        })
        .collect();
    let mut rng = Rng(case.seed);
    for fmt in [Fmt::F64, Fmt::F32] {
        let precision = match fmt {
            Fmt::F64 => Precision::F64,
            Fmt::F32 => Precision::F32,
        };
        let eval = guard(&src, "compiling", || {
            Evaluator::new(&expr, precision, BackendChoice::Cpu)
        })?
        .map_err(|e| TestCaseError::fail(format!("compiling `{src}` for {fmt:?}: {e}")))?;
        let boxes: Vec<[Interval; 3]> = case.boxes.iter().map(|b| narrow_box(b, fmt)).collect();
        let inputs: Vec<Vec<Interval>> = boxes
            .iter()
            .map(|b| vars.iter().map(|&v| b[v]).collect())
            .collect();
        let results = guard(&src, "evaluating", || eval.eval_many(&inputs))?
            .map_err(|e| TestCaseError::fail(format!("evaluating `{src}`: {e}")))?;
        for (b, res) in boxes.iter().zip(&results) {
            BOXES.fetch_add(1, Relaxed);
            if res.len() != case.program.outs.len() {
                return Err(TestCaseError::fail(format!(
                    "`{src}` gave {} outputs, expected {}",
                    res.len(),
                    case.program.outs.len()
                )));
            }
            if vars.iter().any(|&v| b[v].is_empty()) {
                EMPTY_BOXES.fetch_add(1, Relaxed);
                continue;
            }
            EMPTY_OUTPUTS.fetch_add(res.iter().filter(|r| r.is_empty()).count() as u64, Relaxed);
            for k in 0..POINTS_PER_BOX {
                let mut pt = [0.0f64; 3];
                for &v in &vars {
                    let mode = match k {
                        0 => 0,
                        1 => 1,
                        _ => rng.below(4),
                    };
                    pt[v] = sample(&b[v], fmt, &mut rng, mode);
                }
                POINTS.fetch_add(1, Relaxed);
                let qpt = pt.map(q_of);
                let values = eval_program(&case.program, &qpt, PREC);
                for (o, (value, out)) in values.iter().zip(res).enumerate() {
                    let value = match value {
                        OV::Undef => {
                            SKIP_UNDEF.fetch_add(1, Relaxed);
                            continue;
                        }
                        OV::Ambig => {
                            SKIP_AMBIG.fetch_add(1, Relaxed);
                            continue;
                        }
                        OV::Val(v) => v,
                    };
                    let mut v = value.clone();
                    let mut verdict_now = verdict(out, &v);
                    if let Verdict::Unsure = verdict_now {
                        RETRIED.fetch_add(1, Relaxed);
                        match &eval_program(&case.program, &qpt, PREC_RETRY)[o] {
                            OV::Val(w) => {
                                v = w.clone();
                                verdict_now = verdict(out, &v);
                            }
                            _ => verdict_now = Verdict::Unsure,
                        }
                    }
                    match verdict_now {
                        Verdict::Pass => {
                            CHECKED.fetch_add(1, Relaxed);
                        }
                        Verdict::Unsure => {
                            SKIP_AMBIG.fetch_add(1, Relaxed);
                        }
                        Verdict::Fail => {
                            let bx: Vec<String> = vars
                                .iter()
                                .map(|&i| format!("{} = {}", VAR_NAMES[i], hex_iv(&b[i])))
                                .collect();
                            let p: Vec<String> = vars
                                .iter()
                                .map(|&i| format!("{} = {}", VAR_NAMES[i], hex(pt[i])))
                                .collect();
                            let what = if out.is_empty() {
                                "ivjit returned EMPTY but the point has a value"
                            } else {
                                "ivjit's output does not contain the exact value"
                            };
                            return Err(TestCaseError::fail(format!(
                                "{what}\n  expression: {src}\n  output #{o}, precision {fmt:?}\n  box: {}\n  point: {}\n  ivjit: {}\n  exact value: {}",
                                bx.join(", "),
                                p.join(", "),
                                hex_iv(out),
                                qi_text(&v),
                            )));
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

const N_CASES: u32 = 5000;

#[test]
fn containment() {
    let start = std::time::Instant::now();
    let config = Config {
        cases: N_CASES,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(
            std::env::var("CONTAINMENT_SEED")
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(0x1788_c0de),
        ),
        max_shrink_iters: 4000,
        max_shrink_time: 120_000,
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let result = runner.run(&case_strategy(), |case| check_case(&case));
    eprintln!(
        "containment: {} cases (expression + box batch, f64 and f32), {} boxes ({} with an empty \
         variable), {} points, {} output values checked, skipped: {} without a value \
         (outside the domain), {} undecidable by the oracle; {} comparisons retried at {} bits; \
         {} empty outputs on nonempty boxes; {:.1} s",
        CASES.load(Relaxed),
        BOXES.load(Relaxed),
        EMPTY_BOXES.load(Relaxed),
        POINTS.load(Relaxed),
        CHECKED.load(Relaxed),
        SKIP_UNDEF.load(Relaxed),
        SKIP_AMBIG.load(Relaxed),
        RETRIED.load(Relaxed),
        PREC_RETRY,
        EMPTY_OUTPUTS.load(Relaxed),
        start.elapsed().as_secs_f64()
    );
    if let Err(e) = result {
        panic!("{e}");
    }
}

/// The oracle itself on a few known values.
#[test]
fn oracle_self_check() {
    let c = decimal_const(false, 0, 1, 1, None);
    assert_eq!(c.text, "0.1");
    assert_eq!(c.value, q_int(1) / q_int(10));
    let c = decimal_const(true, 2, 5, 2, Some(-3));
    assert_eq!(c.text, "(-2.05e-3)");
    assert_eq!(c.value, -(q_int(205) / q_int(100_000)));
    let c = dyadic_const(-3, -3, false);
    assert_eq!(c.text, "(-0.375)");
    assert_eq!(c.value, -(q_int(3) / q_int(8)));
    let c = dyadic_const(3, -3, true);
    assert_eq!(c.value, q_int(3) / q_int(8));
    let c = dyadic_const(5, 2, false);
    assert_eq!(c.text, "20");
    // sqrt(2) * sqrt(2) encloses 2; sqrt(9/4) is exact.
    let two = QI::point(q_int(2));
    let OV::Val(s) = sqrt(&two, PREC) else {
        panic!()
    };
    assert!(!s.pt && s.lo < s.hi);
    let p = mul(&s, &s);
    assert!(p.lo < q_int(2) && q_int(2) < p.hi);
    assert!(&p.hi - &p.lo < q_of(2f64.powi(-190)));
    let OV::Val(s) = sqrt(&QI::point(q_int(9) / q_int(4)), PREC) else {
        panic!()
    };
    assert!(s.pt && s.lo == q_int(3) / q_int(2));
    // tiny arguments keep relative precision
    let t = q_of(f64::from_bits(3));
    let OV::Val(s) = sqrt(&QI::point(t), PREC) else {
        panic!()
    };
    assert!((&s.hi - &s.lo) / &s.lo < q_of(2f64.powi(-190)));
    assert!(matches!(div(&two, &QI::point(Q::zero())), OV::Undef));
    assert!(matches!(sqrt(&neg(&two), PREC), OV::Undef));
    assert!(matches!(pown(&QI::point(Q::zero()), -2, PREC), OV::Undef));
    assert!(matches!(pown(&QI::point(Q::zero()), 0, PREC), OV::Val(_)));
    // a straddling divisor is undecidable
    let OV::Val(r2) = sqrt(&two, PREC) else {
        panic!()
    };
    assert!(matches!(div(&two, &add(&r2, &neg(&r2))), OV::Ambig));
}
