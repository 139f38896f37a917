//! The batch engine of the GPU backend: chunked streaming, several devices, the kernel caches,
//! occupancy-based launches and concurrent use of one kernel.
//!
//! Programs without point calls must give exactly the CPU evaluator's bits (every operation is
//! correctly rounded on both). GPU tests run with `--features gpu-tests` (reported as
//! ignored without it; without a GPU they then fail). Timings are printed, never asserted.

use crate::common::rng;

use std::time::Instant;

use ivjit::internals::gpu::{
    self, CacheDir, DiskCacheOutcome, GpuError, GpuKernel, HostBuffer, HostTransfer, KernelOptions,
};
use ivjit::internals::scalar::Program;
use ivjit::{BackendChoice, Evaluator, Expression, Precision};

/// Uses +, -, *, /, sqr, pown, sqrt, min/max, abs: many inline sequences, no point calls.
const EXPR: &str = "x^4 - 5*x^2 + y*z - x/(y + 3), sqrt(abs(z)) * x + min(x, y), sqr(x - z) / y";

/// Boxes per batch.
const N: usize = 1_000_003;

fn program(p: Precision) -> Program {
    let program = Expression::parse(EXPR).unwrap().scalar(p).unwrap();
    assert!(
        !program.has_point_calls(),
        "the bit-for-bit tests need inline code only"
    );
    program
}

/// splitmix64.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        rng::splitmix64(&mut self.0)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// A bound of varied magnitude and sign.
    fn value(&mut self) -> f64 {
        match self.next() % 16 {
            0 => 0.0,
            1 => -0.0,
            2 => f64::MIN_POSITIVE * self.unit(),
            3 => (self.unit() - 0.5) * 1e300,
            _ => (self.unit() - 0.5) * 2f64.powi((self.next() % 40) as i32 - 20),
        }
    }
}

/// `n` boxes of `n_vars` variables in the SoA layout, with empty, entire and point boxes among
/// them; every bound is an f32 value when `p` is f32.
fn boxes(seed: u64, n_vars: usize, n: usize, p: Precision) -> Vec<f64> {
    let mut rng = Rng(seed);
    let round = |x: f64, up: bool| match p {
        Precision::F64 => x,
        Precision::F32 => {
            let y = x as f32;
            let y = if up && (y as f64) < x {
                y.next_up()
            } else if !up && (y as f64) > x {
                y.next_down()
            } else {
                y
            };
            y as f64
        }
    };
    let mut soa = vec![0.0; 2 * n_vars * n];
    for k in 0..n_vars {
        for i in 0..n {
            let (lo, hi) = match rng.next() % 64 {
                0 => (f64::NAN, f64::NAN),
                1 => (f64::NEG_INFINITY, f64::INFINITY),
                2 => (f64::NEG_INFINITY, rng.value()),
                3 => {
                    let v = rng.value();
                    (v, v)
                }
                _ => {
                    let (a, b) = (rng.value(), rng.value());
                    (a.min(b), a.max(b))
                }
            };
            let (lo, hi) = if lo.is_nan() {
                (lo, hi)
            } else {
                (round(lo, false), round(hi, true))
            };
            soa[2 * k * n + i] = lo;
            soa[(2 * k + 1) * n + i] = hi;
        }
    }
    soa
}

/// Bit-for-bit equality, NaN equal to any NaN (the IR promises no NaN payload).
fn assert_same_bits(what: &str, got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{what}: lengths differ");
    let mut bad = 0;
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let same = (g.is_nan() && w.is_nan()) || g.to_bits() == w.to_bits();
        if !same {
            if bad < 10 {
                eprintln!(
                    "{what}: value {i}: gpu {g:e} ({:#x}) cpu {w:e} ({:#x})",
                    g.to_bits(),
                    w.to_bits()
                );
            }
            bad += 1;
        }
    }
    assert_eq!(
        bad,
        0,
        "{what}: {bad} of {} values differ from the CPU",
        got.len()
    );
}

fn options() -> KernelOptions {
    KernelOptions::default()
}

#[test]
fn kernels_can_be_shared_between_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<GpuKernel>();
    send_sync::<Evaluator>();
}

#[test]
fn device_lists_parse() {
    assert_eq!(gpu::parse_devices("0,1").unwrap(), [0, 1]);
    assert_eq!(gpu::parse_devices(" 2 , 0 ").unwrap(), [2, 0]);
    assert!(matches!(
        gpu::parse_devices("0,0"),
        Err(GpuError::Devices(_))
    ));
    assert!(matches!(gpu::parse_devices("a"), Err(GpuError::Devices(_))));
    assert!(matches!(gpu::parse_devices(""), Err(GpuError::Devices(_))));
}

