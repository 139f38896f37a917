//! Tapes pruned on a region (`ivjit::search::tape::Tape::pruned_on`) and lowered with the
//! region's facts (`Tape::program_on`, what the 3-D search compiles for a block of rays) on
//! random expressions with min and max: on random regions R and random boxes B inside R, the
//! pruned program gives the full program's bits (so every classification and every containment
//! of the full program carries over), in f64 and f32; and at random points of B the exact value
//! (rational arithmetic) lies in the pruned enclosure. (Until the sixteenth session the same
//! held for the graph specialization these tapes replaced.)

use crate::common::rng::splitmix64;

use ivjit::internals::interval::Interval;
use ivjit::search::tape::{Chains, Tape};
use ivjit::{Expression, Precision};
use num_bigint::BigInt;
use num_rational::BigRational;

/// A random expression tree over x and y.
enum Tree {
    X,
    Y,
    /// A constant k / 4.
    Const(i64),
    Add(Box<Tree>, Box<Tree>),
    Sub(Box<Tree>, Box<Tree>),
    Mul(Box<Tree>, Box<Tree>),
    Min(Box<Tree>, Box<Tree>),
    Max(Box<Tree>, Box<Tree>),
    Sqr(Box<Tree>),
    Neg(Box<Tree>),
    Abs(Box<Tree>),
    /// sqrt: empty where its argument is negative (the oracle skips those points).
    Sqrt(Box<Tree>),
    /// exp: only for the bit-for-bit check (the oracle has no exp).
    Exp(Box<Tree>),
}

struct Gen(u64);

impl Gen {
    fn below(&mut self, n: u64) -> u64 {
        splitmix64(&mut self.0) % n
    }

    fn unit(&mut self) -> f64 {
        (splitmix64(&mut self.0) >> 11) as f64 / (1u64 << 53) as f64
    }

    fn tree(&mut self, depth: u32) -> Tree {
        if depth == 0 || self.below(6) == 0 {
            return match self.below(3) {
                0 => Tree::X,
                1 => Tree::Y,
                _ => Tree::Const(self.below(17) as i64 - 8),
            };
        }
        let a = Box::new(self.tree(depth - 1));
        let b = Box::new(self.tree(depth - 1));
        let c = Box::new(self.tree(depth - 1));
        match splitmix64(&mut self.0) % 13 {
            0 | 1 => Tree::Min(a, b),
            2 | 3 => Tree::Max(a, b),
            4 => Tree::Add(a, b),
            5 => Tree::Sub(a, b),
            6 => Tree::Mul(a, b),
            7 => Tree::Sqr(a),
            8 => Tree::Neg(a),
            9 => Tree::Abs(a),
            10 => Tree::Sqrt(a),
            11 => Tree::Exp(a),
            _ => Tree::Min(Box::new(Tree::Max(a, b)), c),
        }
    }
}

fn text(t: &Tree) -> String {
    match t {
        Tree::X => "x".into(),
        Tree::Y => "y".into(),
        Tree::Const(k) => format!("({k}/4)"),
        Tree::Add(a, b) => format!("({} + {})", text(a), text(b)),
        Tree::Sub(a, b) => format!("({} - {})", text(a), text(b)),
        Tree::Mul(a, b) => format!("({} * {})", text(a), text(b)),
        Tree::Min(a, b) => format!("min({}, {})", text(a), text(b)),
        Tree::Max(a, b) => format!("max({}, {})", text(a), text(b)),
        Tree::Sqr(a) => format!("sqr({})", text(a)),
        Tree::Neg(a) => format!("(-{})", text(a)),
        Tree::Abs(a) => format!("abs({})", text(a)),
        Tree::Sqrt(a) => format!("sqrt({})", text(a)),
        Tree::Exp(a) => format!("exp({})", text(a)),
    }
}

