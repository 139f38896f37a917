//! Number literals to rigorous `f64` enclosures, and floats back to text.
//!
//! [`parse_enclosure`] turns the text of a real number into the tightest `f64`
//! interval `[lo, hi]` that contains it. [`format_f64`] / [`format_f32`] print the
//! shortest decimal that round-trips, and [`hexf64`] prints the exact bits as a C99
//! hex float (for snapshots).
//!
//! # Accepted syntax
//!
//! An optional leading `+` or `-`, then one of
//!
//! * decimal: `123`, `1.5`, `.5`, `5.`, with an optional exponent `e`/`E`, an
//!   optional sign and at least one digit (`1e-3`, `2.5E+300`);
//! * hex, as C's `%a` prints it: `0x1.8p-3`, `0X1.999999999999AP-4`, `0x0.0p+0`,
//!   `0x.8p1`, `0x1.p0`. The binary exponent (`p`, decimal digits) is required
//!   when a `.` is present. Without a `.` the exponent is optional, so `0x10` is
//!   the hex integer 16 (and `0x1e5` is 485: `e` is a hex digit);
//! * `inf` or `infinity`, in any case.
//!
//! Nothing else: no surrounding whitespace, no `_` separators, no non-ASCII
//! digits, no `nan` (reported as [`NumberError::NotANumber`]).
//!
//! # Results
//!
//! * A value that is an `f64` gives `lo == hi == value` and `exact == true`
//!   (`0.5`, `1e22`, `0x1.8p-3`, subnormals such as `0x1p-1074`).
//! * Zero is exact: `0`, `+0`, `0x0p0` give `+0.0`; `-0` (any spelling of a
//!   negative zero) gives `lo == hi == -0.0`, keeping the IEEE sign of the literal.
//!   Both compare equal to `0.0`.
//! * Any other value gives the two adjacent doubles around it, `exact == false`:
//!   `0.1` gives `[0x1.9999999999999p-4, 0x1.999999999999ap-4]`.
//! * Beyond `f64::MAX`: `[f64::MAX, inf]` (mirrored for negatives).
//! * Between 0 and the smallest subnormal: `[0.0, 5e-324]`; negative:
//!   `[-5e-324, 0.0]`. A bound that sits next to zero of an inexact value is
//!   always `+0.0`.
//! * `inf` gives `lo == hi == inf`, `-inf` gives `lo == hi == -inf`, both
//!   `exact == true`: the caller decides whether an infinite bound is allowed.
//!
//! # Algorithm and limits
//!
//! Decimal: the significant digits are located in one linear scan (leading and
//! trailing zeros dropped). A value whose leading digit is at `10^309` or above
//! overflows, at `10^-325` or below underflows; both are decided without arithmetic.
//! Otherwise at most the first [`MAX_SIG_DIGITS`] significant digits `D` are kept
//! (a *sticky* flag records that nonzero digits were dropped), std's correctly
//! rounded `str::parse::<f64>` gives a double near `D * 10^E`, and exact big-integer
//! comparisons of `D * 10^E` (and `(D + 1) * 10^E` when sticky) against the
//! candidate doubles fix the largest double below and the smallest above. Every
//! double in range has at most 767 significant decimal digits, so with 800 kept
//! digits no double lies strictly inside the dropped tail, and the result is the
//! tightest enclosure of the full value. Big integers stay below ~4000 bits.
//!
//! Hex: the first 16 significant nibbles go into a `u64`, the rest into a sticky
//! flag; rounding to 53 bits (or to the subnormal grid) is done with integer
//! shifts, no big integers.
//!
//! Exponents are read with saturation at `10^30` (far beyond any input length),
//! so `1e` followed by a million digits costs linear time and is safely treated
//! as overflow or underflow. Total time is linear in the input length; memory
//! beyond the input is O(1) apart from the fixed-size big integers.

use num_bigint::BigUint;
use num_traits::Zero;
use std::cmp::Ordering;