/// ~10^6 boxes through 1000-element chunks on device 0 (so ~1000 chunks, the last one ragged),
/// in both precisions, against the CPU evaluator.
#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn tiny_chunks_equal_cpu_bit_for_bit() {
    crate::common::gpu::require_gpu("tiny_chunks_equal_cpu_bit_for_bit");
    for p in [Precision::F64, Precision::F32] {
        let program = program(p);
        let inputs = boxes(1 + p as u64, program.n_vars(), N, p);
        let want = ivjit::internals::cpu::eval::eval_soa(&program, &inputs, N);
        let kernel = GpuKernel::with_options(
            &program,
            &KernelOptions {
                devices: Some(vec![0]),
                chunk_elements: Some(1000),
                ..options()
            },
        )
        .unwrap();
        assert_eq!(kernel.chunk_elements(), Some(1000));
        eprintln!("{p:?}: launch shapes {:?}", kernel.launch_shapes());
        for shape in kernel.launch_shapes() {
            assert!(shape.block >= 32 && shape.block <= 1024, "{shape:?}");
            assert!(shape.max_grid >= 1, "{shape:?}");
        }
        let t = Instant::now();
        let got = kernel.eval(&inputs, N).unwrap();
        eprintln!("{p:?}: {N} boxes in 1000-box chunks: {:?}", t.elapsed());
        assert_same_bits(&format!("{p:?}, chunks of 1000"), &got, &want);
        // Chunks that are not a divisor of N and larger than a small batch. The host gathers
        // and scatters in parallel tasks of 2^16 elements: 20000-element chunks (6 input and 6
        // output arrays) are cut at array ends only, 65537 and 77777 inside arrays too; the
        // 1000-element chunks above are copied on one thread.
        let mut kernel = kernel;
        for chunk in [20_000, 65_537, 77_777] {
            kernel.set_chunk_elements(Some(chunk));
            assert_same_bits(
                &format!("{p:?}, chunks of {chunk}"),
                &kernel.eval(&inputs, N).unwrap(),
                &want,
            );
        }
        // Automatic chunk size (one chunk for this batch on any real GPU).
        kernel.set_chunk_elements(None);
        let t = Instant::now();
        let got = kernel.eval(&inputs, N).unwrap();
        eprintln!("{p:?}: {N} boxes, automatic chunks: {:?}", t.elapsed());
        assert_same_bits(&format!("{p:?}, automatic chunks"), &got, &want);
        // Small batches: 1, a few, one less and one more than a chunk.
        kernel.set_chunk_elements(Some(1000));
        for n in [1, 7, 999, 1000, 1001] {
            let small = boxes(100 + n as u64, program.n_vars(), n, p);
            let want = ivjit::internals::cpu::eval::eval_soa(&program, &small, n);
            assert_same_bits(
                &format!("{p:?}, n = {n}"),
                &kernel.eval(&small, n).unwrap(),
                &want,
            );
        }
        assert!(
            kernel.eval(&inputs, 0).is_err(),
            "a wrong input length is an error"
        );
        assert!(kernel.eval(&[], 0).unwrap().is_empty());
    }
}

/// The same batch split across every visible device (several only on a multi-GPU machine).
#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn all_devices_equal_cpu() {
    let info = crate::common::gpu::require_gpu("all_devices_equal_cpu");
    let program = program(Precision::F64);
    let inputs = boxes(7, program.n_vars(), N, Precision::F64);
    let want = ivjit::internals::cpu::eval::eval_soa(&program, &inputs, N);
    let all: Vec<usize> = (0..info.device_count).collect();
    for chunk in [None, Some(4096)] {
        let kernel = GpuKernel::with_options(
            &program,
            &KernelOptions {
                devices: Some(all.clone()),
                chunk_elements: chunk,
                ..options()
            },
        )
        .unwrap();
        assert_eq!(kernel.device_ordinals(), all);
        let t = Instant::now();
        let got = kernel.eval(&inputs, N).unwrap();
        eprintln!(
            "{} device(s), chunk {chunk:?}: {N} boxes in {:?}",
            all.len(),
            t.elapsed()
        );
        assert_same_bits(
            &format!("{} devices, chunk {chunk:?}", all.len()),
            &got,
            &want,
        );
    }
    // A device that does not exist is an error, not a panic.
    let bad = GpuKernel::with_options(
        &program,
        &KernelOptions {
            devices: Some(vec![info.device_count + 5]),
            ..options()
        },
    );
    assert!(matches!(bad, Err(GpuError::Devices(_))), "{bad:?}");
}

#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn in_process_cache_reuses_kernels() {
    crate::common::gpu::require_gpu("in_process_cache_reuses_kernels");
    let program = program(Precision::F64);
    let a = GpuKernel::new(&program).unwrap();
    let b = GpuKernel::new(&program).unwrap();
    assert!(
        a.shares_code_with(&b),
        "the second kernel was compiled again"
    );
    let other = GpuKernel::new(
        &Expression::parse("x + 1")
            .unwrap()
            .scalar(Precision::F64)
            .unwrap(),
    )
    .unwrap();
    assert!(!a.shares_code_with(&other));
    // Another precision is another kernel.
    let f32k = GpuKernel::new(&program_text_f32()).unwrap();
    assert!(!a.shares_code_with(&f32k));

    // Measured, not asserted: the first Evaluator::new of a fresh expression against a second.
    let expr = Expression::parse("x*y - 3.25*z + x^3").unwrap();
    let t = Instant::now();
    let e1 = Evaluator::new(&expr, Precision::F64, BackendChoice::Gpu).unwrap();
    let first = t.elapsed();
    let t = Instant::now();
    let e2 = Evaluator::new(&expr, Precision::F64, BackendChoice::Gpu).unwrap();
    let second = t.elapsed();
    eprintln!("Evaluator::new: first {first:?}, second {second:?} (in-process cache)");
    let x = [
        ivjit::Interval::new(-1.0, 2.0).unwrap(),
        ivjit::Interval::point(3.0).unwrap(),
        ivjit::Interval::new(0.5, 0.75).unwrap(),
    ];
    assert_eq!(e1.eval(&x).unwrap(), e2.eval(&x).unwrap());
    // The second evaluator reused the expression's program and the loaded kernel.
    assert!(std::ptr::eq(e1.program(), e2.program()));
    let (k1, k2) = (e1.gpu_kernel().unwrap(), e2.gpu_kernel().unwrap());
    assert!(
        k1.shares_code_with(k2),
        "the second evaluator compiled again"
    );
    assert_eq!(k1.ptx(), k2.ptx());
    // The same text parsed again is another expression with the same PTX: the cache finds it
    // by the text's hash and compares the text.
    let again = Expression::parse("x*y - 3.25*z + x^3").unwrap();
    let e3 = Evaluator::new(&again, Precision::F64, BackendChoice::Gpu).unwrap();
    assert!(!std::ptr::eq(e1.program(), e3.program()));
    assert!(k1.shares_code_with(e3.gpu_kernel().unwrap()));
    assert_eq!(e3.eval(&x).unwrap(), e1.eval(&x).unwrap());
    let f32e = Evaluator::new(&expr, Precision::F32, BackendChoice::Gpu).unwrap();
    assert!(!k1.shares_code_with(f32e.gpu_kernel().unwrap()));
    let cpu = Evaluator::new(&expr, Precision::F64, BackendChoice::Cpu).unwrap();
    assert!(cpu.gpu_kernel().is_none());
    eprintln!("{} kernels in the in-process cache", gpu::in_process_len());
}

