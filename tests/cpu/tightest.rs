//! The CPU results of the correctly rounded interval operations equal the tightest enclosure.
//!
//! For each operation (add, sub, mul, div, sqr, sqrt, fma, recip, neg, abs, min, max, hull,
//! intersect, pown for n in -1..=2; pown(x, -2) is 1/sqr(x), two roundings, and not promised tightest), in f64 and in f32, many argument tuples (every combination of
//! a list of special intervals, plus random ones: finite, infinite, zero, signed zero, subnormal,
//! huge, empty) go through the CPU evaluator in one batch. The expected result is computed here,
//! independently of ivjit: the IEEE 1788 set-based definition of the operation applied to the
//! exact rational endpoints (extended with ±inf), then each bound rounded outward with our own
//! exact rational -> float directed rounding. Bounds must be equal bit for bit, except that -0
//! and +0 are the same bound, and empty must equal empty.

use crate::common;

use common::oracle::*;
use ivjit::{BackendChoice, Evaluator, Expression, Interval, Precision};
use num_traits::{Signed, Zero};

/// A set-based interval with exact extended-real bounds; `None` is the empty set.
type Set = Option<(XR, XR)>;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Sqr,
    Sqrt,
    Fma,
    Recip,
    Neg,
    Abs,
    Min,
    Max,
    Hull,
    Intersect,
    Pown(i32),
}

impl Op {
    fn source(self) -> String {
        match self {
            Op::Add => "x + y".into(),
            Op::Sub => "x - y".into(),
            Op::Mul => "x * y".into(),
            Op::Div => "x / y".into(),
            Op::Sqr => "sqr(x)".into(),
            Op::Sqrt => "sqrt(x)".into(),
            Op::Fma => "fma(x, y, z)".into(),
            Op::Recip => "recip(x)".into(),
            Op::Neg => "-x".into(),
            Op::Abs => "abs(x)".into(),
            Op::Min => "min(x, y)".into(),
            Op::Max => "max(x, y)".into(),
            Op::Hull => "hull(x, y)".into(),
            Op::Intersect => "intersect(x, y)".into(),
            Op::Pown(n) => format!("pown(x, {n})"),
        }
    }
    fn arity(self) -> usize {
        match self {
            Op::Add
            | Op::Sub
            | Op::Mul
            | Op::Div
            | Op::Min
            | Op::Max
            | Op::Hull
            | Op::Intersect => 2,
            Op::Fma => 3,
            _ => 1,
        }
    }
}

const OPS: &[Op] = &[
    Op::Add,
    Op::Sub,
    Op::Mul,
    Op::Div,
    Op::Sqr,
    Op::Sqrt,
    Op::Fma,
    Op::Recip,
    Op::Neg,
    Op::Abs,
    Op::Min,
    Op::Max,
    Op::Hull,
    Op::Intersect,
    Op::Pown(-1),
    Op::Pown(0),
    Op::Pown(1),
    Op::Pown(2),
];

fn to_set(iv: &Interval) -> Set {
    if iv.is_empty() {
        None
    } else {
        Some((XR::of(iv.lo), XR::of(iv.hi)))
    }
}

fn one() -> XR {
    XR::int(1)
}

fn add(x: &Set, y: &Set) -> Set {
    let ((a, b), (c, d)) = (x.as_ref()?, y.as_ref()?);
    Some((a.add(c), b.add(d)))
}

fn neg(x: &Set) -> Set {
    let (a, b) = x.as_ref()?;
    Some((b.neg(), a.neg()))
}

/// Hull of the endpoint products, with 0 * inf = 0: the closure of {x*y}.
fn mul(x: &Set, y: &Set) -> Set {
    let ((a, b), (c, d)) = (x.as_ref()?, y.as_ref()?);
    let p = [a.mul(c), a.mul(d), b.mul(c), b.mul(d)];
    let lo = p.iter().min().unwrap().clone();
    let hi = p.iter().max().unwrap().clone();
    Some((lo, hi))
}

