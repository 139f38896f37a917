//! IEEE 1788's interval literals (§12.11, the standard's `textToInterval`): the text form every
//! conforming library reads, with its tightest f64 enclosure. Forms (case-insensitive, spaces
//! allowed around the parts inside brackets):
//!
//! - `[l, u]`, a bound left out being infinite (`[1,]`, `[,]`); `[x]` the point x; `[ ]`,
//!   `[empty]`, `[entire]`;
//! - numbers: decimals, hex-floats, `inf`/`infinity` with a sign, rationals `p/q` of integers;
//! - the uncertain form `m?r[u|d][e±n]`: the decimal `m` plus or minus `r` units of its last
//!   digit (`3.56?1` is [3.55, 3.57]), half a unit without `r` (`3.56?` is [3.555, 3.565]),
//!   any distance for `??`; `u` or `d` keeps only the side above or below m; the exponent
//!   scales both (`3.56?1e2` is [355, 357]);
//! - with a decoration (decorated literals only): `_com`, `_dac`, ... after the text, and
//!   `[nai]`.
//!
//! Every bound is rounded outward. Bounds are compared after rounding: the standard lets an
//! implementation that cannot tell `l <= u` give the hull of the rounded bounds
//! (`[1.0000000000000002, 1.0000000000000001]` is `[1, 1.0000000000000002]`), which is what
//! happens here; a pair whose rounded bounds are inverted is an error. This is the standard's
//! reader, for text written by other IEEE 1788 tools; ivjit's own syntax (expressions,
//! `--var`) is [`Interval::parse`] and the language's literals, which compare the written
//! bounds exactly.

use crate::decoration::{DecoratedInterval, Decoration};
use crate::interval::Interval;
use crate::round::Round;
use crate::syntax::number::parse_enclosure;
use num_bigint::BigInt;
use std::str::FromStr;

/// Why a text is not an IEEE 1788 interval literal.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("'{text}' is not an IEEE 1788 interval literal: {why}")]
pub struct LiteralError {
    /// The text, shortened.
    pub text: String,
    /// What is wrong.
    pub why: String,
}

impl Interval {
    /// IEEE 1788's `textToInterval` (see [the module documentation](crate::literal)); a
    /// decoration suffix or `[nai]` is an error.
    ///
    /// ```
    /// use ivjit::Interval;
    /// let x = Interval::from_1788_text("3.56?1e2").unwrap();
    /// assert_eq!((x.lo, x.hi), (355.0, 357.0));
    /// assert_eq!(Interval::from_1788_text("[-4/2, 10/5]").unwrap(), Interval::new(-2.0, 2.0).unwrap());
    /// assert!(Interval::from_1788_text("[1, 2]_com").is_err());
    /// ```
    pub fn from_1788_text(text: &str) -> Result<Interval, LiteralError> {
        let (body, suffix) = split_suffix(text);
        if suffix.is_some() {
            return Err(error(text, "a bare interval takes no decoration"));
        }
        let (iv, form) = interval_part(body).map_err(|why| error(text, &why))?;
        if form == Form::Nai {
            return Err(error(text, "[nai] is a decorated interval"));
        }
        Ok(iv)
    }
}

