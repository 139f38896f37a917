//! Directed f64 and f32 arithmetic over a chunk's lanes by the processor's rounding mode: on
//! x86-64 processors with AVX2 and FMA but not AVX-512 (no embedded rounding), one inline
//! assembly block per instruction and chunk sets MXCSR's rounding to down or up, runs the
//! plain AVX instruction (`vaddpd`, `vfmadd213pd`, `vsqrtpd`, ...) over every lane, and puts the
//! caller's MXCSR back before the block ends. Each lane is then the IEEE 754 result rounded in
//! the asked direction, which is what the software path ([`super::lanes`], [`crate::round`])
//! computes by error-free transformations: the same bits (`tests`).
//!
//! Why the mode is switched inside the assembly and nowhere else: compiled Rust code assumes
//! round-to-nearest (the compiler may fold or move floating-point operations), so no Rust
//! floating-point operation may run while the mode is directed. Inside one `asm!` block the
//! compiler sees only an opaque block that reads and writes memory; the mode it leaves behind
//! is the one it found. Switching costs two `ldmxcsr` per instruction and chunk: about 2 to 4
//! ns against about 20 ns for 128 lanes of `vaddpd` (measured on the development machine, a
//! Zen 4 class AMD EPYC without AVX-512), where the software path takes about ten times that.
//!
//! MXCSR belongs to the thread: the operating system saves it with the thread's other
//! registers when the thread is switched out, and Linux starts a signal handler with the default
//! mode, so neither another thread nor a handler sees the directed mode.
//!
//! The mode written is the whole register: every exception masked, flush-to-zero and
//! denormals-are-zero off (so subnormals are kept, as the software path keeps them), and the
//! rounding direction. An f32 program's values are f32 values stored as f64: they are
//! narrowed (exactly) and widened (exactly) around the f32 instruction.
//!
//! [`super::eval`] uses these where [`super::mode_switching`] holds: the processor has
//! AVX2 and FMA, not AVX-512F, `IVJIT_CPU_ROUNDING` is not `software`, and a check at start-up
//! ([`works`]) saw the mode round as asked (an emulator may ignore it: then the software path).

use std::arch::asm;

use super::lanes::Op;
use crate::scalar::Round;

/// MXCSR rounding down, up or to nearest, with every exception masked and flush-to-zero and
/// denormals-are-zero off (bits 13-14: the rounding control; bits 7-12: the masks).
fn mode(r: Round) -> u32 {
    match r {
        Round::Nearest => 0x1F80,
        Round::Down => 0x3F80,
        Round::Up => 0x5F80,
    }
}

/// One assembly block: saves MXCSR, sets rounding `$r`, runs the lines over the chunk two
/// vectors of four lanes at a time (`{i}`: the byte offset of the pair, `$n` lanes in all),
/// and restores MXCSR. The lines name their own vector registers among the operands.
macro_rules! under_mode {
    ($r:expr, $n:expr, [$($line:expr),* $(,)?], $($operand:tt)*) => {{
        const { assert!($n % 8 == 0, "whole pairs of vectors") };
        let mut saved: u32 = 0;
        let mode: u32 = mode($r);
        // SAFETY: the lines read and write the arrays' `$n` lanes (offsets below `8 * $n`
        // bytes) and nothing else; the caller has AVX2 and FMA (the functions' target
        // features, which their callers' contracts guarantee); MXCSR is restored before the
        // block ends, so the Rust code after it runs in the mode it ran in before.
        unsafe {
            asm!(
                "stmxcsr dword ptr [{saved}]",
                "ldmxcsr dword ptr [{mode}]",
                "2:",
                $($line,)*
                "add {i}, 64",
                "cmp {i}, {end}",
                "jb 2b",
                "ldmxcsr dword ptr [{saved}]",
                saved = in(reg) &raw mut saved,
                mode = in(reg) &raw const mode,
                i = inout(reg) 0usize => _,
                end = in(reg) 8 * $n,
                $($operand)*
                options(nostack),
            );
        }
    }};
}

