//! Where the CLI's output files go (`eval --output`, `render -o`), and what is never touched.
//!
//! - `-` is standard output.
//! - A path that is not a regular file (a device such as `/dev/null` or `/dev/stdout`, a FIFO,
//!   a socket) is written through, as any program would: replacing it by a regular file would
//!   change it for every process on the machine.
//! - A regular file (or a new one) is replaced atomically: the bytes go to a temporary file in
//!   the same folder, which is renamed over the path only when complete, so an error never
//!   leaves a partial file. On Linux the temporary file is anonymous (`O_TMPFILE`, linked into
//!   the folder just before the rename): a process killed while writing (Ctrl-C, SIGTERM,
//!   SIGKILL, out of memory) leaves nothing behind. Elsewhere, or on a file system without
//!   `O_TMPFILE`, it is a hidden named file that a SIGKILL can leave.
//! - A symbolic link is followed: its target is replaced, the link stays.
//! - The new file gets the replaced file's permissions, or `0666` less the umask for a new one
//!   (a temporary file's default, `0600`, is not what a user expects of an output).
//! - The output may not be one of the command's inputs (the same file, by device and inode,
//!   also through another name or a link): that would destroy the input. Refused before
//!   anything is written.
//!
//! Errors name the path the user gave, never a temporary file.

use super::Failure;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Refuses an output that is one of `inputs` (the same file by device and inode).
pub fn check_not_an_input(output: &Path, inputs: &[&Path]) -> Result<(), Failure> {
    if output == Path::new("-") {
        return Ok(());
    }
    let Ok(out) = fs::metadata(output) else {
        return Ok(()); // does not exist yet: cannot be an input
    };
    for input in inputs {
        if let Ok(inp) = fs::metadata(input) {
            if same_file(&out, &inp) {
                return Err(Failure::input(format!(
                    "the output {} is the input {}: writing it would destroy the input; \
                     choose another output path",
                    output.display(),
                    input.display()
                )));
            }
        }
    }
    Ok(())
}

#[cfg(unix)]
fn same_file(a: &fs::Metadata, b: &fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_file(_: &fs::Metadata, _: &fs::Metadata) -> bool {
    false
}

/// Writes `bytes` to `path` as the module comment says.
pub fn write(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    let io = |e: std::io::Error| Failure::runtime(format!("cannot write {}: {e}", path.display()));
    if path == Path::new("-") {
        let mut out = std::io::stdout().lock();
        return out.write_all(bytes).and_then(|()| out.flush()).map_err(io);
    }
    match fs::metadata(path) {
        Ok(m) if m.is_dir() => Err(Failure::input(format!(
            "cannot write {}: it is a folder; give a file name",
            path.display()
        ))),
        Ok(m) if !m.is_file() => {
            // A device, FIFO or socket: written through.
            let mut f = fs::OpenOptions::new().write(true).open(path).map_err(io)?;
            f.write_all(bytes).and_then(|()| f.flush()).map_err(io)
        }
        existing => {
            let target = resolve(path);
            let mode = existing.ok().map(|m| permissions_of(&m));
            replace(&target, bytes, mode).map_err(io)
        }
    }
}

/// The file a path names after following symbolic links (also a dangling one: its target is
/// created).
fn resolve(path: &Path) -> PathBuf {
    if let Ok(p) = fs::canonicalize(path) {
        return p;
    }
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        match fs::read_link(&p) {
            Ok(t) => {
                p = if t.is_absolute() {
                    t
                } else {
                    p.parent().unwrap_or(Path::new(".")).join(t)
                }
            }
            Err(_) => break,
        }
    }
    p
}

#[cfg(unix)]
fn permissions_of(m: &fs::Metadata) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    m.permissions().mode() & 0o7777
}

#[cfg(not(unix))]
fn permissions_of(_: &fs::Metadata) -> u32 {
    0o666
}

/// Replaces the regular file `target` (or creates it) with `bytes`, atomically; `mode`: the
/// replaced file's permissions.
fn replace(target: &Path, bytes: &[u8], mode: Option<u32>) -> std::io::Result<()> {
    let dir = target
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    #[cfg(target_os = "linux")]
    if let Some(result) = linux::replace_anonymous(dir, target, bytes, mode) {
        return result;
    }
    replace_named(dir, target, bytes, mode)
}

