//! A point-sampling baseline for `ivjit bench --render`: the tape evaluated once per pixel, at
//! the pixel's centre, in round to nearest — what a non-rigorous renderer does: one GPU thread
//! per pixel running the whole program compiled to straight-line CUDA C (NVRTC; contractions
//! into FMA allowed, no fast math). **Not rigorous and not a search**: a pixel's class is the
//! sign of one rounded value, so a feature thinner than a pixel is missed between centres and
//! a rounding error may flip a sign. It exists so that the rigorous render is timed against it
//! on the same GPU in the same run (issue 33's target: faster than this kernel).

use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaContext, CudaFunction, CudaSlice, CudaStream, PushKernelArg};

use super::{code, Tape, TapeError};
use crate::gpu::{self, Context, GpuError};
use crate::search::kernels;
use crate::search::render::gpu::download_with;
use crate::search::{SearchError, BOUNDARY, INSIDE, OUTSIDE};
use crate::{Error, Precision};

/// The compiled point kernel of one tape and precision on the first GPU.
pub struct PointSampler {
    ctx: Arc<CudaContext>,
    kernel: CudaFunction,
    precision: Precision,
    /// The stream and buffers the next image reuses (one image at a time).
    kept: Mutex<Option<Kept>>,
}

struct Kept {
    stream: Arc<CudaStream>,
    image: Option<CudaSlice<u8>>,
    host: Option<cudarc::driver::PinnedHostSlice<u8>>,
}

/// The CUDA C literal of `c` in precision `p` (its bits: exact, NaN and infinities included).
fn literal(c: f64, p: Precision) -> String {
    match p {
        Precision::F64 => format!("__longlong_as_double(0x{:016x}LL)", c.to_bits()),
        Precision::F32 => format!("__int_as_float(0x{:08x})", (c as f32).to_bits()),
    }
}

/// The kernel's CUDA C: `T v<k> = ...;` per instruction of the tape's SSA form, the last one
/// the result. A constant is its interval's midpoint (a `.vm` constant is a point).
pub(crate) fn source(tape: &Tape, p: Precision) -> Result<String, TapeError> {
    let mut body = String::with_capacity(tape.len() * 40);
    for (k, (&inst, &args)) in tape.insts.iter().zip(&tape.args).enumerate() {
        let op = (inst & 0xff) as u16;
        let (a, b) = (args & 0xffff, args >> 16);
        let e = match op {
            code::CONST => {
                let c = tape.consts[a as usize];
                literal(c.lo + (c.hi - c.lo) / 2.0, p)
            }
            code::VAR => if a == 0 { "x" } else { "y" }.to_string(),
            code::NEG => format!("-v{a}"),
            code::ADD => format!("v{a} + v{b}"),
            code::SUB => format!("v{a} - v{b}"),
            code::MUL => format!("v{a} * v{b}"),
            code::SQR => format!("v{a} * v{a}"),
            code::SQRT => format!("sqrt(v{a})"),
            code::ABS => format!("fabs(v{a})"),
            code::MIN => format!("fmin(v{a}, v{b})"),
            code::MAX => format!("fmax(v{a}, v{b})"),
            _ => return Err(TapeError::PointSampled(op)),
        };
        body.push_str(&format!("    T v{k} = {e};\n"));
    }
    let last = tape.len().saturating_sub(1);
    Ok(format!(
        "{}extern \"C\" __global__ void ivjit_point_sample(unsigned char* image, u32 width, \
         u32 height, T x0, T dx, T y1, T dy)\n{{\n    \
         size_t total = (size_t)width * height;\n    \
         for (size_t p = blockIdx.x * (size_t)blockDim.x + threadIdx.x; p < total;\n         \
         p += (size_t)gridDim.x * blockDim.x) {{\n    \
         u32 i = (u32)(p / width), j = (u32)(p - (size_t)i * width);\n    \
         T x = x0 + ((T)j + (T)0.5) * dx, y = y1 - ((T)i + (T)0.5) * dy;\n\
         {body}    \
         image[p] = v{last} > (T)0 ? {OUTSIDE} : (v{last} < (T)0 ? {INSIDE} : {BOUNDARY});\n    \
         }}\n}}\n",
        kernels::prelude(p)
    ))
}

