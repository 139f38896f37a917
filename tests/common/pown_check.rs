//! The check that `pown(x, n)` is within one ulp per bound of the tightest enclosure, against an
//! exact-enough oracle (`common::power_oracle`: 320-bit directed powering), for every n in
//! [-64, 64] and large n up to 2^40, on one backend (`tests/cpu/powers.rs`,
//! `tests/gpu/gpu_powers.rs`).
//!
//! Arguments: random bit patterns over the whole range, numbers near 1, and the edges where
//! x^n overflows, becomes subnormal and underflows (for each n, a few thousand x around
//! 2^(e/n) for those exponents e), exact cases (small integers, powers of two), zeros, signed
//! zeros, infinities; intervals of one point and random intervals (signs mixed, across 0).
//!
//! For each result bound: containment is checked exactly (the bound is on the right side of the
//! oracle's enclosure of the real bound), and the distance in ulps to the tightest bound must be
//! at most 1. The largest distances seen are printed per format.

use crate::common::oracle::Fmt;
use crate::common::power_oracle::{ordinal, to_fmt, Bound};
use crate::common::rng::splitmix64;
use ivjit::{BackendChoice, Evaluator, Expression, Interval, Precision};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        splitmix64(&mut self.0)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Rounds to the format (to nearest; f32 saturates to +-MAX only at infinity).
fn in_fmt(x: f64, fmt: Fmt) -> f64 {
    match fmt {
        Fmt::F64 => x,
        Fmt::F32 => (x as f32) as f64,
    }
}

/// A random finite float of the format (random bits).
fn any_finite(r: &mut Rng, fmt: Fmt) -> f64 {
    loop {
        let x = match fmt {
            Fmt::F64 => f64::from_bits(r.next()),
            Fmt::F32 => f32::from_bits(r.next() as u32) as f64,
        };
        if x.is_finite() {
            return x;
        }
    }
}

/// Arguments that exercise x^n: the edges of the format's range for this n, and the rest.
fn arguments(r: &mut Rng, n: i64, fmt: Fmt, count: usize) -> Vec<f64> {
    let m = n.unsigned_abs() as f64;
    let (emax, emin_normal, emin_sub) = match fmt {
        Fmt::F64 => (1024.0, -1022.0, -1074.0),
        Fmt::F32 => (128.0, -126.0, -149.0),
    };
    // Where x^|n| crosses the top, the subnormal boundary, the bottom, and the thresholds of the
    // scaled paths (2^-900 / 2^-60): for n < 0 the same x give the reciprocal edges.
    let edges = [
        emax,
        emin_normal,
        emin_sub,
        emin_sub - 1.0,
        -900.0,
        -60.0,
        900.0,
        60.0,
        0.0,
        -(emax),
        -emin_normal,
        -emin_sub,
    ];
    let mut out = vec![0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 3.0, 0.5, -0.75, 10.0];
    for k in [3.0f64, 5.0, 7.0, 0.1, 1.5, 1.1] {
        out.push(in_fmt(k, fmt));
    }
    while out.len() < count {
        let x = match r.below(8) {
            0 | 1 => any_finite(r, fmt),
            2 => 1.0 + (r.unit() - 0.5) * 2f64.powi(-(r.below(50) as i32)),
            3 => in_fmt(
                r.below(1000) as f64 * 2f64.powi(r.below(40) as i32 - 20),
                fmt,
            ),
            _ => {
                let e = edges[r.below(edges.len() as u64) as usize];
                // 2^(e/m) times a factor within a few ulps to a few hundred ppm of 1.
                let spread = 2f64.powi(-(r.below(45) as i32 + 8));
                (e / m).exp2() * (1.0 + (r.unit() - 0.5) * spread)
            }
        };
        let x = in_fmt(x, fmt);
        if !x.is_finite() || x.abs() > f64::MAX {
            continue;
        }
        out.push(if r.below(2) == 0 { x } else { -x });
    }
    out
}

/// The exact set bounds (lo, hi) of pown(X, n), or None when the result is empty.
fn expected(x: Interval, n: i64) -> Option<(Bound, Bound)> {
    let (a, b) = (x.lo, x.hi);
    if n == 0 {
        return Some((Bound::pown_at(1.0, 1), Bound::pown_at(1.0, 1)));
    }
    let at = Bound::pown_at;
    if n > 0 {
        if n % 2 == 1 {
            return Some((at(a, n), at(b, n)));
        }
        let mig = if a > 0.0 {
            a
        } else if b < 0.0 {
            -b
        } else {
            0.0
        };
        let mag = a.abs().max(b.abs());
        return Some((at(mig, n), at(mag, n)));
    }
    if a == 0.0 && b == 0.0 {
        return None;
    }
    if n % 2 == 0 {
        let mig = if a > 0.0 {
            a
        } else if b < 0.0 {
            -b
        } else {
            0.0
        };
        let mag = a.abs().max(b.abs());
        let hi = if mig == 0.0 {
            Bound::PosInf
        } else {
            at(mig, n)
        };
        return Some((at(mag, n), hi));
    }
    // Odd negative: decreasing on each side of the pole.
    if a >= 0.0 {
        let hi = if a == 0.0 { Bound::PosInf } else { at(a, n) };
        Some((at(b, n), hi))
    } else if b <= 0.0 {
        let lo = if b == 0.0 { Bound::NegInf } else { at(b, n) };
        Some((lo, at(a, n)))
    } else {
        Some((Bound::NegInf, Bound::PosInf))
    }
}

/// Worst distances seen, for the summary line.
#[derive(Default)]
struct Stats {
    cases: usize,
    worst_lo: i64,
    worst_hi: i64,
    worst_at: String,
}

