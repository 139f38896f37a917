"""Evaluation of CUDA arrays of CuPy or PyTorch where they are.

The kernel reads one contiguous block of `2 * len(vars)` arrays of n elements. When the bounds
already are that block (the rows of one array, in the order of `vars`), it is used as it is;
otherwise they are stacked into it on the device (a device-side copy, no host round trip). The
block is checked there (every pair an interval bound, one pass), and the outputs are allocated
by the same library on the same device, so the results come back as its arrays.
"""

from ._ivjit import GpuError, InputError


def _library(a):
    """'cupy' or 'torch' for a CUDA array of those libraries, else None."""
    mod = type(a).__module__.split(".")[0]
    if mod == "cupy":
        return "cupy"
    if mod == "torch" and getattr(a, "is_cuda", False):
        return "torch"
    return None


def any_device_array(bounds):
    for pair in bounds.values():
        if isinstance(pair, (tuple, list)):
            if any(_library(b) for b in pair):
                return True
    return False


def call(native, bounds):
    names = native.vars
    for key in bounds:
        if key not in names:
            raise InputError(f"{key!r} is not a variable of the expression (its variables: {', '.join(names)})")
    arrays = []
    for v in names:
        if v not in bounds:
            raise InputError(f"variable {v!r} is not given: pass {v}=(lo, hi)")
        pair = bounds[v]
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise InputError(f"{v}: expected a pair (lo, hi) of arrays or numbers")
        arrays.extend(pair)
    libs = {_library(a) for a in arrays} - {None}
    if len(libs) != 1:
        raise InputError("device arrays of one library at a time (CuPy or PyTorch), not mixed with host arrays")
    lib = libs.pop()
    if native.device is None:
        raise GpuError("device arrays need a GPU function: compile with backend='gpu' (or 'auto' on a GPU machine)")
    f32 = native.precision == "f32"
    n = None
    for v, a in zip([v for v in names for _ in (0, 1)], arrays):
        if _library(a):
            if a.ndim != 1:
                raise InputError(f"{v}: expected a 1-D array or a number")
            if n is not None and a.shape[0] != n:
                raise InputError(f"{v}: an array of {a.shape[0]} values in a batch of {n}")
            n = a.shape[0]
            if f32 and str(a.dtype).split(".")[-1] != "float32":
                # Rounding float64 to float32 here would round to nearest, not outward.
                raise InputError(f"{v}: a float32 function takes float32 device arrays (got {a.dtype})")
    if lib == "cupy":
        import cupy as xp

        dtype = xp.float32 if f32 else xp.float64
        dev = next(a for a in arrays if _library(a)).device.id

        def full(x):
            return xp.full(n, x, dtype=dtype)

        def stack(cols):
            return xp.ascontiguousarray(xp.stack([c.astype(dtype, copy=False) for c in cols]))

        def empty(shape):
            return xp.empty(shape, dtype=dtype)

        def ptr(a):
            return a.data.ptr
    else:
        import torch as xp

        dtype = xp.float32 if f32 else xp.float64
        device = next(a for a in arrays if _library(a)).device
        dev = device.index if device.index is not None else xp.cuda.current_device()

        def full(x):
            return xp.full((n,), float(x), dtype=dtype, device=device)

        def stack(cols):
            return xp.stack([c.to(dtype) for c in cols]).contiguous()

        def empty(shape):
            return xp.empty(shape, dtype=dtype, device=device)

        def ptr(a):
            return a.data_ptr()

    if dev != native.device:
        raise InputError(f"the arrays are on device {dev}; this function runs on device {native.device}")
    itemsize = 4 if f32 else 8
    base = _one_block(arrays, n, itemsize, dtype, ptr)
    if base is None:
        block = stack([a if _library(a) else full(a) for a in arrays])
        base = ptr(block)
    # Every pair an interval bound (lo <= hi, lo < +inf, hi > -inf, or both NaN: empty), checked
    # in one pass on the device.
    if not native._check_device(base, n):
        raise InputError("a pair of device bounds is not an interval (lo > hi, a single NaN, lo = +inf or hi = -inf)")
    m = native.outputs
    out = empty((2 * m, n))
    native._eval_device(base, ptr(out), n)
    lo, hi = out[0::2], out[1::2]
    if m == 1:
        return lo[0], hi[0]
    return lo, hi


def _one_block(arrays, n, itemsize, dtype, ptr):
    """The address of the bounds when they already are the kernel's block: contiguous arrays of
    the kernel's type, each right after the previous one (e.g. the rows of one (2 * vars, n)
    array, in the order of `vars`). Then nothing is copied."""
    if not all(_library(a) for a in arrays):
        return None
    for a in arrays:
        if a.dtype != dtype or not _contiguous(a):
            return None
    base = ptr(arrays[0])
    for k, a in enumerate(arrays):
        if ptr(a) != base + k * n * itemsize:
            return None
    return base


def _contiguous(a):
    flags = getattr(a, "flags", None)
    if flags is not None and hasattr(flags, "c_contiguous"):
        return bool(flags.c_contiguous)
    return bool(a.is_contiguous())