impl DecoratedInterval {
    /// IEEE 1788's decorated `textToInterval`: the literal with its decoration (`newDec` of the
    /// interval without one), or `[nai]`. A decoration the interval cannot carry
    /// (`[1, inf]_com`, `[ ]_def`) or `ill` is an error.
    ///
    /// ```
    /// use ivjit::{DecoratedInterval, Decoration};
    /// let x = DecoratedInterval::from_1788_text("2.5?u_def").unwrap();
    /// assert_eq!((x.interval.lo, x.decoration), (2.5, Decoration::Def));
    /// assert!(DecoratedInterval::from_1788_text("[Nai]").unwrap().is_nai());
    /// ```
    pub fn from_1788_text(text: &str) -> Result<DecoratedInterval, LiteralError> {
        let (body, suffix) = split_suffix(text);
        let (iv, form) = interval_part(body).map_err(|why| error(text, &why))?;
        if form == Form::Nai {
            return match suffix {
                None => Ok(DecoratedInterval::NAI),
                Some(_) => Err(error(text, "[nai] takes no decoration")),
            };
        }
        let Some(name) = suffix else {
            return Ok(DecoratedInterval::undecorated(iv));
        };
        let d = Decoration::from_name(&name.to_ascii_lowercase())
            .filter(|d| *d != Decoration::Ill)
            .ok_or_else(|| error(text, &format!("'_{name}' is not com, dac, def or trv")))?;
        if form == Form::Bounded {
            // Bounded as written, unbounded only by rounding (`[1e400]_com`): the decoration
            // is lowered to what the rounded interval may carry, as the standard's vectors say.
            return Ok(DecoratedInterval::set_dec(iv, d));
        }
        DecoratedInterval::new(iv, d).map_err(|e| error(text, &e.to_string()))
    }
}

fn error(text: &str, why: &str) -> LiteralError {
    LiteralError {
        text: crate::syntax::lexer::shorten(text),
        why: why.to_string(),
    }
}

/// The text and its decoration suffix (`_name` after the last `]` or `?` form).
fn split_suffix(text: &str) -> (&str, Option<&str>) {
    let t = text.trim();
    // The suffix starts at the last '_' after which only letters follow.
    match t.rfind('_') {
        Some(i) if t[i + 1..].chars().all(|c| c.is_ascii_alphabetic()) => {
            (t[..i].trim_end(), Some(&t[i + 1..]))
        }
        _ => (t, None),
    }
}

/// What a literal's text says of its interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    /// Nonempty with finite bounds as written (rounding may still reach past the floats).
    Bounded,
    /// Empty, or with a bound written infinite (or left out, or `??`).
    Other,
    /// `[nai]`.
    Nai,
}

/// The interval of a literal without its suffix, and its [`Form`].
fn interval_part(body: &str) -> Result<(Interval, Form), String> {
    let Some(inner) = body.strip_prefix('[') else {
        return uncertain(body);
    };
    let inner = inner
        .strip_suffix(']')
        .ok_or("the '[' is not closed by ']'")?
        .trim();
    match inner.to_ascii_lowercase().as_str() {
        "" | "empty" => return Ok((Interval::EMPTY, Form::Other)),
        "entire" => return Ok((Interval::ENTIRE, Form::Other)),
        "nai" => return Ok((Interval::EMPTY, Form::Nai)),
        _ => {}
    }
    // A bound written as an infinity has equal infinite ends; one past the floats does not.
    let infinite = |e: (f64, f64)| e.0.is_infinite() && e.0 == e.1;
    let (lo, hi, bounded) = match inner.split_once(',') {
        None => {
            let e = number(inner)?;
            if infinite(e) {
                return Err("an interval holds only real numbers, not an infinity".into());
            }
            (e.0, e.1, true)
        }
        Some((l, u)) => {
            let (l, u) = (l.trim(), u.trim());
            let le = if l.is_empty() {
                (f64::NEG_INFINITY, f64::NEG_INFINITY)
            } else {
                number(l)?
            };
            let ue = if u.is_empty() {
                (f64::INFINITY, f64::INFINITY)
            } else {
                number(u)?
            };
            (le.0, ue.1, !infinite(le) && !infinite(ue))
        }
    };
    if lo == f64::INFINITY || hi == f64::NEG_INFINITY || lo > hi {
        return Err(format!("the bounds [{lo:e}, {hi:e}] are not an interval"));
    }
    let form = if bounded { Form::Bounded } else { Form::Other };
    Ok((Interval { lo, hi }, form))
}

