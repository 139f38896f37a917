//! The exact order of two number literals: the real numbers they write, compared without
//! rounding.
//!
//! An interval literal's bounds are enclosed one at a time ([`parse_enclosure`]: the lower
//! bound's enclosure gives the interval's lower end, the upper bound's its upper end). When both
//! bounds lie strictly between the same two adjacent doubles (or both beyond `f64::MAX`, or
//! both between 0 and the smallest subnormal), or one lies in the gap just above a double the
//! other is just below, the enclosed interval is valid although the bounds as written are
//! inverted: `[0.10000000000000001, 0.1]` becomes `[0.1, 0.1]` (0.1 the double), and
//! `[5e-324, 4e-324]` becomes `[5e-324, 5e-324]`. [`compare`] decides the order from the
//! literals themselves: from the enclosures where they tell (every case but two bounds in one
//! gap), else from the digits.
//!
//! Cost: linear in the literals' lengths, except for a decimal against a hex float in the same
//! gap, which is compared with big integers of about the literals' sizes (the decimal is cut to
//! the hex float's grid first). Such a pair with a decimal exponent beyond ±[`EXACT_EXPONENT`]
//! (both beyond 10^100000, or both below 10^-100000) is compared by the logarithms of their
//! magnitudes, and taken as ordered as written when those are too close to tell apart.

use super::number::{parse_enclosure, Enclosure, NumberError};
use num_bigint::BigUint;
use std::cmp::Ordering;

/// Decimal exponents up to this magnitude are compared exactly against hex floats.
pub(crate) const EXACT_EXPONENT: i64 = 100_000;

/// The order of the real numbers two literals write (`-0` equals `0`; `inf` is above every
/// real, `-inf` below). Errors are [`parse_enclosure`]'s.
///
/// ```
/// use ivjit::internals::syntax::exact::compare;
/// use std::cmp::Ordering;
/// // One double, 0.1000000000000000055511151231257827, lies between the two.
/// assert_eq!(compare("0.10000000000000001", "0.1").unwrap(), Ordering::Greater);
/// // Both between the same two adjacent doubles.
/// assert_eq!(compare("0.10000000000000001", "0.100000000000000011").unwrap(), Ordering::Less);
/// assert_eq!(compare("5e-324", "4e-324").unwrap(), Ordering::Greater);
/// assert_eq!(compare("0.1", "1e-1").unwrap(), Ordering::Equal);
/// assert_eq!(compare("1e400", "1e309").unwrap(), Ordering::Greater);
/// assert_eq!(compare("0x1.8p-3", "0.1875").unwrap(), Ordering::Equal);
/// ```
pub fn compare(a: &str, b: &str) -> Result<Ordering, NumberError> {
    let (ea, eb) = (parse_enclosure(a)?, parse_enclosure(b)?);
    if let Some(o) = by_enclosures(ea, eb) {
        return Ok(o);
    }
    // Both in one open gap between doubles (or beyond f64::MAX, or next to 0): nonzero,
    // finite, of one sign.
    let (x, y) = (Literal::read(a), Literal::read(b));
    debug_assert_eq!(x.neg, y.neg, "a gap holds numbers of one sign");
    let magnitudes = match (&x.digits, &y.digits) {
        (Digits::Decimal(p), Digits::Decimal(q)) | (Digits::Binary(p), Digits::Binary(q)) => {
            x.lead.cmp(&y.lead).then_with(|| p.cmp(q))
        }
        (Digits::Decimal(d), Digits::Binary(h)) => mixed(d, &x.lead, h, &y.lead),
        (Digits::Binary(h), Digits::Decimal(d)) => mixed(d, &y.lead, h, &x.lead).reverse(),
    };
    Ok(if x.neg {
        magnitudes.reverse()
    } else {
        magnitudes
    })
}

