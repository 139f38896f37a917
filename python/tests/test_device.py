"""CUDA arrays of CuPy and PyTorch, evaluated on the device: the results are arrays of the same
library on the same device, equal bit for bit to the CPU backend's (programs of correctly
rounded operations). Skipped where neither library has a GPU (`IVJIT_REQUIRE_GPU=1` fails
instead)."""

import os

# JAX (if a test imports it) must not take most of the GPU's memory for itself.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import numpy as np
import pytest

import ivjit

EXPR = "x^4 - 5*x^2 + pown(y, -3) * z + y / (1 + z^2)"


def _libraries():
    found = []
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() > 0:
            found.append("cupy")
    except Exception:
        pass
    try:
        import torch

        if torch.cuda.is_available():
            found.append("torch")
    except Exception:
        pass
    return found


LIBS = _libraries()


def test_a_gpu_library_is_there_when_required():
    if os.environ.get("IVJIT_REQUIRE_GPU") == "1":
        assert LIBS, "IVJIT_REQUIRE_GPU=1 but neither CuPy nor PyTorch sees a GPU"
    elif not LIBS:
        pytest.skip("skipped: no GPU array library (CuPy or PyTorch with CUDA)")


def _boxes(n, f32):
    rng = np.random.default_rng(17)
    c = rng.uniform(-3, 3, (3, n))
    c[2] = rng.uniform(0.5, 3, n)
    w = rng.uniform(0, 0.1, (3, n))
    lo, hi = c - w, c + w
    if f32:
        lo = np.nextafter(lo.astype(np.float32), np.float32(-np.inf))
        hi = np.nextafter(hi.astype(np.float32), np.float32(np.inf))
    return lo, hi


@pytest.mark.parametrize("lib", LIBS or ["none"])
@pytest.mark.parametrize("precision", ["f64", "f32"])
def test_device_arrays_equal_the_cpu_bit_for_bit(lib, precision):
    if lib == "none":
        pytest.skip("skipped: no GPU array library (CuPy or PyTorch with CUDA)")
    f32 = precision == "f32"
    n = 1 << 20
    lo, hi = _boxes(n, f32)
    g = ivjit.compile(EXPR, precision=precision, backend="gpu")
    c = ivjit.compile(EXPR, precision=precision, backend="cpu")
    want_lo, want_hi = c(**{v: (lo[k].astype(np.float64), hi[k].astype(np.float64)) for k, v in enumerate("xyz")})
    if lib == "cupy":
        import cupy as xp

        to_dev, to_host = xp.asarray, xp.asnumpy
    else:
        import torch

        def to_dev(a):
            return torch.from_numpy(np.ascontiguousarray(a)).cuda()

        def to_host(a):
            return a.cpu().numpy()

    args = {v: (to_dev(lo[k]), to_dev(hi[k])) for k, v in enumerate("xyz")}
    got_lo, got_hi = g(**args)
    assert type(got_lo).__module__.split(".")[0] == lib
    got_lo, got_hi = to_host(got_lo).astype(np.float64), to_host(got_hi).astype(np.float64)
    assert np.array_equal(got_lo.view(np.int64), want_lo.view(np.int64))
    assert np.array_equal(got_hi.view(np.int64), want_hi.view(np.int64))
    # Bounds that already are the kernel's block (rows of one array, in the order of vars) are
    # read where they are: the same results.
    block = to_dev(np.stack([b for k in range(3) for b in (lo[k], hi[k])]))
    got_lo, got_hi = g(**{v: (block[2 * k], block[2 * k + 1]) for k, v in enumerate("xyz")})
    got_lo, got_hi = to_host(got_lo).astype(np.float64), to_host(got_hi).astype(np.float64)
    assert np.array_equal(got_lo.view(np.int64), want_lo.view(np.int64))
    assert np.array_equal(got_hi.view(np.int64), want_hi.view(np.int64))
    # Scalars broadcast on the device too, and invalid pairs are refused there.
    got_lo, _ = g(x=args["x"], y=(1.0, 1.0), z=args["z"])
    assert got_lo.shape[0] == n
    with pytest.raises(ivjit.InputError):
        g(x=(args["x"][1], args["x"][0]), y=args["y"], z=args["z"])  # lo > hi somewhere
    bad = block.clone() if lib == "torch" else block.copy()
    bad[3, 5] = float("nan")  # a single NaN bound in the block itself
    with pytest.raises(ivjit.InputError):
        g(**{v: (bad[2 * k], bad[2 * k + 1]) for k, v in enumerate("xyz")})


