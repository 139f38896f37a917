//! Point functions on the GPU (`Inst::Point`: CUDA math library + inline padding) against the
//! CPU's correctly rounded values (CORE-MATH), for every function and both precisions, on about
//! 10^5 arguments each in the function's closed domain: random arguments over the whole range
//! (random bit patterns) and the interesting part of it, plus special and extreme values (±0,
//! subnormals, domain ends and their neighbours, huge arguments and near multiples of pi/2 for
//! the trigonometric functions, ±inf where the function has a limit).
//!
//! For each argument the kernel returns (Down, Up, Nearest). With cr the correctly rounded value,
//! the true value lies within half an ulp of cr, so `Down <= cr` and `Up >= cr` are necessary
//! (stronger than `Down <= next_up(cr)`: a Down above cr is above the true value); neither may
//! be NaN, Down not +inf and Up not -inf at finite arguments (an overflowed library result may
//! stand for a finite value: the emitter turns it into MAX before padding). Bounds equal to cr
//! are counted as undecided (right only where f is exact). The test also measures the library's own error
//! (|Nearest - cr| in ulps) against NVIDIA's table (`ptx::cuda_max_ulps`), since the padding's
//! correctness rests on it, and prints a per-function table of the largest distances.
//!
//! Runs with `--features gpu-tests` (ignored without it; without a GPU it then fails).

use crate::common::rng;

use ivjit::internals::gpu::GpuKernel;
use ivjit::internals::point::Rule;
use ivjit::internals::ptx;
use ivjit::internals::round::{next_down, next_down_f32, next_up, next_up_f32};
use ivjit::internals::scalar::{
    BinaryFn, Bound, Builder, PointFn, Precision, Program, Round, UnaryFn,
};

/// Random arguments per function and precision (special values come on top).
const RANDOM_ARGS: usize = 100_000;

/// SplitMix64: a small deterministic generator, so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        rng::splitmix64(&mut self.0)
    }
    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }
    /// A random finite float of the precision (random bit pattern: log-uniform magnitudes,
    /// subnormals included), as f64.
    fn any_finite(&mut self, p: Precision) -> f64 {
        loop {
            let x = match p {
                Precision::F64 => f64::from_bits(self.next()),
                Precision::F32 => f32::from_bits(self.next() as u32) as f64,
            };
            if x.is_finite() {
                return x;
            }
        }
    }
}

/// Rounds to the precision (f32 values are kept widened in f64).
fn to_p(x: f64, p: Precision) -> f64 {
    match p {
        Precision::F64 => x,
        Precision::F32 => x as f32 as f64,
    }
}

fn up(x: f64, p: Precision) -> f64 {
    match p {
        Precision::F64 => next_up(x),
        Precision::F32 => next_up_f32(x as f32) as f64,
    }
}

fn down(x: f64, p: Precision) -> f64 {
    match p {
        Precision::F64 => next_down(x),
        Precision::F32 => next_down_f32(x as f32) as f64,
    }
}

fn max_finite(p: Precision) -> f64 {
    match p {
        Precision::F64 => f64::MAX,
        Precision::F32 => f32::MAX as f64,
    }
}

fn min_subnormal(p: Precision) -> f64 {
    match p {
        Precision::F64 => f64::from_bits(1),
        Precision::F32 => f32::from_bits(1) as f64,
    }
}

/// Position of a float in the ordered sequence of floats of the precision (-0 and +0 both 0;
/// +inf one after MAX), so that distances in ulps are differences.
fn ordinal(x: f64, p: Precision) -> i64 {
    match p {
        Precision::F64 => {
            let b = x.to_bits();
            let m = (b & 0x7fff_ffff_ffff_ffff) as i64;
            if b >> 63 == 1 {
                -m
            } else {
                m
            }
        }
        Precision::F32 => {
            let b = (x as f32).to_bits();
            let m = (b & 0x7fff_ffff) as i64;
            if b >> 31 == 1 {
                -m
            } else {
                m
            }
        }
    }
}