/// The order when the enclosures tell it: an exact value against another, or against a gap
/// (the open interval between two adjacent doubles, or beyond `f64::MAX`), or two different
/// gaps. `None` for two numbers in the same gap.
fn by_enclosures(a: Enclosure, b: Enclosure) -> Option<Ordering> {
    match (a.exact, b.exact) {
        (true, true) => a.lo.partial_cmp(&b.lo),
        (true, false) => against_gap(a.lo, b),
        (false, true) => against_gap(b.lo, a).map(Ordering::reverse),
        (false, false) => {
            if a.lo == b.lo && a.hi == b.hi {
                None
            } else if a.hi <= b.lo {
                Some(Ordering::Less)
            } else if b.hi <= a.lo {
                Some(Ordering::Greater)
            } else {
                None // gaps are disjoint or equal; not reached
            }
        }
    }
}

/// The order of the double `x` and a number strictly inside `gap`.
fn against_gap(x: f64, gap: Enclosure) -> Option<Ordering> {
    if x <= gap.lo {
        Some(Ordering::Less)
    } else if x >= gap.hi {
        Some(Ordering::Greater)
    } else {
        None // a gap holds no double; not reached
    }
}

/// A nonzero finite literal: its sign, its significant digits (decimal or binary, neither
/// leading nor trailing zeros) and the exponent of the leading digit (the value is
/// `0.d1d2d3... * radix^(lead + 1)`).
struct Literal {
    neg: bool,
    digits: Digits,
    lead: Int,
}

enum Digits {
    /// Decimal digit values 0..=9, the first and the last nonzero.
    Decimal(Vec<u8>),
    /// Bits 0 or 1, the first and the last 1.
    Binary(Vec<u8>),
}

impl Literal {
    /// Reads a literal that [`parse_enclosure`] accepted and found nonzero and finite.
    fn read(text: &str) -> Literal {
        let (neg, body) = match text.as_bytes().first() {
            Some(b'-') => (true, &text[1..]),
            Some(b'+') => (false, &text[1..]),
            _ => (false, text),
        };
        let b = body.as_bytes();
        let hex = b.len() >= 2 && b[0] == b'0' && (b[1] == b'x' || b[1] == b'X');
        let b = if hex { &b[2..] } else { b };
        let marker: &[u8] = if hex { b"pP" } else { b"eE" };
        let (mantissa, exponent) = match b.iter().position(|c| marker.contains(c)) {
            Some(i) => (&b[..i], &b[i + 1..]),
            None => (b, &b[b.len()..]),
        };
        let point = mantissa
            .iter()
            .position(|&c| c == b'.')
            .unwrap_or(mantissa.len());
        let value = |c: u8| match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            _ => c - b'A' + 10,
        };
        // Significant digits with the power of the radix of the first one.
        let digits: Vec<(u8, i64)> = mantissa
            .iter()
            .enumerate()
            .filter(|&(_, &c)| c != b'.')
            .map(|(i, &c)| {
                let weight = if i < point {
                    (point - 1 - i) as i64
                } else {
                    point as i64 - i as i64
                };
                (value(c), weight)
            })
            .collect();
        let first = digits
            .iter()
            .position(|d| d.0 != 0)
            .expect("a nonzero literal");
        let last = digits
            .iter()
            .rposition(|d| d.0 != 0)
            .expect("a nonzero literal");
        let written = Int::read(exponent);
        if hex {
            let mut bits: Vec<u8> = digits[first..=last]
                .iter()
                .flat_map(|&(v, _)| (0..4).rev().map(move |k| (v >> k) & 1))
                .collect();
            let top = bits.iter().position(|&x| x == 1).expect("a nonzero nibble");
            let end = bits
                .iter()
                .rposition(|&x| x == 1)
                .expect("a nonzero nibble")
                + 1;
            bits.truncate(end);
            bits.drain(..top);
            // The first nibble's weight is 16^w = 2^(4w); its top bit 2^(4w + 3 - top).
            let lead = written.plus(4 * digits[first].1 + 3 - top as i64);
            Literal {
                neg,
                digits: Digits::Binary(bits),
                lead,
            }
        } else {
            let lead = written.plus(digits[first].1);
            let ds = digits[first..=last].iter().map(|d| d.0).collect();
            Literal {
                neg,
                digits: Digits::Decimal(ds),
                lead,
            }
        }
    }
}