/// The tightest f64 interval `[lo, hi]` containing the real number written in the text.
/// `exact` is true when `lo == hi` is the number itself.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Enclosure {
    /// The largest double not above the number.
    pub lo: f64,
    /// The smallest double not below the number.
    pub hi: f64,
    /// Whether the number is a double (then `lo == hi`).
    pub exact: bool,
}

/// Why a text is not a number literal.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum NumberError {
    /// The text is empty.
    #[error("empty number: expected a literal such as `42`, `1.5e-3`, `0x1.8p-3` or `inf`")]
    Empty,
    /// The text spells NaN (`nan`, `-NaN`, ...), which no interval can enclose.
    #[error("`nan` is not a number an interval can enclose: write a value such as `1.5`, `0x1p-3` or `inf`")]
    NotANumber,
    /// The text is not a valid literal. `text` is the input, shortened to 40
    /// characters and escaped (`\n`, `\u{...}`) as `char::escape_debug` does.
    #[error("malformed number `{text}`: {reason}; expected a literal such as `42`, `1.5e-3`, `0x1.8p-3` or `inf`")]
    Malformed {
        /// The input, shortened and escaped.
        text: String,
        /// What is wrong with it.
        reason: String,
    },
}

/// Number of significant decimal digits kept before the rest is folded into a
/// sticky flag. Must exceed 767 + 2 (the longest exact decimal of a double, plus
/// slack for the leading-digit position); see the module docs.
pub(crate) const MAX_SIG_DIGITS: usize = 800;

/// Exponents (decimal `e` and binary `p`) saturate at this magnitude. It is far
/// larger than any input length, so saturation never changes the outcome.
const EXP_CAP: i128 = 1_000_000_000_000_000_000_000_000_000_000; // 10^30

/// Accepts the syntax described in the module docs; see there for the results.
///
/// ```
/// use ivjit::internals::syntax::number::{parse_enclosure, NumberError};
/// let tenth = parse_enclosure("0.1").unwrap();
/// assert!(!tenth.exact && tenth.lo < tenth.hi);
/// assert_eq!(tenth.hi, 0.1); // the nearest double is just above 1/10
/// assert_eq!(tenth.lo, f64::from_bits(0.1f64.to_bits() - 1));
/// let e = parse_enclosure("0x1.8p-3").unwrap();
/// assert!(e.exact && e.lo == 0.1875 && e.hi == 0.1875);
/// assert_eq!(parse_enclosure("1e400").unwrap().hi, f64::INFINITY);
/// assert_eq!(parse_enclosure("nan"), Err(NumberError::NotANumber));
/// ```
pub fn parse_enclosure(text: &str) -> Result<Enclosure, NumberError> {
    if text.is_empty() {
        return Err(NumberError::Empty);
    }
    let (neg, body) = match text.as_bytes()[0] {
        b'+' => (false, &text[1..]),
        b'-' => (true, &text[1..]),
        _ => (false, text),
    };
    let malformed = |reason: String| {
        // Shortened and escaped, so the message stays one short line.
        let mut short: String = text.chars().take(40).flat_map(char::escape_debug).collect();
        if text.chars().nth(40).is_some() {
            short.push('…');
        }
        NumberError::Malformed {
            text: short,
            reason,
        }
    };
    if body.is_empty() {
        return Err(malformed("a sign must be followed by a number".into()));
    }
    let mag = if body.eq_ignore_ascii_case("inf") || body.eq_ignore_ascii_case("infinity") {
        Enclosure {
            lo: f64::INFINITY,
            hi: f64::INFINITY,
            exact: true,
        }
    } else if body.eq_ignore_ascii_case("nan") {
        return Err(NumberError::NotANumber);
    } else {
        let b = body.as_bytes();
        if b.len() >= 2 && b[0] == b'0' && (b[1] == b'x' || b[1] == b'X') {
            parse_hex(&b[2..]).map_err(malformed)?
        } else {
            parse_decimal(b).map_err(malformed)?
        }
    };
    Ok(if neg { negate(mag) } else { mag })
}