fn ulps(a: f64, b: f64, p: Precision) -> i64 {
    (ordinal(a, p) - ordinal(b, p)).abs()
}

/// The correctly rounded value of `f` at (x, y).
fn cr(f: PointFn, x: f64, y: f64, p: Precision) -> f64 {
    match (f, p) {
        (PointFn::Unary(u), Precision::F64) => (u.row().cpu_f64)(x),
        (PointFn::Unary(u), Precision::F32) => (u.row().cpu_f32)(x as f32) as f64,
        (PointFn::Binary(b), Precision::F64) => (b.row().cpu_f64)(x, y),
        (PointFn::Binary(b), Precision::F32) => (b.row().cpu_f32)(x as f32, y as f32) as f64,
    }
}

/// Values around `c` in the precision: c itself and `k` floats on each side.
fn around(c: f64, k: usize, p: Precision, out: &mut Vec<f64>) {
    let c = to_p(c, p);
    out.push(c);
    let (mut a, mut b) = (c, c);
    for _ in 0..k {
        a = down(a, p);
        b = up(b, p);
        out.push(a);
        out.push(b);
    }
}

/// Special values every function's domain filter sees: zeros, subnormals, ones, extremes,
/// infinities, and neighbours.
fn specials(p: Precision) -> Vec<f64> {
    let mut v = Vec::new();
    let tiny = min_subnormal(p);
    let min_normal = match p {
        Precision::F64 => f64::MIN_POSITIVE,
        Precision::F32 => f32::MIN_POSITIVE as f64,
    };
    let max = max_finite(p);
    for s in [1.0, -1.0] {
        v.push(s * 0.0);
        around(s * tiny, 3, p, &mut v);
        around(s * min_normal, 3, p, &mut v);
        around(s * 1.0, 5, p, &mut v);
        around(s * 0.5, 3, p, &mut v);
        around(s * 2.0, 3, p, &mut v);
        around(s * max, 3, p, &mut v);
        v.push(s * f64::INFINITY);
        for e in [
            -1074, -1022, -500, -149, -126, -60, -30, -20, -10, -5, -1, 1, 5, 10, 20, 30, 60, 100,
            127, 128, 500, 1000, 1023,
        ] {
            around(s * 2f64.powi(e), 1, p, &mut v);
        }
        for d in [
            1e-300, 1e-30, 1e-8, 0.1, 0.3, 0.7, 3.0, 10.0, 100.0, 1e8, 1e30, 1e38, 1e300,
        ] {
            around(s * d, 1, p, &mut v);
        }
    }
    v.retain(|x| !x.is_nan());
    v
}