/// An integer of any size, exactly: its sign and decimal digit values without leading zeros
/// (zero: no digits, not negative). The derived order is not the numeric one; see [`Ord`].
#[derive(PartialEq, Eq)]
struct Int {
    neg: bool,
    mag: Vec<u8>,
}

/// Integers of at most this many digits are added in `i128`; longer ones (at least 10^30)
/// keep their sign when a small number (an offset within a literal, below 2^40) is added.
const SHORT: usize = 30;

impl Int {
    /// `[+-]digits` as written after an exponent marker (empty: zero).
    fn read(text: &[u8]) -> Int {
        let (neg, digits) = match text.first() {
            Some(b'-') => (true, &text[1..]),
            Some(b'+') => (false, &text[1..]),
            _ => (false, text),
        };
        let start = digits
            .iter()
            .position(|&c| c != b'0')
            .unwrap_or(digits.len());
        let mag: Vec<u8> = digits[start..].iter().map(|c| c - b'0').collect();
        Int {
            neg: neg && !mag.is_empty(),
            mag,
        }
    }

    fn from_i128(v: i128) -> Int {
        let mag = if v == 0 {
            Vec::new()
        } else {
            v.unsigned_abs()
                .to_string()
                .bytes()
                .map(|c| c - b'0')
                .collect()
        };
        Int { neg: v < 0, mag }
    }

    fn to_i128(&self) -> Option<i128> {
        if self.mag.len() > SHORT {
            return None;
        }
        let m = self
            .mag
            .iter()
            .fold(0i128, |acc, &d| acc * 10 + i128::from(d));
        Some(if self.neg { -m } else { m })
    }

    /// `self + d`, exactly.
    fn plus(&self, d: i64) -> Int {
        if let Some(v) = self.to_i128() {
            return Int::from_i128(v + i128::from(d));
        }
        // |self| >= 10^30 > |d|: the sign stays; the magnitude grows or shrinks by |d|.
        let mut mag = self.mag.clone();
        let mut carry = u128::from(d.unsigned_abs());
        if (d < 0) == self.neg {
            for digit in mag.iter_mut().rev() {
                if carry == 0 {
                    break;
                }
                let s = u128::from(*digit) + carry % 10;
                carry = carry / 10 + s / 10;
                *digit = (s % 10) as u8;
            }
            let mut head: Vec<u8> = Vec::new();
            while carry > 0 {
                head.push((carry % 10) as u8);
                carry /= 10;
            }
            head.reverse();
            head.extend(mag);
            mag = head;
        } else {
            for digit in mag.iter_mut().rev() {
                if carry == 0 {
                    break;
                }
                let mut v = i128::from(*digit) - (carry % 10) as i128;
                carry /= 10;
                if v < 0 {
                    v += 10;
                    carry += 1;
                }
                *digit = v as u8;
            }
            let start = mag.iter().position(|&x| x != 0).unwrap_or(mag.len());
            mag.drain(..start);
        }
        Int { neg: self.neg, mag }
    }

    /// The value, when it fits an `i64`.
    fn to_i64(&self) -> Option<i64> {
        self.to_i128().and_then(|v| i64::try_from(v).ok())
    }

    /// The value as a float (rounded; infinite beyond f64's range).
    fn to_f64(&self) -> f64 {
        let text: String = self.mag.iter().map(|d| char::from(b'0' + d)).collect();
        let m = if text.is_empty() {
            0.0
        } else {
            text.parse::<f64>().unwrap_or(f64::INFINITY)
        };
        if self.neg {
            -m
        } else {
            m
        }
    }
}

impl Ord for Int {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self.neg, other.neg) {
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            (neg, _) => {
                let m = self
                    .mag
                    .len()
                    .cmp(&other.mag.len())
                    .then_with(|| self.mag.cmp(&other.mag));
                if neg {
                    m.reverse()
                } else {
                    m
                }
            }
        }
    }
}