impl PointSampler {
    /// Compiles `tape`'s point kernel for the first GPU (a tape of the `.vm` set: constants,
    /// x, y, +, -, *, neg, sqr, sqrt, abs, min, max).
    pub fn new(tape: &Tape, precision: Precision) -> Result<PointSampler, Error> {
        let cuda = source(tape, precision).map_err(SearchError::Tape)?;
        let ordinal = 0;
        let ctx = gpu::context(ordinal)?;
        ctx.bind_to_thread()
            .during("binding the device's context")
            .map_err(Error::from)?;
        let k = gpu::search_module::load(
            &ctx,
            ordinal,
            gpu::search_module::SearchModule {
                name: "point-sample",
                cuda,
                linked: Vec::new(),
                kernels: &["ivjit_point_sample"],
            },
        )?;
        Ok(PointSampler {
            ctx,
            kernel: k[0].clone(),
            precision,
            kept: Mutex::new(None),
        })
    }

    /// The classes of a `width` x `height` image over `region` (x0, x1, y0, y1; row 0 at y1),
    /// copied back as the rigorous render's image is: the sign of f at each pixel's centre
    /// (0 outside, 1 inside, 2 for zero or NaN).
    pub fn render(&self, width: u32, height: u32, region: [f64; 4]) -> Result<Vec<u8>, Error> {
        let mut out = Vec::new();
        self.image(width, height, region, &mut |b| out = b.to_vec())?;
        Ok(out)
    }

    /// [`PointSampler::render`] with the image lent to `f` in the page-locked memory it came
    /// back to, as [`super::TapeRenderer::render_with`] does (the benchmark times both so).
    pub fn render_with(
        &self,
        width: u32,
        height: u32,
        region: [f64; 4],
        f: &mut dyn FnMut(&[u8]),
    ) -> Result<(), Error> {
        Ok(self.image(width, height, region, f)?)
    }

    fn image(
        &self,
        width: u32,
        height: u32,
        region: [f64; 4],
        f: &mut dyn FnMut(&[u8]),
    ) -> Result<(), GpuError> {
        self.ctx
            .bind_to_thread()
            .during("binding the device's context")?;
        let mut guard = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        let mut kept = match guard.take() {
            Some(k) => k,
            None => Kept {
                stream: self.ctx.new_stream().during("creating a stream")?,
                image: None,
                host: None,
            },
        };
        let stream = kept.stream.clone();
        let pixels = width as usize * height as usize;
        let image = kernels::room(&stream, kept.image.take(), pixels, "allocating the image")?;
        let [x0, x1, y0, y1] = region;
        let (dx, dy) = ((x1 - x0) / width as f64, (y1 - y0) / height as f64);
        let mut b = stream.launch_builder(&self.kernel);
        b.arg(&image).arg(&width).arg(&height);
        let (fx0, fdx, fy1, fdy) = (x0 as f32, dx as f32, y1 as f32, dy as f32);
        match self.precision {
            Precision::F64 => b.arg(&x0).arg(&dx).arg(&y1).arg(&dy),
            Precision::F32 => b.arg(&fx0).arg(&fdx).arg(&fy1).arg(&fdy),
        };
        // SAFETY: matches the kernel's signature (T as the precision's); the image holds
        // width x height bytes, one per thread below that count.
        unsafe { b.launch(kernels::config(pixels)) }.during("launching the point kernel")?;
        download_with(&stream, &image, pixels, &mut kept.host, f)?;
        kept.image = Some(image);
        *guard = Some(kept);
        Ok(())
    }
}
