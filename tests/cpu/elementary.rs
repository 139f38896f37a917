// Reference values keep the digits of their source (mpmath at 2000 bits); NaN-aware comparisons
// are written with negation on purpose.
#![allow(
    clippy::excessive_precision,
    clippy::neg_cmp_op_on_partial_ord,
    clippy::approx_constant
)]
//! Elementary functions: containment against a rigorous multiple-precision oracle.
//!
//! For every elementary function (exp, exp2, exp10, expm1, log, log2, log10, log1p, sin, cos,
//! tan, asin, acos, atan, sinh, cosh, tanh, asinh, acosh, atanh, cbrt, rootn(x, n) for
//! n = 2..5, sinpi, cospi, erf, erfc, floor, ceil, trunc, round, rint, sign, and the binary atan2, pow,
//! hypot) and each precision (f64; f32 with f32-representable box bounds), we build a sorted
//! pool of points: random values over the whole exponent range plus the function's stress
//! cases (huge trigonometric arguments up to f64::MAX and 2^1000, the floats next to k*pi/2 for
//! small and large k and the hardest known case for argument reduction, the domain edges of
//! log / log1p / acosh / atanh / asin / acos / rootn, overflow and underflow thresholds,
//! subnormals, signed zeros, halves and integers for the rounding functions, x near 0 and 1 and
//! negative / zero / integer y for pow, ...), each with its neighbours one ulp away.
//! Boxes have bounds from the pool (a zero bound gets a random sign), or infinite bounds:
//! points, narrow, wide, half-unbounded and entire boxes, plus empty ones. Every box is
//! evaluated by ivjit in one `eval_soa` batch. In each box we sample points (finite endpoints,
//! the pool's extreme finite values for infinite bounds, random interior pool points; for the
//! binary functions combinations of both) and check that ivjit's interval contains the oracle's
//! rigorous enclosure of f(point) (see tests/common/elem_oracle.rs: astro-float with directed
//! rounding at 192+ bits, widened by 2^-(p-24) relative; comparisons are exact). Points outside
//! the domain are skipped (set-based semantics). Per box we also check: empty in gives empty
//! out; the result is empty if and only if the box misses the domain.
//!
//! The comparison first uses f64 bounds of the oracle enclosure (rounded outward, exact), and
//! when that is not conclusive a Ziv loop up to 3072 bits with exact rational checks of the
//! algebraic exact cases. Failures are collected (with a one-point minimization) and reported.
//!
//! `cpu::*` run here; `gpu::*` run the same cases with `BackendChoice::Gpu` and 10^6 boxes per
//! function and precision (`ELEMENTARY_GPU_BOXES` changes that), and skip without a GPU;
//! `ELEMENTARY_CPU_BOXES` changes the 4000 of `cpu::*`.
//! Seeds are fixed; `ELEMENTARY_SEED=<u64>` runs another one.

use crate::common;

use common::elem_oracle::{self as eo, Enc, Val};
use common::oracle::Fmt;
use ivjit::internals::syntax::number::hexf64;
use ivjit::{BackendChoice, Evaluator, Expression, Interval, Precision};
use rayon::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Mutex;

// ---------------------------------------------------------------- random numbers

struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9e37_79b9_7f4a_7c15)
    }
    fn next(&mut self) -> u64 {
        common::rng::splitmix64(&mut self.0)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }
    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }
}

