//! The point-function table: one row per elementary function, and everything the pipeline knows
//! about it derived from that row.
//!
//! A row gives the function's name and one-line semantics (`ivjit functions`), its domain and a
//! real interval containing its range, how the interval lowering treats it ([`Rule`]: monotone
//! ones need nothing else), an exactly known point (`exp(0) = 1`), the sign fact the static sign
//! analysis may use, the CPU binding (CORE-MATH's correctly rounded function, f64 and f32) and the
//! CUDA math library function the GPU runtime calls with its documented maximum error in ulps.
//!
//! **Adding a function** is one row here, its derivative included (a formula in ivjit's syntax
//! that the gradient builds, [`UnaryRow::derivative`]). A function that is monotone on its
//! domain needs nothing more: the lowering restricts to the domain, bounds the ends and clamps to the range; the CPU
//! evaluator, the PTX emitter, the GPU runtime source ([`cuda_runtime_source`]), the sign
//! analysis and `ivjit functions` all read the row. Only a function that is not monotone needs a
//! lowering rule of its own (a [`Rule`] variant and its code in `src/lower/elementary.rs`).
//!
//! Unary and binary functions are separate types ([`UnaryFn`], [`BinaryFn`]), so a unary
//! function with two arguments cannot be written down. A third kind, [`DerivedFn`] (sec, cot,
//! acoth, ...), has no point function: its row says which interval operations it expands to.
//!
//! **Why one file of about 700 lines.** Most of it is the rows themselves (45 functions, a dozen
//! fields each, with the CUDA table each bound comes from): splitting the table would put a
//! function's facts in two places, which is what the table exists to prevent. The code around
//! the rows (the accessors and the generated CUDA runtime source) is short.
//!
//! **CUDA error bounds.** Source: NVIDIA, *CUDA C++ Programming Guide*, release 13.0, section 5.5
//! "Floating-Point Computation" (docs.nvidia.com/cuda/cuda-c-programming-guide): tables 47
//! (exponential functions), 48 (power functions), 49 (trigonometric), 50 (hyperbolic), 51 (error
//! and gamma functions) of section 5.5.7 "CUDA C++ Mathematical Standard Library Functions", and
//! table 55 of section 5.5.8 "Non-Standard CUDA Mathematical Functions" (exp10, sinpi, cospi).
//! Every function we call is in those tables, none with a range restriction or a "full range"
//! condition: each row gives one bound for the whole domain, and that bound is the row's `ulps`.
//! None of the rows depends on compilation flags except through `--use_fast_math`, which the
//! runtime never uses.
//!
//! What the bound means (section 5.5.7): "the absolute value of the difference between the ULPs
//! returned by the function and a correctly rounded result of the corresponding precision
//! obtained according to the round-to-nearest ties-to-even rounding mode". So a result y with
//! bound e is at most e floats away from RN(f(x)), which is within half an ulp of f(x): y moved
//! e + 1 floats outward encloses f(x).
//!
//! Why this file is long (~690 lines before its tests): it is the table, one row per function and
//! the types a row is made of; splitting it would split the one place a function is defined.
//!
//! Caveat, quoted from the same section: "The error bounds are derived from extensive, though not
//! exhaustive, testing. Therefore, they are not guaranteed." They are the best statement NVIDIA
//! makes; `tests/gpu/gpu_points.rs` measures the distance to correctly rounded values on the GPU and
//! fails if a padded bound misses.

use crate::round::{next_down, next_down_f32, next_up, next_up_f32, Precision, Round};
use core_math as cm;
use std::fmt;

/// Where a function is defined: `[lo, hi]`, infinite ends allowed. An `open` end excludes the
/// end point, which still bounds the values by the function's limit there (`log(0) = -inf`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Domain {
    /// Lower end.
    pub lo: f64,
    /// Whether `lo` itself is excluded.
    pub lo_open: bool,
    /// Upper end.
    pub hi: f64,
    /// Whether `hi` itself is excluded.
    pub hi_open: bool,
}

impl Domain {
    /// All reals.
    pub(crate) const ALL: Domain = Domain {
        lo: f64::NEG_INFINITY,
        lo_open: false,
        hi: f64::INFINITY,
        hi_open: false,
    };

    /// `x > lo`.
    const fn above(lo: f64) -> Domain {
        Domain {
            lo,
            lo_open: true,
            ..Domain::ALL
        }
    }

    /// `x >= lo`.
    const fn from(lo: f64) -> Domain {
        Domain { lo, ..Domain::ALL }
    }

    /// `lo <= x <= hi`.
    const fn closed(lo: f64, hi: f64) -> Domain {
        Domain {
            lo,
            hi,
            ..Domain::ALL
        }
    }

    /// `lo < x < hi`.
    const fn open(lo: f64, hi: f64) -> Domain {
        Domain {
            lo,
            lo_open: true,
            hi,
            hi_open: true,
        }
    }

