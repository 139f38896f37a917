//! The check that `rootn(x, n)` is within one ulp per bound of the tightest enclosure, for every
//! n in [-16, 16] (n != 0), on one backend, with an exact oracle (`tests/cpu/powers.rs`,
//! `tests/gpu/gpu_powers.rs`).
//!
//! A float c is compared with the real root of x exactly: for n > 0, c <= x^(1/n) iff c^n <= x
//! (c >= 0; odd n on all reals); for n < 0, c <= x^(-1/m) iff x * c^m <= 1 (c > 0). Floats are
//! dyadic rationals m * 2^e, so these are comparisons of integers (`BigInt`), exact.
//!
//! For a result [lo, hi] at a point x: lo <= root <= hi (containment), and the float two steps
//! above lo is above the root, the float two steps below hi below it (at most one ulp from the
//! tightest bound). Arguments: random bit patterns, numbers near perfect powers (2^n k^n and
//! their neighbours), the ends of the range (subnormals, MAX), zeros and infinities, both
//! signs.

use crate::common::oracle::Fmt;
use crate::common::rng::splitmix64;
use ivjit::{BackendChoice, Evaluator, Expression, Interval, Precision};
use num_bigint::BigInt;
use num_traits::{One, Signed, Zero};
use std::cmp::Ordering;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        splitmix64(&mut self.0)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A finite float as m * 2^e exactly.
fn dyadic(x: f64) -> (BigInt, i64) {
    assert!(x.is_finite());
    if x == 0.0 {
        return (BigInt::zero(), 0);
    }
    let bits = x.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i64;
    let frac = bits & ((1u64 << 52) - 1);
    let (m, e) = if exp == 0 {
        (frac, -1074)
    } else {
        (frac | (1u64 << 52), exp - 1075)
    };
    let m = BigInt::from(m);
    (if x < 0.0 { -m } else { m }, e)
}

/// Exact comparison of a * 2^ea with b * 2^eb.
fn cmp_dyadic(a: &(BigInt, i64), b: &(BigInt, i64)) -> Ordering {
    let e = a.1.min(b.1);
    let x = &a.0 << (a.1 - e) as usize;
    let y = &b.0 << (b.1 - e) as usize;
    x.cmp(&y)
}

fn pow_dyadic(a: &(BigInt, i64), k: u32) -> (BigInt, i64) {
    (num_traits::pow(a.0.clone(), k as usize), a.1 * k as i64)
}

fn mul_dyadic(a: &(BigInt, i64), b: &(BigInt, i64)) -> (BigInt, i64) {
    (&a.0 * &b.0, a.1 + b.1)
}

/// c compared with the real n-th root of x (x in the domain, x finite and nonzero for n < 0).
fn cmp_root(c: f64, x: f64, n: i64) -> Ordering {
    if c == f64::NEG_INFINITY {
        return Ordering::Less;
    }
    if c == f64::INFINITY {
        return Ordering::Greater;
    }
    let m = n.unsigned_abs() as u32;
    let (cd, xd) = (dyadic(c), dyadic(x));
    if n > 0 {
        if n % 2 == 0 && c < 0.0 {
            return Ordering::Less;
        }
        // c^n against x (odd powers are increasing on all reals).
        return cmp_dyadic(&pow_dyadic(&cd, m), &xd);
    }
    let one = (BigInt::one(), 0);
    if x > 0.0 {
        if c <= 0.0 {
            return Ordering::Less;
        }
        // c vs x^(-1/m): x * c^m vs 1.
        return cmp_dyadic(&mul_dyadic(&pow_dyadic(&cd, m), &xd), &one);
    }
    // x < 0, odd m: the root is -(|x|^(-1/m)) < 0.
    if c >= 0.0 {
        return Ordering::Greater;
    }
    let ac = (cd.0.abs(), cd.1);
    let ax = (xd.0.abs(), xd.1);
    // |c| vs |root|: |x| * |c|^m vs 1; c vs root is the reverse.
    cmp_dyadic(&mul_dyadic(&pow_dyadic(&ac, m), &ax), &one).reverse()
}

fn to_fmt(x: f64, fmt: Fmt) -> f64 {
    match fmt {
        Fmt::F64 => x,
        Fmt::F32 => (x as f32) as f64,
    }
}

fn step_up(x: f64, fmt: Fmt) -> f64 {
    match fmt {
        Fmt::F64 => x.next_up(),
        Fmt::F32 => (x as f32).next_up() as f64,
    }
}

fn step_down(x: f64, fmt: Fmt) -> f64 {
    match fmt {
        Fmt::F64 => x.next_down(),
        Fmt::F32 => (x as f32).next_down() as f64,
    }
}

