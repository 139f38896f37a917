//! The standard workloads: the expressions `ivjit bench` times (each with the range its random
//! boxes are drawn from), Rosenbrock's function in n variables, a generated polynomial of a given
//! size, and deterministic random boxes. The tests, the examples and the benchmark share them so
//! that a number in `docs/bench.md` names an expression anyone can rebuild.
//!
//! Not part of the library (it holds a 149 KB test model): this file is compiled into the
//! `ivjit` binary (`src/main.rs`, for `ivjit bench`), into the integration tests
//! (`tests/common/mod.rs`) and into the library's own unit tests (`lib.rs`, under `cfg(test)`),
//! each through the public API (`ivjit::...`). Each of them uses a part, hence the allowance.
#![allow(dead_code)]

use ivjit::{Expression, Precision};
use std::fmt::Write;

/// Node count of the generated large expression of the suite (at least).
pub const BIG_NODES: usize = 2000;

/// One expression of the suite.
#[derive(Clone, Debug)]
pub struct Case {
    /// Short name (`add`, `tangle`, ...).
    pub name: &'static str,
    /// Source text.
    pub text: String,
    /// Input centers are uniform in this range (every variable).
    pub centers: (f64, f64),
    /// Half-widths are uniform in `(0, max]`.
    pub max_half_width: f64,
}

/// Rosenbrock's function in `n` variables `x1..xn`.
pub fn rosenbrock(n: usize) -> String {
    (1..n)
        .map(|i| format!("100*(x{} - x{i}^2)^2 + (1 - x{i})^2", i + 1))
        .collect::<Vec<_>>()
        .join(" + ")
}

/// A deterministic polynomial expression over `x, y, z, w` whose rewritten IR has at least
/// `min_nodes` live nodes; returns the text and the node count.
pub fn generated(min_nodes: usize) -> (String, usize) {
    let mut lets = min_nodes / 8 + 1;
    loop {
        let text = generated_text(lets);
        let n = Expression::parse(&text)
            .map(|e| live_nodes(&e))
            .unwrap_or(0);
        if n >= min_nodes {
            return (text, n);
        }
        lets = lets * 21 / 20 + 1;
    }
}

fn generated_text(lets: usize) -> String {
    let mut rng = Rng(0x1b8_7e11);
    let vars = ["x", "y", "z", "w"];
    let ops = ["*", "+", "-"];
    let mut s = String::from("let t0 = 0.5*x + 0.25*y*z - 0.125*w;\n");
    for k in 1..=lets {
        let j = rng.below(k as u64);
        let v = vars[rng.below(4) as usize];
        let op = ops[rng.below(3) as usize];
        let c1 = 100 + rng.below(500);
        let c2 = 100 + rng.below(300);
        let _ = writeln!(
            s,
            "let t{k} = 0.{c1:03}*t{} + 0.{c2:03}*(t{j} {op} {v});",
            k - 1
        );
    }
    let _ = write!(s, "t{lets}");
    s
}

/// Live nodes of the rewritten IR.
pub fn live_nodes(e: &Expression) -> usize {
    e.ir().live().iter().filter(|&&l| l).count()
}

/// The suite, in order.
pub fn suite() -> Vec<Case> {
    let c = |name, text: &str, centers, w| Case {
        name,
        text: text.to_string(),
        centers,
        max_half_width: w,
    };
    vec![
        c("add", "x + y", (-10.0, 10.0), 1.0),
        c("mul", "x * y", (-10.0, 10.0), 1.0),
        c("div", "x / y", (1.0, 10.0), 0.5),
        c("sqr", "sqr(x)", (-10.0, 10.0), 1.0),
        c("sqrt", "sqrt(x)", (1.0, 100.0), 0.5),
        c("exp", "exp(x)", (-20.0, 20.0), 1.0),
        c("sin", "sin(x)", (-100.0, 100.0), 1.0),
        c(
            "tangle",
            "x^4 - 5*x^2 + y^4 - 5*y^2 + z^4 - 5*z^2 + 11.8",
            (-3.0, 3.0),
            0.1,
        ),
        c("rosenbrock10", &rosenbrock(10), (-2.0, 2.0), 0.1),
        c(
            "trig",
            "sin(x)*cos(y) + exp(-x*y)*atan(z)",
            (-3.0, 3.0),
            0.1,
        ),
        c("generated", &generated(BIG_NODES).0, (-1.0, 1.0), 0.01),
        c("prospero", &prospero(), (-1.0, 1.0), 1.0 / 1024.0),
    ]
}

/// The Prospero challenge's model (`tests/data/models/prospero.vm`, MPL-2.0, from the Fidget
/// repository; notice in that folder) in ivjit's syntax: 7,866 operations over x and y, 2,878 of
/// them min or max, the community's large benchmark (its boxes in the suite are pixel-sized
/// boxes of a 1024 x 1024 image of [-1, 1]^2).
pub fn prospero() -> String {
    const TAPE: &str = include_str!("../tests/data/models/prospero.vm");
    ivjit::internals::syntax::tape::to_expression_text(TAPE).expect("the bundled tape is valid")
}

/// Suite cases too large for a hand-written CUDA baseline (its compile takes minutes).
pub fn has_baseline(case: &Case) -> bool {
    case.name != "prospero"
}

/// The next 64 random bits of SplitMix64 (Steele, Lea and Flood, "Fast splittable
/// pseudorandom number generators", OOPSLA 2014), advancing `state`: the project's one random
/// generator (the tests draw from it too), deterministic on every machine.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Random draws for the workloads' inputs.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        splitmix64(&mut self.0)
    }
    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Fresh random boxes in structure-of-arrays layout: `2 * n_vars * n` bounds, random centers and
/// non-zero random widths, exact values of the precision (never zeros).
pub fn random_inputs(case: &Case, n_vars: usize, n: usize, p: Precision, seed: u64) -> Vec<f64> {
    let mut rng = Rng(seed);
    let mut v = vec![0.0; 2 * n_vars * n];
    let (c0, c1) = case.centers;
    for k in 0..n_vars {
        for i in 0..n {
            let c = c0 + (c1 - c0) * rng.unit();
            let h = case.max_half_width * (0.01 + 0.99 * rng.unit());
            let (lo, hi) = match p {
                Precision::F64 => (c - h, c + h),
                Precision::F32 => {
                    let (c, h) = (c as f32, h as f32);
                    ((c - h) as f64, (c + h) as f64)
                }
            };
            v[2 * k * n + i] = lo;
            v[(2 * k + 1) * n + i] = hi;
        }
    }
    v
}
