//! Tests for number parsing (tightest f64 enclosures) and float formatting.
//!
//! The oracle is exact rational arithmetic (num-rational's `BigRational`) built
//! from the literal's digits independently of the code under test; every double
//! is converted to a rational exactly from its bits.

use ivjit::internals::syntax::number::*;
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Signed, Zero};
use proptest::prelude::*;
use std::time::Instant;

// ---------------------------------------------------------------- oracle helpers

fn next_up(x: f64) -> f64 {
    x.next_up()
}

fn next_down(x: f64) -> f64 {
    x.next_down()
}

fn pow_int(base: u32, exp: u32) -> BigInt {
    num_traits::pow(BigInt::from(base), exp as usize)
}

/// base^exp as an exact rational, exp may be negative.
fn pow_rat(base: u32, exp: i64) -> BigRational {
    let p = pow_int(base, exp.unsigned_abs() as u32);
    if exp >= 0 {
        BigRational::from_integer(p)
    } else {
        BigRational::new(BigInt::one(), p)
    }
}

/// Exact value of a finite double.
fn rat_of(x: f64) -> BigRational {
    assert!(x.is_finite());
    let bits = x.to_bits();
    let neg = bits >> 63 == 1;
    let biased = ((bits >> 52) & 0x7ff) as i64;
    let frac = bits & ((1u64 << 52) - 1);
    let (m, k) = if biased == 0 {
        (frac, -1074)
    } else {
        (frac | (1 << 52), biased - 1075)
    };
    let r = BigRational::from_integer(BigInt::from(m)) * pow_rat(2, k);
    if neg {
        -r
    } else {
        r
    }
}

/// Independent exact reading of a well-formed, moderately sized literal
/// (decimal or hex; not inf). Digits are scaled by the radix directly.
fn oracle(text: &str) -> BigRational {
    let (neg, body) = match text.as_bytes()[0] {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let lower = body.to_ascii_lowercase();
    let (radix, body, exp_char, exp_base) = if let Some(rest) = lower.strip_prefix("0x") {
        (16u32, rest.to_string(), 'p', 2u32)
    } else {
        (10u32, lower.clone(), 'e', 10u32)
    };
    let (mant, exp) = match body.split_once(exp_char) {
        Some((m, e)) => (m.to_string(), e.parse::<i64>().unwrap()),
        None => (body.clone(), 0),
    };
    let (int, frac) = match mant.split_once('.') {
        Some((i, f)) => (i.to_string(), f.to_string()),
        None => (mant.clone(), String::new()),
    };
    let all = format!("{int}{frac}");
    let d = BigInt::parse_bytes(all.as_bytes(), radix).unwrap();
    let mut v = BigRational::from_integer(d)
        * BigRational::new(
            BigInt::one(),
            num_traits::pow(BigInt::from(radix), frac.len()),
        )
        * pow_rat(exp_base, exp);
    if neg {
        v = -v;
    }
    v
}

/// Checks containment, tightness and the `exact` flag of `e` for the value `v`.
fn check(text: &str, v: &BigRational, e: Enclosure) {
    let ctx = || format!("{text}: got {e:?} (lo={:e}, hi={:e})", e.lo, e.hi);
    assert!(!e.lo.is_nan() && !e.hi.is_nan(), "{}", ctx());
    assert!(e.lo <= e.hi, "lo > hi: {}", ctx());
    // containment: lo <= v <= hi, with infinities as the extended reals
    if e.lo.is_finite() {
        assert!(rat_of(e.lo) <= *v, "lo above value: {}", ctx());
    } else {
        assert_eq!(e.lo, f64::NEG_INFINITY, "{}", ctx());
    }
    if e.hi.is_finite() {
        assert!(*v <= rat_of(e.hi), "hi below value: {}", ctx());
    } else {
        assert_eq!(e.hi, f64::INFINITY, "{}", ctx());
    }
    // tightness: no double strictly between a bound and v
    let lo_is_v = e.lo.is_finite() && rat_of(e.lo) == *v;
    let hi_is_v = e.hi.is_finite() && rat_of(e.hi) == *v;
    if !lo_is_v {
        let up = next_up(e.lo);
        assert!(
            up == f64::INFINITY || rat_of(up) > *v,
            "lo not tight: {}",
            ctx()
        );
    }
    if !hi_is_v {
        let down = next_down(e.hi);
        assert!(
            down == f64::NEG_INFINITY || rat_of(down) < *v,
            "hi not tight: {}",
            ctx()
        );
    }
    assert_eq!(e.exact, lo_is_v && hi_is_v, "exact flag: {}", ctx());
    // a bound that is zero for a nonzero value is +0.0
    if !v.is_zero() {
        for b in [e.lo, e.hi] {
            if b == 0.0 {
                assert!(
                    b.is_sign_positive(),
                    "bound next to zero is -0.0: {}",
                    ctx()
                );
            }
        }
    }
    // consistency with std's round-to-nearest (decimal only)
    if !text.to_ascii_lowercase().contains('x') {
        let near: f64 = text.parse().unwrap();
        assert!(
            near == e.lo || near == e.hi,
            "std nearest {near:e} is neither bound: {}",
            ctx()
        );
    }
}

fn check_text(text: &str) {
    let e = parse_enclosure(text).unwrap_or_else(|err| panic!("{text}: {err}"));
    check(text, &oracle(text), e);
}

/// Exact decimal text of a rational whose denominator is a power of two.
fn dyadic_to_decimal(r: &BigRational) -> String {
    let neg = r.is_negative();
    let r = r.abs();
    let den = r.denom().clone();
    let mut k = 0u32;
    let mut d = den.clone();
    while d > BigInt::one() {
        assert!((&d % 2u32).is_zero(), "not dyadic");
        d /= 2u32;
        k += 1;
    }
    // r = num / 2^k = num * 5^k / 10^k
    let scaled = r.numer() * pow_int(5, k);
    format!("{}{}e-{}", if neg { "-" } else { "" }, scaled, k)
}

fn bits_to_f64_strategy() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<u64>().prop_map(f64::from_bits),
        (0u64..(1u64 << 52)).prop_map(f64::from_bits), // subnormals
        (0u64..64).prop_map(|b| f64::from_bits((0x7fe << 52) | ((1u64 << 52) - 1 - b))), // near MAX
    ]
    .prop_filter("finite", |x| x.is_finite())
}