/// The exact value at a rational point; `None` where it is undefined (sqrt of a negative) or
/// not rational (exp; sqrt of a non-square is enclosed by its sign-free bounds instead: we skip
/// those points too, to keep the oracle exact).
fn exact(t: &Tree, x: &BigRational, y: &BigRational) -> Option<BigRational> {
    use num_traits::Signed;
    Some(match t {
        Tree::X => x.clone(),
        Tree::Y => y.clone(),
        Tree::Const(k) => BigRational::new(BigInt::from(*k), BigInt::from(4)),
        Tree::Add(a, b) => exact(a, x, y)? + exact(b, x, y)?,
        Tree::Sub(a, b) => exact(a, x, y)? - exact(b, x, y)?,
        Tree::Mul(a, b) => exact(a, x, y)? * exact(b, x, y)?,
        Tree::Min(a, b) => exact(a, x, y)?.min(exact(b, x, y)?),
        Tree::Max(a, b) => exact(a, x, y)?.max(exact(b, x, y)?),
        Tree::Sqr(a) => {
            let v = exact(a, x, y)?;
            &v * &v
        }
        Tree::Neg(a) => -exact(a, x, y)?,
        Tree::Abs(a) => exact(a, x, y)?.abs(),
        Tree::Sqrt(_) | Tree::Exp(_) => return None,
    })
}

fn rational(v: f64) -> BigRational {
    BigRational::from_float(v).expect("finite")
}

/// A random sub-interval of `iv` (sometimes a point, sometimes all of it).
fn inside(g: &mut Gen, iv: Interval) -> Interval {
    let w = iv.hi - iv.lo;
    match g.below(5) {
        0 => iv,
        1 => {
            let p = (iv.lo + g.unit() * w).clamp(iv.lo, iv.hi);
            Interval { lo: p, hi: p }
        }
        _ => {
            let (a, b) = (iv.lo + g.unit() * w, iv.lo + g.unit() * w);
            Interval {
                lo: a.min(b).clamp(iv.lo, iv.hi),
                hi: a.max(b).clamp(iv.lo, iv.hi),
            }
        }
    }
}

fn soa(boxes: &[[Interval; 2]]) -> Vec<f64> {
    let n = boxes.len();
    let mut v = vec![0.0; 4 * n];
    for (i, b) in boxes.iter().enumerate() {
        for (k, iv) in b.iter().enumerate() {
            v[2 * k * n + i] = iv.lo;
            v[(2 * k + 1) * n + i] = iv.hi;
        }
    }
    v
}

/// Inputs of a program over `vars` from boxes over (x, y) (a variable the graph lost to
/// folding or to pruning is not an input of its program).
fn inputs_for(vars: &[String], boxes: &[[Interval; 2]]) -> Vec<f64> {
    let all = soa(boxes);
    let n = boxes.len();
    let mut v = Vec::with_capacity(2 * vars.len() * n);
    for name in vars {
        let k = if name == "x" { 0 } else { 1 };
        v.extend_from_slice(&all[2 * k * n..(2 * k + 2) * n]);
    }
    v
}

