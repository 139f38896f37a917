//! An oracle of the reverse operations (`sqrRev`, `absRev`, `coshRev`, `pownRev`, `mulRev`,
//! `sinRev`, `cosRev`, `tanRev`):
//! an *inner* enclosure of the hull of the exact set, an interval that every rigorous result
//! must hold, from the definitions and the real oracle's enclosures of the inverse functions
//! (`real_oracle::value`: sqrt, acosh, rootn, division, each enclosed in astro-float).
//!
//! The exact set is x met with pieces whose ends are values of the inverse function at c's
//! bounds (the square roots of c for sqrRev, and their negatives). Each such value v is known
//! to lie in `[v-, v+]`; the piece `[v-_lo, v+_hi]` is then inside the exact piece when taken
//! inward (`[lo+, hi-]`), and so is its meet with x: the hull of the inner pieces is inside
//! the exact hull. Ends that are limits (1 / inf = 0, rootn(0, -n) = inf) are exact. A result
//! that does not hold the inner hull misses a point of the exact set (or one within 2^-(p-24)
//! of it, relative), so the check can fail and never fails a rigorous result.
//!
//! The periodic ones have a piece `m pi ± s` for every integer m (s the principal inverse on
//! c); the hull is decided by the pieces next to x's ends, so the oracle takes the five
//! around each finite end (`m` from `floor(end / pi)`, in enough precision that `m pi` is
//! exact to 2^-256 relative even at 2^1023) and extends to an infinite end (every period
//! holds a piece once c meets f's range).
#![allow(dead_code)]

use astro_float::BigFloat;

use super::elem_oracle::{self as eo, bf, le, Enc, Val};
use super::real_oracle as ro;

/// The reverse operations of the language.
pub const OPERATIONS: &[&str] = &[
    "sqrRev",
    "absRev",
    "coshRev",
    "pownRev",
    "mulRev",
    "sinRev",
    "cosRev",
    "tanRev",
    "powRev1",
    "powRev2",
    "mulRevToPair1",
    "mulRevToPair2",
    "atan2Rev1",
    "atan2Rev2",
];

/// Whether `name` is one of [`OPERATIONS`].
pub fn is_reverse_op(name: &str) -> bool {
    OPERATIONS.contains(&name)
}

/// Exponents of pownRev in the class matrix.
pub const POWN_EXPONENTS: &[i64] = &[-4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 8];

/// Working precision of the enclosures.
const P: usize = 256;

/// A real interval with big-float ends (infinite ends allowed).
#[derive(Clone, Debug)]
pub struct Span {
    pub lo: BigFloat,
    pub hi: BigFloat,
}

fn span(lo: f64, hi: f64) -> Span {
    Span {
        lo: bf(lo),
        hi: bf(hi),
    }
}

/// The value of an inverse function at a float, enclosed: `None` outside its domain. Infinite
/// arguments and the poles of the negative roots are exact limits.
fn inverse(f: &str, x: f64) -> Option<Enc> {
    if x.is_infinite() {
        let pos = x > 0.0;
        return Some(Enc::point(bf(match f {
            "sqrt" | "acosh" => f64::INFINITY,
            g => {
                let n: i64 = g.trim_start_matches("rootn:").parse().unwrap();
                match (n > 0, pos) {
                    (true, true) => f64::INFINITY,
                    (true, false) => f64::NEG_INFINITY,
                    (false, _) => 0.0,
                }
            }
        })));
    }
    if x == 0.0 {
        if let Some(n) = f.strip_prefix("rootn:") {
            let n: i64 = n.parse().unwrap();
            if n < 0 {
                // The set approaches the pole: t^n in (0, ...] for every large t.
                return Some(Enc::point(bf(if x.is_sign_negative() {
                    f64::NEG_INFINITY
                } else {
                    f64::INFINITY
                })));
            }
        }
    }
    match ro::value(f, &[bf(x)], P) {
        Val::In(e) => Some(e),
        Val::Out => None,
    }
}

