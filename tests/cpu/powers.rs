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

/// Exponents far beyond the double-word chains (issue 29's audit): `pown(1, 3 * 2^61)` was
/// `[MAX, inf]` (the overflow threshold, rounded to nearest, raised to the n-th power) and
/// `rootn(2^-46, 2^30)` `[0, -65535]` in f32 (a negative Newton candidate verified as an upper
/// bound). Beyond 2^40 (powers) and 2^20 (roots) both are bounded as exp(n log x). Every
/// point near 1 (where the results are finite and nonzero), 0, the range's ends and a few
/// ordinary values, in both precisions, against the rigorous oracle; roots within 4 ulps.
#[test]
fn huge_exponents_are_contained() {
    use crate::common::elem_oracle::{bf, Val};
    use crate::common::elem_oracle::{round_down, round_up};
    use crate::common::real_oracle::value;
    let exps: &[i64] = &[
        (1 << 40) + 1,
        3 << 51,
        (1 << 53) - 1,
        -((1 << 53) - 1),
        1 << 61,
        3 << 61,
        -(1 << 61),
        1 << 30,
        (1 << 30) + 1,
        -(1 << 30),
        (1 << 20) + 1,
        -((1 << 20) + 3),
    ];
    let mut checked = 0;
    for p in [Precision::F64, Precision::F32] {
        let f32 = p == Precision::F32;
        let ulp_step = |x: f64, k: i32| {
            let mut v = x;
            for _ in 0..k.abs() {
                v = if f32 {
                    (if k > 0 {
                        (v as f32).next_up()
                    } else {
                        (v as f32).next_down()
                    }) as f64
                } else if k > 0 {
                    v.next_up()
                } else {
                    v.next_down()
                };
            }
            v
        };
        let mut xs = vec![0.0, 0.5, 2.0, 1e-30, 1e30];
        for k in [-40, -3, -1, 0, 1, 3, 40, 1000] {
            xs.push(ulp_step(1.0, k));
        }
        xs.push(if f32 { f32::MAX as f64 } else { f64::MAX });
        xs.push(if f32 { 2f64.powi(-46) } else { 2f64.powi(-70) });
        xs.push(if f32 { 2f64.powi(100) } else { 2f64.powi(357) });
        let negs: Vec<f64> = xs.iter().map(|x| -x).collect();
        xs.extend(negs);
        for &n in exps {
            for (name, src) in [
                ("pown", format!("pown(x, {n})")),
                ("rootn", format!("rootn(x, {n})")),
            ] {
                let e = Expression::parse(&src).unwrap();
                let ev = Evaluator::new(&e, p, BackendChoice::Cpu).unwrap();
                for &x in &xs {
                    let got = ev.eval(&[Interval::new(x, x).unwrap()]).unwrap()[0];
                    let want = value(&format!("{name}:{n}"), &[bf(x)], 256);
                    let Val::In(w) = want else {
                        assert!(got.is_empty(), "{src} ({p:?}) at {x:e}: {got}, want empty");
                        continue;
                    };
                    let (wlo, whi) = (round_down(&w.lo), round_up(&w.hi));
                    assert!(
                        !got.is_empty() && got.lo <= wlo && whi <= got.hi,
                        "{src} ({p:?}) at {x:e}: {got} misses [{wlo:e}, {whi:e}]"
                    );
                    if name == "rootn" && whi.is_finite() && wlo.is_finite() {
                        assert!(
                            ulp_step(got.lo, 4) >= wlo && ulp_step(got.hi, -4) <= whi,
                            "{src} ({p:?}) at {x:e}: {got} not within 4 ulps of [{wlo:e}, {whi:e}]"
                        );
                    }
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 800, "{checked}");
}