// ---------------------------------------------------------------- parse: edge cases

#[test]
fn exact_values() {
    let cases: &[(&str, f64)] = &[
        ("0.5", 0.5),
        ("123", 123.0),
        ("1.5", 1.5),
        (".5", 0.5),
        ("5.", 5.0),
        ("+2.25", 2.25),
        ("-2.25", -2.25),
        ("1e22", 1e22),
        ("1E22", 1e22),
        ("2.5E+3", 2500.0),
        ("9007199254740992", 9007199254740992.0),
        ("0x1.8p-3", 0.1875),
        ("0X1.8P-3", 0.1875),
        ("0x.8p1", 1.0),
        ("0x1.p0", 1.0),
        ("0x10", 16.0),
        ("0x1e5", 485.0),
        ("0x1p3", 8.0),
        ("0X1.999999999999AP-4", 0.1),
        ("0x1.fffffffffffffp+1023", f64::MAX),
        ("-0x1.fffffffffffffp+1023", -f64::MAX),
        ("0x1p-1074", 5e-324),
        ("0x0.0000000000001p-1022", 5e-324),
        ("0x1p-1022", f64::MIN_POSITIVE),
        ("0x0.8p-1073", 5e-324),
        ("0x00000000.000000000000000000000000000001p+120", 1.0),
        ("17976931348623157081452742373170435679807056752584499659891747680315726078002853876058955863276687817154045895351438246423432132688946418276846754670353751698604991057655128207624549009038932894407586850845513394230458323690322294816580855933212334827479782620414472316873817718091929988125040402618412485836\
8", f64::MAX),
        ("0.000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000004940656458412465441765687928682213723650598026143247644255856825006755072702087518652998363616359923797965646954457177309266567103559397963987747960107818781263007131903114045278458171678489821036887186360569987307230500063874091535649843873124733972731696151400317153853980741262385655911710266585566867681870395603106249319452715914924553293054565444011274801297099995419319894090804165633245247571478690147267801593552386115501348035264934720193790268107107491703332226844753335720832431936092382893458368060106011506169809753078342277318329247904982524730776375927247874656084778203734469699533647017972677717585125660551199131504891101451037862738167250955837389733598993664809941164205702637090279242767544565229087538682506419718265533447265625", 5e-324),
    ];
    for &(text, want) in cases {
        let e = parse_enclosure(text).unwrap_or_else(|err| panic!("{text}: {err}"));
        assert_eq!(
            e,
            Enclosure {
                lo: want,
                hi: want,
                exact: true
            },
            "{text}"
        );
        if !text.contains(['x', 'X']) || text.len() < 200 {
            check_text(text);
        }
    }
}

#[test]
fn zeros_and_signs() {
    for text in [
        "0",
        "+0",
        "0.0",
        ".0",
        "0.",
        "0e0",
        "0e-999999",
        "0e99999999999999999999999",
        "000",
        "0x0",
        "0x0.0p+0",
        "0x.0p99999",
    ] {
        let e = parse_enclosure(text).unwrap();
        assert!(e.exact && e.lo == 0.0 && e.hi == 0.0, "{text}: {e:?}");
        assert!(
            e.lo.is_sign_positive() && e.hi.is_sign_positive(),
            "{text}: {e:?}"
        );
    }
    for text in ["-0", "-0.0", "-0e5", "-0x0p0", "-0x0.0p+0"] {
        let e = parse_enclosure(text).unwrap();
        assert!(e.exact && e.lo == 0.0 && e.hi == 0.0, "{text}: {e:?}");
        assert!(
            e.lo.is_sign_negative() && e.hi.is_sign_negative(),
            "{text}: {e:?}"
        );
    }
}

