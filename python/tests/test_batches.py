"""Host batches: arrays read in place, out=, float32 arrays, exact conversion only, progress and
Ctrl-C, pinned arrays, pickling, and the Dask example equal to one call."""

import _thread
import importlib.util
import math
import pathlib
import pickle
import threading
import time
import tracemalloc

import numpy as np
import pytest

import ivjit

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


def boxes(n, seed=7):
    rng = np.random.default_rng(seed)
    lo = rng.uniform(-3.0, 3.0, n)
    return lo, lo + rng.uniform(0.0, 0.5, n)


def test_inputs_are_read_in_place_and_out_is_filled():
    """With out= given, a call allocates no array of the batch's size: the inputs are not
    copied (tracemalloc sees NumPy's allocations)."""
    f = ivjit.compile("x^2 - y", backend="cpu")
    n = 1 << 20
    (xl, xh), (yl, yh) = boxes(n), boxes(n, seed=8)
    lo, hi = np.empty(n), np.empty(n)
    want = f(x=(xl, xh), y=(yl, yh))
    tracemalloc.start()
    try:
        got = f(x=(xl, xh), y=(yl, yh), out=(lo, hi))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert got[0] is lo and got[1] is hi
    assert peak < n  # bytes: far below one array of n float64 (8n bytes)
    assert np.array_equal(lo, want[0]) and np.array_equal(hi, want[1])
    # Without out=, the two output arrays are the only allocations of that size.
    tracemalloc.start()
    try:
        f(x=(xl, xh), y=(yl, yh))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2 * 8 * n + n


def test_out_is_checked():
    f = ivjit.compile("x + y, x * y", backend="cpu")
    x = (np.array([1.0, 2.0]), np.array([2.0, 3.0]))
    lo, hi = np.full((2, 2), np.nan), np.full((2, 2), np.nan)
    f(x=x, y=(1.0, 1.0), out=(lo, hi))
    assert lo.tolist() == [[2.0, 3.0], [1.0, 2.0]] and hi.tolist() == [[3.0, 4.0], [2.0, 3.0]]
    with pytest.raises(ivjit.InputError, match="shape"):
        f(x=x, y=(1.0, 1.0), out=(np.empty(2), np.empty(2)))
    with pytest.raises(ivjit.InputError, match="float64"):
        f(x=x, y=(1.0, 1.0), out=(np.empty((2, 2), np.float32), np.empty((2, 2))))
    with pytest.raises(ivjit.InputError):
        f(x=x, y=(1.0, 1.0), out=(lo, lo))
    g = ivjit.compile("x + 1", backend="cpu")
    a = np.array([1.0, 2.0])
    with pytest.raises(ivjit.InputError, match="distinct from the inputs"):
        g(x=(a, a), out=(a, np.empty(2)))
    frozen = np.empty(2)
    frozen.flags.writeable = False
    with pytest.raises(ivjit.InputError):
        g(x=(a, a), out=(frozen, np.empty(2)))


def test_float32_arrays_are_read_as_they_are():
    xl, xh = boxes(1000)
    xl32 = (xl.astype(np.float32) - np.float32(1e-3)).astype(np.float32)
    xh32 = (xh.astype(np.float32) + np.float32(1e-3)).astype(np.float32)
    for precision in ("f64", "f32"):
        f = ivjit.compile("x^3 - 2*x", precision=precision, backend="cpu")
        a = f(x=(xl32, xh32))
        b = f(x=(xl32.astype(np.float64), xh32.astype(np.float64)))
        assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]), precision
    # Strided arrays are converted (a copy), with the same results.
    f = ivjit.compile("x^3 - 2*x", backend="cpu")
    both = np.stack([xl, xh], axis=1)  # columns are strided
    a = f(x=(both[:, 0], both[:, 1]))
    b = f(x=(xl, xh))
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])


def test_only_exact_conversions():
    """A bound that float64 cannot hold exactly is refused (rounding it to nearest could shrink
    the box); integers up to 2^53 are exact."""
    f = ivjit.compile("x + 1", backend="cpu")
    lo, hi = f(x=(np.array([2**53], dtype=np.int64), np.array([2**53], dtype=np.int64)))
    assert lo[0] == 2.0**53 and hi[0] == 2.0**53 + 2  # rounded outward
    with pytest.raises(ivjit.InputError, match="exactly"):
        f(x=(np.array([2**60 + 1]), np.array([2**60 + 1])))
    with pytest.raises(ivjit.InputError, match="exactly"):
        f(x=(np.array([1, 2], dtype=object), 3.0))
    if np.finfo(np.longdouble).nmant > 52:
        with pytest.raises(ivjit.InputError, match="exactly"):
            f(x=(np.array([0.1], dtype=np.longdouble), 1.0))


