//! The one disk-cache entry format, shared by the runtime's PTX (`runtime-<key>.ptx`) and the
//! linked kernels (`kernel-<key>.cubin`).
//!
//! Folder: `$IVJIT_CACHE_DIR` if set and not empty, else `$XDG_CACHE_HOME/ivjit` (when that is an
//! absolute path), else `$HOME/.cache/ivjit`; see [`cache_dir`]. An entry's key is a 128-bit hash
//! ([`key`]) of a format tag and everything the entry depends on. The file starts with one text
//! line, `// <format> key=<key> bytes=<n> sum=<checksum>` (a comment, so a PTX entry stays valid
//! PTX), then the body. An entry whose line does not match (corrupt, truncated, another version,
//! a collision of file names) or that cannot be read is treated as absent and rebuilt. Entries
//! are written to a temporary file in the same folder and renamed into place, so readers never
//! see a partial entry; a cache that cannot be written is not an error for the callers.

use std::io::Write;
use std::path::{Path, PathBuf};

/// The cache folder (see the module documentation), or `None` when no location is known.
pub fn cache_dir() -> Option<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(dir) = super::env::cache_dir() {
        return Some(PathBuf::from(dir));
    }
    if let Some(xdg) = var("XDG_CACHE_HOME").map(PathBuf::from) {
        if xdg.is_absolute() {
            return Some(xdg.join("ivjit"));
        }
    }
    var("HOME").map(|home| PathBuf::from(home).join(".cache").join("ivjit"))
}

/// 128-bit FNV-1a with a final mix (so that keys differing only in their last bytes do not share
/// most digits): stable across Rust versions and platforms, unlike `DefaultHasher`. Not
/// cryptographic; entries are verified against their header anyway.
pub(crate) fn fnv1a128(parts: &[&[u8]]) -> u128 {
    const OFFSET: u128 = 0x6c62272e07bb014262b821756295c58d;
    const PRIME: u128 = 0x0000000001000000000000000000013b;
    let mut h = OFFSET;
    for part in parts {
        // A separator byte after each part, so that ("ab", "c") and ("a", "bc") differ.
        for &b in part.iter().chain(std::iter::once(&0xffu8)) {
            h ^= u128::from(b);
            h = h.wrapping_mul(PRIME);
        }
    }
    for _ in 0..2 {
        h ^= h >> 67;
        h = h.wrapping_mul(PRIME);
        h ^= h >> 43;
    }
    h
}

/// The key of an entry: the hash of its format tag and the parts it depends on, as 32 hex digits.
pub(crate) fn key(format: &str, parts: &[&[u8]]) -> String {
    let mut all: Vec<&[u8]> = vec![format.as_bytes()];
    all.extend_from_slice(parts);
    format!("{:032x}", fnv1a128(&all))
}

fn header(format: &str, key: &str, body: &[u8]) -> String {
    format!(
        "// {format} key={key} bytes={} sum={:032x}\n",
        body.len(),
        fnv1a128(&[body])
    )
}

/// Result of looking an entry up.
pub(crate) enum Lookup {
    /// A valid entry's body.
    Valid(Vec<u8>),
    /// No entry (or one that cannot be read).
    Missing,
    /// An entry that fails its check.
    Invalid,
}

/// Reads the entry at `path` written with `format` and `key`, checking its header line.
pub(crate) fn read(path: &Path, format: &str, key: &str) -> Lookup {
    let Ok(bytes) = std::fs::read(path) else {
        return Lookup::Missing;
    };
    let Some(nl) = bytes.iter().position(|&b| b == b'\n') else {
        return Lookup::Invalid;
    };
    let (first, body) = bytes.split_at(nl + 1);
    if body.is_empty() || first != header(format, key, body).as_bytes() {
        return Lookup::Invalid;
    }
    Lookup::Valid(body.to_vec())
}

/// Writes the entry at `path` (in folder `dir`) atomically: a temporary file in `dir`, then a
/// rename.
pub(crate) fn write(
    dir: &Path,
    path: &Path,
    format: &str,
    key: &str,
    body: &[u8],
) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".ivjit-")
        .suffix(".tmp")
        .tempfile_in(dir)?;
    tmp.write_all(header(format, key, body).as_bytes())?;
    tmp.write_all(body)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}