/// The closure of {x/y : x in X, y in Y, y != 0}, by the IEEE 1788 case table on the divisor.
fn div(x: &Set, y: &Set) -> Set {
    let ((a, b), (c, d)) = (x.as_ref()?, y.as_ref()?);
    let (sa, sb, sc, sd) = (a.signum(), b.signum(), c.signum(), d.signum());
    let entire = Some((XR::NegInf, XR::PosInf));
    if sc == 0 && sd == 0 {
        return None; // y = [0, 0]: no y != 0
    }
    if sa == 0 && sb == 0 {
        return Some((XR::zero(), XR::zero())); // 0 / y = 0 for every nonzero y
    }
    if sc > 0 {
        // y positive
        if sa >= 0 {
            Some((a.div(d), b.div(c)))
        } else if sb <= 0 {
            Some((a.div(c), b.div(d)))
        } else {
            Some((a.div(c), b.div(c)))
        }
    } else if sd < 0 {
        // y negative
        if sa >= 0 {
            Some((b.div(d), a.div(c)))
        } else if sb <= 0 {
            Some((b.div(c), a.div(d)))
        } else {
            Some((b.div(d), a.div(d)))
        }
    } else if sc == 0 {
        // y = [0, d], d > 0
        if sa >= 0 {
            Some((a.div(d), XR::PosInf))
        } else if sb <= 0 {
            Some((XR::NegInf, b.div(d)))
        } else {
            entire
        }
    } else if sd == 0 {
        // y = [c, 0], c < 0
        if sa >= 0 {
            Some((XR::NegInf, a.div(c)))
        } else if sb <= 0 {
            Some((b.div(c), XR::PosInf))
        } else {
            entire
        }
    } else {
        // c < 0 < d and x != [0, 0]
        entire
    }
}

fn sqr(x: &Set) -> Set {
    let (a, b) = x.as_ref()?;
    let (a2, b2) = (a.mul(a), b.mul(b));
    if a.signum() >= 0 {
        Some((a2, b2))
    } else if b.signum() <= 0 {
        Some((b2, a2))
    } else {
        Some((XR::zero(), a2.max(b2)))
    }
}

fn abs(x: &Set) -> Set {
    let (a, b) = x.as_ref()?;
    if a.signum() >= 0 {
        Some((a.clone(), b.clone()))
    } else if b.signum() <= 0 {
        Some((b.neg(), a.neg()))
    } else {
        Some((XR::zero(), a.neg().max(b.clone())))
    }
}

fn min(x: &Set, y: &Set) -> Set {
    let ((a, b), (c, d)) = (x.as_ref()?, y.as_ref()?);
    Some((a.clone().min(c.clone()), b.clone().min(d.clone())))
}

fn max(x: &Set, y: &Set) -> Set {
    let ((a, b), (c, d)) = (x.as_ref()?, y.as_ref()?);
    Some((a.clone().max(c.clone()), b.clone().max(d.clone())))
}

fn hull(x: &Set, y: &Set) -> Set {
    match (x, y) {
        (None, _) => y.clone(),
        (_, None) => x.clone(),
        (Some((a, b)), Some((c, d))) => Some((a.clone().min(c.clone()), b.clone().max(d.clone()))),
    }
}

fn intersect(x: &Set, y: &Set) -> Set {
    let ((a, b), (c, d)) = (x.as_ref()?, y.as_ref()?);
    let lo = a.clone().max(c.clone());
    let hi = b.clone().min(d.clone());
    if lo > hi {
        None
    } else {
        Some((lo, hi))
    }
}

fn recip(x: &Set) -> Set {
    div(&Some((one(), one())), x)
}

/// The exact set result of an operation (not for sqrt, whose bounds are irrational).
fn exact(op: Op, args: &[Set]) -> Set {
    match op {
        Op::Add => add(&args[0], &args[1]),
        Op::Sub => add(&args[0], &neg(&args[1])),
        Op::Mul => mul(&args[0], &args[1]),
        Op::Div => div(&args[0], &args[1]),
        Op::Sqr => sqr(&args[0]),
        Op::Fma => add(&mul(&args[0], &args[1]), &args[2]),
        Op::Recip => recip(&args[0]),
        Op::Neg => neg(&args[0]),
        Op::Abs => abs(&args[0]),
        Op::Min => min(&args[0], &args[1]),
        Op::Max => max(&args[0], &args[1]),
        Op::Hull => hull(&args[0], &args[1]),
        Op::Intersect => intersect(&args[0], &args[1]),
        Op::Pown(0) => args[0].as_ref().map(|_| (one(), one())),
        Op::Pown(1) => args[0].clone(),
        Op::Pown(2) => sqr(&args[0]),
        Op::Pown(-1) => recip(&args[0]),
        Op::Pown(-2) => recip(&sqr(&args[0])),
        Op::Pown(_) | Op::Sqrt => unreachable!(),
    }
}