    /// Whether the function is defined on every real number (no argument can fall outside).
    pub(crate) fn is_everywhere(&self) -> bool {
        self.lo == f64::NEG_INFINITY && self.hi == f64::INFINITY
    }
}

/// One end of a range enclosure. The lowering rounds each end outward in the program's
/// precision.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Limit {
    /// A number (infinite for no limit).
    Num(f64),
    /// k * pi/2: at a lower end the lower bound of its enclosure, at an upper end the upper.
    HalfPis(i32),
}

/// A real interval containing every value of the function (clamps the padded bounds).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Range {
    /// Lower end.
    pub lo: Limit,
    /// Upper end.
    pub hi: Limit,
}

impl Range {
    /// Whether both ends are finite: the function's values at finite arguments are then
    /// finite, and so are the library's (within a few ulps of them).
    pub(crate) fn is_bounded(&self) -> bool {
        let finite = |l: Limit| match l {
            Limit::Num(x) => x.is_finite(),
            Limit::HalfPis(_) => true,
        };
        finite(self.lo) && finite(self.hi)
    }
}

const fn range(lo: f64, hi: f64) -> Range {
    Range {
        lo: Limit::Num(lo),
        hi: Limit::Num(hi),
    }
}

const INF: f64 = f64::INFINITY;
const ANY: Range = range(-INF, INF);

/// How the interval lowering computes the image of an interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// Non-decreasing on the domain: restrict, `[f(lo)↓, f(hi)↑]`, clamp to the range.
    Increasing,
    /// Non-increasing on the domain: restrict, `[f(hi)↓, f(lo)↑]`, clamp to the range.
    Decreasing,
    /// Even and increasing in |x| (cosh): `[f(mig x)↓, f(mag x)↑]`, clamp to the range.
    EvenIncreasing,
    /// sin, cos, sinpi, cospi: extrema decided from the derivative's sign at the ends.
    Periodic,
    /// tan: increasing between asymptotes.
    Tangent,
}

/// What the static sign analysis may assume of `f(x)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SignRule {
    /// `f(x) >= 0` wherever defined.
    Nonneg,
    /// `f(x)` has the sign of x (increasing through the origin, `f(0) = 0`).
    FollowsArgument,
    /// Nothing known.
    Unknown,
}

/// The CUDA math library function behind a row, per precision, with its documented maximum
/// error in ulps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cuda {
    /// The double-precision function (`exp`).
    pub f64: &'static str,
    /// The single-precision function (`expf`).
    pub f32: &'static str,
    /// Maximum error of `f64`, in ulps.
    pub ulps_f64: u32,
    /// Maximum error of `f32`, in ulps.
    pub ulps_f32: u32,
    /// The table of the CUDA C++ Programming Guide (13.0) the bounds are quoted from.
    pub table: u32,
}

impl Cuda {
    /// The CUDA function for precision `p` (`exp` or `expf`).
    pub(crate) fn function(&self, p: Precision) -> &'static str {
        match p {
            Precision::F64 => self.f64,
            Precision::F32 => self.f32,
        }
    }

    /// Its documented maximum error in precision `p`, in ulps.
    pub fn ulps(&self, p: Precision) -> u32 {
        match p {
            Precision::F64 => self.ulps_f64,
            Precision::F32 => self.ulps_f32,
        }
    }
}

const fn cuda(f64: &'static str, f32: &'static str, ulps: (u32, u32), table: u32) -> Cuda {
    Cuda {
        f64,
        f32,
        ulps_f64: ulps.0,
        ulps_f32: ulps.1,
        table,
    }
}

/// One unary function.
#[derive(Clone, Copy, Debug)]
pub struct UnaryRow {
    /// The name expressions call it by (also the CUDA runtime's entry point name).
    pub name: &'static str,
    /// IEEE 1788 set-based semantics in one line.
    pub semantics: &'static str,
    /// Where it is defined.
    pub domain: Domain,
    /// The domain in words when the floats' domain above says less (tan: every float is in it,
    /// the reals are not); `None`: written from `domain`.
    pub domain_note: Option<&'static str>,
    /// A real interval containing its values.
    pub range: Range,
    /// How the lowering computes interval images.
    pub rule: Rule,
    /// A point `(x, f(x))` where the value is exactly representable and known: bounds there are
    /// exact, which keeps the identities the IEEE 1788 tests check (`exp(0) = 1`) tight.
    pub exact: Option<(f64, f64)>,
    /// The sign fact.
    pub sign: SignRule,
    /// CORE-MATH's correctly rounded f64 function.
    pub cpu_f64: fn(f64) -> f64,
    /// CORE-MATH's correctly rounded f32 function.
    pub cpu_f32: fn(f32) -> f32,
    /// The CUDA math library functions and their error bounds.
    pub cuda: Cuda,
    /// The derivative f'(x), in ivjit's syntax over the argument `x`: the gradient
    /// (`src/ir/diff.rs`) builds it into the graph, times the argument's derivative, and
    /// `ivjit functions` prints it. The function applied to `x` in it is the node itself (the
    /// graph shares identical nodes: `1 + sqr(tan(x))` reuses tan(x)), and constants such as
    /// `log(2)` or `pi` fold to rigorous enclosures.
    pub derivative: &'static str,
}

