"""The searches from Python (render, minimize, roots) against exact oracles: rational arithmetic
(fractions) for polynomials at points, mpmath at 200 bits elsewhere; paving."""

import _thread
import math
import os
import threading
import time
from fractions import Fraction

import mpmath
import numpy as np
import pytest

import ivjit

mpmath.mp.prec = 200


def test_render_classes_are_proven():
    """Every pixel called inside has f < 0 at its four corners and every pixel called outside
    has f > 0 at its centre, exactly (x^2 + y^2 - 1/2 is convex: corners bound it above)."""
    w, h = 48, 32
    x0, x1, y0, y1 = -1.0, 1.0, -0.75, 0.75
    image = ivjit.render("x^2 + y^2 - 0.5", w, h, (x0, x1, y0, y1), backend="cpu")
    assert image.shape == (h, w) and image.dtype == np.uint8
    assert set(np.unique(image)) == {ivjit.OUTSIDE, ivjit.INSIDE, ivjit.BOUNDARY}
    dx, dy = (Fraction(x1) - Fraction(x0)) / w, (Fraction(y1) - Fraction(y0)) / h

    def f(x, y):
        return x * x + y * y - Fraction(1, 2)

    for i in range(h):
        for j in range(w):
            xs = (Fraction(x0) + j * dx, Fraction(x0) + (j + 1) * dx)
            ys = (Fraction(y1) - (i + 1) * dy, Fraction(y1) - i * dy)
            if image[i, j] == ivjit.INSIDE:
                assert all(f(x, y) < 0 for x in xs for y in ys), (i, j)
            elif image[i, j] == ivjit.OUTSIDE:
                assert f(sum(xs) / 2, sum(ys) / 2) > 0, (i, j)
    # Tiles other than the default give the same proven classes where both prove one.
    again = ivjit.render("x^2 + y^2 - 0.5", w, h, (x0, x1, y0, y1), tiles=(16, 4, 1), backend="cpu")
    assert np.array_equal(again, image)


def camel(x, y):
    return 4 * x**2 - mpmath.mpf("2.1") * x**4 + x**6 / 3 + x * y - 4 * y**2 + 4 * y**4


def test_minimize_encloses_the_minimum():
    f = ivjit.compile("4*x^2 - 2.1*x^4 + x^6/3 + x*y - 4*y^2 + 4*y^4", backend="cpu")
    m = ivjit.minimize(f, {"x": (-3, 3), "y": (-2, 2)}, tol=1e-4)
    assert m.stopped == "converged" and m.upper - m.lower <= 1e-4
    # The known minimizers: f there is an upper bound of the minimum, so lower must be below.
    for x, y in [("0.0898420131003", "-0.7126564030207"), ("-0.0898420131003", "0.7126564030207")]:
        assert m.lower <= camel(mpmath.mpf(x), mpmath.mpf(y))
    # upper encloses f at the returned point.
    assert camel(mpmath.mpf(m.argmin[0]), mpmath.mpf(m.argmin[1])) <= m.upper
    assert m.boxes > 0 and m.rounds > 0
    # A sequence box in variable order works too; a wrong box is an InputError.
    assert ivjit.minimize(f, [(-3, 3), (-2, 2)], tol=1e-4).lower == m.lower
    with pytest.raises(ivjit.InputError):
        ivjit.minimize(f, {"x": (-3, 3)})
    with pytest.raises(ivjit.InputError):
        ivjit.minimize(f, [(3, -3), (-2, 2)])


