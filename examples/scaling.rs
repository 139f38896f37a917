//! Multi-GPU scaling of the batch engine: one expression over a large batch (default 2^28 boxes),
//! end to end (host slice in, host slice out, chunked and streamed), on device 0 alone and then
//! split across every visible device, each in four ways of handing the batch over (staged
//! copies into a fresh or a reused output; the caller's memory locked per call; `HostBuffer`s
//! locked once). Measures the host<->device and host-memory ceilings first, and checks that
//! every way gives identical results.
//! `cargo run --release --example scaling -- [log2 boxes] [expression]`
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, PinnedHostSlice};
use ivjit::internals::gpu::GpuKernel;
use ivjit::{BackendChoice, Evaluator, Expression, Precision};
use ivjit::{HostBuffer, HostTransfer, KernelOptions};
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
    let info = ivjit::detect_gpu()?;
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
    let all: Vec<usize> = (0..info.device_count).collect();
    copy_ceilings(&all)?;
    let out_len = 2 * expr.n_outputs() * n;
    // The same boxes in page-locked buffers that live across calls (locked once).
    let t = Instant::now();
    let mut locked_in = HostBuffer::new(inputs.len())?;
    let mut locked_out = HostBuffer::new(out_len)?;
    let lock_s = t.elapsed().as_secs_f64();
    locked_in
        .par_chunks_mut(1 << 16)
        .zip(inputs.par_chunks(1 << 16))
        .for_each(|(d, s)| d.copy_from_slice(s));
    println!(
        "HostBuffer::new of {:.1} GB (inputs + outputs, zeroed and locked): {lock_s:.2} s",
        ((inputs.len() + out_len) * 8) as f64 / 1e9
    );
    let mut reference: Option<Vec<f64>> = None;
    let mut rows = Vec::new();
    let mut reused = vec![f64::NAN; out_len];
    for devices in [vec![0], all.clone()] {
        let opts = KernelOptions {
            devices: Some(devices.clone()),
            ..Default::default()
        };
        let mut kernel = GpuKernel::with_options(&program, &opts)?;
        kernel.eval(&inputs[..0], 0)?; // load everything once
        for mode in Mode::ALL {
            kernel.set_host_transfer(mode.transfer());
            let mut times = Vec::new();
            for _ in 0..3 {
                // Poison the output so that an unwritten element shows.
                let t = Instant::now();
                let out: &[f64] = match mode {
                    Mode::StagedFresh => {
                        let fresh = kernel.eval(&inputs, n)?;
                        times.push(t.elapsed().as_secs_f64());
                        reused.copy_from_slice(&fresh);
                        &reused
                    }
                    Mode::StagedReused | Mode::PinnedPerCall => {
                        reused.par_iter_mut().for_each(|v| *v = f64::NAN);
                        let t = Instant::now();
                        kernel.eval_into(&inputs, n, &mut reused)?;
                        times.push(t.elapsed().as_secs_f64());
                        &reused
                    }
                    Mode::Locked => {
                        locked_out.par_iter_mut().for_each(|v| *v = f64::NAN);
                        let t = Instant::now();
                        kernel.eval_into(&locked_in, n, &mut locked_out)?;
                        times.push(t.elapsed().as_secs_f64());
                        &locked_out
                    }
                };
                match &reference {
                    None => reference = Some(out.to_vec()),
                    Some(r) => {
                        let same = r
                            .par_iter()
                            .zip(out.par_iter())
                            .all(|(a, b)| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()));
                        assert!(same, "devices {devices:?}, {}: results differ", mode.name());
                    }
                }
            }
            times.sort_by(f64::total_cmp);
            let t = times[1];
            println!(
                "devices {devices:?}, {}: median of 3 end to end {:.3} s, {:.3e} boxes/s, {:.1} GB/s host<->device",
                mode.name(),
                t,
                n as f64 / t,
                bytes as f64 / t / 1e9
            );
            rows.push((devices.len(), mode, t));
        }
    }
    // The library's front door, with its input checks, on every device: a fresh output, then
    // HostBuffers (direct copies chosen automatically).
    let evaluator = Evaluator::new(&expr, Precision::F64, BackendChoice::Gpu)?;
    for locked in [false, true] {
        let mut times = Vec::new();
        for _ in 0..3 {
            let t = Instant::now();
            let out = if locked {
                evaluator.eval_soa_into(&locked_in, n, &mut locked_out)?;
                times.push(t.elapsed().as_secs_f64());
                locked_out.to_vec()
            } else {
                let out = evaluator.eval_soa(&inputs, n)?;
                times.push(t.elapsed().as_secs_f64());
                out
            };
            let r = reference.as_ref().expect("reference");
            let same = r
                .par_iter()
                .zip(out.par_iter())
                .all(|(a, b)| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()));
            assert!(same, "Evaluator (locked: {locked}): results differ");
        }
        times.sort_by(f64::total_cmp);
        println!(
            "Evaluator on devices {all:?}, {}: median of 3 end to end {:.3} s, {:.1} GB/s host<->device",
            if locked { "eval_soa_into HostBuffers" } else { "eval_soa" },
            times[1],
            bytes as f64 / times[1] / 1e9
        );
    }
    println!(
        "summary ({} boxes, {:.1} GB in + out; results of every row identical):",
        n,
        bytes as f64 / 1e9
    );
    for mode in Mode::ALL {
        let one = rows.iter().find(|r| r.0 == 1 && r.1 == mode).map(|r| r.2);
        let many = rows
            .iter()
            .find(|r| r.0 == all.len() && r.1 == mode)
            .map(|r| r.2);
        if let (Some(a), Some(b)) = (one, many) {
            println!(
                "  {:<26} 1 GPU {a:.3} s ({:.1} GB/s)   {} GPUs {b:.3} s ({:.1} GB/s)   speed-up {:.2}x",
                mode.name(),
                bytes as f64 / a / 1e9,
                all.len(),
                bytes as f64 / b / 1e9,
                a / b
            );
        }
    }
    Ok(())
}

