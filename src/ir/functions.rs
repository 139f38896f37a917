//! The functions an expression can call, with their arity and semantics (`ivjit functions`).

use crate::point::{BinaryFn, DerivedFn, UnaryFn};
use std::borrow::Cow;
use std::sync::LazyLock;

/// One callable function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionInfo {
    /// The name expressions call it by.
    pub name: &'static str,
    /// The number of arguments.
    pub arity: usize,
    /// IEEE 1788 set-based semantics in one line.
    pub semantics: &'static str,
    /// Where it is defined (the points where it takes real values).
    pub domain: Cow<'static, str>,
    /// Accuracy of the result bounds.
    pub accuracy: &'static str,
    /// The derivative in each argument, in words or ivjit's syntax (for the table's functions,
    /// the formula the gradient builds: [`crate::point::UnaryRow::derivative`]).
    pub derivative: Cow<'static, str>,
}

const EXACT: &str = "tightest (correctly rounded bounds), CPU and GPU";
const ELEMENTARY: &str =
    "CPU: correctly rounded (CORE-MATH) point values one ulp outward, <= 1 ulp per bound; \
     GPU: CUDA math library padded by its documented max ulp error + 1";

/// The functions that are not rows of the point-function table, listed before its rows.
const CORE: &[FunctionInfo] = &[
    FunctionInfo {
        name: "neg",
        arity: 1,
        semantics: "-x",
        domain: Cow::Borrowed("all reals"),
        accuracy: "exact",
        derivative: Cow::Borrowed("-1"),
    },
    FunctionInfo {
        name: "sqr",
        arity: 1,
        semantics: "x^2, never negative: sqr([-1,2]) = [0,4]",
        domain: Cow::Borrowed("all reals"),
        accuracy: EXACT,
        derivative: Cow::Borrowed("2 x"),
    },
    FunctionInfo {
        name: "sqrt",
        arity: 1,
        semantics: "square root; the negative part of x is ignored: sqrt([-4,4]) = [0,2], sqrt([-2,-1]) = [empty]",
        domain: Cow::Borrowed("x >= 0"),
        accuracy: EXACT,
        derivative: Cow::Borrowed("1 / (2 sqrt(x)); unbounded at 0"),
    },
    FunctionInfo {
        name: "pown",
        arity: 2,
        semantics: "x^n for an integer constant n; pown(x, -n) = 1/x^n (pole at 0)",
        domain: Cow::Borrowed("all reals (n >= 0); x != 0 (n < 0)"),
        accuracy: "n = -1, 0, 1, 2: tightest; otherwise within 1 ulp (a double-word power rounded once) for |n| <= 2^40, CPU and GPU; beyond, rigorous bounds of exp(n log x) (the point functions' accuracy times |n log x|)",
        derivative: Cow::Borrowed("n pown(x, n - 1)"),
    },
    FunctionInfo {
        name: "abs",
        arity: 1,
        semantics: "|x|",
        domain: Cow::Borrowed("all reals"),
        accuracy: "exact",
        derivative: Cow::Borrowed("sign(x) (generalized gradient: [-1, 1] where x holds 0)"),
    },
    FunctionInfo {
        name: "min",
        arity: 2,
        semantics: "pointwise minimum",
        domain: Cow::Borrowed("all reals"),
        accuracy: "exact",
        derivative: Cow::Borrowed("1 in x where x < y, in y where y < x; between them (a convex combination) where they may cross"),
    },
    FunctionInfo {
        name: "max",
        arity: 2,
        semantics: "pointwise maximum",
        domain: Cow::Borrowed("all reals"),
        accuracy: "exact",
        derivative: Cow::Borrowed("1 in x where x > y, in y where y > x; between them (a convex combination) where they may cross"),
    },
    FunctionInfo {
        name: "fma",
        arity: 3,
        semantics: "a*b + c with one rounding per bound",
        domain: Cow::Borrowed("all reals"),
        accuracy: EXACT,
        derivative: Cow::Borrowed("d/dx y; d/dy x; d/dz 1"),
    },
    FunctionInfo {
        name: "recip",
        arity: 1,
        semantics: "1/x; recip([0,2]) = [0.5, inf], recip([-1,1]) = [entire], recip([0,0]) = [empty]",
        domain: Cow::Borrowed("x != 0"),
        accuracy: EXACT,
        derivative: Cow::Borrowed("-1 / x^2"),
    },
    FunctionInfo {
        name: "hull",
        arity: 2,
        semantics: "smallest interval containing both (a set operation, not a point function)",
        domain: Cow::Borrowed("intervals"),
        accuracy: "exact",
        derivative: Cow::Borrowed("not a pointwise function: undefined (the continuity flag is [0, 1])"),
    },
    FunctionInfo {
        name: "intersect",
        arity: 2,
        semantics: "intersection of the two sets (empty when they are disjoint)",
        domain: Cow::Borrowed("intervals"),
        accuracy: "exact",
        derivative: Cow::Borrowed("not a pointwise function: undefined (the continuity flag is [0, 1])"),
    },
];

