//! The interval value type seen by users of the library.

use crate::syntax::number::{format_f32, format_f64, parse_enclosure};
use std::fmt;

/// A closed real interval `[lo, hi]` with f64 bounds, or the empty set.
///
/// Invariants of a valid interval: `lo <= hi`, `lo < +inf`, `hi > -inf`, neither bound NaN, or
/// both bounds NaN, which is how the empty set is stored (the same convention the kernels use).
#[derive(Clone, Copy, Debug)]
pub struct Interval {
    pub lo: f64,
    pub hi: f64,
}

/// Why a pair of bounds is not an interval.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum IntervalError {
    #[error("a bound is NaN; NaN is not a number and cannot bound an interval (use [empty] for the empty set)")]
    NaN,
    #[error("lower bound {lo} is greater than upper bound {hi}; write the smaller bound first")]
    Inverted { lo: String, hi: String },
    #[error("lower bound is +inf: no real number is that large (IEEE 1788 intervals contain only reals)")]
    LoIsPlusInf,
    #[error("upper bound is -inf: no real number is that small (IEEE 1788 intervals contain only reals)")]
    HiIsMinusInf,
    #[error("'{text}' is not a number: {reason}")]
    BadNumber { text: String, reason: String },
    #[error("'{text}' is not an interval: expected a number, [lo, hi], [empty] or [entire]")]
    BadInterval { text: String },
}

impl Interval {
    pub const EMPTY: Interval = Interval {
        lo: f64::NAN,
        hi: f64::NAN,
    };
    pub const ENTIRE: Interval = Interval {
        lo: f64::NEG_INFINITY,
        hi: f64::INFINITY,
    };

    /// A checked interval `[lo, hi]`.
    pub fn new(lo: f64, hi: f64) -> Result<Interval, IntervalError> {
        if lo.is_nan() || hi.is_nan() {
            return Err(IntervalError::NaN);
        }
        if lo > hi {
            return Err(IntervalError::Inverted {
                lo: format_f64(lo),
                hi: format_f64(hi),
            });
        }
        if lo == f64::INFINITY {
            return Err(IntervalError::LoIsPlusInf);
        }
        if hi == f64::NEG_INFINITY {
            return Err(IntervalError::HiIsMinusInf);
        }
        Ok(Interval { lo, hi })
    }

    /// The interval holding just `x` (which must be finite).
    pub fn point(x: f64) -> Result<Interval, IntervalError> {
        Interval::new(x, x)
    }

    pub fn is_empty(&self) -> bool {
        self.lo.is_nan() || self.hi.is_nan()
    }

    /// Whether every element of `other` is in `self` (the empty set is in everything).
    pub fn contains_interval(&self, other: &Interval) -> bool {
        other.is_empty() || (!self.is_empty() && self.lo <= other.lo && other.hi <= self.hi)
    }

    /// Whether the real number `x` is in the interval.
    pub fn contains(&self, x: f64) -> bool {
        !self.is_empty() && self.lo <= x && x <= self.hi
    }

    /// Reads `0.5`, `-1e-3`, `0x1.8p-3`, `[1, 2]`, `[-inf, 0.1]`, `[empty]`, `[entire]`. Decimal
    /// bounds are rounded outward (a lower bound down, an upper bound up); a single number becomes
    /// the tightest interval around it.
    pub fn parse(text: &str) -> Result<Interval, IntervalError> {
        let t = text.trim();
        if let Some(inner) = t.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
            let inner = inner.trim();
            match inner.to_ascii_lowercase().as_str() {
                "empty" => return Ok(Interval::EMPTY),
                "entire" => return Ok(Interval::ENTIRE),
                _ => {}
            }
            let Some((a, b)) = inner.split_once(',') else {
                return Err(IntervalError::BadInterval {
                    text: t.to_string(),
                });
            };
            let lo = parse_bound(a.trim())?.lo;
            let hi = parse_bound(b.trim())?.hi;
            return Interval::new(lo, hi);
        }
        let e = parse_bound(t)?;
        if e.lo.is_infinite() && e.lo == e.hi {
            // `inf` alone is not a real number.
            return Err(if e.lo > 0.0 {
                IntervalError::LoIsPlusInf
            } else {
                IntervalError::HiIsMinusInf
            });
        }
        Interval::new(e.lo, e.hi)
    }

    /// Rounds the bounds outward to f32 values (stored widened to f64): the enclosure an f32
    /// kernel works with.
    pub fn to_f32_enclosure(self) -> Interval {
        if self.is_empty() {
            return self;
        }
        use crate::cpu::round::narrow_f32;
        use crate::scalar::Round;
        Interval {
            lo: narrow_f32(self.lo, Round::Down) as f64,
            hi: narrow_f32(self.hi, Round::Up) as f64,
        }
    }

    /// Formats a bound in the notation of the given precision (shortest round-trip decimal).
    pub fn format_bound(x: f64, precision: crate::Precision) -> String {
        let x = if x == 0.0 { 0.0 } else { x }; // -0 prints as 0: the sign of a zero bound carries no meaning
        match precision {
            crate::Precision::F64 => format_f64(x),
            crate::Precision::F32 => format_f32(x as f32),
        }
    }

    /// `[lo, hi]` or `[empty]` in the given precision's shortest notation.
    pub fn display(&self, precision: crate::Precision) -> String {
        if self.is_empty() {
            "[empty]".to_string()
        } else {
            format!(
                "[{}, {}]",
                Self::format_bound(self.lo, precision),
                Self::format_bound(self.hi, precision)
            )
        }
    }
}

fn parse_bound(text: &str) -> Result<crate::syntax::number::Enclosure, IntervalError> {
    parse_enclosure(text).map_err(|e| IntervalError::BadNumber {
        text: text.to_string(),
        reason: e.to_string(),
    })
}

impl PartialEq for Interval {
    /// Set equality: all empty intervals are equal; `-0` equals `+0`.
    fn eq(&self, other: &Self) -> bool {
        (self.is_empty() && other.is_empty()) || (self.lo == other.lo && self.hi == other.hi)
    }
}

impl fmt::Display for Interval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.display(crate::Precision::F64))
    }
}
