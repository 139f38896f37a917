use super::*;
use crate::scalar::{Builder, Type};

const ROUNDS: [Round; 3] = [Round::Down, Round::Up, Round::Nearest];

/// A program using every rounded operation with every rounding, plus min/max/select/compare.
fn sample(precision: Precision) -> Program {
    let mut b = Builder::new(precision, vec!["x".into(), "y".into()]);
    let xl = b.input(0, Bound::Lo);
    let xh = b.input(0, Bound::Hi);
    let yl = b.input(1, Bound::Lo);
    let yh = b.input(1, Bound::Hi);
    let mut outs = Vec::new();
    for r in ROUNDS {
        let a = b.add(xl, yl, r);
        let s = b.sub(xh, yh, r);
        let m = b.mul(a, s, r);
        let d = b.div(m, yh, r);
        let f = b.fma(d, xl, yl, r);
        let q = b.sqrt(f, r);
        outs.push((a, s));
        outs.push((m, d));
        outs.push((f, q));
    }
    let c = b.constant(-0.0);
    let lo = b.min(xl, c);
    let hi = b.max(xh, c);
    let lt = b.cmp(Cmp::Lt, xl, yl);
    let nan = b.is_nan(yh);
    let p = b.or(lt, nan);
    let sel = b.select(p, lo, hi);
    let neg = b.neg(sel);
    let abs = b.abs(neg);
    outs.push((lo, hi));
    outs.push((neg, abs));
    b.finish(outs)
}

fn arithmetic_lines(text: &str) -> Vec<&str> {
    text.lines()
        .map(str::trim)
        .filter(|l| {
            ["add.", "sub.", "mul.", "div.", "fma.", "sqrt."]
                .iter()
                .any(|op| l.starts_with(op))
        })
        // Integer address arithmetic is not rounded.
        .filter(|l| l.contains(".f64") || l.contains(".f32"))
        .collect()
}

#[test]
fn output_is_deterministic() {
    for p in [Precision::F64, Precision::F32] {
        let a = emit(&sample(p));
        let b = emit(&sample(p));
        assert_eq!(a, b);
    }
}

#[test]
fn header_and_kernel_signature() {
    let text = emit(&sample(Precision::F64));
    assert!(text.contains(".version 8.0\n.target sm_90\n.address_size 64\n"));
    assert!(text.contains(
        ".visible .entry ivjit_kernel(\n\t.param .u64 n,\n\t.param .u64 inputs,\n\t.param .u64 outputs,\n\t.param .u64 flags\n)"
    ));
}

#[test]
fn every_float_arithmetic_instruction_has_a_rounding_modifier() {
    for p in [Precision::F64, Precision::F32] {
        let text = emit(&sample(p));
        let lines = arithmetic_lines(&text);
        // f32: the two directed divisions are inline, each a product and six fmas (with the
        // IEEE division kept as their slow path).
        // f64: the two directed square roots likewise, each four products and six fmas.
        let expected = match p {
            Precision::F64 => 18 + 2 * 10,
            Precision::F32 => 18 + 2 * 7,
        };
        assert_eq!(lines.len(), expected, "{text}");
        for l in lines {
            let op = l.split_whitespace().next().unwrap();
            let parts: Vec<&str> = op.split('.').collect();
            assert_eq!(parts.len(), 3, "{l}");
            assert!(["rn", "rm", "rp"].contains(&parts[1]), "{l}");
            assert_eq!(parts[2], p.name(), "{l}");
        }
    }
}

#[test]
fn rounding_directions_map_to_rm_rp_rn() {
    let text = emit(&sample(Precision::F64));
    for op in ["add", "sub", "mul", "div", "fma", "sqrt"] {
        for m in ["rm", "rp", "rn"] {
            assert!(text.contains(&format!("\t{op}.{m}.f64 ")), "{op}.{m}");
        }
    }
}

#[test]
fn no_ftz_no_func_no_approx() {
    for p in [Precision::F64, Precision::F32] {
        let text = emit(&sample(p));
        // The approximations that seed the inline f32 division's and f64 square root's
        // candidates, which are checked exactly before they are used.
        let text: String = text
            .lines()
            .filter(|l| {
                let l = l.trim();
                !l.starts_with("rcp.approx.ftz.f32 %dr, ")
                    && !l.starts_with("rsqrt.approx.ftz.f64 %sy, ")
            })
            .collect::<Vec<_>>()
            .join("\n");
        for bad in [".ftz", ".func", "call", ".approx", ".full", ".sat"] {
            assert!(!text.contains(bad), "{bad} in\n{text}");
        }
    }
}

