//! Systems of constraints by branch and prune (`ivjit::search::system`), checked exactly: the
//! zeros are known integers (or roots of integer polynomials, located by exact sign changes in
//! rationals), and each must lie in exactly one solution box (proven unique) or, where the
//! proof cannot apply, in an undecided box — never lost. Also on the interval classes (root
//! boxes with unbounded, huge, subnormal and empty sides), with inequalities, and for systems
//! without equalities (inner boxes, checked exactly). Ten of IBEX's benchmark systems against
//! the solution boxes of IBEX's own certified solver.

use crate::common::classes as cl;
use crate::common::oracle::{q_of, Fmt, Q};
use crate::common::rng::splitmix64;
use ivjit::search::pave::Constraints;
use ivjit::search::system::{solve_system, SystemOptions, SystemSolution};
use ivjit::{BackendChoice, Expression, Interval};
use num_traits::{One, Signed, Zero};

fn iv(lo: f64, hi: f64) -> Interval {
    Interval::new(lo, hi).unwrap()
}

fn solve(c: &str, root: &[Interval]) -> SystemSolution {
    solve_with(c, root, SystemOptions::default())
}

fn solve_with(c: &str, root: &[Interval], options: SystemOptions) -> SystemSolution {
    let constraints = Constraints::parse(c).unwrap();
    solve_system(&constraints, root, options, BackendChoice::Cpu).unwrap()
}

fn holds(b: &[Interval], x: &[f64]) -> bool {
    b.iter().zip(x).all(|(s, &v)| s.lo <= v && v <= s.hi)
}

/// How many solution boxes and undecided boxes hold the point.
fn count(s: &SystemSolution, x: &[f64]) -> (usize, usize) {
    (
        s.solutions.iter().filter(|b| holds(&b.sides, x)).count(),
        s.undecided.iter().filter(|b| holds(b, x)).count(),
    )
}

fn width(b: &[Interval]) -> f64 {
    b.iter().map(|s| s.hi - s.lo).fold(0.0, f64::max)
}

fn int(k: i64) -> Q {
    Q::from_integer(k.into())
}

#[test]
fn four_integer_zeros_are_each_proven_once() {
    // x^2 + y^2 = 5, x y = 2: (1, 2), (2, 1), (-1, -2), (-2, -1).
    let s = solve("x^2 + y^2 == 5, x*y == 2", &[iv(-3.0, 3.0), iv(-3.0, 3.0)]);
    assert!(s.square && s.complete(), "{s:?}");
    assert_eq!(s.solutions.len(), 4, "{s:?}");
    assert!(s.undecided.is_empty(), "{s:?}");
    for z in [[1.0, 2.0], [2.0, 1.0], [-1.0, -2.0], [-2.0, -1.0]] {
        assert_eq!(count(&s, &z), (1, 0), "{z:?} in {s:?}");
    }
    for sol in &s.solutions {
        // Narrowed far below eps, and inside the box of its proof.
        assert!(width(&sol.sides) < 1e-13, "{sol:?}");
        assert!(sol
            .sides
            .iter()
            .zip(&sol.proof)
            .all(|(a, p)| p.lo <= a.lo && a.hi <= p.hi));
    }
}

#[test]
fn irrational_zeros_are_enclosed_where_exact_signs_change() {
    // x^2 + y^2 = 1, y = x^2: x^4 + x^2 - 1 = 0 and y^2 + y - 1 = 0 (y = (sqrt 5 - 1)/2).
    let s = solve("x^2 + y^2 == 1, y == x^2", &[iv(-2.0, 2.0), iv(-2.0, 2.0)]);
    assert_eq!((s.solutions.len(), s.undecided.len()), (2, 0), "{s:?}");
    let quartic = |x: f64| {
        let x = q_of(x);
        &x * &x * &x * &x + &x * &x - Q::one()
    };
    let quadratic = |y: f64| {
        let y = q_of(y);
        &y * &y + &y - Q::one()
    };
    let mut signs = Vec::new();
    for sol in &s.solutions {
        let (x, y) = (sol.sides[0], sol.sides[1]);
        // One root of each polynomial in each side (a sign change, exactly): the quartic is
        // increasing in |x|, the quadratic increasing for y > 0.
        let (a, b) = (quartic(x.lo), quartic(x.hi));
        assert!(
            a.signum() != b.signum() || a.is_zero() || b.is_zero(),
            "{sol:?}"
        );
        assert!(
            quadratic(y.lo) <= Q::zero() && quadratic(y.hi) >= Q::zero(),
            "{sol:?}"
        );
        assert!(width(&sol.sides) < 1e-13, "{sol:?}");
        signs.push(x.lo.signum());
    }
    signs.sort_by(f64::total_cmp);
    assert_eq!(signs, [-1.0, 1.0]);
}