impl PartialOrd for Int {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The order of the positive numbers `0.d1d2... * 10^(lead10 + 1)` (decimal digits `d`) and
/// `0.b1b2... * 2^(lead2 + 1)` (bits `h`).
fn mixed(d: &[u8], lead10: &Int, h: &[u8], lead2: &Int) -> Ordering {
    let (Some(l10), Some(l2)) = (lead10.to_i64(), lead2.to_i64()) else {
        return by_logarithms(d, lead10, h, lead2);
    };
    if l10.abs() > EXACT_EXPONENT || l2.abs() > 4 * EXACT_EXPONENT {
        return by_logarithms(d, lead10, h, lead2);
    }
    // The decades and octaves they lie in: a in [10^l10, 10^(l10+1)), b in [2^l2, 2^(l2+1)).
    let log2_10 = std::f64::consts::LOG2_10;
    if l10 as f64 * log2_10 > (l2 + 1) as f64 + 1e-3 {
        return Ordering::Greater;
    }
    if (l10 + 1) as f64 * log2_10 < l2 as f64 - 1e-3 {
        return Ordering::Less;
    }
    // b = H * 2^q is a multiple of 10^min(q, 0) (2^q = 5^-q * 10^q), so only the digits of a
    // of weight 10^min(q, 0) or more decide, the rest only whether a is above its cut.
    let q = l2 - (h.len() as i64 - 1);
    let grid = q.min(0);
    let keep = (l10 - grid + 1).clamp(0, d.len() as i64) as usize;
    if keep == 0 {
        return Ordering::Less; // a < 10^grid <= b
    }
    let sticky = keep < d.len(); // the last digit is nonzero
    let dk = BigUint::from_radix_be(&d[..keep], 10).expect("decimal digits");
    let hb = BigUint::from_radix_be(h, 2).expect("bits");
    // a' = dk * 10^s against b = hb * 2^q, both scaled to integers.
    let s = l10 - (keep as i64 - 1);
    let five = BigUint::from(5u32);
    let mut lhs = dk;
    let mut rhs = hb;
    if s >= 0 {
        lhs *= five.pow(s as u32);
    } else {
        rhs *= five.pow((-s) as u32);
    }
    // lhs * 2^s against rhs * 2^q.
    if s >= q {
        lhs <<= (s - q) as u64;
    } else {
        rhs <<= (q - s) as u64;
    }
    match lhs.cmp(&rhs) {
        Ordering::Equal if sticky => Ordering::Greater,
        o => o,
    }
}

/// [`mixed`] beyond [`EXACT_EXPONENT`]: the binary logarithms of the two magnitudes, from the
/// exponents and the first 17 digits; `Equal` (the order as written is kept) when they are
/// too close to tell apart in floating point.
fn by_logarithms(d: &[u8], lead10: &Int, h: &[u8], lead2: &Int) -> Ordering {
    let lead_digits = |v: &[u8], radix: f64| {
        v.iter()
            .take(17)
            .enumerate()
            .map(|(i, &x)| f64::from(x) * radix.powi(-(i as i32)))
            .sum::<f64>()
    };
    let la = lead10.to_f64() * std::f64::consts::LOG2_10 + lead_digits(d, 10.0).log2();
    let lb = lead2.to_f64() + lead_digits(h, 2.0).log2();
    let tolerance = 1e-9 * la.abs().max(lb.abs()).max(1.0);
    if la > lb + tolerance {
        Ordering::Greater
    } else if la < lb - tolerance {
        Ordering::Less
    } else {
        Ordering::Equal
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Ordering::{Equal, Greater, Less};

    #[track_caller]
    fn check(a: &str, b: &str, want: Ordering) {
        assert_eq!(compare(a, b).unwrap(), want, "{a} vs {b}");
        assert_eq!(compare(b, a).unwrap(), want.reverse(), "{b} vs {a}");
        let neg = |t: &str| match t.strip_prefix('-') {
            Some(p) => p.to_string(),
            None => format!("-{t}"),
        };
        assert_eq!(
            compare(&neg(a), &neg(b)).unwrap(),
            want.reverse(),
            "-({a}) vs -({b})"
        );
    }

    #[test]
    fn exact_values_and_different_gaps_by_enclosures() {
        check("1", "2", Less);
        check("0.5", "0x1p-1", Equal);
        check("0", "-0", Equal);
        check("0", "5e-324", Less);
        check("0", "4e-324", Less);
        check("0.1", "0.2", Less);
        check("inf", "1e999", Greater);
        check("1.7976931348623157e308", "1e400", Less);
        check("0.1", "0x1.999999999999ap-4", Less); // the double 0.1 is above 1/10
    }

    #[test]
    fn same_gap_decimals_by_digits() {
        check("0.10000000000000001", "0.1", Greater);
        check("0.10000000000000001", "0.100000000000000011", Less);
        check("0.1", "0.10", Equal);
        check("0.1", "1e-1", Equal);
        check("0.1", "00.01e1", Equal);
        check("5e-324", "4e-324", Greater);
        check("4e-324", "3e-324", Greater);
        check("1e-400", "1e-401", Greater);
        check("1e400", "1e309", Greater);
        check("1e400", "10e399", Equal);
        check("2e400", "1.99999999999999999999e400", Greater);
        let long = format!("0.1{}1", "0".repeat(10_000));
        check(&long, "0.1", Greater);
        check(&long, &format!("0.1{}2", "0".repeat(10_000)), Less);
        // Exponents beyond any integer type.
        let huge = "1".repeat(60);
        check(&format!("1e{huge}"), &format!("1e{huge}0"), Less);
        check(&format!("1e{huge}"), &format!("10e{huge}"), Less);
        check(&format!("10e{huge}"), &format!("1e{huge}"), Greater);
        // 100e{huge} is 1e{huge + 2}; 0.001e{huge} is 1e{huge - 3}, across a borrow.
        let ones = "1".repeat(59);
        check(&format!("100e{huge}"), &format!("1e{ones}3"), Equal);
        check(
            &format!("0.001e{huge}"),
            &format!("1e{}08", "1".repeat(58)),
            Equal,
        );
        check(&format!("0.001e-{huge}"), &format!("1e-{ones}4"), Equal);
        check(
            &format!("0.01e1{}", "0".repeat(40)),
            &format!("1e{}98", "9".repeat(38)),
            Equal,
        );
    }

    #[test]
    fn same_gap_hex_floats_by_bits() {
        check("0x1.00000000000001p0", "0x1.000000000000008p0", Greater);
        check("0x1.00000000000001p0", "0x2.00000000000002p-1", Equal);
        check("0x1p-1080", "0x1p-1081", Greater);
        check("0x1p2000", "0x0.8p2001", Equal);
        check("0x1p2000", "0x1.8p1999", Greater);
    }

    #[test]
    fn same_gap_decimal_against_hex_float() {
        // 2^-1075 (half the smallest subnormal) is exactly this 751-digit decimal.
        let half_min = crate::syntax::number::parse_enclosure("0x1p-1075").unwrap();
        assert!(!half_min.exact);
        check("0x1p-1075", "2e-324", Greater);
        check("0x1p-1075", "3e-324", Less);
        check("0x1.00000000000001p0", "1.0000000000000000001", Greater);
        check("0x1.00000000000001p0", "1.0000000000000000556", Less);
        // 1 + 2^-56 = 1.000000000000000013877787807814456755295395851135253906250.
        let exact = "1.00000000000000001387778780781445675529539585113525390625";
        check("0x1.00000000000001p0", exact, Equal);
        check("0x1.00000000000001p0", &format!("{exact}1"), Less);
        check("0x1.00000000000001p0", &format!("{exact}0000"), Equal);
        check("0x1p1100", "1e331", Greater);
        check("0x1p1100", "1.4e331", Less);
        check("0x1p-99999", "1e-30102", Less);
        check("0x1p-99999", "1e-30103", Greater);
        // Beyond the exact range: by logarithms.
        check("0x1p9999999", "1e3010299", Greater);
        check("0x1p9999999", "1e3010300", Less);
    }
}
