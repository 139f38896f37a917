//! `atan2Rev1(b, c, x)` and `atan2Rev2(a, c, x)` (`src/lower/reverse.rs`) have no ITF1788
//! vectors, so they get their own: boxes built around the places where the answer changes
//! shape — c's ends at 0, ±pi/2 and ±pi (each the float just below and just above, in the
//! program's precision) and inside every quadrant, b (a) positive, negative, holding 0, the
//! point 0, unbounded — and x bounded, half-bounded, entire or meeting the set only near 0.
//!
//! Two checks per box, each able to fail, against the reverse oracle
//! (`tests/common/reverse_oracle.rs`: the hull of floats proven to be points of the exact set,
//! each with a witness whose atan2 the real oracle encloses inside c):
//! - **sound**: the result holds that inner hull;
//! - **tight**: the result lies within `k` ulps (of the program's precision) of it, so a
//!   result as wide as x, or a piece that should have been dropped, fails. Near 0 an end may
//!   be a limit of the set that is not a point of it (y -> 0 as x' -> 0), where the proven
//!   points stop at the smallest candidate: there the slack is 1e-290 absolute; beyond 1e250
//!   (the largest candidates) an end may be infinite. Where the oracle proves no point and c
//!   is wider than 1e-9 (narrower c, a point above all, admit no proof by enclosure), the
//!   result must be empty, within that slack of 0, or a sliver of 2k ulps (a set that misses
//!   x by less than the rounding).
//!
//! On the CPU, f64 and f32; with a GPU (`--features gpu-tests`), on the GPU too.

use crate::common::elem_oracle as eo;
use crate::common::reverse_oracle as rev;
use crate::common::rng::splitmix64;
use ivjit::{BackendChoice, Evaluator, Expression, Interval, Precision};

/// The boxes (other, c, x) for a precision: every value representable in it.
fn boxes(precision: Precision, count: usize) -> Vec<[(f64, f64); 3]> {
    let p = |v: f64| match precision {
        Precision::F64 => v,
        Precision::F32 => v as f32 as f64,
    };
    // pi/2 and pi between consecutive floats of the precision.
    let (h_lo, h_hi, pi_lo, pi_hi) = match precision {
        Precision::F64 => {
            let h = std::f64::consts::FRAC_PI_2; // below pi/2
            let pi = std::f64::consts::PI; // below pi
            (h, h.next_up(), pi, pi.next_up())
        }
        Precision::F32 => {
            let h = std::f32::consts::FRAC_PI_2; // above pi/2
            let pi = std::f32::consts::PI; // above pi
            (
                h.next_down() as f64,
                h as f64,
                pi.next_down() as f64,
                pi as f64,
            )
        }
    };
    let mut angles = vec![
        0.0,
        -0.0,
        h_lo,
        h_hi,
        pi_lo,
        pi_hi,
        p(std::f64::consts::FRAC_PI_4),
        1.0,
        2.0,
        3.0,
        3.5,
        p(1e-30),
        4.0,
    ];
    let negatives: Vec<f64> = angles.iter().map(|a| -a).collect();
    angles.extend(negatives);
    angles.extend([f64::NEG_INFINITY, f64::INFINITY]);
    let inf = f64::INFINITY;
    let others = [
        (1.0, 2.0),
        (-2.0, -1.0),
        (-1.0, 1.0),
        (0.0, 0.0),
        (0.0, 3.0),
        (-3.0, 0.0),
        (0.5, 0.5),
        (-0.5, -0.5),
        (-inf, inf),
        (1.0, inf),
        (-inf, -1.0),
        (0.0, inf),
        (1e-3, 1e3),
    ];
    let xs = [
        (-10.0, 10.0),
        (-inf, inf),
        (0.0, 5.0),
        (-5.0, 0.0),
        (-1.0, -0.5),
        (0.25, 3.0),
        (0.0, 0.0),
        (-inf, 0.0),
        (1.0, inf),
        (-1e-3, 1e-3),
    ];
    let mut state = 0x0a7a_2e71_u64;
    let mut draw = |n: usize| (splitmix64(&mut state) % n as u64) as usize;
    let mut out = Vec::with_capacity(count);
    for i in 0..count {
        // A random float in [-4, 4] (a fifth of the time) or one of the special angles.
        let angle = |draw: &mut dyn FnMut(usize) -> usize| {
            if draw(5) == 0 {
                p((draw(1 << 20) as f64 / (1 << 20) as f64) * 8.0 - 4.0)
            } else {
                angles[draw(angles.len())]
            }
        };
        let (a, b) = (angle(&mut draw), angle(&mut draw));
        let mut c = if a <= b { (a, b) } else { (b, a) };
        // No interval has an infinite point.
        if c.0 == f64::INFINITY {
            c.0 = 4.0;
        }
        if c.1 == f64::NEG_INFINITY {
            c.1 = -4.0;
        }
        let mut other = others[draw(others.len())];
        let mut x = xs[draw(xs.len())];
        // Every third box a random other argument and x.
        if i % 3 == 0 {
            let mut v = || p((draw(1 << 20) as f64 / (1 << 18) as f64) - 2.0);
            let (a, b) = (v(), v());
            other = (a.min(b), a.max(b));
            let (a, b) = (v() * 3.0, v() * 3.0);
            x = (a.min(b), a.max(b));
        }
        out.push([other, c, x]);
    }
    out
}

