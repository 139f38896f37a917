//! Where `--output` writes (issue 30): regular files replaced atomically with the permissions a
//! user expects, devices and FIFOs written through, symbolic links followed, `-` as standard
//! output, the input never overwritten, nothing left behind by a killed process, errors that
//! name the user's path.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::common::binary::ivjit_binary as binary;

fn ivjit_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(binary())
        .current_dir(dir)
        .args(args)
        .output()
        .expect("ivjit runs")
}

fn batch(dir: &Path, out: &str) -> Output {
    ivjit_in(
        dir,
        &[
            "eval",
            "x + 1",
            "--input",
            "in.csv",
            "--output",
            out,
            "--backend",
            "cpu",
        ],
    )
}

fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.csv"), "x_lo,x_hi\n1,2\n3,4\n").unwrap();
    dir
}

const WANT: &str = "lo,hi\n2,3\n4,5\n";

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn the_output_may_not_be_the_input() {
    let dir = setup();
    let d = dir.path();
    let o = batch(d, "in.csv");
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("is the input"), "{err}");
    assert_eq!(
        std::fs::read_to_string(d.join("in.csv")).unwrap(),
        "x_lo,x_hi\n1,2\n3,4\n"
    );
    // Through another name: a link to the input, and the expression file.
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("in.csv", d.join("alias.csv")).unwrap();
        let o = batch(d, "alias.csv");
        assert_eq!(o.status.code(), Some(2));
        std::fs::write(d.join("f.txt"), "x + 1").unwrap();
        let o = ivjit_in(
            d,
            &[
                "eval",
                "-f",
                "f.txt",
                "--input",
                "in.csv",
                "--output",
                "f.txt",
                "--backend",
                "cpu",
            ],
        );
        assert_eq!(
            o.status.code(),
            Some(2),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(std::fs::read_to_string(d.join("f.txt")).unwrap(), "x + 1");
        let o = ivjit_in(
            d,
            &["render", "-f", "f.txt", "-o", "f.txt", "--size", "4x4"],
        );
        assert_ne!(o.status.code(), Some(0));
        assert_eq!(std::fs::read_to_string(d.join("f.txt")).unwrap(), "x + 1");
    }
}

#[test]
fn a_dash_is_standard_output() {
    let dir = setup();
    let o = batch(dir.path(), "-");
    assert!(o.status.success());
    assert_eq!(String::from_utf8_lossy(&o.stdout), WANT);
    assert!(
        !dir.path().join("-").exists(),
        "a file named '-' was written"
    );
}

#[cfg(unix)]
#[test]
fn devices_and_fifos_are_written_through_links_followed() {
    use std::os::unix::fs::FileTypeExt;
    let dir = setup();
    let d = dir.path();
    // A device: /dev/null stays a device (it was turned into a regular file as root).
    let o = batch(d, "/dev/null");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(std::fs::metadata("/dev/null")
        .unwrap()
        .file_type()
        .is_char_device());
    // A FIFO: read by another process, stays a FIFO.
    let fifo = d.join("pipe");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let reader = Command::new("cat")
        .arg(&fifo)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let o = batch(d, "pipe");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let read = reader.wait_with_output().unwrap();
    assert_eq!(String::from_utf8_lossy(&read.stdout), WANT);
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    // A symbolic link: its target is written, the link stays.
    std::os::unix::fs::symlink("target.csv", d.join("link.csv")).unwrap();
    assert!(batch(d, "link.csv").status.success());
    assert!(std::fs::symlink_metadata(d.join("link.csv"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read_to_string(d.join("target.csv")).unwrap(), WANT);
    // Nothing else was left in the folder.
    assert_eq!(names(d), ["in.csv", "link.csv", "pipe", "target.csv"]);
}

#[cfg(unix)]
#[test]
fn new_and_replaced_files_get_the_expected_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let dir = setup();
    let d = dir.path();
    let mode = |name: &str| {
        std::fs::metadata(d.join(name))
            .unwrap()
            .permissions()
            .mode()
            & 0o777
    };
    // A new file: 0666 less the umask (022 here).
    let sh = |cmd: String| {
        let o = Command::new("sh")
            .current_dir(d)
            .arg("-c")
            .arg(cmd)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    let bin = binary();
    let run = |out: &str| {
        format!(
            "umask 022; '{}' eval 'x+1' --input in.csv --output {out} --backend cpu",
            bin.display()
        )
    };
    sh(run("new.csv"));
    assert_eq!(mode("new.csv"), 0o644);
    // A replaced file keeps its permissions.
    std::fs::set_permissions(d.join("new.csv"), std::fs::Permissions::from_mode(0o640)).unwrap();
    sh(run("new.csv"));
    assert_eq!(mode("new.csv"), 0o640);
    assert_eq!(std::fs::read_to_string(d.join("new.csv")).unwrap(), WANT);
}

#[test]
fn errors_name_the_users_path() {
    let dir = setup();
    let o = batch(dir.path(), "no/such/folder/out.csv");
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no/such/folder/out.csv"), "{err}");
    assert!(!err.contains(".tmp"), "{err}");
    let o = batch(dir.path(), ".");
    assert_ne!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stderr).contains("folder"));
}