fn program_text_f32() -> Program {
    program(Precision::F32)
}

/// The only cubin entry in `dir`.
fn entry(dir: &std::path::Path) -> std::path::PathBuf {
    let entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "cubin"))
        .collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
    entries[0].clone()
}

fn disk_cache_case(name: &str, program: &Program, inputs: &[f64], n: usize) {
    let dir = tempfile::tempdir().unwrap();
    let opts = KernelOptions {
        devices: Some(vec![0]),
        cache_dir: CacheDir::At(dir.path().to_path_buf()),
        memory_cache: false,
        chunk_elements: None,
        host_transfer: None,
        ..KernelOptions::default()
    };
    let load = |what: &str| {
        let t = Instant::now();
        let k = GpuKernel::with_options(program, &opts).unwrap();
        eprintln!(
            "{name}: {what}: {:?} in {:?}",
            k.disk_cache_outcomes(),
            t.elapsed()
        );
        k
    };
    let fresh = load("empty cache");
    assert_eq!(
        fresh.disk_cache_outcomes(),
        [DiskCacheOutcome::Linked {
            stored: true,
            rebuilt: false
        }]
    );
    let want = fresh.eval(inputs, n).unwrap();
    let path = entry(dir.path());
    let hit = load("second load");
    assert_eq!(hit.disk_cache_outcomes(), [DiskCacheOutcome::Hit]);
    assert!(
        !hit.shares_code_with(&fresh),
        "the in-process cache was bypassed"
    );
    assert_same_bits(
        &format!("{name}: from the disk cache"),
        &hit.eval(inputs, n).unwrap(),
        &want,
    );

    // Flip bytes in the middle of the cubin.
    let good = std::fs::read(&path).unwrap();
    let mut bad = good.clone();
    let mid = bad.len() / 2;
    for b in &mut bad[mid..mid + 8] {
        *b ^= 0xa5;
    }
    std::fs::write(&path, &bad).unwrap();
    let rebuilt = load("flipped bytes");
    assert_eq!(
        rebuilt.disk_cache_outcomes(),
        [DiskCacheOutcome::Linked {
            stored: true,
            rebuilt: true
        }]
    );
    assert_same_bits(
        &format!("{name}: after flipped bytes"),
        &rebuilt.eval(inputs, n).unwrap(),
        &want,
    );
    assert_eq!(
        std::fs::read(&path).unwrap(),
        good,
        "the entry was rewritten"
    );

    // Truncate it; then an empty file; then a header alone.
    for cut in [
        good.len() - 1,
        good.len() / 3,
        0,
        good.iter().position(|&b| b == b'\n').unwrap() + 1,
    ] {
        std::fs::write(&path, &good[..cut]).unwrap();
        let rebuilt = load(&format!("truncated to {cut} bytes"));
        assert_eq!(
            rebuilt.disk_cache_outcomes(),
            [DiskCacheOutcome::Linked {
                stored: true,
                rebuilt: true
            }]
        );
        assert_same_bits(
            &format!("{name}: after truncation to {cut}"),
            &rebuilt.eval(inputs, n).unwrap(),
            &want,
        );
    }
    assert_eq!(
        load("after repairs").disk_cache_outcomes(),
        [DiskCacheOutcome::Hit]
    );
}

#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn disk_cache_detects_and_rebuilds_corrupt_entries() {
    crate::common::gpu::require_gpu("disk_cache_detects_and_rebuilds_corrupt_entries");
    let n = 10_000;
    let plain = program(Precision::F64);
    let inputs = boxes(11, plain.n_vars(), n, Precision::F64);
    let want = ivjit::internals::cpu::eval::eval_soa(&plain, &inputs, n);
    disk_cache_case("inline program", &plain, &inputs, n);
    // And the cached kernel equals the CPU too.
    let k = GpuKernel::with_options(
        &plain,
        &KernelOptions {
            devices: Some(vec![0]),
            cache_dir: CacheDir::Off,
            memory_cache: false,
            chunk_elements: None,
            host_transfer: None,
            ..KernelOptions::default()
        },
    )
    .unwrap();
    assert_eq!(k.disk_cache_outcomes(), [DiskCacheOutcome::NoCache]);
    assert_same_bits("no disk cache", &k.eval(&inputs, n).unwrap(), &want);

    // A program with point calls (linked with the NVRTC runtime).
    let points = Expression::parse("exp(x) + sin(y)")
        .unwrap()
        .scalar(Precision::F64)
        .unwrap();
    assert!(points.has_point_calls());
    let inputs = boxes(12, points.n_vars(), n, Precision::F64);
    disk_cache_case("point calls", &points, &inputs, n);
}