@pytest.mark.parametrize("lib", LIBS or ["none"])
def test_device_arrays_are_read_in_place(lib):
    """Separate float64 arrays are not copied: the call allocates only its outputs (PyTorch's
    allocator statistics); float32 arrays into a float64 function are widened (exact) with the
    same results; integer arrays are refused."""
    if lib == "none":
        pytest.skip("skipped: no GPU array library (CuPy or PyTorch with CUDA)")
    n = 1 << 20
    lo, hi = _boxes(n, True)
    g = ivjit.compile(EXPR, backend="gpu")
    c = ivjit.compile(EXPR, backend="cpu")
    want = c(**{v: (lo[k].astype(np.float64), hi[k].astype(np.float64)) for k, v in enumerate("xyz")})
    if lib == "cupy":
        import cupy as xp

        to_dev, to_host = xp.asarray, xp.asnumpy
    else:
        import torch as xp

        def to_dev(a):
            return xp.from_numpy(np.ascontiguousarray(a)).cuda()

        def to_host(a):
            return a.cpu().numpy()

    wide = {v: (to_dev(lo[k].astype(np.float64)), to_dev(hi[k].astype(np.float64))) for k, v in enumerate("xyz")}
    narrow = {v: (to_dev(lo[k]), to_dev(hi[k])) for k, v in enumerate("xyz")}
    if lib == "torch":
        xp.cuda.synchronize()
        before = xp.cuda.memory_allocated()
        xp.cuda.reset_peak_memory_stats()
        got = g(**wide)
        grown = xp.cuda.max_memory_allocated() - before
        assert grown <= 2 * 8 * n + (1 << 16), grown  # the outputs only
    for args in (wide, narrow):
        got = g(**args)
        assert np.array_equal(to_host(got[0]), want[0]) and np.array_equal(to_host(got[1]), want[1])
    # out= on the device: filled in place and returned; checked.
    block = to_dev(np.zeros((2, n)))
    out = (block[0], block[1])
    got = g(**wide, out=out)
    assert got[0] is out[0] and got[1] is out[1]
    assert np.array_equal(to_host(block[0]), want[0]) and np.array_equal(to_host(block[1]), want[1])
    with pytest.raises(ivjit.InputError, match="distinct"):
        g(**wide, out=(wide["x"][0], block[1]))
    with pytest.raises(ivjit.InputError, match="shape"):
        g(**wide, out=(block[0][1:], block[1][1:]))
    ints = to_dev(np.zeros(n, dtype=np.int64))
    with pytest.raises(ivjit.InputError, match="floating point"):
        g(x=(ints, ints), y=narrow["y"], z=narrow["z"])


def _jax_gpu():
    try:
        import jax

        return bool(jax.devices("gpu"))
    except Exception:
        return False


def test_jax_arrays_through_dlpack():
    """JAX CUDA arrays (DLPack): evaluated on the device through a CuPy or PyTorch view, the
    results JAX arrays on the device, equal to the CPU backend's."""
    if not LIBS or not _jax_gpu():
        pytest.skip("skipped: no JAX with a GPU (or no CuPy / PyTorch to view its arrays)")
    import jax

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    n = 1 << 16
    for precision in ("f64", "f32"):
        lo, hi = _boxes(n, precision == "f32")
        g = ivjit.compile(EXPR, precision=precision, backend="gpu")
        c = ivjit.compile(EXPR, precision=precision, backend="cpu")
        want = c(**{v: (lo[k].astype(np.float64), hi[k].astype(np.float64)) for k, v in enumerate("xyz")})
        args = {v: (jnp.asarray(lo[k]), jnp.asarray(hi[k])) for k, v in enumerate("xyz")}
        got = g(**args)
        assert "jax" in type(got[0]).__module__, type(got[0])
        assert np.array_equal(np.asarray(got[0]).astype(np.float64), want[0]), precision
        assert np.array_equal(np.asarray(got[1]).astype(np.float64), want[1]), precision