/// A batch killed at any moment (SIGKILL: no handler runs) leaves no temporary file: the
/// output is written to an anonymous file (`O_TMPFILE`) linked in only when complete.
#[cfg(target_os = "linux")]
#[test]
fn a_killed_batch_leaves_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut csv = String::from("x_lo,x_hi\n");
    for i in 0..400_000 {
        csv.push_str(&format!("{i},{}\n", i + 1));
    }
    std::fs::write(d.join("in.csv"), csv).unwrap();
    std::fs::create_dir(d.join("out")).unwrap();
    let args = [
        "eval",
        "x*x + 1",
        "--input",
        "in.csv",
        "--output",
        "out/o.csv",
        "--backend",
        "cpu",
    ];
    // How long one run takes, then kills spread over it (and a little beyond).
    let t = std::time::Instant::now();
    assert!(ivjit_in(d, &args).status.success());
    let full = t.elapsed();
    std::fs::remove_file(d.join("out/o.csv")).unwrap();
    for k in 1..=12u32 {
        let mut child = Command::new(binary())
            .current_dir(d)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(full * k / 11);
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        let left = names(&d.join("out"));
        assert!(
            left.is_empty() || left == ["o.csv"],
            "after a kill at {k}/11 of a run: {left:?}"
        );
        if let Some(name) = left.first() {
            // A complete file or none.
            let text = std::fs::read_to_string(d.join("out").join(name)).unwrap();
            assert_eq!(text.lines().count(), 400_001);
            std::fs::remove_file(d.join("out").join(name)).unwrap();
        }
    }
}

/// A stream that does not end (`/dev/zero`) is refused after a bounded read, as an input file
/// or as an expression file: it was read until memory ran out (13 GB in 20 s).
#[cfg(unix)]
#[test]
fn an_endless_stream_is_refused() {
    let dir = setup();
    for args in [
        &["eval", "x", "--input", "/dev/zero", "--backend", "cpu"][..],
        &[
            "eval",
            "-f",
            "/dev/zero",
            "--var",
            "x=1",
            "--backend",
            "cpu",
        ][..],
    ] {
        let o = ivjit_in(dir.path(), args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("not a regular file"), "{err}");
    }
}

