//! Multi-GPU scaling of the batch engine: one expression over a large batch (default 2^28 boxes),
//! end to end (host slice in, host slice out, chunked and streamed), on device 0 alone and then
//! split across every visible device. Checks that both give identical results.
//! `cargo run --release --example scaling -- [log2 boxes] [expression]`
use ivjit::gpu::{GpuKernel, KernelOptions};
use ivjit::{Expression, Precision};
use rayon::prelude::*;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let log2: u32 = args.get(1).map(|s| s.parse()).transpose()?.unwrap_or(28);
    let src = args
        .get(2)
        .cloned()
        .unwrap_or_else(|| "x^4 - 5*x^2 + y^4 - 5*y^2 + z^4 - 5*z^2 + 11.8".into());
    let n = 1usize << log2;
    let expr = Expression::parse(&src)?;
    let program = expr.scalar(Precision::F64)?;
    let nv = expr.vars().len();
    let info = ivjit::gpu::detect()?;
    println!("{} x{}; {src}; {n} boxes", info.name, info.device_count);
    // Random boxes (fresh, never zeros): centre in [-3, 3], width in (0, 0.01].
    let t = Instant::now();
    let mut inputs = vec![0.0f64; 2 * nv * n];
    for k in 0..nv {
        let (lo, rest) = inputs[2 * k * n..].split_at_mut(n);
        let hi = &mut rest[..n];
        lo.par_chunks_mut(1 << 16)
            .zip(hi.par_chunks_mut(1 << 16))
            .enumerate()
            .for_each(|(c, (l, h))| {
                let mut s = 0x9E3779B97F4A7C15u64 ^ ((k as u64) << 40) ^ (c as u64);
                for (a, b) in l.iter_mut().zip(h.iter_mut()) {
                    s ^= s << 13;
                    s ^= s >> 7;
                    s ^= s << 17;
                    let u = (s >> 11) as f64 / (1u64 << 53) as f64;
                    let w = ((s & 0xFFFF) as f64 + 1.0) * 1.5e-7;
                    *a = 6.0 * u - 3.0;
                    *b = *a + w;
                }
            });
    }
    println!("inputs generated in {:.2} s", t.elapsed().as_secs_f64());
    let bytes = (2 * nv + 2 * expr.n_outputs()) * 8 * n;
    let mut results = Vec::new();
    let all: Vec<usize> = (0..info.device_count).collect();
    for devices in [vec![0], all] {
        let opts = KernelOptions {
            devices: Some(devices.clone()),
            ..Default::default()
        };
        let kernel = GpuKernel::with_options(&program, &opts)?;
        kernel.eval(&inputs[..0], 0)?; // load everything once
        let mut times = Vec::new();
        let mut out = Vec::new();
        for _ in 0..3 {
            let t = Instant::now();
            out = kernel.eval(&inputs, n)?;
            times.push(t.elapsed().as_secs_f64());
        }
        times.sort_by(f64::total_cmp);
        let t = times[1];
        println!(
            "devices {devices:?}: median of 3 end to end {:.3} s, {:.3e} boxes/s, {:.1} GB/s host<->device",
            t,
            n as f64 / t,
            bytes as f64 / t / 1e9
        );
        results.push((t, out));
    }
    let same = results[0]
        .1
        .iter()
        .zip(&results[1].1)
        .all(|(a, b)| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()));
    println!(
        "speed-up {:.2}x with {} devices; results identical: {same}",
        results[0].0 / results[1].0,
        info.device_count
    );
    assert!(same, "split and single-device results differ");
    Ok(())
}
