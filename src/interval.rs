//! The interval value type seen by users of the library.

use crate::syntax::exact::compare;
use crate::syntax::lexer::shorten;
use crate::syntax::number::{format_f64, parse_enclosure};
use std::fmt;

/// A closed real interval `[lo, hi]` with f64 bounds, or the empty set.
///
/// Invariants of a valid interval: `lo <= hi`, `lo < +inf`, `hi > -inf`, neither bound NaN, or
/// both bounds NaN, which is how the empty set is stored (the same convention the kernels use).
#[derive(Clone, Copy, Debug)]
pub struct Interval {
    /// The lower bound (NaN for the empty set).
    pub lo: f64,
    /// The upper bound (NaN for the empty set).
    pub hi: f64,
}

/// Why a pair of bounds is not an interval.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum IntervalError {
    #[error("a bound is NaN; NaN is not a number and cannot bound an interval (use [empty] for the empty set)")]
    /// A bound is NaN (only the empty set has NaN bounds, and then both).
    NaN,
    /// `lo > hi` (IEEE 1788 calls this an invalid interval).
    #[error("lower bound {lo} is greater than upper bound {hi}; write the smaller bound first")]
    Inverted {
        /// The lower bound, formatted.
        lo: String,
        /// The upper bound, formatted.
        hi: String,
    },
    #[error("lower bound is +inf: no real number is that large (IEEE 1788 intervals contain only reals)")]
    /// The lower bound is `+inf`, so the set holds no real number.
    LoIsPlusInf,
    #[error("upper bound is -inf: no real number is that small (IEEE 1788 intervals contain only reals)")]
    /// The upper bound is `-inf`, so the set holds no real number.
    HiIsMinusInf,
    #[error("'{text}' is not a number: {reason}")]
    /// A bound's text is not a number literal ([`Interval::parse`]).
    BadNumber {
        /// The bound's text.
        text: String,
        /// Why it is not a number.
        reason: String,
    },
    #[error("'{text}' is not an interval: expected a number, [lo, hi], [empty] or [entire]")]
    /// The text is neither a number nor `[lo, hi]`, `[empty]`, `[entire]` ([`Interval::parse`]).
    BadInterval {
        /// The text that was given.
        text: String,
    },
}

impl Interval {
    /// The empty set, stored as `[NaN, NaN]`.
    pub const EMPTY: Interval = Interval {
        lo: f64::NAN,
        hi: f64::NAN,
    };
    /// The whole real line, `[-inf, inf]`.
    pub const ENTIRE: Interval = Interval {
        lo: f64::NEG_INFINITY,
        hi: f64::INFINITY,
    };

    /// A checked interval `[lo, hi]`: fails on NaN, `lo > hi`, `lo == +inf` or `hi == -inf`.
    /// Infinite bounds otherwise allowed; use [`Interval::EMPTY`] for the empty set.
    ///
    /// ```
    /// use ivjit::{Interval, IntervalError};
    /// let x = Interval::new(-1.0, f64::INFINITY).unwrap();
    /// assert!(x.contains(1e300) && !x.contains(-2.0));
    /// assert!(matches!(Interval::new(2.0, 1.0), Err(IntervalError::Inverted { .. })));
    /// assert_eq!(Interval::new(f64::NAN, 1.0), Err(IntervalError::NaN));
    /// ```
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

    /// Reads a (lo, hi) pair as every backend returns it: (NaN, NaN) is empty. A pair with
    /// exactly one NaN bound cannot come from a correct lowering; it is widened to the whole
    /// line rather than trusted.
    pub(crate) fn from_bounds(lo: f64, hi: f64) -> Interval {
        match (lo.is_nan(), hi.is_nan()) {
            (true, true) => Interval::EMPTY,
            (false, false) => Interval { lo, hi },
            _ => {
                debug_assert!(false, "half-NaN interval ({lo}, {hi})");
                Interval::ENTIRE
            }
        }
    }

    /// The interval holding just `x` (which must be finite).
    pub fn point(x: f64) -> Result<Interval, IntervalError> {
        Interval::new(x, x)
    }

    /// Whether this is the empty set.
    pub fn is_empty(&self) -> bool {
        self.lo.is_nan() || self.hi.is_nan()
    }

    /// Whether every element of `other` is in `self` (the empty set is in everything).
    pub fn contains_interval(&self, other: &Interval) -> bool {
        other.is_empty() || (!self.is_empty() && self.lo <= other.lo && other.hi <= self.hi)
    }

