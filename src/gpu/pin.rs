//! Page-locking the caller's host memory so that the copy engines read and write it directly.
//!
//! The staged path of [`super::batch`] copies every input into pinned staging buffers and every
//! output out of them: each byte crosses host memory about four times, and on a large batch the
//! host's copies, not PCIe, set the pace (`docs/bench.md`). When the caller's slices are
//! page-locked (`cuMemHostRegister`), each chunk is uploaded from and downloaded to them
//! directly and the host does no copying at all.
//!
//! Two ways to get there:
//! - [`CallPin`] locks a borrowed slice for the length of one call (the batch engine does this
//!   in [`super::HostTransfer::Pinned`] mode); the borrow guarantees the memory outlives the
//!   registration, and a registry of the calls in flight keeps one call from unlocking memory
//!   another call is still copying from.
//! - [`HostBuffer`] owns a fixed-length `Vec<f64>` that stays locked until it is dropped, for
//!   callers that evaluate batch after batch in the same buffers and should pay for locking once.
//!
//! Correctness never depends on a registration: the driver copies from unregistered memory
//! too (more slowly, through its own staging). What must never happen is a registration that
//! outlives its memory: the driver would keep DMA-ing to the old physical pages. Both types tie
//! the registration to a borrow or to ownership for that reason.

use std::ffi::c_void;
use std::sync::{Arc, Mutex};

use cudarc::driver::{sys, CudaContext, DriverError};

use super::{Context, GpuError, HostAllocError};

/// A registration of host memory with the driver, undone on drop if this value made it.
#[derive(Debug)]
pub(crate) struct HostPin {
    ptr: *mut c_void,
    /// The context made current to undo the registration.
    ctx: Arc<CudaContext>,
    /// False when the memory was already registered (by the caller or another pin): the
    /// registration is not ours to undo.
    ours: bool,
}

// SAFETY: the pointer is only handed back to the driver (cuMemHostUnregister), which may be
// called from any thread.
unsafe impl Send for HostPin {}
unsafe impl Sync for HostPin {}

impl HostPin {
    /// Page-locks `bytes` bytes at `ptr` for every context (`CU_MEMHOSTREGISTER_PORTABLE`),
    /// read-only if asked, with `ctx` current.
    ///
    /// # Safety
    /// The memory must stay allocated (not freed, not remapped) until the returned value is
    /// dropped, and the caller must not let the device write to it if `read_only`.
    unsafe fn register(
        ctx: &Arc<CudaContext>,
        ptr: *const c_void,
        bytes: usize,
        read_only: bool,
    ) -> Result<HostPin, DriverError> {
        ctx.bind_to_thread()?;
        let mut flags = sys::CU_MEMHOSTREGISTER_PORTABLE;
        if read_only {
            flags |= sys::CU_MEMHOSTREGISTER_READ_ONLY;
        }
        let ptr = ptr as *mut c_void;
        // SAFETY: the caller keeps the range allocated for the lifetime of the result.
        let ours = match unsafe { sys::cuMemHostRegister_v2(ptr, bytes, flags) } {
            sys::CUresult::CUDA_SUCCESS => true,
            sys::CUresult::CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED => false,
            e => return Err(DriverError(e)),
        };
        Ok(HostPin {
            ptr,
            ctx: ctx.clone(),
            ours,
        })
    }
}

impl Drop for HostPin {
    fn drop(&mut self) {
        if self.ours && self.ctx.bind_to_thread().is_ok() {
            // SAFETY: `ptr` was registered by `register` above and not unregistered since.
            // An error here leaves the pages locked until the process ends; nothing to do.
            let _ = unsafe { sys::cuMemHostUnregister(self.ptr) };
        }
    }
}

/// The pages (start and end addresses, page-aligned) that calls in flight have locked, with
/// how many calls use each registration. Two calls may share one input slice (several threads
/// evaluating the same boxes): the first locks it, the last unlocks it, so that no call's
/// copies ever run from memory another call has just unlocked.
struct Live {
    pages: (usize, usize),
    users: usize,
    /// Held for its drop, which unlocks the memory.
    _pin: HostPin,
}

static LIVE: Mutex<Vec<Live>> = Mutex::new(Vec::new());

pub(crate) const PAGE: usize = 4096;

/// A slice locked for one call, through the registry of calls in flight.
#[derive(Debug)]
pub(crate) struct CallPin {
    pages: (usize, usize),
    /// Whether this call counts as a user of an entry of `LIVE` (false: the memory was locked
    /// outside this engine, e.g. a [`HostBuffer`], and stays so).
    counted: bool,
}