#[test]
fn infinities() {
    for text in [
        "inf",
        "+inf",
        "INF",
        "Inf",
        "infinity",
        "Infinity",
        "INFINITY",
        "+iNfInItY",
    ] {
        let e = parse_enclosure(text).unwrap();
        assert_eq!(
            e,
            Enclosure {
                lo: f64::INFINITY,
                hi: f64::INFINITY,
                exact: true
            },
            "{text}"
        );
    }
    for text in ["-inf", "-Infinity"] {
        let e = parse_enclosure(text).unwrap();
        assert_eq!(
            e,
            Enclosure {
                lo: f64::NEG_INFINITY,
                hi: f64::NEG_INFINITY,
                exact: true
            },
            "{text}"
        );
    }
}

#[test]
fn inexact_examples() {
    let e = parse_enclosure("0.1").unwrap();
    assert_eq!(e.lo, 0.09999999999999999);
    assert_eq!(e.hi, 0.1);
    assert_eq!(hexf64(e.lo), "0x1.9999999999999p-4");
    assert_eq!(hexf64(e.hi), "0x1.999999999999ap-4");
    assert!(!e.exact);
    let e = parse_enclosure("-0.1").unwrap();
    assert_eq!((e.lo, e.hi, e.exact), (-0.1, -0.09999999999999999, false));

    let big = Enclosure {
        lo: f64::MAX,
        hi: f64::INFINITY,
        exact: false,
    };
    let nbig = Enclosure {
        lo: f64::NEG_INFINITY,
        hi: -f64::MAX,
        exact: false,
    };
    let tiny = Enclosure {
        lo: 0.0,
        hi: 5e-324,
        exact: false,
    };
    let ntiny = Enclosure {
        lo: -5e-324,
        hi: 0.0,
        exact: false,
    };
    for (text, want) in [
        ("1e999", big),
        ("-1e999", nbig),
        ("0x1p99999", big),
        ("-0x1p99999", nbig),
        ("0x1p1024", big),
        ("1.7976931348623159e308", big),
        ("1e-999", tiny),
        ("-1e-999", ntiny),
        ("0x1p-99999", tiny),
        ("-0x1p-99999", ntiny),
        ("0x1p-1075", tiny),
        ("2.4703282292062327e-324", tiny),
        ("1e-324", tiny),
    ] {
        let e = parse_enclosure(text).unwrap();
        assert_eq!(e, want, "{text}");
        assert_eq!(e.lo.to_bits(), want.lo.to_bits(), "{text} (zero sign)");
        assert_eq!(e.hi.to_bits(), want.hi.to_bits(), "{text} (zero sign)");
    }
    // Just below the overflow threshold MAX + ulp/2: still [prev, MAX]... or [MAX, inf]
    let e = parse_enclosure("1.7976931348623158e308").unwrap();
    assert_eq!((e.lo, e.hi), (f64::MAX, f64::INFINITY));
    let e = parse_enclosure("1.7976931348623157e308").unwrap();
    assert_eq!((e.lo, e.hi), (next_down(f64::MAX), f64::MAX));
    // Half of the smallest subnormal, exactly: 2^-1075
    let half_min = dyadic_to_decimal(&pow_rat(2, -1075));
    assert_eq!(parse_enclosure(&half_min).unwrap(), tiny);
    // Hex with more mantissa digits than fit: rounded outward.
    let e = parse_enclosure("0x1.00000000000001p0").unwrap();
    assert_eq!((e.lo, e.hi, e.exact), (1.0, next_up(1.0), false));
    let e = parse_enclosure("0x1.fffffffffffff8p0").unwrap();
    assert_eq!((e.lo, e.hi, e.exact), (next_down(2.0), 2.0, false));
    let e = parse_enclosure("0x1.0000000000000000000000000000001p0").unwrap();
    assert_eq!((e.lo, e.hi, e.exact), (1.0, next_up(1.0), false));
    let e = parse_enclosure("0x1.8p-1074").unwrap(); // 1.5 * min subnormal
    assert_eq!((e.lo, e.hi, e.exact), (5e-324, 1e-323, false));
}