def test_roots_hold_every_root():
    r = ivjit.roots("x^2 - 2", [(-3.0, 3.0)], tol=1e-12, backend="cpu")
    assert r.ended == "done" and r.unfinished.shape == (0, 1, 2)
    assert r.boxes.ndim == 3 and r.boxes.shape[1:] == (1, 2) and len(r.boxes) >= 2
    s = mpmath.sqrt(2)
    for root in (s, -s):
        assert any(lo <= root <= hi for (lo, hi), in r.boxes), root
    for (lo, hi), in r.boxes:
        assert hi - lo <= 1e-12 * max(1, abs(lo), abs(hi))
        # Each box may hold a root: near one of them.
        assert min(abs(mpmath.mpf(lo) - s), abs(mpmath.mpf(lo) + s)) < 1e-9
    # A level and two variables: the circle x^2 + y^2 = 1 in [0, 2]^2 meets (1, 0) and (0, 1).
    r = ivjit.roots("x^2 + y^2", {"x": (0, 2), "y": (0, 2)}, level=1.0, tol=1e-3, backend="cpu")
    assert any(b[0, 0] <= 1 <= b[0, 1] and b[1, 0] <= 0 <= b[1, 1] for b in r.boxes)
    assert r.boxes.shape[1:] == (2, 2)


def test_search_errors():
    with pytest.raises(ivjit.InputError, match="x and y"):
        ivjit.render("x + z", 8, 8, (0, 1, 0, 1), backend="cpu")
    with pytest.raises(ivjit.InputError):
        ivjit.render("x + y", 0, 8, (0, 1, 0, 1), backend="cpu")
    with pytest.raises(ivjit.InputError, match="outputs"):
        ivjit.roots("x, x + 1", [(0, 1)], backend="cpu")


def _gpu_or_skip():
    try:
        ivjit.compile("x", backend="gpu")
    except ivjit.GpuError as e:
        if os.environ.get("IVJIT_REQUIRE_GPU") == "1":
            raise
        pytest.skip(f"skipped: no GPU ({e})")


def test_searches_on_the_gpu_equal_the_cpu():
    """The searches run where the function runs; on the GPU they give the CPU's results (the
    expressions call no point function, so bit for bit)."""
    _gpu_or_skip()
    src = "x^2 + y^2 - 0.5 + 0.1*x*y^3"
    a = ivjit.render(src, 256, 192, (-1, 1, -0.75, 0.75), backend="cpu")
    b = ivjit.render(src, 256, 192, (-1, 1, -0.75, 0.75), backend="gpu")
    assert np.array_equal(a, b)
    camel_src = "4*x^2 - 2.1*x^4 + x^6/3 + x*y - 4*y^2 + 4*y^4"
    box = {"x": (-3, 3), "y": (-2, 2)}
    a = ivjit.minimize(camel_src, box, tol=1e-5, backend="cpu")
    b = ivjit.minimize(camel_src, box, tol=1e-5, backend="gpu")
    assert (a.lower, a.upper, a.rounds, a.boxes, a.remaining) == (b.lower, b.upper, b.rounds, b.boxes, b.remaining)
    a = ivjit.roots("x^2 + y^2", box, level=1.0, tol=1e-4, backend="cpu")
    b = ivjit.roots("x^2 + y^2", box, level=1.0, tol=1e-4, backend="gpu")
    assert np.array_equal(a.boxes, b.boxes) and a.ended == b.ended
    a = ivjit.solve("x^2 + y^2 - 1, y - x^3", box, backend="cpu")
    b = ivjit.solve("x^2 + y^2 - 1, y - x^3", box, backend="gpu")
    assert np.array_equal(a.boxes, b.boxes) and a.unique == b.unique
    ball = "x^2 + y^2 + z^2 - 0.64"
    a = ivjit.depth_map(ball, 64, 48, (-1, 1, -0.75, 0.75), steps=512, backend="cpu")
    b = ivjit.depth_map(ball, 64, 48, (-1, 1, -0.75, 0.75), steps=512, backend="gpu")
    assert np.array_equal(a, b, equal_nan=True)


