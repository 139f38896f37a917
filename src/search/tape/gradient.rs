//! A tape's gradient by forward differentiation: each slot carries its value and its three
//! partial derivatives along the tape's variables, every derivative rule composed of the
//! generated operations (`crate::lower::interpreted`: `mul`, `add`, `div`, `hull`, ...), so the
//! CPU here and the GPU's `ivjit_tape_normals` (`tape.cu`) run the same rules with the same
//! bits. A pruned tape's gradient on a box inside its tile is the gradient of f there: the
//! `min`/`max` it dropped are decided on the whole tile (f equals the kept side on it).
//!
//! The rules, with `da` the partials of `a`:
//! - constant 0; variable k the unit vector e_k;
//! - `-a`: `-da`; `a ± b`: `da ± db`; `a b`: `a db + b da`; `a²`: `(a + a) da`;
//! - `sqrt a`: `da / (s + s)`, `s = sqrt a` (a quotient by an interval holding 0 is entire);
//! - `|a|`: `da` where `a > 0`, `-da` where `a < 0`, else `hull(da, -da)` (the generalized
//!   gradient of |.| at 0 is [-1, 1] da);
//! - `min`/`max`: the deciding side's partials where one side decides it on the box (the
//!   tape's own test, `tape/mod.rs` `choices`), else the hull of both (generalized gradient);
//! - of the operations run by their lowering (codes [`code::EXT`] on), with `v` the
//!   operation's value: `a / b`: `(da - v db) / b`; `exp a`: `v da`; `log a`: `da / a`;
//!   every other one entire partials (no rule: a normal through it is never certified).
//!   ([`Rule`], the table's rule per code.)
//!
//! Each rule encloses the partials of the operation at every point of the box where it is
//! differentiable and its generalized gradient where it is not (|.|, min, max), so the result
//! encloses every gradient of f on the box.
//!
//! With sign demand (the voxel search's tapes, [`Tape::signs_only`]) a `min` whose side `a` is
//! proven > 0 on the box (a `max`'s side proven < 0) takes the other side's partials, here and
//! in the pruning of the tiles above: then the result encloses f's gradients at the points of
//! the box where f = 0, which is what a surface normal needs. By induction from the result: a
//! node whose value matters only by its sign gets partials that hold where it is 0 (there,
//! `min(a, b) = 0` with `a > 0` means `b = 0` and `b < a` nearby, so the min *is* b near the
//! point; an undecided min's hull holds every active side's partials; `neg` keeps the zeros).

use super::{code, decode, Bound, Iv, Tape, TapeBox, BOTH, OUT};

/// A value and its partials along variables 0, 1 and 2.
pub(crate) type Dual<T> = [Iv<T>; 4];

/// The derivative rule of an operation run by its lowering (numbered as `tape.cu`'s
/// `ext_rule` returns them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Rule {
    /// No rule: entire partials.
    None = 0,
    /// `a / b`.
    Div = 1,
    /// `exp a`.
    Exp = 2,
    /// `log a` (natural).
    Log = 3,
}

impl Rule {
    /// The rule of `op` (its arguments ignored).
    pub(crate) fn of(op: crate::ir::Op) -> Rule {
        use crate::ir::Op;
        use crate::point::UnaryFn;
        match op {
            Op::Div(..) => Rule::Div,
            Op::Elem(UnaryFn::Exp, _) => Rule::Exp,
            Op::Elem(UnaryFn::Log, _) => Rule::Log,
            _ => Rule::None,
        }
    }
}

impl Tape {
    /// [`Tape::gradient_lanes`] on one box (the tests').
    #[cfg(test)]
    pub(crate) fn gradient<T: Bound>(&self, vars: &TapeBox<T>) -> Dual<T> {
        let mut out = Vec::new();
        self.gradient_lanes(&[*vars], &mut Vec::new(), &mut out);
        out[0]
    }