/// The portable way: a hidden temporary file beside the target, renamed over it.
fn replace_named(
    dir: &Path,
    target: &Path,
    bytes: &[u8],
    mode: Option<u32>,
) -> std::io::Result<()> {
    let mut builder = tempfile::Builder::new();
    builder.prefix(".ivjit-").suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // Created with 0666 (the umask applies), or the replaced file's mode set below.
        builder.permissions(fs::Permissions::from_mode(0o666));
    }
    let mut tmp = builder.tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.flush()?;
    #[cfg(unix)]
    if let Some(m) = mode {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file()
            .set_permissions(fs::Permissions::from_mode(m))?;
    }
    let _ = mode;
    tmp.persist(target).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(target_os = "linux")]
mod linux {
    use std::ffi::CString;
    use std::fs::File;
    use std::io::Write;
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::io::FromRawFd;
    use std::path::Path;

    fn cstr(p: &Path) -> std::io::Result<CString> {
        CString::new(p.as_os_str().as_bytes())
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidInput, "NUL in a path"))
    }

    /// Writes `bytes` to an anonymous file in `dir` (`O_TMPFILE`), links it in under a unique
    /// hidden name and renames that over `target`. `None` when the file system has no
    /// `O_TMPFILE` (the caller takes the named way).
    pub(super) fn replace_anonymous(
        dir: &Path,
        target: &Path,
        bytes: &[u8],
        mode: Option<u32>,
    ) -> Option<std::io::Result<()>> {
        let cdir = match cstr(dir) {
            Ok(c) => c,
            Err(e) => return Some(Err(e)),
        };
        // SAFETY: a valid NUL-terminated path; the descriptor is owned by the File below.
        let fd = unsafe {
            libc::open(
                cdir.as_ptr(),
                libc::O_TMPFILE | libc::O_WRONLY | libc::O_CLOEXEC,
                0o666 as libc::c_uint,
            )
        };
        if fd < 0 {
            let e = std::io::Error::last_os_error();
            return match e.raw_os_error() {
                // No O_TMPFILE here (old kernel, or a file system without it).
                Some(libc::EOPNOTSUPP) | Some(libc::EISDIR) | Some(libc::EINVAL) => None,
                _ => Some(Err(e)),
            };
        }
        // SAFETY: fd is a fresh descriptor that nothing else owns.
        let mut file = unsafe { File::from_raw_fd(fd) };
        // Ok(false): the anonymous file could not be linked in (no /proc): the named way.
        let result = (|| -> std::io::Result<bool> {
            file.write_all(bytes)?;
            file.flush()?;
            if let Some(m) = mode {
                use std::os::unix::fs::PermissionsExt;
                file.set_permissions(std::fs::Permissions::from_mode(m))?;
            }
            // Link the anonymous file in under a unique hidden name, then rename it over the
            // target (linkat cannot replace an existing file).
            let proc_path = CString::new(format!("/proc/self/fd/{fd}")).expect("no NUL");
            let name = target.file_name().map(|n| n.to_string_lossy().into_owned());
            let mut last = None;
            for attempt in 0..100u32 {
                let tmp = dir.join(format!(
                    ".{}.ivjit-{}-{attempt}.tmp",
                    name.as_deref().unwrap_or("output"),
                    std::process::id()
                ));
                let ctmp = cstr(&tmp)?;
                // SAFETY: valid NUL-terminated paths.
                let rc = unsafe {
                    libc::linkat(
                        libc::AT_FDCWD,
                        proc_path.as_ptr(),
                        libc::AT_FDCWD,
                        ctmp.as_ptr(),
                        libc::AT_SYMLINK_FOLLOW,
                    )
                };
                if rc == 0 {
                    return std::fs::rename(&tmp, target)
                        .inspect_err(|_| {
                            let _ = std::fs::remove_file(&tmp);
                        })
                        .map(|()| true);
                }
                let e = std::io::Error::last_os_error();
                match e.raw_os_error() {
                    Some(libc::EEXIST) => last = Some(e),
                    Some(libc::ENOENT) | Some(libc::EPERM) | Some(libc::EACCES) if attempt == 0 => {
                        return Ok(false)
                    }
                    _ => return Err(e),
                }
            }
            Err(last.expect("an attempt failed"))
        })();
        match result {
            Ok(true) => Some(Ok(())),
            Ok(false) => None,
            Err(e) => Some(Err(e)),
        }
    }
}