/// How the lowering treats a binary function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule2 {
    /// hypot: increasing in |x| and |y|.
    Hypot,
    /// pow: x >= 0, monotone in each argument.
    Pow,
    /// atan2: continuous off the branch cut; corners.
    Atan2,
}

/// One binary function.
#[derive(Clone, Copy, Debug)]
pub struct BinaryRow {
    /// The name expressions call it by.
    pub name: &'static str,
    /// IEEE 1788 set-based semantics in one line.
    pub semantics: &'static str,
    /// Where it is defined, in words.
    pub domain_text: &'static str,
    /// Whether it is defined on every pair of reals.
    pub everywhere: bool,
    /// How the lowering computes interval images.
    pub rule: Rule2,
    /// The sign fact (`FollowsArgument` is meaningless here).
    pub sign: SignRule,
    /// CORE-MATH's correctly rounded f64 function.
    pub cpu_f64: fn(f64, f64) -> f64,
    /// CORE-MATH's correctly rounded f32 function.
    pub cpu_f32: fn(f32, f32) -> f32,
    /// The CUDA math library functions and their error bounds.
    pub cuda: Cuda,
    /// The partial derivatives in its first and second arguments, in ivjit's syntax over `x`
    /// (the first argument) and `y` (the second), as [`UnaryRow::derivative`].
    pub partials: [&'static str; 2],
}

macro_rules! table {
    ($ty:ident, $row:ident, $rows:ident, $( $(#[doc = $doc:literal])* $variant:ident = $value:expr, )*) => {
        /// A function of the table (see the module documentation).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $ty {
            $( $(#[doc = $doc])* $variant, )*
        }

        static $rows: &[$row] = &[ $( $value, )* ];

        impl $ty {
            /// Every function of this kind, in table order.
            pub const ALL: &'static [$ty] = &[ $( $ty::$variant, )* ];

            /// The function's row.
            pub fn row(self) -> &'static $row {
                &$rows[self as usize]
            }

            /// The name expressions call it by.
            pub fn name(self) -> &'static str {
                self.row().name
            }

            /// The function called `name`, if any.
            pub(crate) fn from_name(name: &str) -> Option<$ty> {
                $ty::ALL.iter().copied().find(|f| f.name() == name)
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

/// CORE-MATH's f64 and f32 versions of a unary function.
type CpuPair = (fn(f64) -> f64, fn(f32) -> f32);

/// A unary row with the defaults of a function defined everywhere, increasing, with no known
/// sign; the table overrides what differs.
const fn unary(
    name: &'static str,
    semantics: &'static str,
    derivative: &'static str,
    cpu: CpuPair,
    cuda: Cuda,
) -> UnaryRow {
    UnaryRow {
        name,
        semantics,
        derivative,
        domain: Domain::ALL,
        domain_note: None,
        range: ANY,
        rule: Rule::Increasing,
        exact: None,
        sign: SignRule::Unknown,
        cpu_f64: cpu.0,
        cpu_f32: cpu.1,
        cuda,
    }
}

const HALF_PI: Range = Range {
    lo: Limit::HalfPis(-1),
    hi: Limit::HalfPis(1),
};

table! { UnaryFn, UnaryRow, UNARY,
    /// e^x.
    Exp = UnaryRow { range: range(0.0, INF), exact: Some((0.0, 1.0)), sign: SignRule::Nonneg,
        ..unary("exp", "e^x", "exp(x)", (cm::exp, cm::expf), cuda("exp", "expf", (1, 2), 47)) },
    /// 2^x.
    Exp2 = UnaryRow { range: range(0.0, INF), exact: Some((0.0, 1.0)), sign: SignRule::Nonneg,
        ..unary("exp2", "2^x", "log(2) * exp2(x)", (cm::exp2, cm::exp2f), cuda("exp2", "exp2f", (1, 2), 47)) },
    /// 10^x.
    Exp10 = UnaryRow { range: range(0.0, INF), exact: Some((0.0, 1.0)), sign: SignRule::Nonneg,
        ..unary("exp10", "10^x", "log(10) * exp10(x)", (cm::exp10, cm::exp10f), cuda("exp10", "exp10f", (1, 2), 55)) },
    /// e^x - 1.
    Expm1 = UnaryRow { range: range(-1.0, INF), exact: Some((0.0, 0.0)), sign: SignRule::FollowsArgument,
        ..unary("expm1", "e^x - 1, accurate near 0", "exp(x)", (cm::expm1, cm::expm1f), cuda("expm1", "expm1f", (1, 1), 47)) },
    /// Natural logarithm.
    Log = UnaryRow { domain: Domain::above(0.0), exact: Some((1.0, 0.0)),
        ..unary("log", "natural logarithm; log([-1, 1]) = [-inf, 0]", "1 / x", (cm::log, cm::logf), cuda("log", "logf", (1, 1), 47)) },
    /// Base-2 logarithm.
    Log2 = UnaryRow { domain: Domain::above(0.0), exact: Some((1.0, 0.0)),
        ..unary("log2", "base-2 logarithm", "1 / (log(2) * x)", (cm::log2, cm::log2f), cuda("log2", "log2f", (1, 1), 47)) },
    /// Base-10 logarithm.
    Log10 = UnaryRow { domain: Domain::above(0.0), exact: Some((1.0, 0.0)),
        ..unary("log10", "base-10 logarithm", "1 / (log(10) * x)", (cm::log10, cm::log10f), cuda("log10", "log10f", (1, 2), 47)) },
    /// ln(1 + x).
    Log1p = UnaryRow { domain: Domain::above(-1.0), exact: Some((0.0, 0.0)),
        ..unary("log1p", "log(1 + x), accurate near 0", "1 / (1 + x)", (cm::log1p, cm::log1pf), cuda("log1p", "log1pf", (1, 1), 47)) },
    /// Sine.
    Sin = UnaryRow { range: range(-1.0, 1.0), rule: Rule::Periodic, exact: Some((0.0, 0.0)),
        ..unary("sin", "sine; extrema found rigorously (no floating-point pi)", "cos(x)", (cm::sin, cm::sinf), cuda("sin", "sinf", (2, 2), 49)) },
    /// Cosine.
    Cos = UnaryRow { range: range(-1.0, 1.0), rule: Rule::Periodic, exact: Some((0.0, 1.0)),
        ..unary("cos", "cosine", "-sin(x)", (cm::cos, cm::cosf), cuda("cos", "cosf", (2, 2), 49)) },
    /// Tangent.
    Tan = UnaryRow { rule: Rule::Tangent, exact: Some((0.0, 0.0)), domain_note: Some("x != pi/2 + k pi"),
        ..unary("tan", "tangent; [entire] when the interval may hold an asymptote", "1 + sqr(tan(x))", (cm::tan, cm::tanf), cuda("tan", "tanf", (2, 4), 49)) },
    /// Arcsine.
    Asin = UnaryRow { domain: Domain::closed(-1.0, 1.0), range: HALF_PI, exact: Some((0.0, 0.0)), sign: SignRule::FollowsArgument,
        ..unary("asin", "arcsine, values in [-pi/2, pi/2]", "1 / sqrt(1 - sqr(x))", (cm::asin, cm::asinf), cuda("asin", "asinf", (2, 2), 49)) },
    /// Arccosine.
    Acos = UnaryRow { domain: Domain::closed(-1.0, 1.0), range: Range { lo: Limit::Num(0.0), hi: Limit::HalfPis(2) },
        rule: Rule::Decreasing, exact: Some((1.0, 0.0)), sign: SignRule::Nonneg,
        ..unary("acos", "arccosine, values in [0, pi]", "-(1 / sqrt(1 - sqr(x)))", (cm::acos, cm::acosf), cuda("acos", "acosf", (2, 2), 49)) },
    /// Arctangent.
    Atan = UnaryRow { range: HALF_PI, exact: Some((0.0, 0.0)), sign: SignRule::FollowsArgument,
        ..unary("atan", "arctangent, values in (-pi/2, pi/2)", "1 / (1 + sqr(x))", (cm::atan, cm::atanf), cuda("atan", "atanf", (2, 2), 49)) },
    /// Hyperbolic sine.
    Sinh = UnaryRow { exact: Some((0.0, 0.0)), sign: SignRule::FollowsArgument,
        ..unary("sinh", "hyperbolic sine", "cosh(x)", (cm::sinh, cm::sinhf), cuda("sinh", "sinhf", (2, 3), 50)) },
    /// Hyperbolic cosine.
    Cosh = UnaryRow { range: range(1.0, INF), rule: Rule::EvenIncreasing, exact: Some((0.0, 1.0)), sign: SignRule::Nonneg,
        ..unary("cosh", "hyperbolic cosine, >= 1", "sinh(x)", (cm::cosh, cm::coshf), cuda("cosh", "coshf", (1, 2), 50)) },
    /// Hyperbolic tangent.
    Tanh = UnaryRow { range: range(-1.0, 1.0), exact: Some((0.0, 0.0)), sign: SignRule::FollowsArgument,
        ..unary("tanh", "hyperbolic tangent, in (-1, 1)", "1 - sqr(tanh(x))", (cm::tanh, cm::tanhf), cuda("tanh", "tanhf", (1, 2), 50)) },
    /// Inverse hyperbolic sine.
    Asinh = UnaryRow { exact: Some((0.0, 0.0)), sign: SignRule::FollowsArgument,
        ..unary("asinh", "inverse hyperbolic sine", "1 / sqrt(sqr(x) + 1)", (cm::asinh, cm::asinhf), cuda("asinh", "asinhf", (3, 3), 50)) },
    /// Inverse hyperbolic cosine.
    Acosh = UnaryRow { domain: Domain::from(1.0), range: range(0.0, INF), exact: Some((1.0, 0.0)), sign: SignRule::Nonneg,
        ..unary("acosh", "inverse hyperbolic cosine", "1 / sqrt(sqr(x) - 1)", (cm::acosh, cm::acoshf), cuda("acosh", "acoshf", (3, 4), 50)) },
    /// Inverse hyperbolic tangent.
    Atanh = UnaryRow { domain: Domain::open(-1.0, 1.0), exact: Some((0.0, 0.0)), sign: SignRule::FollowsArgument,
        ..unary("atanh", "inverse hyperbolic tangent", "1 / (1 - sqr(x))", (cm::atanh, cm::atanhf), cuda("atanh", "atanhf", (2, 3), 50)) },
    /// Cube root.
    Cbrt = UnaryRow { exact: Some((0.0, 0.0)), sign: SignRule::FollowsArgument,
        ..unary("cbrt", "cube root", "1 / (3 * sqr(cbrt(x)))", (cm::cbrt, cm::cbrtf), cuda("cbrt", "cbrtf", (1, 1), 48)) },
    /// sin(pi * x).
    Sinpi = UnaryRow { range: range(-1.0, 1.0), rule: Rule::Periodic, exact: Some((0.0, 0.0)),
        ..unary("sinpi", "sin(pi x), exact period 2", "pi * cospi(x)", (cm::sinpi, cm::sinpif), cuda("sinpi", "sinpif", (2, 1), 55)) },
    /// cos(pi * x).
    Cospi = UnaryRow { range: range(-1.0, 1.0), rule: Rule::Periodic, exact: Some((0.0, 1.0)),
        ..unary("cospi", "cos(pi x)", "-(pi * sinpi(x))", (cm::cospi, cm::cospif), cuda("cospi", "cospif", (2, 1), 55)) },
    /// The error function.
    Erf = UnaryRow { range: range(-1.0, 1.0), exact: Some((0.0, 0.0)), sign: SignRule::FollowsArgument,
        ..unary("erf", "error function, 2/sqrt(pi) times the integral of e^(-t^2) from 0 to x; in (-1, 1)", "2 / sqrt(pi) * exp(-sqr(x))", (cm::erf, cm::erff), cuda("erf", "erff", (2, 2), 51)) },
    /// The complementary error function.
    Erfc = UnaryRow { range: range(0.0, 2.0), rule: Rule::Decreasing, exact: Some((0.0, 1.0)), sign: SignRule::Nonneg,
        ..unary("erfc", "complementary error function 1 - erf(x), accurate for large x; in (0, 2)", "-(2 / sqrt(pi) * exp(-sqr(x)))", (cm::erfc, cm::erfcf), cuda("erfc", "erfcf", (5, 4), 51)) },
}

table! { BinaryFn, BinaryRow, BINARY,
    /// atan2(y, x): the angle of the point (x, y); the first operand is y.
    Atan2 = BinaryRow { name: "atan2", semantics: "atan2(y, x): angle of the point (x, y), values in [-pi, pi]",
        domain_text: "(x, y) != (0, 0)", everywhere: false, rule: Rule2::Atan2, sign: SignRule::Unknown,
        cpu_f64: cm::atan2, cpu_f32: cm::atan2f, cuda: cuda("atan2", "atan2f", (2, 3), 49),
        partials: ["y / (sqr(x) + sqr(y))", "-x / (sqr(x) + sqr(y))"] },
    /// pow(x, y) for x >= 0.
    Pow = BinaryRow { name: "pow", semantics: "x^y for an interval exponent (x^n with an integer constant n is pown)",
        domain_text: "x > 0, or x = 0 with y > 0", everywhere: false, rule: Rule2::Pow, sign: SignRule::Nonneg,
        cpu_f64: cm::pow, cpu_f32: cm::powf, cuda: cuda("pow", "powf", (2, 4), 48),
        partials: ["y / x * pow(x, y)", "log(x) * pow(x, y)"] },
    /// hypot(x, y) = sqrt(x^2 + y^2).
    Hypot = BinaryRow { name: "hypot", semantics: "sqrt(x^2 + y^2) without overflow",
        domain_text: "all reals", everywhere: true, rule: Rule2::Hypot, sign: SignRule::Nonneg,
        cpu_f64: cm::hypot, cpu_f32: cm::hypotf, cuda: cuda("hypot", "hypotf", (2, 3), 48),
        partials: ["x / hypot(x, y)", "y / hypot(x, y)"] },
}

/// What a derived function expands to in the interval IR (see [`DerivedFn`]; the expansions
/// are written in `crate::ir::build::expand_derived`). Where one formula is loose in some
/// regime (an inner overflow, an ill-conditioned composition), the expansion intersects two
/// formulas: each encloses the function's image, so their intersection does, and it is as tight
/// as the better one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expansion {
    /// `1 / g(x)`: the interval reciprocal of g's image (sec = 1/cos, csc, coth).
    RecipOf(UnaryFn),
    /// acot = atan(1/x) for x != 0, and acot(0) = pi/2: the hull of atan(1/x) with pi/2 when the
    /// argument holds 0.
    Acot,
    /// cot: 1/tan(x), tight near the asymptotes at k pi, intersected with -tan(x - pi/2), tight
    /// near the zeros at pi/2 + k pi.
    Cot,
    /// sech: 1/cosh(x) intersected with 2 e^-|x| / (1 + e^-2|x|) (cosh overflows beyond
    /// |x| = 710, where sech is still positive).
    Sech,
    /// csch, odd: on x > 0, 1/sinh(x) intersected with 2 e^-x / -expm1(-2x) (exact for every x,
    /// and free of overflow).
    Csch,
    /// acoth, odd: on x >= 1, log1p(2 / (x - 1)) / 2 (x - 1 is exact near 1, where atanh(1/x)
    /// would amplify the rounding of 1/x without bound).
    Acoth,
    /// asech on 0 <= x <= 1: acosh(1/x) intersected with log1p(sqrt((1 - x)(1 + x))) - log(x)
    /// (well conditioned near 1, no overflow of 1/x for subnormal x).
    Asech,
    /// acsch, odd: on x >= 0, asinh(1/x) (tight for large x) intersected with
    /// log1p(sqrt(1 + x^2)) - log(x) (no overflow of 1/x for tiny x).
    Acsch,
}

/// One derived function: no point function of its own, but an expansion into interval
/// operations that are each rigorous, so the result is rigorous by construction (and about as
/// tight as two or three directed roundings allow).
#[derive(Clone, Copy, Debug)]
pub struct DerivedRow {
    /// The name expressions call it by.
    pub name: &'static str,
    /// Semantics in one line.
    pub semantics: &'static str,
    /// Where it is defined, in words.
    pub domain_text: &'static str,
    /// What it expands to.
    pub expansion: Expansion,
    /// Its derivative, for `ivjit functions`: the gradient differentiates the expansion.
    pub derivative: &'static str,
    /// A formula over `x` with the function's domain and points of discontinuity, that the
    /// decoration rules decorate faithfully (`src/lower/decoration.rs`): decorated programs
    /// take the function's decoration from it (the expansion's intersections would say trv).
    /// Bounded wherever the function is on finite boxes (`log(abs(x))`, not `1 / x`, for
    /// csch's domain: acsch is bounded near 0), so that it never turns `com` into `dac`.
    pub decoration: &'static str,
}

const fn derived(
    name: &'static str,
    semantics: &'static str,
    domain_text: &'static str,
    expansion: Expansion,
    derivative: &'static str,
    decoration: &'static str,
) -> DerivedRow {
    DerivedRow {
        name,
        semantics,
        domain_text,
        expansion,
        derivative,
        decoration,
    }
}

table! { DerivedFn, DerivedRow, DERIVED,
    /// Secant.
    Sec = derived("sec", "secant 1/cos(x)", "x != pi/2 + k pi", Expansion::RecipOf(UnaryFn::Cos), "sec(x) tan(x)", "1 / cos(x)"),
    /// Cosecant.
    Csc = derived("csc", "cosecant 1/sin(x)", "x != k pi", Expansion::RecipOf(UnaryFn::Sin), "-csc(x) cot(x)", "1 / sin(x)"),
    /// Cotangent.
    Cot = derived("cot", "cotangent cos(x)/sin(x)", "x != k pi", Expansion::Cot, "-(1 + cot(x)^2)", "1 / sin(x)"),
    /// Inverse cotangent.
    Acot = derived("acot", "inverse cotangent atan(1/x), acot(0) = pi/2; values in (-pi/2, pi/2]", "all reals", Expansion::Acot, "-1 / (1 + x^2)", "atan2(x, -1)"),
    /// Hyperbolic secant.
    Sech = derived("sech", "hyperbolic secant 1/cosh(x), in (0, 1]", "all reals", Expansion::Sech, "-sech(x) tanh(x)", "atan(x)"),
    /// Hyperbolic cosecant.
    Csch = derived("csch", "hyperbolic cosecant 1/sinh(x)", "x != 0", Expansion::Csch, "-csch(x) coth(x)", "log(abs(x))"),
    /// Hyperbolic cotangent.
    Coth = derived("coth", "hyperbolic cotangent 1/tanh(x), |coth x| > 1", "x != 0", Expansion::RecipOf(UnaryFn::Tanh), "1 - coth(x)^2", "log(abs(x))"),
    /// Inverse hyperbolic cotangent.
    Acoth = derived("acoth", "inverse hyperbolic cotangent atanh(1/x)", "|x| > 1", Expansion::Acoth, "1 / (1 - x^2)", "atanh(1 / x)"),
    /// Inverse hyperbolic secant.
    Asech = derived("asech", "inverse hyperbolic secant acosh(1/x), >= 0", "0 < x <= 1", Expansion::Asech, "-1 / (x sqrt(1 - x^2))", "sqrt(1 - x) + log(x)"),
    /// Inverse hyperbolic cosecant.
    Acsch = derived("acsch", "inverse hyperbolic cosecant asinh(1/x)", "x != 0", Expansion::Acsch, "-1 / (|x| sqrt(1 + x^2))", "log(abs(x))"),
}

impl UnaryFn {
    /// The domain in words, for `ivjit functions`.
    pub(crate) fn domain_text(self) -> String {
        if let Some(note) = self.row().domain_note {
            return note.to_string();
        }
        let d = self.row().domain;
        let num = |x: f64| format!("{x}");
        match (d.lo.is_finite(), d.hi.is_finite()) {
            (false, false) => "all reals".to_string(),
            (true, false) => format!("x {} {}", if d.lo_open { ">" } else { ">=" }, num(d.lo)),
            (false, true) => format!("x {} {}", if d.hi_open { "<" } else { "<=" }, num(d.hi)),
            (true, true) => format!(
                "{} {} x {} {}",
                num(d.lo),
                if d.lo_open { "<" } else { "<=" },
                if d.hi_open { "<" } else { "<=" },
                num(d.hi)
            ),
        }
    }
}

/// A point function of either kind: what the GPU runtime and the accuracy table are indexed by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PointFn {
    /// A unary function.
    Unary(UnaryFn),
    /// A binary function.
    Binary(BinaryFn),
}

impl From<UnaryFn> for PointFn {
    fn from(f: UnaryFn) -> PointFn {
        PointFn::Unary(f)
    }
}

impl From<BinaryFn> for PointFn {
    fn from(f: BinaryFn) -> PointFn {
        PointFn::Binary(f)
    }
}

impl PointFn {
    /// Every point function: the unary ones, then the binary ones.
    pub fn all() -> impl Iterator<Item = PointFn> {
        UnaryFn::ALL
            .iter()
            .map(|&f| PointFn::Unary(f))
            .chain(BinaryFn::ALL.iter().map(|&f| PointFn::Binary(f)))
    }

    /// The function called `name`, if any.
    pub fn from_name(name: &str) -> Option<PointFn> {
        PointFn::all().find(|f| f.name() == name)
    }

    /// The name expressions call it by.
    pub fn name(self) -> &'static str {
        match self {
            PointFn::Unary(f) => f.name(),
            PointFn::Binary(f) => f.name(),
        }
    }

    /// Number of arguments (1 or 2).
    pub fn arity(self) -> usize {
        match self {
            PointFn::Unary(_) => 1,
            PointFn::Binary(_) => 2,
        }
    }

    /// The CUDA math library function and its error bounds.
    pub fn cuda(self) -> Cuda {
        match self {
            PointFn::Unary(f) => f.row().cuda,
            PointFn::Binary(f) => f.row().cuda,
        }
    }
}

impl fmt::Display for PointFn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Maximum error in ulps of the CUDA math library function behind `f` in precision `p`, as
/// tabulated by NVIDIA (see the module documentation; each row names its table).
pub fn cuda_max_ulps(f: PointFn, p: Precision) -> u32 {
    f.cuda().ulps(p)
}

/// Name of the runtime function that computes `f` in precision `p` (`ivjit_exp_f64`).
pub fn runtime_symbol(f: PointFn, p: Precision) -> String {
    format!("ivjit_{}_{}", f.name(), p.name())
}

/// The CUDA C source of the GPU runtime for the point functions `fns` in precision `p`: one
/// `extern "C" __device__` entry point per function, [`runtime_symbol`] named, each a plain call
/// of the CUDA math library (the row's `cuda` name). Binary functions take their operands in the
/// IR's order (atan2(y, x): y first). The results are the library's round-to-nearest
/// approximations; the kernel pads them outward inline by the row's error bound. Nothing here
/// is rigorous on its own.
pub(crate) fn cuda_runtime_source(p: Precision, fns: &[PointFn]) -> String {
    let mut fns = fns.to_vec();
    fns.sort();
    fns.dedup();
    let t = match p {
        Precision::F64 => "double",
        Precision::F32 => "float",
    };
    let mut s = format!(
        "// ivjit GPU runtime ({p}), generated from the point-function table (src/point.rs):\n\
         // one entry point per function the kernel calls, each a call of the CUDA math library.\n"
    );
    for f in fns {
        let sym = runtime_symbol(f, p);
        let callee = f.cuda().function(p);
        match f {
            PointFn::Unary(_) => s.push_str(&format!(
                "extern \"C\" __device__ {t} {sym}({t} x) {{ return {callee}(x); }}\n"
            )),
            PointFn::Binary(_) => s.push_str(&format!(
                "extern \"C\" __device__ {t} {sym}({t} a, {t} b) {{ return {callee}(a, b); }}\n"
            )),
        }
    }
    s
}

// ---------------------------------------------------------------------------------------------
// Reference bounds: CORE-MATH's correctly rounded values (the rows' `cpu_*` functions) stepped
// one float outward. A correctly rounded result r is the float nearest f(x), so f(x) lies
// strictly between r's neighbours unless r is exact: one step outward gives a rigorous bound, at
// most one ulp from the tightest. At infinite or extreme values the step is still valid (the
// next float below +inf is MAX, which is <= +inf; the next above -inf is -MAX, which is >= -inf).
// The CPU evaluator and the scalar IR's reference interpreter both use these.

/// A rigorous bound from the correctly rounded value `v` of a function: one float outward.
pub(crate) fn step_f64(v: f64, r: Round) -> f64 {
    match r {
        Round::Down => next_down(v),
        Round::Up => next_up(v),
        Round::Nearest => v,
    }
}

/// [`step_f64`] in f32.
pub(crate) fn step_f32(v: f32, r: Round) -> f32 {
    match r {
        Round::Down => next_down_f32(v),
        Round::Up => next_up_f32(v),
        Round::Nearest => v,
    }
}

/// A unary `f` at x rounded to nearest, correctly (CORE-MATH), in f64: [`step_f64`] makes it a
/// bound, as [`bound_f64`] does.
pub(crate) fn nearest_f64(f: UnaryFn, x: f64) -> f64 {
    (f.row().cpu_f64)(x)
}

/// [`nearest_f64`] in f32.
pub(crate) fn nearest_f32(f: UnaryFn, x: f32) -> f32 {
    (f.row().cpu_f32)(x)
}

/// A binary `f` at (x, y) rounded to nearest, correctly, in f64 (see [`nearest_f64`]).
pub(crate) fn nearest2_f64(f: BinaryFn, x: f64, y: f64) -> f64 {
    (f.row().cpu_f64)(x, y)
}

/// [`nearest2_f64`] in f32.
pub(crate) fn nearest2_f32(f: BinaryFn, x: f32, y: f32) -> f32 {
    (f.row().cpu_f32)(x, y)
}

/// A rigorous bound of a unary `f` at x in f64 (see [`crate::scalar::Inst::Point1`]).
pub(crate) fn bound_f64(f: UnaryFn, x: f64, r: Round) -> f64 {
    step_f64(nearest_f64(f, x), r)
}

/// A rigorous bound of a unary `f` at x in f32.
pub(crate) fn bound_f32(f: UnaryFn, x: f32, r: Round) -> f32 {
    step_f32(nearest_f32(f, x), r)
}

/// A rigorous bound of a binary `f` at (x, y) in f64.
pub(crate) fn bound2_f64(f: BinaryFn, x: f64, y: f64, r: Round) -> f64 {
    step_f64(nearest2_f64(f, x, y), r)
}

/// A rigorous bound of a binary `f` at (x, y) in f32.
pub(crate) fn bound2_f32(f: BinaryFn, x: f32, y: f32, r: Round) -> f32 {
    step_f32(nearest2_f32(f, x, y), r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_in_variant_order_and_names_are_unique() {
        for (i, &f) in UnaryFn::ALL.iter().enumerate() {
            assert_eq!(f as usize, i);
            assert_eq!(UnaryFn::from_name(f.name()), Some(f));
        }
        for (i, &f) in BinaryFn::ALL.iter().enumerate() {
            assert_eq!(f as usize, i);
            assert_eq!(BinaryFn::from_name(f.name()), Some(f));
        }
        let mut names: Vec<&str> = PointFn::all().map(|f| f.name()).collect();
        let n = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), n, "two rows share a name");
    }

    #[test]
    fn exact_points_lie_in_the_domain_and_the_range() {
        for &f in UnaryFn::ALL {
            let r = f.row();
            if let Some((x, y)) = r.exact {
                let d = r.domain;
                assert!(
                    x >= d.lo && x <= d.hi,
                    "{f}: exact point outside the domain"
                );
                assert_eq!((r.cpu_f64)(x), y, "{f}({x}) is not {y}");
                assert_eq!((r.cpu_f32)(x as f32), y as f32, "{f}f({x}) is not {y}");
            }
        }
    }

    #[test]
    fn runtime_source_has_one_entry_per_function() {
        let fns = [
            PointFn::Binary(BinaryFn::Atan2),
            PointFn::Unary(UnaryFn::Erfc),
            PointFn::Unary(UnaryFn::Erfc),
        ];
        let s = cuda_runtime_source(Precision::F32, &fns);
        assert!(s.contains("float ivjit_erfc_f32(float x) { return erfcf(x); }"));
        assert!(s.contains("float ivjit_atan2_f32(float a, float b) { return atan2f(a, b); }"));
        assert_eq!(s.matches("__device__").count(), 2);
    }
}