/// `v` moved `k` ulps of the precision down (up: `-k`), from v rounded outward to it.
fn ulps_down(v: f64, k: i32, precision: Precision) -> f64 {
    match precision {
        Precision::F64 => {
            let mut r = v;
            for _ in 0..k.abs() {
                r = if k > 0 { r.next_down() } else { r.next_up() };
            }
            r
        }
        Precision::F32 => {
            let mut r = v as f32;
            if k > 0 && r as f64 > v {
                r = r.next_down();
            }
            if k < 0 && (r as f64) < v {
                r = r.next_up();
            }
            for _ in 0..k.abs() {
                r = if k > 0 { r.next_down() } else { r.next_up() };
            }
            r as f64
        }
    }
}

/// Runs both functions on the boxes; returns the failures and a summary.
fn run(choice: BackendChoice, precision: Precision, k: i32) -> (Vec<String>, String) {
    const NEAR_ZERO: f64 = 1e-290;
    const HUGE: f64 = 1e250;
    let boxes = boxes(precision, 3000);
    let mut failures = Vec::new();
    let mut summary = Vec::new();
    for name in ["atan2Rev1", "atan2Rev2"] {
        let src = format!("{name}(b, c, x)");
        let eval = Evaluator::new(&Expression::parse(&src).unwrap(), precision, choice)
            .unwrap_or_else(|e| panic!("{src}: {e}"));
        assert_eq!(
            eval.program().var_names,
            ["b", "c", "x"],
            "{src}'s variables"
        );
        let input: Vec<Vec<Interval>> = boxes
            .iter()
            .map(|bx| bx.iter().map(|&(lo, hi)| Interval { lo, hi }).collect())
            .collect();
        let got = eval.eval_many(&input).expect("eval_many");
        let (mut empty, mut worst) = (0, 0i32);
        for (bx, got) in boxes.iter().zip(&got) {
            let r = got[0];
            let r = (r.lo, r.hi);
            let at = format!(
                "{name}({:?}, {:?}, {:?}) = [{:e}, {:e}]",
                bx[0], bx[1], bx[2], r.0, r.1
            );
            let Some(inner) = rev::inner(name, 0, bx) else {
                empty += 1;
                // (A point of the set is proven inside c by an enclosure of its atan2: c
                // must be wider than a few ulps for that.)
                let wide_c = bx[1].1 - bx[1].0 >= 1e-9;
                // A set that misses x by less than the rounding may leave a sliver.
                let sliver = r.0.is_finite() && r.1 <= ulps_down(r.0, -2 * k, precision);
                let near_zero = r.0 >= -NEAR_ZERO && r.1 <= NEAR_ZERO;
                if wide_c && !r.0.is_nan() && !near_zero && !sliver {
                    failures.push(format!("{at}: the oracle proves no point of the set"));
                }
                continue;
            };
            if !rev::holds(r, &inner) {
                failures.push(format!(
                    "{at} misses points of the exact set, which holds {}",
                    rev::describe(&inner)
                ));
                continue;
            }
            // Tightness: within k ulps of the inner hull (its ends as floats, outward).
            let (ilo, ihi) = (eo::round_down(&inner.lo), eo::round_up(&inner.hi));
            let mut allowed_lo = ulps_down(ilo, k, precision);
            let mut allowed_hi = ulps_down(ihi, -k, precision);
            if ilo.abs() < NEAR_ZERO {
                allowed_lo = allowed_lo.min(-NEAR_ZERO);
            }
            if ihi.abs() < NEAR_ZERO {
                allowed_hi = allowed_hi.max(NEAR_ZERO);
            }
            // The proven points stop at the largest candidates (1e300, MAX) of an unbounded
            // set: beyond HUGE an end may be infinite.
            if ilo <= -HUGE {
                allowed_lo = f64::NEG_INFINITY;
            }
            if ihi >= HUGE {
                allowed_hi = f64::INFINITY;
            }
            if r.0 < allowed_lo || r.1 > allowed_hi {
                failures.push(format!(
                    "{at} is more than {k} ulps wider than the exact set's inner hull {}",
                    rev::describe(&inner)
                ));
            }
            // The widest distance seen, in ulps (for the summary).
            for j in 0..=k {
                if r.0 >= ulps_down(ilo, j, precision) && r.1 <= ulps_down(ihi, -j, precision) {
                    worst = worst.max(j);
                    break;
                }
            }
        }
        summary.push(format!(
            "{name}: {} boxes, {empty} with no proven point, at most {worst} ulps outside",
            boxes.len()
        ));
    }
    (failures, summary.join("; "))
}

fn check(choice: BackendChoice, precision: Precision, k: i32) {
    let (failures, summary) = run(choice, precision, k);
    eprintln!("atan2 reverse ({choice:?}, {precision:?}): {summary}");
    assert!(
        failures.is_empty(),
        "{} failures ({summary}); the first:\n{}",
        failures.len(),
        failures[..failures.len().min(12)].join("\n")
    );
}

#[test]
fn atan2_reverse_on_the_cpu() {
    check(BackendChoice::Cpu, Precision::F64, 4);
    check(BackendChoice::Cpu, Precision::F32, 4);
}

#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn gpu_atan2_reverse() {
    crate::common::gpu::require_gpu("gpu_atan2_reverse");
    check(BackendChoice::Gpu, Precision::F64, 16);
    check(BackendChoice::Gpu, Precision::F32, 16);
}