#[test]
fn f32_programs_use_only_f32() {
    let text = emit(&sample(Precision::F32));
    assert!(!text.contains("f64"), "{text}");
    assert!(text.contains(".reg .f32 %f<"));
    assert!(text.contains("shl.b64 %offset, %i, 2;"));
}

#[test]
fn registers_follow_value_numbers() {
    let p = sample(Precision::F64);
    let text = emit(&p);
    for (i, inst) in p.insts.iter().enumerate() {
        let reg = match inst.ty() {
            Type::Float => format!("%f{i},"),
            Type::Bool => format!("%p{i},"),
        };
        assert!(text.contains(&reg), "{reg} for {inst:?}");
    }
}

#[test]
fn constants_are_exact_hex() {
    let mut b = Builder::new(Precision::F64, vec!["x".into()]);
    let x = b.input(0, Bound::Lo);
    let c = b.constant(0.1);
    let z = b.constant(-0.0);
    let s = b.add(x, c, Round::Up);
    let text = emit(&b.finish(vec![(s, z)]));
    assert!(text.contains("0d3FB999999999999A;"), "{text}");
    assert!(text.contains("0d8000000000000000;"), "{text}");

    let mut b = Builder::new(Precision::F32, vec!["x".into()]);
    let x = b.input(0, Bound::Lo);
    let c = b.constant(0.1f32 as f64);
    let s = b.add(x, c, Round::Down);
    let text = emit(&b.finish(vec![(s, s)]));
    assert!(text.contains("mov.f32 %f1, 0f3DCCCCCD;"), "{text}");
}

#[test]
fn loads_and_stores_use_the_soa_arrays() {
    let mut b = Builder::new(Precision::F64, vec!["x".into(), "y".into()]);
    let yh = b.input(1, Bound::Hi);
    let xl = b.input(0, Bound::Lo);
    let text = emit(&b.finish(vec![(xl, yh)]));
    // Loaded ahead (before the loop, then one element ahead in it), read from the prefetch.
    assert!(text.contains("ld.global.nc.f64 %pf3, [%in3];"), "{text}");
    assert!(
        text.contains("@%more ld.global.nc.f64 %pf0, [%in0];"),
        "{text}"
    );
    assert!(text.contains("mov.f64 %f0, %pf3;"), "{text}");
    assert!(text.contains("mov.f64 %f1, %pf0;"), "{text}");
    assert!(text.contains("mad.lo.u64 %in3, %arraybytes, 3, %pin;"));
    assert!(!text.contains("%in1,"), "unused arrays get no pointer");
    assert!(text.contains("st.global.f64 [%out0], %f1;"));
    assert!(text.contains("st.global.f64 [%out1], %f0;"));
}

/// Every load of the kernel's loop is a prefetch of the next element, issued before the first
/// floating-point operation of the current one (software pipelining).
#[test]
fn the_kernel_loads_the_next_element_before_computing() {
    let mut b = Builder::new(Precision::F64, vec!["x".into()]);
    let lo = b.input(0, Bound::Lo);
    let hi = b.input(0, Bound::Hi);
    let s = b.mul(lo, hi, Round::Down);
    let t = b.mul(lo, hi, Round::Up);
    let text = emit(&b.finish(vec![(s, t)]));
    let body = &text[text.find("$L_loop:").expect("a loop")..];
    let first_fp = body.find("mul.").expect("a product");
    let loads: Vec<usize> = body.match_indices("ld.global").map(|(i, _)| i).collect();
    assert_eq!(loads.len(), 2, "{text}");
    assert!(loads.iter().all(|&i| i < first_fp), "{text}");
    assert!(
        body[..first_fp].matches("@%more ld.global.nc").count() == 2,
        "{text}"
    );
}