    /// f's enclosure and its three partials' on each of `boxes` (see the module
    /// documentation; boxes that share this tape, as the filled tiles of a level do), into
    /// `out`: index 0 the value, 1 + k the partial along variable k. Each instruction is
    /// decoded once and its rule run over every box by [`Bound::apply_lanes`] (whole vectors
    /// where the processor has them, in the upward region where the evaluator switches
    /// MXCSR; one box at a time the scalar operations, with the same bits: the tests compare
    /// them on every interval class); component `k` of slot `s` of box `l` at
    /// `slots[(4 s + k) n + l]`, in `slots` kept by the caller. The tape needs no SSA
    /// operands (a last level's works too).
    pub(crate) fn gradient_lanes<T: Bound>(
        &self,
        boxes: &[TapeBox<T>],
        slots: &mut Vec<Iv<T>>,
        out: &mut Vec<Dual<T>>,
    ) {
        let n = boxes.len();
        let zero = (T::exact(0.0), T::exact(0.0));
        let one = (T::exact(1.0), T::exact(1.0));
        let entire = (T::exact(f64::NEG_INFINITY), T::exact(f64::INFINITY));
        let tape_slots = self.slots().max(1);
        // Four components per slot, then three temporaries.
        let comp = |s: usize, k: usize| (4 * s + k) * n;
        let (t0, t1, t2) = (
            comp(tape_slots, 0),
            comp(tape_slots, 1),
            comp(tape_slots, 2),
        );
        slots.clear();
        // Zeros (an instruction writes its slot before a later one reads it).
        slots.resize(comp(tape_slots, 3), zero);
        let mut sides: Vec<u8> = Vec::with_capacity(n);
        let apply =
            |c: u16, s: &mut Vec<Iv<T>>, at: (usize, usize, usize)| T::apply_lanes(c, s, at, n);
        for &inst in &self.insts {
            let (op, o, a, b) = decode(inst);
            let (o, a) = (o as usize, a as usize);
            // A unary operation's second operand is not read by its rule; an operand past
            // the slots is given the first's.
            let b = if (b as usize) < tape_slots {
                b as usize
            } else {
                a.min(tape_slots - 1)
            };
            match op & 0xff {
                code::CONST => {
                    let c = self.consts[a];
                    slots[comp(o, 0)..comp(o, 1)].fill((T::lo_of(c.lo), T::hi_of(c.hi)));
                    slots[comp(o, 1)..comp(o + 1, 0)].fill(zero);
                }
                code::VAR => {
                    for (s, bx) in slots[comp(o, 0)..comp(o, 1)].iter_mut().zip(boxes) {
                        *s = bx[a];
                    }
                    for k in 1..4 {
                        let v = if k == 1 + a { one } else { zero };
                        slots[comp(o, k)..comp(o, k + 1)].fill(v);
                    }
                }
                code::NEG => {
                    for k in 0..4 {
                        apply(code::NEG, slots, (comp(o, k), comp(a, k), comp(a, k)));
                    }
                }
                c @ (code::ADD | code::SUB) => {
                    for k in 0..4 {
                        apply(c, slots, (comp(o, k), comp(a, k), comp(b, k)));
                    }
                }
                // Each partial reads its own components and the values, so the partials are
                // written first and the value last (the result's slot may be an operand's).
                code::MUL => {
                    for k in 1..4 {
                        apply(code::MUL, slots, (t0, comp(a, 0), comp(b, k)));
                        apply(code::MUL, slots, (t1, comp(b, 0), comp(a, k)));
                        apply(code::ADD, slots, (comp(o, k), t0, t1));
                    }
                    apply(code::MUL, slots, (comp(o, 0), comp(a, 0), comp(b, 0)));
                }
                code::SQR => {
                    apply(code::ADD, slots, (t0, comp(a, 0), comp(a, 0)));
                    for k in 1..4 {
                        apply(code::MUL, slots, (comp(o, k), t0, comp(a, k)));
                    }
                    apply(code::SQR, slots, (comp(o, 0), comp(a, 0), comp(a, 0)));
                }
                code::SQRT => {
                    apply(code::SQRT, slots, (t1, comp(a, 0), comp(a, 0)));
                    apply(code::ADD, slots, (t0, t1, t1));
                    for k in 1..4 {
                        apply(code::DIV, slots, (comp(o, k), comp(a, k), t0));
                    }
                    slots.copy_within(t1..t1 + n, comp(o, 0));
                }
                code::ABS => {
                    sides.clear();
                    sides.extend(slots[comp(a, 0)..comp(a, 1)].iter().map(|x| {
                        let (lo, hi) = (x.0.to_f64(), x.1.to_f64());
                        if lo > 0.0 {
                            super::FIRST
                        } else if hi < 0.0 {
                            super::SECOND
                        } else {
                            BOTH
                        }
                    }));
                    for k in 1..4 {
                        apply(code::NEG, slots, (t0, comp(a, k), comp(a, k)));
                        apply(code::HULL, slots, (t1, comp(a, k), t0));
                        for (l, &side) in sides.iter().enumerate() {
                            slots[comp(o, k) + l] = match side {
                                super::FIRST => slots[comp(a, k) + l],
                                super::SECOND => slots[t0 + l],
                                _ => slots[t1 + l],
                            };
                        }
                    }
                    apply(code::ABS, slots, (comp(o, 0), comp(a, 0), comp(a, 0)));
                }
                c @ (code::MIN | code::MAX) => {
                    sides.clear();
                    for l in 0..n {
                        let (x, y) = (slots[comp(a, 0) + l], slots[comp(b, 0) + l]);
                        sides.push(super::choice(op, x, y));
                    }
                    for k in 1..4 {
                        apply(code::HULL, slots, (t0, comp(a, k), comp(b, k)));
                        for (l, &side) in sides.iter().enumerate() {
                            slots[comp(o, k) + l] = match side {
                                super::FIRST => slots[comp(a, k) + l],
                                super::SECOND => slots[comp(b, k) + l],
                                _ => slots[t0 + l],
                            };
                        }
                    }
                    apply(c, slots, (comp(o, 0), comp(a, 0), comp(b, 0)));
                }
                // Run by its lowering: the value as the interpreter gives it (into t2), the
                // partials by the operation's rule.
                _ => {
                    self.ext
                        .apply_lanes(op, slots, (t2, comp(a, 0), comp(b, 0)), n);
                    let rule = self.ext.rule(op);
                    for k in 1..4 {
                        let d = comp(o, k);
                        match rule {
                            Rule::Div => {
                                apply(code::MUL, slots, (t0, t2, comp(b, k)));
                                apply(code::SUB, slots, (t1, comp(a, k), t0));
                                apply(code::DIV, slots, (d, t1, comp(b, 0)));
                            }
                            Rule::Exp => apply(code::MUL, slots, (d, t2, comp(a, k))),
                            Rule::Log => apply(code::DIV, slots, (d, comp(a, k), comp(a, 0))),
                            Rule::None => slots[d..d + n].fill(entire),
                        }
                    }
                    slots.copy_within(t2..t2 + n, comp(o, 0));
                }
            }
        }
        let o = OUT as usize;
        out.clear();
        out.extend((0..n).map(|l| [0, 1, 2, 3].map(|k| slots[comp(o, k) + l])));
    }
}

