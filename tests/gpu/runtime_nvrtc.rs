//! The point-function runtime, offline (no GPU): NVRTC compiles `runtime/ivjit_math.cu` for
//! sm_90, the pinned ptxas assembles the runtime and a kernel that calls every point function in
//! both precisions as relocatable code, and the pinned nvlink links them into a cubin (the same
//! job the driver's linker does in `GpuKernel::new`). Also the disk cache: hit, miss, corrupt
//! entries.
//!
//! Tools: `tools/install-nvrtc` puts libnvrtc.so.13 and libnvrtc-builtins.so.13.0 in
//! `.tools/nvrtc/` (or set `$IVJIT_NVRTC_DIR`) and nvlink at `.tools/nvlink` (or `$IVJIT_NVLINK`);
//! ptxas comes from `tools/install-ptxas` (or `$IVJIT_PTXAS`). Without them the tests fail, like
//! the ptxas tests: an untested runtime proves nothing.
//!
//! libnvrtc loads libnvrtc-builtins by bare name, which only works when its folder is on
//! `LD_LIBRARY_PATH` when the process starts (the loader reads it once). So each test re-executes
//! this test binary for itself alone with `LD_LIBRARY_PATH` extended and `IVJIT_NVRTC_CHILD=1`,
//! and the child does the work. Where there is no `.tools/nvrtc` but NVRTC is installed
//! system-wide (the GPU machine: CUDA 13.0 in the loader cache), the test runs in-process, and
//! ptxas/nvlink fall back to `/usr/local/cuda/bin`.

use std::path::{Path, PathBuf};
use std::process::Command;

use ivjit::internals::gpu::runtime::{self, CacheOutcome};
use ivjit::internals::ptx;
use ivjit::internals::scalar::{
    BinaryFn, Bound, Builder, PointFn, Precision, Program, Round, UnaryFn, Value,
};

const CHILD_VAR: &str = "IVJIT_NVRTC_CHILD";

use crate::common::tools::{root, tool};

/// The folder holding the pinned libnvrtc: `$IVJIT_NVRTC_DIR` or `.tools/nvrtc`, if present.
fn local_nvrtc_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("IVJIT_NVRTC_DIR") {
        let dir = PathBuf::from(dir);
        assert!(
            dir.join("libnvrtc.so.13").is_file(),
            "IVJIT_NVRTC_DIR={} holds no libnvrtc.so.13",
            dir.display()
        );
        return Some(dir);
    }
    let dir = root().join(".tools/nvrtc");
    dir.join("libnvrtc.so.13").is_file().then_some(dir)
}