/// Eight threads evaluate different batches with one kernel at once; each gets what a serial
/// evaluation of its batch gives.
#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn concurrent_use_of_one_kernel() {
    crate::common::gpu::require_gpu("concurrent_use_of_one_kernel");
    let program = program(Precision::F64);
    let mut kernel = GpuKernel::new(&program).unwrap();
    kernel.set_chunk_elements(Some(10_000));
    let n = 100_000;
    let batches: Vec<Vec<f64>> = (0..8)
        .map(|t| boxes(1000 + t, program.n_vars(), n, Precision::F64))
        .collect();
    let serial: Vec<Vec<f64>> = batches.iter().map(|b| kernel.eval(b, n).unwrap()).collect();
    for (b, s) in batches.iter().zip(&serial) {
        assert_same_bits(
            "serial",
            s,
            &ivjit::internals::cpu::eval::eval_soa(&program, b, n),
        );
    }
    let kernel = &kernel;
    std::thread::scope(|scope| {
        let handles: Vec<_> = batches
            .iter()
            .map(|b| {
                scope.spawn(move || {
                    (0..4)
                        .map(|_| kernel.eval(b, n).unwrap())
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for (t, (h, s)) in handles.into_iter().zip(&serial).enumerate() {
            for got in h.join().unwrap() {
                assert_same_bits(&format!("thread {t}"), &got, s);
            }
        }
    });
}

/// Direct copies from and to the caller's page-locked memory give the CPU's bits: locked per
/// call (plain vectors) and locked once (`HostBuffer`s), on every device, with automatic and
/// ragged chunks, into poisoned outputs; f32 kernels stage whatever the mode. Several threads
/// sharing one locked input slice at once (the registry of calls in flight keeps the first
/// call's unlock from pulling pages from under the others).
#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn pinned_transfers_equal_cpu() {
    let info = crate::common::gpu::require_gpu("pinned_transfers_equal_cpu");
    let all: Vec<usize> = (0..info.device_count).collect();
    for p in [Precision::F64, Precision::F32] {
        let program = program(p);
        let inputs = boxes(31 + p as u64, program.n_vars(), N, p);
        let want = ivjit::internals::cpu::eval::eval_soa(&program, &inputs, N);
        let mut kernel = GpuKernel::with_options(
            &program,
            &KernelOptions {
                devices: Some(all.clone()),
                host_transfer: Some(HostTransfer::Pinned),
                ..options()
            },
        )
        .unwrap();
        assert_eq!(kernel.host_transfer(), HostTransfer::Pinned);
        let mut locked_in = HostBuffer::new(inputs.len()).unwrap();
        assert!(locked_in.is_locked());
        locked_in.copy_from_slice(&inputs);
        let mut locked_out = HostBuffer::new(want.len()).unwrap();
        let mut plain_out = vec![0.0; want.len()];
        for chunk in [None, Some(4096), Some(65_537)] {
            kernel.set_chunk_elements(chunk);
            plain_out.fill(f64::from_bits(0x7ff4_dead_beef_0001));
            plain_out[0] = 12345.0; // a non-NaN poison too
            let t = Instant::now();
            kernel.eval_into(&inputs, N, &mut plain_out).unwrap();
            eprintln!("{p:?}, chunk {chunk:?}, pinned per call: {:?}", t.elapsed());
            assert_same_bits(
                &format!("{p:?}, chunk {chunk:?}, pinned"),
                &plain_out,
                &want,
            );
            locked_out.fill(f64::from_bits(0x7ff4_dead_beef_0002));
            locked_out[want.len() - 1] = -12345.0;
            let t = Instant::now();
            kernel.eval_into(&locked_in, N, &mut locked_out).unwrap();
            eprintln!("{p:?}, chunk {chunk:?}, HostBuffers: {:?}", t.elapsed());
            assert_same_bits(
                &format!("{p:?}, chunk {chunk:?}, locked"),
                &locked_out,
                &want,
            );
        }
        // Staged into the same output, then eval (fresh output) in the default mode.
        kernel.set_host_transfer(HostTransfer::Staged);
        plain_out.fill(f64::NAN);
        kernel.eval_into(&inputs, N, &mut plain_out).unwrap();
        assert_same_bits(&format!("{p:?}, staged"), &plain_out, &want);
        kernel.set_host_transfer(HostTransfer::Auto);
        assert_same_bits(
            &format!("{p:?}, auto"),
            &kernel.eval(&inputs, N).unwrap(),
            &want,
        );
        // A wrong output length is an error naming both lengths.
        let err = kernel
            .eval_into(&inputs, N, &mut plain_out[1..])
            .unwrap_err();
        assert!(
            matches!(
                err,
                GpuError::Shape(ivjit::internals::shape::ShapeError::Outputs { .. })
            ),
            "{err}"
        );
    }
    // Eight threads, one shared input slice, each locking it per call and evaluating it into
    // its own output, four times over.
    let program = program(Precision::F64);
    let n = 200_000;
    let inputs = boxes(77, program.n_vars(), n, Precision::F64);
    let want = ivjit::internals::cpu::eval::eval_soa(&program, &inputs, n);
    let mut kernel = GpuKernel::new(&program).unwrap();
    kernel.set_host_transfer(HostTransfer::Pinned);
    kernel.set_chunk_elements(Some(25_000));
    let (kernel, inputs, want) = (&kernel, &inputs, &want);
    std::thread::scope(|scope| {
        for t in 0..8 {
            scope.spawn(move || {
                let mut out = vec![f64::NAN; want.len()];
                for round in 0..4 {
                    kernel.eval_into(inputs, n, &mut out).unwrap();
                    assert_same_bits(&format!("thread {t}, round {round}"), &out, want);
                    out.fill(f64::NAN);
                }
            });
        }
    });
}

/// The evaluator with inputs and outputs in `HostBuffer`s: direct copies, the input checks run
/// while the batch is on the device; valid boxes give the CPU's bits, an invalid one (found
/// during the batch) is still the error, naming the box.
#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn evaluator_checks_direct_batches() {
    crate::common::gpu::require_gpu("evaluator_checks_direct_batches");
    let expr = Expression::parse(EXPR).unwrap();
    let eval = Evaluator::new(&expr, Precision::F64, BackendChoice::Gpu).unwrap();
    let kernel = eval.gpu_kernel().expect("a GPU evaluator");
    let program = program(Precision::F64);
    let n = 300_000;
    let inputs = boxes(5, program.n_vars(), n, Precision::F64);
    let want = ivjit::internals::cpu::eval::eval_soa(&program, &inputs, n);
    let mut locked_in = HostBuffer::new(inputs.len()).unwrap();
    locked_in.copy_from_slice(&inputs);
    let mut locked_out = HostBuffer::new(want.len()).unwrap();
    locked_out.fill(f64::NAN);
    assert_eq!(
        kernel.copies_directly(&locked_in, &locked_out),
        kernel.host_transfer() != gpu::HostTransfer::Staged
    );
    eval.eval_soa_into(&locked_in, n, &mut locked_out).unwrap();
    assert_same_bits("evaluator, HostBuffers", &locked_out, &want);
    // Box 123456 of the second variable inverted (lo > hi): the error names it.
    let var = &program.var_names[1];
    let (lo, hi) = (2 * n + 123_456, 3 * n + 123_456);
    locked_in[lo] = 2.0;
    locked_in[hi] = 1.0;
    let err = eval
        .eval_soa_into(&locked_in, n, &mut locked_out)
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("box 123456") && text.contains(&format!("variable {var}")),
        "{text}"
    );
}