#[test]
fn pruned_programs_give_the_full_programs_bits_inside_the_region() {
    let mut g = Gen(0x5eed_1788);
    let (mut decided, mut checked, mut points) = (0usize, 0usize, 0usize);
    let (mut before, mut after, mut fewer) = (0usize, 0usize, 0usize);
    for case in 0..300 {
        let tree = g.tree(6);
        let src = text(&tree);
        let expr = Expression::parse(&src).unwrap();
        let graph = expr.ir();
        if graph.vars.len() != 2 {
            continue; // the boxes below bind x and y
        }
        let vars = graph.vars.clone();
        let tape = Tape::binding(graph, &["x", "y"], Chains::AsWritten).unwrap();
        let names = vec!["x".to_string(), "y".to_string()];
        for p in [Precision::F64, Precision::F32] {
            let full = expr.scalar(p).unwrap();
            for _ in 0..4 {
                // A region: centre in [-3, 3]^2, half-widths from 2^-12 to 2.
                let mut region = [Interval { lo: 0.0, hi: 0.0 }; 2];
                for iv in &mut region {
                    let c = -3.0 + 6.0 * g.unit();
                    let h = 2f64.powi(-(g.below(13) as i32)) * (0.5 + g.unit());
                    let (lo, hi) = (c - h, c + h);
                    *iv = match p {
                        Precision::F64 => Interval { lo, hi },
                        Precision::F32 => Interval {
                            lo: (lo as f32) as f64,
                            hi: (hi as f32) as f64,
                        },
                    };
                    if iv.lo > iv.hi {
                        *iv = Interval {
                            lo: iv.hi,
                            hi: iv.lo,
                        };
                    }
                }
                let pruned = tape.pruned_on(p, &region);
                decided += usize::from(pruned.len() < tape.len());
                before += tape.len();
                after += pruned.len();
                // Lowered with the region's facts (signs, non-emptiness) as the search does.
                let pruned_program = pruned.program_on(&["x", "y"], p, &region).unwrap();
                fewer += usize::from(pruned_program.insts.len() < full.insts.len());
                // Boxes inside the region (f32 bounds for f32 programs).
                let boxes: Vec<[Interval; 2]> = (0..64)
                    .map(|_| {
                        region.map(|iv| {
                            let b = inside(&mut g, iv);
                            match p {
                                Precision::F64 => b,
                                Precision::F32 => {
                                    let (lo, hi) = (b.lo as f32 as f64, b.hi as f32 as f64);
                                    Interval {
                                        lo: lo.max(iv.lo),
                                        hi: hi.min(iv.hi).max(lo.max(iv.lo)),
                                    }
                                }
                            }
                        })
                    })
                    .collect();
                let n = boxes.len();
                let want =
                    ivjit::internals::cpu::eval::eval_soa(&full, &inputs_for(&vars, &boxes), n);
                let got = ivjit::internals::cpu::eval::eval_soa(
                    &pruned_program,
                    &inputs_for(&names, &boxes),
                    n,
                );
                for i in 0..n {
                    let (w, h) = ((want[i], want[n + i]), (got[i], got[n + i]));
                    let same =
                        |a: f64, b: f64| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
                    assert!(
                        same(w.0, h.0) && same(w.1, h.1),
                        "case {case} {p}: {src}\nregion {region:?} box {:?}: full {w:?}, pruned {h:?} ({} of {} instructions)",
                        boxes[i],
                        pruned.len(),
                        tape.len()
                    );
                    checked += 1;
                    // The exact value at a few points of the box lies in the pruned enclosure.
                    for _ in 0..2 {
                        let b = boxes[i];
                        let (px, py) = (
                            b[0].lo + g.unit() * (b[0].hi - b[0].lo),
                            b[1].lo + g.unit() * (b[1].hi - b[1].lo),
                        );
                        let (px, py) = (px.clamp(b[0].lo, b[0].hi), py.clamp(b[1].lo, b[1].hi));
                        if let Some(v) = exact(&tree, &rational(px), &rational(py)) {
                            assert!(
                                !h.0.is_nan() && rational(h.0) <= v && v <= rational(h.1),
                                "case {case} {p}: {src} at ({px}, {py}): {v} not in {h:?}"
                            );
                            points += 1;
                        }
                    }
                }
            }
        }
    }
    println!(
        "{checked} boxes equal, {points} exact points contained, {decided} regions pruned, \
         tape instructions {before} -> {after}, {fewer} programs shorter than the full one"
    );
    assert!(
        fewer > 100,
        "pruning and region facts shorten programs ({fewer})"
    );
    assert!(
        decided > 200,
        "the regions decide min/max often ({decided})"
    );
    assert!(
        after < before,
        "pruning removes instructions ({before} -> {after})"
    );
    assert!(points > 10_000, "{points}");
}