fn negate(e: Enclosure) -> Enclosure {
    let mut hi = -e.lo;
    if !e.exact && hi == 0.0 {
        hi = 0.0; // +0.0 for the bound next to zero
    }
    Enclosure {
        lo: -e.hi,
        hi,
        exact: e.exact,
    }
}

const OVERFLOW: Enclosure = Enclosure {
    lo: f64::MAX,
    hi: f64::INFINITY,
    exact: false,
};
const UNDERFLOW: Enclosure = Enclosure {
    lo: 0.0,
    hi: f64::from_bits(1),
    exact: false,
};
const ZERO: Enclosure = Enclosure {
    lo: 0.0,
    hi: 0.0,
    exact: true,
};

fn describe_unexpected(s: &[u8], i: usize, what: &str) -> String {
    let c = s[i];
    match c {
        b'.' => format!("a second `.` in the {what}"),
        b'_' => "digit separators `_` are not allowed".into(),
        b'+' | b'-' => format!("unexpected sign `{}` in the {what}", c as char),
        _ if c.is_ascii_whitespace() => "whitespace is not allowed in a number".into(),
        _ if !c.is_ascii() => "non-ASCII character (only ASCII digits are allowed)".into(),
        _ => format!("unexpected character `{}` in the {what}", c as char),
    }
}

/// Reads `[+-]digits` (decimal) at `s[i..]`, saturating at `EXP_CAP`.
/// Returns the value and the index after the last digit.
fn parse_exponent(s: &[u8], mut i: usize, marker: char) -> Result<(i128, usize), String> {
    let mut neg = false;
    if i < s.len() && (s[i] == b'+' || s[i] == b'-') {
        neg = s[i] == b'-';
        i += 1;
    }
    let start = i;
    let mut acc: i128 = 0;
    while i < s.len() && s[i].is_ascii_digit() {
        acc = (acc * 10 + i128::from(s[i] - b'0')).min(EXP_CAP);
        i += 1;
    }
    if i == start {
        return Err(format!(
            "the exponent after `{marker}` needs at least one decimal digit"
        ));
    }
    Ok((if neg { -acc } else { acc }, i))
}

fn scan_digits(s: &[u8], mut i: usize, hex: bool) -> usize {
    while i < s.len()
        && (if hex {
            s[i].is_ascii_hexdigit()
        } else {
            s[i].is_ascii_digit()
        })
    {
        i += 1;
    }
    i
}

/// Mantissa digits split by an optional point: `int` then `frac`.
struct Mantissa<'a> {
    int: &'a [u8],
    frac: &'a [u8],
    point: bool,
}

impl Mantissa<'_> {
    fn len(&self) -> usize {
        self.int.len() + self.frac.len()
    }
    fn get(&self, t: usize) -> u8 {
        if t < self.int.len() {
            self.int[t]
        } else {
            self.frac[t - self.int.len()]
        }
    }
    /// First and last index (over int ++ frac) of a digit that is not `0`.
    fn nonzero_span(&self) -> Option<(usize, usize)> {
        let n = self.len();
        let first = (0..n).find(|&t| self.get(t) != b'0')?;
        let last = (0..n).rev().find(|&t| self.get(t) != b'0')?;
        Some((first, last))
    }
    /// Position (power of the radix) of the digit at index `t`.
    fn weight(&self, t: usize) -> i128 {
        self.int.len() as i128 - 1 - t as i128
    }
}

fn scan_mantissa(s: &[u8], hex: bool) -> Result<(Mantissa<'_>, usize), String> {
    let i = scan_digits(s, 0, hex);
    let int = &s[..i];
    let (frac, point, i) = if i < s.len() && s[i] == b'.' {
        let j = scan_digits(s, i + 1, hex);
        (&s[i + 1..j], true, j)
    } else {
        (&s[i..i], false, i)
    };
    if int.is_empty() && frac.is_empty() {
        let kind = if hex { "hex digit after `0x`" } else { "digit" };
        return Err(format!("the mantissa needs at least one {kind}"));
    }
    Ok((Mantissa { int, frac, point }, i))
}

