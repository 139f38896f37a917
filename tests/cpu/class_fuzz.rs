//! Differential fuzzing over the interval classes (issue 29): random expressions over x and y
//! (every operator and most functions, nested up to four deep), boxes drawn from the classes
//! of `tests/common/classes.rs` (entire, half-lines, [MAX, inf], top and binade-edge pairs,
//! many periods, subnormals, signed zeros, points, empty), every CPU engine (the evaluator,
//! the reference interpreter, the mean-value and monotone forms) checked against a rigorous
//! evaluation of the expression at the box's witnesses (`tests/common/compose.rs`: big-float
//! enclosures through the real oracle), never against another engine.
//!
//! A *case* is one expression on one box in one precision, checked on every engine.
//! `IVJIT_CLASS_FUZZ_CASES` sets their number (default 10,000, about 10 s on two cores),
//! `IVJIT_CLASS_FUZZ_SEED` the seed; docs/fuzzing.md records the long runs.

use crate::common::class_fuzz::{self, Engines};

#[test]
fn differential_fuzzing_over_interval_classes() {
    let cases = class_fuzz::env("IVJIT_CLASS_FUZZ_CASES", 10_000) as usize;
    let seed = class_fuzz::env("IVJIT_CLASS_FUZZ_SEED", 0x1788_0029);
    let failures = class_fuzz::run(cases, seed, Engines::Cpu);
    assert!(
        failures.is_empty(),
        "{} failures (first 30):\n{}",
        failures.len(),
        failures[..failures.len().min(30)].join("\n")
    );
}

/// The trees' functions come from the catalogue: each function `ivjit functions` lists is
/// called by the trees or left out with a reason ([`compose::LEFT_OUT`]), so a new function
/// cannot drop out of the fuzzing silently.
#[test]
fn every_function_is_fuzzed_or_left_out_with_a_reason() {
    use crate::common::compose;
    let catalogue: Vec<&str> = ivjit::internals::ir::functions::FUNCTIONS
        .iter()
        .map(|f| f.name)
        .collect();
    let operators = ["add", "sub", "mul", "div"];
    for f in compose::UNARY.iter().chain(compose::BINARY) {
        assert!(
            catalogue.contains(f) || operators.contains(f),
            "{f}: fuzzed but not in the catalogue"
        );
    }
    for (f, _) in compose::LEFT_OUT {
        assert!(
            catalogue.contains(f),
            "{f}: left out but not in the catalogue"
        );
        let fuzzed = compose::UNARY.contains(f) || compose::BINARY.contains(f);
        assert!(!fuzzed, "{f}: both fuzzed and left out");
    }
    for f in catalogue {
        let fuzzed = compose::UNARY.contains(&f) || compose::BINARY.contains(&f);
        let left_out = compose::LEFT_OUT.iter().any(|(g, _)| *g == f);
        assert!(
            fuzzed || left_out,
            "{f}: neither in compose::UNARY/BINARY nor in compose::LEFT_OUT with a reason"
        );
    }
}