/// The normal an enclosure of f's partials certifies: where one partial keeps its sign, the
/// gradient is nonzero at every point of the box and lies in the enclosure, so the unit
/// direction of the enclosure's middle stands for the surface's normals there (pointing to
/// where f grows). None where every partial's enclosure holds 0 (or is not finite at the
/// middle).
pub(crate) fn certified_normal(partials: [[f64; 2]; 3]) -> Option<[f64; 3]> {
    if !partials.iter().any(|&[lo, hi]| lo > 0.0 || hi < 0.0) {
        return None;
    }
    let m = partials.map(|[lo, hi]| 0.5 * lo + 0.5 * hi);
    let len = (m[0] * m[0] + m[1] * m[1] + m[2] * m[2]).sqrt();
    (len.is_finite() && len > 0.0).then(|| m.map(|t| t / len))
}

/// [`certified_normal`] as three numbers, NaN where none is certified: the layout the voxel
/// engines lend their normals in (three per column).
pub(crate) fn certified_or_nan(partials: [[f64; 2]; 3]) -> [f64; 3] {
    certified_normal(partials).unwrap_or([f64::NAN; 3])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::tape::Chains;
    use crate::Expression;

    /// The gradient of a tape encloses the exact gradient at points, and equals the exact
    /// partials where every operation is exact: polynomials with integer coefficients on
    /// points of small integers, a sqrt, an abs and a min on each side of their kinks.
    #[test]
    fn gradients_enclose_the_exact_partials() {
        type Exact = fn([f64; 3]) -> [f64; 3];
        let cases: [(&str, Exact); 4] = [
            ("x*x*y - 3*z + y", |[x, y, _]| {
                [2.0 * x * y, x * x + 1.0, -3.0]
            }),
            ("sqr(x - 1) + z*y*2", |[x, y, z]| {
                [2.0 * (x - 1.0), 2.0 * z, 2.0 * y]
            }),
            ("abs(x) - min(y, z)", |[x, y, z]| {
                [
                    x.signum(),
                    if y < z { -1.0 } else { 0.0 },
                    if y < z { 0.0 } else { -1.0 },
                ]
            }),
            ("sqrt(x*x + y*y) - z", |[x, y, _]| {
                let r = (x * x + y * y).sqrt();
                [x / r, y / r, -1.0]
            }),
        ];
        for (src, exact) in cases {
            let expr = Expression::parse(src).unwrap();
            let tape = Tape::binding(expr.ir(), &["x", "y", "z"], Chains::Balanced).unwrap();
            for p in [[3.0, 4.0, 2.0], [-2.0, 1.0, 5.0], [1.0, -3.0, -4.0]] {
                let b: TapeBox<f64> = p.map(|t| (t, t));
                let d = tape.gradient::<f64>(&b);
                let want = exact(p);
                for k in 0..3 {
                    let (lo, hi) = d[1 + k];
                    assert!(
                        lo <= want[k] && want[k] <= hi,
                        "{src} at {p:?}: d{k} {lo}..{hi}"
                    );
                    assert!(
                        hi - lo <= 1e-15 * (1.0 + want[k].abs()),
                        "{src} {p:?}: loose"
                    );
                }
            }
            // On a box straddling the kinks: an enclosure of every point's partials.
            let b: TapeBox<f64> = [(-0.5, 0.25), (0.5, 1.5), (0.75, 1.25)];
            let d = tape.gradient::<f64>(&b);
            for x in [-0.5, -0.1, 0.2, 0.25] {
                for y in [0.5, 0.9, 1.5] {
                    for z in [0.75, 1.0, 1.25] {
                        let want = exact([x, y, z]);
                        for k in 0..3 {
                            let (lo, hi) = d[1 + k];
                            assert!(lo <= want[k] && want[k] <= hi, "{src} at {x},{y},{z}: d{k}");
                        }
                    }
                }
            }
        }
    }

    /// The rules of division, exp and log (operations run by their lowering) enclose the
    /// exact partials, checked at points where those are exact: x/y at (3, 4) (1/4 and
    /// -3/16), exp at 0 (1), log at 1, 2 and 4 (1, 1/2, 1/4).
    #[test]
    fn division_exp_and_log_have_rules() {
        let cases: [(&str, [f64; 3], [f64; 3]); 5] = [
            ("x / y + z", [3.0, 4.0, 1.0], [0.25, -3.0 / 16.0, 1.0]),
            ("exp(x) * y", [0.0, 5.0, 0.0], [5.0, 1.0, 0.0]),
            ("log(x) - z", [1.0, 0.0, 2.0], [1.0, 0.0, -1.0]),
            ("log(x) + y / x", [2.0, 2.0, 0.0], [0.0, 0.5, 0.0]),
            ("exp(log(x))", [4.0, 0.0, 0.0], [1.0, 0.0, 0.0]),
        ];
        for (src, at, want) in cases {
            let expr = Expression::parse(src).unwrap();
            let tape = Tape::binding(expr.ir(), &["x", "y", "z"], Chains::Balanced).unwrap();
            assert!(tape.extended() > 0, "{src}");
            let d = tape.gradient::<f64>(&at.map(|t| (t, t)));
            for k in 0..3 {
                let (lo, hi) = d[1 + k];
                assert!(
                    lo <= want[k] && want[k] <= hi,
                    "{src}: d{k} {lo}..{hi}, not {}",
                    want[k]
                );
                assert!(hi - lo <= 1e-12, "{src}: d{k} {lo}..{hi} loose");
            }
        }
        // Through zero: the quotient's partial is entire, no normal.
        let expr = Expression::parse("1 / x").unwrap();
        let tape = Tape::binding(expr.ir(), &["x", "y", "z"], Chains::Balanced).unwrap();
        let d = tape.gradient::<f64>(&[(-1.0, 1.0), (0.0, 0.0), (0.0, 0.0)]);
        assert!(
            d[1].0 == f64::NEG_INFINITY && d[1].1 == f64::INFINITY,
            "{:?}",
            d[1]
        );
    }

    /// The rules on boxes of every interval class in both precisions (entire, half-lines,
    /// the largest floats, huge, subnormal, signed zeros; empty gives no normal): each
    /// partial's enclosure holds the partial (or, at a kink, every one-sided partial) at
    /// points of the box — ends, zero and a middle — where it is exact: y and x for x y, -2z
    /// for -z², ±1 for |x|, 0 or 1 for min(x, y).
    #[test]
    fn gradients_enclose_the_partials_on_every_interval_class() {
        fn check<T: Bound + std::fmt::Debug>() {
            let inf = f64::INFINITY;
            let classes: [(f64, f64); 12] = [
                (-inf, inf),
                (-inf, -1.0),
                (2.0, inf),
                (-0.0, 0.0),
                (0.0, 1e-310),
                (-1e-310, 1e-310),
                (-3.0, 2.0),
                (1e300, 1e308),
                (-f64::MAX, -1e300),
                (f32::MAX as f64, f64::MAX),
                (-f32::MAX as f64, f32::MAX as f64),
                (0.25, 0.5),
            ];
            // The partials (x, y, z) of each expression at a point, exact in f64 and f32 (a
            // point of an f32 box is an f32).
            type Exact = fn([f64; 3]) -> [Vec<f64>; 3];
            let cases: [(&str, Exact); 4] = [
                ("x*y", |[x, y, _]| [vec![y], vec![x], vec![0.0]]),
                ("-(z*z)", |[_, _, z]| [vec![0.0], vec![0.0], vec![-2.0 * z]]),
                ("abs(x)", |[x, _, _]| {
                    let s = if x > 0.0 {
                        vec![1.0]
                    } else if x < 0.0 {
                        vec![-1.0]
                    } else {
                        vec![-1.0, 1.0]
                    };
                    [s, vec![0.0], vec![0.0]]
                }),
                ("min(x, y)", |[x, y, _]| {
                    let (dx, dy) = if x < y {
                        (vec![1.0], vec![0.0])
                    } else if y < x {
                        (vec![0.0], vec![1.0])
                    } else {
                        (vec![0.0, 1.0], vec![0.0, 1.0])
                    };
                    [dx, dy, vec![0.0]]
                }),
            ];
            let iv = |(lo, hi): (f64, f64)| (T::lo_of(lo), T::hi_of(hi));
            let points = |(lo, hi): (T, T)| -> Vec<f64> {
                let (lo, hi) = (lo.to_f64(), hi.to_f64());
                let mut p: Vec<f64> = [lo, hi, 0.5 * lo + 0.5 * hi, 0.0]
                    .into_iter()
                    .filter(|t| t.is_finite() && lo <= *t && *t <= hi)
                    .collect();
                p.dedup();
                p
            };
            for (src, exact) in cases {
                let expr = Expression::parse(src).unwrap();
                let tape = Tape::binding(expr.ir(), &["x", "y", "z"], Chains::Balanced).unwrap();
                for (k, &a) in classes.iter().enumerate() {
                    let (b, c) = (classes[(k + 5) % 12], classes[(k + 7) % 12]);
                    let bx: TapeBox<T> = [iv(a), iv(b), iv(c)];
                    let d = tape.gradient::<T>(&bx);
                    for x in points(bx[0]) {
                        for y in points(bx[1]) {
                            for z in points(bx[2]) {
                                let want = exact([x, y, z]);
                                for axis in 0..3 {
                                    let (lo, hi) = (d[1 + axis].0.to_f64(), d[1 + axis].1.to_f64());
                                    for w in &want[axis] {
                                        // x*y's partials at an f32 box's huge ends: the ends
                                        // themselves, exact in f32.
                                        assert!(
                                            lo <= *w && *w <= hi,
                                            "{:?} {src} on {bx:?} at ({x}, {y}, {z}): d{axis} {lo}..{hi} misses {w}",
                                            T::PRECISION
                                        );
                                    }
                                }
                            }
                        }
                    }
                }
                // The empty box: no normal.
                let nan = (T::nan(), T::nan());
                let d = tape.gradient::<T>(&[nan, nan, nan]);
                let partials = [1, 2, 3].map(|k| [d[k].0.to_f64(), d[k].1.to_f64()]);
                assert_eq!(certified_normal(partials), None, "{src} on the empty box");
            }
        }
        check::<f64>();
        check::<f32>();
    }

    /// The lanes give, box for box, the bits of one box at a time: many boxes in one pass run
    /// the rules by whole vectors (AVX-512, or AVX2 in the upward region), one box by the
    /// scalar operations (the enclosure tests above hold those on exact partials). Tapes with every rule (products, squares, roots, |.|, min and max
    /// with and without sign demand, division, exp, log, a function with no rule) on 300
    /// boxes (more than the evaluator's chunk of 128) of every class (entire, half-lines, [MAX, inf], subnormal, signed zeros, points,
    /// empty), both precisions, with slots left by another pass.
    #[test]
    fn lanes_give_the_one_box_gradient() {
        use crate::search::tape::tests::{lane_boxes, lane_sides, same_bits};
        fn check<T: Bound + std::fmt::Debug>(tape: &Tape, sides: &[(f64, f64)], src: &str) {
            let boxes: Vec<TapeBox<T>> = lane_boxes(300, sides);
            let mut slots = vec![(T::lo_of(1.0), T::hi_of(-1.0)); 5000];
            let mut duals = Vec::new();
            tape.gradient_lanes(&boxes, &mut slots, &mut duals);
            assert_eq!(duals.len(), boxes.len());
            for (l, b) in boxes.iter().enumerate() {
                let one = tape.gradient(b);
                for k in 0..4 {
                    assert!(
                        same_bits(one[k], duals[l][k]),
                        "{src} {:?} box {l} {b:?} component {k}: {:?} one by one, {:?} in lanes",
                        T::PRECISION,
                        one[k],
                        duals[l][k]
                    );
                }
            }
        }
        let sides = lane_sides();
        for src in [
            "x*y - z*x + y*y",
            "sqr(x - 1) + sqrt(y) * z",
            "abs(x) - min(y, z) + max(x*y, z)",
            "sqrt(x*x + y*y + z*z) - 0.5",
            "x / y + exp(z) - log(x)",
            "sin(x) * y + x / (x - z)",
            "max(min(x - 0.2, y + 0.1), -(z*z) + 0.3)",
        ] {
            let expr = crate::Expression::parse(src).unwrap();
            let tape = Tape::binding(expr.ir(), &["x", "y", "z"], Chains::Balanced).unwrap();
            for t in [tape.clone(), tape.signs_only()] {
                check::<f64>(&t, &sides, src);
                check::<f32>(&t, &sides, src);
            }
        }
    }

    /// A function run by its lowering has no derivative rule: its partials are entire, and no
    /// normal is certified through it.
    #[test]
    fn lowered_functions_have_entire_partials() {
        let expr = Expression::parse("sin(x) + y").unwrap();
        let tape = Tape::binding(expr.ir(), &["x", "y", "z"], Chains::Balanced).unwrap();
        let d = tape.gradient::<f64>(&[(0.1, 0.2), (0.0, 1.0), (0.0, 0.0)]);
        assert_eq!(d[1], (f64::NEG_INFINITY, f64::INFINITY));
        // y's partial keeps its sign, but x's has no middle: no direction is certified.
        assert!(certified_normal([[d[1].0, d[1].1], [d[2].0, d[2].1], [d[3].0, d[3].1]]).is_none());
        assert_eq!(
            certified_normal([[2.0, 2.0], [0.0, 0.0], [0.0, 0.0]]),
            Some([1.0, 0.0, 0.0])
        );
        assert!(certified_normal([[-1.0, 1.0], [0.0, 2.0], [-0.5, 0.0]]).is_none());
    }
}