def test_voxel_depth_map_of_a_ball_is_exact():
    # 32^3 voxels over [-1, 1]^3 are 1/16 a side: every box and square is exact, so a voxel is
    # proven outside exactly when it misses the closed ball |p|^2 <= 0.6 (153.6 in 1/256).
    h = ivjit.depth_map("x*x + y*y + z*z - 0.6", 32, 32, (-1, 1, -1, 1), steps=32, backend="cpu")
    rays = ivjit.depth_map("x*x + y*y + z*z - 0.6", 32, 32, (-1, 1, -1, 1), steps=32, backend="cpu", method="rays")
    assert h.shape == rays.shape == (32, 32)

    def least(a):
        return 0 if a <= 0 <= a + 1 else min(a * a, (a + 1) * (a + 1))

    for i in range(32):
        for j in range(32):
            xy = least(j - 16) + least(15 - i)
            top = next((k for k in range(32, 0, -1) if xy + least(k - 17) <= 153), None)
            if top is None:
                assert np.isnan(h[i, j]), (i, j)
            else:
                assert h[i, j] == -1 + top / 16, (i, j, h[i, j], top)
                # The pixel's column bounds its center line's hit too.
                assert np.isnan(rays[i, j]) or rays[i, j] <= h[i, j] + 1 / 16, (i, j)
    # Normals: unit vectors on every filled column of this ball (each top voxel keeps a
    # partial's sign), pointing up where the voxel is above z = 0; NaN where nothing is below.
    # From the pruned tapes and, for a function without derivative rules (sin), f's gradient
    # program: the waves' normals are certified too.
    h2, n = ivjit.depth_map("x*x + y*y + z*z - 0.6", 32, 32, (-1, 1, -1, 1), steps=32, backend="cpu", normals=True)
    assert np.array_equal(h, h2, equal_nan=True) and n.shape == (32, 32, 3)
    filled = ~np.isnan(h)
    assert np.allclose(np.linalg.norm(n[filled], axis=1), 1.0) and np.isnan(n[~filled]).all()
    assert (n[filled & (h > 1 / 16)][:, 2] > 0).all()
    _, w = ivjit.depth_map("z - 0.1*sin(4*x)", 16, 16, (-1, 1, -1, 1), steps=16, backend="cpu", normals=True)
    assert np.isfinite(w).all() and (w[:, :, 2] > 0.9).all()
    with pytest.raises(ivjit.InputError, match="normals"):
        ivjit.depth_map("x + z", 4, 4, (-1, 1, -1, 1), method="rays", normals=True)
    with pytest.raises(ivjit.InputError, match="method"):
        ivjit.depth_map("x + z", 4, 4, (-1, 1, -1, 1), method="bogus")
    with pytest.raises(ivjit.InputError, match="prune"):
        ivjit.depth_map("x + z", 4, 4, (-1, 1, -1, 1), prune=True)


def test_minimize_in_the_mean_value_form_needs_far_fewer_boxes():
    src = "4*x^2 - 2.1*x^4 + x^6/3 + x*y - 4*y^2 + 4*y^4"
    box = {"x": (-3, 3), "y": (-2, 2)}
    natural = ivjit.minimize(ivjit.compile(src, backend="cpu"), box, tol=1e-4)
    centered = ivjit.minimize(ivjit.compile(src, backend="cpu", form="mean-value"), box, tol=1e-4)
    assert centered.stopped == "converged" and centered.upper - centered.lower <= 1e-4
    for x, y in [("0.0898420131003", "-0.7126564030207"), ("-0.0898420131003", "0.7126564030207")]:
        assert centered.lower <= camel(mpmath.mpf(x), mpmath.mpf(y))
    assert camel(mpmath.mpf(centered.argmin[0]), mpmath.mpf(centered.argmin[1])) <= centered.upper
    assert centered.boxes * 100 < natural.boxes, (centered.boxes, natural.boxes)
    # With the gradient's tests and the descent: fewer boxes still, the minimum still inside.
    grad = ivjit.minimize(src, box, tol=1e-4, backend="cpu", gradient=True)
    assert grad.stopped == "converged" and grad.upper - grad.lower <= 1e-4
    for x, y in [("0.0898420131003", "-0.7126564030207"), ("-0.0898420131003", "0.7126564030207")]:
        assert grad.lower <= camel(mpmath.mpf(x), mpmath.mpf(y))
    assert camel(mpmath.mpf(grad.argmin[0]), mpmath.mpf(grad.argmin[1])) <= grad.upper
    assert grad.boxes < centered.boxes, (grad.boxes, centered.boxes)
    # Evaluation: never wider than the natural extension, narrower on a small box.
    f = ivjit.compile("x^2 - 2*x", backend="cpu")
    g = ivjit.compile("x^2 - 2*x", backend="cpu", form="mean-value")
    (nlo, nhi), (clo, chi) = f(x=(0.9, 1.1)), g(x=(0.9, 1.1))
    assert nlo <= clo <= -1.0 and -0.99 <= chi <= nhi and chi - clo < (nhi - nlo) / 5
    # The monotone form: exact on a monotone piece, never wider than the mean-value form.
    h = ivjit.compile("x^2 - 2*x", backend="cpu", form="monotone")
    assert h(x=(2.0, 3.0)) == (0.0, 3.0) and f(x=(2.0, 3.0)) == (-2.0, 5.0)
    (mlo, mhi) = h(x=(0.9, 1.1))
    assert clo <= mlo <= -1.0 and -0.99 <= mhi <= chi
    with pytest.raises(ValueError):
        ivjit.compile("x", form="centred")