/// Extra special arguments of one function: overflow and underflow thresholds, pi multiples.
fn function_specials(f: PointFn, p: Precision) -> Vec<f64> {
    use UnaryFn::*;
    let mut v = Vec::new();
    let single = p == Precision::F32;
    let PointFn::Unary(f) = f else {
        return v;
    };
    match f {
        Exp | Expm1 | Sinh | Cosh => {
            let (ovf, unf) = if single {
                (88.72283, -103.97208)
            } else {
                (709.782712893384, -745.1332191019411)
            };
            around(ovf, 5, p, &mut v);
            around(-ovf, 5, p, &mut v);
            around(unf, 5, p, &mut v);
            around(-unf, 5, p, &mut v);
            if single {
                around(-87.33655, 3, p, &mut v);
            } else {
                around(-708.3964185322641, 3, p, &mut v);
            }
        }
        Exp2 => {
            for c in [
                128.0, -126.0, -149.0, -150.0, 1024.0, -1022.0, -1074.0, -1075.0,
            ] {
                around(c, 5, p, &mut v);
            }
        }
        Exp10 => {
            let (ovf, unf) = if single {
                (38.53184, -44.85346)
            } else {
                (308.25471555991675, -323.60724533877976)
            };
            around(ovf, 5, p, &mut v);
            around(unf, 5, p, &mut v);
        }
        Sin | Cos | Tan => {
            // Near multiples of pi/2 (each rounded: the nearest floats to k*pi/2 and their
            // neighbours), large arguments, and Kahan/Muller's hardest double for reduction.
            let half_pi = std::f64::consts::FRAC_PI_2;
            for k in (1..=64).chain([1000, 12345, 1 << 20, 1 << 30, 123_456_789]) {
                around(k as f64 * half_pi, 2, p, &mut v);
                around(-(k as f64) * half_pi, 2, p, &mut v);
            }
            for c in [
                1e22,
                1e300,
                2f64.powi(1000),
                2f64.powi(1023),
                2f64.powi(60),
                2f64.powi(100),
                1e38,
                2f64.powi(127),
            ] {
                around(c, 2, p, &mut v);
                around(-c, 2, p, &mut v);
            }
            if single {
                // Large f32 arguments whose reduction modulo pi/2 needs many bits of pi.
                around(16367173.0 * 2f64.powi(72), 2, p, &mut v);
                around(13176794.0 * 2f64.powi(39), 2, p, &mut v);
            } else {
                // The double closest to a multiple of pi/2 (Muller, "Elementary Functions").
                around(6381956970095103.0 * 2f64.powi(797), 2, p, &mut v);
            }
        }
        Sinpi | Cospi => {
            for k in -20..=20 {
                around(k as f64 * 0.5, 3, p, &mut v);
                around(k as f64 * 0.25, 1, p, &mut v);
            }
            for c in [
                2f64.powi(22),
                2f64.powi(23),
                2f64.powi(24),
                2f64.powi(51),
                2f64.powi(52),
                2f64.powi(53),
            ] {
                around(c, 3, p, &mut v);
                around(c + 0.5, 1, p, &mut v);
            }
        }
        Asin | Acos | Atanh => {
            for c in [1.0, -1.0, 0.5, -0.5, 0.98, -0.98] {
                around(c, 20, p, &mut v);
            }
        }
        Acosh | Log | Log2 | Log10 => {
            around(1.0, 20, p, &mut v);
            around(2.0, 3, p, &mut v);
            around(10.0, 3, p, &mut v);
        }
        Log1p => {
            around(-1.0, 20, p, &mut v);
            around(0.0, 5, p, &mut v);
            around(1.0, 3, p, &mut v);
        }
        Erf | Erfc => {
            // Where erf reaches 1 in the precision, and where erfc becomes subnormal and 0.
            let cs: &[f64] = if single {
                &[3.9192059, 9.194, 10.0542, -3.9192059]
            } else {
                &[5.921587195794507, 26.543, 27.2262, -5.921587195794507]
            };
            for &c in cs {
                around(c, 5, p, &mut v);
            }
        }
        _ => {}
    }
    v
}

/// Whether x (and y) lie in the function's closed domain, where a limit value exists.
fn in_domain(f: PointFn, x: f64, y: f64) -> bool {
    use BinaryFn::*;
    if x.is_nan() || y.is_nan() {
        return false;
    }
    let f = match f {
        // The closure of the row's domain; the periodic functions have no limit at infinity.
        PointFn::Unary(u) => {
            let (d, rule) = (u.row().domain, u.row().rule);
            let periodic = matches!(rule, Rule::Periodic | Rule::Tangent);
            return d.lo <= x && x <= d.hi && (x.is_finite() || !periodic);
        }
        PointFn::Binary(b) => b,
    };
    match f {
        // atan2(y, x): no limit at (0, 0) or at two infinities.
        Atan2 => (x != 0.0 || y != 0.0) && !(x.is_infinite() && y.is_infinite()),
        // pow(x, y) for x >= 0.
        Pow => x >= 0.0,
        Hypot => true,
    }
}