    /// Whether the real number `x` is in the interval. The empty set contains nothing.
    ///
    /// ```
    /// use ivjit::Interval;
    /// let x = Interval::new(1.0, 2.0).unwrap();
    /// assert!(x.contains(1.0) && x.contains(1.5) && x.contains(2.0));
    /// assert!(!x.contains(2.5));
    /// assert!(!Interval::EMPTY.contains(0.0));
    /// ```
    pub fn contains(&self, x: f64) -> bool {
        !self.is_empty() && self.lo <= x && x <= self.hi
    }

    /// Reads `0.5`, `-1e-3`, `0x1.8p-3`, `[1, 2]`, `[-inf, 0.1]`, `[empty]`, `[entire]`. Decimal
    /// bounds are rounded outward (a lower bound down, an upper bound up); a single number becomes
    /// the tightest interval around it.
    ///
    /// ```
    /// use ivjit::Interval;
    /// // 0.1 is not a double: it becomes the two doubles around it.
    /// let tenth = Interval::parse("0.1").unwrap();
    /// assert!(tenth.lo < tenth.hi && tenth.contains(0.1));
    /// let half_line = Interval::new(f64::NEG_INFINITY, 0.1875).unwrap();
    /// assert_eq!(Interval::parse("[-inf, 0x1.8p-3]").unwrap(), half_line);
    /// assert!(Interval::parse("[empty]").unwrap().is_empty());
    /// assert!(Interval::parse("[2, 1]").is_err());
    /// ```
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
            return Interval::from_bound_texts(a.trim(), b.trim());
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

    /// The interval between two bounds as written, in the number syntax of [`Interval::parse`]
    /// (`inf` included): the lower bound rounded down, the upper bound up. Bounds whose written
    /// values are inverted are an error like `[2, 1]` also where both round to one double or lie
    /// between the same two (`[0.10000000000000001, 0.1]`, `[5e-324, 4e-324]`): the enclosures
    /// would make a valid interval of them, so the written values are compared exactly
    /// ([`crate::syntax::exact::compare`]).
    ///
    /// ```
    /// use ivjit::{Interval, IntervalError};
    /// assert_eq!(Interval::from_bound_texts("0.1", "0.1").unwrap(), Interval::parse("0.1").unwrap());
    /// assert!(matches!(
    ///     Interval::from_bound_texts("0.10000000000000001", "0.1"),
    ///     Err(IntervalError::Inverted { .. })
    /// ));
    /// ```
    pub fn from_bound_texts(lo: &str, hi: &str) -> Result<Interval, IntervalError> {
        let (l, h) = (parse_bound(lo)?, parse_bound(hi)?);
        let interval = Interval::new(l.lo, h.hi)?;
        // Ordered by the enclosures when the lower one ends where the upper one starts or
        // before; otherwise by the written values.
        if l.hi > h.lo && compare(lo, hi).is_ok_and(|o| o.is_gt()) {
            return Err(IntervalError::Inverted {
                lo: shorten(lo),
                hi: shorten(hi),
            });
        }
        Ok(interval)
    }

    /// Rounds the bounds outward to f32 values (stored widened to f64): the enclosure an f32
    /// kernel works with.
    pub fn to_f32_enclosure(self) -> Interval {
        if self.is_empty() {
            return self;
        }
        use crate::round::narrow_f32;
        use crate::scalar::Round;
        Interval {
            lo: narrow_f32(self.lo, Round::Down) as f64,
            hi: narrow_f32(self.hi, Round::Up) as f64,
        }
    }

    /// Formats the lower bound `x` of an interval of the given precision: the shortest
    /// decimal that is at most `x` and reads back as `x` (rounded to nearest in that
    /// precision). Outward, as IEEE 1788's interval-to-text: the printed interval, read as
    /// real numbers, contains the computed one (f32 0.1's shortest decimal "0.1" lies below it,
    /// so as an upper bound it prints "0.100000002").
    pub fn format_lower(x: f64, precision: crate::Precision) -> String {
        Self::format_outward(x, precision, true)
    }

    /// Formats the upper bound `x` of an interval: [`Interval::format_lower`] mirrored.
    pub fn format_upper(x: f64, precision: crate::Precision) -> String {
        Self::format_outward(x, precision, false)
    }

    fn format_outward(x: f64, precision: crate::Precision, down: bool) -> String {
        let x = if x == 0.0 { 0.0 } else { x }; // -0 prints as 0: the sign of a zero bound carries no meaning
        crate::syntax::number::format_bound_outward(x, precision == crate::Precision::F32, down)
    }

    /// `[lo, hi]` or `[empty]` in the given precision, rounded outward
    /// ([`Interval::format_lower`], [`Interval::format_upper`]).
    pub fn display(&self, precision: crate::Precision) -> String {
        if self.is_empty() {
            "[empty]".to_string()
        } else {
            format!(
                "[{}, {}]",
                Self::format_lower(self.lo, precision),
                Self::format_upper(self.hi, precision)
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