def test_solve_proves_the_zeros_of_a_system_unique():
    # The circle and the cubic: x^2 + y^2 = 1, y = x^3; x^2 = t solves t^3 + t - 1 = 0.
    s = ivjit.solve("x^2 + y^2 - 1, y - x^3", {"x": (-2, 2), "y": (-2, 2)}, backend="cpu")
    assert s.ended == "done" and s.boxes.shape == (2, 2, 2) and s.unique == [True, True]
    with mpmath.workprec(200):
        t = mpmath.findroot(lambda t: t**3 + t - 1, 0.68)
        for sign, b in zip((-1, 1), s.boxes):  # sorted by x
            x, y = sign * mpmath.sqrt(t), sign * mpmath.sqrt(t) ** 3
            assert b[0, 0] <= x <= b[0, 1] and b[1, 0] <= y <= b[1, 1], (b, x, y)
            assert (b[:, 1] - b[:, 0]).max() < 1e-12
    # A double zero is found but not proven unique; a system must be square.
    d = ivjit.solve("(x-2)^2", [(0, 4)], backend="cpu")
    assert d.unique == [False] and d.boxes[0, 0, 0] <= 2 <= d.boxes[0, 0, 1]
    with pytest.raises(ivjit.Error):
        ivjit.solve("x + y", [(0, 1), (0, 1)], backend="cpu")


def test_solve_of_zeros_filling_a_volume_follows_its_budget():
    """Issue 30 (7): where the zeros fill a volume every box survives the exclusion; merging
    them took hours at the default budget (a sweep along one coordinate). Now the time follows
    the budget and the answer is the whole box, unproven."""
    box = {"x": (-1, 1), "y": (-1, 1), "z": (-1, 1)}
    t = time.perf_counter()
    s = ivjit.solve("x-x, y-y, z-z", box, max_boxes=1 << 20, backend="cpu")
    assert time.perf_counter() - t < 20
    assert s.ended == "budget" and s.unique == [False]
    assert s.boxes.tolist() == [[[-1.0, 1.0]] * 3]


