//! The functions an expression can call, with their arity and semantics (`ivjit functions`).

/// One callable function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FunctionInfo {
    /// The name expressions call it by.
    pub name: &'static str,
    /// The number of arguments.
    pub arity: usize,
    /// IEEE 1788 set-based semantics in one line.
    pub semantics: &'static str,
    /// Where it is defined (the points where it takes real values).
    pub domain: &'static str,
    /// Accuracy of the result bounds.
    pub accuracy: &'static str,
}

const EXACT: &str = "tightest (correctly rounded bounds), CPU and GPU";
const ELEMENTARY: &str =
    "CPU: correctly rounded (CORE-MATH) point values one ulp outward, <= 1 ulp per bound; \
     GPU: CUDA math library padded by its documented max ulp error + 1";

/// Every function, in the order `ivjit functions` lists them.
pub const FUNCTIONS: &[FunctionInfo] = &[
    FunctionInfo {
        name: "neg",
        arity: 1,
        semantics: "-x",
        domain: "all reals",
        accuracy: "exact",
    },
    FunctionInfo {
        name: "sqr",
        arity: 1,
        semantics: "x^2, never negative: sqr([-1,2]) = [0,4]",
        domain: "all reals",
        accuracy: EXACT,
    },
    FunctionInfo {
        name: "sqrt",
        arity: 1,
        semantics: "square root; the negative part of x is ignored: sqrt([-4,4]) = [0,2], sqrt([-2,-1]) = [empty]",
        domain: "x >= 0",
        accuracy: EXACT,
    },
    FunctionInfo {
        name: "pown",
        arity: 2,
        semantics: "x^n for an integer constant n; pown(x, -n) = 1/pown(x, n)",
        domain: "all reals (n >= 0); x != 0 (n < 0)",
        accuracy: "n = -1, 0, 1, 2: tightest; otherwise a few ulps (repeated directed products; 1/x^n for n < 0)",
    },
    FunctionInfo {
        name: "abs",
        arity: 1,
        semantics: "|x|",
        domain: "all reals",
        accuracy: "exact",
    },
    FunctionInfo {
        name: "min",
        arity: 2,
        semantics: "pointwise minimum",
        domain: "all reals",
        accuracy: "exact",
    },
    FunctionInfo {
        name: "max",
        arity: 2,
        semantics: "pointwise maximum",
        domain: "all reals",
        accuracy: "exact",
    },
    FunctionInfo {
        name: "fma",
        arity: 3,
        semantics: "a*b + c with one rounding per bound",
        domain: "all reals",
        accuracy: EXACT,
    },
    FunctionInfo {
        name: "recip",
        arity: 1,
        semantics: "1/x; recip([0,2]) = [0.5, inf], recip([-1,1]) = [entire], recip([0,0]) = [empty]",
        domain: "x != 0",
        accuracy: EXACT,
    },
    FunctionInfo {
        name: "hull",
        arity: 2,
        semantics: "smallest interval containing both (a set operation, not a point function)",
        domain: "intervals",
        accuracy: "exact",
    },
    FunctionInfo {
        name: "intersect",
        arity: 2,
        semantics: "intersection of the two sets (empty when they are disjoint)",
        domain: "intervals",
        accuracy: "exact",
    },
    FunctionInfo {
        name: "exp",
        arity: 1,
        semantics: "e^x",
        domain: "all reals",
        accuracy: ELEMENTARY,
    },
    FunctionInfo {
        name: "exp2",
        arity: 1,
        semantics: "2^x",
        domain: "all reals",
        accuracy: ELEMENTARY,
    },
    FunctionInfo {
        name: "exp10",
        arity: 1,
        semantics: "10^x",
        domain: "all reals",
        accuracy: ELEMENTARY,
    },
    FunctionInfo {
        name: "expm1",
        arity: 1,
        semantics: "e^x - 1, accurate near 0",
        domain: "all reals",
        accuracy: ELEMENTARY,
    },
    FunctionInfo {
        name: "log",
        arity: 1,
        semantics: "natural logarithm; log([-1, 1]) = [-inf, 0]",
        domain: "x > 0",
        accuracy: ELEMENTARY,
    },
    FunctionInfo {
        name: "log2",
        arity: 1,
        semantics: "base-2 logarithm",
        domain: "x > 0",
        accuracy: ELEMENTARY,
    },
    FunctionInfo {
        name: "log10",
        arity: 1,
        semantics: "base-10 logarithm",
        domain: "x > 0",
        accuracy: ELEMENTARY,
    },
    FunctionInfo {
        name: "log1p",
        arity: 1,
        semantics: "log(1 + x), accurate near 0",
        domain: "x > -1",
        accuracy: ELEMENTARY,
    },
    FunctionInfo {
        name: "sin",
        arity: 1,
        semantics: "sine; extrema found rigorously (no floating-point pi)",
        domain: "all reals",
        accuracy: ELEMENTARY,
    },
    FunctionInfo {
        name: "cos",
        arity: 1,
        semantics: "cosine",
        domain: "all reals",
        accuracy: ELEMENTARY,
    },
    FunctionInfo {
        name: "tan",
        arity: 1,
        semantics: "tangent; [entire] when the interval may hold an asymptote",
        domain: "x != pi/2 + k pi",
        accuracy: ELEMENTARY,
    },
    FunctionInfo {
        name: "asin",
        arity: 1,
        semantics: "arcsine, values in [-pi/2, pi/2]",
        domain: "-1 <= x <= 1",
        accuracy: ELEMENTARY,
    },
    FunctionInfo {
        name: "acos",
        arity: 1,
        semantics: "arccosine, values in [0, pi]",
        domain: "-1 <= x <= 1",
        accuracy: ELEMENTARY,
    },
    FunctionInfo {
        name: "atan",
        arity: 1,
        semantics: "arctangent, values in (-pi/2, pi/2)",
        domain: "all reals",
        accuracy: ELEMENTARY,
    },
    FunctionInfo {
        name: "atan2",
        arity: 2,
        semantics: "atan2(y, x): angle of the point (x, y), values in [-pi, pi]",
        domain: "(x, y) != (0, 0)",
        accuracy: ELEMENTARY,
    },
    FunctionInfo {
        name: "sinh",
        arity: 1,
        semantics: "hyperbolic sine",
        domain: "all reals",
        accuracy: ELEMENTARY,
    },
    FunctionInfo {
        name: "cosh",
        arity: 1,
        semantics: "hyperbolic cosine, >= 1",
        domain: "all reals",
        accuracy: ELEMENTARY,
    },
    FunctionInfo {
        name: "tanh",
        arity: 1,
        semantics: "hyperbolic tangent, in (-1, 1)",
        domain: "all reals",
        accuracy: ELEMENTARY,
    },
    FunctionInfo {
        name: "asinh",
        arity: 1,
        semantics: "inverse hyperbolic sine",
        domain: "all reals",
        accuracy: ELEMENTARY,
    },
    FunctionInfo {
        name: "acosh",
        arity: 1,
        semantics: "inverse hyperbolic cosine",
        domain: "x >= 1",
        accuracy: ELEMENTARY,
    },
    FunctionInfo {
        name: "atanh",
        arity: 1,
        semantics: "inverse hyperbolic tangent",
        domain: "-1 < x < 1",
        accuracy: ELEMENTARY,
    },
    FunctionInfo {
        name: "pow",
        arity: 2,
        semantics: "x^y for an interval exponent (x^n with an integer constant n is pown)",
        domain: "x > 0, or x = 0 with y > 0",
        accuracy: ELEMENTARY,
    },
    FunctionInfo {
        name: "rootn",
        arity: 2,
        semantics: "real n-th root for an integer constant n; odd n take negative x",
        domain: "x >= 0 (even n); all reals (odd n); n != 0",
        accuracy: "verified bounds (estimate checked by directed powers), a few ulps",
    },
    FunctionInfo {
        name: "cbrt",
        arity: 1,
        semantics: "cube root",
        domain: "all reals",
        accuracy: ELEMENTARY,
    },
    FunctionInfo {
        name: "hypot",
        arity: 2,
        semantics: "sqrt(x^2 + y^2) without overflow",
        domain: "all reals",
        accuracy: ELEMENTARY,
    },
    FunctionInfo {
        name: "sinpi",
        arity: 1,
        semantics: "sin(pi x), exact period 2",
        domain: "all reals",
        accuracy: ELEMENTARY,
    },
    FunctionInfo {
        name: "cospi",
        arity: 1,
        semantics: "cos(pi x)",
        domain: "all reals",
        accuracy: ELEMENTARY,
    },
    FunctionInfo {
        name: "floor",
        arity: 1,
        semantics: "largest integer <= x",
        domain: "all reals",
        accuracy: EXACT,
    },
    FunctionInfo {
        name: "ceil",
        arity: 1,
        semantics: "smallest integer >= x",
        domain: "all reals",
        accuracy: EXACT,
    },
    FunctionInfo {
        name: "trunc",
        arity: 1,
        semantics: "integer part, toward zero",
        domain: "all reals",
        accuracy: EXACT,
    },
    FunctionInfo {
        name: "round",
        arity: 1,
        semantics: "nearest integer, ties away from zero",
        domain: "all reals",
        accuracy: EXACT,
    },
    FunctionInfo {
        name: "rint",
        arity: 1,
        semantics: "nearest integer, ties to even",
        domain: "all reals",
        accuracy: EXACT,
    },
    FunctionInfo {
        name: "sign",
        arity: 1,
        semantics: "-1, 0 or 1",
        domain: "all reals",
        accuracy: EXACT,
    },
];

/// Looks a function up by name (exact, case-sensitive); [`suggest`] finds near misses.
///
/// ```
/// use ivjit::ir::functions::lookup;
/// let atan2 = lookup("atan2").unwrap();
/// assert_eq!(atan2.arity, 2);
/// assert_eq!(lookup("sqrt").unwrap().domain, "x >= 0");
/// assert!(lookup("sqrtt").is_none());
/// ```
pub fn lookup(name: &str) -> Option<&'static FunctionInfo> {
    FUNCTIONS.iter().find(|f| f.name == name)
}

/// Named constants, as tight enclosures.
pub const CONSTANTS: &[&str] = &["pi", "e"];

/// The known function name closest to `name` (edit distance at most 2, and at most half the
/// name's length, so that `x` does not suggest `exp`), for "did you mean".
pub fn suggest(name: &str) -> Option<&'static str> {
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