/// The quotient a / b of floats, enclosed; `None` for 0 / 0 and inf / inf (points of no
/// corner of the quotient set's hull). A zero divisor here is never reached.
fn quotient(a: f64, b: f64) -> Option<Enc> {
    if a.is_infinite() && b.is_infinite() {
        return None;
    }
    if b.is_infinite() {
        return Some(Enc::exact(0.0));
    }
    if a.is_infinite() {
        let pos = (a > 0.0) == (b > 0.0);
        return Some(Enc::exact(if pos {
            f64::INFINITY
        } else {
            f64::NEG_INFINITY
        }));
    }
    match ro::value("div", &[bf(a), bf(b)], P) {
        Val::In(e) => Some(e),
        Val::Out => None,
    }
}

/// The inner hull of the given pieces (each the enclosures of its ends) met with x.
fn inner_hull(x: (f64, f64), pieces: &[(Enc, Enc)]) -> Option<Span> {
    let mut out: Option<Span> = None;
    for (lo, hi) in pieces {
        // The piece inward: from the upper end of its lower end's enclosure.
        let l = if le(&bf(x.0), &lo.hi) {
            lo.hi.clone()
        } else {
            bf(x.0)
        };
        let h = if le(&hi.lo, &bf(x.1)) {
            hi.lo.clone()
        } else {
            bf(x.1)
        };
        if !le(&l, &h) {
            continue;
        }
        out = Some(match out {
            None => Span { lo: l, hi: h },
            Some(s) => Span {
                lo: if le(&s.lo, &l) { s.lo } else { l },
                hi: if le(&h, &s.hi) { s.hi } else { h },
            },
        });
    }
    out
}

/// The piece of an even function's inverse on `c` met with `[floor, inf]` and its negative.
fn symmetric(f: &str, c: (f64, f64), floor: f64) -> Vec<(Enc, Enc)> {
    let lo = c.0.max(floor);
    if lo > c.1 {
        return Vec::new();
    }
    let (Some(a), Some(b)) = (inverse(f, lo), inverse(f, c.1)) else {
        return Vec::new();
    };
    vec![(a.clone(), b.clone()), (b.neg(), a.neg())]
}

/// The inner hull of `name(c, x)` (`args` as the expression takes them: c, x; for pownRev
/// the exponent is `n`; for mulRev b, c, x), or `None` where the exact set is empty (or no
/// point of it is certain). Empty arguments are `(NaN, NaN)`.
pub fn inner(name: &str, n: i64, args: &[(f64, f64)]) -> Option<Span> {
    if args.iter().any(|a| a.0.is_nan()) {
        return None;
    }
    if name.starts_with("powRev") {
        return pow_rev(name, args[0], args[1], args[2]);
    }
    if name.starts_with("atan2Rev") {
        return atan2_rev(name == "atan2Rev1", args[0], args[1], args[2]);
    }
    if let Some(k) = name.strip_prefix("mulRevToPair") {
        // IEEE 1788's pair: the pieces in order, x being [entire].
        let k = if k == "1" { 0 } else { 1 };
        let entire = (f64::NEG_INFINITY, f64::INFINITY);
        return mul_rev_pieces(args[0], args[1])
            .get(k)
            .and_then(|piece| inner_hull(entire, std::slice::from_ref(piece)));
    }
    let (c, x) = match name {
        "mulRev" => (args[1], args[2]),
        _ => (args[0], args[1]),
    };
    let pieces: Vec<(Enc, Enc)> = match name {
        "absRev" => {
            let lo = c.0.max(0.0);
            if lo > c.1 {
                Vec::new()
            } else {
                vec![
                    (Enc::exact(lo), Enc::exact(c.1)),
                    (Enc::exact(-c.1), Enc::exact(-lo)),
                ]
            }
        }
        "sqrRev" => symmetric("sqrt", c, 0.0),
        "coshRev" => symmetric("acosh", c, 1.0),
        "pownRev" => return pown_rev(c, x, n),
        "mulRev" => return mul_rev(args[0], c, x),
        "sinRev" | "cosRev" | "tanRev" => return periodic_rev(name, c, x),
        other => panic!("no reverse oracle for {other}"),
    };
    inner_hull(x, &pieces)
}