/// A uniform integer in [-k, k] (the tests' generator, `common::rng`).
fn small(state: &mut u64, k: i64) -> i64 {
    (splitmix64(state) % (2 * k as u64 + 1)) as i64 - k
}

#[test]
fn zeros_of_generated_systems_are_never_lost() {
    // f_i = sum_j a_ij (x_j - r_j) + c_i (x_k - r_k)(x_l - r_l): r is a zero, exactly, and a
    // regular one where det(a) != 0 (then it must be proven).
    let mut rng = 7u64;
    let mut proven = 0;
    for case in 0..40 {
        let n = 2 + case % 2;
        let r: Vec<i64> = (0..n).map(|_| small(&mut rng, 3)).collect();
        let names = ["x", "y", "z"];
        let d = |j: usize| format!("({} - ({}))", names[j], r[j]);
        let mut a = vec![vec![0i64; n]; n];
        let mut eqs = Vec::new();
        for (i, row) in a.iter_mut().enumerate() {
            let mut terms = Vec::new();
            for (j, e) in row.iter_mut().enumerate() {
                *e = small(&mut rng, 3);
                terms.push(format!("{}*{}", e, d(j)));
            }
            let (k, l) = ((i + 1) % n, (i + 2) % n);
            terms.push(format!("{}*{}*{}", small(&mut rng, 2), d(k), d(l)));
            eqs.push(format!("{} == 0", terms.join(" + ")));
        }
        let text = eqs.join(", ");
        let vars = Expression::parse(&Constraints::parse(&text).unwrap().source)
            .unwrap()
            .vars()
            .to_vec();
        if vars.len() != n {
            continue;
        }
        // The zero in the expression's variable order.
        let z: Vec<f64> = vars
            .iter()
            .map(|v| r[names.iter().position(|w| w == v).unwrap()] as f64)
            .collect();
        let s = solve_with(
            &text,
            &vec![iv(-4.5, 4.5); n],
            SystemOptions {
                eps: 1e-8,
                max_boxes: 200_000,
            },
        );
        let (sol, und) = count(&s, &z);
        assert!(sol + und >= 1, "{text}: the zero {z:?} is lost: {s:?}");
        assert!(sol <= 1, "{text}: the zero {z:?} in two solution boxes");
        let det = if n == 2 {
            a[0][0] * a[1][1] - a[0][1] * a[1][0]
        } else {
            a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1])
                - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0])
                + a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0])
        };
        if det != 0 && s.complete() {
            assert_eq!(sol, 1, "{text}: the regular zero {z:?} not proven: {s:?}");
            proven += 1;
        }
    }
    assert!(proven >= 20, "only {proven} regular zeros checked");
}

#[test]
fn inequalities_decide_which_zeros_are_solutions() {
    // Of the four zeros of x^2 + y^2 = 5, x y = 2, x >= 1 keeps (2, 1) (proven) and (1, 2)
    // (x = 1 on the inequality's edge: no box around it proves x >= 1, so it is undecided).
    let s = solve(
        "x^2 + y^2 == 5, x*y == 2, x >= 1",
        &[iv(-3.0, 3.0), iv(-3.0, 3.0)],
    );
    assert_eq!(count(&s, &[2.0, 1.0]), (1, 0), "{s:?}");
    let (sol, und) = count(&s, &[1.0, 2.0]);
    assert!(sol == 0 && und >= 1, "{s:?}");
    assert_eq!(s.solutions.len(), 1, "{s:?}");
    for z in [[-1.0, -2.0], [-2.0, -1.0]] {
        assert_eq!(count(&s, &z), (0, 0), "{z:?} in {s:?}");
    }
}