@pytest.mark.parametrize("search", ["solve", "roots", "minimize"])
def test_ctrl_c_stops_a_long_search(search, sigint_handler):
    """A SIGINT (simulated by _thread.interrupt_main) during a search raises KeyboardInterrupt
    between its rounds, long before its budget would end it: in a third of the time the whole
    search takes (measured first; a search that ran to its budget and raised only afterwards
    took as long as the whole search: the interrupt check stayed on the calling thread while
    the rounds ran on the thread pool)."""
    run = {
        "solve": lambda: ivjit.solve("x-x, y-y, z-z", {"x": (-1, 1), "y": (-1, 1), "z": (-1, 1)},
                                     max_boxes=1 << 23, backend="cpu"),
        "roots": lambda: ivjit.roots("x-x + y-y", {"x": (-1, 1), "y": (-1, 1)}, max_boxes=1 << 23,
                                     backend="cpu"),
        "minimize": lambda: ivjit.minimize("x*y - x*y", {"x": (-1, 1), "y": (-1, 1)}, tol=0,
                                           max_boxes=1 << 23, backend="cpu"),
    }[search]
    t = time.perf_counter()
    run()
    whole = time.perf_counter() - t
    timer = threading.Timer(0.05, _thread.interrupt_main)
    t = time.perf_counter()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            run()
    finally:
        timer.cancel()
    assert time.perf_counter() - t < whole / 3, (time.perf_counter() - t, whole)


def test_pruned_render_gives_the_same_classes():
    # A min/max model (a union of two disks cut by a square): the pruned tapes on the CPU
    # must classify every pixel as the full program does.
    src = (
        "max(min(sqrt(sqr(x - 0.3) + sqr(y)) - 0.4, sqrt(sqr(x + 0.4) + sqr(y - 0.2)) - 0.3), "
        "-(max(abs(x) - 0.2, abs(y + 0.5) - 0.2)))"
    )
    for precision in ("f64", "f32"):
        full = ivjit.render(src, 160, 96, (-1, 1, -0.75, 0.75), precision=precision, backend="cpu", prune=False)
        pruned = ivjit.render(src, 160, 96, (-1, 1, -0.75, 0.75), precision=precision, backend="cpu", prune=True)
        default = ivjit.render(src, 160, 96, (-1, 1, -0.75, 0.75), precision=precision, backend="cpu")
        assert np.array_equal(full, pruned)
        assert np.array_equal(full, default)
        assert (full == ivjit.INSIDE).sum() > 100 and (full == ivjit.OUTSIDE).sum() > 100


def test_depth_map_of_a_ball_contains_its_top():
    # The ball x^2 + y^2 + z^2 <= 0.64 seen from above: at a pixel center (x, y) inside the
    # disk the top is sqrt(0.64 - x^2 - y^2) (exact at 200 bits); the height reported is at or
    # above it and within two steps; outside the disk, NaN. Pruned blocks: the same heights.
    n, steps = 24, 256
    h = ivjit.depth_map("x^2 + y^2 + z^2 - 0.64", n, n, (-1, 1, -1, 1), steps=steps, backend="cpu", method="rays")
    assert h.shape == (n, n)
    with mpmath.workprec(200):
        for i in range(n):
            for j in range(n):
                x = mpmath.mpf(-1) + (2 * j + 1) * mpmath.mpf(1) / n
                y = mpmath.mpf(1) - (2 * i + 1) * mpmath.mpf(1) / n
                r2 = mpmath.mpf("0.64") - x * x - y * y
                if r2 > 0.001:
                    top = mpmath.sqrt(r2)
                    assert top <= h[i, j] <= top + 2 * 2.0 / steps + 1e-12, (i, j, h[i, j], top)
                elif r2 < -0.001:
                    assert np.isnan(h[i, j]), (i, j, h[i, j])
    model = "max(x^2 + y^2 + z^2 - 0.64, -(min(abs(x) - 0.2, abs(y + 0.3) - 0.1)))"
    a = ivjit.depth_map(model, n, n, (-1, 1, -1, 1), steps=steps, backend="cpu", prune=False, method="rays")
    b = ivjit.depth_map(model, n, n, (-1, 1, -1, 1), steps=steps, backend="cpu", prune=True, tiles=[8, 4], method="rays")
    c = ivjit.depth_map(model, n, n, (-1, 1, -1, 1), steps=steps, backend="cpu", method="rays")  # pruned by default
    assert np.array_equal(a, b, equal_nan=True) and np.isfinite(a).sum() > 50
    assert np.array_equal(a, c, equal_nan=True)
    with pytest.raises(ivjit.InputError):
        ivjit.depth_map("x + w", 4, 4, (-1, 1, -1, 1), backend="cpu")