/// `out[l] = x[l] op y[l]` rounded in direction `r`, every lane.
#[target_feature(enable = "avx2,fma")]
pub(crate) fn binary<const N: usize>(
    out: &mut [f64; N],
    x: &[f64; N],
    y: &[f64; N],
    r: Round,
    op: Op,
) {
    macro_rules! each {
        ($insn:literal) => {
            under_mode!(
                r,
                N,
                [
                    "vmovupd {a}, ymmword ptr [{x} + {i}]",
                    concat!($insn, " {a}, {a}, ymmword ptr [{y} + {i}]"),
                    "vmovupd ymmword ptr [{out} + {i}], {a}",
                    "vmovupd {b}, ymmword ptr [{x} + {i} + 32]",
                    concat!($insn, " {b}, {b}, ymmword ptr [{y} + {i} + 32]"),
                    "vmovupd ymmword ptr [{out} + {i} + 32], {b}",
                ],
                x = in(reg) x.as_ptr(),
                y = in(reg) y.as_ptr(),
                out = in(reg) out.as_mut_ptr(),
                a = out(ymm_reg) _,
                b = out(ymm_reg) _,
            )
        };
    }
    match op {
        Op::Add => each!("vaddpd"),
        Op::Sub => each!("vsubpd"),
        Op::Mul => each!("vmulpd"),
        Op::Div => each!("vdivpd"),
    }
}

/// [`binary`] for an f32 program (values stored as f64): the f32 operation rounded in
/// direction `r`.
#[target_feature(enable = "avx2,fma")]
pub(crate) fn binary_f32<const N: usize>(
    out: &mut [f64; N],
    x: &[f64; N],
    y: &[f64; N],
    r: Round,
    op: Op,
) {
    macro_rules! each {
        ($insn:literal) => {
            under_mode!(
                r,
                N,
                [
                    "vcvtpd2ps {a:x}, ymmword ptr [{x} + {i}]",
                    "vcvtpd2ps {c:x}, ymmword ptr [{y} + {i}]",
                    concat!($insn, " {a:x}, {a:x}, {c:x}"),
                    "vcvtps2pd {a}, {a:x}",
                    "vmovupd ymmword ptr [{out} + {i}], {a}",
                    "vcvtpd2ps {b:x}, ymmword ptr [{x} + {i} + 32]",
                    "vcvtpd2ps {c:x}, ymmword ptr [{y} + {i} + 32]",
                    concat!($insn, " {b:x}, {b:x}, {c:x}"),
                    "vcvtps2pd {b}, {b:x}",
                    "vmovupd ymmword ptr [{out} + {i} + 32], {b}",
                ],
                x = in(reg) x.as_ptr(),
                y = in(reg) y.as_ptr(),
                out = in(reg) out.as_mut_ptr(),
                a = out(ymm_reg) _,
                b = out(ymm_reg) _,
                c = out(ymm_reg) _,
            )
        };
    }
    match op {
        Op::Add => each!("vaddps"),
        Op::Sub => each!("vsubps"),
        Op::Mul => each!("vmulps"),
        Op::Div => each!("vdivps"),
    }
}

/// `out[l] = x[l] * y[l] + z[l]` with one rounding in direction `r`, every lane.
#[target_feature(enable = "avx2,fma")]
pub(crate) fn fma<const N: usize>(
    out: &mut [f64; N],
    x: &[f64; N],
    y: &[f64; N],
    z: &[f64; N],
    r: Round,
) {
    // vfmadd132pd a, c, m: a = a * m + c.
    under_mode!(
        r,
        N,
        [
            "vmovupd {a}, ymmword ptr [{x} + {i}]",
            "vmovupd {c}, ymmword ptr [{z} + {i}]",
            "vfmadd132pd {a}, {c}, ymmword ptr [{y} + {i}]",
            "vmovupd ymmword ptr [{out} + {i}], {a}",
            "vmovupd {b}, ymmword ptr [{x} + {i} + 32]",
            "vmovupd {d}, ymmword ptr [{z} + {i} + 32]",
            "vfmadd132pd {b}, {d}, ymmword ptr [{y} + {i} + 32]",
            "vmovupd ymmword ptr [{out} + {i} + 32], {b}",
        ],
        x = in(reg) x.as_ptr(),
        y = in(reg) y.as_ptr(),
        z = in(reg) z.as_ptr(),
        out = in(reg) out.as_mut_ptr(),
        a = out(ymm_reg) _,
        b = out(ymm_reg) _,
        c = out(ymm_reg) _,
        d = out(ymm_reg) _,
    )
}