/// `HostBuffer::new_or_plain` always gives a zeroed buffer of the asked length: locked when
/// there is a GPU, plain memory (still usable by every evaluator) when there is none. A size
/// the machine cannot hold is an error, never an abort (issue 30, 5).
#[test]
fn host_buffer_falls_back_to_plain_memory() {
    let gpu = gpu::detect().is_ok();
    let buffer = HostBuffer::new_or_plain(1000).unwrap();
    assert_eq!(buffer.len(), 1000);
    assert!(buffer.iter().all(|&v| v == 0.0));
    assert_eq!(buffer.is_locked(), gpu, "{buffer:?}");
    assert_eq!(HostBuffer::new(1000).is_ok(), gpu);
    // An empty buffer needs no lock and never fails.
    assert!(HostBuffer::new(0).is_ok_and(|b| b.is_empty()));
    // 8 TiB: out of memory; 2^62 values: beyond the address space.
    use ivjit::internals::gpu::HostAllocError;
    assert!(matches!(
        HostBuffer::new_or_plain(1 << 40),
        Err(HostAllocError::OutOfMemory { .. })
    ));
    assert!(matches!(
        HostBuffer::new_or_plain(1 << 62),
        Err(HostAllocError::TooLarge { .. })
    ));
    assert!(matches!(
        HostBuffer::new(1 << 62),
        Err(GpuError::HostAlloc(HostAllocError::TooLarge { .. }))
    ));
}

