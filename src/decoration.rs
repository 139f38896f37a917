//! IEEE 1788 decorations: what a result says about the function on the box, besides its values.
//!
//! A decoration is one of five facts, ordered from strongest to weakest (IEEE 1788-2015 §8):
//! `com` (defined and continuous on the box, and the computed result is bounded), `dac`
//! (defined on the box and its restriction to the box continuous), `def` (defined on the box),
//! `trv` (nothing is known) and `ill` (not an interval: NaI). The decoration of a result is the
//! weakest of its arguments' and of the operation's own on their boxes, so a `com` or `dac`
//! result proves that f is continuous on the whole box — what a root proof by a sign change
//! needs.
//!
//! The numeric codes are the standard's compressed encoding (§14.4): ill 0, trv 4, def 8,
//! dac 12, com 16, so that the weakest of two decorations is the minimum of their codes. The
//! decorated programs ([`crate::Expression::decorated`]) carry decorations as these codes in
//! ordinary program values; their rules are written once, in the lowering
//! (`src/lower/decoration.rs`).

use crate::Interval;
use std::fmt;

/// An IEEE 1788 decoration (ordered: `Ill < Trv < Def < Dac < Com`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Decoration {
    /// Not an interval (NaI): an invalid construction propagated.
    Ill = 0,
    /// Trivial: no fact about the function on the box (it may be undefined somewhere on it).
    Trv = 4,
    /// Defined at every point of the box.
    Def = 8,
    /// Defined on the box and continuous when restricted to the box.
    Dac = 12,
    /// Common: defined and continuous on the box, the box bounded and the result bounded.
    Com = 16,
}

impl Decoration {
    /// Every decoration, weakest first.
    pub const ALL: [Decoration; 5] = [
        Decoration::Ill,
        Decoration::Trv,
        Decoration::Def,
        Decoration::Dac,
        Decoration::Com,
    ];

    /// The standard's name: `com`, `dac`, `def`, `trv` or `ill`.
    pub fn name(self) -> &'static str {
        match self {
            Decoration::Ill => "ill",
            Decoration::Trv => "trv",
            Decoration::Def => "def",
            Decoration::Dac => "dac",
            Decoration::Com => "com",
        }
    }

    /// The standard's byte code (ill 0, trv 4, def 8, dac 12, com 16).
    pub fn code(self) -> u8 {
        self as u8
    }

    /// The decoration of a byte code; `None` for a byte that is not one of the five codes.
    pub fn from_code(code: u8) -> Option<Decoration> {
        Decoration::ALL.into_iter().find(|d| d.code() == code)
    }

    /// The strongest decoration whose code is at most `code`: how a program's decoration
    /// output is read (it is always one of the five codes; rounding down is the safe reading
    /// of anything else).
    pub fn at_most(code: f64) -> Decoration {
        Decoration::ALL
            .into_iter()
            .rev()
            .find(|d| f64::from(d.code()) <= code)
            .unwrap_or(Decoration::Ill)
    }

    /// The decoration of its name (`com`, ...; case-insensitive).
    pub fn from_name(name: &str) -> Option<Decoration> {
        Decoration::ALL
            .into_iter()
            .find(|d| d.name().eq_ignore_ascii_case(name))
    }

    /// The decoration IEEE 1788's `newDec` gives a bare interval: `com` when it is nonempty and
    /// bounded, `dac` when it is unbounded, `trv` when it is empty. Undecorated inputs get it.
    ///
    /// ```
    /// use ivjit::{Decoration, Interval};
    /// assert_eq!(Decoration::of(Interval::new(1.0, 2.0).unwrap()), Decoration::Com);
    /// assert_eq!(Decoration::of(Interval::new(1.0, f64::INFINITY).unwrap()), Decoration::Dac);
    /// assert_eq!(Decoration::of(Interval::EMPTY), Decoration::Trv);
    /// ```
    pub fn of(iv: Interval) -> Decoration {
        if iv.is_empty() {
            Decoration::Trv
        } else if iv.lo.is_finite() && iv.hi.is_finite() {
            Decoration::Com
        } else {
            Decoration::Dac
        }
    }
}

impl fmt::Display for Decoration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where a decorated program's variables get their decorations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DecorationInputs {
    /// One decoration per variable, given with the box (an input `dec(x)` per variable).
    Given,
    /// From the bounds alone (IEEE 1788's `newDec`: `com` bounded, `dac` unbounded, `trv`
    /// empty): no decoration inputs, so a batch moves no more input bytes than undecorated.
    FromBounds,
}