fn parse_decimal(s: &[u8]) -> Result<Enclosure, String> {
    let (m, mut i) = scan_mantissa(s, false)?;
    let mut exp: i128 = 0;
    if i < s.len() && (s[i] == b'e' || s[i] == b'E') {
        let (e, j) = parse_exponent(s, i + 1, s[i] as char)?;
        exp = e;
        i = j;
        if i < s.len() {
            return Err(describe_unexpected(s, i, "exponent"));
        }
    }
    if i < s.len() {
        return Err(describe_unexpected(s, i, "number"));
    }
    let Some((first, last)) = m.nonzero_span() else {
        return Ok(ZERO);
    };
    // The value lies in [10^lead, 10^(lead+1)).
    let lead = m.weight(first) + exp;
    if lead >= 309 {
        return Ok(OVERFLOW); // >= 1e309 > f64::MAX
    }
    if lead <= -325 {
        return Ok(UNDERFLOW); // < 1e-324 < 2^-1075, half the smallest subnormal
    }
    let count = (last - first + 1).min(MAX_SIG_DIGITS);
    let sticky = last - first + 1 > MAX_SIG_DIGITS; // the dropped tail ends in a nonzero digit
    let digits: String = (first..first + count).map(|t| m.get(t) as char).collect();
    let e10 = (lead - (count as i128 - 1)) as i64; // |e10| < 1200
    Ok(enclose_decimal(&digits, e10, sticky))
}

/// Encloses a positive value v with `D * 10^e <= v`, and `v == D * 10^e` when
/// `!sticky`, else `v < (D + 1) * 10^e`. `digits` has no leading zero.
fn enclose_decimal(digits: &str, e10: i64, sticky: bool) -> Enclosure {
    let d = BigUint::parse_bytes(digits.as_bytes(), 10).expect("ASCII digits");
    let x: f64 = format!("{digits}e{e10}")
        .parse()
        .expect("std parses a plain decimal");
    // Largest double <= D * 10^e (which is <= v).
    let mut lo = if x.is_infinite() { f64::MAX } else { x };
    while cmp_dec_f64(&d, e10, lo) == Ordering::Less {
        lo = lo.next_down();
    }
    // Smallest double >= the upper bound of v.
    let d_up = if sticky { &d + 1u32 } else { d };
    let mut hi = x;
    while hi.is_finite() && cmp_dec_f64(&d_up, e10, hi) == Ordering::Greater {
        hi = hi.next_up();
    }
    Enclosure {
        lo,
        hi,
        exact: !sticky && lo == hi,
    }
}

/// Exact comparison of `d * 10^e10` with the finite nonnegative double `y`.
fn cmp_dec_f64(d: &BigUint, e10: i64, y: f64) -> Ordering {
    debug_assert!(y.is_finite() && y >= 0.0);
    let bits = y.to_bits();
    let biased = (bits >> 52) as i64;
    let frac = bits & ((1u64 << 52) - 1);
    let (m, k) = if biased == 0 {
        (frac, -1074)
    } else {
        (frac | (1u64 << 52), biased - 1075)
    };
    if m == 0 {
        return if d.is_zero() {
            Ordering::Equal
        } else {
            Ordering::Greater
        };
    }
    // Compare d * 10^e10 with m * 2^k, both scaled to integers.
    let mut a = d.clone();
    let mut b = BigUint::from(m);
    // 10^n = 5^n * 2^n: fold the power of two into the shift.
    let mut shift_a: i64 = 0;
    if e10 >= 0 {
        a *= BigUint::from(5u32).pow(e10 as u32);
        shift_a += e10;
    } else {
        b *= BigUint::from(5u32).pow((-e10) as u32);
        shift_a += e10;
    }
    // a * 2^shift_a vs b * 2^k
    let s = shift_a - k;
    if s >= 0 {
        a <<= s as u64;
    } else {
        b <<= (-s) as u64;
    }
    a.cmp(&b)
}

