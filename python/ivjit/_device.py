"""Evaluation of CUDA arrays of CuPy or PyTorch where they are.

The kernel reads one contiguous block of `2 * len(vars)` arrays of n elements; the bounds are
stacked into it on the device (a device-side copy, no host round trip), checked there (every
pair a valid interval bound), and the outputs are allocated by the same library on the same
device, so the results come back as its arrays.
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
    cols = [a if _library(a) else full(a) for a in arrays]
    block = stack(cols)
    lo, hi = block[0::2], block[1::2]
    # Every pair an interval bound: lo <= hi, or both NaN (the empty set); lo < +inf, hi > -inf.
    valid = ((lo <= hi) | ((lo != lo) & (hi != hi))).all()
    inf = float("inf")
    valid = bool(valid) and not bool((lo == inf).any()) and not bool((hi == -inf).any())
    if not valid:
        raise InputError("a pair of device bounds is not an interval (lo > hi, a single NaN, lo = +inf or hi = -inf)")
    m = native.outputs
    out = empty((2 * m, n))
    native._eval_device(ptr(block), ptr(out), n)
    lo, hi = out[0::2], out[1::2]
    if m == 1:
        return lo[0], hi[0]
    return lo, hi
