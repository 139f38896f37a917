//! `pown` and `rootn` within one ulp per bound of the tightest enclosure on the CPU evaluator,
//! f64 and f32 (the checks and their oracles: `tests/common/pown_check.rs`,
//! `tests/common/rootn_check.rs`).

use crate::common::{oracle::Fmt, pown_check, rootn_check};
use ivjit::{BackendChoice, Evaluator, Expression, Interval, Precision};

#[test]
fn pown_within_one_ulp_f64() {
    pown_check::run(Fmt::F64, 0x9064, BackendChoice::Cpu);
}

#[test]
fn pown_within_one_ulp_f32() {
    pown_check::run(Fmt::F32, 0x9032, BackendChoice::Cpu);
}

#[test]
fn rootn_within_one_ulp_f64() {
    rootn_check::run(Fmt::F64, 0x2007_0064, BackendChoice::Cpu);
}

#[test]
fn rootn_within_one_ulp_f32() {
    rootn_check::run(Fmt::F32, 0x2007_0032, BackendChoice::Cpu);
}

/// The interval rule of rootn: domains, poles and the special cases of IEEE 1788.
#[test]
fn rootn_intervals_follow_the_set_definition() {
    // (expression, x, expected result; None: empty)
    type Case = (&'static str, f64, f64, Option<(f64, f64)>);
    let cases: &[Case] = &[
        ("rootn(x, 4)", -1.0, 16.0, Some((0.0, 2.0))),
        ("rootn(x, 4)", -3.0, -1.0, None),
        ("rootn(x, -2)", 0.0, 4.0, Some((0.5, f64::INFINITY))),
        ("rootn(x, -2)", -1.0, 0.0, None),
        (
            "rootn(x, -3)",
            -8.0,
            1.0,
            Some((f64::NEG_INFINITY, f64::INFINITY)),
        ),
        ("rootn(x, -3)", -8.0, 0.0, Some((f64::NEG_INFINITY, -0.5))),
        ("rootn(x, -3)", 0.0, 0.0, None),
        ("rootn(x, 5)", -32.0, 243.0, Some((-2.0, 3.0))),
        ("rootn(x, -4)", 16.0, f64::INFINITY, Some((0.0, 0.5))),
        (
            "rootn(x, 6)",
            0.0,
            f64::INFINITY,
            Some((0.0, f64::INFINITY)),
        ),
    ];
    for &(src, lo, hi, want) in cases {
        let eval = Evaluator::new(
            &Expression::parse(src).unwrap(),
            Precision::F64,
            BackendChoice::Cpu,
        )
        .unwrap();
        let got = eval.eval(&[Interval { lo, hi }]).unwrap()[0];
        match want {
            None => assert!(got.is_empty(), "{src} on [{lo}, {hi}]: {got:?}, want empty"),
            Some((a, b)) => assert!(
                got.lo == a && got.hi == b,
                "{src} on [{lo}, {hi}]: {got:?}, want [{a}, {b}]"
            ),
        }
    }
}

/// The empty set stays empty for every exponent (short chains let NaN propagate, the others
/// mask it explicitly), and pown of an interval holding only 0 with n < 0 is empty too.
#[test]
fn pown_and_rootn_of_the_empty_set_are_empty() {
    for n in [
        -1000,
        -33,
        -7,
        -2,
        -1,
        0,
        1,
        2,
        3,
        4,
        5,
        12,
        31,
        32,
        63,
        1000,
        1 << 31,
    ] {
        for f in ["pown", "rootn"] {
            if f == "rootn" && n == 0 {
                continue;
            }
            let src = format!("{f}(x, {n})");
            for precision in [Precision::F64, Precision::F32] {
                let eval = Evaluator::new(
                    &Expression::parse(&src).unwrap(),
                    precision,
                    BackendChoice::Cpu,
                )
                .unwrap();
                let got = eval.eval(&[Interval::EMPTY]).unwrap()[0];
                assert!(got.is_empty(), "{src} of the empty set: {got:?}");
                if n < 0 {
                    let got = eval.eval(&[Interval { lo: 0.0, hi: 0.0 }]).unwrap()[0];
                    assert!(got.is_empty(), "{src} of [0, 0]: {got:?}");
                }
            }
        }
    }
}