/// An enclosure of the principal inverse of sin, cos or tan at a float of its domain (tan's
/// at an infinite argument is the limit, ±pi/2).
fn principal(name: &str, v: f64) -> Enc {
    if v.is_infinite() {
        let mut h = eo::pi_enc(P);
        h.lo.set_exponent(h.lo.exponent().unwrap() - 1);
        h.hi.set_exponent(h.hi.exponent().unwrap() - 1);
        return if v > 0.0 { h } else { h.neg() };
    }
    let f = match name {
        "sinRev" => "asin",
        "cosRev" => "acos",
        _ => "atan",
    };
    match ro::value(f, &[bf(v)], P) {
        Val::In(e) => e,
        Val::Out => unreachable!("{f}({v}) is in its domain"),
    }
}

/// `sinRev`, `cosRev`, `tanRev` (see the module comment). The pieces, as in
/// `src/lower/reverse.rs`: sin `m pi + s` (even m), `m pi - s` (odd m); cos `m pi + s`
/// (even), `(m + 1) pi - s` (odd); tan `m pi + s`; s = [g(c.lo), g(c.hi)] for the increasing
/// asin and atan, [acos(c.hi), acos(c.lo)] for acos.
fn periodic_rev(name: &str, c: (f64, f64), x: (f64, f64)) -> Option<Span> {
    let c = if name == "tanRev" {
        c
    } else {
        (c.0.max(-1.0), c.1.min(1.0))
    };
    if c.0 > c.1 {
        return None;
    }
    let (s_lo, s_hi) = if name == "cosRev" {
        (principal(name, c.1), principal(name, c.0))
    } else {
        (principal(name, c.0), principal(name, c.1))
    };
    // Precision for m pi: the ends' magnitude plus 256 bits.
    let ex = [x.0, x.1]
        .iter()
        .filter(|e| e.is_finite() && **e != 0.0)
        .map(|e| e.abs().log2().ceil() as usize)
        .max()
        .unwrap_or(0);
    let pp = P + ex + 64;
    let pi = eo::pi_enc(pp);
    let piece = |m: &BigFloat| -> (Enc, Enc) {
        let mut k = m.clone();
        let odd = {
            let mut h = m.clone();
            if !h.is_zero() {
                h.set_exponent(h.exponent().unwrap() - 1);
            }
            eo::cmp(&h.floor(), &h).is_ne()
        };
        let minus = odd && name != "tanRev";
        if odd && name == "cosRev" {
            k = k.add(
                &BigFloat::from_u64(1, 64),
                pp,
                astro_float::RoundingMode::None,
            );
        }
        let base = eo::mul_e(&Enc::point(k), &pi, pp);
        let (a, b) = if minus {
            (s_hi.neg(), s_lo.neg())
        } else {
            (s_lo.clone(), s_hi.clone())
        };
        (eo::add_e(&base, &a, pp), eo::add_e(&base, &b, pp))
    };
    let mut pieces = Vec::new();
    for e in [x.0, x.1] {
        if !e.is_finite() {
            continue;
        }
        let q = bf(e)
            .div(&pi.lo, pp, astro_float::RoundingMode::ToEven)
            .floor();
        for d in -2i64..=2 {
            let dm = if d < 0 {
                BigFloat::from_u64(d.unsigned_abs(), 64).neg()
            } else {
                BigFloat::from_u64(d as u64, 64)
            };
            let m = q.add(&dm, pp, astro_float::RoundingMode::None);
            pieces.push(piece(&m));
        }
    }
    let out = inner_hull(x, &pieces);
    // An infinite end: pieces without end in that direction (where no piece near the other
    // end is certain, the inner hull is that infinite end alone).
    let (ninf, pinf) = (x.0 == f64::NEG_INFINITY, x.1 == f64::INFINITY);
    if !ninf && !pinf {
        return out;
    }
    let mut sp = out.unwrap_or_else(|| {
        let end = if ninf { x.0 } else { x.1 };
        span(end, end)
    });
    if ninf {
        sp.lo = bf(f64::NEG_INFINITY);
    }
    if pinf {
        sp.hi = bf(f64::INFINITY);
    }
    Some(sp)
}