fn parse_hex(s: &[u8]) -> Result<Enclosure, String> {
    let (m, mut i) = scan_mantissa(s, true)?;
    let mut exp: i128 = 0;
    if i < s.len() && (s[i] == b'p' || s[i] == b'P') {
        let (e, j) = parse_exponent(s, i + 1, s[i] as char)?;
        exp = e;
        i = j;
        if i < s.len() {
            return Err(describe_unexpected(s, i, "exponent"));
        }
    } else if i < s.len() {
        return Err(describe_unexpected(s, i, "hex number"));
    } else if m.point {
        return Err("a hex float with a `.` needs a binary exponent such as `p0`".into());
    }
    let Some((first, last)) = m.nonzero_span() else {
        return Ok(ZERO);
    };
    let count = (last - first + 1).min(16);
    let sticky = last - first + 1 > 16;
    let mut mant: u64 = 0;
    for t in first..first + count {
        mant = (mant << 4) | u64::from(hex_value(m.get(t)));
    }
    // value = (mant + theta) * 2^e2 with theta in [0, 1), theta > 0 iff sticky.
    let e2 = 4 * m.weight(first + count - 1) + exp;
    Ok(enclose_binary(mant, e2, sticky))
}

fn hex_value(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        _ => c - b'A' + 10,
    }
}

/// Encloses `(mant + theta) * 2^e2`, `mant > 0`, theta in [0, 1), theta > 0 iff sticky.
fn enclose_binary(mant: u64, e2: i128, sticky: bool) -> Enclosure {
    debug_assert!(mant != 0);
    let bl = 64 - i128::from(mant.leading_zeros());
    let lead = bl - 1 + e2; // value in [2^lead, 2^(lead+1))
    if lead >= 1024 {
        return OVERFLOW;
    }
    if lead <= -1076 {
        return UNDERFLOW; // < 2^-1075
    }
    // Exponent of the last mantissa bit of a double at this magnitude.
    let q = (lead - 52).max(-1074);
    let (mm, rest) = if e2 >= q {
        (mant << (e2 - q) as u32, sticky)
    } else {
        let sh = q - e2;
        if sh >= 64 {
            (0, true)
        } else {
            let sh = sh as u32;
            (mant >> sh, (mant & ((1u64 << sh) - 1)) != 0 || sticky)
        }
    };
    // mm < 2^53 and mm * 2^q is representable, so the product is exact.
    let lo = mm as f64 * pow2(q as i32);
    if rest {
        Enclosure {
            lo,
            hi: lo.next_up(),
            exact: false,
        }
    } else {
        Enclosure {
            lo,
            hi: lo,
            exact: true,
        }
    }
}

/// 2^q for q in [-1074, 1023], exactly.
fn pow2(q: i32) -> f64 {
    debug_assert!((-1074..=1023).contains(&q));
    if q >= -1022 {
        f64::from_bits(((q + 1023) as u64) << 52)
    } else {
        f64::from_bits(1u64 << (q + 1074))
    }
}

/// Shortest decimal that round-trips to `x` as an `f64`: `0.1`, `-2.5`, `1e300`,
/// `2.2250738585072014e-308`, `5e-324`, `inf`, `-inf`, `nan`. Integers print
/// without a point (`3`), `+0.0` prints `0` and `-0.0` prints `-0`. Plain notation
/// when the decimal exponent is in `-5..=16`, otherwise scientific with `e` and no `+`.
pub fn format_f64(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    // `{:e}` prints the shortest digits that round-trip (Grisu/Ryu-style in std).
    layout(&format!("{x:e}"))
}

/// [`format_f64`] for an `f32`: the shortest digits that round-trip as `f32`
/// (`0.1f32` prints `0.1`).
pub fn format_f32(x: f32) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    layout(&format!("{x:e}"))
}