def test_trace_of_a_ball_finds_its_first_root():
    # A camera at (0, 0, 3) looking at the origin sees the ball x^2 + y^2 + z^2 <= 0.64. The
    # ray of pixel (i, j) is eye + t (F + u R + v U) with F = (0, 0, -1), R = (tan(20 deg), 0, 0)
    # and U = (0, tan(20 deg), 0) (Camera::look_at), (u, v) the pixel's screen point. The
    # reported piece is the first one the search could not exclude: no root lies before it, and
    # the first root (exact at 200 bits) lies at most a few pieces after its start (interval
    # evaluation of a piece beside the surface may fail to exclude it). A ray that misses the
    # ball by a margin reports NaN. The shading is cosmetic: only its shape is checked.
    n, steps = 16, 256
    frame = ivjit.trace("x^2 + y^2 + z^2 - 0.64", n, n, eye=(0, 0, 3), fov=40, radius=2, steps=steps,
                        backend="cpu")
    assert frame.hits.shape == (n, n, 2) and frame.rgb.shape == (n, n, 3) and frame.rgb.dtype == np.uint8
    assert frame.boxes > 0
    half = math.tan(math.radians(40.0) / 2.0)
    hit = 0
    with mpmath.workprec(200):
        for j in range(n):
            for i in range(n):
                u = ((i + 0.5) / n * 2.0 - 1.0) * 1.0
                v = 1.0 - (j + 0.5) / n * 2.0
                a = (mpmath.mpf(u) * half) ** 2 + (mpmath.mpf(v) * half) ** 2 + 1
                disc = 36 - 4 * a * (9 - mpmath.mpf("0.64"))
                lo, hi = frame.hits[j, i]
                if disc > 1e-6:
                    t = (6 - mpmath.sqrt(disc)) / (2 * a)
                    piece = 4.0 / steps * 1.01
                    assert lo <= t <= lo + 3 * piece, (i, j, lo, t, hi)
                    assert hi - lo <= piece, (i, j, lo, hi)
                    hit += 1
                elif disc < -1e-6:
                    assert np.isnan(lo) and np.isnan(hi), (i, j, lo, hi)
    assert hit > 50
    # The image alone is the frame's image, without the hits.
    image = ivjit.trace("x^2 + y^2 + z^2 - 0.64", n, n, eye=(0, 0, 3), fov=40, radius=2, steps=steps,
                        backend="cpu", hits=False)
    assert image.hits is None and image.boxes == frame.boxes
    assert np.array_equal(image.rgb, frame.rgb)
    with pytest.raises(ValueError):
        ivjit.trace("x^2 + y^2 + z^2 - 0.64", 4, 4, eye=(0, 0, 0), backend="cpu")


def test_pave_partitions_the_box_and_proves_its_inner_boxes():
    p = ivjit.pave("x^2 + y^2 <= 1, y >= x^3", {"x": (-2, 2), "y": (-2, 2)}, eps=0.02, backend="cpu")
    assert p.vars == ["x", "y"] and not p.truncated
    vol = lambda a: float(np.sum((a[:, :, 1] - a[:, :, 0]).prod(axis=1))) if len(a) else 0.0
    assert abs(vol(p.inner) + vol(p.boundary) + vol(p.outer) - 16.0) < 1e-9
    # Inner boxes: every corner in the set, exactly (rationals).
    for b in p.inner:
        for x in b[0]:
            for y in b[1]:
                x, y = Fraction(float(x)), Fraction(float(y))
                assert x * x + y * y <= 1 and y >= x**3
    assert 1.5 < vol(p.inner) < 1.5708 < vol(p.inner) + vol(p.boundary)
    assert all((b[:, 1] - b[:, 0]).max() <= 0.02 for b in p.boundary)