/// The functions listed after the point-function table's rows.
const OTHERS: &[FunctionInfo] = &[
    FunctionInfo {
        name: "rootn",
        arity: 2,
        semantics: "real n-th root for an integer constant n; odd n take negative x",
        domain: Cow::Borrowed("x >= 0 (even n); all reals (odd n); n != 0"),
        accuracy: "within 1 ulp for |n| <= 2^20: an estimate refined by one Newton step and verified with double-word powers; beyond, exp(log(x) / n) with directed bounds, within a few ulps",
        derivative: Cow::Borrowed("rootn(x, n) / (n x); unbounded at 0"),
    },
    FunctionInfo {
        name: "floor",
        arity: 1,
        semantics: "largest integer <= x",
        domain: Cow::Borrowed("all reals"),
        accuracy: EXACT,
        derivative: Cow::Borrowed("0 between jumps; undefined where a jump may lie in the box (the continuity flag)"),
    },
    FunctionInfo {
        name: "ceil",
        arity: 1,
        semantics: "smallest integer >= x",
        domain: Cow::Borrowed("all reals"),
        accuracy: EXACT,
        derivative: Cow::Borrowed("0 between jumps; undefined where a jump may lie in the box (the continuity flag)"),
    },
    FunctionInfo {
        name: "trunc",
        arity: 1,
        semantics: "integer part, toward zero",
        domain: Cow::Borrowed("all reals"),
        accuracy: EXACT,
        derivative: Cow::Borrowed("0 between jumps; undefined where a jump may lie in the box (the continuity flag)"),
    },
    FunctionInfo {
        name: "round",
        arity: 1,
        semantics: "nearest integer, ties away from zero",
        domain: Cow::Borrowed("all reals"),
        accuracy: EXACT,
        derivative: Cow::Borrowed("0 between jumps; undefined where a jump may lie in the box (the continuity flag)"),
    },
    FunctionInfo {
        name: "rint",
        arity: 1,
        semantics: "nearest integer, ties to even",
        domain: Cow::Borrowed("all reals"),
        accuracy: EXACT,
        derivative: Cow::Borrowed("0 between jumps; undefined where a jump may lie in the box (the continuity flag)"),
    },
    FunctionInfo {
        name: "sign",
        arity: 1,
        semantics: "-1, 0 or 1",
        domain: Cow::Borrowed("all reals"),
        accuracy: EXACT,
        derivative: Cow::Borrowed("0 between jumps; undefined where a jump may lie in the box (the continuity flag)"),
    },
    FunctionInfo {
        name: "inf",
        arity: 1,
        semantics: "IEEE 1788 inf: the lower bound of x's enclosure, as [v, v] (-inf as [-inf, -max])",
        domain: Cow::Borrowed(ENCLOSURE_DOMAIN),
        accuracy: "exact",
        derivative: Cow::Borrowed(ENCLOSURE_DERIVATIVE),
    },
    FunctionInfo {
        name: "sup",
        arity: 1,
        semantics: "IEEE 1788 sup: the upper bound of x's enclosure, as [v, v] (inf as [max, inf])",
        domain: Cow::Borrowed(ENCLOSURE_DOMAIN),
        accuracy: "exact",
        derivative: Cow::Borrowed(ENCLOSURE_DERIVATIVE),
    },
    FunctionInfo {
        name: "mid",
        arity: 1,
        semantics: "IEEE 1788 mid: the midpoint of x's enclosure, rounded to nearest; 0 for [entire], -max / max toward an infinite end",
        domain: Cow::Borrowed(ENCLOSURE_DOMAIN),
        accuracy: "rounded to nearest, as IEEE 1788 says",
        derivative: Cow::Borrowed(ENCLOSURE_DERIVATIVE),
    },
    FunctionInfo {
        name: "rad",
        arity: 1,
        semantics: "IEEE 1788 rad: the smallest float r with [mid - r, mid + r] holding x's enclosure (inf as [max, inf])",
        domain: Cow::Borrowed(ENCLOSURE_DOMAIN),
        accuracy: "rounded up, as IEEE 1788 says",
        derivative: Cow::Borrowed(ENCLOSURE_DERIVATIVE),
    },
    FunctionInfo {
        name: "wid",
        arity: 1,
        semantics: "IEEE 1788 wid: the width of x's enclosure, rounded up (inf as [max, inf])",
        domain: Cow::Borrowed(ENCLOSURE_DOMAIN),
        accuracy: "rounded up, as IEEE 1788 says",
        derivative: Cow::Borrowed(ENCLOSURE_DERIVATIVE),
    },
    FunctionInfo {
        name: "mag",
        arity: 1,
        semantics: "IEEE 1788 mag: the largest |v| over x's enclosure (inf as [max, inf])",
        domain: Cow::Borrowed(ENCLOSURE_DOMAIN),
        accuracy: "exact",
        derivative: Cow::Borrowed(ENCLOSURE_DERIVATIVE),
    },
    FunctionInfo {
        name: "mig",
        arity: 1,
        semantics: "IEEE 1788 mig: the smallest |v| over x's enclosure (0 where it holds 0)",
        domain: Cow::Borrowed(ENCLOSURE_DOMAIN),
        accuracy: "exact",
        derivative: Cow::Borrowed(ENCLOSURE_DERIVATIVE),
    },
    FunctionInfo {
        name: "cancelMinus",
        arity: 2,
        semantics: "IEEE 1788 cancelMinus: the interval z with y + z = x, for bounded x at least as wide as y ([entire] otherwise; [empty] for empty x and y not unbounded)",
        domain: Cow::Borrowed(ENCLOSURE_DOMAIN),
        accuracy: "tightest (outward-rounded bounds)",
        derivative: Cow::Borrowed(ENCLOSURE_DERIVATIVE),
    },
    FunctionInfo {
        name: "cancelPlus",
        arity: 2,
        semantics: "IEEE 1788 cancelPlus: cancelMinus(x, -y)",
        domain: Cow::Borrowed(ENCLOSURE_DOMAIN),
        accuracy: "tightest (outward-rounded bounds)",
        derivative: Cow::Borrowed(ENCLOSURE_DERIVATIVE),
    },
    FunctionInfo {
        name: "sqrRev",
        arity: 2,
        semantics: "IEEE 1788 sqrRev(c, x): the hull of the t in x with t^2 in c (sqrRev(c, [entire]) for the one-argument form)",
        domain: Cow::Borrowed(REVERSE_DOMAIN),
        accuracy: "tightest (correctly rounded square roots)",
        derivative: Cow::Borrowed(REVERSE_DERIVATIVE),
    },
    FunctionInfo {
        name: "absRev",
        arity: 2,
        semantics: "IEEE 1788 absRev(c, x): the hull of the t in x with |t| in c",
        domain: Cow::Borrowed(REVERSE_DOMAIN),
        accuracy: "tightest (exact)",
        derivative: Cow::Borrowed(REVERSE_DERIVATIVE),
    },
    FunctionInfo {
        name: "coshRev",
        arity: 2,
        semantics: "IEEE 1788 coshRev(c, x): the hull of the t in x with cosh(t) in c",
        domain: Cow::Borrowed(REVERSE_DOMAIN),
        accuracy: "acosh's bounds (its row's error, padded)",
        derivative: Cow::Borrowed(REVERSE_DERIVATIVE),
    },
    FunctionInfo {
        name: "sinRev",
        arity: 2,
        semantics: "IEEE 1788 sinRev(c, x): the hull of the t in x with sin(t) in c",
        domain: Cow::Borrowed(REVERSE_DOMAIN),
        accuracy: "asin's bounds plus k*pi (padded); x kept where an end of x is beyond 2^50 (f32: 2^22) in magnitude",
        derivative: Cow::Borrowed(REVERSE_DERIVATIVE),
    },
    FunctionInfo {
        name: "cosRev",
        arity: 2,
        semantics: "IEEE 1788 cosRev(c, x): the hull of the t in x with cos(t) in c",
        domain: Cow::Borrowed(REVERSE_DOMAIN),
        accuracy: "acos's bounds plus k*pi (padded); x kept where an end of x is beyond 2^50 (f32: 2^22) in magnitude",
        derivative: Cow::Borrowed(REVERSE_DERIVATIVE),
    },
    FunctionInfo {
        name: "tanRev",
        arity: 2,
        semantics: "IEEE 1788 tanRev(c, x): the hull of the t in x with tan(t) in c",
        domain: Cow::Borrowed(REVERSE_DOMAIN),
        accuracy: "atan's bounds plus k*pi (padded); x kept where an end of x is beyond 2^50 (f32: 2^22) in magnitude",
        derivative: Cow::Borrowed(REVERSE_DERIVATIVE),
    },
    FunctionInfo {
        name: "pownRev",
        arity: 3,
        semantics: "IEEE 1788 pownRev(c, x, n): the hull of the t in x with t^n in c, n an integer constant (t = 0 excluded for n < 0)",
        domain: Cow::Borrowed(REVERSE_DOMAIN),
        accuracy: "tightest for n = 0, 1, 2; else the bounds of rootn(c, n) (padded; one rounding also for n < 0)",
        derivative: Cow::Borrowed(REVERSE_DERIVATIVE),
    },
    FunctionInfo {
        name: "mulRev",
        arity: 3,
        semantics: "IEEE 1788 mulRev(b, c, x): the hull of the t in x with t*b' in c for some b' in b (all of x where b and c hold 0; the pieces of mulRevToPair, each met with x)",
        domain: Cow::Borrowed(REVERSE_DOMAIN),
        accuracy: "tightest (correctly rounded quotients)",
        derivative: Cow::Borrowed(REVERSE_DERIVATIVE),
    },
    FunctionInfo {
        name: "powRev1",
        arity: 3,
        semantics: "IEEE 1788 powRev1(b, c, x): the hull of the t in x with t^b' in c for some b' in b (pow's domain: t > 0, or t = 0 with b' > 0)",
        domain: Cow::Borrowed(REVERSE_DOMAIN),
        accuracy: "pow's bounds over c and 1/b (outward): within pow's rounding where 1/b is exact",
        derivative: Cow::Borrowed(REVERSE_DERIVATIVE),
    },
    FunctionInfo {
        name: "powRev2",
        arity: 3,
        semantics: "IEEE 1788 powRev2(a, c, x): the hull of the t in x with a'^t in c for some a' in a (a' > 0, or a' = 0 with t > 0)",
        domain: Cow::Borrowed(REVERSE_DOMAIN),
        accuracy: "mulRev(log(a), log(c), x): quotients of the logarithms' outward bounds (a few ulps)",
        derivative: Cow::Borrowed(REVERSE_DERIVATIVE),
    },
    FunctionInfo {
        name: "atan2Rev1",
        arity: 3,
        semantics: "IEEE 1788 atan2Rev1(b, c, x): the hull of the y in x with atan2(y, x') in c for some x' in b ((y, x') != (0, 0))",
        domain: Cow::Borrowed(REVERSE_DOMAIN),
        accuracy: "products of b's parts with tan at c's ends (outward; a few ulps)",
        derivative: Cow::Borrowed(REVERSE_DERIVATIVE),
    },
    FunctionInfo {
        name: "atan2Rev2",
        arity: 3,
        semantics: "IEEE 1788 atan2Rev2(a, c, x): the hull of the x' in x with atan2(y, x') in c for some y in a ((y, x') != (0, 0))",
        domain: Cow::Borrowed(REVERSE_DOMAIN),
        accuracy: "products of a's parts with 1/tan at c's ends (outward; a few ulps)",
        derivative: Cow::Borrowed(REVERSE_DERIVATIVE),
    },
    FunctionInfo {
        name: "mulRevToPair1",
        arity: 2,
        semantics: "IEEE 1788 mulRevToPair(b, c)'s first interval: the set of the t with t*b' in c for some b' in b is c/b (0 not in b), entire (0 in b and in c), empty, or up to two unbounded pieces; the first of them (the only one where there is one)",
        domain: Cow::Borrowed(REVERSE_DOMAIN),
        accuracy: "tightest (correctly rounded quotients)",
        derivative: Cow::Borrowed(REVERSE_DERIVATIVE),
    },
    FunctionInfo {
        name: "mulRevToPair2",
        arity: 2,
        semantics: "IEEE 1788 mulRevToPair(b, c)'s second interval: the upper of two pieces, else empty (write `mulRevToPair1(b, c), mulRevToPair2(b, c)` for the pair)",
        domain: Cow::Borrowed(REVERSE_DOMAIN),
        accuracy: "tightest (correctly rounded quotients)",
        derivative: Cow::Borrowed(REVERSE_DERIVATIVE),
    },
];

