// ivjit GPU runtime: the point functions of the scalar IR (`Inst::Point`), one entry point per
// function and precision, each a plain call of the CUDA math library.
//
// Compiled by NVRTC at first use (src/gpu/runtime.rs) with -rdc=true, so every entry point is a
// `.visible .func` in the PTX, which the driver's linker joins with the generated kernel (the
// kernel declares the ones it calls as `.extern .func`). Options: no fast math, --ftz=false,
// --prec-div=true, --prec-sqrt=true, --fmad=true (the default, the configuration NVIDIA's accuracy
// tables describe). Each entry point is guarded by `IVJIT_<name>_<precision>` so that a kernel's
// runtime holds only the functions it calls (NVRTC gets one -D per function).
//
// The results are the library's round-to-nearest approximations, whose error bounds (in ulps)
// are tabulated in src/ptx/accuracy.rs; the kernel pads them outward inline. Nothing here is
// rigorous on its own.
//
// Naming: ivjit_<name>_<f64|f32>. Binary functions: atan2(y, x) with the first operand y,
// pow(x, y), hypot(x, y); the argument order is the IR's operand order.

#ifdef IVJIT_exp_f64
extern "C" __device__ double ivjit_exp_f64(double x) { return exp(x); }
#endif
#ifdef IVJIT_exp_f32
extern "C" __device__ float ivjit_exp_f32(float x) { return expf(x); }
#endif
#ifdef IVJIT_exp2_f64
extern "C" __device__ double ivjit_exp2_f64(double x) { return exp2(x); }
#endif
#ifdef IVJIT_exp2_f32
extern "C" __device__ float ivjit_exp2_f32(float x) { return exp2f(x); }
#endif
#ifdef IVJIT_exp10_f64
extern "C" __device__ double ivjit_exp10_f64(double x) { return exp10(x); }
#endif
#ifdef IVJIT_exp10_f32
extern "C" __device__ float ivjit_exp10_f32(float x) { return exp10f(x); }
#endif
#ifdef IVJIT_expm1_f64
extern "C" __device__ double ivjit_expm1_f64(double x) { return expm1(x); }
#endif
#ifdef IVJIT_expm1_f32
extern "C" __device__ float ivjit_expm1_f32(float x) { return expm1f(x); }
#endif
#ifdef IVJIT_log_f64
extern "C" __device__ double ivjit_log_f64(double x) { return log(x); }
#endif
#ifdef IVJIT_log_f32
extern "C" __device__ float ivjit_log_f32(float x) { return logf(x); }
#endif
#ifdef IVJIT_log2_f64
extern "C" __device__ double ivjit_log2_f64(double x) { return log2(x); }
#endif
#ifdef IVJIT_log2_f32
extern "C" __device__ float ivjit_log2_f32(float x) { return log2f(x); }
#endif
#ifdef IVJIT_log10_f64
extern "C" __device__ double ivjit_log10_f64(double x) { return log10(x); }
#endif
#ifdef IVJIT_log10_f32
extern "C" __device__ float ivjit_log10_f32(float x) { return log10f(x); }
#endif
#ifdef IVJIT_log1p_f64
extern "C" __device__ double ivjit_log1p_f64(double x) { return log1p(x); }
#endif
#ifdef IVJIT_log1p_f32
extern "C" __device__ float ivjit_log1p_f32(float x) { return log1pf(x); }
#endif
#ifdef IVJIT_sin_f64
extern "C" __device__ double ivjit_sin_f64(double x) { return sin(x); }
#endif
#ifdef IVJIT_sin_f32
extern "C" __device__ float ivjit_sin_f32(float x) { return sinf(x); }
#endif
#ifdef IVJIT_cos_f64
extern "C" __device__ double ivjit_cos_f64(double x) { return cos(x); }
#endif
#ifdef IVJIT_cos_f32
extern "C" __device__ float ivjit_cos_f32(float x) { return cosf(x); }
#endif
#ifdef IVJIT_tan_f64
extern "C" __device__ double ivjit_tan_f64(double x) { return tan(x); }
#endif
#ifdef IVJIT_tan_f32
extern "C" __device__ float ivjit_tan_f32(float x) { return tanf(x); }
#endif
#ifdef IVJIT_asin_f64
extern "C" __device__ double ivjit_asin_f64(double x) { return asin(x); }
#endif
#ifdef IVJIT_asin_f32
extern "C" __device__ float ivjit_asin_f32(float x) { return asinf(x); }
#endif
#ifdef IVJIT_acos_f64
extern "C" __device__ double ivjit_acos_f64(double x) { return acos(x); }
#endif
#ifdef IVJIT_acos_f32
extern "C" __device__ float ivjit_acos_f32(float x) { return acosf(x); }
#endif
#ifdef IVJIT_atan_f64
extern "C" __device__ double ivjit_atan_f64(double x) { return atan(x); }
#endif
#ifdef IVJIT_atan_f32
extern "C" __device__ float ivjit_atan_f32(float x) { return atanf(x); }
#endif
#ifdef IVJIT_sinh_f64
extern "C" __device__ double ivjit_sinh_f64(double x) { return sinh(x); }
#endif
#ifdef IVJIT_sinh_f32
extern "C" __device__ float ivjit_sinh_f32(float x) { return sinhf(x); }
#endif
#ifdef IVJIT_cosh_f64
extern "C" __device__ double ivjit_cosh_f64(double x) { return cosh(x); }
#endif
#ifdef IVJIT_cosh_f32
extern "C" __device__ float ivjit_cosh_f32(float x) { return coshf(x); }
#endif
#ifdef IVJIT_tanh_f64
extern "C" __device__ double ivjit_tanh_f64(double x) { return tanh(x); }
#endif
#ifdef IVJIT_tanh_f32
extern "C" __device__ float ivjit_tanh_f32(float x) { return tanhf(x); }
#endif
#ifdef IVJIT_asinh_f64
extern "C" __device__ double ivjit_asinh_f64(double x) { return asinh(x); }
#endif
#ifdef IVJIT_asinh_f32
extern "C" __device__ float ivjit_asinh_f32(float x) { return asinhf(x); }
#endif
#ifdef IVJIT_acosh_f64
extern "C" __device__ double ivjit_acosh_f64(double x) { return acosh(x); }
#endif
#ifdef IVJIT_acosh_f32
extern "C" __device__ float ivjit_acosh_f32(float x) { return acoshf(x); }
#endif
#ifdef IVJIT_atanh_f64
extern "C" __device__ double ivjit_atanh_f64(double x) { return atanh(x); }
#endif
#ifdef IVJIT_atanh_f32
extern "C" __device__ float ivjit_atanh_f32(float x) { return atanhf(x); }
#endif
#ifdef IVJIT_cbrt_f64
extern "C" __device__ double ivjit_cbrt_f64(double x) { return cbrt(x); }
#endif
#ifdef IVJIT_cbrt_f32
extern "C" __device__ float ivjit_cbrt_f32(float x) { return cbrtf(x); }
#endif
#ifdef IVJIT_sinpi_f64
extern "C" __device__ double ivjit_sinpi_f64(double x) { return sinpi(x); }
#endif
#ifdef IVJIT_sinpi_f32
extern "C" __device__ float ivjit_sinpi_f32(float x) { return sinpif(x); }
#endif
#ifdef IVJIT_cospi_f64
extern "C" __device__ double ivjit_cospi_f64(double x) { return cospi(x); }
#endif
#ifdef IVJIT_cospi_f32
extern "C" __device__ float ivjit_cospi_f32(float x) { return cospif(x); }
#endif
#ifdef IVJIT_atan2_f64
extern "C" __device__ double ivjit_atan2_f64(double y, double x) { return atan2(y, x); }
#endif
#ifdef IVJIT_atan2_f32
extern "C" __device__ float ivjit_atan2_f32(float y, float x) { return atan2f(y, x); }
#endif
#ifdef IVJIT_pow_f64
extern "C" __device__ double ivjit_pow_f64(double x, double y) { return pow(x, y); }
#endif
#ifdef IVJIT_pow_f32
extern "C" __device__ float ivjit_pow_f32(float x, float y) { return powf(x, y); }
#endif
#ifdef IVJIT_hypot_f64
extern "C" __device__ double ivjit_hypot_f64(double x, double y) { return hypot(x, y); }
#endif
#ifdef IVJIT_hypot_f32
extern "C" __device__ float ivjit_hypot_f32(float x, float y) { return hypotf(x, y); }
#endif