fn pown_rev(c: (f64, f64), x: (f64, f64), n: i64) -> Option<Span> {
    let root = format!("rootn:{n}");
    let pieces: Vec<(Enc, Enc)> = match n {
        0 => {
            return (c.0 <= 1.0 && c.1 >= 1.0).then(|| span(x.0, x.1));
        }
        n if n > 0 && n % 2 == 1 => match (inverse(&root, c.0), inverse(&root, c.1)) {
            (Some(a), Some(b)) => vec![(a, b)],
            _ => Vec::new(),
        },
        n if n > 0 => symmetric(&root, c, 0.0),
        n => {
            // t = c'^(1/n), decreasing in c': the positive part of c (and for odd n the
            // negative one) gives [root(hi), root(lo)].
            let mut v = Vec::new();
            let pos = (if c.0 <= 0.0 { 0.0 } else { c.0 }, c.1);
            if pos.0 <= pos.1 && pos.1 > 0.0 {
                if let (Some(a), Some(b)) = (inverse(&root, pos.1), inverse(&root, pos.0)) {
                    v.push((a.clone(), b.clone()));
                    if n % 2 == 0 {
                        v.push((b.neg(), a.neg()));
                    }
                }
            }
            let neg = (c.0, c.1.min(-0.0));
            if n % 2 != 0 && neg.0 <= neg.1 && neg.0 < 0.0 {
                // (-0 is the pole's side: rootn(-0, n) = -inf.)
                let top = if neg.1 == 0.0 { -0.0 } else { neg.1 };
                if let (Some(a), Some(b)) = (inverse(&root, top), inverse(&root, neg.0)) {
                    v.push((a, b));
                }
            }
            v
        }
    };
    inner_hull(x, &pieces)
}

fn mul_rev(b: (f64, f64), c: (f64, f64), x: (f64, f64)) -> Option<Span> {
    inner_hull(x, &mul_rev_pieces(b, c))
}

/// The pieces of the set of the t with t * b' in c for some b' in b (IEEE 1788's
/// `mulRevToPair`), in order, each by enclosures of its ends: the quotient set c / b (0 not in
/// b), the whole line (0 in b and in c), or up to two unbounded pieces.
fn mul_rev_pieces(b: (f64, f64), c: (f64, f64)) -> Vec<(Enc, Enc)> {
    let zero_in_b = b.0 <= 0.0 && b.1 >= 0.0;
    let ninf = Enc::exact(f64::NEG_INFINITY);
    let pinf = Enc::exact(f64::INFINITY);
    if !zero_in_b {
        // The quotient set c / b: its hull's ends are among the corners.
        let corners: Vec<Enc> = [(c.0, b.0), (c.0, b.1), (c.1, b.0), (c.1, b.1)]
            .iter()
            .filter_map(|&(p, q)| quotient(p, q))
            .collect();
        let lo = corners
            .iter()
            .map(|e| e.hi.clone())
            .reduce(|a, b| if le(&a, &b) { a } else { b });
        let hi = corners
            .iter()
            .map(|e| e.lo.clone())
            .reduce(|a, b| if le(&a, &b) { b } else { a });
        // (lo is the least corner's upper enclosure: at least the exact least corner.)
        return match (lo, hi) {
            (Some(lo), Some(hi)) => vec![(
                Enc {
                    lo: lo.clone(),
                    hi: lo,
                },
                Enc { lo: hi.clone(), hi },
            )],
            _ => Vec::new(),
        };
    }
    if c.0 <= 0.0 && c.1 >= 0.0 {
        return vec![(ninf, pinf)];
    }
    let mut pieces = Vec::new();
    let (num, l_den, u_den, l_has, u_has) = if c.0 > 0.0 {
        (c.0, b.0, b.1, b.0 < 0.0, b.1 > 0.0)
    } else {
        (c.1, b.1, b.0, b.1 > 0.0, b.0 < 0.0)
    };
    if l_has {
        if let Some(q) = quotient(num, l_den) {
            pieces.push((ninf.clone(), q));
        }
    }
    if u_has {
        if let Some(q) = quotient(num, u_den) {
            pieces.push((q, pinf.clone()));
        }
    }
    pieces
}

/// Whether the float interval `r` (`(NaN, NaN)` for empty) holds `s`.
pub fn holds(r: (f64, f64), s: &Span) -> bool {
    !r.0.is_nan() && le(&bf(r.0), &s.lo) && le(&s.hi, &bf(r.1))
}

/// `s` for messages.
pub fn describe(s: &Span) -> String {
    Enc {
        lo: s.lo.clone(),
        hi: s.hi.clone(),
    }
    .describe()
}

