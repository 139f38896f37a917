"""The Python package against exact or high-precision oracles (mpmath at 200 bits)."""

import math
import random

import mpmath
import numpy as np
import pytest

import ivjit

mpmath.mp.prec = 200  # the oracle's precision: far beyond binary64


def test_exact_results_and_shapes():
    f = ivjit.compile("x^2 - y", backend="cpu")
    assert f.vars == ["x", "y"] and f.outputs == 1 and f.backend == "cpu"
    lo, hi = f(x=(np.array([-1.0, 2.0]), np.array([1.0, 3.0])), y=(0.5, 0.5))
    assert lo.shape == (2,) and hi.shape == (2,)
    # [-1, 1]^2 - 0.5 = [-0.5, 0.5]; [2, 3]^2 - 0.5 = [3.5, 8.5] (exact in binary)
    assert lo.tolist() == [-0.5, 3.5] and hi.tolist() == [0.5, 8.5]


def test_outward_rounding_of_an_inexact_result():
    f = ivjit.compile("x / 3", backend="cpu")
    lo, hi = f(x=(1.0, 1.0))
    third = mpmath.mpf(1) / 3
    assert lo[0] < third < hi[0]
    assert hi[0] == math.nextafter(lo[0], math.inf)  # tightest: one ulp apart


def test_several_outputs_scalars_broadcast_and_empty():
    f = ivjit.compile("x + y, sqrt(x)", backend="cpu")
    lo, hi = f(x=(np.array([4.0, -2.0, 9.0]), np.array([4.0, -1.0, 16.0])), y=(1.0, 2.0))
    assert lo.shape == (2, 3)
    assert lo[0].tolist() == [5.0, -1.0, 10.0] and hi[0].tolist() == [6.0, 1.0, 18.0]
    assert lo[1, 0] == 2.0 and hi[1, 2] == 4.0
    assert math.isnan(lo[1, 1]) and math.isnan(hi[1, 1])  # sqrt([-2, -1]) is empty


def test_float32_and_other_dtypes_are_converted():
    f = ivjit.compile("x * x", precision="f32", backend="cpu")
    assert f.precision == "f32"
    lo, hi = f(x=(np.array([3], dtype=np.int32), np.array([3.0], dtype=np.float32)))
    assert lo.tolist() == [9.0] and hi.tolist() == [9.0]


def test_errors_are_exceptions_with_the_diagnostic():
    with pytest.raises(ivjit.SyntaxError) as e:
        ivjit.compile("x + * y")
    assert "^" in str(e.value) and "x + * y" in str(e.value)
    assert issubclass(ivjit.SyntaxError, ivjit.Error)
    f = ivjit.compile("x + y", backend="cpu")
    with pytest.raises(ivjit.InputError, match="not given"):
        f(x=(1.0, 2.0))
    with pytest.raises(ivjit.InputError, match="not a variable"):
        f(x=(1.0, 2.0), y=(0.0, 0.0), z=(0.0, 0.0))
    with pytest.raises(ivjit.InputError):
        f(x=(2.0, 1.0), y=(0.0, 0.0))  # lo > hi
    with pytest.raises(ivjit.InputError, match="batch of"):
        f(x=(np.zeros(3), np.zeros(3)), y=(np.zeros(2), np.zeros(2)))
    with pytest.raises(TypeError):
        f((1.0, 2.0), (0.0, 0.0))
    with pytest.raises(ValueError):
        ivjit.compile("x", precision="f16")