#[test]
fn edge_cases_against_oracle() {
    let cases = [
        "0.1",
        "-0.1",
        "0.2",
        "0.3",
        "1e23",
        "-1e23",
        "9007199254740993",
        "9007199254740993.0000000000000000000000000000000001",
        "9007199254740992.9999999999999999999999999999999999",
        "9007199254740995",
        "2.4703282292062327e-324",
        "2.4703282292062328e-324",
        "4.9406564584124654e-324",
        "7.4109846876186982e-324",
        "2.2250738585072014e-308",
        "2.2250738585072011e-308",
        "2.2250738585072012e-308",
        "1.7976931348623157e308",
        "1.7976931348623158e308",
        "1.7976931348623159e308",
        "1e308",
        "1e-308",
        "1e-320",
        "123456789012345678901234567890",
        "3.141592653589793238462643383279502884197",
        "2.718281828459045235360287471352662497757",
        "0.000001",
        "1e-7",
        "8.98846567431158e307",
        "4.4501477170144023e-308",
        "0x1.00000000000008p0",
        "0x1.00000000000018p0",
        "0x1.000000000000080000001p0",
        "0x1.fffffffffffff8p1023",
        "0x1.fffffffffffff7ffffffp1023",
        "0x0.00000000000008p-1022",
        "0x0.0000000000000fffp-1022",
        "0x123456789abcdef0123456789p-200",
        "-0x123456789abcdef0123456789p-1200",
        "0x.1p-1070",
    ];
    for text in cases {
        check_text(text);
    }
    // truncations of exact expansions are just below the double
    let e = parse_enclosure("4.9406564584124654417656879286822137236505980e-324").unwrap();
    assert_eq!((e.lo, e.hi, e.exact), (0.0, 5e-324, false));
    let e =
        parse_enclosure("2.2250738585072013830902327173324040642192159804623318305e-308").unwrap();
    check_text("2.2250738585072013830902327173324040642192159804623318306e-308");
    assert_eq!(
        (e.lo, e.hi, e.exact),
        (next_down(f64::MIN_POSITIVE), f64::MIN_POSITIVE, false)
    );
}

#[test]
fn malformed() {
    let bad = [
        "-",
        "+",
        "1e",
        "1e+",
        "1E-",
        "0x",
        "0X",
        "-0x",
        "0x.",
        "0x.p1",
        "0x1.p",
        "0x1.8",
        "0x1p",
        "0x1p+",
        "0xg",
        "0x1.8e3",
        "1.2.3",
        "--1",
        "+-1",
        "-+1",
        "1_000",
        "1,5",
        ".",
        ".e1",
        "e5",
        "1e5.5",
        "1e5e5",
        " 1",
        "1 ",
        "1\n",
        "١٢٣",
        "１２",
        "1٢",
        "½",
        "0b101",
        "1f",
        "1.5d",
        "0x1p0x1",
        "infin",
        "infinityy",
        "in",
        "-",
        "+-inf",
        "1e1_0",
        "0x1_0",
    ];
    for text in bad {
        let err = parse_enclosure(text).expect_err(text);
        assert!(
            matches!(err, NumberError::Malformed { .. }),
            "{text}: {err:?}"
        );
        let msg = err.to_string();
        assert!(
            !msg.contains('\n') && msg.contains("expected"),
            "{text}: {msg}"
        );
    }
    assert_eq!(parse_enclosure(""), Err(NumberError::Empty));
    for text in ["nan", "NaN", "-nan", "+NAN"] {
        assert_eq!(
            parse_enclosure(text),
            Err(NumberError::NotANumber),
            "{text}"
        );
    }
    for err in [NumberError::Empty, NumberError::NotANumber] {
        assert!(!err.to_string().contains('\n'));
    }
    // Long malformed input: message stays short.
    let long = format!("{}x", "1".repeat(100_000));
    let msg = parse_enclosure(&long).unwrap_err().to_string();
    assert!(msg.len() < 300, "{msg}");
}