/// [`fma`] for an f32 program: one f32 rounding in direction `r`.
#[target_feature(enable = "avx2,fma")]
pub(crate) fn fma_f32<const N: usize>(
    out: &mut [f64; N],
    x: &[f64; N],
    y: &[f64; N],
    z: &[f64; N],
    r: Round,
) {
    // vfmadd213ps a, c, d: a = c * a + d.
    under_mode!(
        r,
        N,
        [
            "vcvtpd2ps {a:x}, ymmword ptr [{x} + {i}]",
            "vcvtpd2ps {c:x}, ymmword ptr [{y} + {i}]",
            "vcvtpd2ps {d:x}, ymmword ptr [{z} + {i}]",
            "vfmadd213ps {a:x}, {c:x}, {d:x}",
            "vcvtps2pd {a}, {a:x}",
            "vmovupd ymmword ptr [{out} + {i}], {a}",
            "vcvtpd2ps {b:x}, ymmword ptr [{x} + {i} + 32]",
            "vcvtpd2ps {c:x}, ymmword ptr [{y} + {i} + 32]",
            "vcvtpd2ps {d:x}, ymmword ptr [{z} + {i} + 32]",
            "vfmadd213ps {b:x}, {c:x}, {d:x}",
            "vcvtps2pd {b}, {b:x}",
            "vmovupd ymmword ptr [{out} + {i} + 32], {b}",
        ],
        x = in(reg) x.as_ptr(),
        y = in(reg) y.as_ptr(),
        z = in(reg) z.as_ptr(),
        out = in(reg) out.as_mut_ptr(),
        a = out(ymm_reg) _,
        b = out(ymm_reg) _,
        c = out(ymm_reg) _,
        d = out(ymm_reg) _,
    )
}

/// `out[l] = sqrt(x[l])` rounded in direction `r`, every lane.
#[target_feature(enable = "avx2,fma")]
pub(crate) fn sqrt<const N: usize>(out: &mut [f64; N], x: &[f64; N], r: Round) {
    under_mode!(
        r,
        N,
        [
            "vsqrtpd {a}, ymmword ptr [{x} + {i}]",
            "vmovupd ymmword ptr [{out} + {i}], {a}",
            "vsqrtpd {b}, ymmword ptr [{x} + {i} + 32]",
            "vmovupd ymmword ptr [{out} + {i} + 32], {b}",
        ],
        x = in(reg) x.as_ptr(),
        out = in(reg) out.as_mut_ptr(),
        a = out(ymm_reg) _,
        b = out(ymm_reg) _,
    )
}

/// [`sqrt`] for an f32 program: the f32 root rounded in direction `r`.
#[target_feature(enable = "avx2,fma")]
pub(crate) fn sqrt_f32<const N: usize>(out: &mut [f64; N], x: &[f64; N], r: Round) {
    under_mode!(
        r,
        N,
        [
            "vcvtpd2ps {a:x}, ymmword ptr [{x} + {i}]",
            "vsqrtps {a:x}, {a:x}",
            "vcvtps2pd {a}, {a:x}",
            "vmovupd ymmword ptr [{out} + {i}], {a}",
            "vcvtpd2ps {b:x}, ymmword ptr [{x} + {i} + 32]",
            "vsqrtps {b:x}, {b:x}",
            "vcvtps2pd {b}, {b:x}",
            "vmovupd ymmword ptr [{out} + {i} + 32], {b}",
        ],
        x = in(reg) x.as_ptr(),
        out = in(reg) out.as_mut_ptr(),
        a = out(ymm_reg) _,
        b = out(ymm_reg) _,
    )
}

/// `out[l]` = `x[l]` rounded to f32 in direction `r` (stored widened to f64), every lane: one
/// converting instruction under the mode, the bits of [`crate::round::narrow_f32`] (overflow
/// to MAX or infinity as the direction says, gradual underflow, NaN kept; a unit test).
#[target_feature(enable = "avx2,fma")]
pub(crate) fn narrow_f32<const N: usize>(out: &mut [f64; N], x: &[f64; N], r: Round) {
    under_mode!(
        r,
        N,
        [
            "vcvtpd2ps {a:x}, ymmword ptr [{x} + {i}]",
            "vcvtps2pd {a}, {a:x}",
            "vmovupd ymmword ptr [{out} + {i}], {a}",
            "vcvtpd2ps {b:x}, ymmword ptr [{x} + {i} + 32]",
            "vcvtps2pd {b}, {b:x}",
            "vmovupd ymmword ptr [{out} + {i} + 32], {b}",
        ],
        x = in(reg) x.as_ptr(),
        out = in(reg) out.as_mut_ptr(),
        a = out(ymm_reg) _,
        b = out(ymm_reg) _,
    )
}