impl CallPin {
    /// Locks the bytes `start..end` for one call. `Ok(None)` when they cannot be locked safely
    /// now: their pages overlap, without coinciding, with memory another call in flight has
    /// locked (that call would unlock them under this one's copies); the call then stages.
    /// Several arrays of one call whose pages overlap are locked as one range (locked one by
    /// one, the second would find its first page locked by the first).
    ///
    /// # Safety
    /// The pages of `start..end` must stay allocated until the result is dropped; the device
    /// must not write to them if `read_only`.
    pub(crate) unsafe fn acquire_bytes(
        ctx: &Arc<CudaContext>,
        start: usize,
        end: usize,
        read_only: bool,
    ) -> Result<Option<CallPin>, DriverError> {
        let pages = (start / PAGE * PAGE, end.div_ceil(PAGE) * PAGE);
        let mut live = LIVE.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(entry) = live.iter_mut().find(|e| e.pages == pages) {
            entry.users += 1;
            return Ok(Some(CallPin {
                pages,
                counted: true,
            }));
        }
        if live
            .iter()
            .any(|e| e.pages.0 < pages.1 && pages.0 < e.pages.1)
        {
            return Ok(None);
        }
        // SAFETY: the caller keeps the range allocated until the last user of the entry drops
        // it.
        let pin =
            unsafe { HostPin::register(ctx, start as *const c_void, end - start, read_only) }?;
        if !pin.ours {
            // Locked already, outside this engine: its owner keeps it locked while it lends
            // the memory to us.
            return Ok(Some(CallPin {
                pages,
                counted: false,
            }));
        }
        live.push(Live {
            pages,
            users: 1,
            _pin: pin,
        });
        Ok(Some(CallPin {
            pages,
            counted: true,
        }))
    }
}

impl Drop for CallPin {
    fn drop(&mut self) {
        if !self.counted {
            return;
        }
        let mut live = LIVE.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(i) = live.iter().position(|e| e.pages == self.pages) {
            live[i].users -= 1;
            if live[i].users == 0 {
                // Unlocks the memory (HostPin's drop).
                live.swap_remove(i);
            }
        }
    }
}

/// A fixed-length `f64` buffer kept page-locked for its whole life, for batches evaluated
/// again and again in the same memory (inputs or outputs of
/// [`Evaluator::eval_soa_into`](crate::Evaluator::eval_soa_into)). Dereferences to `[f64]`; its
/// length cannot change, so the registration always covers it.
///
/// ```no_run
/// use ivjit::{BackendChoice, Evaluator, Expression, HostBuffer, Precision};
/// # fn demo(n: usize) -> Result<(), Box<dyn std::error::Error>> {
/// let eval = Evaluator::new(&Expression::parse("x*y")?, Precision::F64, BackendChoice::Gpu)?;
/// let mut inputs = HostBuffer::new(2 * 2 * n)?; // two variables
/// let mut outputs = HostBuffer::new(2 * n)?; // one output
/// for round in 0..10 {
///     inputs.fill(round as f64); // the caller's boxes, in the SoA layout
///     eval.eval_soa_into(&inputs, n, &mut outputs)?;
/// }
/// # Ok(()) }
/// ```
pub struct HostBuffer {
    // Dropped after `pin` (field order): the memory outlives its registration.
    pin: Option<HostPin>,
    data: Vec<f64>,
}

/// The byte ranges of the locked [`HostBuffer`]s alive in this process, so that
/// [`super::HostTransfer::Auto`] can tell, without asking the driver, that a slice needs no
/// locking. A buffer leaves the list before it is unlocked and freed; a slice borrowed from it
/// keeps it alive for the whole call that found it here.
static BUFFERS: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());

pub(crate) fn byte_range(slice: &[f64]) -> (usize, usize) {
    let start = slice.as_ptr() as usize;
    (start, start + std::mem::size_of_val(slice))
}

/// Whether `slice` lies inside one locked [`HostBuffer`].
pub(crate) fn in_host_buffer(slice: &[f64]) -> bool {
    let (a, b) = byte_range(slice);
    let buffers = BUFFERS.lock().unwrap_or_else(|p| p.into_inner());
    buffers.iter().any(|&(s, e)| s <= a && b <= e)
}

impl Drop for HostBuffer {
    fn drop(&mut self) {
        if self.pin.is_some() {
            let range = byte_range(&self.data);
            let mut buffers = BUFFERS.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(i) = buffers.iter().position(|&r| r == range) {
                buffers.swap_remove(i);
            }
        }
        // Then the fields: `pin` unlocks, `data` frees.
    }
}

