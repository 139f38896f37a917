//! GPU against CPU, bit for bit: both backends consume the same scalar program, and every
//! operation in it is correctly rounded (or a compare/select), so their results must be identical.
//! Runs on at least 10^6 random boxes per operation and precision, with infinite, empty, zero,
//! signed-zero, subnormal and extreme bounds among them. Runs with `--features gpu-tests`
//! (ignored without it). `IVJIT_GPU_BOXES` overrides the box count.

use crate::common::rng;

use ivjit::{BackendChoice, Evaluator, Expression, Precision};

/// One expression per operation whose results are exact or correctly rounded (so both backends
/// must agree bit for bit), over variables x, y, z. Point functions differ by design and are
/// checked against an oracle instead (tests/gpu/gpu_points.rs, tests/cpu/elementary.rs).
const OPS: &[(&str, &str)] = &[
    ("add", "x + y"),
    ("sub", "x - y"),
    ("mul", "x * y"),
    ("div", "x / y"),
    ("recip", "recip(x)"),
    ("neg", "-x"),
    ("sqr", "sqr(x)"),
    ("sqrt", "sqrt(x)"),
    ("pown3", "pown(x, 3)"),
    ("pown4", "pown(x, 4)"),
    ("pown-3", "pown(x, -3)"),
    ("pown0", "pown(x, 0)"),
    ("pown12", "pown(x, 12)"),
    ("pown-2", "pown(x, -2)"),
    ("pown-8", "pown(x, -8)"),
    ("pown63", "pown(x, 63)"),
    ("pown1000", "pown(x, 1000)"),
    ("pown-2147483647", "pown(x, -2147483647)"),
    ("abs", "abs(x)"),
    ("min", "min(x, y)"),
    ("max", "max(x, y)"),
    ("fma", "fma(x, y, z)"),
    ("hull", "hull(x, y)"),
    ("intersect", "intersect(x, y)"),
    ("floor", "floor(x)"),
    ("ceil", "ceil(x)"),
    ("trunc", "trunc(x)"),
    ("round", "round(x)"),
    ("rint", "rint(x)"),
    ("sign", "sign(x)"),
    ("tangle", "x^4 - 5*x^2 + y^4 - 5*y^2 + z^4 - 5*z^2 + 11.8"),
    ("mixed", "(x*y - z) / (sqr(y) + 0.1) + sqrt(abs(x)) * x^3"),
];

/// xorshift64*: a small deterministic generator (no dependency needed).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        rng::splitmix64(&mut self.0)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const SPECIAL: &[f64] = &[
    0.0,
    -0.0,
    1.0,
    -1.0,
    2.0,
    0.5,
    3.0,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::MAX,
    -f64::MAX,
    f64::MIN_POSITIVE,
    -f64::MIN_POSITIVE,
    f64::from_bits(1), // smallest subnormal
    -f64::from_bits(1),
    f64::from_bits(0x000F_FFFF_FFFF_FFFF), // largest subnormal
    1e-310,
    -1e-310,
    1e300,
    -1e300,
    1e-300,
    3.4028234663852886e38,  // f32::MAX
    1.401298464324817e-45,  // f32 min subnormal
    1.1754943508222875e-38, // f32 min normal
    0.1,
];

/// A random bound: special values, random finite bit patterns, or moderate random numbers.
fn bound(r: &mut Rng) -> f64 {
    match r.below(4) {
        0 => SPECIAL[r.below(SPECIAL.len() as u64) as usize],
        1 => {
            let x = f64::from_bits(r.next());
            if x.is_nan() {
                0.0
            } else {
                x
            }
        }
        _ => {
            let m = (r.next() >> 11) as f64 / (1u64 << 53) as f64;
            let e = r.below(40) as i32 - 20;
            let s = if r.below(2) == 0 { 1.0 } else { -1.0 };
            s * m * 2f64.powi(e)
        }
    }
}

/// A random valid interval as (lo, hi), or (NaN, NaN) for empty.
fn interval(r: &mut Rng) -> (f64, f64) {
    if r.below(50) == 0 {
        return (f64::NAN, f64::NAN);
    }
    if r.below(10) == 0 {
        let x = bound(r);
        if x.is_finite() {
            return (x, x);
        }
    }
    let (mut a, mut b) = (bound(r), bound(r));
    if a > b {
        std::mem::swap(&mut a, &mut b);
    }
    if a == f64::INFINITY {
        a = f64::MAX;
    }
    if b == f64::NEG_INFINITY {
        b = -f64::MAX;
    }
    (a, b)
}

fn same(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
}