/// In the parent: runs `test` in a child process of this binary with NVRTC's folder on
/// `LD_LIBRARY_PATH` and returns false. In the child, or when NVRTC is installed system-wide
/// and there is no local copy: returns true (do the work here).
fn in_child(test: &str) -> bool {
    if std::env::var(CHILD_VAR).as_deref() == Ok("1") {
        return true;
    }
    let Some(dir) = local_nvrtc_dir() else {
        assert!(
            runtime::nvrtc_present(),
            "NVRTC not found: run tools/install-nvrtc (it puts libnvrtc in .tools/nvrtc) or set \
             IVJIT_NVRTC_DIR"
        );
        return true;
    };
    let mut path = dir.into_os_string();
    if let Some(old) = std::env::var_os("LD_LIBRARY_PATH").filter(|v| !v.is_empty()) {
        path.push(":");
        path.push(old);
    }
    let exe = std::env::current_exe().expect("path of the test binary");
    let out = Command::new(exe)
        .args([
            &crate::common::tools::test_name(module_path!(), test),
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("LD_LIBRARY_PATH", path)
        .env(CHILD_VAR, "1")
        .output()
        .expect("re-execute the test binary");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    print!("{stdout}");
    eprint!("{stderr}");
    assert!(
        out.status.success(),
        "child test {test} failed ({})",
        out.status
    );
    assert!(
        stdout.contains("1 passed"),
        "child test {test} did not run: {stdout}"
    );
    false
}

/// Every point function with every rounding, in one program: outputs (down, up) and
/// (nearest, nearest) per function; binary functions take (x.lo, y.lo).
fn every_point_function(p: Precision) -> Program {
    let mut b = Builder::new(p, vec!["x".into(), "y".into()]);
    let x = b.input(0, Bound::Lo);
    let y = b.input(1, Bound::Lo);
    let mut outs: Vec<(Value, Value)> = Vec::new();
    for f in PointFn::all() {
        let [d, u, n] = [Round::Down, Round::Up, Round::Nearest].map(|r| match f {
            PointFn::Unary(f) => b.point(f, x, r),
            PointFn::Binary(f) => b.point2(f, y, x, r),
        });
        outs.push((d, u));
        outs.push((n, n));
    }
    b.finish(outs)
}

fn run(cmd: &mut Command, what: &str) {
    let out = cmd.output().unwrap_or_else(|e| panic!("run {what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// ptxas -c (relocatable) for sm_90.
fn assemble_relocatable(ptx_file: &Path, object: &Path) {
    let ptxas = tool("IVJIT_PTXAS", "ptxas", "tools/install-ptxas");
    run(
        Command::new(ptxas)
            .args(["-c", "--gpu-name", "sm_90", "-o"])
            .arg(object)
            .arg(ptx_file),
        &format!("ptxas -c {}", ptx_file.display()),
    );
}

#[test]
fn runtime_compiles_and_links_with_a_kernel_calling_every_function() {
    if !in_child("runtime_compiles_and_links_with_a_kernel_calling_every_function") {
        return;
    }
    let version = runtime::nvrtc_version().expect("NVRTC loads");
    println!("NVRTC {}.{}", version.0, version.1);
    let nvlink = tool("IVJIT_NVLINK", "nvlink", "tools/install-nvrtc");
    let dir = tempfile::tempdir().expect("temporary directory");
    for p in [Precision::F64, Precision::F32] {
        let program = every_point_function(p);
        let fns = ptx::point_functions(&program);
        assert_eq!(fns, PointFn::all().collect::<Vec<_>>());
        let t = std::time::Instant::now();
        let rt = runtime::compile("compute_90", p, &fns)
            .unwrap_or_else(|e| panic!("NVRTC compiles the runtime ({p}): {e}"));
        println!(
            "{p}: runtime of {} functions compiled in {:.0} ms, {} bytes of PTX",
            fns.len(),
            t.elapsed().as_secs_f64() * 1e3,
            rt.len()
        );
        for f in PointFn::all() {
            let sym = ptx::runtime_symbol(f, p);
            assert!(
                rt.lines()
                    .any(|l| l.starts_with(".visible .func") && l.contains(&format!(" {sym}("))),
                "runtime PTX lacks .visible .func {sym}"
            );
        }
        assert!(rt.contains(".target sm_90"), "runtime targets sm_90");
        let version = rt
            .lines()
            .find(|l| l.starts_with(".version"))
            .unwrap_or("?");
        println!("{p}: runtime PTX header: {version}");
        // The GPU machine's driver (580, CUDA 13.0) accepts PTX ISA 9.0 at most.
        let isa: Vec<u32> = version
            .trim_start_matches(".version")
            .trim()
            .split('.')
            .map(|n| n.parse().expect("PTX ISA version number"))
            .collect();
        assert!(
            isa <= vec![9, 0],
            "NVRTC emits {version}, which driver 580 rejects"
        );
        let kernel = ptx::emit(&program);
        let (kp, rp) = (
            dir.path().join(format!("kernel_{p}.ptx")),
            dir.path().join(format!("runtime_{p}.ptx")),
        );
        std::fs::write(&kp, &kernel).unwrap();
        std::fs::write(&rp, &rt).unwrap();
        let (ko, ro) = (kp.with_extension("o"), rp.with_extension("o"));
        assemble_relocatable(&kp, &ko);
        assemble_relocatable(&rp, &ro);
        let cubin = dir.path().join(format!("linked_{p}.cubin"));
        run(
            Command::new(&nvlink)
                .args(["-arch=sm_90", "-o"])
                .arg(&cubin)
                .arg(&ko)
                .arg(&ro),
            &format!("nvlink ({p})"),
        );
        let size = std::fs::metadata(&cubin).unwrap().len();
        assert!(size > 0);
        println!("{p}: kernel + runtime linked by nvlink into a {size}-byte cubin");
    }
}

#[test]
fn runtime_holds_only_the_functions_asked_for() {
    if !in_child("runtime_holds_only_the_functions_asked_for") {
        return;
    }
    let rt = runtime::compile(
        "compute_90",
        Precision::F64,
        &[UnaryFn::Exp.into(), BinaryFn::Atan2.into()],
    )
    .expect("NVRTC compiles");
    let funcs: Vec<&str> = rt
        .lines()
        .filter(|l| l.starts_with(".visible .func"))
        .collect();
    assert_eq!(funcs.len(), 2, "{funcs:?}");
    assert!(funcs.iter().any(|l| l.contains(" ivjit_exp_f64(")));
    assert!(funcs.iter().any(|l| l.contains(" ivjit_atan2_f64(")));
}

#[test]
fn cache_hits_misses_and_rebuilds_corrupt_entries() {
    if !in_child("cache_hits_misses_and_rebuilds_corrupt_entries") {
        return;
    }
    let dir = tempfile::tempdir().expect("temporary directory");
    let cache = dir.path().join("nested").join("ivjit");
    let fns: [PointFn; 2] = [UnaryFn::Sin.into(), UnaryFn::Cos.into()];
    let arch = "compute_90";
    let p = Precision::F32;
    let (first, how) = runtime::runtime_ptx_in(Some(&cache), arch, p, &fns).expect("compiles");
    assert_eq!(how, CacheOutcome::Compiled { stored: true });
    let entries: Vec<PathBuf> = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(
        entries.len(),
        1,
        "one entry, no temporary files left: {entries:?}"
    );
    let entry = &entries[0];
    let name = entry.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.starts_with("runtime-") && name.ends_with(".ptx"),
        "{name}"
    );

    let t = std::time::Instant::now();
    let (second, how) = runtime::runtime_ptx_in(Some(&cache), arch, p, &fns).expect("cached");
    assert_eq!(how, CacheOutcome::Hit);
    assert_eq!(first, second);
    println!("cache hit in {:.2} ms", t.elapsed().as_secs_f64() * 1e3);

    // Function order does not matter: same key.
    let (_, how) = runtime::runtime_ptx_in(
        Some(&cache),
        arch,
        p,
        &[UnaryFn::Cos.into(), UnaryFn::Sin.into()],
    )
    .expect("cached");
    assert_eq!(how, CacheOutcome::Hit);

    // Corruptions: a flipped byte in the body, a truncated file, an empty file, garbage.
    let good = std::fs::read(entry).unwrap();
    let mut flipped = good.clone();
    let at = good.len() - 10;
    flipped[at] ^= 0x20;
    let corruptions: Vec<(&str, Vec<u8>)> = vec![
        ("flipped byte", flipped),
        ("truncated", good[..good.len() / 2].to_vec()),
        ("empty", Vec::new()),
        ("garbage", b"\xff\xfe not ptx at all".to_vec()),
    ];
    for (what, bytes) in corruptions {
        std::fs::write(entry, bytes).unwrap();
        let (ptx, how) = runtime::runtime_ptx_in(Some(&cache), arch, p, &fns)
            .unwrap_or_else(|e| panic!("{what}: rebuild failed: {e}"));
        assert_eq!(how, CacheOutcome::Compiled { stored: true }, "{what}");
        assert_eq!(ptx, first, "{what}");
        assert_eq!(
            std::fs::read(entry).unwrap(),
            good,
            "{what}: entry rewritten"
        );
    }

    // A different function set, precision or architecture is a different entry.
    runtime::runtime_ptx_in(Some(&cache), arch, p, &[UnaryFn::Sin.into()]).unwrap();
    runtime::runtime_ptx_in(Some(&cache), arch, Precision::F64, &fns).unwrap();
    runtime::runtime_ptx_in(Some(&cache), "compute_100", p, &fns).unwrap();
    assert_eq!(std::fs::read_dir(&cache).unwrap().count(), 4);

    // An unusable cache folder (a file in its place) is not an error.
    let blocked = dir.path().join("blocked");
    std::fs::write(&blocked, b"a file, not a folder").unwrap();
    let (ptx, how) = runtime::runtime_ptx_in(Some(&blocked), arch, p, &fns).expect("compiles");
    assert_eq!(how, CacheOutcome::Compiled { stored: false });
    assert_eq!(ptx, first);
}

#[test]
fn cache_dir_follows_the_environment() {
    // Pure environment logic, no NVRTC; run in a child so that the variables set here do not
    // race with other tests of this binary.
    if std::env::var(CHILD_VAR).as_deref() != Ok("1") {
        let exe = std::env::current_exe().unwrap();
        let out = Command::new(exe)
            .args([
                &crate::common::tools::test_name(
                    module_path!(),
                    "cache_dir_follows_the_environment",
                ),
                "--exact",
                "--test-threads=1",
            ])
            .env(CHILD_VAR, "1")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        return;
    }
    // SAFETY (edition 2021: set_var is safe): single-threaded child process.
    std::env::set_var("HOME", "/home/u");
    std::env::remove_var("XDG_CACHE_HOME");
    std::env::remove_var("IVJIT_CACHE_DIR");
    assert_eq!(
        runtime::cache_dir(),
        Some(PathBuf::from("/home/u/.cache/ivjit"))
    );
    std::env::set_var("XDG_CACHE_HOME", "relative/is/ignored");
    assert_eq!(
        runtime::cache_dir(),
        Some(PathBuf::from("/home/u/.cache/ivjit"))
    );
    std::env::set_var("XDG_CACHE_HOME", "/xdg");
    assert_eq!(runtime::cache_dir(), Some(PathBuf::from("/xdg/ivjit")));
    std::env::set_var("IVJIT_CACHE_DIR", "/explicit");
    assert_eq!(runtime::cache_dir(), Some(PathBuf::from("/explicit")));
    std::env::set_var("IVJIT_CACHE_DIR", "");
    assert_eq!(runtime::cache_dir(), Some(PathBuf::from("/xdg/ivjit")));
}

/// Every search kernel module (`ivjit::search::kernel_ptx`: render, ray, trace, minimize,
/// exclude, pave, the tape interpreter of the pruned render, also with two operations run by their
/// lowering, and the point-sampling baseline of a tape) compiles with NVRTC and assembles with
/// ptxas for sm_90 (relocatable: ray, trace and the extended tape call programs linked in at load time) in
/// both precisions, the tape at one slot and at Prospero's slot count; ptxas's registers and
/// stack frame are printed (the tape's slots live in the frame: 16 bytes each in f64). With
/// `IVJIT_DUMP_SEARCH_PTX=DIR` the PTX is also written to DIR (to compare two builds).
#[test]
fn every_search_kernel_compiles_and_assembles() {
    if !in_child("every_search_kernel_compiles_and_assembles") {
        return;
    }
    let ptxas = tool("IVJIT_PTXAS", "ptxas", "tools/install-ptxas");
    let dir = std::env::temp_dir().join(format!("ivjit-search-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let dump = std::env::var_os("IVJIT_DUMP_SEARCH_PTX").map(PathBuf::from);
    let mut seen = Vec::new();
    for p in [Precision::F64, Precision::F32] {
        for slots in [1, 192] {
            let modules = ivjit::search::kernel_ptx(p, slots, "compute_90")
                .unwrap_or_else(|e| panic!("NVRTC compiles the search kernels ({p}): {e}"));
            for (name, ptx) in modules {
                if slots == 192 && name != "tape" {
                    continue;
                }
                assert!(ptx.contains(".entry ivjit_"), "{name} {p}: no kernel entry");
                seen.push(name);
                let file = dir.join(format!("{name}-{p}-{slots}.ptx"));
                std::fs::write(&file, &ptx).unwrap();
                if let Some(d) = &dump {
                    std::fs::create_dir_all(d).unwrap();
                    std::fs::write(d.join(format!("{name}-{p}-{slots}.ptx")), &ptx).unwrap();
                }
                let out = Command::new(&ptxas)
                    .args(["-c", "-v", "--gpu-name", "sm_90", "-o"])
                    .arg(dir.join("search.o"))
                    .arg(&file)
                    .output()
                    .expect("run ptxas");
                let log = String::from_utf8_lossy(&out.stderr);
                assert!(out.status.success(), "ptxas {name} {p} {slots}: {log}");
                if name == "tape" {
                    for line in log
                        .lines()
                        .filter(|l| l.contains("registers") || l.contains("stack"))
                    {
                        println!("tape {p} {slots} slots: {}", line.trim());
                    }
                }
            }
        }
    }
    seen.sort();
    seen.dedup();
    assert_eq!(
        seen,
        [
            "exclude",
            "mesh-place",
            "minimize",
            "pave",
            "point-sample",
            "ray",
            "render",
            "tape",
            "tape-extended",
            "trace"
        ],
        "every search module compiled"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// The runtime's functions spliced into their call sites (`ivjit::internals::gpu::inline`, what the GPU
/// loader does before linking): for every point function in both precisions, the splicer
/// recognizes NVRTC's text, the module (two call sites, two copies) calls none of the
/// runtime's functions any more, and
/// ptxas assembles it as a whole program (no linking). A kernel of more calls than the splicer
/// takes is left to the linker.
#[test]
fn every_point_function_splices_into_its_call_sites() {
    if !in_child("every_point_function_splices_into_its_call_sites") {
        return;
    }
    let ptxas = tool("IVJIT_PTXAS", "ptxas", "tools/install-ptxas");
    let dir = tempfile::tempdir().expect("temporary directory");
    for p in [Precision::F64, Precision::F32] {
        let all = every_point_function(p);
        let rt = runtime::compile("compute_90", p, &ptx::point_functions(&all))
            .unwrap_or_else(|e| panic!("NVRTC compiles the runtime ({p}): {e}"));
        assert!(
            ivjit::internals::gpu::inline::inline_runtime(&ptx::emit(&all), &rt).is_none(),
            "{p}: a kernel of {} calls is spliced",
            PointFn::all().count()
        );
        for f in PointFn::all() {
            let mut b = Builder::new(p, vec!["x".into(), "y".into()]);
            let x = b.input(0, Bound::Lo);
            let y = b.input(1, Bound::Hi);
            // Two call sites, so the copies' registers and labels must be renamed apart.
            let (d, u) = match f {
                PointFn::Unary(f) => (b.point(f, x, Round::Down), b.point(f, y, Round::Up)),
                PointFn::Binary(f) => {
                    (b.point2(f, y, x, Round::Down), b.point2(f, x, y, Round::Up))
                }
            };
            let kernel = ptx::emit(&b.finish(vec![(d, u)]));
            let sym = ptx::runtime_symbol(f, p);
            let spliced = ivjit::internals::gpu::inline::inline_runtime(&kernel, &rt)
                .unwrap_or_else(|| panic!("{sym}: not spliced"));
            assert!(
                !spliced
                    .lines()
                    .any(|l| l.contains("call") && l.contains(&sym)),
                "{sym}: still called"
            );
            let file = dir.path().join(format!("{sym}.ptx"));
            std::fs::write(&file, &spliced).unwrap();
            run(
                Command::new(&ptxas)
                    .args(["--gpu-name", "sm_90", "-o"])
                    .arg(file.with_extension("cubin"))
                    .arg(&file),
                &format!("ptxas {sym} spliced"),
            );
        }
    }
}