/// A number's enclosure `(down, up)`: a decimal, hex-float or infinity, or a rational `p/q`.
fn number(text: &str) -> Result<(f64, f64), String> {
    if let Some((p, q)) = text.split_once('/') {
        let int = |s: &str| {
            let s = s.trim_start_matches('+');
            BigInt::from_str(s).map_err(|_| format!("'{s}' is not an integer"))
        };
        let (p, q) = (int(p)?, int(q)?);
        if q == BigInt::from(0) {
            return Err("a rational with denominator 0".into());
        }
        return Ok((
            crate::reduction::round_rational(&p, &q, Round::Down),
            crate::reduction::round_rational(&p, &q, Round::Up),
        ));
    }
    let e = parse_enclosure(text).map_err(|e| format!("'{text}': {e}"))?;
    Ok((e.lo, e.hi))
}

/// The uncertain form `m?r[u|d][e±n]` (see the module documentation).
fn uncertain(text: &str) -> Result<(Interval, Form), String> {
    let (m, rest) = text
        .split_once('?')
        .ok_or("expected '[' or the uncertain form m?r")?;
    // m: an optional sign, digits, an optional point and digits (no exponent).
    let (negative, digits) = match m.as_bytes().first() {
        Some(b'-') => (true, &m[1..]),
        Some(b'+') => (false, &m[1..]),
        _ => (false, m),
    };
    let (int_part, frac) = digits.split_once('.').unwrap_or((digits, ""));
    if int_part.is_empty() && frac.is_empty()
        || !int_part
            .bytes()
            .chain(frac.bytes())
            .all(|c| c.is_ascii_digit())
    {
        return Err(format!("'{m}' is not a decimal number without exponent"));
    }
    let mut big_m = BigInt::from_str(&format!("{int_part}{frac}")).expect("digits");
    if negative {
        big_m = -big_m;
    }
    let scale = -(frac.len() as i64);
    // The radius: digits, nothing (half a unit), or '?' (unbounded); then u or d; then e±n.
    let rest_lower = rest.to_ascii_lowercase();
    let (radius, rest) = if let Some(r) = rest_lower.strip_prefix('?') {
        (None, r.to_string())
    } else {
        let n = rest_lower.bytes().take_while(u8::is_ascii_digit).count();
        let r = if n == 0 {
            Some(BigInt::from(-1)) // half a unit
        } else {
            Some(BigInt::from_str(&rest_lower[..n]).expect("digits"))
        };
        (r, rest_lower[n..].to_string())
    };
    let (side, rest) = match rest.as_bytes().first() {
        Some(b'u') => (1, &rest[1..]),
        Some(b'd') => (-1, &rest[1..]),
        _ => (0, &rest[..]),
    };
    let exponent: i64 = match rest.strip_prefix('e') {
        Some(e) => e
            .trim_start_matches('+')
            .parse()
            .map_err(|_| format!("'e{e}' is not an exponent"))?,
        None if rest.is_empty() => 0,
        None => return Err(format!("unexpected '{rest}' after the radius")),
    };
    if exponent.abs() > 1_000_000 {
        return Err("the exponent is too large".into());
    }
    // Bounds as exact decimals `N e K`, rounded outward by the number reader.
    let decimal = |n: &BigInt, k: i64, down: bool| -> Result<f64, String> {
        let e = parse_enclosure(&format!("{n}e{k}")).map_err(|e| e.to_string())?;
        Ok(if down { e.lo } else { e.hi })
    };
    let k = exponent + scale;
    let form = if radius.is_some() {
        Form::Bounded
    } else {
        Form::Other
    };
    let (lo, hi) = match radius {
        None => (f64::NEG_INFINITY, f64::INFINITY),
        Some(r) if r == BigInt::from(-1) => {
            // Half a unit: (2m -+ 1) * 5 * 10^(k - 1).
            let two_m = &big_m * 2;
            let five = BigInt::from(5);
            (
                decimal(&((&two_m - 1) * &five), k - 1, true)?,
                decimal(&((&two_m + 1) * &five), k - 1, false)?,
            )
        }
        Some(r) => (
            decimal(&(&big_m - &r), k, true)?,
            decimal(&(&big_m + &r), k, false)?,
        ),
    };
    let (lo, hi) = match side {
        1 => (decimal(&big_m, k, true)?, hi),
        -1 => (lo, decimal(&big_m, k, false)?),
        _ => (lo, hi),
    };
    Ok((Interval { lo, hi }, form))
}