/// The domain of the reverse operations (`src/lower/reverse.rs`).
const REVERSE_DOMAIN: &str =
    "intervals: c the allowed values of f, x the points to keep (write [entire] for all)";
/// Their derivative: a set of points, not a function of the arguments.
const REVERSE_DERIVATIVE: &str =
    "not a pointwise function: undefined ([entire]; the continuity flag is [0, 1])";

/// The domain of the functions of an argument's enclosure (`src/lower/enclosure.rs`).
const ENCLOSURE_DOMAIN: &str =
    "intervals: computed from the enclosure ivjit holds for the argument, not from its points";
/// Their derivative: none in the pointwise sense.
const ENCLOSURE_DERIVATIVE: &str =
    "not a pointwise function: undefined ([entire]; the continuity flag is [0, 1])";

const DERIVED: &str = "expands to rigorous interval operations (reciprocals of elementary \
     functions or of the argument): a few ulps more than the elementary function inside";

/// Every function, in the order `ivjit functions` lists them: the core operations, then one row
/// per elementary function of the point-function table ([`crate::point`]: unary, binary, then the
/// derived functions that expand to other operations), then roots and roundings.
pub static FUNCTIONS: LazyLock<Vec<FunctionInfo>> = LazyLock::new(|| {
    let unary = UnaryFn::ALL.iter().map(|&f| FunctionInfo {
        name: f.name(),
        arity: 1,
        semantics: f.row().semantics,
        domain: Cow::Owned(f.domain_text()),
        accuracy: ELEMENTARY,
        derivative: Cow::Borrowed(f.row().derivative),
    });
    let binary = BinaryFn::ALL.iter().map(|&f| FunctionInfo {
        name: f.name(),
        arity: 2,
        semantics: f.row().semantics,
        domain: Cow::Borrowed(f.row().domain_text),
        accuracy: ELEMENTARY,
        derivative: {
            let [dx, dy] = f.row().partials;
            Cow::Owned(format!("d/dx {dx}; d/dy {dy}"))
        },
    });
    let derived = DerivedFn::ALL.iter().map(|&f| FunctionInfo {
        name: f.name(),
        arity: 1,
        semantics: f.row().semantics,
        domain: Cow::Borrowed(f.row().domain_text),
        accuracy: DERIVED,
        derivative: Cow::Owned(format!("{} (through its expansion)", f.row().derivative)),
    });
    CORE.iter()
        .cloned()
        .chain(unary)
        .chain(binary)
        .chain(derived)
        .chain(OTHERS.iter().cloned())
        .collect()
});

/// Looks a function up by name (exact, case-sensitive); [`suggest`] finds near misses.
pub(crate) fn lookup(name: &str) -> Option<&'static FunctionInfo> {
    FUNCTIONS.iter().find(|f| f.name == name)
}

/// Named constants, as tight enclosures.
pub(crate) const CONSTANTS: &[&str] = &["pi", "e"];

/// The known function name closest to `name` (edit distance at most 2, and at most half the
/// name's length, so that `x` does not suggest `exp`), for "did you mean".
pub(crate) fn suggest(name: &str) -> Option<&'static str> {
    let limit = 2.min(name.chars().count() / 2);
    FUNCTIONS
        .iter()
        .map(|f| (edit_distance(name, f.name), f.name))
        .filter(|&(d, _)| d <= limit)
        .min()
        .map(|(_, n)| n)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut cur = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::lookup;

    #[test]
    fn lookup_finds_exact_names_only() {
        let atan2 = lookup("atan2").unwrap();
        assert_eq!(atan2.arity, 2);
        assert_eq!(lookup("sqrt").unwrap().domain, "x >= 0");
        assert!(lookup("sqrtt").is_none());
    }
}