@pytest.mark.parametrize(
    "source, fn",
    [
        ("x^4 - 5*x^2 + sin(y)*z", lambda x, y, z: x**4 - 5 * x**2 + mpmath.sin(y) * z),
        ("exp(x) / (1 + y^2) - z^-3", lambda x, y, z: mpmath.exp(x) / (1 + y**2) - z**-3),
        ("atan2(y, x) + rootn(z, 5)", lambda x, y, z: mpmath.atan2(y, x) + mpmath.root(z, 5)),
    ],
)
def test_containment_against_mpmath_on_random_boxes(source, fn):
    """Every box's result contains the exact value at random points of the box (200-bit mpmath
    values, compared exactly with the float bounds)."""
    rng = random.Random(1788)
    n = 2000
    los = {v: np.empty(n) for v in "xyz"}
    his = {v: np.empty(n) for v in "xyz"}
    for i in range(n):
        for v in "xyz":
            c = rng.uniform(-3, 3) if v != "z" else rng.uniform(0.6, 3)
            w = rng.uniform(0, 0.5) * rng.choice([0, 1e-12, 1e-6, 1])
            los[v][i], his[v][i] = c - w, c + w
    f = ivjit.compile(source, backend="cpu")
    lo, hi = f(**{v: (los[v], his[v]) for v in "xyz"})
    for i in range(n):
        for _ in range(3):
            pt = {v: mpmath.mpf(rng.uniform(los[v][i], his[v][i])) for v in "xyz"}
            y = fn(pt["x"], pt["y"], pt["z"])
            assert mpmath.mpf(lo[i]) <= y <= mpmath.mpf(hi[i]), (source, i, pt, lo[i], hi[i])


def test_relate_compares_intervals_exactly():
    r = ivjit.relate((1.0, 2.0), "[2, 3]_dac", member=2.0)
    assert r["overlap"] == "meets"
    assert r["precedes"] and not r["strictPrecedes"]
    assert r["isMember"] and r["isCommonInterval"]
    empty = ivjit.relate((float("nan"), float("nan")), (0.0, 1.0))
    assert empty["isEmpty"] and empty["subset"] and empty["overlap"] == "firstEmpty"
    nai = ivjit.relate("[nai]", (0.0, 1.0))
    assert nai["isNaI"] and not nai["subset"] and nai["overlap"] is None
    with pytest.raises(ivjit.InputError, match="not a double"):
        ivjit.relate("[0, 0.1]")


def test_reductions_round_once():
    from ivjit import reduction

    assert reduction.sum([1e16, 1.0, -1e16]) == 1.0
    assert reduction.dot([1e308, 1e308], [2.0, -2.0]) == 0.0
    third = reduction.sum([1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0], rounding="down")
    assert third < reduction.sum([1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0], rounding="up")
    assert reduction.sum_sqr([3.0, 4.0]) == 25.0
    assert math.isnan(reduction.sum([1.0, float("inf"), float("-inf")]))
    with pytest.raises(ValueError, match="rounding"):
        reduction.sum([1.0], rounding="sideways")


def test_decorated_evaluation():
    f = ivjit.compile("sqrt(x) + 1/y, floor(x)", backend="cpu")
    (lo, hi, dec), (flo, fhi, fdec) = f.decorated(
        x=(np.array([1.0, -1.0, 1.0]), np.array([4.0, 4.0, 4.0])),
        y=(1.0, 2.0, np.array([8, 16, 0], dtype=np.uint8)),
    )
    assert dec.dtype == np.uint8
    # def given for y, then sqrt undefined on [-1, 0) (trv), then NaI from y.
    assert list(dec) == [8, 4, 0]
    assert lo[0] == 1.5 and hi[0] == 3.0
    assert math.isnan(lo[2]) and math.isnan(hi[2])
    assert list(fdec) == [8, 8, 8]  # floor jumps: def (y, NaI in box 2, is not its argument)
    g = ivjit.compile("x / y", backend="cpu")
    lo, hi, dec = g.decorated(x=(1.0, 2.0), y=(-1.0, 1.0, "com"))
    assert list(dec) == [4]  # 1/y with 0 in y: trv
    with pytest.raises(ivjit.InputError, match="cannot be decorated com"):
        g.decorated(x=(1.0, 2.0), y=(1.0, math.inf, 16))
    with pytest.raises(ivjit.InputError, match="decoration"):
        g.decorated(x=(1.0, 2.0), y=(1.0, 2.0, "fine"))