def test_progress_is_reported_piece_by_piece():
    f = ivjit.compile("x^2 - y", backend="cpu")
    n = (1 << 21) + 5
    seen = []
    lo, hi = f(x=(-1.0, 1.0), y=(0.0, 0.5), out=(np.empty(n), np.empty(n)),
               progress=lambda done, total: seen.append((done, total)))
    assert seen == [(1 << 20, n), (1 << 21, n), (n, n)]
    assert lo[-1] == -0.5 and hi[0] == 1.0

    def stop(done, total):
        raise RuntimeError(f"stopped at {done}")

    with pytest.raises(RuntimeError, match="stopped at 1048576"):
        f(x=(-1.0, 1.0), y=(0.0, 0.5), out=(np.empty(n), np.empty(n)), progress=stop)


def test_ctrl_c_stops_a_long_batch(sigint_handler):
    """A SIGINT (simulated by _thread.interrupt_main) during a batch raises KeyboardInterrupt
    after the piece that is running, long before the batch would end."""
    f = ivjit.compile("sin(x)*exp(y) + atan2(y, x) - pown(x, 7)/(1 + y^2)", backend="cpu")
    piece = 1 << 20
    out = (np.empty(piece), np.empty(piece))
    t = time.perf_counter()
    f(x=(0.5, 1.0), y=(-1.0, 1.0), out=out)
    per_piece = time.perf_counter() - t
    pieces = 12
    n = pieces * piece
    seen = []
    out = (np.empty(n), np.empty(n))  # the numbers broadcast to its length
    timer = threading.Timer(1.5 * per_piece, _thread.interrupt_main)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            f(x=(0.5, 1.0), y=(-1.0, 1.0), out=out, progress=lambda d, total: seen.append(d))
    finally:
        timer.cancel()
    assert seen and seen[-1] < n, (len(seen), per_piece)


def test_pinned_arrays_are_arrays():
    a = ivjit.pinned_zeros((2, 5))
    assert a.shape == (2, 5) and a.dtype == np.float64 and not a.any()
    a[0] = np.arange(5.0)
    a[1] = a[0] + 0.5
    f = ivjit.compile("x * 2")
    out = (ivjit.pinned_zeros(5), ivjit.pinned_zeros(5))
    lo, hi = f(x=(a[0], a[1]), out=out)
    assert lo is out[0] and lo.tolist() == [0.0, 2.0, 4.0, 6.0, 8.0]
    assert hi.tolist() == [1.0, 3.0, 5.0, 7.0, 9.0]
    row = ivjit.pinned_zeros(3)[1:]  # a view keeps the buffer alive
    row[:] = 7.0
    assert row.tolist() == [7.0, 7.0]


def test_integers_are_numbers_like_floats():
    """Issue 30 (12): Python ints and NumPy integer (and float) scalars broadcast like floats; an
    integer that is no double is rounded outward, never to nearest."""
    f = ivjit.compile("x*y", backend="cpu")
    x = (np.zeros(3), np.ones(3))
    want = f(x=x, y=(0.0, 1.0))
    for y in [(0, 1), (np.int64(0), np.int32(1)), (np.uint8(0), True), (np.float32(0), np.float64(1))]:
        lo, hi = f(x=x, y=y)
        assert lo.shape == (3,) and np.array_equal(lo, want[0]) and np.array_equal(hi, want[1]), y
    g = ivjit.compile("x + 0", backend="cpu")
    big = 2**60 + 1  # between the doubles 2^60 and 2^60 + 256
    lo, hi = g(x=(big, big))
    assert lo[0] == 2.0**60 and hi[0] == 2.0**60 + 256
    lo, hi = g(x=(-big, np.uint64(2**64 - 1)))
    assert lo[0] == -(2.0**60 + 256) and hi[0] == 2.0**64
    lo, hi = g(x=(10**400, 10**400))  # beyond the doubles: the largest one below, inf above
    assert lo[0] == np.finfo(np.float64).max and hi[0] == math.inf
    lo, hi = g(x=(-(10**400), -(10**400)))
    assert lo[0] == -math.inf and hi[0] == -np.finfo(np.float64).max
    with pytest.raises(ivjit.InputError):
        g(x=(2, 1))  # an inverted pair of integers is still an error