def test_pave_with_a_fixpoint_ratio_contracts_again_before_cutting():
    # Two curves meeting twice: contracting again takes fewer boxes, the same two solutions.
    once = ivjit.pave("y == x^2, x == y^2 - 0.5", {"x": (-2, 2), "y": (-2, 2)}, eps=1e-6, backend="cpu")
    again = ivjit.pave("y == x^2, x == y^2 - 0.5", {"x": (-2, 2), "y": (-2, 2)}, eps=1e-6, backend="cpu", ratio=0.1)
    assert len(once.boundary) == len(again.boundary) == 2
    assert again.evaluated < once.evaluated
    with pytest.raises(ivjit.InputError, match="ratio"):
        ivjit.pave("x <= 1", {"x": (0, 2)}, ratio=1.0)


def test_pave_names_a_bad_constraint():
    with pytest.raises(ivjit.InputError, match="constraint 2"):
        ivjit.pave("x <= 1, x + 1", {"x": (0, 2)})
    with pytest.raises(ivjit.InputError):
        ivjit.pave("x <= 1", {"y": (0, 2)})


def test_solve_system_proves_each_zero_once():
    # x^2 + y^2 = 5, x y = 2, x >= 0: (1, 2) and (2, 1), each in a proven box; y unbounded.
    s = ivjit.solve_system("x^2 + y^2 == 5, x*y == 2, x >= 0", {"x": (-3, 3), "y": (-np.inf, np.inf)}, backend="cpu")
    assert s.vars == ["x", "y"] and s.complete and s.square
    assert s.solutions.shape == (2, 2, 2) and len(s.undecided) == 0 and len(s.inner) == 0
    for b, (x, y) in zip(s.solutions, [(1, 2), (2, 1)]):
        assert b[0][0] <= x <= b[0][1] and b[1][0] <= y <= b[1][1]
        assert (b[:, 1] - b[:, 0]).max() < 1e-13
    # Without equalities: inner boxes, every corner inside the disk exactly.
    s = ivjit.solve_system("x^2 + y^2 <= 1", [(-2, 2), (-2, 2)], eps=0.05, backend="cpu")
    assert not s.square and len(s.inner) > 0 and len(s.solutions) == 0
    for b in s.inner:
        for x in b[0]:
            for y in b[1]:
                assert Fraction(float(x)) ** 2 + Fraction(float(y)) ** 2 <= 1


def test_contract_narrows_the_circle_and_empties_a_far_box():
    (x, y) = ivjit.contract("x^2 + y^2 == 1", {"x": (0.6, 2), "y": (-2, 2)}, backend="cpu")
    assert x[0] == 0.6 and x[1] == 1.0
    assert Fraction(y[1]) >= Fraction(4, 5) and y[1] < 0.8 + 1e-12 and y[0] == -y[1]
    assert ivjit.contract("x^2 + y^2 == 1", {"x": (1.5, 2), "y": (-2, 2)}, backend="cpu") is None


def test_minimize_subject_to_encloses_the_constrained_minimum():
    # min x + y on the unit disk: -sqrt(2), checked exactly: lower <= -sqrt 2 <= upper.
    m = ivjit.minimize("x + y", {"x": (-2, 2), "y": (-2, 2)}, subject_to="x^2 + y^2 <= 1", backend="cpu")
    assert isinstance(m, ivjit.ConstrainedMinimum) and m.stopped == "converged"
    lo, hi = Fraction(m.lower), Fraction(m.upper)
    assert lo < 0 and lo * lo >= 2 and (hi >= 0 or hi * hi <= 2) and m.upper - m.lower <= 1e-6
    x, y = (Fraction(v) for v in m.argmin)
    assert x * x + y * y <= 1 and x + y <= hi
    # An equality is relaxed, and the result says by how much.
    m = ivjit.minimize("x*y", [(-3, 3), (-3, 3)], subject_to="x^2 + y^2 == 2", eq_tol=1e-6, backend="cpu")
    assert m.relaxation == 1e-6 and Fraction(m.lower) <= Fraction(-1) - Fraction(1e-6) / 2 <= Fraction(m.upper)
    # Infeasible, proven.
    m = ivjit.minimize("x", {"x": (-1, 1)}, subject_to="x >= 3", backend="cpu")
    assert m.stopped == "infeasible" and m.argmin is None
    with pytest.raises(ivjit.InputError, match="constraint 2"):
        ivjit.minimize("x", {"x": (-1, 1)}, subject_to="x >= 0, x + 1")