/// Whether the switched mode rounds as asked here: a check made once before the evaluator
/// relies on it, on results that differ by direction (f64 and f32 sums, a product, an fma, a
/// square root, the narrowing to f32). On a processor that is what it says it is this holds;
/// an emulator or instrumentation tool may run the instructions in round-to-nearest whatever
/// MXCSR says (Valgrind does), and there the evaluator keeps the software path.
///
/// # Safety
/// The processor has AVX2 and FMA.
pub(crate) unsafe fn works() -> bool {
    let tiny = 2f64.powi(-60);
    let (one, up, down) = ([1.0; 8], Round::Up, Round::Down);
    let mut out = [0.0; 8];
    let mut ok = true;
    let all = |got: &[f64; 8], want: f64| got.iter().all(|&g| g == want);
    // SAFETY (each call): this function's contract.
    unsafe {
        binary(&mut out, &one, &[tiny; 8], up, Op::Add);
        ok &= all(&out, 1.0 + f64::EPSILON);
        binary(&mut out, &[-1.0; 8], &[tiny; 8], down, Op::Sub);
        ok &= all(&out, -1.0 - f64::EPSILON);
        // (1 + 2^-52)(1 - 2^-53) = 1 + 2^-53 - 2^-105: 1 down, 1 + 2^-52 up.
        let (a, b) = ([1.0 + f64::EPSILON; 8], [1.0 - f64::EPSILON / 2.0; 8]);
        binary(&mut out, &a, &b, down, Op::Mul);
        ok &= all(&out, 1.0);
        fma(&mut out, &one, &one, &[tiny; 8], up);
        ok &= all(&out, 1.0 + f64::EPSILON);
        sqrt(&mut out, &[2.0; 8], down);
        let root_down = out[0];
        sqrt(&mut out, &[2.0; 8], up);
        ok &= out[0] == root_down.next_up();
        binary_f32(&mut out, &one, &[tiny; 8], up, Op::Add);
        ok &= all(&out, f64::from(1.0 + f32::EPSILON));
        narrow_f32(&mut out, &[0.1; 8], down);
        let tenth_down = out[0];
        narrow_f32(&mut out, &[0.1; 8], up);
        ok &= out[0] == f64::from((tenth_down as f32).next_up()) && tenth_down < 0.1;
    }
    ok
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::same_bits;

    /// Whether the processor has AVX2 and FMA (else there is nothing to run).
    fn present() -> bool {
        if super::super::avx2::available() {
            return true;
        }
        println!("skipped: this processor has no AVX2 and FMA");
        false
    }

    same_bits::tests_against_the_software_path!(present);

    /// The start-up check passes on this processor (it has AVX2 and FMA and rounds as told).
    #[test]
    fn the_start_up_check_passes() {
        if present() {
            // SAFETY: the processor has AVX2 and FMA (checked above).
            assert!(unsafe { works() });
        }
    }

    /// The caller's mode survives: a rounding-to-nearest sum after a block rounded up is
    /// rounded to nearest (1 + 2^-60 is 1), and the mode register reads as before.
    #[test]
    fn the_callers_mode_is_restored() {
        if !present() {
            return;
        }
        let mut out = [0.0; 8];
        let (x, y) = ([1.0; 8], [2f64.powi(-60); 8]);
        // SAFETY: the processor has AVX2 and FMA (checked above).
        unsafe { binary(&mut out, &x, &y, Round::Up, Op::Add) };
        assert_eq!(out[0], 1.0 + f64::EPSILON, "rounded up inside the block");
        let after = std::hint::black_box(1.0f64) + std::hint::black_box(2f64.powi(-60));
        assert_eq!(after, 1.0, "rounded to nearest after it");
    }
}