/// Candidates for the ends of a set that reaches far out or close to 0 (the limits of the
/// candidates-and-witnesses oracles below).
const EXTREMES: [f64; 11] = [
    0.0,
    1.0,
    -1.0,
    f64::MAX,
    -f64::MAX,
    1e300,
    -1e300,
    1e-300,
    -1e-300,
    f64::MIN_POSITIVE,
    -f64::MIN_POSITIVE,
];

/// Whether `base^e` (floats, base >= 0) is certainly in `c`: pow's domain (base > 0, or base = 0
/// with e > 0) and its enclosure inside c.
fn pow_in(base: f64, e: f64, c: (f64, f64)) -> bool {
    if base.is_nan()
        || base < 0.0
        || !e.is_finite()
        || !base.is_finite()
        || (base == 0.0 && e <= 0.0)
    {
        return false;
    }
    match ro::value("pow", &[bf(base), bf(e)], P) {
        Val::In(v) => le(&bf(c.0), &v.lo) && le(&v.hi, &bf(c.1)),
        Val::Out => false,
    }
}

/// Whether the f64 estimate `v` of a power lies in `c` widened by a millionth (a filter
/// before the costly proof, [`pow_in`]: it only skips powers that are far outside c).
fn roughly_in(v: f64, c: (f64, f64)) -> bool {
    let slack = |b: f64| 1e-6 * b.abs() + 1e-300;
    v >= c.0 - slack(c.0) && v <= c.1 + slack(c.1)
}

/// `v` and its float neighbors up to `k` ulps either side (finite ones).
fn around(v: f64, k: usize) -> Vec<f64> {
    let mut out = vec![v];
    let (mut d, mut u) = (v, v);
    for _ in 0..k {
        d = d.next_down();
        u = u.next_up();
        out.extend([d, u]);
    }
    out.retain(|t| t.is_finite());
    out
}

/// The inner hull of `powRev1(b, c, x)` (`powRev2(a, c, x)` for "powRev2"): the hull of
/// floats proven to be points of the exact set — each in x with a witness (an exponent of b,
/// a base of a) whose power is enclosed inside c by the real oracle's pow (or t = 0 with the
/// zero rules of pow's domain). The candidates are the values the set's ends can take (c's
/// ends to the power 1 / b's ends; log(c's ends) / log(a's ends)), a few ulps around them,
/// x's ends and extreme floats; so a result that misses a proven point, or ends a few ulps
/// inside an end of the set, fails. (A point's proof needs only one witness, so the hull is
/// inside the exact one whatever the candidates are.)
fn pow_rev(name: &str, ab: (f64, f64), c: (f64, f64), x: (f64, f64)) -> Option<Span> {
    let first = name == "powRev1";
    let ends = |i: (f64, f64)| [i.0, i.1];
    let mut candidates: Vec<f64> = Vec::new();
    candidates.extend(ends(x));
    candidates.extend(EXTREMES);
    for ce in ends(c) {
        for e in ends(ab) {
            let v = if first {
                ce.powf(1.0 / e)
            } else {
                ce.ln() / e.ln()
            };
            if v.is_finite() {
                candidates.extend(around(v, 4));
            }
        }
    }
    candidates.retain(|t| t.is_finite() && x.0 <= *t && *t <= x.1);
    let holds0 = |i: (f64, f64), v: f64| i.0 <= v && v <= i.1;
    let proven = |t: f64| -> bool {
        if first {
            // t^b' in c for some b' of b.
            if t < 0.0 {
                return false;
            }
            if t == 0.0 {
                return holds0(c, 0.0) && ab.1 > 0.0;
            }
            if holds0(ab, 0.0) && holds0(c, 1.0) {
                return true;
            }
            let mut witnesses: Vec<f64> = ends(ab).to_vec();
            for ce in ends(c) {
                let w = ce.ln() / t.ln();
                if w.is_finite() {
                    witnesses.extend(around(w.clamp(ab.0, ab.1), 2));
                }
            }
            witnesses
                .into_iter()
                .any(|w| holds0(ab, w) && w != 0.0 && roughly_in(t.powf(w), c) && pow_in(t, w, c))
        } else {
            // a'^t in c for some a' of a.
            if holds0(ab, 0.0) && holds0(c, 0.0) && t > 0.0 {
                return true;
            }
            if holds0(ab, 1.0) && holds0(c, 1.0) {
                return true;
            }
            let mut witnesses: Vec<f64> = ends(ab).to_vec();
            for ce in ends(c) {
                let w = (ce.ln() / t).exp();
                if w.is_finite() {
                    witnesses.extend(around(w.clamp(ab.0, ab.1), 2));
                }
            }
            witnesses
                .into_iter()
                .any(|w| holds0(ab, w) && w > 0.0 && roughly_in(w.powf(t), c) && pow_in(w, t, c))
        }
    };
    // The least and the greatest proven candidate (proofs are costly: scanned from each end).
    candidates.sort_by(f64::total_cmp);
    candidates.dedup();
    let lo = candidates.iter().copied().find(|&t| proven(t))?;
    let hi = candidates.iter().rev().copied().find(|&t| proven(t))?;
    Some(span(lo, hi))
}