#[test]
fn huge_inputs_are_linear_and_correct() {
    let n = 1_000_000;
    let start = Instant::now();
    let zeros = "0".repeat(n);
    // 10^n: overflow
    let e = parse_enclosure(&format!("1{zeros}")).unwrap();
    assert_eq!((e.lo, e.hi), (f64::MAX, f64::INFINITY));
    // 10^-(n+1): underflow
    let e = parse_enclosure(&format!("-0.{zeros}1")).unwrap();
    assert_eq!((e.lo, e.hi), (-5e-324, 0.0));
    // 10^-(n+1) * 10^(n+1) = 1 exactly
    let e = parse_enclosure(&format!("0.{zeros}1e{}", n + 1)).unwrap();
    assert_eq!(
        e,
        Enclosure {
            lo: 1.0,
            hi: 1.0,
            exact: true
        }
    );
    // 10^n * 10^-n = 1, also with trailing zeros in the fraction
    let e = parse_enclosure(&format!("1{zeros}.{zeros}e-{n}")).unwrap();
    assert_eq!(
        e,
        Enclosure {
            lo: 1.0,
            hi: 1.0,
            exact: true
        }
    );
    // 0.1 + 10^-(n+2): encloses like 0.1 (the double 0.1 is above both)
    let e = parse_enclosure(&format!("0.1{zeros}1")).unwrap();
    assert_eq!((e.lo, e.hi, e.exact), (0.09999999999999999, 0.1, false));
    // 1 + tiny: strictly above 1
    let e = parse_enclosure(&format!("1.{zeros}1")).unwrap();
    assert_eq!((e.lo, e.hi, e.exact), (1.0, next_up(1.0), false));
    // a million significant digits
    let digits: String = (0..n).map(|i| char::from(b'1' + (i % 9) as u8)).collect();
    let e = parse_enclosure(&format!("0.{digits}")).unwrap();
    let near: f64 = format!("0.{digits}").parse().unwrap();
    assert!(!e.exact && (e.lo == near || e.hi == near) && next_up(e.lo) == e.hi);
    // exponents with a million digits
    let nines = "9".repeat(n);
    assert_eq!(
        parse_enclosure(&format!("1e{nines}")).unwrap().hi,
        f64::INFINITY
    );
    assert_eq!(parse_enclosure(&format!("1e-{nines}")).unwrap().lo, 0.0);
    assert_eq!(
        parse_enclosure(&format!("0x1p{nines}")).unwrap().hi,
        f64::INFINITY
    );
    assert_eq!(parse_enclosure(&format!("-0x1p-{nines}")).unwrap().hi, 0.0);
    assert_eq!(
        parse_enclosure(&format!("0e{nines}")).unwrap(),
        Enclosure {
            lo: 0.0,
            hi: 0.0,
            exact: true
        }
    );
    // hex: a million nibbles
    let e = parse_enclosure(&format!("0x1.{zeros}1p0")).unwrap();
    assert_eq!((e.lo, e.hi, e.exact), (1.0, next_up(1.0), false));
    let e = parse_enclosure(&format!("0x0.{zeros}1p{}", 4 * (n + 1))).unwrap();
    assert_eq!(
        e,
        Enclosure {
            lo: 1.0,
            hi: 1.0,
            exact: true
        }
    );
    let e = parse_enclosure(&format!("0x1{zeros}p-{}", 4 * n)).unwrap();
    assert_eq!(
        e,
        Enclosure {
            lo: 1.0,
            hi: 1.0,
            exact: true
        }
    );
    // Linear time: generous bound for a shared 2-core machine and debug builds.
    let secs = start.elapsed().as_secs_f64();
    assert!(secs < 20.0, "took {secs}s");
}

// ---------------------------------------------------------------- format: edge cases

#[test]
fn format_f64_examples() {
    let cases: &[(f64, &str)] = &[
        (0.1, "0.1"),
        (-2.5, "-2.5"),
        (1e300, "1e300"),
        (2.2250738585072014e-308, "2.2250738585072014e-308"),
        (5e-324, "5e-324"),
        (f64::INFINITY, "inf"),
        (f64::NEG_INFINITY, "-inf"),
        (f64::NAN, "nan"),
        (-f64::NAN, "nan"),
        (3.0, "3"),
        (-3.0, "-3"),
        (0.0, "0"),
        (-0.0, "-0"),
        (123456789012345680.0, "1.2345678901234568e17"),
        (1e-7, "1e-7"),
        (0.0001, "0.0001"),
        (1e-5, "0.00001"),
        (1.5e-5, "0.000015"),
        (1e-6, "1e-6"),
        (1e16, "10000000000000000"),
        (1.5e16, "15000000000000000"),
        (1e17, "1e17"),
        (123.456, "123.456"),
        (0.3, "0.3"),
        (1.0 / 3.0, "0.3333333333333333"),
        (100.0, "100"),
        (f64::MAX, "1.7976931348623157e308"),
        (-f64::MAX, "-1.7976931348623157e308"),
        (9007199254740993.0, "9007199254740992"),
        (0.09999999999999999, "0.09999999999999999"),
        (1.25e-300, "1.25e-300"),
    ];
    for &(x, want) in cases {
        assert_eq!(format_f64(x), want, "{x:e}");
    }
}

#[test]
fn format_f32_examples() {
    let cases: &[(f32, &str)] = &[
        (0.1, "0.1"),
        (-2.5, "-2.5"),
        (3.0, "3"),
        (0.0, "0"),
        (-0.0, "-0"),
        (16777216.0, "16777216"),
        (f32::MAX, "3.4028235e38"),
        (f32::MIN_POSITIVE, "1.1754944e-38"),
        (1e-45, "1e-45"),
        (1.0 / 3.0, "0.33333334"),
        (f32::INFINITY, "inf"),
        (f32::NEG_INFINITY, "-inf"),
        (f32::NAN, "nan"),
        (1e-7, "1e-7"),
        (1e16, "10000000000000000"),
    ];
    for &(x, want) in cases {
        assert_eq!(format_f32(x), want, "{x:e}");
    }
}

#[test]
fn hexf64_examples() {
    let cases: &[(f64, &str)] = &[
        (0.1, "0x1.999999999999ap-4"),
        (1.0, "0x1p+0"),
        (-1.0, "-0x1p+0"),
        (0.0, "0x0p+0"),
        (-0.0, "-0x0p+0"),
        (0.1875, "0x1.8p-3"),
        (5e-324, "0x0.0000000000001p-1022"),
        (f64::MIN_POSITIVE, "0x1p-1022"),
        (f64::MAX, "0x1.fffffffffffffp+1023"),
        (1024.0, "0x1p+10"),
        (f64::INFINITY, "inf"),
        (f64::NEG_INFINITY, "-inf"),
        (f64::NAN, "nan"),
    ];
    for &(x, want) in cases {
        assert_eq!(hexf64(x), want, "{x:e}");
    }
}

