//! Kernel caches: compiled kernels in this process, and linked cubins on disk across processes.
//!
//! # In process
//!
//! A map ([`Memo`]) from (PTX text of the kernel, precision, device ordinal, policies) to the
//! loaded `DeviceKernel` (the map itself lives with the kernels, `gpu::kernel`). Each key has its own slot behind its own mutex, so two
//! threads asking for the same kernel compile it once (the second waits for the first) while
//! different kernels compile in parallel. A failed compilation is not remembered.
//!
//! The map is indexed by a 64-bit hash of the PTX text, computed once per `KernelSource` (an
//! [`crate::Expression`] keeps one per precision), so a lookup neither copies nor rehashes the
//! text; a hit still compares the text, so kernels whose hashes collide are told apart.
//!
//! # On disk
//!
//! Every kernel is linked into a cubin by the driver's linker (with the point-function runtime
//! when it calls any) and the cubin is kept in the cache folder of [`super::runtime::cache_dir`]
//! as `kernel-<key>.cubin`, in the entry format of every disk-cache entry (`gpu::disk`: a checked
//! header line, atomic writes). The key hashes the kernel's PTX, the runtime's PTX (empty
//! without point calls), the driver version and the architecture (`sm_XY`).

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::scalar::Program;

use super::disk;

/// Format tag of cubin entries; bump it when the entry layout changes.
const CUBIN_FORMAT: &str = "ivjit-kernel-cubin v2";

/// Where the disk cache of linked kernels lives.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum CacheDir {
    /// The default folder ([`super::runtime::cache_dir`]: `$IVJIT_CACHE_DIR`, XDG, `~/.cache`).
    #[default]
    Default,
    /// No disk cache.
    Off,
    /// This folder.
    At(PathBuf),
}

impl CacheDir {
    /// The folder, if any.
    pub(crate) fn resolve(&self) -> Option<PathBuf> {
        match self {
            CacheDir::Default => super::runtime::cache_dir(),
            CacheDir::Off => None,
            CacheDir::At(p) => Some(p.clone()),
        }
    }
}

/// What the disk cache did when a kernel was loaded on one device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DiskCacheOutcome {
    /// The cubin came from a valid entry; nothing was compiled or linked.
    Hit,
    /// The cubin was linked; `stored` says whether the entry was written, `rebuilt` whether an
    /// invalid entry (corrupt, truncated) was found and replaced.
    Linked {
        /// Whether the entry was written.
        stored: bool,
        /// Whether an entry existed but failed its check.
        rebuilt: bool,
    },
    /// No cache folder; the cubin was linked.
    NoCache,
    /// The kernel was loaded from PTX directly (the driver's linker refused a program without
    /// point calls; the plain load path was used and nothing was stored).
    Ptx,
}

/// The PTX text of a kernel, checked and emitted once, with the hash that indexes the
/// in-process cache. Cloning shares the text.
#[derive(Clone, Debug)]
pub(crate) struct KernelSource {
    text: Arc<str>,
    hash: u64,
}

impl KernelSource {
    /// Verifies `program` ([`Program::verify`]) and emits its PTX.
    pub(crate) fn new(program: &Program) -> Result<KernelSource, crate::scalar::VerifyError> {
        crate::ptx::try_emit(program).map(KernelSource::from_text)
    }

    fn from_text(text: String) -> KernelSource {
        // SipHash with fixed keys: the same text gives the same hash in every thread. Quality
        // matters only for speed, since hits compare the text.
        let mut h = std::hash::DefaultHasher::new();
        text.hash(&mut h);
        KernelSource {
            text: text.into(),
            hash: h.finish(),
        }
    }

    /// The hash of the PTX text (the in-process cache's index).
    pub(crate) fn hash(&self) -> u64 {
        self.hash
    }

    /// The PTX text.
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// The shared PTX text.
    pub(crate) fn shared_text(&self) -> Arc<str> {
        self.text.clone()
    }
}

/// The in-process cache of kernels (`V`: a device kernel) under keys `K` (the PTX text's hash,
/// precision, device, and whatever else makes another kernel). Each entry lists the texts with
/// that key (almost always one) and their slots.
pub(crate) struct Memo<K, V> {
    map: Mutex<HashMap<K, Vec<Entry<V>>>>,
}