#[test]
fn zeros_are_found_on_the_interval_classes() {
    // x y = 1, x = y: (1, 1) and (-1, -1). x over every class (y the whole line, and the
    // other way round): each zero in the box stays in a solution or undecided box; none
    // appears outside the box.
    let classes = cl::classes(Fmt::F64, cl::stride());
    let entire = Interval::ENTIRE;
    let mut checked = 0;
    for c in &classes {
        let side = Interval { lo: c.lo, hi: c.hi };
        for swap in [false, true] {
            let root = if swap {
                vec![entire, side]
            } else {
                vec![side, entire]
            };
            let s = solve_with(
                "x*y == 1, x == y",
                &root,
                SystemOptions {
                    eps: 1e-8,
                    max_boxes: 20_000,
                },
            );
            let inside = |v: f64| !c.lo.is_nan() && c.lo <= v && v <= c.hi;
            for v in [1.0, -1.0] {
                let (sol, und) = count(&s, &[v, v]);
                if inside(v) {
                    assert!(
                        sol + und >= 1,
                        "{}: the zero ({v}, {v}) is lost: {s:?}",
                        c.label
                    );
                    // Inside the side's interior, the proof applies.
                    if c.lo < v && v < c.hi && s.complete() {
                        assert_eq!(sol, 1, "{}: ({v}, {v}) not proven: {s:?}", c.label);
                    }
                    checked += 1;
                } else {
                    assert_eq!(sol, 0, "{}: ({v}, {v}) is outside the box: {s:?}", c.label);
                }
            }
            for b in s.solutions.iter().map(|b| &b.sides).chain(&s.undecided) {
                let x = if swap { b[1] } else { b[0] };
                assert!(
                    !c.lo.is_nan() && c.lo <= x.lo && x.hi <= c.hi,
                    "{}: a box outside the root box: {b:?}",
                    c.label
                );
            }
        }
    }
    assert!(checked > 20, "{checked}");
}

#[test]
fn a_system_of_inequalities_gives_inner_boxes_inside_the_set() {
    // The disk: every corner of an inner box satisfies x^2 + y^2 <= 1 exactly (the disk is
    // convex); the boxes left undecided are at most eps wide.
    let s = solve_with(
        "x^2 + y^2 <= 1",
        &[iv(-2.0, 2.0), iv(-2.0, 2.0)],
        SystemOptions {
            eps: 1e-2,
            max_boxes: 1 << 20,
        },
    );
    assert!(!s.square && s.complete() && s.solutions.is_empty());
    assert!(s.inner.len() > 100, "{}", s.inner.len());
    for b in &s.inner {
        for x in [b[0].lo, b[0].hi] {
            for y in [b[1].lo, b[1].hi] {
                let (x, y) = (q_of(x), q_of(y));
                assert!(&x * &x + &y * &y <= int(1), "{b:?}");
            }
        }
    }
    for b in &s.undecided {
        assert!(width(b) <= 1e-2, "{b:?}");
    }
    // Area: the inner boxes cover most of pi, never more.
    let area: f64 = s
        .inner
        .iter()
        .map(|b| (b[0].hi - b[0].lo) * (b[1].hi - b[1].lo))
        .sum();
    assert!(area > 3.0 && area <= std::f64::consts::PI, "{area}");
}

