//! The hand-written CUDA C baseline: an expression's IR *before rewrites* translated the way a
//! user would write interval code by hand with directed-rounding intrinsics.
//!
//! Every product is four rounded-down and four rounded-up products with min/max; `x^n` is
//! repeated multiplication; `sqr(x)` is `x*x`; no rewrites. Elementary functions use CUDA's
//! round-to-nearest functions padded by one `nextafter` step on each side (this is a baseline to
//! compare speed with, not a rigorous evaluator). The kernel has the same structure-of-arrays
//! layout as ivjit's: `baseline(n, in, out)`, input array `2k` holds the lo bounds of variable
//! `k`, array `2k+1` its hi bounds, each `n` long; outputs likewise.

use ivjit::internals::ir::{Graph, NodeId, Op};
use ivjit::internals::scalar::{Precision, UnaryFn};
use std::fmt::Write;

/// The kernel's entry name.
pub const BASELINE_NAME: &str = "baseline";

/// Generates the CUDA C source of the baseline kernel, or says which operation it lacks.
pub fn cuda_source(graph: &Graph, precision: Precision) -> Result<String, String> {
    let g = Gen { precision };
    let live = graph.live();
    let mut body = String::new();
    for id in graph.ids() {
        if !live[id.index()] {
            continue;
        }
        g.node(graph, id, &mut body)?;
    }
    for (k, out) in graph.outputs.iter().enumerate() {
        let _ = writeln!(
            body,
            "    out[{}*n + i] = l{}; out[{}*n + i] = h{};",
            2 * k,
            out.0,
            2 * k + 1,
            out.0
        );
    }
    Ok(format!("{}{}\n    }}\n}}\n", g.prelude(), body))
}

struct Gen {
    precision: Precision,
}

impl Gen {
    fn f64(&self) -> bool {
        self.precision == Precision::F64
    }