/// Prospero on the 64-pixel tiles of a 1024 x 1024 image of [-1, 1]^2 (the first round of
/// `ivjit render`): every tile's pruned program, and the average length it reports.
#[test]
fn prospero_tiles_prune() {
    let tape = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/models/prospero.vm"),
    )
    .unwrap();
    let expr = Expression::parse_tape(&tape).unwrap();
    let tape = Tape::binding(expr.ir(), &["x", "y"], Chains::AsWritten).unwrap();
    let tiles = 16;
    let regions: Vec<[Interval; 2]> = (0..tiles * tiles)
        .map(|t| {
            let (i, j) = (t / tiles, t % tiles);
            let step = 2.0 / tiles as f64; // exact: a power of two
            let x = Interval {
                lo: -1.0 + j as f64 * step,
                hi: -1.0 + (j + 1) as f64 * step,
            };
            let y = Interval {
                lo: 1.0 - (i + 1) as f64 * step,
                hi: 1.0 - i as f64 * step,
            };
            [x, y]
        })
        .collect();
    let (mut before, mut after) = (0, 0);
    let full_insts = expr.scalar(Precision::F64).unwrap().insts.len();
    let mut insts = 0;
    for region in &regions {
        let pruned = tape.pruned_on(Precision::F64, region);
        before += tape.len();
        after += pruned.len();
        insts += pruned
            .program_on(&["x", "y"], Precision::F64, region)
            .unwrap()
            .insts
            .len();
    }
    let n = regions.len();
    println!(
        "Prospero, {n} tiles of 64 px: tape instructions {} -> {:.0} on average, scalar \
         instructions {full_insts} -> {:.0}",
        before / n,
        after as f64 / n as f64,
        insts as f64 / n as f64
    );
    assert!(
        after * 2 < before,
        "tiles of 1/16 of the image prune at least half"
    );
}

/// The interpreter's tapes (`ivjit::search::tape`, run by the pruned GPU render): on random
/// expressions the tape gives the compiled program's sets (the same tight operations), on boxes
/// with infinite and zero bounds too; and the tape pruned on a random region gives the full
/// tape's sets on every box inside it, with fewer instructions.
#[test]
fn tapes_give_the_compiled_sets_and_pruned_tapes_the_full_tapes() {
    use ivjit::search::tape::Tape;
    let mut g = Gen(0x7a9e_0001);
    let (mut checked, mut shorter, mut regions) = (0usize, 0usize, 0usize);
    let (mut before, mut after) = (0usize, 0usize);
    let same = |a: Interval, b: Interval| {
        let eq = |u: f64, v: f64| u == v || (u.is_nan() && v.is_nan());
        eq(a.lo, b.lo) && eq(a.hi, b.hi)
    };
    let special = [
        Interval {
            lo: f64::NEG_INFINITY,
            hi: f64::INFINITY,
        },
        Interval { lo: 0.0, hi: 0.0 },
        Interval {
            lo: f64::NEG_INFINITY,
            hi: 0.0,
        },
        Interval {
            lo: 1.0,
            hi: f64::INFINITY,
        },
        Interval { lo: -0.0, hi: 3.0 },
    ];
    for case in 0..300 {
        // The interpreter runs the .vm set: exp becomes abs.
        let src = text(&g.tree(6)).replace("exp(", "abs(");
        let expr = Expression::parse(&src).unwrap();
        let graph = expr.ir();
        let tape = Tape::new(graph).unwrap();
        let vars = graph.vars.clone();
        for p in [Precision::F64, Precision::F32] {
            let full = expr.scalar(p).unwrap();
            let compiled = |boxes: &[[Interval; 2]]| {
                let n = boxes.len();
                let out =
                    ivjit::internals::cpu::eval::eval_soa(&full, &inputs_for(&vars, boxes), n);
                (0..n)
                    .map(|i| Interval {
                        lo: out[i],
                        hi: out[n + i],
                    })
                    .collect::<Vec<_>>()
            };
            // Boxes with infinite, zero and signed-zero bounds.
            let boxes: Vec<[Interval; 2]> = special
                .iter()
                .flat_map(|&a| special.iter().map(move |&b| [a, b]))
                .collect();
            for (b, want) in boxes.iter().zip(compiled(&boxes)) {
                let got = tape.enclosure(p, b[0], b[1]);
                assert!(
                    same(got, want),
                    "case {case} {p}: {src}\nbox {b:?}: compiled {want:?}, tape {got:?}"
                );
                checked += 1;
            }
            for _ in 0..4 {
                let mut region = [Interval { lo: 0.0, hi: 0.0 }; 2];
                for iv in &mut region {
                    let c = -3.0 + 6.0 * g.unit();
                    let h = 2f64.powi(-(g.below(13) as i32)) * (0.5 + g.unit());
                    *iv = Interval {
                        lo: c - h,
                        hi: c + h,
                    };
                }
                let pruned = tape.pruned(p, region[0], region[1]);
                regions += 1;
                before += tape.len();
                after += pruned.len();
                shorter += usize::from(pruned.len() < tape.len());
                // In f32, boxes of f32 bounds (the compiled program's inputs are narrowed to
                // nearest, the tape's outward: the same for representable bounds).
                let boxes: Vec<[Interval; 2]> = (0..32)
                    .map(|_| {
                        region.map(|iv| match p {
                            Precision::F64 => inside(&mut g, iv),
                            Precision::F32 => inside(&mut g, iv).to_f32_enclosure(),
                        })
                    })
                    .collect();
                for (b, want) in boxes.iter().zip(compiled(&boxes)) {
                    let got = tape.enclosure(p, b[0], b[1]);
                    assert!(
                        same(got, want),
                        "case {case} {p}: {src}\nbox {b:?}: compiled {want:?}, tape {got:?}"
                    );
                    let cut = pruned.enclosure(p, b[0], b[1]);
                    assert!(same(cut, got), "case {case} {p}: {src}\nregion {region:?} box {b:?}: full tape {got:?}, pruned {cut:?}");
                    checked += 1;
                }
            }
        }
    }
    eprintln!(
        "{checked} boxes; {shorter} of {regions} pruned tapes shorter; {before} -> {after} instructions"
    );
    assert!(checked > 70_000, "{checked}");
    assert!(shorter * 3 > regions, "{shorter} of {regions}");
}