/// ibexsolve's solution boxes (`solution n°k = ([lo, hi] ; ...)` lines, variables in the file's
/// declared order), each widened by a relative 1e-15 for the decimals it prints them with.
fn ibexsolve_boxes(text: &str) -> Vec<Vec<(f64, f64)>> {
    text.lines()
        .filter_map(|l| {
            l.split_once("= (")
                .map(|(_, b)| b.trim_end().trim_end_matches(')'))
        })
        .map(|b| {
            b.split(';')
                .map(|side| {
                    // `[lo, hi]`, or `<lo, hi>` for a box IBEX found degenerate.
                    let side = side
                        .trim()
                        .trim_start_matches(['[', '<'])
                        .trim_end_matches([']', '>']);
                    let (lo, hi) = side.split_once(',').unwrap();
                    let (lo, hi): (f64, f64) =
                        (lo.trim().parse().unwrap(), hi.trim().parse().unwrap());
                    let pad = 1e-15 * lo.abs().max(hi.abs()) + 1e-300;
                    (lo - pad, hi + pad)
                })
                .collect()
        })
        .collect()
}

#[test]
fn ibex_solver_benchmarks_agree_with_ibexsolve() {
    // Ten of IBEX's benchs/solver problems (tests/data/minibex/solver: polynomial and
    // trigonometric, 2 to 10 variables), read unchanged from their files, against the
    // solution boxes ibexsolve 2.9.1 (another certified solver: HC4, ACID, interval Newton,
    // LP relaxations) printed for them at eps 1e-8 (`ibexsolve -e 1e-8 -s`). Both hold every
    // zero, so each of IBEX's boxes must meet one of ivjit's solution or undecided boxes,
    // and each of ivjit's solutions one of IBEX's; on these problems IBEX gives each zero
    // one box, so the counts agree too. Every solution box is narrowed below 1e-12
    // (relative above 1), and no two overlap.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/minibex/solver");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "bch"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 10);
    let meet = |a: &[(f64, f64)], b: &[Interval]| {
        a.iter().zip(b).all(|(x, y)| x.0.max(y.lo) <= x.1.min(y.hi))
    };
    for path in files {
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let p = ivjit::search::minibex::parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let constraints = Constraints::parse(&p.constraints).unwrap();
        let vars = Expression::parse(&constraints.source)
            .unwrap()
            .vars()
            .to_vec();
        let root: Vec<Interval> = vars
            .iter()
            .map(|v| p.vars.iter().find(|(n, _)| n == v).unwrap().1)
            .collect();
        let s = solve_system(
            &constraints,
            &root,
            SystemOptions::default(),
            BackendChoice::Cpu,
        )
        .unwrap();
        assert!(s.complete(), "{name}");
        // IBEX's boxes in ivjit's variable order.
        let declared: Vec<&str> = p.vars.iter().map(|(n, _)| n.as_str()).collect();
        let order: Vec<usize> = vars
            .iter()
            .map(|v| declared.iter().position(|d| d == v).unwrap())
            .collect();
        let ibex: Vec<Vec<(f64, f64)>> =
            ibexsolve_boxes(&std::fs::read_to_string(path.with_extension("ibexsolve")).unwrap())
                .into_iter()
                .map(|b| order.iter().map(|&k| b[k]).collect())
                .collect();
        assert!(!ibex.is_empty(), "{name}");
        for b in &ibex {
            let ours = s
                .solutions
                .iter()
                .map(|x| &x.sides)
                .chain(&s.undecided)
                .any(|x| meet(b, x));
            assert!(
                ours,
                "{name}: IBEX's zero {b:?} is in none of ivjit's boxes"
            );
        }
        for x in &s.solutions {
            assert!(
                ibex.iter().any(|b| meet(b, &x.sides)),
                "{name}: ivjit's zero {:?} is in none of IBEX's boxes",
                x.sides
            );
            let narrow = x
                .sides
                .iter()
                .all(|iv| iv.hi - iv.lo <= 1e-12 * iv.lo.abs().max(iv.hi.abs()).max(1.0));
            assert!(narrow, "{name}: {x:?}");
        }
        assert_eq!(s.solutions.len(), ibex.len(), "{name}");
        for (i, a) in s.solutions.iter().enumerate() {
            for b in &s.solutions[..i] {
                assert!(
                    a.sides
                        .iter()
                        .zip(&b.sides)
                        .any(|(x, y)| x.hi < y.lo || y.hi < x.lo),
                    "{name}: two solution boxes overlap"
                );
            }
        }
    }
}