    fn ty(&self) -> &'static str {
        if self.f64() {
            "double"
        } else {
            "float"
        }
    }

    /// The C name of a math function for this precision (`exp` or `expf`).
    fn math(&self, name: &str) -> String {
        if self.f64() {
            name.to_string()
        } else {
            format!("{name}f")
        }
    }

    fn lit(&self, x: f64) -> String {
        if x.is_nan() {
            return format!("(({})NAN)", self.ty());
        }
        if x.is_infinite() {
            return format!("({}TINF)", if x < 0.0 { "-" } else { "" });
        }
        if self.f64() {
            format!("{x:e}")
        } else {
            format!("{:e}f", x as f32)
        }
    }

    fn prelude(&self) -> String {
        let t = self.ty();
        let (p, s) = if self.f64() { ("d", "") } else { ("f", "f") };
        let two_pi = if self.f64() {
            "6.283185307179586"
        } else {
            "6.2831855f"
        };
        let half_pi = if self.f64() {
            "1.5707963267948966"
        } else {
            "1.5707964f"
        };
        format!(
            r#"// ivjit bench baseline ({t}): hand-written interval arithmetic with directed rounding.
#define T {t}
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
#define TINF ((T)INFINITY)
#ifndef NAN
#define NAN __int_as_float(0x7fffffff)
#endif
__device__ __forceinline__ T add_rd(T a, T b) {{ return __{p}add_rd(a, b); }}
__device__ __forceinline__ T add_ru(T a, T b) {{ return __{p}add_ru(a, b); }}
__device__ __forceinline__ T mul_rd(T a, T b) {{ return __{p}mul_rd(a, b); }}
__device__ __forceinline__ T mul_ru(T a, T b) {{ return __{p}mul_ru(a, b); }}
__device__ __forceinline__ T div_rd(T a, T b) {{ return __{p}div_rd(a, b); }}
__device__ __forceinline__ T div_ru(T a, T b) {{ return __{p}div_ru(a, b); }}
__device__ __forceinline__ T sqrt_rd(T a) {{ return __{p}sqrt_rd(a); }}
__device__ __forceinline__ T sqrt_ru(T a) {{ return __{p}sqrt_ru(a); }}
__device__ __forceinline__ T down(T a) {{ return nextafter{s}(a, -TINF); }}
__device__ __forceinline__ T up(T a) {{ return nextafter{s}(a, TINF); }}
__device__ __forceinline__ void imul(T al, T ah, T bl, T bh, T* l, T* h) {{
    *l = fmin{s}(fmin{s}(mul_rd(al, bl), mul_rd(al, bh)), fmin{s}(mul_rd(ah, bl), mul_rd(ah, bh)));
    *h = fmax{s}(fmax{s}(mul_ru(al, bl), mul_ru(al, bh)), fmax{s}(mul_ru(ah, bl), mul_ru(ah, bh)));
}}
__device__ __forceinline__ void idiv(T al, T ah, T bl, T bh, T* l, T* h) {{
    if (bl <= (T)0 && bh >= (T)0) {{ *l = -TINF; *h = TINF; return; }}
    *l = fmin{s}(fmin{s}(div_rd(al, bl), div_rd(al, bh)), fmin{s}(div_rd(ah, bl), div_rd(ah, bh)));
    *h = fmax{s}(fmax{s}(div_ru(al, bl), div_ru(al, bh)), fmax{s}(div_ru(ah, bl), div_ru(ah, bh)));
}}
// sin (phase = pi/2) or cos (phase = 0): maxima at phase + 2k*pi, minima at phase + pi + 2k*pi.
__device__ __forceinline__ void itrig(T lo, T hi, T phase, bool is_sin, T* l, T* h) {{
    T a = is_sin ? sin{s}(lo) : cos{s}(lo);
    T b = is_sin ? sin{s}(hi) : cos{s}(hi);
    T rl = down(fmin{s}(a, b)), rh = up(fmax{s}(a, b));
    const T two_pi = {two_pi};
    if (hi - lo >= two_pi) {{ rl = (T)-1; rh = (T)1; }}
    else {{
        if (floor{s}((hi - phase) / two_pi) >= ceil{s}((lo - phase) / two_pi)) rh = (T)1;
        T m = phase + two_pi / (T)2;
        if (floor{s}((hi - m) / two_pi) >= ceil{s}((lo - m) / two_pi)) rl = (T)-1;
    }}
    *l = fmax{s}(rl, (T)-1); *h = fmin{s}(rh, (T)1);
}}
#define HALF_PI {half_pi}
extern "C" __global__ void {BASELINE_NAME}(unsigned long long n, const T* __restrict__ in, T* __restrict__ out, unsigned long long flags) {{
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {{
"#
        )
    }

    fn node(&self, graph: &Graph, id: NodeId, out: &mut String) -> Result<(), String> {
        let i = id.0;
        let t = self.ty();
        let a = |k: usize| graph.op(id).args()[k].0;
        let line = match graph.op(id) {
            Op::Var(v) => format!(
                "T l{i} = in[{}*n + i], h{i} = in[{}*n + i];",
                2 * v,
                2 * v + 1
            ),
            Op::Const(c) => {
                let c = if self.f64() { c } else { c.to_f32_enclosure() };
                let (lo, hi) = if c.is_empty() {
                    (f64::NAN, f64::NAN)
                } else {
                    (c.lo, c.hi)
                };
                format!("const T l{i} = {}, h{i} = {};", self.lit(lo), self.lit(hi))
            }
            Op::Neg(_) => format!("T l{i} = -h{0}, h{i} = -l{0};", a(0)),
            Op::Add(..) => format!(
                "T l{i} = add_rd(l{0}, l{1}), h{i} = add_ru(h{0}, h{1});",
                a(0),
                a(1)
            ),
            Op::Sub(..) => format!(
                "T l{i} = add_rd(l{0}, -h{1}), h{i} = add_ru(h{0}, -l{1});",
                a(0),
                a(1)
            ),
            Op::Mul(..) => format!(
                "T l{i}, h{i}; imul(l{0}, h{0}, l{1}, h{1}, &l{i}, &h{i});",
                a(0),
                a(1)
            ),
            Op::Sqr(_) => format!(
                "T l{i}, h{i}; imul(l{0}, h{0}, l{0}, h{0}, &l{i}, &h{i});",
                a(0)
            ),
            Op::Div(..) => format!(
                "T l{i}, h{i}; idiv(l{0}, h{0}, l{1}, h{1}, &l{i}, &h{i});",
                a(0),
                a(1)
            ),
            Op::Sqrt(_) => format!(
                "T l{i} = sqrt_rd(fmax{s}(l{0}, ({t})0)), h{i} = sqrt_ru(h{0});",
                a(0),
                s = if self.f64() { "" } else { "f" }
            ),
            Op::Pow(x, e) => {
                let Some(c) = graph.as_const(e) else {
                    return Err("pow with a variable exponent".into());
                };
                if c.lo != c.hi {
                    return Err("pow with an interval exponent".into());
                }
                if c.lo == 0.5 {
                    format!(
                        "T l{i} = sqrt_rd(fmax{s}(l{0}, ({t})0)), h{i} = sqrt_ru(h{0});",
                        x.0,
                        s = if self.f64() { "" } else { "f" }
                    )
                } else if c.lo.fract() == 0.0 && (0.0..=64.0).contains(&c.lo) {
                    self.repeated_mul(i, x.0, c.lo as u32)
                } else {
                    return Err(format!("pow with exponent {}", c.lo));
                }
            }
            Op::Pown(x, k) if (0..=64).contains(&k) => self.repeated_mul(i, x.0, k as u32),
            Op::Elem(f, x) => self.elem(i, f, x.0)?,
            other => return Err(format!("{other:?} is not in the baseline")),
        };
        let _ = writeln!(out, "        {line}");
        Ok(())
    }

    fn repeated_mul(&self, i: u32, x: u32, k: u32) -> String {
        if k == 0 {
            return format!("const T l{i} = (T)1, h{i} = (T)1;");
        }
        let mut s = format!("T l{i} = l{x}, h{i} = h{x};");
        for _ in 1..k {
            let _ = write!(s, " imul(l{i}, h{i}, l{x}, h{x}, &l{i}, &h{i});");
        }
        s
    }

    fn elem(&self, i: u32, f: UnaryFn, x: u32) -> Result<String, String> {
        let m = |n: &str| self.math(n);
        Ok(match f {
            UnaryFn::Exp
            | UnaryFn::Exp2
            | UnaryFn::Expm1
            | UnaryFn::Log
            | UnaryFn::Log2
            | UnaryFn::Log1p
            | UnaryFn::Atan
            | UnaryFn::Tanh
            | UnaryFn::Sinh
            | UnaryFn::Asinh
            | UnaryFn::Cbrt => {
                let name = m(f.name());
                format!("T l{i} = down({name}(l{x})), h{i} = up({name}(h{x}));")
            }
            UnaryFn::Sin => {
                format!("T l{i}, h{i}; itrig(l{x}, h{x}, (T)HALF_PI, true, &l{i}, &h{i});")
            }
            UnaryFn::Cos => {
                format!("T l{i}, h{i}; itrig(l{x}, h{x}, (T)0, false, &l{i}, &h{i});")
            }
            other => return Err(format!("{} is not in the baseline", other.name())),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ivjit::Expression;

    #[test]
    fn tangle_source_has_directed_products() {
        let e = Expression::parse("x^4 - 5*x^2 + y^4 - 5*y^2 + z^4 - 5*z^2 + 11.8").unwrap();
        let src = cuda_source(e.initial_ir(), Precision::F64).unwrap();
        assert!(src.contains("__dmul_rd") && src.contains("imul("));
        let src = cuda_source(e.initial_ir(), Precision::F32).unwrap();
        assert!(src.contains("__fmul_ru") && src.contains("float"));
    }

    #[test]
    fn trig_and_exp_are_padded() {
        let e = Expression::parse("sin(x)*cos(y) + exp(-x*y)*atan(z)").unwrap();
        let src = cuda_source(e.initial_ir(), Precision::F64).unwrap();
        assert!(src.contains("itrig(") && src.contains("down(exp("));
    }

    /// Compiles every suite baseline with NVRTC (no GPU needed) when the library is present.
    #[test]
    fn baselines_compile_with_nvrtc() {
        if !ivjit::internals::gpu::runtime::nvrtc_present() {
            eprintln!("skipped: no libnvrtc");
            return;
        }
        for c in crate::workloads::suite()
            .into_iter()
            .filter(crate::workloads::has_baseline)
        {
            let e = Expression::parse(&c.text).unwrap();
            for p in [Precision::F64, Precision::F32] {
                let src = cuda_source(e.initial_ir(), p).unwrap();
                let opts = cudarc::nvrtc::CompileOptions {
                    options: vec!["--gpu-architecture=compute_90".into()],
                    ..Default::default()
                };
                let ptx = cudarc::nvrtc::compile_ptx_with_opts(&src, opts)
                    .unwrap_or_else(|e| panic!("{} {p:?}: {e:?}\n{src}", c.name));
                assert!(ptx.to_src().contains(BASELINE_NAME));
            }
        }
    }
}