/// A batch given array by array (separate allocations, as NumPy arrays are): the CPU's bits,
/// staged and with every array locked per call (rows of one allocation share pages and are
/// locked as one range); through the evaluator, f32 columns into an f32 program too.
#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn columns_equal_one_block() {
    crate::common::gpu::require_gpu("columns_equal_one_block");
    let expr = Expression::parse(EXPR).unwrap();
    for p in [Precision::F64, Precision::F32] {
        let program = program(p);
        let n = 250_001;
        let inputs = boxes(91 + p as u64, program.n_vars(), n, p);
        let want = ivjit::internals::cpu::eval::eval_soa(&program, &inputs, n);
        let separate: Vec<Vec<f64>> = inputs.chunks(n).map(<[f64]>::to_vec).collect();
        let columns: Vec<&[f64]> = separate.iter().map(Vec::as_slice).collect();
        let rows: Vec<&[f64]> = inputs.chunks(n).collect();
        for transfer in [HostTransfer::Staged, HostTransfer::Pinned] {
            let kernel = GpuKernel::with_options(
                &program,
                &KernelOptions {
                    host_transfer: Some(transfer),
                    ..options()
                },
            )
            .unwrap();
            let mut out: Vec<Vec<f64>> = want.chunks(n).map(|c| vec![f64::NAN; c.len()]).collect();
            let mut outs: Vec<&mut [f64]> = out.iter_mut().map(Vec::as_mut_slice).collect();
            kernel.eval_columns(&columns, &mut outs).unwrap();
            assert_same_bits(
                &format!("{p:?}, {transfer:?}, columns"),
                &out.concat(),
                &want,
            );
            let mut block = vec![f64::NAN; want.len()];
            let mut outs: Vec<&mut [f64]> = block.chunks_mut(n).collect();
            kernel.eval_columns(&rows, &mut outs).unwrap();
            assert_same_bits(&format!("{p:?}, {transfer:?}, rows"), &block, &want);
        }
        // The evaluator, with f32 columns for the f32 program (its boxes' bounds are f32
        // values: `boxes` makes them so).
        let eval = Evaluator::new(&expr, p, BackendChoice::Gpu).unwrap();
        let narrow: Vec<Vec<f32>> = separate
            .iter()
            .map(|c| c.iter().map(|&x| x as f32).collect())
            .collect();
        let columns: Vec<ivjit::Column> = match p {
            Precision::F64 => separate.iter().map(|c| ivjit::Column::F64(c)).collect(),
            Precision::F32 => narrow.iter().map(|c| ivjit::Column::F32(c)).collect(),
        };
        let mut out: Vec<Vec<f64>> = want.chunks(n).map(|c| vec![f64::NAN; c.len()]).collect();
        let mut outs: Vec<&mut [f64]> = out.iter_mut().map(Vec::as_mut_slice).collect();
        eval.eval_columns(&columns, &mut outs).unwrap();
        assert_same_bits(&format!("{p:?}, evaluator columns"), &out.concat(), &want);
    }
}

/// Device arrays in separate allocations (as CuPy and PyTorch arrays are), evaluated where they
/// are by `GpuKernel::eval_device`: the CPU's bits in both precisions, empty boxes (NaN, NaN)
/// accepted, and an invalid pair (lo > hi; a single NaN) reported, in the same pass.
#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn device_arrays_equal_cpu_and_are_checked() {
    crate::common::gpu::require_gpu("device_arrays_equal_cpu_and_are_checked");
    use cudarc::driver::{CudaContext, DevicePtr};
    for p in [Precision::F64, Precision::F32] {
        let program = program(p);
        let n = 100_003;
        let inputs = boxes(17 + p as u64, program.n_vars(), n, p);
        let want = ivjit::internals::cpu::eval::eval_soa(&program, &inputs, n);
        let kernel = GpuKernel::new(&program).unwrap();
        let ctx = CudaContext::new(kernel.device_ordinals()[0]).unwrap();
        let stream = ctx.default_stream();
        macro_rules! run {
            ($t:ty, $inputs:expr) => {{
                let d_in: Vec<_> = $inputs
                    .chunks(n)
                    .map(|c| {
                        let c: Vec<$t> = c.iter().map(|&x| x as $t).collect();
                        stream.clone_htod(&c).unwrap()
                    })
                    .collect();
                let d_out: Vec<_> = (0..2 * program.outputs.len())
                    .map(|_| stream.alloc_zeros::<$t>(n).unwrap())
                    .collect();
                let ptr = |s: &cudarc::driver::CudaSlice<$t>| s.device_ptr(&stream).0;
                let ins: Vec<u64> = d_in.iter().map(ptr).collect();
                let outs: Vec<u64> = d_out.iter().map(ptr).collect();
                // SAFETY: live allocations of n elements of the kernel's type on its device,
                // in the primary context; outputs distinct.
                let valid = unsafe { kernel.eval_device(&ins, &outs, n) }.unwrap();
                let got: Vec<f64> = d_out
                    .iter()
                    .flat_map(|d| stream.clone_dtoh(d).unwrap())
                    .map(|x| x as f64)
                    .collect();
                (valid, got)
            }};
        }
        let (valid, got) = match p {
            Precision::F64 => run!(f64, inputs),
            Precision::F32 => run!(f32, inputs),
        };
        assert!(valid, "{p:?}");
        assert_same_bits(&format!("{p:?}, device arrays"), &got, &want);
        // One inverted pair, then one half-empty pair: reported.
        for (lo, hi) in [(2.0, 1.0), (f64::NAN, 1.0)] {
            let mut bad = inputs.clone();
            bad[2 * n + 77] = lo; // variable 1, box 77
            bad[3 * n + 77] = hi;
            let (valid, _) = match p {
                Precision::F64 => run!(f64, bad),
                Precision::F32 => run!(f32, bad),
            };
            assert!(!valid, "{p:?}: ({lo}, {hi}) not reported");
        }
    }
}