/// The tightest enclosure in the format: the exact set rounded outward.
fn tightest(op: Op, args: &[Interval], fmt: Fmt) -> Interval {
    if op == Op::Sqrt {
        let x = &args[0];
        if x.is_empty() || x.hi < 0.0 {
            return Interval::EMPTY;
        }
        return Interval {
            lo: sqrt_round(x.lo.max(0.0), fmt, true),
            hi: sqrt_round(x.hi, fmt, false),
        };
    }
    let sets: Vec<Set> = args.iter().map(to_set).collect();
    match exact(op, &sets) {
        None => Interval::EMPTY,
        Some((lo, hi)) => {
            assert!(lo <= hi && lo != XR::PosInf && hi != XR::NegInf);
            Interval {
                lo: round_x(&lo, fmt, true),
                hi: round_x(&hi, fmt, false),
            }
        }
    }
}

/// Bitwise equality of bounds with -0 == +0, and empty == empty.
fn same(a: &Interval, b: &Interval) -> bool {
    if a.lo.is_nan() || a.hi.is_nan() || b.lo.is_nan() || b.hi.is_nan() {
        return a.lo.is_nan() && a.hi.is_nan() && b.lo.is_nan() && b.hi.is_nan();
    }
    a.lo == b.lo && a.hi == b.hi
}

/// A small deterministic generator (splitmix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        common::rng::splitmix64(&mut self.0)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }
    fn sign(&mut self) -> f64 {
        if self.next() & 1 == 0 {
            1.0
        } else {
            -1.0
        }
    }
}

/// A value of the format with a random significand and an exponent in [e0, e1] (clamped).
fn with_exponent(rng: &mut Rng, fmt: Fmt, e0: i64, e1: i64) -> f64 {
    let e = rng.range(e0, e1).clamp(fmt.emin(), fmt.emax());
    let p = fmt.precision();
    let m = (1u64 << (p - 1)) | (rng.next() & ((1u64 << (p - 1)) - 1));
    // m * 2^(e - p + 1), built by exact scaling in two steps to stay in range.
    let mut v = m as f64;
    let mut k = e - p + 1;
    while k > 0 {
        let s = k.min(500);
        v *= 2f64.powi(s as i32);
        k -= s;
    }
    while k < 0 {
        let s = (-k).min(500);
        v /= 2f64.powi(s as i32);
        k += s;
    }
    assert!(fmt.holds(v));
    v
}

/// A random value of the format, from a mix of classes (never NaN).
fn rand_value(rng: &mut Rng, fmt: Fmt) -> f64 {
    let (emin, emax, p) = (fmt.emin(), fmt.emax(), fmt.precision());
    let v = match rng.below(14) {
        0 => rng.range(-10, 10) as f64,
        1 => rng.sign() * rng.range(1, 64) as f64 / 2f64.powi(rng.range(0, 8) as i32),
        2 => rng.sign() * with_exponent(rng, fmt, -6, 6),
        3 => rng.sign() * with_exponent(rng, fmt, emin, emax),
        4 => {
            // random subnormal
            let bits = 1 + rng.below((1u64 << (p - 1)) - 1);
            let v = match fmt {
                Fmt::F64 => f64::from_bits(bits),
                Fmt::F32 => f32::from_bits(bits as u32) as f64,
            };
            rng.sign() * v
        }
        5 => rng.sign() * with_exponent(rng, fmt, emin - 1, emin + p + 2), // near the smallest normal
        6 => rng.sign() * with_exponent(rng, fmt, emax - 3, emax),         // near overflow
        7 => rng.sign() * with_exponent(rng, fmt, emax / 2 - 3, emax / 2 + 3), // products overflow
        8 => rng.sign() * with_exponent(rng, fmt, emin / 2 - 30, emin / 2 + 3), // products underflow
        9 => [0.0, -0.0][rng.below(2) as usize],
        10 => rng.sign() * [fmt.max(), fmt.min_positive_subnormal(), 1.0][rng.below(3) as usize],
        11 => rng.sign() * f64::INFINITY,
        12 => {
            // values one ulp around small integers
            let x = rng.range(-4, 4) as f64;
            if rng.next() & 1 == 0 {
                fmt.next_up(x)
            } else {
                fmt.next_down(x)
            }
        }
        _ => rng.sign() * with_exponent(rng, fmt, -60, 60),
    };
    assert!(fmt.holds(v));
    v
}