/// `len` zeros in memory from the global allocator, or why not: never an abort. Zeroed by the
/// allocator (`calloc`: fresh pages are zero and not touched here). A size beyond the
/// machine's memory and swap is refused up front, since with overcommit the allocator may
/// hand out address space that can never be backed (and locking it would fail anyway).
pub(crate) fn zeroed(len: usize) -> Result<Vec<f64>, HostAllocError> {
    if len == 0 {
        return Ok(Vec::new());
    }
    let layout =
        std::alloc::Layout::array::<f64>(len).map_err(|_| HostAllocError::TooLarge { len })?;
    let bytes = layout.size();
    let out_of_memory = HostAllocError::OutOfMemory { len, bytes };
    if machine_memory().is_some_and(|total| bytes as u128 > total) {
        return Err(out_of_memory);
    }
    // SAFETY: the layout has a nonzero size (len > 0).
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<f64>();
    if ptr.is_null() {
        return Err(out_of_memory);
    }
    // SAFETY: allocated by the global allocator with the layout of `len` f64 (what a Vec of
    // capacity len uses), every byte zero: `len` initialized values (0.0).
    Ok(unsafe { Vec::from_raw_parts(ptr, len, len) })
}

/// The machine's memory and swap in bytes (`sysinfo`), if it can be had: no allocation larger
/// than this can ever be backed.
pub fn machine_memory() -> Option<u128> {
    // SAFETY: sysinfo fills the struct it is given; an all-zero one is a valid start.
    let mut info: libc::sysinfo = unsafe { std::mem::zeroed() };
    // SAFETY: `info` is a valid, writable sysinfo struct.
    if unsafe { libc::sysinfo(&mut info) } != 0 {
        return None;
    }
    let unit = u128::from(info.mem_unit.max(1));
    Some((u128::from(info.totalram) + u128::from(info.totalswap)) * unit)
}

impl HostBuffer {
    /// `len` zeros, page-locked on every device of this process. Without a GPU (or when the
    /// driver refuses to lock the memory) this is an error, and so is memory that cannot be
    /// allocated ([`GpuError::HostAlloc`]); [`HostBuffer::new_or_plain`] falls back to
    /// ordinary memory instead.
    pub fn new(len: usize) -> Result<HostBuffer, GpuError> {
        let mut buffer = HostBuffer::plain(len)?;
        buffer.lock()?;
        Ok(buffer)
    }

    /// [`HostBuffer::new`], or the same buffer of `len` zeros left unlocked if locking fails
    /// (no GPU, or the memory could not be locked): the evaluation is the same, only the copies
    /// slower. An error only when the memory cannot be allocated (or its size overflows).
    pub fn new_or_plain(len: usize) -> Result<HostBuffer, HostAllocError> {
        let mut buffer = HostBuffer::plain(len)?;
        let _ = buffer.lock();
        Ok(buffer)
    }

    /// `len` zeros, not locked.
    fn plain(len: usize) -> Result<HostBuffer, HostAllocError> {
        Ok(HostBuffer {
            pin: None,
            data: zeroed(len)?,
        })
    }

    /// Page-locks the buffer on every device of this process (nothing to do when empty).
    fn lock(&mut self) -> Result<(), GpuError> {
        if self.data.is_empty() {
            return Ok(());
        }
        let ctx = super::context(super::default_devices()?[0])?;
        // SAFETY: `data` is owned by the buffer, never reallocated, and dropped after `pin`.
        let pin = unsafe {
            HostPin::register(
                &ctx,
                self.data.as_ptr().cast(),
                std::mem::size_of_val(self.data.as_slice()),
                false,
            )
        }
        .during("locking host memory (cuMemHostRegister)")?;
        self.pin = Some(pin);
        BUFFERS
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(byte_range(&self.data));
        Ok(())
    }

    /// Whether the memory is page-locked.
    pub fn is_locked(&self) -> bool {
        self.pin.is_some()
    }
}

impl std::ops::Deref for HostBuffer {
    type Target = [f64];
    fn deref(&self) -> &[f64] {
        &self.data
    }
}

impl std::ops::DerefMut for HostBuffer {
    fn deref_mut(&mut self) -> &mut [f64] {
        &mut self.data
    }
}

impl std::fmt::Debug for HostBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostBuffer")
            .field("len", &self.data.len())
            .field("locked", &self.is_locked())
            .finish()
    }
}