#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn gpu_equals_cpu_bit_for_bit() {
    let info = crate::common::gpu::require_gpu("gpu_equals_cpu_bit_for_bit");
    let n: usize = std::env::var("IVJIT_GPU_BOXES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1 << 20);
    println!("device: {info:?}; {n} boxes per operation and precision");
    let mut rng = Rng(0x9E3779B97F4A7C15);
    let mut total_mismatch = 0usize;
    for &(name, src) in OPS {
        let expr = Expression::parse(src).unwrap();
        let nv = expr.vars().len();
        for p in [Precision::F64, Precision::F32] {
            let mut inputs = vec![0.0; 2 * nv * n];
            for k in 0..nv {
                for i in 0..n {
                    let (lo, hi) = interval(&mut rng);
                    inputs[2 * k * n + i] = lo;
                    inputs[(2 * k + 1) * n + i] = hi;
                }
            }
            let cpu = Evaluator::new(&expr, p, BackendChoice::Cpu).unwrap();
            let gpu = Evaluator::new(&expr, p, BackendChoice::Gpu).unwrap();
            let t0 = std::time::Instant::now();
            let a = cpu.eval_soa(&inputs, n).unwrap();
            let t_cpu = t0.elapsed();
            let t0 = std::time::Instant::now();
            let b = gpu.eval_soa(&inputs, n).unwrap();
            let t_gpu = t0.elapsed();
            let mut mismatches = 0;
            for j in 0..a.len() {
                if !same(a[j], b[j]) {
                    if mismatches < 5 {
                        let (k, i) = (j / n, j % n);
                        let args: Vec<String> = (0..nv)
                            .map(|v| {
                                format!(
                                    "[{:e}, {:e}]",
                                    inputs[2 * v * n + i],
                                    inputs[(2 * v + 1) * n + i]
                                )
                            })
                            .collect();
                        println!(
                            "MISMATCH {name} {p} box {i} array {k}: args {} cpu {:e} ({:#x}) gpu {:e} ({:#x})",
                            args.join(" "),
                            a[j],
                            a[j].to_bits(),
                            b[j],
                            b[j].to_bits()
                        );
                    }
                    mismatches += 1;
                }
            }
            println!(
                "{name:10} {p}: {n} boxes, {mismatches} mismatches (cpu {:.0} ms, gpu end-to-end {:.0} ms)",
                t_cpu.as_secs_f64() * 1e3,
                t_gpu.as_secs_f64() * 1e3
            );
            total_mismatch += mismatches;
        }
    }
    assert_eq!(total_mismatch, 0, "GPU and CPU disagree");
}

/// Gradients (`Expression::gradient`, `Expression::jacobian`) and the mean-value, monotone and
/// minimization forms are expressions like any other: on the GPU they give the CPU's bits
/// (expressions without point calls), in f64 and f32.
#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn gradients_equal_cpu_bit_for_bit() {
    crate::common::gpu::require_gpu("gradients_equal_cpu_bit_for_bit");
    let n = 1 << 18;
    let mut rng = Rng(0x6a09e667f3bcc909);
    let sources = [
        "x^4 - 5*x^2 + y^4 - 5*y^2 + z^4 - 5*z^2 + 11.8",
        "100*sqr(y - sqr(x)) + sqr(1 - x) + 100*sqr(z - sqr(y)) + sqr(1 - y)",
        "min(abs(x) - 0.5, sqrt(sqr(x) + sqr(y)) - 1) / (y^2 + 1) + max(floor(z), x*y)",
    ];
    let parsed: Vec<Expression> = sources
        .iter()
        .map(|s| Expression::parse(s).unwrap())
        .collect();
    let forms = parsed.iter().flat_map(|e| {
        let root = vec![(-3.0, 3.0); e.vars().len()];
        [
            ("gradient", e.gradient().unwrap().0),
            ("mean-value form", e.mean_value_form().unwrap()),
            ("monotone form", e.monotone_form().unwrap()),
            ("Jacobian", e.jacobian().unwrap().0),
            ("minimization form", e.minimization_form(&root).unwrap()),
        ]
    });
    for ((what, expr), src) in forms.zip(sources.iter().flat_map(|s| [s; 5])) {
        let nv = expr.vars().len();
        for p in [Precision::F64, Precision::F32] {
            let mut inputs = vec![0.0; 2 * nv * n];
            for k in 0..nv {
                for i in 0..n {
                    let (lo, hi) = interval(&mut rng);
                    inputs[2 * k * n + i] = lo;
                    inputs[(2 * k + 1) * n + i] = hi;
                }
            }
            let cpu = Evaluator::new(&expr, p, BackendChoice::Cpu).unwrap();
            let gpu = Evaluator::new(&expr, p, BackendChoice::Gpu).unwrap();
            let a = cpu.eval_soa(&inputs, n).unwrap();
            let b = gpu.eval_soa(&inputs, n).unwrap();
            let mismatches = a.iter().zip(&b).filter(|(x, y)| !same(**x, **y)).count();
            println!("{what} of {src} {p}: {mismatches} mismatches");
            assert_eq!(mismatches, 0, "{what} of {src} {p}");
        }
    }
}