/// An interval with its decoration. NaI (not an interval) is the empty set decorated `ill`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DecoratedInterval {
    /// The values (empty for NaI).
    pub interval: Interval,
    /// What is known of the function on the box.
    pub decoration: Decoration,
}

/// Why a text or a pair is not a decorated interval.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum DecorationError {
    /// The interval part is not an interval.
    #[error(transparent)]
    Interval(#[from] crate::IntervalError),
    /// A suffix after `_` that is not a decoration.
    #[error("'{suffix}' is not a decoration: use _com, _dac, _def or _trv")]
    UnknownDecoration {
        /// The suffix as written.
        suffix: String,
    },
    /// Decorations asked of an evaluator compiled without them.
    #[error(
        "this evaluator computes no decorations: compile the expression with \
         Expression::parse_decorated (on the command line: --decorations)"
    )]
    NotDecorated,
    /// A decoration given to an evaluator that takes them from the bounds.
    #[error(
        "{given}: this evaluator decorates its inputs from their bounds \
         (DecorationInputs::FromBounds); for given decorations use DecorationInputs::Given"
    )]
    FromBounds {
        /// The decorated input, formatted.
        given: String,
    },
    /// A bound that is not a double where exact bounds are needed
    /// ([`DecoratedInterval::parse_exact`]).
    #[error(
        "'{text}' is not a double (it lies between {below} and {above}); comparisons are \
         exact, so write a double: one of those hex-floats, or a decimal that is one"
    )]
    NotADouble {
        /// The bound as written.
        text: String,
        /// The double below it, as a hex-float.
        below: String,
        /// The double above it, as a hex-float.
        above: String,
    },
    /// A decoration stronger than the interval may carry (IEEE 1788 §8.4).
    #[error(
        "{interval} cannot be decorated {decoration} (com needs a bounded nonempty interval, \
         dac and def a nonempty one): write _{strongest} or weaker"
    )]
    TooStrong {
        /// The interval, formatted.
        interval: String,
        /// The decoration asked for.
        decoration: Decoration,
        /// The strongest it may carry.
        strongest: Decoration,
    },
}

impl DecoratedInterval {
    /// Not an interval.
    pub const NAI: DecoratedInterval = DecoratedInterval {
        interval: Interval::EMPTY,
        decoration: Decoration::Ill,
    };

    /// `iv` decorated `decoration`; an error where the decoration claims more than the interval
    /// allows (`[1, inf]_com`, `[empty]_def`). `ill` gives NaI whatever the interval.
    ///
    /// ```
    /// use ivjit::{DecoratedInterval, Decoration, Interval};
    /// let x = Interval::new(0.0, 1.0).unwrap();
    /// assert!(DecoratedInterval::new(x, Decoration::Dac).is_ok());
    /// assert!(DecoratedInterval::new(Interval::ENTIRE, Decoration::Com).is_err());
    /// ```
    pub fn new(
        interval: Interval,
        decoration: Decoration,
    ) -> Result<DecoratedInterval, DecorationError> {
        if decoration == Decoration::Ill {
            return Ok(DecoratedInterval::NAI);
        }
        // newDec's decoration is also the strongest the interval may carry: com needs a
        // nonempty bounded interval, dac and def a nonempty one.
        let strongest = Decoration::of(interval);
        if decoration > strongest && decoration > Decoration::Trv {
            return Err(DecorationError::TooStrong {
                interval: interval.to_string(),
                decoration,
                strongest,
            });
        }
        Ok(DecoratedInterval {
            interval,
            decoration,
        })
    }

    /// IEEE 1788's `setDec`: `interval` decorated `decoration`, lowered to the strongest the
    /// interval may carry (`[1, inf]` with `com` is `dac`, the empty set `trv`); `ill` gives
    /// NaI.
    ///
    /// ```
    /// use ivjit::{DecoratedInterval, Decoration, Interval};
    /// let x = Interval::new(1.0, f64::INFINITY).unwrap();
    /// assert_eq!(DecoratedInterval::set_dec(x, Decoration::Com).decoration, Decoration::Dac);
    /// ```
    pub fn set_dec(interval: Interval, decoration: Decoration) -> DecoratedInterval {
        if decoration == Decoration::Ill {
            return DecoratedInterval::NAI;
        }
        DecoratedInterval {
            interval,
            decoration: decoration.min(Decoration::of(interval)),
        }
    }

    /// `iv` with the decoration IEEE 1788's `newDec` gives it ([`Decoration::of`]).
    pub fn undecorated(interval: Interval) -> DecoratedInterval {
        DecoratedInterval {
            interval,
            decoration: Decoration::of(interval),
        }
    }

    /// Whether this is NaI.
    pub fn is_nai(&self) -> bool {
        self.decoration == Decoration::Ill
    }

