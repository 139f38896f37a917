//! A compiled kernel can be used from several threads at once: one `Evaluator`, shared by 8
//! threads, evaluates many random batches, and every result equals the serial one bit for bit
//! (on the CPU backend, and on the GPU when there is one).

use crate::common::rng;

use ivjit::{BackendChoice, Evaluator, Expression, Precision};
use std::sync::Arc;

const THREADS: usize = 8;
const BATCHES: usize = 24;
const ROUNDS: usize = 3;

/// `Evaluator` is `Send + Sync`: one compiled kernel can be shared by reference between threads.
#[test]
fn evaluator_is_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<Evaluator>();
    check::<Arc<Evaluator>>();
}

/// A small deterministic generator (xorshift64*), so that the batches are the same every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        rng::splitmix64(&mut self.0)
    }
    /// A number in [-4, 4), sometimes 0 or an infinity.
    fn bound(&mut self) -> f64 {
        match self.next() % 64 {
            0 => 0.0,
            1 => f64::INFINITY,
            2 => f64::NEG_INFINITY,
            _ => (self.next() >> 11) as f64 / (1u64 << 53) as f64 * 8.0 - 4.0,
        }
    }
}

/// A batch in structure-of-arrays layout: `n` random boxes of `n_vars` intervals, some empty.
fn batch(rng: &mut Rng, n_vars: usize, n: usize) -> Vec<f64> {
    let mut soa = vec![0.0; 2 * n_vars * n];
    for k in 0..n_vars {
        for i in 0..n {
            let (a, b) = (rng.bound(), rng.bound());
            let (mut lo, mut hi) = if a <= b { (a, b) } else { (b, a) };
            if lo == f64::INFINITY || hi == f64::NEG_INFINITY || rng.next().is_multiple_of(50) {
                (lo, hi) = (f64::NAN, f64::NAN);
            }
            soa[2 * k * n + i] = lo;
            soa[(2 * k + 1) * n + i] = hi;
        }
    }
    soa
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// Evaluates every batch serially, then from 8 threads at once (each going through the batches
/// in its own order, several rounds), and compares bit for bit.
fn hammer(evaluator: &Evaluator, n_vars: usize) {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let batches: Vec<(Vec<f64>, usize)> = (0..BATCHES)
        .map(|b| {
            let n = 1 + (b * 997) % 5000;
            (batch(&mut rng, n_vars, n), n)
        })
        .collect();
    let serial: Vec<Vec<u64>> = batches
        .iter()
        .map(|(soa, n)| bits(&evaluator.eval_soa(soa, *n).expect("serial evaluation")))
        .collect();
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let (batches, serial) = (&batches, &serial);
            s.spawn(move || {
                for round in 0..ROUNDS {
                    for j in 0..BATCHES {
                        let b = (j * (2 * t + 1) + round + t) % BATCHES;
                        let (soa, n) = &batches[b];
                        let out = evaluator.eval_soa(soa, *n).expect("threaded evaluation");
                        assert_eq!(
                            bits(&out),
                            serial[b],
                            "thread {t}, round {round}, batch {b}: differs from the serial result"
                        );
                    }
                }
            });
        }
    });
}

const EXPR: &str = "x^3 - 2*x*y + sin(y) * z, exp(x) / (y - 0.5), sqrt(z) + log(y), atan2(y, x)";

fn hammer_backend(choice: BackendChoice) {
    let expr = Expression::parse(EXPR).expect("expression compiles");
    for precision in [Precision::F64, Precision::F32] {
        let evaluator = Evaluator::new(&expr, precision, choice).expect("evaluator");
        hammer(&evaluator, expr.vars().len());
    }
}

#[test]
fn cpu_evaluator_from_eight_threads_matches_serial() {
    hammer_backend(BackendChoice::Cpu);
}

#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn gpu_evaluator_from_eight_threads_matches_serial() {
    crate::common::gpu::require_gpu("gpu_evaluator_from_eight_threads_matches_serial");
    hammer_backend(BackendChoice::Gpu);
}