/// The exact check of the inline f32 division (`Emitter::div_f32_directed`), written again with
/// the CPU's correctly rounded `fma`: for operands in the fast range it accepts the correctly
/// rounded quotient and rejects every other candidate near it (one to three steps away, either
/// side), so whatever candidate the GPU's reciprocal iteration gives, only the right one is
/// returned.
#[test]
fn inline_f32_division_check_accepts_exactly_the_rounded_quotient() {
    // The PTX's predicates: e1 = a - b*q, e2 = a - b*n for q's neighbour n.
    fn accepts(a: f32, b: f32, q: f32, r: Round) -> bool {
        let sb = b > 0.0;
        let step: i32 = match (r, q > 0.0) {
            (Round::Down, true) | (Round::Up, false) => 1,
            _ => -1,
        };
        let n = f32::from_bits((q.to_bits() as i32).wrapping_add(step) as u32);
        let e1 = (-b).mul_add(q, a);
        let e2 = (-b).mul_add(n, a);
        let (below_q, above_n) = if r == Round::Down {
            (sb, !sb)
        } else {
            (!sb, sb)
        };
        let c1 = e1 == 0.0 || (e1 > 0.0 && below_q) || (e1 < 0.0 && above_n);
        let c2 = (e2 > 0.0 && above_n) || (e2 < 0.0 && below_q);
        c1 && c2
    }
    let mut state = 1788u64;
    let mut next = || crate::workloads::splitmix64(&mut state);
    let in_range = |bits: u64, e_span: u64| {
        // A normal f32 of magnitude in [2^-63, 2^63) (the fast range), random sign.
        let e = 64 + (bits % e_span) as u32; // biased exponent 64..
        let m = ((bits >> 8) & 0x7f_ffff) as u32;
        let s = ((bits >> 40) & 1) as u32;
        f32::from_bits(s << 31 | e.min(189) << 23 | m)
    };
    let mut exact_quotients = 0;
    for k in 0..400_000u64 {
        let (a, b) = if k % 16 == 1 {
            // The range's edges: magnitudes exactly 2^-63 or 2^63 (issue 29's audit).
            let edge = |bits: u64| {
                let e = if bits & 1 == 0 {
                    2f32.powi(-63)
                } else {
                    2f32.powi(63)
                };
                if bits & 2 == 0 {
                    e
                } else {
                    -e
                }
            };
            (edge(next()), edge(next()))
        } else if k % 16 == 3 {
            (2f32.powi(63), in_range(next(), 126))
        } else if k % 4 == 0 {
            // An exact quotient: a = c * b with 12-bit c and b (the hardest case for a check).
            let c = f32::from_bits((next() as u32 & 0x807f_f000) | 0x3f80_0000);
            let b =
                f32::from_bits((next() as u32 & 0x807f_f000) | (120 + (next() % 16) as u32) << 23);
            (c * b, b)
        } else {
            (in_range(next(), 126), in_range(next(), 126))
        };
        if !(a.abs() >= 2f32.powi(-63)
            && a.abs() <= 2f32.powi(63)
            && b.abs() >= 2f32.powi(-63)
            && b.abs() <= 2f32.powi(63))
        {
            continue;
        }
        for r in [Round::Down, Round::Up] {
            let q = crate::round::div_f32(a, b, r);
            if (a / b) == q {
                exact_quotients += 1;
            }
            assert!(
                accepts(a, b, q, r),
                "{a:e} / {b:e} {r:?}: rejects the right {q:e}"
            );
            for d in [-3i32, -2, -1, 1, 2, 3] {
                let w = f32::from_bits((q.to_bits() as i32).wrapping_add(d) as u32);
                assert!(
                    !accepts(a, b, w, r),
                    "{a:e} / {b:e} {r:?}: accepts {w:e} for {q:e}"
                );
            }
            // Wildly wrong candidates too.
            for w in [
                0.0f32,
                -0.0,
                f32::INFINITY,
                f32::NEG_INFINITY,
                f32::NAN,
                -q,
                2.0 * q,
            ] {
                if w.to_bits() != q.to_bits() {
                    assert!(!accepts(a, b, w, r), "{a:e} / {b:e} {r:?}: accepts {w:e}");
                }
            }
        }
    }
    assert!(exact_quotients > 10_000, "{exact_quotients}");
}