/// The shortest decimal that is a lower (`down`) or upper bound of `x` and still reads back as
/// `x` when rounded to nearest in `x`'s precision (`f32`: `x` is an f32 value; the reading is
/// Rust's, Python's `float` and C's `strtof`/`strtod`): the interval-to-text of IEEE 1788,
/// rounded outward. The shortest round-trip decimal ([`format_f64`]) lies within half an ulp
/// on either side, so as a real number it may cut into the interval (f32 0.1 is 0.10000000149,
/// and "0.1" excludes that bound); here a decimal on the wrong side is replaced by the first
/// one, with one digit more at a time, that is on the right side and rounds to `x`. Infinities,
/// zeros and exact decimals print as [`format_f64`] does.
pub(crate) fn format_bound_outward(x: f64, f32_value: bool, down: bool) -> String {
    if !x.is_finite() || x == 0.0 {
        return format_f64(if x == 0.0 { 0.0 } else { x });
    }
    // The text, if it reads back as x.
    let reads_as_x = |t: String| -> Option<String> {
        let ok = if f32_value {
            t.parse::<f32>().is_ok_and(|v| v as f64 == x)
        } else {
            t.parse::<f64>().is_ok_and(|v| v == x)
        };
        ok.then_some(t)
    };
    // A decimal d * 10^e (d > 0) is on the right side of |x| when it is <= |x| for a lower
    // bound of a positive x (or an upper bound of a negative one), >= otherwise.
    let toward_zero = down == (x > 0.0);
    let ax = x.abs();
    let right_side = |d: u128, e: i64| match cmp_dec_u128(d, e, ax) {
        Ordering::Equal => true,
        Ordering::Less => toward_zero,
        Ordering::Greater => !toward_zero,
    };
    let text = |d: u128, e: i64| -> String {
        // d * 10^e as std's {:e} would write it, then laid out.
        let ds = d.to_string();
        let exp = e + ds.len() as i64 - 1;
        let sign = if x < 0.0 { "-" } else { "" };
        let mant = if ds.len() > 1 {
            format!("{}.{}", &ds[..1], &ds[1..])
        } else {
            ds.clone()
        };
        layout(&format!("{sign}{mant}e{exp}"))
    };
    let sci0 = if f32_value {
        format!("{:e}", ax as f32)
    } else {
        format!("{ax:e}")
    };
    let (d0, e0, len) = digits_of(&sci0);
    if right_side(d0, e0) {
        return if x < 0.0 {
            layout(&format!("-{sci0}"))
        } else {
            layout(&sci0)
        };
    }
    // One unit of the last digit toward the right side, at the same length; then one digit
    // more at a time: n digits rounded to nearest and moved one unit if on the wrong side.
    let step = |d: u128| if toward_zero { d - 1 } else { d + 1 };
    let d = step(d0);
    if d > 0 {
        if let Some(t) = reads_as_x(text(d, e0)) {
            return t;
        }
    }
    // n digits: |x| / 10^e rounded toward the right side, in 128-bit integers while they fit.
    for n in len + 1..=38 {
        let e = e0 - (n - len) as i64;
        let Some((q, exact)) = div_pow10_floor(ax, e) else {
            break;
        };
        let d = if exact || toward_zero { q } else { q + 1 };
        if d > 0 {
            if let Some(t) = reads_as_x(text(d, e)) {
                return t;
            }
        }
    }
    for n in len + 1..=38 {
        let (d, e, _) = digits_of(&format!("{ax:.*e}", n - 1));
        let d = if right_side(d, e) { d } else { step(d) };
        if right_side(d, e) {
            if let Some(t) = reads_as_x(text(d, e)) {
                return t;
            }
        }
    }
    unreachable!("38 digits read back as any double")
}

/// The digits, exponent and digit count of a `{:e}` text: `1.25e-7` is (125, -9, 3).
fn digits_of(sci: &str) -> (u128, i64, usize) {
    let (mant, exp) = sci.split_once('e').expect("`{:e}` output has an `e`");
    let exp: i64 = exp.parse().expect("an integer exponent");
    let (mut d, mut n, mut frac) = (0u128, 0usize, 0i64);
    let mut after_point = false;
    for c in mant.bytes() {
        if c == b'.' {
            after_point = true;
            continue;
        }
        d = d * 10 + u128::from(c - b'0');
        n += 1;
        frac += i64::from(after_point);
    }
    (d, exp - frac, n)
}