def test_sizes_out_of_memory_are_exceptions():
    """Issue 30 (5): a size the machine cannot hold is a MemoryError, one beyond the address
    space a ValueError (both caught by `except Exception`), never an abort or a
    PanicException."""
    with pytest.raises(MemoryError):
        ivjit.pinned_zeros(2**40)  # 8 TiB
    with pytest.raises(MemoryError):
        ivjit.pinned_zeros((2**20, 2**20))
    for size in [2**62, 2**64, (2**40, 2**40), -1, (3, -2)]:
        with pytest.raises(ValueError):
            ivjit.pinned_zeros(size)
    # The native call checks too, whatever the Python layer let through.
    with pytest.raises(ValueError):
        ivjit._ivjit._pinned(2**62)
    with pytest.raises(MemoryError):
        ivjit._ivjit._pinned(2**40)
    try:
        ivjit.pinned_zeros(2**40)
    except Exception as e:  # noqa: BLE001 - the point: an Exception, not a BaseException
        assert isinstance(e, MemoryError)
    assert ivjit.pinned_zeros(np.int64(3)).shape == (3,) and ivjit.pinned_zeros(0).shape == (0,)
    # A depth map beyond 2^30 pixels is refused; one whose rays and first round need more
    # than the machine has (32768^2 pixels: about 10^12 bytes) is a MemoryError.
    ball = "x^2 + y^2 + z^2 - 0.5"
    with pytest.raises(ivjit.InputError, match="2\\^30"):
        ivjit.depth_map(ball, 100_000, 100_000, (-1, 1, -1, 1), backend="cpu", method="rays")
    with pytest.raises(MemoryError):
        ivjit.depth_map(ball, 32768, 32768, (-1, 1, -1, 1), backend="cpu", method="rays")
    # By voxels, a side beyond 16384 voxels is refused.
    with pytest.raises(ivjit.InputError, match="voxels a side"):
        ivjit.depth_map(ball, 32768, 32768, (-1, 1, -1, 1), backend="cpu")
    # Outputs too large for the machine: 512 outputs of 2^27 boxes, 2 x 512 GiB (the input's
    # zeros are never touched: the outputs fail first).
    many = ivjit.compile(", ".join(["x + y"] * 512), backend="cpu")
    x = np.zeros(2**27)
    with pytest.raises(MemoryError):
        many(x=(x, x), y=(0, 1))


def test_functions_pickle_as_their_source():
    f = ivjit.compile("x^2 - y, sqrt(y)", precision="f32", backend="cpu")
    g = pickle.loads(pickle.dumps(f))
    assert (g.vars, g.outputs, g.precision, g.source) == (f.vars, f.outputs, "f32", f.source)
    (xl, xh), (yl, yh) = boxes(100), boxes(100, seed=3)
    yl, yh = np.abs(yl), np.abs(yl) + 1
    a, b = f(x=(xl, xh), y=(yl, yh)), g(x=(xl, xh), y=(yl, yh))
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    # The form travels too (a monotone function pickled as a natural one would be wider).
    m = ivjit.compile("x^2 - 2*x", backend="cpu", form="monotone")
    n = pickle.loads(pickle.dumps(m))
    assert n.form == "monotone" and n(x=(2.0, 3.0)) == m(x=(2.0, 3.0)) == (0.0, 3.0)


def _example():
    spec = importlib.util.spec_from_file_location("dask_bounds", EXAMPLES / "dask_bounds.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_dask_example_equals_one_call():
    """The Dask example on a local cluster of two worker processes: the same bounds as one call
    on the whole batch, and the proven lower bound holds the known minimum."""
    pytest.importorskip("dask.distributed")
    from dask.distributed import Client, LocalCluster

    example = _example()
    f = ivjit.compile(example.CAMEL, backend="cpu")
    side = 300
    (xl, xh), (yl, yh) = example.grid_bounds(side, chunk=7_000)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster):
        lo, hi = example.evaluate(f, {"x": (xl, xh), "y": (yl, yh)})
        lo, hi, smallest = da_compute(lo, hi, lo.min())
        xs = da_compute(xl, xh, yl, yh)
    want = f(x=(xs[0], xs[1]), y=(xs[2], xs[3]))
    assert np.array_equal(lo, want[0]) and np.array_equal(hi, want[1])
    assert smallest == want[0].min() and smallest <= -1.031628453489877
    # The boxes cover the domain: the cuts join, and the ends are the domain's.
    assert xs[0].min() == -2.0 and xs[1].max() == 2.0 and xs[2].min() == -1.0 and xs[3].max() == 1.0
    assert np.all(xs[0] <= xs[1]) and np.all(xs[2] <= xs[3])
    # Several outputs and broadcast numbers.
    g = ivjit.compile("x + y, x * y", backend="cpu")
    lo, hi = example.evaluate(g, {"x": (xl, xh), "y": (2.0, 3.0)})
    assert lo.shape == (2, side * side)
    lo, hi = da_compute(lo, hi, scheduler="synchronous")
    want = g(x=(xs[0], xs[1]), y=(2.0, 3.0))
    assert np.array_equal(lo, want[0]) and np.array_equal(hi, want[1])


def da_compute(*arrays, **kwargs):
    import dask

    return dask.compute(*arrays, **kwargs)