/// A random interval of the format: empty, entire, points, or two sorted values.
fn rand_interval(rng: &mut Rng, fmt: Fmt) -> Interval {
    match rng.below(40) {
        0 | 1 => Interval::EMPTY,
        2 => Interval::ENTIRE,
        3..=7 => loop {
            let v = rand_value(rng, fmt);
            if v.is_finite() {
                break Interval { lo: v, hi: v };
            }
        },
        _ => {
            let (a, b) = (rand_value(rng, fmt), rand_value(rng, fmt));
            let (mut lo, mut hi) = if a <= b { (a, b) } else { (b, a) };
            if lo == f64::INFINITY {
                lo = fmt.max();
            }
            if hi == f64::NEG_INFINITY {
                hi = -fmt.max();
            }
            Interval::new(lo, hi).unwrap()
        }
    }
}

/// Hand-picked intervals whose combinations cover the case tables.
fn specials(fmt: Fmt) -> Vec<Interval> {
    let max = fmt.max();
    let tiny = fmt.min_positive_subnormal();
    let third = round_down(&(q_of(1.0) / q_of(3.0)), fmt);
    let iv = |lo: f64, hi: f64| Interval::new(lo, hi).unwrap();
    let inf = f64::INFINITY;
    vec![
        Interval::EMPTY,
        Interval::ENTIRE,
        iv(0.0, 0.0),
        iv(-0.0, 0.0),
        iv(-0.0, -0.0),
        iv(0.0, 2.0),
        iv(-0.0, 3.0),
        iv(-2.0, 0.0),
        iv(-3.0, -0.0),
        iv(1.0, 2.0),
        iv(-2.0, -1.0),
        iv(-1.0, 1.0),
        iv(-3.0, 2.0),
        iv(third, 3.0),
        iv(-third, third),
        iv(0.0, inf),
        iv(-0.0, inf),
        iv(-inf, 0.0),
        iv(-inf, -0.0),
        iv(1.0, inf),
        iv(-inf, -1.0),
        iv(-1.0, inf),
        iv(-inf, 1.0),
        iv(max, max),
        iv(-max, max),
        iv(max, inf),
        iv(-inf, -max),
        iv(tiny, tiny),
        iv(-tiny, tiny),
        iv(0.0, tiny),
        iv(-tiny, -tiny),
        iv(3.0, 3.0),
        iv(third, third),
    ]
}

/// All argument tuples for an operation: every combination of specials (fma: of a shorter
/// list), plus `n_random` random tuples.
fn cases(op: Op, fmt: Fmt, n_random: usize, rng: &mut Rng) -> Vec<Vec<Interval>> {
    let sp = specials(fmt);
    let mut out: Vec<Vec<Interval>> = Vec::new();
    match op.arity() {
        1 => out.extend(sp.iter().map(|a| vec![*a])),
        2 => {
            for a in &sp {
                for b in &sp {
                    out.push(vec![*a, *b]);
                }
            }
        }
        _ => {
            let short: Vec<Interval> = sp.iter().step_by(2).copied().collect();
            for a in &short {
                for b in &short {
                    for c in &short {
                        out.push(vec![*a, *b, *c]);
                    }
                }
            }
        }
    }
    for _ in 0..n_random {
        out.push((0..op.arity()).map(|_| rand_interval(rng, fmt)).collect());
    }
    out
}

fn args_hex(args: &[Interval]) -> String {
    let names = ["x", "y", "z"];
    args.iter()
        .enumerate()
        .map(|(i, a)| format!("{} = {}", names[i], hex_iv(a)))
        .collect::<Vec<_>>()
        .join(", ")
}

fn check_op(op: Op, fmt: Fmt, n_random: usize, seed: u64) -> (usize, Vec<String>) {
    let mut rng = Rng(seed);
    let src = op.source();
    let expr = Expression::parse(&src).unwrap_or_else(|e| panic!("parse {src}: {e}"));
    let vars: Vec<&str> = expr.vars().iter().map(|s| s.as_str()).collect();
    let expected_vars: Vec<&str> = ["x", "y", "z"][..op.arity()].to_vec();
    assert_eq!(vars, expected_vars, "variables of {src}");
    let precision = match fmt {
        Fmt::F64 => Precision::F64,
        Fmt::F32 => Precision::F32,
    };
    let eval = Evaluator::new(&expr, precision, BackendChoice::Cpu).unwrap();
    let boxes = cases(op, fmt, n_random, &mut rng);
    let results = eval.eval_many(&boxes).unwrap();
    let mut failures = Vec::new();
    for (args, res) in boxes.iter().zip(&results) {
        assert_eq!(res.len(), 1);
        let got = res[0];
        let want = tightest(op, args, fmt);
        if !same(&got, &want) {
            let sound =
                want.is_empty() || (!got.is_empty() && got.lo <= want.lo && want.hi <= got.hi);
            failures.push(format!(
                "{src} [{fmt:?}] with {}: expected {}, got {} ({})",
                args_hex(args),
                hex_iv(&want),
                hex_iv(&got),
                if sound {
                    "wider than tightest"
                } else {
                    "DOES NOT CONTAIN the tightest enclosure"
                }
            ));
        }
    }
    (boxes.len(), failures)
}