fn seed(name: &str, fmt: Fmt) -> u64 {
    let base: u64 = std::env::var("ELEMENTARY_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x1788_2015);
    let mut h = base ^ if fmt == Fmt::F32 { 0x32 } else { 0x64 };
    for b in name.bytes() {
        h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
    }
    h
}

// ---------------------------------------------------------------- functions

fn source(f: &str) -> String {
    match f {
        "atan2" => "atan2(y, x)".into(),
        "pow" => "pow(x, y)".into(),
        "hypot" => "hypot(x, y)".into(),
        _ if f.starts_with("rootn") => format!("rootn(x, {})", &f[5..]),
        _ => format!("{f}(x)"),
    }
}

fn arity(f: &str) -> usize {
    if eo::BINARY.contains(&f) {
        2
    } else {
        1
    }
}

/// Whether the (nonempty) box meets the function's domain.
fn meets_domain(f: &str, b: &[(f64, f64)]) -> bool {
    let (lo, hi) = b[0];
    match f {
        "log" | "log2" | "log10" => hi > 0.0,
        "log1p" => hi > -1.0,
        "asin" | "acos" => lo <= 1.0 && hi >= -1.0,
        "acosh" => hi >= 1.0,
        "atanh" => lo < 1.0 && hi > -1.0,
        "rootn2" | "rootn4" => hi >= 0.0,
        "csc" | "cot" | "csch" | "coth" | "acsch" => !(lo == 0.0 && hi == 0.0),
        "acoth" => hi > 1.0 || lo < -1.0,
        "asech" => hi > 0.0 && lo <= 1.0,
        "atan2" => {
            let (xl, xh) = b[1];
            !(lo == 0.0 && hi == 0.0 && xl == 0.0 && xh == 0.0)
        }
        "pow" => {
            let (_, yh) = b[1];
            hi > 0.0 || (hi == 0.0 && yh > 0.0)
        }
        _ => true,
    }
}

fn to_fmt(fmt: Fmt, x: f64) -> f64 {
    match fmt {
        Fmt::F64 => x,
        Fmt::F32 => {
            let y = x as f32;
            if y.is_infinite() {
                (f32::MAX as f64).copysign(x)
            } else {
                y as f64
            }
        }
    }
}

fn common_specials(fmt: Fmt) -> Vec<f64> {
    let sub = fmt.min_positive_subnormal();
    let minn = match fmt {
        Fmt::F64 => f64::MIN_POSITIVE,
        Fmt::F32 => f32::MIN_POSITIVE as f64,
    };
    let mut v = vec![
        0.0,
        sub,
        sub * 2.0,
        sub * 3.0,
        sub * 12345.0,
        minn,
        minn / 2.0,
        fmt.next_down(minn),
        0.5,
        1.0,
        1.5,
        2.0,
        3.0,
        10.0,
        0.1,
        1e-10,
        1e10,
        fmt.max(),
        1e300,
        1e-300,
        2f64.powi(1000),
        2f64.powi(-1000),
        2f64.powi(-1022),
        1e30,
        1e-30,
        2f64.powi(100),
        2f64.powi(-100),
        1e38,
    ];
    let neg: Vec<f64> = v.iter().map(|x| -x).collect();
    v.extend(neg);
    v
}

fn pi_multiples(rng: &mut Rng, v: &mut Vec<f64>) {
    let h = std::f64::consts::FRAC_PI_2;
    for k in 1..=12 {
        v.push(h * k as f64);
    }
    for _ in 0..40 {
        let k = (rng.next() >> rng.below(64)) as f64;
        v.push(h * k);
    }
    // The double closest to a multiple of pi/2 (Kahan / Muller: 6381956970095103 * 2^797).
    v.push(6381956970095103.0 * 2f64.powi(797));
    v.push(5_319_372_648_326_381.0 * 2f64.powi(-50)); // ~ 4.7 near 3pi/2
    v.push(f64::MAX);
    v.push(1e22);
    v.push(2f64.powi(1023));
    v.push(2f64.powi(53));
    v.push(2f64.powi(64));
}

/// The stress values of one function (before the f32 conversion and the neighbours).
fn specials(f: &str, rng: &mut Rng, fmt: Fmt) -> Vec<f64> {
    let mut v = common_specials(fmt);
    let ln2 = std::f64::consts::LN_2;
    match f {
        "erf" | "erfc" => {
            // Where erf rounds to 1 (f64 near 5.92, f32 near 3.92), where erfc becomes
            // subnormal (26.54 in f64, 9.19 in f32) and underflows (27.23 / 10.06), the
            // oracle's cut at 28, and small arguments where erf(x) ~ 2x/sqrt(pi).
            v.extend([
                5.921587195794507,
                -5.921587195794507,
                3.9192059,
                26.543,
                27.2262,
                27.9999,
                28.0,
                9.194,
                10.0542,
                -6.0,
                0.5,
                1e-8,
                2f64.powi(-30),
                -1e-8,
            ]);
            for _ in 0..40 {
                v.push(rng.range(-30.0, 30.0));
            }
        }
        "exp" | "expm1" | "sinh" | "cosh" | "tanh" => {
            v.extend([
                709.782712893384,
                709.7827128933841,
                -745.1332191019411,
                -745.1332191019412,
                -708.3964185322641,
                710.4758600739439,
                88.72283,
                -103.97208,
                -87.33655,
                89.41599,
                19.0,
                20.0,
                36.0,
                1e-8,
                2f64.powi(-30),
                2f64.powi(-60),
                -1e-8,
                ln2,
                -ln2,
                1e4,
                -1e4,
            ]);
        }
        "exp2" => v.extend([
            1024.0, 1023.0, 1023.9999, -1074.0, -1075.0, -1022.0, -1073.5, 128.0, -149.0, -150.0,
            127.99, -126.0, 0.5, -0.5,
        ]),
        "exp10" => v.extend([
            308.2547155599167,
            308.25471555991675,
            -323.3062153431158,
            -307.0,
            22.0,
            23.0,
            38.53,
            -45.0,
            -44.85,
            5.0,
            0.5,
        ]),
        "log" | "log2" | "log10" | "acosh" => {
            for k in 0..8 {
                v.push(1.0 + k as f64 * f64::EPSILON);
                v.push(1.0 - k as f64 * f64::EPSILON / 2.0);
            }
            v.extend([1024.0, 1000.0, 1e22, 1e23, 100.0, 2f64.powi(-1074)]);
        }
        "log1p" => {
            v.extend([
                -1.0,
                -1.0 + f64::EPSILON / 2.0,
                -0.9999999,
                1e-300,
                -1e-300,
                2f64.powi(-60),
                -2f64.powi(-60),
                f64::EPSILON,
                -0.5,
                -0.75,
            ]);
        }
        "sin" | "cos" | "tan" | "sec" | "csc" | "cot" => {
            pi_multiples(rng, &mut v);
            let pm: Vec<f64> = v.iter().map(|x| -x).collect();
            v.extend(pm);
            v.extend([
                std::f32::consts::FRAC_PI_2 as f64,
                std::f32::consts::PI as f64,
                3.0 * std::f32::consts::FRAC_PI_2 as f64,
                f32::MAX as f64,
            ]);
        }
        "sech" | "csch" | "coth" => v.extend([
            709.782712893384,
            710.4758600739439,
            -710.4758600739439,
            20.0,
            -20.0,
            1e-8,
            -1e-8,
            2f64.powi(-1074),
            89.41599,
        ]),
        "acot" | "acoth" | "asech" | "acsch" => {
            for k in 0..6 {
                v.push(1.0 - k as f64 * f64::EPSILON / 2.0);
                v.push(-1.0 - k as f64 * f64::EPSILON);
                v.push(1.0 + k as f64 * f64::EPSILON);
            }
            v.extend([
                2f64.powi(-1074),
                -2f64.powi(-1074),
                1e-300,
                1e300,
                2f64.powi(1023),
            ]);
        }
        "asin" | "acos" | "atanh" => {
            for k in 0..6 {
                v.push(1.0 - k as f64 * f64::EPSILON / 2.0);
                v.push(-1.0 + k as f64 * f64::EPSILON / 2.0);
                v.push(1.0 + k as f64 * f64::EPSILON);
            }
            v.extend([0.5, -0.5, 0.99, -0.99, 0.9999999]);
        }
        "atan" | "asinh" => v.extend([2f64.powi(60), 1e16, -2f64.powi(60)]),
        "cbrt" | "rootn2" | "rootn3" | "rootn4" | "rootn5" => {
            v.extend([
                8.0, -8.0, 27.0, -27.0, 16.0, 81.0, 32.0, -32.0, 0.125, 1024.0,
            ]);
            v.extend([2f64.powi(-1074), 2f64.powi(-1073), 64.0, -64.0, 1e-320]);
        }
        "sinpi" | "cospi" => {
            for k in -8..=8 {
                v.push(k as f64 * 0.5);
                v.push(k as f64 * 0.25);
                v.push(k as f64 / 6.0);
            }
            v.extend([
                2f64.powi(52),
                2f64.powi(52) + 1.0,
                2f64.powi(53),
                2f64.powi(53) + 2.0,
                2f64.powi(51) + 0.5,
                2f64.powi(51) + 1.5,
                2f64.powi(23),
                2f64.powi(23) + 1.0,
                2f64.powi(22) + 0.5,
                4503599627370495.5,
            ]);
        }
        "floor" | "ceil" | "trunc" | "round" | "rint" => {
            for k in -10..=10 {
                v.push(k as f64 * 0.5);
            }
            v.extend([
                2f64.powi(52) - 0.5,
                2f64.powi(52),
                2f64.powi(52) + 1.0,
                2f64.powi(53),
                4503599627370495.5,
                -4503599627370495.5,
                8388607.5,
                8388608.0,
                0.49999999999999994,
                -0.49999999999999994,
            ]);
        }
        _ => {}
    }
    v
}

fn random_value(rng: &mut Rng, fmt: Fmt) -> f64 {
    let s = if rng.chance(0.5) { -1.0 } else { 1.0 };
    let v = match rng.below(6) {
        0 | 1 => {
            let (lo, hi) = match fmt {
                Fmt::F64 => (-1074, 1023),
                Fmt::F32 => (-149, 127),
            };
            let e = lo + rng.below((hi - lo + 1) as usize) as i32;
            rng.range(1.0, 2.0) * 2f64.powi(e)
        }
        2 => rng.range(0.0, 10.0),
        3 => rng.range(0.0, 1.0),
        4 => 2f64.powi(rng.below(60) as i32 - 30) * rng.range(1.0, 2.0),
        _ => (rng.below(2000) as f64) / 8.0,
    };
    to_fmt(fmt, s * v)
}

/// A sorted pool of distinct finite values of the format.
fn make_pool(f: &str, fmt: Fmt, n_random: usize, rng: &mut Rng) -> Vec<f64> {
    let mut v = Vec::new();
    for s in specials(f, rng, fmt) {
        let s = to_fmt(fmt, s);
        v.push(s);
        v.push(fmt.next_up(s));
        v.push(fmt.next_down(s));
    }
    for _ in 0..n_random {
        v.push(random_value(rng, fmt));
    }
    let mut v: Vec<f64> = v
        .into_iter()
        .filter(|x| x.is_finite())
        .map(|x| if x == 0.0 { 0.0 } else { x })
        .collect();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v.dedup();
    v
}

/// Pools for the binary functions (first and second argument).
fn binary_pools(f: &str, fmt: Fmt, n: usize, rng: &mut Rng) -> (Vec<f64>, Vec<f64>) {
    let mut a = Vec::new();
    let mut b = Vec::new();
    let finish = |mut v: Vec<f64>| {
        v = v
            .into_iter()
            .map(|x| to_fmt(fmt, x))
            .filter(|x| x.is_finite())
            .map(|x| if x == 0.0 { 0.0 } else { x })
            .collect();
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        v.dedup();
        v
    };
    let core = [
        0.0,
        fmt.min_positive_subnormal(),
        1.0,
        fmt.next_up(1.0),
        fmt.next_down(1.0),
        2.0,
        3.0,
        4.0,
        0.5,
        1e300,
        fmt.max(),
        1e-300,
        1e30,
        1e-30,
    ];
    match f {
        "pow" => {
            a.extend(core);
            a.extend([10.0, 0.1, 0.25, 9.0, 1024.0, 2f64.powi(-1022), 0.75]);
            a.extend([-1.0, -2.0, -0.5, -1e-300]); // outside the domain
            b.extend([
                0.0,
                0.5,
                -0.5,
                1.0,
                -1.0,
                2.0,
                -2.0,
                3.0,
                -3.0,
                5.0,
                10.0,
                -10.0,
                0.25,
                1.5,
                1e3,
                -1e3,
                1e300,
                -1e300,
                1e-300,
                1074.0,
                -1074.0,
                1023.0,
                0.1,
                -0.1,
                1.0 / 3.0,
            ]);
        }
        _ => {
            for c in core {
                a.push(c);
                a.push(-c);
                b.push(c);
                b.push(-c);
            }
            a.extend([5.0, -5.0, 1e200, -1e200, 1e-200, 1e-320]);
            b.extend([12.0, -12.0, 1e200, -1e-200, 1e-320, -1e300]);
        }
    }
    while a.len() < n {
        a.push(random_value(rng, fmt));
    }
    while b.len() < n {
        let y = random_value(rng, fmt);
        b.push(if f == "pow" && rng.chance(0.5) {
            (y * 4.0).round() / 4.0
        } else {
            y
        });
    }
    (finish(a), finish(b))
}

// ---------------------------------------------------------------- boxes

/// One argument of a box: bounds and the pool index range of its sample points.
#[derive(Clone, Copy)]
struct Arg {
    lo: f64,
    hi: f64,
    i: usize,
    j: usize,
}

fn random_arg(pool: &[f64], rng: &mut Rng) -> Arg {
    let n = pool.len();
    let i = rng.below(n);
    let (mut i, mut j) = match rng.below(10) {
        0 | 1 => (i, i),
        2..=5 => (i, (i + rng.below(6)).min(n - 1)),
        _ => {
            let k = rng.below(n);
            (i.min(k), i.max(k))
        }
    };
    let mut lo = pool[i];
    let mut hi = pool[j];
    match rng.below(12) {
        0 => {
            lo = f64::NEG_INFINITY;
            i = 0;
        }
        1 => {
            hi = f64::INFINITY;
            j = n - 1;
        }
        2 if rng.chance(0.3) => {
            lo = f64::NEG_INFINITY;
            hi = f64::INFINITY;
            i = 0;
            j = n - 1;
        }
        _ => {}
    }
    if lo == 0.0 && rng.chance(0.5) {
        lo = -0.0;
    }
    if hi == 0.0 && rng.chance(0.5) {
        hi = -0.0;
    }
    Arg { lo, hi, i, j }
}

/// Sample indices in one argument.
fn sample(a: &Arg, rng: &mut Rng, extra: usize) -> Vec<usize> {
    let mut v = vec![a.i, a.j];
    for _ in 0..extra {
        v.push(a.i + rng.below(a.j - a.i + 1));
    }
    v.sort_unstable();
    v.dedup();
    v
}

// ---------------------------------------------------------------- checking

#[derive(Default)]
struct Counts {
    boxes: AtomicUsize,
    empty_boxes: AtomicUsize,
    points: AtomicUsize,
    skipped: AtomicUsize,
    slow: AtomicUsize,
    failures: AtomicUsize,
}

const WORK_P: usize = 192;

fn le_f(x: f64, b: &astro_float::BigFloat) -> bool {
    x == f64::NEG_INFINITY || (x.is_finite() && eo::le(&eo::bf(x), b)) || b.is_inf_pos()
}

fn ge_f(x: f64, b: &astro_float::BigFloat) -> bool {
    x == f64::INFINITY || (x.is_finite() && eo::le(b, &eo::bf(x))) || b.is_inf_neg()
}

/// Whether [lo, hi] contains f(args), deciding with a Ziv loop; Err carries the last enclosure.
fn full_check(f: &str, args: &[f64], lo: f64, hi: f64) -> Result<(), Option<Enc>> {
    let mut last = None;
    let mut tried_exact = false;
    for p in [WORK_P, 384, 768, 1536, 3072] {
        let enc = match eo::point(f, args, p) {
            Val::Out => return Ok(()),
            Val::In(e) => e,
        };
        if le_f(lo, &enc.lo) && ge_f(hi, &enc.hi) {
            return Ok(());
        }
        let above = !ge_f(hi, &enc.lo) && !enc.lo.is_inf();
        let below = !le_f(lo, &enc.hi) && !enc.hi.is_inf();
        if above || below {
            return Err(Some(enc));
        }
        if !tried_exact {
            tried_exact = true;
            if eo::is_exact(f, args, lo) || eo::is_exact(f, args, hi) {
                return Ok(());
            }
        }
        last = Some(enc);
    }
    Err(last)
}

/// The oracle's f64 bounds at the working precision (outward), or None outside the domain.
fn oracle_f64(f: &str, args: &[f64]) -> Option<(f64, f64)> {
    match eo::point(f, args, WORK_P) {
        Val::Out => None,
        Val::In(e) => Some(e.to_f64()),
    }
}

fn hex_box(b: &[(f64, f64)]) -> String {
    b.iter()
        .map(|(l, h)| format!("[{}, {}]", hexf64(*l), hexf64(*h)))
        .collect::<Vec<_>>()
        .join(" x ")
}

fn prec_of(fmt: Fmt) -> Precision {
    match fmt {
        Fmt::F64 => Precision::F64,
        Fmt::F32 => Precision::F32,
    }
}

fn eval_all(ev: &Evaluator, boxes: &[Vec<(f64, f64)>], nv: usize) -> Vec<(f64, f64)> {
    let n = boxes.len();
    let mut soa = vec![0.0; 2 * nv * n];
    for (i, b) in boxes.iter().enumerate() {
        for (k, (l, h)) in b.iter().enumerate() {
            soa[2 * k * n + i] = *l;
            soa[(2 * k + 1) * n + i] = *h;
        }
    }
    let out = ev.eval_soa(&soa, n).expect("eval_soa");
    (0..n).map(|i| (out[i], out[n + i])).collect()
}

struct Setup {
    pools: Vec<Vec<f64>>,
    /// Oracle f64 bounds per pool point (unary) or per grid pair (binary, index i * |pool1| + j).
    table: Vec<Option<(f64, f64)>>,
}

fn setup(f: &str, fmt: Fmt, pool_n: usize, rng: &mut Rng) -> Setup {
    let pools = if arity(f) == 1 {
        vec![make_pool(f, fmt, pool_n, rng)]
    } else {
        let (a, b) = binary_pools(f, fmt, pool_n, rng);
        vec![a, b]
    };
    let table: Vec<Option<(f64, f64)>> = if arity(f) == 1 {
        pools[0].par_iter().map(|&x| oracle_f64(f, &[x])).collect()
    } else {
        let m = pools[1].len();
        (0..pools[0].len() * m)
            .into_par_iter()
            .map(|k| oracle_f64(f, &[pools[0][k / m], pools[1][k % m]]))
            .collect()
    };
    Setup { pools, table }
}

fn run(f: &str, backend: BackendChoice, fmt: Fmt, n_boxes: usize, pool_n: usize) -> Vec<String> {
    let t0 = std::time::Instant::now();
    let src = source(f);
    let expr = Expression::parse(&src).unwrap_or_else(|e| panic!("parse {src}: {e}"));
    let nv = arity(f);
    assert_eq!(expr.vars().len(), nv, "{src}: variables {:?}", expr.vars());
    let ev = Evaluator::new(&expr, prec_of(fmt), backend)
        .unwrap_or_else(|e| panic!("compile {src}: {e}"));
    let mut rng = Rng::new(seed(f, fmt));
    let st = setup(f, fmt, pool_n, &mut rng);
    let t_oracle = t0.elapsed();

    // Boxes and their sample points (as pool index tuples).
    let mut boxes: Vec<Vec<(f64, f64)>> = Vec::with_capacity(n_boxes + 8);
    let mut points: Vec<Vec<[usize; 2]>> = Vec::with_capacity(n_boxes + 8);
    for _ in 0..n_boxes {
        let args: Vec<Arg> = st.pools.iter().map(|p| random_arg(p, &mut rng)).collect();
        let mut pts = Vec::new();
        if nv == 1 {
            for i in sample(&args[0], &mut rng, 3) {
                pts.push([i, 0]);
            }
        } else {
            let s0 = sample(&args[0], &mut rng, 2);
            let s1 = sample(&args[1], &mut rng, 2);
            for &i in &s0 {
                for &j in &s1 {
                    if pts.len() < 9 {
                        pts.push([i, j]);
                    }
                }
            }
        }
        boxes.push(args.iter().map(|a| (a.lo, a.hi)).collect());
        points.push(pts);
    }
    // Empty boxes: all arguments empty, and (binary) one argument empty.
    let n_empty = if nv == 1 { 2 } else { 6 };
    for k in 0..n_empty {
        let mut b = vec![(f64::NAN, f64::NAN); nv];
        if nv == 2 && k >= 2 {
            b[k % 2] = (1.0, 2.0);
        }
        boxes.push(b);
        points.push(Vec::new());
    }
    let out = eval_all(&ev, &boxes, nv);
    let t_eval = t0.elapsed() - t_oracle;

    let counts = Counts::default();
    let details = Mutex::new(Vec::<String>::new());
    let report = |msg: String| {
        let n = counts.failures.fetch_add(1, Relaxed);
        if n < 12 {
            details.lock().unwrap().push(msg);
        }
    };
    let m = if nv == 2 { st.pools[1].len() } else { 1 };
    let pname = if fmt == Fmt::F64 { "f64" } else { "f32" };
    (0..boxes.len()).into_par_iter().for_each(|bi| {
        let b = &boxes[bi];
        let (lo, hi) = out[bi];
        counts.boxes.fetch_add(1, Relaxed);
        let res = format!("[{}, {}]", hexf64(lo), hexf64(hi));
        if b.iter().any(|(l, _)| l.is_nan()) {
            counts.empty_boxes.fetch_add(1, Relaxed);
            if !(lo.is_nan() && hi.is_nan()) {
                report(format!(
                    "{src} ({pname}): empty input {} gave {res}, expected [empty]",
                    hex_box(b)
                ));
            }
            return;
        }
        if lo.is_nan() || hi.is_nan() {
            if meets_domain(f, b) {
                report(format!(
                    "{src} ({pname}): box {} meets the domain but the result is {res}",
                    hex_box(b)
                ));
            }
            return;
        }
        if !meets_domain(f, b) {
            report(format!(
                "{src} ({pname}): box {} misses the domain, result {res} should be [empty]",
                hex_box(b)
            ));
        }
        for pt in &points[bi] {
            let args: Vec<f64> = (0..nv).map(|k| st.pools[k][pt[k]]).collect();
            let cached = if nv == 1 {
                st.table[pt[0]]
            } else {
                st.table[pt[0] * m + pt[1]]
            };
            let Some((dn, up)) = cached else {
                counts.skipped.fetch_add(1, Relaxed);
                continue;
            };
            counts.points.fetch_add(1, Relaxed);
            if lo <= dn && up <= hi {
                continue;
            }
            counts.slow.fetch_add(1, Relaxed);
            if counts.failures.load(Relaxed) > 200 {
                counts.failures.fetch_add(1, Relaxed);
                continue;
            }
            if let Err(enc) = full_check(f, &args, lo, hi) {
                // Minimize: the point itself as a box.
                let pbox: Vec<(f64, f64)> = args.iter().map(|&a| (a, a)).collect();
                let (plo, phi) = eval_all(&ev, std::slice::from_ref(&pbox), nv)[0];
                let pfail = full_check(f, &args, plo, phi).is_err();
                report(format!(
                    "{src} ({pname}, {backend:?}): box {} result {res} misses f at point ({}); \
                     oracle enclosure {}; point box {} gives [{}, {}]{}",
                    hex_box(b),
                    args.iter()
                        .map(|a| hexf64(*a))
                        .collect::<Vec<_>>()
                        .join(", "),
                    enc.map(|e| e.describe()).unwrap_or_else(|| "?".into()),
                    hex_box(&pbox),
                    hexf64(plo),
                    hexf64(phi),
                    if pfail {
                        " (also wrong)"
                    } else {
                        " (contains it)"
                    }
                ));
            }
        }
    });
    let failures = counts.failures.load(Relaxed);
    eprintln!(
        "{src} {pname} {backend:?}: pool {:?}, {} boxes ({} empty), {} points checked, {} \
         skipped (outside the domain), {} needed the slow path, {} failures; oracle {:.2?}, \
         eval {:.2?}, total {:.2?}",
        st.pools.iter().map(|p| p.len()).collect::<Vec<_>>(),
        counts.boxes.load(Relaxed),
        counts.empty_boxes.load(Relaxed),
        counts.points.load(Relaxed),
        counts.skipped.load(Relaxed),
        counts.slow.load(Relaxed),
        failures,
        t_oracle,
        t_eval,
        t0.elapsed()
    );
    let mut d = details.into_inner().unwrap();
    if failures > d.len() {
        d.push(format!("{src} ({pname}): ... {} failures in all", failures));
    }
    d
}

fn run_both(f: &str, backend: BackendChoice) {
    let (n_boxes, pool_n) = match backend {
        BackendChoice::Gpu => {
            let n = std::env::var("ELEMENTARY_GPU_BOXES")
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(1_000_000);
            (n, if arity(f) == 1 { 3000 } else { 150 })
        }
        _ => {
            let n = std::env::var("ELEMENTARY_CPU_BOXES")
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(4000);
            (n, if arity(f) == 1 { 1500 } else { 80 })
        }
    };
    let mut fails = run(f, backend, Fmt::F64, n_boxes, pool_n);
    fails.extend(run(f, backend, Fmt::F32, n_boxes, pool_n));
    assert!(
        fails.is_empty(),
        "{} failures:\n{}",
        fails.len(),
        fails.join("\n")
    );
}

macro_rules! function_tests {
    ($($name:ident),* $(,)?) => {
        /// The functions with a test here (rootn per exponent: rootn2 .. rootn5).
        const LISTED: &[&str] = &[$(stringify!($name)),*];
        mod cpu {
            $(#[test]
            fn $name() {
                super::run_both(stringify!($name), ivjit::BackendChoice::Cpu);
            })*
        }
        mod gpu {
            $(#[test]
            #[cfg_attr(not(feature = "gpu-tests"), ignore = "needs a GPU: --features gpu-tests")]
            fn $name() {
                let name = concat!("elementary gpu::", stringify!($name));
                crate::common::gpu::require_gpu(name);
                super::run_both(stringify!($name), ivjit::BackendChoice::Gpu);
            })*
        }
    };
}

function_tests!(
    exp, exp2, exp10, expm1, log, log2, log10, log1p, sin, cos, tan, asin, acos, atan, sinh, cosh,
    tanh, asinh, acosh, atanh, cbrt, rootn2, rootn3, rootn4, rootn5, sinpi, cospi, erf, erfc, sec,
    csc, cot, acot, sech, csch, coth, acoth, asech, acsch, floor, ceil, trunc, round, rint, sign,
    atan2, pow, hypot,
);

/// The core operations `ivjit functions` lists that are tested elsewhere, exactly: against
/// rational arithmetic (tests/cpu/containment.rs, tests/cpu/tightness.rs) and at every class
/// (tests/cpu/classes.rs).
const EXACT_CORE: &[&str] = &[
    "neg",
    "sqr",
    "sqrt",
    "pown",
    "abs",
    "min",
    "max",
    "fma",
    "recip",
    "hull",
    "intersect",
];

/// The lists of this file come from the catalogue: every function `ivjit functions` lists,
/// but the exact core operations, has a test above and an oracle ([`eo::UNARY`], [`eo::BINARY`]),
/// so a row added to `ivjit::internals::point` without them fails here instead of dropping out silently.
#[test]
fn every_function_of_the_catalogue_is_tested_here() {
    use std::collections::BTreeSet;
    let base = |f: &str| {
        let rootn = f.starts_with("rootn");
        if rootn { "rootn" } else { f }.to_string()
    };
    let listed: BTreeSet<String> = LISTED.iter().map(|f| base(f)).collect();
    let oracles: BTreeSet<String> = eo::UNARY
        .iter()
        .chain(eo::BINARY)
        .map(|f| base(f))
        .collect();
    let catalogue: BTreeSet<String> = ivjit::internals::ir::functions::FUNCTIONS
        .iter()
        .map(|f| f.name.to_string())
        .filter(|f| !EXACT_CORE.contains(&f.as_str()))
        // The functions of an enclosure: exact, tests/cpu/itf1788_enclosure.rs and the classes.
        .filter(|f| !crate::common::enclosure_oracle::is_enclosure_op(f))
        // The reverse operations: tests/cpu/itf1788_reverse.rs and the classes.
        .filter(|f| !crate::common::reverse_oracle::is_reverse_op(f))
        .collect();
    assert_eq!(listed, catalogue, "the tests above against the catalogue");
    assert_eq!(
        oracles, catalogue,
        "the oracle's functions against the catalogue"
    );
    // The oracle lists each function once (rootn once per exponent).
    let all: Vec<&str> = eo::UNARY.iter().chain(eo::BINARY).copied().collect();
    assert_eq!(
        all.len(),
        all.iter().collect::<BTreeSet<_>>().len(),
        "{all:?}"
    );
    assert_eq!(all.len(), LISTED.len(), "one test per oracle function");
}

// ---------------------------------------------------------------- derived functions, tightness

/// The derived functions (sec, cot, acoth, ...) expand to rigorous interval operations
/// (`ivjit::internals::point::DerivedFn`); on point boxes their bounds must also be tight: within
/// `DERIVED_CPU_STEPS` floats of the oracle's outward-rounded enclosure on the CPU (the inner
/// function's bound is within 1 ulp, the reciprocal adds a rounding and can double a relative
/// error's size in ulps). The oracle and the pools are those of the containment tests.
const DERIVED_CPU_STEPS: u32 = 4;

#[test]
fn derived_functions_are_tight_on_points() {
    let mut rng = Rng::new(11);
    let mut fails = Vec::new();
    let mut n = 0;
    for f in ivjit::internals::point::DerivedFn::ALL
        .iter()
        .map(|f| f.name())
    {
        for fmt in [Fmt::F64, Fmt::F32] {
            let pool = make_pool(f, fmt, 300, &mut rng);
            let expr = Expression::parse(&format!("{f}(x)")).unwrap();
            let ev = Evaluator::new(&expr, prec_of(fmt), BackendChoice::Cpu).unwrap();
            for &x in &pool {
                let Val::In(enc) = eo::point(f, &[x], 192) else {
                    continue;
                };
                let (d, u) = enc.to_f64();
                let (d, u) = if fmt == Fmt::F32 {
                    (
                        common::oracle::round_down(&common::oracle::q_of(d), fmt),
                        common::oracle::round_up(&common::oracle::q_of(u), fmt),
                    )
                } else {
                    (d, u)
                };
                let r = ev.eval(&[Interval { lo: x, hi: x }]).unwrap()[0];
                let (mut al, mut ah) = (d, u);
                for _ in 0..DERIVED_CPU_STEPS {
                    al = fmt.next_down(al);
                    ah = fmt.next_up(ah);
                }
                n += 1;
                if !(r.lo <= d && r.hi >= u && r.lo >= al && r.hi <= ah) {
                    fails.push(format!(
                        "{f}({}) {fmt:?}: [{}, {}], oracle [{}, {}], allowed down to {} and up to {}",
                        hexf64(x),
                        hexf64(r.lo),
                        hexf64(r.hi),
                        hexf64(d),
                        hexf64(u),
                        hexf64(al),
                        hexf64(ah)
                    ));
                }
            }
        }
    }
    assert!(n > 3000, "only {n} points");
    assert!(
        fails.is_empty(),
        "{} misses:\n{}",
        fails.len(),
        fails.join("\n")
    );
}

// ---------------------------------------------------------------- oracle self-check

/// The oracle at two precisions: the enclosures must overlap, and be tight (relative width
/// below 2^-150 at 192 bits). Catches a broken argument reduction or library function.
#[test]
fn oracle_self_check() {
    let mut rng = Rng::new(7);
    let mut n = 0;
    for f in eo::UNARY.iter().chain(eo::BINARY) {
        let pools = if arity(f) == 1 {
            vec![make_pool(f, Fmt::F64, 40, &mut rng)]
        } else {
            let (a, b) = binary_pools(f, Fmt::F64, 12, &mut rng);
            vec![a, b]
        };
        let pts: Vec<Vec<f64>> = if arity(f) == 1 {
            pools[0].iter().map(|&x| vec![x]).collect()
        } else {
            let mut v = Vec::new();
            for &a in &pools[0] {
                for &b in &pools[1] {
                    v.push(vec![a, b]);
                }
            }
            v
        };
        let bad: Vec<String> = pts
            .par_iter()
            .filter_map(|a| {
                let (Val::In(e1), Val::In(e2)) = (eo::point(f, a, 192), eo::point(f, a, 512))
                else {
                    return None;
                };
                let overlap = eo::le(&e1.lo, &e2.hi) && eo::le(&e2.lo, &e1.hi);
                let finite = !e1.lo.is_inf() && !e1.hi.is_inf();
                let tight = !finite || {
                    let w = e1.hi.sub(&e1.lo, 256, astro_float::RoundingMode::Up);
                    let mut m = e1.hi.abs().max(&e1.lo.abs());
                    if m.is_zero() {
                        true
                    } else {
                        let e = m.exponent().unwrap();
                        m.set_exponent(e - 150);
                        eo::le(&w, &m)
                    }
                };
                // Beyond the range of f64 the enclosure only has to decide f64 bounds.
                let (d, u) = e1.to_f64();
                let tight = tight || common::oracle::next_up_f64(d) >= u;
                let ok = overlap && (tight || f == &"tan");
                (!ok).then(|| {
                    format!(
                        "{f}({}): 192 bits {} vs 512 bits {} (overlap {overlap}, tight {tight})",
                        a.iter().map(|x| hexf64(*x)).collect::<Vec<_>>().join(", "),
                        e1.describe(),
                        e2.describe()
                    )
                })
            })
            .collect();
        n += pts.len();
        assert!(bad.is_empty(), "oracle inconsistent:\n{}", bad.join("\n"));
    }
    // Spot values against expansions computed independently (mpmath, 2000 bits):
    // sin(2^1000) = -0.15920170308624243824..., tan(1e300) = 1.42144882387472441236...,
    // sin(6381956970095103 * 2^797) = 0.99999999999999999999999999999999999989015...
    for (f, x, lo, hi) in [
        (
            "sin",
            2f64.powi(1000),
            -0.1592017030862424383,
            -0.1592017030862424382,
        ),
        ("tan", 1e300, 1.4214488238747244123, 1.4214488238747244124),
        (
            "sin",
            6381956970095103.0 * 2f64.powi(797),
            0.9999999999999999,
            1.0,
        ),
        ("sin", 3.0, 0.14112000805986722210, 0.14112000805986722211),
        ("cos", 2.0, -0.41614683654714238700, -0.41614683654714238699),
        ("cos", 5.0, 0.28366218546322626446, 0.28366218546322626447),
        ("tan", 1.5, 14.101419947171719387, 14.101419947171719388),
        ("tan", -4.0, -1.1578212823495775831, -1.1578212823495775830),
        ("hypot", 1.0, 1.4142135623730950488, 1.4142135623730950489),
        ("erf", 1.0, 0.84270079294971486934, 0.84270079294971486935),
        ("erf", 0.5, 0.52049987781304653768, 0.52049987781304653769),
        ("erfc", 1.0, 0.15729920705028513065, 0.15729920705028513066),
        (
            "erfc",
            5.0,
            1.5374597944280348501e-12,
            1.5374597944280348502e-12,
        ),
        (
            "erfc",
            10.0,
            2.0884875837625447570e-45,
            2.0884875837625447571e-45,
        ),
    ] {
        let args: Vec<f64> = if f == "hypot" { vec![x, 1.0] } else { vec![x] };
        let (d, u) = match eo::point(f, &args, 192) {
            Val::In(e) => e.to_f64(),
            Val::Out => unreachable!(),
        };
        // The decimal literals round to neighbouring doubles; the oracle's outward f64 bounds
        // must be the two doubles around the value.
        assert!(
            d <= lo && hi <= u && (common::oracle::next_up_f64(d) >= u || d == u),
            "{f}({x:e}) in [{d:e}, {u:e}]"
        );
    }
    eprintln!("oracle self-check: {n} points at 192 and 512 bits agree");
}

// ---------------------------------------------------------------- identities and examples

fn ev1(src: &str, fmt: Fmt, backend: BackendChoice, args: &[(f64, f64)]) -> (f64, f64) {
    let expr = Expression::parse(src).unwrap_or_else(|e| panic!("parse {src}: {e}"));
    let ev = Evaluator::new(&expr, prec_of(fmt), backend)
        .unwrap_or_else(|e| panic!("compile {src}: {e}"));
    let iv: Vec<Interval> = args
        .iter()
        .map(|&(l, h)| {
            if l.is_nan() {
                Interval::EMPTY
            } else {
                Interval::new(l, h).unwrap()
            }
        })
        .collect();
    let r = ev.eval(&iv).unwrap()[0];
    (r.lo, r.hi)
}

fn identities(backend: BackendChoice) {
    let mut fails = Vec::new();
    let pi_enc = match eo::point("atan2", &[0.0, -1.0], 192) {
        Val::In(e) => e,
        Val::Out => unreachable!(),
    };
    for fmt in [Fmt::F64, Fmt::F32] {
        let pname = if fmt == Fmt::F64 { "f64" } else { "f32" };
        let (pd, pu) = pi_enc.to_f64();
        let (pd, pu) = (
            if fmt == Fmt::F32 {
                common::oracle::round_down(&common::oracle::q_of(pd), fmt)
            } else {
                pd
            },
            if fmt == Fmt::F32 {
                common::oracle::round_up(&common::oracle::q_of(pu), fmt)
            } else {
                pu
            },
        );
        let (hd, hu) = (pd / 2.0, pu / 2.0); // exact halving
        let e = f64::NAN;
        let inf = f64::INFINITY;
        // (source, box, must contain, tightest enclosure of the exact range: lo, hi)
        #[allow(clippy::type_complexity)]
        let cases: Vec<(&str, Vec<(f64, f64)>, Option<(f64, f64)>)> = vec![
            ("exp(x)", vec![(0.0, 0.0)], Some((1.0, 1.0))),
            ("log(x)", vec![(1.0, 1.0)], Some((0.0, 0.0))),
            ("sin(x)", vec![(pd, pu)], Some((0.0, 0.0))),
            ("cos(x)", vec![(pd, pu)], Some((-1.0, -1.0))),
            ("tan(x)", vec![(hd, hu)], Some((-inf, inf))),
            ("tan(x)", vec![(-hu, -hd)], Some((-inf, inf))),
            ("atan(x)", vec![(-inf, inf)], Some((-hu, hu))),
            ("asin(x)", vec![(-inf, inf)], Some((-hu, hu))),
            ("acos(x)", vec![(-1.0, 1.0)], Some((0.0, pu))),
            (
                "atan2(y, x)",
                vec![(-1.0, 1.0), (-1.0, -0.5)],
                Some((-pu, pu)),
            ),
            ("acos(x)", vec![(1.0, 1.0)], Some((0.0, 0.0))),
            ("acosh(x)", vec![(1.0, 1.0)], Some((0.0, 0.0))),
            ("acosh(x)", vec![(-5.0, 1.0)], Some((0.0, 0.0))),
            ("atanh(x)", vec![(-1.0, 1.0)], Some((-inf, inf))),
            ("atanh(x)", vec![(0.0, 1.0)], Some((0.0, inf))),
            ("log1p(x)", vec![(-2.0, 0.0)], Some((-inf, 0.0))),
            ("sinpi(x)", vec![(1.0, 1.0)], Some((0.0, 0.0))),
            ("cospi(x)", vec![(0.5, 0.5)], Some((0.0, 0.0))),
            ("cospi(x)", vec![(-inf, inf)], Some((-1.0, 1.0))),
            ("exp2(x)", vec![(10.0, 10.0)], Some((1024.0, 1024.0))),
            ("exp10(x)", vec![(3.0, 3.0)], Some((1000.0, 1000.0))),
            ("log2(x)", vec![(1024.0, 1024.0)], Some((10.0, 10.0))),
            ("log10(x)", vec![(1000.0, 1000.0)], Some((3.0, 3.0))),
            (
                "pow(x, y)",
                vec![(2.0, 2.0), (10.0, 10.0)],
                Some((1024.0, 1024.0)),
            ),
            ("pow(x, y)", vec![(4.0, 4.0), (0.5, 0.5)], Some((2.0, 2.0))),
            ("pow(x, y)", vec![(0.0, 1.0), (0.5, 0.5)], Some((0.0, 1.0))),
            ("pow(x, y)", vec![(0.0, 0.0), (-1.0, 1.0)], Some((0.0, 0.0))),
            (
                "pow(x, y)",
                vec![(0.0, 2.0), (-1.0, -1.0)],
                Some((0.5, inf)),
            ),
            ("rootn(x, 3)", vec![(-8.0, -8.0)], Some((-2.0, -2.0))),
            ("rootn(x, 2)", vec![(-4.0, 4.0)], Some((0.0, 2.0))),
            ("cbrt(x)", vec![(27.0, 27.0)], Some((3.0, 3.0))),
            (
                "hypot(x, y)",
                vec![(3.0, 3.0), (4.0, 4.0)],
                Some((5.0, 5.0)),
            ),
            ("floor(x)", vec![(-1.5, -1.5)], Some((-2.0, -2.0))),
            ("ceil(x)", vec![(-1.5, 0.5)], Some((-1.0, 1.0))),
            ("trunc(x)", vec![(-1.5, 1.5)], Some((-1.0, 1.0))),
            ("round(x)", vec![(2.5, 2.5)], Some((3.0, 3.0))),
            ("round(x)", vec![(-2.5, -2.5)], Some((-3.0, -3.0))),
            ("rint(x)", vec![(2.5, 2.5)], Some((2.0, 2.0))),
            ("rint(x)", vec![(-0.5, 0.5)], Some((0.0, 0.0))),
            ("sign(x)", vec![(-3.0, 2.0)], Some((-1.0, 1.0))),
            ("sign(x)", vec![(-0.0, 0.0)], Some((0.0, 0.0))),
            ("sinh(x)", vec![(-inf, inf)], Some((-inf, inf))),
            ("cosh(x)", vec![(-inf, inf)], Some((1.0, inf))),
            ("tanh(x)", vec![(-inf, inf)], Some((-1.0, 1.0))),
            ("exp(x)", vec![(-inf, 0.0)], Some((0.0, 1.0))),
            ("log(x)", vec![(-1.0, 1.0)], Some((-inf, 0.0))),
            ("log(x)", vec![(0.0, inf)], Some((-inf, inf))),
            // empty results
            ("log(x)", vec![(-2.0, -1.0)], None),
            ("log(x)", vec![(0.0, 0.0)], None),
            ("log1p(x)", vec![(-3.0, -1.0)], None),
            ("atanh(x)", vec![(1.0, 2.0)], None),
            ("acosh(x)", vec![(0.5, 0.9)], None),
            ("asin(x)", vec![(2.0, 3.0)], None),
            ("rootn(x, 2)", vec![(-2.0, -1.0)], None),
            ("pow(x, y)", vec![(-2.0, -1.0), (1.0, 2.0)], None),
            ("pow(x, y)", vec![(0.0, 0.0), (-1.0, 0.0)], None),
            ("atan2(y, x)", vec![(0.0, 0.0), (-0.0, 0.0)], None),
            ("exp(x)", vec![(e, e)], None),
            ("sin(x)", vec![(e, e)], None),
            ("atan2(y, x)", vec![(e, e), (1.0, 2.0)], None),
            ("pow(x, y)", vec![(1.0, 2.0), (e, e)], None),
        ];
        for (src, b, want) in cases {
            let (lo, hi) = ev1(src, fmt, backend, &b);
            let got = format!("[{}, {}]", hexf64(lo), hexf64(hi));
            let ok = match want {
                None => lo.is_nan() && hi.is_nan(),
                // Contains [wl, wh] and each bound is within one ulp of it (sin and cos of the
                // pi box: containment only, the range is not a point).
                Some((wl, wh)) => {
                    let tight = !matches!(src, "sin(x)" | "cos(x)");
                    let steps = allowed_steps(src, fmt, backend);
                    let (mut al, mut ah) = (wl, wh);
                    for _ in 0..steps {
                        al = fmt.next_down(al);
                        ah = fmt.next_up(ah);
                    }
                    !lo.is_nan()
                        && lo <= wl
                        && wh <= hi
                        && (!tight || lo >= al)
                        && (!tight || hi <= ah)
                }
            };
            if !ok {
                fails.push(format!(
                    "{src} ({pname}, {backend:?}) on {}: got {got}, expected {}",
                    hex_box(&b),
                    match want {
                        None => "[empty]".into(),
                        Some((l, h)) => format!(
                            "[{}, {}] (each bound within {} ulp outward)",
                            hexf64(l),
                            hexf64(h),
                            allowed_steps(src, fmt, backend)
                        ),
                    }
                ));
            }
        }
    }
    assert!(fails.is_empty(), "{}", fails.join("\n"));
}

/// How far outside the tightest result a bound may lie, in ulps. CPU: the point value is
/// correctly rounded and stepped once outward, so 1. GPU: the CUDA result may be e ulps from the
/// round-to-nearest value (e = the documented maximum error) and is padded e + 1 steps outward,
/// so a bound can end up 2e + 1 steps from the tightest one.
fn allowed_steps(src: &str, fmt: Fmt, backend: BackendChoice) -> u32 {
    if backend != BackendChoice::Gpu {
        return 1;
    }
    let name = src.split('(').next().unwrap_or("");
    let name = if src.starts_with("rootn(x, 3)") {
        "cbrt"
    } else {
        name
    };
    let prec = if fmt == Fmt::F64 {
        ivjit::Precision::F64
    } else {
        ivjit::Precision::F32
    };
    match ivjit::internals::scalar::PointFn::from_name(name) {
        Some(f) => 2 * ivjit::internals::ptx::cuda_max_ulps(f, prec) + 1,
        None => 1,
    }
}

#[test]
fn cpu_identities() {
    identities(BackendChoice::Cpu);
}

#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn gpu_identities() {
    crate::common::gpu::require_gpu("elementary gpu_identities");
    identities(BackendChoice::Gpu);
}