/// The random range where the function does something interesting (beyond random bit patterns).
fn main_range(f: PointFn, p: Precision) -> (f64, f64) {
    use UnaryFn::*;
    let single = p == Precision::F32;
    let f = match f {
        PointFn::Unary(u) => u,
        PointFn::Binary(BinaryFn::Pow) => return (0.0, 10.0),
        PointFn::Binary(_) => return (-10.0, 10.0),
    };
    match f {
        Exp | Expm1 => {
            if single {
                (-105.0, 90.0)
            } else {
                (-750.0, 712.0)
            }
        }
        Exp2 => {
            if single {
                (-151.0, 129.0)
            } else {
                (-1076.0, 1025.0)
            }
        }
        Exp10 => {
            if single {
                (-46.0, 39.0)
            } else {
                (-325.0, 309.0)
            }
        }
        Sinh | Cosh => {
            if single {
                (-90.0, 90.0)
            } else {
                (-712.0, 712.0)
            }
        }
        Tanh | Atan | Asinh | Cbrt => (-20.0, 20.0),
        Log | Log2 | Log10 => (0.0, 4.0),
        Log1p => (-1.0, 3.0),
        Sin | Cos | Tan => (-100.0, 100.0),
        Sinpi | Cospi => (-10.0, 10.0),
        Asin | Acos | Atanh => (-1.0, 1.0),
        Acosh => (1.0, 10.0),
        Erf => (-7.0, 7.0),
        Erfc => {
            if single {
                (-5.0, 11.0)
            } else {
                (-7.0, 28.0)
            }
        }
    }
}

/// The arguments of one function: (x, y) pairs in the domain (y = x for unary functions).
fn arguments(f: PointFn, p: Precision) -> Vec<(f64, f64)> {
    let index = PointFn::all().position(|g| g == f).unwrap() as u64;
    let mut rng = Rng(0x1234_5678 ^ (index << 32) ^ (p as u64));
    let mut special = specials(p);
    special.extend(function_specials(f, p));
    let (lo, hi) = main_range(f, p);
    let mut args: Vec<(f64, f64)> = Vec::new();
    let push = |x: f64, y: f64, args: &mut Vec<(f64, f64)>| {
        let (x, y) = (to_p(x, p), to_p(y, p));
        if in_domain(f, x, y) {
            args.push((x, y));
        }
    };
    if f.arity() == 1 {
        for &x in &special {
            push(x, x, &mut args);
        }
        while args.len() < special.len() + RANDOM_ARGS {
            let x = if rng.next().is_multiple_of(2) {
                rng.uniform(lo, hi)
            } else {
                rng.any_finite(p)
            };
            push(x, x, &mut args);
        }
    } else {
        // Special x special on a thinned grid, then random pairs mixing the three kinds.
        let step = (special.len() / 120).max(1);
        let grid: Vec<f64> = special.iter().step_by(step).copied().collect();
        for &x in &grid {
            for &y in &grid {
                push(x, y, &mut args);
            }
        }
        let base = args.len();
        while args.len() < base + RANDOM_ARGS {
            let pick = |rng: &mut Rng| match rng.next() % 3 {
                0 => rng.uniform(lo, hi),
                1 => rng.any_finite(p),
                _ => special[(rng.next() % special.len() as u64) as usize],
            };
            let (a, b) = (pick(&mut rng), pick(&mut rng));
            // Pow: the exponent (second operand) mostly moderate, so results are not all 0/inf.
            let b = if f == PointFn::Binary(BinaryFn::Pow) && rng.next().is_multiple_of(2) {
                rng.uniform(-50.0, 50.0)
            } else {
                b
            };
            push(a, b, &mut args);
        }
    }
    args
}