/// The exact check of the inline f64 square root (`Emitter::sqrt_f64_directed`), written again
/// with the CPU's correctly rounded `fma`: for operands in [2^-900, 2^900] it accepts the
/// correctly rounded root and rejects every other candidate near it (one to three steps away,
/// either side), the negated root and wild values.
#[test]
fn inline_f64_sqrt_check_accepts_exactly_the_rounded_root() {
    fn accepts(a: f64, q: f64, r: Round) -> bool {
        let step: i64 = if r == Round::Down { 1 } else { -1 };
        let u = f64::from_bits((q.to_bits() as i64).wrapping_add(step) as u64);
        let e = (-q).mul_add(q, a);
        let t = (-u).mul_add(u, a);
        let ok = match r {
            Round::Down => e >= 0.0 && t < 0.0,
            _ => e <= 0.0 && t > 0.0,
        };
        ok && q > 0.0
    }
    let mut state = 1789u64;
    let mut next = || crate::workloads::splitmix64(&mut state);
    let mut exact = 0;
    for k in 0..300_000u64 {
        let a = if k % 64 == 1 {
            // The range's edges exactly (issue 29's audit).
            [2f64.powi(-900), 2f64.powi(900)][(next() & 1) as usize]
        } else if k % 4 == 0 {
            // An exact square (26-bit root), the hardest case for the check.
            let m = f64::from_bits((next() & 0x000f_ffff_c000_0000) | 0x3ff0_0000_0000_0000);
            let s = m * 2f64.powi((next() % 800) as i32 - 400);
            s * s
        } else {
            let e = (next() % 1800) as i64 - 900;
            f64::from_bits((next() >> 12) | ((e + 1023) as u64) << 52)
        };
        if !(2f64.powi(-900)..=2f64.powi(900)).contains(&a) {
            continue;
        }
        for r in [Round::Down, Round::Up] {
            let q = crate::round::sqrt_f64(a, r);
            if q * q == a {
                exact += 1;
            }
            assert!(
                accepts(a, q, r),
                "sqrt {a:e} {r:?}: rejects the right {q:e}"
            );
            for d in [-3i64, -2, -1, 1, 2, 3] {
                let w = f64::from_bits((q.to_bits() as i64).wrapping_add(d) as u64);
                assert!(
                    !accepts(a, w, r),
                    "sqrt {a:e} {r:?}: accepts {w:e} for {q:e}"
                );
            }
            for w in [
                0.0f64,
                -0.0,
                f64::INFINITY,
                f64::NEG_INFINITY,
                f64::NAN,
                -q,
                2.0 * q,
            ] {
                assert!(!accepts(a, w, r), "sqrt {a:e} {r:?}: accepts {w:e}");
            }
        }
    }
    assert!(exact > 10_000, "{exact}");
}

/// The inline directed f32 division and f64 square root go only into programs of at most
/// `INLINE_MAX_INSTS` instructions; a longer program calls the subroutines (shared code: inline,
/// Prospero's spilling single kernel ran 24-34 % slower).
#[test]
fn long_programs_keep_the_division_and_root_subroutines() {
    for (p, len) in [
        (Precision::F32, 10),
        (Precision::F32, INLINE_MAX_INSTS + 10),
        (Precision::F64, 10),
        (Precision::F64, INLINE_MAX_INSTS + 10),
    ] {
        let mut b = Builder::new(p, vec!["x".into()]);
        let lo = b.input(0, Bound::Lo);
        let hi = b.input(0, Bound::Hi);
        let mut acc = b.add(lo, hi, Round::Up);
        let one = b.constant(1.0);
        for _ in 0..len {
            acc = b.add(acc, one, Round::Up);
        }
        let (q, s) = (b.div(lo, acc, Round::Down), b.sqrt(acc, Round::Up));
        let program = b.finish(vec![(q, s)]);
        let inline = program.insts.len() <= INLINE_MAX_INSTS;
        assert_eq!(inline, len < INLINE_MAX_INSTS, "{p} {len}");
        let text = emit(&program);
        let (seed, ieee) = match p {
            Precision::F32 => ("rcp.approx.ftz.f32", "div.rm.f32"),
            Precision::F64 => ("rsqrt.approx.ftz.f64", "sqrt.rp.f64"),
        };
        assert_eq!(text.contains(seed), inline, "{p} {len}");
        assert!(
            text.contains(ieee),
            "{p} {len}: the IEEE operation stays (slow path or call)"
        );
    }
}