/// The ways a caller can hand a batch over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// `eval`: staged copies, a fresh output vector per call.
    StagedFresh,
    /// `eval_into` a reused vector, staged copies.
    StagedReused,
    /// `eval_into` a reused vector, locked and unlocked in every call.
    PinnedPerCall,
    /// `eval_into` between `HostBuffer`s locked once.
    Locked,
}

impl Mode {
    const ALL: [Mode; 4] = [
        Mode::StagedFresh,
        Mode::StagedReused,
        Mode::PinnedPerCall,
        Mode::Locked,
    ];
    fn name(self) -> &'static str {
        match self {
            Mode::StagedFresh => "staged, fresh output",
            Mode::StagedReused => "staged, reused output",
            Mode::PinnedPerCall => "pinned per call",
            Mode::Locked => "HostBuffers locked once",
        }
    }
    fn transfer(self) -> HostTransfer {
        match self {
            Mode::StagedFresh | Mode::StagedReused => HostTransfer::Staged,
            Mode::PinnedPerCall => HostTransfer::Pinned,
            // Auto finds the HostBuffers and copies directly.
            Mode::Locked => HostTransfer::Auto,
        }
    }
}

/// The machine's host<->device ceilings, measured: pinned 1 GiB copies each way on each device
/// alone, then on every device at once; and a parallel host memory copy.
fn copy_ceilings(devices: &[usize]) -> Result<(), Box<dyn std::error::Error>> {
    const BYTES: usize = 1 << 30;
    struct Dev {
        stream: std::sync::Arc<CudaStream>,
        host: PinnedHostSlice<u8>,
        dev: CudaSlice<u8>,
    }
    let mut devs = Vec::new();
    for &d in devices {
        let ctx = CudaContext::new(d)?;
        let stream = ctx.new_stream()?;
        // SAFETY: the pinned buffer is written by a download before it is read.
        let mut host = unsafe { ctx.alloc_pinned::<u8>(BYTES) }?;
        host.as_mut_slice()?.par_iter_mut().for_each(|b| *b = 0x5a);
        let dev = stream.alloc_zeros::<u8>(BYTES)?;
        devs.push(Dev { stream, host, dev });
    }
    // Median of 5 of: every selected device copies one way at once.
    let time = |devs: &mut [Dev], up: bool| -> Result<f64, Box<dyn std::error::Error>> {
        let mut times = Vec::new();
        for _ in 0..5 {
            let t = Instant::now();
            for d in devs.iter_mut() {
                if up {
                    d.stream.memcpy_htod(&d.host, &mut d.dev)?;
                } else {
                    d.stream.memcpy_dtoh(&d.dev, &mut d.host)?;
                }
            }
            for d in devs.iter() {
                d.stream.synchronize()?;
            }
            times.push(t.elapsed().as_secs_f64());
        }
        times.sort_by(f64::total_cmp);
        Ok((devs.len() * BYTES) as f64 / times[2] / 1e9)
    };
    for i in 0..devs.len() {
        let up = time(&mut devs[i..i + 1], true)?;
        let down = time(&mut devs[i..i + 1], false)?;
        println!("ceiling: device {} pinned 1 GiB copies: host->device {up:.1} GB/s, device->host {down:.1} GB/s", devices[i]);
    }
    if devs.len() > 1 {
        let up = time(&mut devs, true)?;
        let down = time(&mut devs, false)?;
        println!("ceiling: all {} devices at once: host->device {up:.1} GB/s, device->host {down:.1} GB/s (sum)", devs.len());
    }
    // Host memory: a parallel copy of 4 GiB between prefaulted buffers (bytes read + written).
    let src = vec![1.0f64; 1 << 29];
    let mut dst = vec![0.0f64; 1 << 29];
    let mut times = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        dst.par_chunks_mut(1 << 16)
            .zip(src.par_chunks(1 << 16))
            .for_each(|(d, s)| d.copy_from_slice(s));
        times.push(t.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    println!(
        "ceiling: host memory copy on {} threads: {:.1} GB/s (read + write)",
        rayon::current_num_threads(),
        2.0 * (src.len() * 8) as f64 / times[2] / 1e9
    );
    Ok(())
}