fn arguments(r: &mut Rng, n: i64, fmt: Fmt, count: usize) -> Vec<f64> {
    let m = n.unsigned_abs() as i32;
    let (max, min_sub) = match fmt {
        Fmt::F64 => (f64::MAX, f64::from_bits(1)),
        Fmt::F32 => (f32::MAX as f64, f32::from_bits(1) as f64),
    };
    let mut out: Vec<f64> = [1.0, 2.0, 0.5, max, min_sub, 3.0, 10.0, 1e-30, 1e30]
        .iter()
        .map(|&x| to_fmt(x, fmt))
        .collect();
    while out.len() < count {
        let x = match r.below(4) {
            0 | 1 => loop {
                let x = match fmt {
                    Fmt::F64 => f64::from_bits(r.next()),
                    Fmt::F32 => f32::from_bits(r.next() as u32) as f64,
                };
                if x.is_finite() && x != 0.0 {
                    break x.abs();
                }
            },
            // Perfect powers and their neighbours: (k * 2^j)^m, k small.
            _ => {
                let k = (r.below(40) + 1) as f64;
                let j = r.below(60) as i32 - 30;
                let base = to_fmt(k * 2f64.powi(j), fmt);
                let p = to_fmt(base.powi(m), fmt);
                if !p.is_finite() || p == 0.0 {
                    continue;
                }
                match r.below(3) {
                    0 => p,
                    1 => step_up(p, fmt),
                    _ => step_down(p, fmt),
                }
            }
        };
        if !x.is_finite() || x == 0.0 {
            continue;
        }
        if n % 2 != 0 && r.below(2) == 0 {
            out.push(-x);
        } else {
            out.push(x);
        }
    }
    out
}

fn check_n(
    backend: BackendChoice,
    n: i64,
    fmt: Fmt,
    seed: u64,
    count: usize,
    worst: &mut (i64, String),
) -> Vec<String> {
    let precision = match fmt {
        Fmt::F64 => Precision::F64,
        Fmt::F32 => Precision::F32,
    };
    let src = format!("rootn(x, {n})");
    let eval = Evaluator::new(&Expression::parse(&src).unwrap(), precision, backend).unwrap();
    let mut r = Rng(seed);
    let xs = arguments(&mut r, n, fmt, count);
    let boxes: Vec<Vec<Interval>> = xs
        .iter()
        .map(|&x| vec![Interval { lo: x, hi: x }])
        .collect();
    let results = eval.eval_many(&boxes).unwrap();
    let mut failures = Vec::new();
    for (&x, res) in xs.iter().zip(&results) {
        let got = res[0];
        let what = format!("{src} [{fmt:?}] at {x:e}: [{:e}, {:e}]", got.lo, got.hi);
        if got.is_empty() {
            failures.push(format!("{what}: empty"));
            continue;
        }
        if cmp_root(got.lo, x, n) == Ordering::Greater || cmp_root(got.hi, x, n) == Ordering::Less {
            failures.push(format!("{what} DOES NOT CONTAIN the root"));
            continue;
        }
        // Distance in ulps to the tightest bound: how many steps up from lo stay below or at
        // the root (0 when lo is tightest), and likewise for hi.
        let mut d_lo = 0;
        let mut c = step_up(got.lo, fmt);
        while d_lo < 4 && c.is_finite() && cmp_root(c, x, n) != Ordering::Greater {
            d_lo += 1;
            c = step_up(c, fmt);
        }
        let mut d_hi = 0;
        let mut c = step_down(got.hi, fmt);
        while d_hi < 4 && c.is_finite() && cmp_root(c, x, n) != Ordering::Less {
            d_hi += 1;
            c = step_down(c, fmt);
        }
        let d = d_lo.max(d_hi);
        if d > worst.0 {
            *worst = (d, what.clone());
        }
        if d > 1 {
            failures.push(format!("{what}: {d_lo} / {d_hi} ulps from the tightest"));
        }
    }
    failures
}

/// Checks every exponent in one precision on one backend; panics with the failures.
pub fn run(fmt: Fmt, seed: u64, backend: BackendChoice) {
    let start = std::time::Instant::now();
    let mut worst = (0, String::new());
    let mut failures = Vec::new();
    let mut cases = 0;
    for n in (-16..=16).filter(|&n| n != 0) {
        let f = check_n(
            backend,
            n,
            fmt,
            seed ^ (n as u64).wrapping_mul(0x9e37_79b9),
            800,
            &mut worst,
        );
        cases += 800;
        failures.extend(f.into_iter().take(5));
    }
    eprintln!(
        "rootn {fmt:?} on {backend:?}: {cases} cases in {:.1} s; worst distance to the tightest {} ulp ({})",
        start.elapsed().as_secs_f64(),
        worst.0,
        worst.1
    );
    assert!(
        failures.is_empty(),
        "{} failures (at most 5 per n shown):\n{}",
        failures.len(),
        failures.join("\n")
    );
}