/// `floor(y / 10^e10)` for a finite nonnegative double `y`, and whether it is exact, in
/// 128-bit integers (None when they do not fit).
fn div_pow10_floor(y: f64, e10: i64) -> Option<(u128, bool)> {
    let bits = y.to_bits();
    let biased = (bits >> 52) as i64;
    let frac = bits & ((1u64 << 52) - 1);
    let (m, k) = if biased == 0 {
        (frac, -1074)
    } else {
        (frac | (1u64 << 52), biased - 1075)
    };
    // y / 10^e10 = m * 2^(k - e10) / 5^e10
    let five = 5u128.checked_pow(u32::try_from(e10.unsigned_abs()).ok()?)?;
    let (mut num, mut den) = if e10 >= 0 {
        (m as u128, five)
    } else {
        ((m as u128).checked_mul(five)?, 1u128)
    };
    let s = k - e10;
    let shift = u32::try_from(s.unsigned_abs()).ok().filter(|&v| v < 127)?;
    if s >= 0 {
        let shifted = num.checked_shl(shift)?;
        if shifted >> shift != num {
            return None;
        }
        num = shifted;
    } else {
        let shifted = den.checked_shl(shift)?;
        if shifted >> shift != den {
            return None;
        }
        den = shifted;
    }
    Some((num / den, num % den == 0))
}

/// Exact comparison of `d * 10^e10` with the finite nonnegative double `y`: in 128-bit
/// integers when the scaled values fit (the usual magnitudes), else as [`cmp_dec_f64`].
fn cmp_dec_u128(d: u128, e10: i64, y: f64) -> Ordering {
    let bits = y.to_bits();
    let biased = (bits >> 52) as i64;
    let frac = bits & ((1u64 << 52) - 1);
    let (m, k) = if biased == 0 {
        (frac, -1074)
    } else {
        (frac | (1u64 << 52), biased - 1075)
    };
    // d * 5^e10 * 2^e10 against m * 2^k.
    let fast = (|| -> Option<Ordering> {
        let five = 5u128.checked_pow(e10.unsigned_abs().try_into().ok()?)?;
        let (a, b) = if e10 >= 0 {
            (d.checked_mul(five)?, m as u128)
        } else {
            (d, (m as u128).checked_mul(five)?)
        };
        // a * 2^e10 vs b * 2^k
        let s = e10 - k;
        let (a, b) = if s >= 0 {
            (
                a.checked_shl(u32::try_from(s).ok()?)
                    .filter(|v| v >> s == a)?,
                b,
            )
        } else {
            (
                a,
                b.checked_shl(u32::try_from(-s).ok()?)
                    .filter(|v| v >> -s == b)?,
            )
        };
        Some(a.cmp(&b))
    })();
    fast.unwrap_or_else(|| cmp_dec_f64(&BigUint::from(d), e10, y))
}

/// Re-lays out std's `{:e}` text (`-1.25e-7`, `0e0`) per the rules of [`format_f64`].
fn layout(sci: &str) -> String {
    let (neg, rest) = match sci.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, sci),
    };
    let (mant, exp) = rest.split_once('e').expect("`{:e}` output has an `e`");
    let exp: i32 = exp.parse().expect("`{:e}` exponent is an integer");
    let digits: String = mant.chars().filter(|&c| c != '.').collect();
    let n = digits.len() as i32;
    let mut out = String::with_capacity(digits.len() + 24);
    if neg {
        out.push('-');
    }
    if (-5..=16).contains(&exp) {
        if exp >= n - 1 {
            out.push_str(&digits);
            out.extend(std::iter::repeat_n('0', (exp - (n - 1)) as usize));
        } else if exp >= 0 {
            let (a, b) = digits.split_at(exp as usize + 1);
            out.push_str(a);
            out.push('.');
            out.push_str(b);
        } else {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-exp - 1) as usize));
            out.push_str(&digits);
        }
    } else {
        let (a, b) = digits.split_at(1);
        out.push_str(a);
        if !b.is_empty() {
            out.push('.');
            out.push_str(b);
        }
        out.push('e');
        out.push_str(&exp.to_string());
    }
    out
}

