//! The functions an expression can call, with their arity and semantics (`ivjit functions`).

/// One callable function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FunctionInfo {
    pub name: &'static str,
    pub arity: usize,
    /// IEEE 1788 set-based semantics in one line.
    pub semantics: &'static str,
    /// Where it is defined (the points where it takes real values).
    pub domain: &'static str,
    /// Accuracy of the result bounds.
    pub accuracy: &'static str,
}

const EXACT: &str = "tightest (correctly rounded bounds), CPU and GPU";

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
];

/// Looks a function up by name.
pub fn lookup(name: &str) -> Option<&'static FunctionInfo> {
    FUNCTIONS.iter().find(|f| f.name == name)
}

/// Named constants, as tight enclosures.
pub const CONSTANTS: &[&str] = &["pi", "e"];

/// The known function name closest to `name` (edit distance at most 2), for "did you mean".
pub fn suggest(name: &str) -> Option<&'static str> {
    FUNCTIONS
        .iter()
        .map(|f| (edit_distance(name, f.name), f.name))
        .filter(|&(d, _)| d <= 2)
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
