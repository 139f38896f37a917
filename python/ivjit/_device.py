"""Evaluation of CUDA arrays of CuPy or PyTorch where they are (and of other libraries' CUDA
arrays through DLPack: JAX, for instance, viewed as CuPy or PyTorch arrays without a copy, the
results handed back the same way).

The kernel for device arrays takes the address of each bound array (`ivjit._ivjit` passes them
in a table) and checks every input pair while it computes, so contiguous arrays of the
function's type are read in place, wherever they are. Numbers are broadcast into arrays, and
arrays of another float type or layout converted, on the device. The outputs are allocated by
the same library on the same device, so the results come back as its arrays.
"""

import numpy as _np

from ._ivjit import GpuError, InputError

# Bounds of these types are host values: the common case, answered without a closer look.
_HOST_TYPES = frozenset({float, int, _np.ndarray, _np.float64, _np.float32})


_KDL_CUDA = 2  # DLPack's device type of CUDA memory


def _library(a):
    """'cupy' or 'torch' for a CUDA array of those libraries, 'dlpack' for another library's
    CUDA array that speaks DLPack, else None."""
    mod = type(a).__module__.split(".")[0]
    if mod == "cupy":
        return "cupy"
    if mod == "torch":
        return "torch" if getattr(a, "is_cuda", False) else None
    device = getattr(a, "__dlpack_device__", None)
    if device is not None and mod != "numpy":
        try:
            return "dlpack" if device()[0] == _KDL_CUDA else None
        except Exception:
            return None
    return None


def _through_dlpack(native, bounds, arrays, out):
    """Bounds of another library (JAX...): viewed as CuPy (or PyTorch) arrays through DLPack,
    evaluated, and the results handed back to that library the same way."""
    first = next(a for a in arrays if _library(a) == "dlpack")
    mod = type(first).__module__.split(".")[0]
    if mod in ("jax", "jaxlib"):
        import jax.numpy as back_mod
    else:
        import importlib

        back_mod = importlib.import_module(mod)
    back = getattr(back_mod, "from_dlpack", None)
    if back is None:
        raise InputError(f"arrays of {mod}: the library has no from_dlpack to take the results back")
    try:
        import cupy as via
    except ImportError:
        try:
            import torch as via
        except ImportError:
            raise InputError(f"arrays of {mod} are read through CuPy or PyTorch; neither is installed") from None
    viewed = {
        v: tuple(via.from_dlpack(b) if _library(b) == "dlpack" else b for b in pair)
        for v, pair in bounds.items()
    }
    if out is not None:
        raise InputError(f"out= is not taken with arrays of {mod} (read through DLPack); results are new arrays")
    lo, hi = call(native, viewed)
    return back(lo), back(hi)


def any_device_array(bounds):
    for pair in bounds.values():
        if isinstance(pair, (tuple, list)):
            for b in pair:
                if type(b) not in _HOST_TYPES and _library(b):
                    return True
    return False


def call(native, bounds, out=None):
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
    if libs == {"dlpack"}:
        return _through_dlpack(native, bounds, arrays, out)
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
            if not _is_float(a):
                # Converting integers could round a bound to nearest.
                raise InputError(f"{v}: device bounds must be floating point (got {a.dtype})")
            if f32 and str(a.dtype).split(".")[-1] != "float32":
                # Rounding float64 to float32 here would round to nearest, not outward.
                raise InputError(f"{v}: a float32 function takes float32 device arrays (got {a.dtype})")
    if lib == "cupy":
        import cupy as xp

        dtype = xp.float32 if f32 else xp.float64
        dev = next(a for a in arrays if _library(a)).device.id

        def full(x):
            return xp.full(n, x, dtype=dtype)

        def contiguous(a):
            return xp.ascontiguousarray(a.astype(dtype, copy=False))

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

        def contiguous(a):
            return a.to(dtype).contiguous()

        def empty(shape):
            return xp.empty(shape, dtype=dtype, device=device)

        def ptr(a):
            return a.data_ptr()

    if dev != native.device:
        raise InputError(f"the arrays are on device {dev}; this function runs on device {native.device}")

    def column(a):
        if not _library(a):
            return full(a)
        if a.dtype != dtype or not _contiguous(a):
            return contiguous(a)  # float32 to float64 is exact; float64 to float32 refused above
        return a

    columns = [column(a) for a in arrays]
    m = native.outputs
    if out is None:
        block = empty((2 * m, n))
        lo, hi = block[0::2], block[1::2]
        if m == 1:
            lo, hi = lo[0], hi[0]
    else:
        lo, hi = _outputs(out, lib, dtype, m, n, columns)
    rows = [lo] if m == 1 else [lo[j] for j in range(m)]
    rows_hi = [hi] if m == 1 else [hi[j] for j in range(m)]
    outputs = [ptr(r) for pair in zip(rows, rows_hi) for r in pair]
    if not native._eval_device([ptr(c) for c in columns], outputs, n):
        raise InputError("a pair of device bounds is not an interval (lo > hi, a single NaN, lo = +inf or hi = -inf)")
    return lo, hi


def _outputs(out, lib, dtype, m, n, columns):
    """`out=(lo, hi)` for device arrays: of the library, the function's type, C-contiguous, of
    shape (n,) or (outputs, n), apart from each other and from the arrays the kernel reads (it
    reads them through the read-only cache)."""
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise InputError("out: expected a pair (lo, hi) of device arrays")
    shape = (n,) if m == 1 else (m, n)
    for name, a in (("out[0]", out[0]), ("out[1]", out[1])):
        if _library(a) != lib or a.dtype != dtype or tuple(a.shape) != shape or not _contiguous(a):
            raise InputError(f"out: {name} must be a C-contiguous {lib} array of {dtype} and shape {shape}")

    def span(a, count):
        start = a.data.ptr if lib == "cupy" else a.data_ptr()
        size = a.itemsize if lib == "cupy" else a.element_size()
        return start, start + count * size

    lo, hi = span(out[0], m * n), span(out[1], m * n)
    if lo[0] < hi[1] and hi[0] < lo[1]:
        raise InputError("out: lo and hi overlap")
    for c in columns:
        s = span(c, n)
        if any(o[0] < s[1] and s[0] < o[1] for o in (lo, hi)):
            raise InputError("out: the output arrays must be distinct from the inputs")
    return out[0], out[1]


def _is_float(a):
    dt = a.dtype
    if hasattr(dt, "is_floating_point"):
        return bool(dt.is_floating_point)
    return getattr(dt, "kind", "") == "f"


def _contiguous(a):
    flags = getattr(a, "flags", None)
    if flags is not None and hasattr(flags, "c_contiguous"):
        return bool(flags.c_contiguous)
    return bool(a.is_contiguous())