/// A text and its slot: the value once built (each slot has its own mutex, so two threads
/// asking for the same kernel build it once while different kernels build in parallel).
type Entry<V> = (Arc<str>, Slot<V>);
type Slot<V> = Arc<Mutex<Option<Arc<V>>>>;

impl<K: Hash + Eq, V> Memo<K, V> {
    /// An empty cache.
    pub(crate) fn new() -> Self {
        Memo {
            map: Mutex::new(HashMap::new()),
        }
    }

    /// The value of `text` under `key`, or built by `build` and remembered.
    pub(crate) fn get_or_build<E>(
        &self,
        key: K,
        text: &Arc<str>,
        build: impl FnOnce() -> Result<Arc<V>, E>,
    ) -> Result<Arc<V>, E> {
        let slot = {
            let mut map = self.map.lock().unwrap_or_else(|p| p.into_inner());
            let same_key = map.entry(key).or_default();
            let found = same_key
                .iter()
                .find(|(t, _)| Arc::ptr_eq(t, text) || **t == **text);
            match found {
                Some((_, slot)) => slot.clone(),
                None => {
                    let slot = Slot::default();
                    same_key.push((text.clone(), slot.clone()));
                    slot
                }
            }
        };
        let mut slot = slot.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(k) = slot.as_ref() {
            return Ok(k.clone());
        }
        let k = build()?;
        *slot = Some(k.clone());
        Ok(k)
    }

    /// Number of values held.
    pub(crate) fn len(&self) -> usize {
        let map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        map.values()
            .flatten()
            .filter(|(_, s)| s.lock().map(|s| s.is_some()).unwrap_or(false))
            .count()
    }
}

/// The disk-cache key of a linked kernel.
pub(crate) fn cubin_key(
    kernel_ptx: &str,
    runtime_ptx: &str,
    driver_version: i32,
    arch: &str,
) -> String {
    let driver = driver_version.to_string();
    disk::key(
        CUBIN_FORMAT,
        &[
            kernel_ptx.as_bytes(),
            runtime_ptx.as_bytes(),
            driver.as_bytes(),
            arch.as_bytes(),
        ],
    )
}

/// The path of the entry for `key` in `dir`.
pub(crate) fn cubin_path(dir: &Path, key: &str) -> PathBuf {
    dir.join(format!("kernel-{key}.cubin"))
}

pub(crate) use disk::Lookup;

/// Reads the entry for `key`, checking its header line ([`disk::read`]).
pub(crate) fn read_cubin(dir: &Path, key: &str) -> Lookup {
    disk::read(&cubin_path(dir, key), CUBIN_FORMAT, key)
}

/// Writes the entry for `key` atomically ([`disk::write`]).
pub(crate) fn write_cubin(dir: &Path, key: &str, cubin: &[u8]) -> std::io::Result<()> {
    disk::write(dir, &cubin_path(dir, key), CUBIN_FORMAT, key, cubin)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_and_corruption_is_detected() {
        let dir = tempfile::tempdir().unwrap();
        let key = cubin_key("ptx", "", 13000, "sm_90");
        assert!(matches!(read_cubin(dir.path(), &key), Lookup::Missing));
        let cubin: Vec<u8> = (0..1000u32).map(|i| (i * 7 % 251) as u8).collect();
        write_cubin(dir.path(), &key, &cubin).unwrap();
        match read_cubin(dir.path(), &key) {
            Lookup::Valid(b) => assert_eq!(b, cubin),
            _ => panic!("entry not read back"),
        }
        let path = cubin_path(dir.path(), &key);
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0x40;
        std::fs::write(&path, &bytes).unwrap();
        assert!(matches!(read_cubin(dir.path(), &key), Lookup::Invalid));
        bytes[last] ^= 0x40;
        std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
        assert!(matches!(read_cubin(dir.path(), &key), Lookup::Invalid));
        std::fs::write(&path, b"").unwrap();
        assert!(matches!(read_cubin(dir.path(), &key), Lookup::Invalid));
        // Keys depend on every part.
        assert_ne!(key, cubin_key("ptx", "", 13000, "sm_80"));
        assert_ne!(key, cubin_key("ptx", "", 12080, "sm_90"));
        assert_ne!(key, cubin_key("ptx", "rt", 13000, "sm_90"));
        assert_ne!(key, cubin_key("ptx2", "", 13000, "sm_90"));
    }
}