/// A batch larger than the memory the process may use fails with exit status 1 and a message,
/// never an abort (it was SIGABRT, exit 134, with no message): every buffer whose size comes
/// from the input is allocated fallibly. (`ulimit -v` also counts the C library's per-thread
/// malloc arenas, 64 MiB of address space each: on a machine of many cores a small allocation
/// of some thread can fail first, which no program can report. The test fixes two threads and
/// two arenas, as a user under such a limit would.)
#[cfg(target_os = "linux")]
#[test]
fn a_batch_beyond_the_memory_limit_fails_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A 4M-row .npy of [1, 2] boxes (64 MB).
    let n = 4_000_000usize;
    let header = format!("{{'descr': '<f8', 'fortran_order': False, 'shape': ({n}, 2), }}");
    let pad = 64 - (10 + header.len() + 1) % 64;
    let header = format!("{header}{}\n", " ".repeat(pad));
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    for _ in 0..n {
        bytes.extend_from_slice(&1.0f64.to_le_bytes());
        bytes.extend_from_slice(&2.0f64.to_le_bytes());
    }
    std::fs::write(d.join("big.npy"), bytes).unwrap();
    let o = Command::new("sh")
        .current_dir(d)
        .arg("-c")
        .arg(format!(
            "ulimit -v 150000; RAYON_NUM_THREADS=2 MALLOC_ARENA_MAX=2 exec '{}' eval 'x*x' \
             --input big.npy --output out.npy --backend cpu",
            binary().display()
        ))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("not enough memory"), "{err}");
    assert!(!d.join("out.npy").exists());
}

/// A CSV error names the cell at fault: `-inf,-inf` has its upper bound at -inf (it named the
/// `_lo` column).
#[test]
fn csv_errors_name_the_cell_at_fault() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.csv"), "x_lo,x_hi\n-inf,-inf\n").unwrap();
    let o = ivjit_in(
        dir.path(),
        &["eval", "x", "--input", "in.csv", "--backend", "cpu"],
    );
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("column x_hi"), "{err}");
    // Bounds that round to the same double but are inverted as written.
    std::fs::write(
        dir.path().join("in.csv"),
        "x_lo,x_hi\n0.10000000000000001,0.1\n",
    )
    .unwrap();
    let o = ivjit_in(
        dir.path(),
        &["eval", "x", "--input", "in.csv", "--backend", "cpu"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("greater than"));
}

/// A batch of 100,000 variables takes linear time (it took 79 s for 3 rows: the CLI looked
/// every name up by scanning).
#[test]
fn a_batch_of_many_variables_is_linear() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let n = 100_000;
    let names: Vec<String> = (0..n).map(|i| format!("v{i}")).collect();
    std::fs::write(d.join("f.txt"), names.join(" + ")).unwrap();
    let mut csv = names
        .iter()
        .map(|v| format!("{v}_lo,{v}_hi"))
        .collect::<Vec<_>>()
        .join(",");
    csv.push('\n');
    for _ in 0..3 {
        csv.push_str(&vec!["1,2"; n].join(","));
        csv.push('\n');
    }
    std::fs::write(d.join("in.csv"), csv).unwrap();
    let t = std::time::Instant::now();
    let o = ivjit_in(
        d,
        &[
            "eval",
            "-f",
            "f.txt",
            "--input",
            "in.csv",
            "--backend",
            "cpu",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "lo,hi\n100000,200000\n100000,200000\n100000,200000\n"
    );
    assert!(t.elapsed().as_secs() < 20, "{:?}", t.elapsed());
}

/// A render larger than the memory the process may use fails with a message and exit status
/// 1 (it aborted: the image and the last level's tiles, a byte per pixel, were infallible
/// allocations).
#[cfg(target_os = "linux")]
#[test]
fn a_render_beyond_the_memory_limit_fails_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    for prune in [false, true] {
        let mut cmd = format!(
            "ulimit -v 800000; RAYON_NUM_THREADS=2 MALLOC_ARENA_MAX=2 exec '{}' render \
             'x^2 + y^2 - 1' --size 32768x32767 -o r.npy --backend cpu",
            binary().display()
        );
        if prune {
            cmd.push_str(" --prune");
        }
        let o = Command::new("sh")
            .current_dir(dir.path())
            .arg("-c")
            .arg(cmd)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "prune {prune}: {err}");
        assert!(err.contains("out of memory"), "{err}");
    }
}