/// A program too long for one kernel runs as stages (`ivjit::internals::scalar::split`): batches, device
/// arrays and a search give the CPU's bits, in both precisions.
#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn staged_programs_equal_cpu() {
    crate::common::gpu::require_gpu("staged_programs_equal_cpu");
    let (src, _) = crate::common::workloads::generated(1000);
    let expr = Expression::parse(&src).unwrap();
    for p in [Precision::F64, Precision::F32] {
        let program = expr.scalar(p).unwrap();
        assert!(program.insts.len() > 4000, "long enough to be staged");
        let n = 200_003;
        let inputs = boxes(23 + p as u64, program.n_vars(), n, p);
        let want = ivjit::internals::cpu::eval::eval_soa(&program, &inputs, n);
        // A fresh disk cache, outside the process's kernel cache: the stages are compiled now.
        let dir = tempfile::tempdir().unwrap();
        let t = Instant::now();
        let mut kernel = GpuKernel::with_options(
            &program,
            &KernelOptions {
                cache_dir: CacheDir::At(dir.path().to_path_buf()),
                memory_cache: false,
                ..options()
            },
        )
        .unwrap();
        eprintln!("{p:?}: staged kernel built in {:?}", t.elapsed());
        assert!(kernel.staged().is_some(), "compiled as stages first");
        for chunk in [None, Some(65_536)] {
            kernel.set_chunk_elements(chunk);
            let got = kernel.eval(&inputs, n).unwrap();
            assert_same_bits(&format!("{p:?} staged, chunk {chunk:?}"), &got, &want);
        }
        // The single kernel, compiled meanwhile on a thread of its own: the same bits.
        let t = Instant::now();
        assert!(kernel.wait_for_single_kernel(std::time::Duration::from_secs(300)));
        eprintln!("{p:?}: single kernel ready {:?} later", t.elapsed());
        assert_eq!(kernel.stages(), 1);
        let got = kernel.eval(&inputs, n).unwrap();
        assert_same_bits(&format!("{p:?} single after stages"), &got, &want);
        // Device arrays: checked, then the stages.
        use cudarc::driver::{CudaContext, DevicePtr};
        let ctx = CudaContext::new(kernel.device_ordinals()[0]).unwrap();
        let stream = ctx.default_stream();
        macro_rules! device {
            ($t:ty) => {{
                let d_in: Vec<_> = inputs
                    .chunks(n)
                    .map(|c| {
                        let c: Vec<$t> = c.iter().map(|&x| x as $t).collect();
                        stream.clone_htod(&c).unwrap()
                    })
                    .collect();
                let d_out: Vec<_> = (0..2 * program.outputs.len())
                    .map(|_| stream.alloc_zeros::<$t>(n).unwrap())
                    .collect();
                let ptr = |s: &cudarc::driver::CudaSlice<$t>| s.device_ptr(&stream).0;
                let ins: Vec<u64> = d_in.iter().map(ptr).collect();
                let outs: Vec<u64> = d_out.iter().map(ptr).collect();
                // SAFETY: live allocations of n elements on the kernel's device, distinct.
                let valid = unsafe { kernel.eval_device(&ins, &outs, n) }.unwrap();
                let got: Vec<f64> = d_out
                    .iter()
                    .flat_map(|d| stream.clone_dtoh(d).unwrap())
                    .map(|x| x as f64)
                    .collect();
                (valid, got)
            }};
        }
        let (valid, got) = match p {
            Precision::F64 => device!(f64),
            Precision::F32 => device!(f32),
        };
        assert!(valid);
        assert_same_bits(&format!("{p:?} staged, device arrays"), &got, &want);
    }
    // A search over a long 2-D expression: the GPU's classes are the CPU's.
    let src = (0..300)
        .map(|k| format!("{}*sqr(x - {}) * y", 1 + k % 7, k as f64 / 300.0))
        .collect::<Vec<_>>()
        .join(" + ")
        + " - 1";
    let expr = Expression::parse(&src).unwrap();
    assert!(expr.scalar(Precision::F64).unwrap().insts.len() > 4000);
    let opts = ivjit::search::RenderOptions::new(96, 64, [-1.0, 1.0, -1.0, 1.0]);
    let cpu = Evaluator::new(&expr, Precision::F64, BackendChoice::Cpu).unwrap();
    let gpu = Evaluator::new(&expr, Precision::F64, BackendChoice::Gpu).unwrap();
    let a = ivjit::search::render(&cpu, &opts).unwrap();
    let b = ivjit::search::render(&gpu, &opts).unwrap();
    assert_eq!(a.classes, b.classes);
    assert_eq!(a.rounds, b.rounds);
}