/// Exact C99 hex-float text of an `f64`, as glibc's `%a` prints it:
/// `0x1.999999999999ap-4`, `0x1p+0`, `-0x0p+0`, subnormals as
/// `0x0.0000000000001p-1022`, and `inf`, `-inf`, `nan`.
pub fn hexf64(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    let sign = if x.is_sign_negative() { "-" } else { "" };
    if x.is_infinite() {
        return format!("{sign}inf");
    }
    let bits = x.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    if biased == 0 && frac == 0 {
        return format!("{sign}0x0p+0");
    }
    let (lead, e) = if biased == 0 {
        (0, -1022)
    } else {
        (1, biased - 1023)
    };
    let hex = format!("{frac:013x}");
    let hex = hex.trim_end_matches('0');
    if hex.is_empty() {
        format!("{sign}0x{lead}p{e:+}")
    } else {
        format!("{sign}0x{lead}.{hex}p{e:+}")
    }
}
#[cfg(test)]
mod outward_tests {
    use super::{format_bound_outward, parse_enclosure};

    /// Every printed bound, read back as a real number, lies on the outer side of the float
    /// (checked exactly: the decimal's enclosure), and reads back as the float when rounded to
    /// nearest (Rust's parse: correctly rounded, like Python's float and C's strtod); the
    /// shortest round-trip decimal is kept when it is on the outer side.
    #[test]
    fn bounds_print_outward_and_read_back() {
        let mut state = 0x1788_0030u64;
        let mut next = || crate::workloads::splitmix64(&mut state);
        let mut xs: Vec<f64> = vec![
            0.1,
            1.0 / 3.0,
            f64::MAX,
            f64::MIN_POSITIVE,
            f64::from_bits(1),
            1e300,
            1e-300,
            123456789.0,
        ];
        for _ in 0..20_000 {
            let x = f64::from_bits(next());
            if x.is_finite() && x != 0.0 {
                xs.push(x);
            }
        }
        let more: Vec<f64> = xs.iter().map(|x| -x).collect();
        xs.extend(more);
        for &x in &xs {
            for f32_value in [false, true] {
                let x = if f32_value { x as f32 as f64 } else { x };
                if !x.is_finite() || x == 0.0 {
                    continue;
                }
                for down in [true, false] {
                    let t = format_bound_outward(x, f32_value, down);
                    let e = parse_enclosure(&t).unwrap();
                    // down: the decimal <= x, i.e. its upper enclosure end <= x.
                    if down {
                        assert!(e.hi <= x, "{t} is not a lower bound of {x:e} ({f32_value})");
                    } else {
                        assert!(
                            e.lo >= x,
                            "{t} is not an upper bound of {x:e} ({f32_value})"
                        );
                    }
                    let back = if f32_value {
                        t.parse::<f32>().unwrap() as f64
                    } else {
                        t.parse::<f64>().unwrap()
                    };
                    assert_eq!(back, x, "{t} does not read back as {x:e} ({f32_value})");
                }
            }
        }
        // The issue's cases: f32 0.1 as an upper bound, the shortest kept as a lower one.
        let tenth = 0.1f32 as f64;
        assert_eq!(format_bound_outward(tenth, true, false), "0.100000002");
        assert_eq!(format_bound_outward(tenth, true, true), "0.1");
        assert_eq!(format_bound_outward(0.1, false, true), "0.1");
        assert_eq!(
            format_bound_outward(0.1, false, false),
            "0.10000000000000001"
        );
        assert_eq!(format_bound_outward(2.5, false, false), "2.5");
        assert_eq!(format_bound_outward(f64::INFINITY, false, false), "inf");
    }
}
