//! Searches shared among the GPUs: a round's work list spread over parts (one per device, or
//! `IVJIT_SEARCH_PARTS` of them round-robin over the devices), kept even between rounds by
//! moving boxes from the end of a longer list to the end of a shorter one. The branch and
//! bound and the exclusion run their rounds in lockstep over the parts, so that a round holds
//! the same boxes as on one device (in another order).

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream};

use crate::gpu::{Context, GpuError};
use crate::search::kernels::grow_keeping;

/// A part's work list: its stream, its list of boxes (`n` of them, `width` values each).
pub(crate) trait PartList {
    fn stream(&self) -> &Arc<CudaStream>;
    fn list(&mut self) -> (&mut Option<CudaSlice<f64>>, &mut usize);
    /// Values per box (two per side).
    fn width(&self) -> usize;
}

/// Boxes of a round from which the round is shared among the GPUs: a shared round pays a
/// synchronization more per device (the branch and bound's upper bound is agreed between its
/// bound and its split) and the moves that balance the lists, which a small round's few
/// launches would not repay. A choice, not a measured crossover (no other threshold was run;
/// with it the camel's branch and bound took 15.3 ms on one H200 and 10.9 on two).
pub(crate) const SPLIT_BOXES: usize = 1 << 18;

/// How many parts a round of `total` boxes is spread over: `forced` (at most one per box),
/// else every device from [`SPLIT_BOXES`] boxes, else one.
pub(crate) fn wanted(total: usize, devices: usize, forced: Option<usize>) -> usize {
    match forced {
        Some(k) => k.min(total).max(1),
        None if total >= SPLIT_BOXES => devices.max(1),
        None => 1,
    }
}

/// Moves boxes between the parts so that the first `want` hold the round's boxes evenly (the
/// rest none): boxes from the end of a list with more than its share to the end of one with
/// less (between devices, a peer copy on the receiving part's stream, which the next round's
/// kernels on that stream follow).
pub(crate) fn balance<P: PartList>(parts: &mut [P], want: usize) -> Result<(), GpuError> {
    let total: usize = parts.iter_mut().map(|p| *p.list().1).sum();
    let target: Vec<usize> = (0..parts.len())
        .map(|d| match d < want {
            true => total / want + usize::from(d < total % want),
            false => 0,
        })
        .collect();
    let n = |p: &mut P| *p.list().1;
    let mut from = 0;
    for to in 0..parts.len() {
        while n(&mut parts[to]) < target[to] {
            while n(&mut parts[from]) <= target[from] {
                from += 1;
            }
            let m = (n(&mut parts[from]) - target[from]).min(target[to] - n(&mut parts[to]));
            let (a, b) = match from < to {
                true => {
                    let (x, y) = parts.split_at_mut(to);
                    (&mut x[from], &mut y[0])
                }
                false => {
                    let (x, y) = parts.split_at_mut(from);
                    (&mut y[0], &mut x[to])
                }
            };
            let w = a.width();
            let stream = b.stream().clone();
            let (a_list, a_n) = a.list();
            let (b_list, b_n) = b.list();
            grow_keeping(&stream, b_list, (*b_n + m) * w, *b_n * w)?;
            let src = a_list.as_ref().expect("boxes to move");
            let dst = b_list.as_mut().expect("grown");
            stream
                .memcpy_dtod(
                    &src.slice((*a_n - m) * w..*a_n * w),
                    &mut dst.slice_mut(*b_n * w..(*b_n + m) * w),
                )
                .during("moving boxes between the search's devices")?;
            *a_n -= m;
            *b_n += m;
        }
    }
    Ok(())
}