const N_RANDOM: usize = 50000;

fn run(fmt: Fmt, seed: u64) {
    let start = std::time::Instant::now();
    let mut total = 0;
    let mut all_failures = Vec::new();
    for (i, &op) in OPS.iter().enumerate() {
        let (n, failures) = check_op(op, fmt, N_RANDOM, seed.wrapping_add(i as u64 * 7919));
        eprintln!(
            "tightest {:?} {:<16} {n:>6} cases, {} mismatches",
            fmt,
            op.source(),
            failures.len()
        );
        total += n;
        all_failures.extend(failures.into_iter().take(10));
    }
    eprintln!(
        "tightest {fmt:?}: {total} cases over {} operations in {:.1} s",
        OPS.len(),
        start.elapsed().as_secs_f64()
    );
    assert!(
        all_failures.is_empty(),
        "{} mismatches (at most 10 per operation shown):\n{}",
        all_failures.len(),
        all_failures.join("\n")
    );
}

#[test]
fn tightest_f64() {
    run(Fmt::F64, 0x1788_0064);
}

#[test]
fn tightest_f32() {
    run(Fmt::F32, 0x1788_0032);
}

/// The oracle's own rounding, checked on values whose roundings are known.
#[test]
fn oracle_rounding_self_check() {
    let mut rng = Rng(42);
    for fmt in [Fmt::F64, Fmt::F32] {
        // Every value of the format rounds to itself.
        for _ in 0..2000 {
            let v = rand_value(&mut rng, fmt);
            if v.is_finite() {
                let q = q_of(v);
                assert_eq!(round_down(&q, fmt), v);
                assert_eq!(round_up(&q, fmt), v);
            }
        }
        // Halfway and just-off points between neighbours round to the neighbours.
        for _ in 0..2000 {
            let v = rand_value(&mut rng, fmt);
            let w = fmt.next_up(v);
            if v.is_finite() && w.is_finite() {
                let mid = (q_of(v) + q_of(w)) / q_of(2.0);
                assert_eq!(round_down(&mid, fmt), v);
                assert_eq!(round_up(&mid, fmt), w);
            }
        }
        // Overflow: above MAX rounds down to MAX and up to inf; mirrored below -MAX.
        let big = q_of(fmt.max()) * q_of(1.5);
        assert_eq!(round_down(&big, fmt), fmt.max());
        assert_eq!(round_up(&big, fmt), f64::INFINITY);
        assert_eq!(round_down(&-big.clone(), fmt), f64::NEG_INFINITY);
        assert_eq!(round_up(&-big, fmt), -fmt.max());
        // Below the smallest subnormal.
        let small = q_of(fmt.min_positive_subnormal()) / q_of(3.0);
        assert_eq!(round_down(&small, fmt), 0.0);
        assert_eq!(round_up(&small, fmt), fmt.min_positive_subnormal());
        assert_eq!(round_up(&-small.clone(), fmt), 0.0);
        assert_eq!(round_down(&-small, fmt), -fmt.min_positive_subnormal());
        // 1/10 lies strictly between the directed roundings, one ulp apart.
        let tenth = q_of(1.0) / q_of(10.0);
        let (d, u) = (round_down(&tenth, fmt), round_up(&tenth, fmt));
        assert_eq!(fmt.next_up(d), u);
        assert!(q_of(d) < tenth && tenth < q_of(u));
        // Square roots.
        assert_eq!(sqrt_round(4.0, fmt, true), 2.0);
        assert_eq!(sqrt_round(4.0, fmt, false), 2.0);
        let (d, u) = (sqrt_round(2.0, fmt, true), sqrt_round(2.0, fmt, false));
        assert_eq!(fmt.next_up(d), u);
        assert!(q_of(d) * q_of(d) < q_of(2.0) && q_of(u) * q_of(u) > q_of(2.0));
        assert!(!q_of(d).is_negative() && !q_of(u).is_zero());
    }
}