/// Significant digits of a formatted number (no sign, point, exponent, or leading/trailing zeros).
fn sig_digits(s: &str) -> String {
    let s = s.trim_start_matches('-');
    let m = s.split('e').next().unwrap();
    let d: String = m.chars().filter(|c| *c != '.').collect();
    d.trim_start_matches('0').trim_end_matches('0').to_string()
}

/// No decimal with fewer significant digits than `s` reads back as `x`.
fn assert_shortest_f64(x: f64, s: &str) {
    let n = sig_digits(s).len();
    if n <= 1 {
        return;
    }
    let r = format!("{:.*e}", n - 2, x.abs()); // nearest with n-1 digits
    let (m, e) = r.split_once('e').unwrap();
    let m: i64 = m.replace('.', "").parse().unwrap();
    let e: i64 = e.parse::<i64>().unwrap() - (n as i64 - 2);
    for cand in [m - 1, m, m + 1] {
        let back: f64 = format!("{cand}e{e}").parse().unwrap();
        assert_ne!(
            back,
            x.abs(),
            "{s} is not shortest: {cand}e{e} also reads back"
        );
    }
}

fn assert_shortest_f32(x: f32, s: &str) {
    let n = sig_digits(s).len();
    if n <= 1 {
        return;
    }
    let r = format!("{:.*e}", n - 2, x.abs());
    let (m, e) = r.split_once('e').unwrap();
    let m: i64 = m.replace('.', "").parse().unwrap();
    let e: i64 = e.parse::<i64>().unwrap() - (n as i64 - 2);
    for cand in [m - 1, m, m + 1] {
        let back: f32 = format!("{cand}e{e}").parse().unwrap();
        assert_ne!(
            back,
            x.abs(),
            "{s} is not shortest: {cand}e{e} also reads back"
        );
    }
}

/// The layout rules: plain for exponents -5..=16, else `d[.ddd]e[-]N`.
fn assert_layout(s: &str) {
    let body = s.strip_prefix('-').unwrap_or(s);
    assert!(!body.contains('+') && !body.contains('E'), "{s}");
    if let Some((m, e)) = body.split_once('e') {
        let e: i32 = e.parse().unwrap();
        assert!(!(-5..=16).contains(&e), "{s} should be plain");
        assert!(m.len() == 1 || m.as_bytes()[1] == b'.', "{s}");
        assert!(
            m.as_bytes()[0] != b'0' && !m.ends_with('0') && !m.ends_with('.'),
            "{s}"
        );
    } else if body.contains('.') {
        assert!(!body.ends_with('0') && !body.ends_with('.'), "{s}");
    }
}

// ---------------------------------------------------------------- properties

fn decimal_text() -> impl Strategy<Value = String> {
    (
        prop_oneof![Just(""), Just("+"), Just("-")],
        "[0-9]{1,40}",
        any::<prop::sample::Index>(),
        any::<bool>(),
        prop::option::of((
            prop_oneof![Just("e"), Just("E"), Just("e+"), Just("e-")],
            0i32..=400,
        )),
    )
        .prop_map(|(sign, digits, at, point, exp)| {
            let mut s = String::from(sign);
            if point {
                let k = at.index(digits.len() + 1);
                s.push_str(&digits[..k]);
                s.push('.');
                s.push_str(&digits[k..]);
            } else {
                s.push_str(&digits);
            }
            if let Some((marker, e)) = exp {
                s.push_str(marker);
                s.push_str(&e.to_string());
            }
            s
        })
}