def test_meshes_are_closed_manifolds_by_trimesh():
    """`ivjit.mesh` checked by an independent library (trimesh): watertight, consistently
    wound, a volume, the Euler characteristic of the shape (sphere 2, torus 0), the volume
    within 3 % of the exact one; also after trimesh merges vertices by position (no two
    distinct vertices of the mesh coincide)."""
    trimesh = pytest.importorskip("trimesh")
    shapes = [
        ("x^2 + y^2 + z^2 - 0.36", 2, 4 / 3 * math.pi * 0.6**3),
        ("sqr(x^2 + y^2 + z^2 + 0.21) - (x^2 + y^2)", 0, 2 * math.pi**2 * 0.5 * 0.2**2),
        ("max(abs(x) - 0.5, max(abs(y) - 0.3, abs(z) - 0.2))", 2, 1.0 * 0.6 * 0.4),
    ]
    for src, euler, exact in shapes:
        m = ivjit.mesh(src, depth=5, backend="cpu")
        assert m.vertices.shape[1] == 3 and m.vertices.dtype == np.float64
        assert m.triangles.shape[1] == 3 and m.triangles.dtype == np.uint32
        for process in (False, True):
            t = trimesh.Trimesh(vertices=m.vertices, faces=m.triangles, process=process)
            assert t.is_watertight and t.is_winding_consistent and t.is_volume, (src, process)
            assert t.euler_number == euler, (src, process, t.euler_number)
            assert abs(t.volume - exact) < 0.03 * exact, (src, t.volume, exact)
        assert m.stats["cells"] == 32**3
    with pytest.raises(ivjit.InputError):
        ivjit.mesh("x + w", depth=3, backend="cpu")
    # Normals from the gradient: on the sphere each is certain and the position's direction.
    m = ivjit.mesh("x^2 + y^2 + z^2 - 0.36", depth=4, normals=True, backend="cpu")
    assert m.normals.shape == m.vertices.shape and m.normal_certain.dtype == np.bool_
    assert m.normal_certain.all() and m.stats["certain_cells"] == m.stats["boundary_cells"]
    r = np.linalg.norm(m.vertices, axis=1, keepdims=True)
    assert np.abs(m.normals - m.vertices / r).max() < 1e-3
    assert ivjit.mesh("x^2 + y^2 + z^2 - 0.36", depth=4, backend="cpu").normals is None


def test_a_mesh_keeps_a_wall_point_sampling_loses():
    """A wall 0.002 thick between the lattice's sample planes: the point-sampled mesh of the
    same lattice (witness_levels=0) is empty; the witness search keeps it as one closed sheet
    (trimesh), every vertex on the wall."""
    trimesh = pytest.importorskip("trimesh")
    wall = "abs(z - 0.013) - 0.001"
    sampled = ivjit.mesh(wall, depth=5, witness_levels=0, backend="cpu")
    assert len(sampled.triangles) == 0
    m = ivjit.mesh(wall, depth=5, witness_levels=4, backend="cpu")
    t = trimesh.Trimesh(vertices=m.vertices, faces=m.triangles, process=False)
    assert t.is_watertight and t.is_winding_consistent and t.euler_number == 2
    assert np.all(np.abs(m.vertices[:, 2] - 0.013) <= 0.0012)
    assert m.stats["edge_witnesses"] + m.stats["face_witnesses"] + m.stats["cell_witnesses"] > 0