/// Whether atan2(y, x) (floats, not both 0) is certainly in `c`: its real-oracle enclosure
/// lies inside c.
fn atan2_in(y: f64, x: f64, c: (f64, f64)) -> bool {
    if !y.is_finite() || !x.is_finite() || (y == 0.0 && x == 0.0) {
        return false;
    }
    match ro::value("atan2", &[bf(y), bf(x)], P) {
        Val::In(v) => le(&bf(c.0), &v.lo) && le(&v.hi, &bf(c.1)),
        Val::Out => false,
    }
}

/// The inner hull of `atan2Rev1(b, c, x)` (`first`: the y of x with atan2(y, x') in c for some
/// x' of b) or `atan2Rev2(a, c, x)` (the x' of x with atan2(y, x') in c for some y of a): the
/// hull of floats proven to be points of the exact set, each with a witness of the other
/// argument whose atan2 the real oracle encloses inside c. The candidates are the values the
/// set's ends can take (b's ends times tan of c's ends; a's ends over tan of c's ends), a few
/// ulps around them, 0, x's ends and extreme floats, as for [`pow_rev`].
fn atan2_rev(first: bool, other: (f64, f64), c: (f64, f64), x: (f64, f64)) -> Option<Span> {
    let ends = |i: (f64, f64)| [i.0, i.1];
    let mut candidates: Vec<f64> = Vec::new();
    candidates.extend(ends(x));
    candidates.extend(EXTREMES);
    let finite = |v: f64| if v.is_finite() { Some(v) } else { None };
    for e in ends(other) {
        let e = e.clamp(-f64::MAX, f64::MAX);
        for ce in ends(c) {
            let t = ce.clamp(-std::f64::consts::PI, std::f64::consts::PI).tan();
            let v = if first { e * t } else { e / t };
            if let Some(v) = finite(v) {
                candidates.extend(around(v, 4));
            }
        }
    }
    candidates.retain(|t| t.is_finite() && x.0 <= *t && *t <= x.1);
    let holds0 = |i: (f64, f64), v: f64| i.0 <= v && v <= i.1;
    let proven = |t: f64| -> bool {
        let mut witnesses: Vec<f64> = ends(other).to_vec();
        witnesses.extend([0.0, 1.0, -1.0, f64::MAX, -f64::MAX]);
        for ce in ends(c) {
            let tn = ce.clamp(-std::f64::consts::PI, std::f64::consts::PI).tan();
            // The other coordinate on the ray at angle ce through t.
            let w = if first { t / tn } else { t * tn };
            if !w.is_nan() {
                let w = w.clamp(other.0, other.1).clamp(-f64::MAX, f64::MAX);
                witnesses.extend(around(w, 2));
            }
        }
        witnesses.into_iter().any(|w| {
            let (y, xx) = if first { (t, w) } else { (w, t) };
            holds0(other, w) && roughly_in(y.atan2(xx), c) && atan2_in(y, xx, c)
        })
    };
    candidates.sort_by(f64::total_cmp);
    candidates.dedup();
    let lo = candidates.iter().copied().find(|&t| proven(t))?;
    let hi = candidates.iter().rev().copied().find(|&t| proven(t))?;
    Some(span(lo, hi))
}