fn hex_text() -> impl Strategy<Value = String> {
    (
        prop_oneof![Just(""), Just("-")],
        "[0-9a-fA-F]{1,30}",
        any::<prop::sample::Index>(),
        -1300i32..1300,
        any::<bool>(),
    )
        .prop_map(|(sign, digits, at, exp, upper)| {
            let k = at.index(digits.len() + 1);
            let (x, p) = if upper { ("0X", "P") } else { ("0x", "p") };
            format!("{sign}{x}{}.{}{p}{exp}", &digits[..k], &digits[k..])
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn random_decimals_are_tightly_enclosed(text in decimal_text()) {
        check_text(&text);
    }

    #[test]
    fn random_hex_floats_are_tightly_enclosed(text in hex_text()) {
        check_text(&text);
    }

    /// Exact midpoints between adjacent doubles (the hard halfway cases), and
    /// values a hair above or below them.
    #[test]
    fn midpoints_and_neighbours(x in bits_to_f64_strategy(), nudge in 0u8..3, extra in 1usize..60) {
        let x = x.abs();
        prop_assume!(x < f64::MAX);
        let mid = (rat_of(x) + rat_of(next_up(x))) / BigRational::from_integer(BigInt::from(2));
        let text = dyadic_to_decimal(&mid); // "<digits>e-<k>", exact
        let (digits, exp) = text.split_once('e').unwrap();
        let text = match nudge {
            0 => text.clone(),
            // append `extra` zeros then a 1: a hair above the midpoint
            1 => format!("{digits}.{}1e{exp}", "0".repeat(extra)),
            // a hair below: digits - 1 followed by nines
            _ => {
                let d = BigInt::parse_bytes(digits.as_bytes(), 10).unwrap() - 1;
                format!("{d}.{}e{exp}", "9".repeat(extra))
            }
        };
        check_text(&text);
        check_text(&format!("-{text}"));
    }

    /// A double's exact expansion with a far tail (past the kept-digit limit or
    /// not) just above or just below: the double is one bound, its neighbour the other.
    #[test]
    fn exact_double_with_far_tail(x in bits_to_f64_strategy(), zeros in 0usize..1000, above in any::<bool>()) {
        let x = x.abs();
        prop_assume!(x > 0.0);
        let text = dyadic_to_decimal(&rat_of(x));
        let (digits, exp) = text.split_once('e').unwrap();
        let text = if above {
            format!("{digits}.{}1e{exp}", "0".repeat(zeros))
        } else {
            let d = BigInt::parse_bytes(digits.as_bytes(), 10).unwrap() - 1;
            format!("{d}.{}e{exp}", "9".repeat(zeros + 1))
        };
        let e = parse_enclosure(&text).unwrap();
        let want = if above { (x, next_up(x)) } else { (next_down(x), x) };
        prop_assert_eq!((e.lo, e.hi, e.exact), (want.0, want.1, false), "{}", text);
        check_text(&text);
    }

    /// Long random mantissas, around and past the kept-digit limit.
    #[test]
    fn long_random_decimals(digits in "[0-9]{1,1200}", exp in -1500i32..1500, neg in any::<bool>()) {
        let text = format!("{}0.{digits}e{exp}", if neg { "-" } else { "" });
        check_text(&text);
    }

    /// The exact decimal expansion of any double parses back exactly, and so
    /// does its hex form.
    #[test]
    fn exact_decimal_and_hex_round_trip(x in bits_to_f64_strategy()) {
        let text = dyadic_to_decimal(&rat_of(x));
        let e = parse_enclosure(&text).unwrap();
        prop_assert_eq!(e, Enclosure { lo: x, hi: x, exact: true }, "{}", text);
        let h = hexf64(x);
        let e = parse_enclosure(&h).unwrap();
        prop_assert_eq!(e.lo.to_bits(), x.to_bits(), "{}", h);
        prop_assert_eq!(e.hi.to_bits(), x.to_bits(), "{}", h);
        prop_assert!(e.exact);
        check_text(&h);
    }

    #[test]
    fn format_f64_round_trips_and_is_shortest(x in bits_to_f64_strategy()) {
        let s = format_f64(x);
        let back: f64 = s.parse().unwrap();
        prop_assert_eq!(back.to_bits(), x.to_bits(), "{}", s);
        assert_shortest_f64(x, &s);
        assert_layout(&s);
        // and our own parser encloses it with x as one bound
        let e = parse_enclosure(&s).unwrap();
        prop_assert!(e.lo == x || e.hi == x, "{} -> {:?}", s, e);
        check_text(&s);
    }

    #[test]
    fn format_f32_round_trips_and_is_shortest(bits in any::<u32>()) {
        let x = f32::from_bits(bits);
        prop_assume!(x.is_finite());
        let s = format_f32(x);
        let back: f32 = s.parse().unwrap();
        prop_assert_eq!(back.to_bits(), x.to_bits(), "{}", s);
        assert_shortest_f32(x, &s);
        assert_layout(&s);
    }
}

// ---------------------------------------------------------------- exact order of two literals

/// A rational strictly inside the gap above the finite double `x >= 0` (beyond f64::MAX for
/// `x = MAX`): `x + ulp * n / 2^s` with `0 < n < 2^s`.
fn in_gap_above(x: f64, n: u64, s: u32) -> BigRational {
    let ulp = if x == f64::MAX {
        pow_rat(2, 971)
    } else {
        rat_of(next_up(x)) - rat_of(x)
    };
    rat_of(x) + ulp * BigRational::new(BigInt::from(n), pow_int(2, s))
}

/// Texts of a dyadic rational: its exact decimal, a hex float, or a decimal a hair above or
/// below it (a tail of `zeros` zeros then a 1, or the last digit one lower then nines).
fn texts_of(r: &BigRational, zeros: usize) -> Vec<String> {
    let dec = dyadic_to_decimal(r);
    let (digits, exp) = dec.split_once('e').unwrap();
    let k = r.denom().bits() - 1; // r = numer / 2^k
    let below = BigInt::parse_bytes(digits.as_bytes(), 10).unwrap() - 1;
    vec![
        dec.clone(),
        format!("0x{}p-{k}", r.numer().to_str_radix(16)),
        format!("{digits}.{}1e{exp}", "0".repeat(zeros)),
        format!("{below}.{}e{exp}", "9".repeat(zeros + 1)),
    ]
}

#[test]
fn exact_order_of_literals_in_one_gap() {
    use ivjit::internals::syntax::exact::compare;
    use std::cmp::Ordering::*;
    for (a, b, want) in [
        ("0.10000000000000001", "0.1", Greater),
        ("0.1", "0.1", Equal),
        ("5e-324", "4e-324", Greater),
        ("4e-324", "0", Greater),
        ("1e400", "1e309", Greater),
        ("-1e400", "-1e309", Less),
        ("0x1.00000000000001p0", "1.0000000000000000001", Greater),
        ("inf", "1e99999", Greater),
        ("-0", "0", Equal),
    ] {
        assert_eq!(compare(a, b).unwrap(), want, "{a} vs {b}");
        assert_eq!(compare(b, a).unwrap(), want.reverse(), "{b} vs {a}");
    }
    assert!(compare("1", "nan").is_err());
}

/// Interval bounds whose enclosures overlap but whose written values are inverted are rejected
/// like [2, 1], as values (`Interval::parse`, hence `--var`) and as expression literals; equal
/// or ordered ones are not.
#[test]
fn inverted_bounds_within_one_double_are_rejected() {
    use ivjit::{Error, Expression, Interval, IntervalError};
    for (lo, hi) in [
        ("0.10000000000000001", "0.1"),
        ("5e-324", "4e-324"),
        ("0.100000000000000011", "0.10000000000000001"),
        ("1e400", "1e309"),
        ("-1e309", "-1e400"),
        ("0x1.00000000000001p0", "1.0000000000000000001"),
        ("2", "1"),
    ] {
        let text = format!("[{lo}, {hi}]");
        match Interval::parse(&text) {
            Err(IntervalError::Inverted { .. }) => {}
            other => panic!("{text}: {other:?}"),
        }
        let e = Expression::parse(&format!("{text} + x")).unwrap_err();
        let Error::Compile(d) = e else {
            panic!("{text}: {e}")
        };
        assert!(
            d.message
                .starts_with("invalid interval literal: lower bound")
                && d.message.contains("is greater than upper bound"),
            "{text}: {}",
            d.message
        );
    }
    let tenth = Interval::parse("0.1").unwrap();
    for (text, want) in [
        ("[0.1, 0.1]", tenth),
        (
            "[0.1, 0.10000000000000001]",
            Interval::new(tenth.lo, next_up(0.1)).unwrap(),
        ),
        ("[4e-324, 5e-324]", Interval::new(0.0, 1e-323).unwrap()),
        (
            "[1e309, 1e400]",
            Interval::new(f64::MAX, f64::INFINITY).unwrap(),
        ),
        ("[-0, 0]", Interval::new(0.0, 0.0).unwrap()),
        ("[1, 1]", Interval::new(1.0, 1.0).unwrap()),
    ] {
        assert_eq!(Interval::parse(text).unwrap(), want, "{text}");
        Expression::parse(&format!("{text} + x")).unwrap();
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    /// Two numbers in the gap above one double (decimal, hex or mixed; the gap beyond MAX and
    /// the one below the smallest subnormal included): `compare` orders them as the oracle.
    #[test]
    fn compare_orders_numbers_in_one_gap_as_the_oracle(
        x in bits_to_f64_strategy(),
        edge in 0u8..4,
        s in 1u32..70,
        n1 in any::<u64>(),
        n2 in any::<u64>(),
        zeros in 0usize..40,
        neg in any::<bool>(),
    ) {
        let x = match edge { 0 => 0.0, 1 => f64::MAX, _ => x.abs() };
        let s = s.min(63);
        let n = |v: u64| 1 + v % ((1u64 << s) - 1);
        let (r1, r2) = (in_gap_above(x, n(n1), s), in_gap_above(x, n(n2), s));
        for a in texts_of(&r1, zeros) {
            for b in texts_of(&r2, zeros) {
                let (a, b) = if neg { (format!("-{a}"), format!("-{b}")) } else { (a.clone(), b) };
                let want = oracle(&a).cmp(&oracle(&b));
                let got = ivjit::internals::syntax::exact::compare(&a, &b).unwrap();
                prop_assert_eq!(got, want, "{} vs {}", a, b);
            }
        }
    }

    /// Random literals (mostly in different gaps, ordered by their enclosures).
    #[test]
    fn compare_orders_random_literals_as_the_oracle(
        a in prop_oneof![decimal_text(), hex_text()],
        b in prop_oneof![decimal_text(), hex_text()],
    ) {
        let want = oracle(&a).cmp(&oracle(&b));
        prop_assert_eq!(ivjit::internals::syntax::exact::compare(&a, &b).unwrap(), want, "{} vs {}", a, b);
    }
}