/// x.lo (and y.lo) in; outputs (Down, Up), (Nearest, Nearest).
fn program(f: PointFn, p: Precision) -> Program {
    let mut b = Builder::new(p, vec!["x".to_string(), "y".to_string()]);
    let x = b.input(0, Bound::Lo);
    let y = b.input(1, Bound::Lo);
    let [d, u, n] = [Round::Down, Round::Up, Round::Nearest].map(|r| match f {
        PointFn::Unary(f) => b.point(f, x, r),
        PointFn::Binary(f) => b.point2(f, x, y, r),
    });
    b.finish(vec![(d, u), (n, n)])
}

#[derive(Default)]
struct Stats {
    n: usize,
    failures: Vec<String>,
    /// Largest distance (ulps) of Down below cr and of Up above cr.
    max_down: i64,
    max_up: i64,
    /// Largest observed library error |Nearest - cr| in ulps, and where.
    max_lib: i64,
    worst_lib: (f64, f64),
    /// Arguments where the library error exceeded NVIDIA's table.
    over_table: usize,
    /// Bounds equal to cr (right only if f is exact there; the library then erred by more than
    /// its table, which is reported separately).
    undecided: usize,
}

/// Which evaluator computes the bounds.
#[derive(Clone, Copy, PartialEq)]
enum Backend {
    Gpu,
    /// The CPU evaluator: checks the arguments and the checking logic offline.
    Cpu,
}

fn check_function(f: PointFn, p: Precision, backend: Backend) -> Stats {
    let args = arguments(f, p);
    let n = args.len();
    let prog = program(f, p);
    let mut inputs = vec![0.0; 4 * n];
    for (i, &(x, y)) in args.iter().enumerate() {
        inputs[i] = x; // x.lo
        inputs[n + i] = x; // x.hi (unused)
        inputs[2 * n + i] = y; // y.lo
        inputs[3 * n + i] = y; // y.hi (unused)
    }
    let out = match backend {
        Backend::Gpu => GpuKernel::new(&prog)
            .and_then(|k| k.eval(&inputs, n))
            .unwrap_or_else(|e| panic!("{} {p}: {e}", f.name())),
        Backend::Cpu => ivjit::internals::cpu::eval::eval_soa(&prog, &inputs, n),
    };
    assert_eq!(out.len(), 4 * n);
    let table = ptx::cuda_max_ulps(f, p) as i64;
    let mut s = Stats {
        n,
        ..Stats::default()
    };
    for (i, &(x, y)) in args.iter().enumerate() {
        let (d, u, near) = (out[i], out[n + i], out[2 * n + i]);
        let c = cr(f, x, y, p);
        let at = if f.arity() == 1 {
            format!("{}({x:e} = {:?})", f.name(), x)
        } else {
            format!("{}({x:e}, {y:e})", f.name())
        };
        if c.is_nan() {
            s.failures.push(format!(
                "{at}: the CPU's value is NaN (argument outside the domain?)"
            ));
            continue;
        }
        // The true value t is within half an ulp of cr: next_down(cr) < t < next_up(cr) (or
        // t = cr), so Down > cr means Down >= next_up(cr) > t, a certain failure; Down == cr is
        // right only if cr is exact (counted as undecided). Likewise for Up. For cr = +inf, t >
        // MAX, so Up must be +inf; for cr = -inf, Down must be -inf.
        let mut bad = Vec::new();
        if d.is_nan() || d > c || (d == f64::INFINITY && x.is_finite() && y.is_finite()) {
            bad.push(format!("Down {d:e} > true value (cr {c:e})"));
        }
        if u.is_nan() || u < c || (u == f64::NEG_INFINITY && x.is_finite() && y.is_finite()) {
            bad.push(format!("Up {u:e} < true value (cr {c:e})"));
        }
        s.undecided += usize::from(d == c && c.is_finite()) + usize::from(u == c && c.is_finite());
        if !bad.is_empty() {
            s.failures.push(format!("{at}: {}", bad.join("; ")));
            continue;
        }
        s.max_down = s.max_down.max(ulps(d, c, p));
        s.max_up = s.max_up.max(ulps(u, c, p));
        if near.is_nan() {
            s.failures
                .push(format!("{at}: the library returned NaN (cr {c:e})"));
            continue;
        }
        let e = ulps(near, c, p);
        if e > table {
            s.over_table += 1;
            if s.over_table <= 5 {
                s.failures.push(format!(
                    "{at}: library error {e} ulps exceeds NVIDIA's bound {table} (got {near:e}, cr {c:e})"
                ));
            }
        }
        if e > s.max_lib {
            s.max_lib = e;
            s.worst_lib = (x, y);
        }
    }
    s
}