/// Decorated programs, whose decorations are one array each in device memory
/// (`Program::output_arrays`), give the CPU's bits, each decoration's pair included, on every
/// tier: the single kernel, the interpreter, the stages (a long program), over host batches
/// and device arrays, in both precisions.
#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn decorated_programs_equal_cpu_on_every_tier() {
    crate::common::gpu::require_gpu("decorated_programs_equal_cpu_on_every_tier");
    use cudarc::driver::{CudaContext, DevicePtr};
    use ivjit::internals::gpu::{InterpreterPolicy, TierUpPolicy};
    use ivjit::{Decoration, DecorationInputs};
    let (long, _) = crate::common::workloads::generated(1000);
    let sources = [
        (
            "x^4 - 5*x^2 + y^4 - 5*y^2 + z^4 - 5*z^2 + 11.8",
            DecorationInputs::FromBounds,
        ),
        ("sqrt(x) / y + floor(z), x*y - z", DecorationInputs::Given),
        (long.as_str(), DecorationInputs::FromBounds),
    ];
    let n = 50_003;
    for (k, (src, given)) in sources.into_iter().enumerate() {
        let expr = Expression::parse_with_decorations(src, given).unwrap();
        for p in [Precision::F64, Precision::F32] {
            let program = expr.scalar(p).unwrap();
            let what = format!("decorated {k} {p:?}");
            assert!(program.code_outputs > 0, "{what}");
            assert!(
                !program.has_point_calls(),
                "{what}: bit for bit needs inline code"
            );
            let mut inputs = boxes(31 + k as u64 + p as u64, program.n_vars(), n, p);
            if given == DecorationInputs::Given {
                // The decoration inputs (after the variables) hold codes.
                let nv = program.n_vars() / 2;
                for var in nv..program.n_vars() {
                    for i in 0..n {
                        let d = Decoration::ALL[(i * 7 + var) % Decoration::ALL.len()];
                        let c = f64::from(d.code());
                        inputs[2 * var * n + i] = c;
                        inputs[(2 * var + 1) * n + i] = c;
                    }
                }
            }
            let want = ivjit::internals::cpu::eval::eval_soa(&program, &inputs, n);
            let no = program.outputs.len();
            // A code's hi is its lo (the pair layout of every host interface).
            for j in no - program.code_outputs..no {
                assert_eq!(
                    want[2 * j * n..(2 * j + 1) * n],
                    want[(2 * j + 1) * n..(2 * j + 2) * n],
                    "{what}"
                );
            }
            let long = k == 2;
            let policies = [InterpreterPolicy::Never, InterpreterPolicy::Only];
            for interpreter in policies.into_iter().take(if long { 1 } else { 2 }) {
                let kernel = GpuKernel::with_options(
                    &program,
                    &KernelOptions {
                        interpreter: Some(interpreter),
                        tier_up: Some(TierUpPolicy::Never),
                        ..options()
                    },
                )
                .unwrap();
                let tier = format!("{what}, {interpreter:?}, staged {:?}", kernel.staged());
                if matches!(interpreter, InterpreterPolicy::Never) {
                    // (The interpreter counts as one stage.)
                    assert_eq!(kernel.staged().is_some(), long, "{tier}");
                }
                let got = kernel.eval(&inputs, n).unwrap();
                assert_same_bits(&format!("{tier}, batch"), &got, &want);
                let ctx = CudaContext::new(kernel.device_ordinals()[0]).unwrap();
                let stream = ctx.default_stream();
                macro_rules! device {
                    ($t:ty) => {{
                        let d_in: Vec<_> = inputs
                            .chunks(n)
                            .map(|c| {
                                let c: Vec<$t> = c.iter().map(|&x| x as $t).collect();
                                stream.clone_htod(&c).unwrap()
                            })
                            .collect();
                        let d_out: Vec<_> = (0..2 * no)
                            .map(|_| stream.alloc_zeros::<$t>(n).unwrap())
                            .collect();
                        let ptr = |s: &cudarc::driver::CudaSlice<$t>| s.device_ptr(&stream).0;
                        let ins: Vec<u64> = d_in.iter().map(ptr).collect();
                        let outs: Vec<u64> = d_out.iter().map(ptr).collect();
                        // SAFETY: live allocations of n elements on the kernel's device,
                        // distinct.
                        let valid = unsafe { kernel.eval_device(&ins, &outs, n) }.unwrap();
                        let got: Vec<f64> = d_out
                            .iter()
                            .flat_map(|d| stream.clone_dtoh(d).unwrap())
                            .map(|x| x as f64)
                            .collect();
                        (valid, got)
                    }};
                }
                let (valid, got) = match p {
                    Precision::F64 => device!(f64),
                    Precision::F32 => device!(f32),
                };
                assert!(valid, "{tier}");
                assert_same_bits(&format!("{tier}, device arrays"), &got, &want);
            }
        }
    }
}

/// A contractor (HC4Revise, `Expression::contractor`) is a program like any other: on the GPU
/// it narrows boxes to the CPU's bits, in both precisions (a polynomial and rational system
/// without point calls, three sweeps).
#[test]
#[cfg_attr(
    not(feature = "gpu-tests"),
    ignore = "needs a GPU: --features gpu-tests"
)]
fn contractors_equal_cpu() {
    crate::common::gpu::require_gpu("contractors_equal_cpu");
    // (Not pown(z, 3): pownRev's root is seeded by the library's pow, a point call.)
    let expr = Expression::parse("x^2 + y^2 - z, x*y / (1 + z^2), abs(x - y) + z^2").unwrap();
    let ranges = [
        ivjit::Interval::new(0.0, 1.0).unwrap(),
        ivjit::Interval::new(-0.25, 0.25).unwrap(),
        ivjit::Interval::new(0.5, 2.0).unwrap(),
    ];
    let contractor = expr.contractor(&ranges, 3).unwrap();
    for p in [Precision::F64, Precision::F32] {
        let program = contractor.scalar(p).unwrap();
        assert!(!program.has_point_calls(), "bit for bit needs inline code");
        let n = 100_003;
        let inputs = boxes(41 + p as u64, program.n_vars(), n, p);
        let want = ivjit::internals::cpu::eval::eval_soa(&program, &inputs, n);
        let kernel = GpuKernel::with_options(&program, &options()).unwrap();
        let got = kernel.eval(&inputs, n).unwrap();
        assert_same_bits(&format!("contractor {p:?}"), &got, &want);
        // It narrows: some boxes shrink, some become empty.
        let empty = (0..n).filter(|&i| want[i].is_nan()).count();
        let narrowed = (0..n)
            .filter(|&i| {
                !want[i].is_nan() && (want[i] != inputs[i] || want[n + i] != inputs[n + i])
            })
            .count();
        assert!(
            empty > 100 && narrowed > 100,
            "{p:?}: {empty} empty, {narrowed} narrowed"
        );
    }
}