fn check_n(
    backend: BackendChoice,
    n: i64,
    fmt: Fmt,
    seed: u64,
    count: usize,
    stats: &mut Stats,
) -> Vec<String> {
    let precision = match fmt {
        Fmt::F64 => Precision::F64,
        Fmt::F32 => Precision::F32,
    };
    let src = format!("pown(x, {n})");
    let expr = Expression::parse(&src).unwrap();
    let eval = Evaluator::new(&expr, precision, backend).unwrap();
    let mut r = Rng(seed);
    let xs = arguments(&mut r, n, fmt, count);
    let mut boxes: Vec<Vec<Interval>> = xs
        .iter()
        .map(|&x| vec![Interval { lo: x, hi: x }])
        .collect();
    // Random intervals: two arguments sorted, sometimes with an infinite end.
    for i in 0..count / 4 {
        let (mut a, mut b) = (xs[i % xs.len()], xs[(i * 7 + 3) % xs.len()]);
        if a > b {
            std::mem::swap(&mut a, &mut b);
        }
        match r.below(8) {
            0 => a = f64::NEG_INFINITY,
            1 => b = f64::INFINITY,
            _ => {}
        }
        boxes.push(vec![Interval { lo: a, hi: b }]);
    }
    let results = eval.eval_many(&boxes).unwrap();
    let mut failures = Vec::new();
    for (bx, res) in boxes.iter().zip(&results) {
        let x = bx[0];
        let got = res[0];
        stats.cases += 1;
        let what = format!("{src} [{fmt:?}] at [{:e}, {:e}]", x.lo, x.hi);
        let Some((lo, hi)) = expected(x, n) else {
            if !got.is_empty() {
                failures.push(format!(
                    "{what}: expected empty, got [{:e}, {:e}]",
                    got.lo, got.hi
                ));
            }
            continue;
        };
        if got.is_empty() {
            failures.push(format!("{what}: got empty"));
            continue;
        }
        // Containment, exactly.
        if !lo.is_below(got.lo) || !hi.is_above(got.hi) {
            failures.push(format!(
                "{what}: [{:e}, {:e}] DOES NOT CONTAIN the result ({lo:?}, {hi:?})",
                got.lo, got.hi
            ));
            continue;
        }
        // Tightness: distance to the tightest bound (the nearer end when the oracle is undecided).
        let (d0, d1) = lo.round_down(fmt);
        let dist_lo = (ordinal(d0, fmt).min(ordinal(d1, fmt)) as i128
            - ordinal(got.lo, fmt) as i128)
            .clamp(i64::MIN as i128, i64::MAX as i128) as i64;
        let (u0, u1) = hi.round_up(fmt);
        let dist_hi = (ordinal(got.hi, fmt) as i128
            - ordinal(u0, fmt).max(ordinal(u1, fmt)) as i128)
            .clamp(i64::MIN as i128, i64::MAX as i128) as i64;
        let dist_lo = if d0 == f64::NEG_INFINITY { 0 } else { dist_lo };
        let dist_hi = if u1 == f64::INFINITY { 0 } else { dist_hi };
        if dist_lo > stats.worst_lo || dist_hi > stats.worst_hi {
            stats.worst_at = format!("{what}: [{:e}, {:e}]", got.lo, got.hi);
        }
        stats.worst_lo = stats.worst_lo.max(dist_lo);
        stats.worst_hi = stats.worst_hi.max(dist_hi);
        if dist_lo > 1 || dist_hi > 1 {
            failures.push(format!(
                "{what}: [{:e}, {:e}] is {dist_lo} / {dist_hi} ulps from the tightest [{:e}, {:e}]",
                got.lo,
                got.hi,
                to_fmt(d1, fmt, false),
                to_fmt(u0, fmt, true)
            ));
        }
    }
    failures
}

/// The exponents checked: every n in [-64, 64] and some large ones.
fn exponents(seed: u64) -> Vec<i64> {
    let mut ns: Vec<i64> = (-64..=64).collect();
    let mut r = Rng(seed);
    for n in [
        100, 255, 256, 257, 1000, 1023, 1024, 1025, 4097, 65537, 1_000_003,
    ] {
        ns.push(n);
        ns.push(-n);
    }
    for n in [(1i64 << 31) - 1, 1 << 31, (1 << 31) + 1] {
        ns.push(n);
        ns.push(-n);
    }
    for _ in 0..12 {
        let n = (r.next() % (1u64 << 40)) as i64 + 65;
        ns.push(if r.below(2) == 0 { n } else { -n });
    }
    ns
}

/// Checks every exponent in one precision on one backend; panics with the failures.
pub fn run(fmt: Fmt, seed: u64, backend: BackendChoice) {
    let start = std::time::Instant::now();
    let mut stats = Stats::default();
    let mut failures = Vec::new();
    for (i, n) in exponents(seed).into_iter().enumerate() {
        let f = check_n(
            backend,
            n,
            fmt,
            seed ^ (i as u64 * 0x9e37_79b9),
            1200,
            &mut stats,
        );
        failures.extend(f.into_iter().take(5));
    }
    eprintln!(
        "pown {fmt:?} on {backend:?}: {} cases in {:.1} s; worst distance to the tightest: lower {} ulp, upper {} \
         ulp ({})",
        stats.cases,
        start.elapsed().as_secs_f64(),
        stats.worst_lo,
        stats.worst_hi,
        stats.worst_at
    );
    assert!(
        failures.is_empty(),
        "{} failures (at most 5 per n shown):\n{}",
        failures.len(),
        failures.join("\n")
    );
}