    /// Reads `[lo, hi]_dec`, a bare interval or number (decorated as [`Decoration::of`] says),
    /// or `[nai]`; the interval part in [`Interval::parse`]'s syntax.
    ///
    /// ```
    /// use ivjit::{DecoratedInterval, Decoration};
    /// let x = DecoratedInterval::parse("[0, 1]_dac").unwrap();
    /// assert_eq!(x.decoration, Decoration::Dac);
    /// assert_eq!(DecoratedInterval::parse("[1, 2]").unwrap().decoration, Decoration::Com);
    /// assert!(DecoratedInterval::parse("[nai]").unwrap().is_nai());
    /// assert!(DecoratedInterval::parse("[0, inf]_com").is_err());
    /// ```
    pub fn parse(text: &str) -> Result<DecoratedInterval, DecorationError> {
        let t = text.trim();
        if t.eq_ignore_ascii_case("[nai]") {
            return Ok(DecoratedInterval::NAI);
        }
        if let Some(close) = t.rfind(']') {
            if let Some(suffix) = t[close + 1..].strip_prefix('_') {
                let decoration = Decoration::from_name(suffix.trim()).ok_or_else(|| {
                    DecorationError::UnknownDecoration {
                        suffix: crate::syntax::lexer::shorten(suffix),
                    }
                })?;
                let interval = Interval::parse(&t[..=close])?;
                return DecoratedInterval::new(interval, decoration);
            }
        }
        Ok(DecoratedInterval::undecorated(Interval::parse(t)?))
    }

    /// [`DecoratedInterval::parse`], but every bound must be a double as written: where a
    /// result depends on bounds exactly (the comparisons of `crate::Overlap`'s module), a
    /// decimal such as `0.1` rounded outward could change it, so it is an error.
    ///
    /// ```
    /// use ivjit::DecoratedInterval;
    /// assert!(DecoratedInterval::parse_exact("[0.5, 0x1.8p1]_dac").is_ok());
    /// assert!(DecoratedInterval::parse_exact("[0, 0.1]").is_err());
    /// ```
    pub fn parse_exact(text: &str) -> Result<DecoratedInterval, DecorationError> {
        let d = DecoratedInterval::parse(text)?;
        let t = text.trim();
        let body = t
            .strip_prefix('[')
            .map_or(t, |b| b.split(']').next().unwrap_or(""));
        for bound in body.split(',') {
            let b = bound.trim();
            let word = b.trim_start_matches(['+', '-']).to_ascii_lowercase();
            if ["inf", "infinity", "empty", "entire", "nai"].contains(&word.as_str()) {
                continue;
            }
            // `parse` read it, so it is a number.
            if let Ok(e) = crate::syntax::number::parse_enclosure(b) {
                if !e.exact {
                    let hex = crate::syntax::number::hexf64;
                    return Err(DecorationError::NotADouble {
                        text: crate::syntax::lexer::shorten(b),
                        below: hex(e.lo),
                        above: hex(e.hi),
                    });
                }
            }
        }
        Ok(d)
    }

    /// `[lo, hi]_dec` in the given precision (outward, as [`Interval::display`]); `[nai]` for
    /// NaI.
    pub fn display(&self, precision: crate::Precision) -> String {
        if self.is_nai() {
            "[nai]".to_string()
        } else {
            format!("{}_{}", self.interval.display(precision), self.decoration)
        }
    }
}

impl fmt::Display for DecoratedInterval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.display(crate::Precision::F64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_order_like_the_decorations() {
        for w in Decoration::ALL.windows(2) {
            assert!(w[0] < w[1] && w[0].code() < w[1].code());
        }
        for d in Decoration::ALL {
            assert_eq!(Decoration::from_code(d.code()), Some(d));
            assert_eq!(Decoration::from_name(d.name()), Some(d));
        }
        assert_eq!(Decoration::from_code(5), None);
    }

    #[test]
    fn texts_read_and_print() {
        for text in [
            "[1, 2]_com",
            "[-inf, 0]_dac",
            "[empty]_trv",
            "[0, 1]_def",
            "[nai]",
        ] {
            let d = DecoratedInterval::parse(text).unwrap();
            assert_eq!(d.to_string(), text);
        }
        assert!(matches!(
            DecoratedInterval::parse("[1, 2]_xyz"),
            Err(DecorationError::UnknownDecoration { .. })
        ));
        assert!(matches!(
            DecoratedInterval::parse("[empty]_def"),
            Err(DecorationError::TooStrong { .. })
        ));
        assert_eq!(
            DecoratedInterval::parse("[entire]").unwrap().decoration,
            Decoration::Dac
        );
    }
}