/// Regions with an end at a function's exact point (exp(0) = 1, log(1) = 0, acos(1) = 0, ...)
/// and boxes inside them whose ends lie a hair off it, where a bound exact only at the point
/// was not monotone in x (exp([1e-20, 1]) started below exp([0, 1])'s 1): the region's facts
/// (a nonnegative sqrt argument, a divisor away from 0) were false inside it and the pruned
/// render gave wrong classes. Also the poles of negative powers and roots at [0, 0], which
/// were taken for never empty (issue 29's audit). The pruned program must give the full
/// program's bits on every box inside the region.
#[test]
fn regions_at_exact_points_and_poles_keep_the_full_programs_bits() {
    let cases: &[(&str, [(f64, f64); 2])] = &[
        (
            "min(sqrt(exp(x*1e-20) - 1), y) - 1e-9",
            [(0.0, 1.0), (-1.0, 1.0)],
        ),
        (
            "y / (exp(x*1e-20) - 0.9999999999999999)",
            [(0.0, 1.0), (-1.0, 1.0)],
        ),
        (
            "y / (exp2(x*1e-20) - 0.9999999999999999)",
            [(0.0, 1.0), (-1.0, 1.0)],
        ),
        (
            "y / (exp10(x*1e-20) - 0.9999999999999999)",
            [(0.0, 1.0), (-1.0, 1.0)],
        ),
        (
            "y / (1.0000000000000002 - exp(x*1e-20))",
            [(-1.0, 0.0), (-1.0, 1.0)],
        ),
        (
            "y / (1.0000000000000002 - erfc(x*1e-20))",
            [(0.0, 1.0), (-1.0, 1.0)],
        ),
        ("min(sqrt(log(x)), y)", [(1.0, 2.0), (-1.0, 1.0)]),
        ("min(sqrt(-acos(x)), y)", [(0.5, 1.0), (-1.0, 1.0)]),
        ("min(sqrt(expm1(x)), y)", [(0.0, 1.0), (-1.0, 1.0)]),
        (
            "min(sqrt(atan(x)) + sqrt(erf(x)) + sqrt(sinh(x)), y)",
            [(0.0, 1.0), (-1.0, 1.0)],
        ),
        ("min(pown(floor(x), -2), y)", [(-0.5, 0.5), (-1.0, 1.0)]),
        ("max(rootn(floor(x), -3), y)", [(-0.5, 0.5), (-1.0, 1.0)]),
    ];
    let offsets = [0.0, 1e-300, 2f64.powi(-60), 1e-20, 1e-9, 0.25, 0.5, 0.75];
    let mut checked = 0usize;
    for (src, region) in cases {
        let expr = Expression::parse(src).unwrap();
        let graph = expr.ir();
        let vars = graph.vars.clone();
        let tape = Tape::binding(graph, &["x", "y"], Chains::AsWritten).unwrap();
        let names = vec!["x".to_string(), "y".to_string()];
        for p in [Precision::F64, Precision::F32] {
            let full = expr.scalar(p).unwrap();
            let region = region.map(|(lo, hi)| Interval { lo, hi });
            let pruned = tape
                .pruned_on(p, &region)
                .program_on(&["x", "y"], p, &region)
                .unwrap();
            // Boxes inside the region: each end moved inward by an offset, y cut in pieces.
            let mut boxes = Vec::new();
            for &a in &offsets {
                for &b in &offsets {
                    let (x, _) = (region[0], ());
                    let (lo, hi) = (x.lo + a, x.hi - b);
                    let (lo, hi) = match p {
                        Precision::F64 => (lo, hi),
                        Precision::F32 => {
                            ((lo as f32 as f64).max(x.lo), (hi as f32 as f64).min(x.hi))
                        }
                    };
                    if lo > hi {
                        continue;
                    }
                    for y in [(-1.0, -0.5), (-0.25, 0.75), (0.5, 1.0), (-1.0, 1.0)] {
                        boxes.push([Interval { lo, hi }, Interval { lo: y.0, hi: y.1 }]);
                    }
                }
            }
            let n = boxes.len();
            let want = ivjit::internals::cpu::eval::eval_soa(&full, &inputs_for(&vars, &boxes), n);
            let got =
                ivjit::internals::cpu::eval::eval_soa(&pruned, &inputs_for(&names, &boxes), n);
            let same = |a: f64, b: f64| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
            for i in 0..n {
                assert!(
                    same(want[i], got[i]) && same(want[n + i], got[n + i]),
                    "{src} ({p}) on {:?}: full [{}, {}], pruned [{}, {}]",
                    boxes[i],
                    want[i],
                    want[n + i],
                    got[i],
                    got[n + i]
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 2000, "{checked}");
}

/// A tape renderer's frame with the image lent to a closure (`render_with`, which the CLI's
/// and the benchmark's timed frames use) is the frame `render` returns: the same classes, rounds
/// and tape lengths, frame after frame.
#[test]
fn a_lent_image_is_the_returned_image() {
    use ivjit::search::tape::{TapeBackend, TapeRenderer};
    use ivjit::search::RenderOptions;
    let expr =
        Expression::parse("min(sqrt(x^2 + y^2) - 0.5, max(abs(x) - 0.3, abs(y) - 0.7))").unwrap();
    for p in [Precision::F64, Precision::F32] {
        let r = TapeRenderer::new(&expr, p, TapeBackend::Cpu).unwrap();
        for (w, h) in [(96, 64), (33, 70)] {
            let opts = RenderOptions {
                tiles: vec![16, 4, 1],
                ..RenderOptions::new(w, h, [-1.0, 1.0, -1.0, 1.0])
            };
            let (image, stats) = r.render(&opts).unwrap();
            let mut lent = Vec::new();
            let (rounds, lent_stats) = r.render_with(&opts, &mut |c| lent = c.to_vec()).unwrap();
            assert_eq!(lent, image.classes, "{p:?} {w}x{h}");
            assert_eq!((rounds, lent_stats), (image.rounds, stats), "{p:?} {w}x{h}");
            assert!(
                lent.contains(&ivjit::search::INSIDE) && lent.contains(&ivjit::search::OUTSIDE)
            );
        }
    }
}

/// A random tree whose top `depth` levels are `min`, `max` and `neg` (where sign demand
/// applies) over random subtrees.
fn sign_tree(g: &mut Gen, depth: u32) -> Tree {
    if depth == 0 {
        return g.tree(4);
    }
    match g.below(7) {
        0 => Tree::Neg(Box::new(sign_tree(g, depth - 1))),
        1 => g.tree(4),
        k => {
            let (a, b) = (
                Box::new(sign_tree(g, depth - 1)),
                Box::new(sign_tree(g, depth - 1)),
            );
            if k % 2 == 0 {
                Tree::Min(a, b)
            } else {
                Tree::Max(a, b)
            }
        }
    }
}

/// Sign demand (`Tape::signs_only`, what the renders and voxel searches run): on random trees
/// of min, max and neg over random subtrees, a tape pruned on a region R, and pruned again on
/// a region R2 inside it, gives on every box inside R2 enclosures whose bounds have the signs
/// (< 0, = 0, > 0, empty) of the full tape's — so every class (outside: lower bound > 0;
/// inside: upper bound < 0) is the full tape's — on regions of every class (unbounded, entire,
/// half-lines, signed zeros, the largest floats, points); its classes hold at exact points;
/// and it drops more than value pruning alone.
#[test]
fn sign_demand_keeps_every_class_and_drops_more() {
    use ivjit::search::tape::Tape;
    let mut g = Gen(0x5167_0001);
    let sign = |v: f64| -> i8 {
        if v.is_nan() {
            2
        } else if v > 0.0 {
            1
        } else if v < 0.0 {
            -1
        } else {
            0
        }
    };
    let (inf, max) = (f64::INFINITY, f64::MAX);
    let iv = |lo: f64, hi: f64| Interval { lo, hi };
    // Regions of every class, each with boxes inside it.
    let special = [
        iv(-inf, inf),
        iv(-inf, 0.0),
        iv(-0.0, inf),
        iv(max, inf),
        iv(-inf, -max),
        iv(-0.0, 0.0),
        iv(-5e-324, 5e-324),
        iv(0.25, 0.25),
    ];
    // A box inside `r`: all of it, or a finite part where it has one.
    let inside_any = |g: &mut Gen, r: Interval| -> Interval {
        if r.lo.is_finite() && r.hi.is_finite() && (r.hi - r.lo).is_finite() {
            return inside(g, r);
        }
        match g.below(3) {
            0 => r,
            _ => {
                let lo = if r.lo.is_finite() {
                    r.lo
                } else {
                    -(2.0 + g.unit()) * 1e3
                };
                let hi = if r.hi.is_finite() {
                    r.hi
                } else {
                    (2.0 + g.unit()) * 1e3
                };
                if lo <= hi {
                    iv(lo.max(r.lo), hi.min(r.hi))
                } else {
                    r
                }
            }
        }
    };
    let (mut checked, mut exact_points) = (0usize, 0usize);
    let (mut by_value, mut by_sign, mut fewer) = (0usize, 0usize, 0usize);
    for case in 0..250 {
        let t = sign_tree(&mut g, 4);
        let src = text(&t).replace("exp(", "abs(");
        let expr = Expression::parse(&src).unwrap();
        let tape = Tape::new(expr.ir()).unwrap();
        let signs = tape.clone().signs_only();
        for p in [Precision::F64, Precision::F32] {
            for k in 0..6 {
                let region: [Interval; 2] = if k < 2 {
                    [0, 1].map(|_| special[g.below(special.len() as u64) as usize])
                } else {
                    [0, 1].map(|_| {
                        let c = -3.0 + 6.0 * g.unit();
                        let h = 2f64.powi(-(g.below(10) as i32)) * (0.5 + g.unit());
                        iv(c - h, c + h)
                    })
                };
                let inner = region.map(|r| inside_any(&mut g, r));
                let (value1, sign1) = (
                    tape.pruned(p, region[0], region[1]),
                    signs.pruned(p, region[0], region[1]),
                );
                let (value2, sign2) = (
                    value1.pruned(p, inner[0], inner[1]),
                    sign1.pruned(p, inner[0], inner[1]),
                );
                by_value += value2.len();
                by_sign += sign2.len();
                fewer += usize::from(sign2.len() < value2.len());
                // One pruning keeps a subset: the values' decisions, and more by the signs.
                assert!(sign1.len() <= value1.len(), "case {case}: {src}");
                for _ in 0..8 {
                    let b = inner.map(|r| inside_any(&mut g, r));
                    let b = match p {
                        Precision::F64 => b,
                        Precision::F32 => b.map(|r| r.to_f32_enclosure()),
                    };
                    let full = tape.enclosure(p, b[0], b[1]);
                    for cut in [&sign1, &sign2] {
                        let got = cut.enclosure(p, b[0], b[1]);
                        assert_eq!(
                            (sign(got.lo), sign(got.hi)),
                            (sign(full.lo), sign(full.hi)),
                            "case {case} {p}: {src}\nregions {region:?} {inner:?} box {b:?}: \
                             full {full:?}, sign-pruned {got:?}"
                        );
                        checked += 1;
                    }
                    // The class at exact points of the box.
                    let got = sign2.enclosure(p, b[0], b[1]);
                    if !b.iter().all(|r| r.lo.is_finite() && r.hi.is_finite()) {
                        continue;
                    }
                    for _ in 0..4 {
                        let pt = b.map(|r| (r.lo + g.unit() * (r.hi - r.lo)).clamp(r.lo, r.hi));
                        let Some(v) = exact(&t, &rational(pt[0]), &rational(pt[1])) else {
                            continue;
                        };
                        let zero = BigRational::from_integer(BigInt::from(0));
                        if got.lo > 0.0 {
                            assert!(v > zero, "case {case} {p}: {src} at {pt:?}: {got:?}");
                        }
                        if got.hi < 0.0 {
                            assert!(v < zero, "case {case} {p}: {src} at {pt:?}: {got:?}");
                        }
                        exact_points += 1;
                    }
                }
            }
        }
    }
    eprintln!(
        "{checked} boxes, {exact_points} exact points; after two prunings {by_value} \
         instructions by value, {by_sign} with sign demand ({fewer} tapes shorter)"
    );
    assert!(
        checked > 40_000 && exact_points > 4_000,
        "{checked} {exact_points}"
    );
    assert!(
        by_sign * 10 < by_value * 9 && fewer > 300,
        "{by_sign} {by_value} {fewer}"
    );
}

/// Sign demand reaches the `min`s and `max`s whose value matters only by its sign — through
/// `min`, `max` and `neg` from the result — and no others: on x in [0, 0.25], y in [2, 3],
/// `min(x + 2, y)` drops its positive side x + 2 (neither side is below the other there), and
/// so do the same `min` under `neg` and `max`; under a subtraction it must not, since
/// `min(x + 2, y) - 2.5` is proven < 0 on the region while `y - 2.5` is not.
#[test]
fn sign_demand_reaches_through_min_max_and_neg_only() {
    let region = [
        Interval { lo: 0.0, hi: 0.25 },
        Interval { lo: 2.0, hi: 3.0 },
    ];
    let len = |src: &str, signs: bool, p: Precision| {
        let tape = Tape::new(Expression::parse(src).unwrap().ir()).unwrap();
        let tape = if signs { tape.signs_only() } else { tape };
        let cut = tape.pruned(p, region[0], region[1]);
        (cut.len(), cut.enclosure(p, region[0], region[1]))
    };
    for p in [Precision::F64, Precision::F32] {
        for (src, shorter) in [
            ("min(x + 2, y)", true),
            ("-min(x + 2, y)", true),
            ("max(-min(x + 2, y), -4)", true),
            ("min(x + 2, y) - 2.5", false),
            ("-2.5 + min(x + 2, y)", false),
            ("2 * min(x + 2, y)", false),
            ("abs(min(x + 2, y) - 2.5)", false),
        ] {
            let (by_value, full) = len(src, false, p);
            let (by_sign, cut) = len(src, true, p);
            assert_eq!(
                by_sign < by_value,
                shorter,
                "{src} {p}: {by_value} -> {by_sign}"
            );
            if !shorter {
                assert_eq!((cut.lo, cut.hi), (full.lo, full.hi), "{src} {p}");
            }
        }
        let (_, f) = len("min(x + 2, y) - 2.5", true, p);
        assert!(f.hi < 0.0, "{p}: {f:?}");
    }
}