#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn point_functions_enclose_the_correctly_rounded_values() {
    let info =
        crate::common::gpu::require_gpu("point_functions_enclose_the_correctly_rounded_values");
    println!("{info}");
    check_all(Backend::Gpu);
}

/// The same arguments and checks with the CPU evaluator (correctly rounded, one step out), so
/// that the argument sets (all in the domain, none NaN on the CPU) and the checking logic are
/// tested without a GPU.
#[test]
fn the_checks_accept_the_cpu_backend() {
    check_all(Backend::Cpu);
}

fn check_all(backend: Backend) {
    println!(
        "{:<6} {:<4} {:>7} {:>6} {:>8} {:>6} {:>8} {:>7} {:>6} {:>8}  worst library argument",
        "fn", "prec", "args", "table", "lib max", "pad", "down max", "up max", "undec", "failures"
    );
    let mut failures = Vec::new();
    for p in [Precision::F64, Precision::F32] {
        for f in PointFn::all() {
            let t = std::time::Instant::now();
            let s = check_function(f, p, backend);
            println!(
                "{:<6} {:<4} {:>7} {:>6} {:>8} {:>6} {:>8} {:>7} {:>6} {:>8}  {:e}{} ({:.0} ms)",
                f.name(),
                p.name(),
                s.n,
                ptx::cuda_max_ulps(f, p),
                s.max_lib,
                ptx::pad_steps(f, p),
                s.max_down,
                s.max_up,
                s.undecided,
                s.failures.len(),
                s.worst_lib.0,
                if f.arity() == 2 {
                    format!(", {:e}", s.worst_lib.1)
                } else {
                    String::new()
                },
                t.elapsed().as_secs_f64() * 1e3
            );
            failures.extend(s.failures.into_iter().take(20).map(|m| format!("{p}: {m}")));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures (first 20 per function):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Down and Up of the same argument share one call, and programs compile and link once per
/// function set (the second kernel of the same functions hits the disk cache).
#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn one_call_for_both_bounds_and_the_runtime_is_cached() {
    crate::common::gpu::require_gpu("one_call_for_both_bounds_and_the_runtime_is_cached");
    let prog = program(PointFn::Unary(UnaryFn::Exp), Precision::F64);
    let text = ptx::emit(&prog);
    assert_eq!(
        text.matches("call (ret), ivjit_exp_f64").count(),
        1,
        "{text}"
    );
    let t = std::time::Instant::now();
    let _first = GpuKernel::new(&prog).expect("kernel");
    let first = t.elapsed();
    let t = std::time::Instant::now();
    let k = GpuKernel::new(&prog).expect("kernel");
    let second = t.elapsed();
    println!(
        "exp f64 kernel with runtime: first {:.1} ms, second {:.1} ms",
        first.as_secs_f64() * 1e3,
        second.as_secs_f64() * 1e3
    );
    let out = k.eval(&[0.0, 0.0, 0.0, 0.0], 1).expect("eval");
    // exp(0) = 1 exactly: Down < 1 < Up, two floats away each (1 ulp bound + 1).
    assert!(out[0] < 1.0 && out[1] > 1.0 && out[2] == 1.0, "{out:?}");
}
