"""Correctly rounded reductions of float vectors (IEEE 1788, after IEEE 754 section 9.4):
the exact sum, sum of absolute values, sum of squares or dot product, rounded once.

    >>> from ivjit import reduction
    >>> reduction.sum([1e16, 1.0, -1e16])          # a chained sum gives 0.0
    1.0
    >>> reduction.dot([1e308, 1e308], [2.0, -2.0])  # no intermediate overflow
    0.0

`rounding` is "nearest" (ties to even), "down" or "up". NaN anywhere gives NaN, as do
infinities of both signs in a sum and an infinity times 0 in a dot product.
"""

from typing import Literal, Sequence

from ._ivjit import _reduce

__all__ = ["sum", "sum_abs", "sum_sqr", "dot"]

Rounding = Literal["nearest", "down", "up"]


def sum(x: Sequence[float], rounding: Rounding = "nearest") -> float:  # noqa: A001
    """x[0] + x[1] + ..., computed exactly and rounded once."""
    return _reduce("sum", [float(v) for v in x], None, rounding)


def sum_abs(x: Sequence[float], rounding: Rounding = "nearest") -> float:
    """|x[0]| + |x[1]| + ..., computed exactly and rounded once."""
    return _reduce("sum_abs", [float(v) for v in x], None, rounding)


def sum_sqr(x: Sequence[float], rounding: Rounding = "nearest") -> float:
    """x[0]**2 + x[1]**2 + ..., computed exactly and rounded once."""
    return _reduce("sum_sqr", [float(v) for v in x], None, rounding)


def dot(x: Sequence[float], y: Sequence[float], rounding: Rounding = "nearest") -> float:
    """x[0]*y[0] + x[1]*y[1] + ..., computed exactly and rounded once (equal lengths)."""
    return _reduce("dot", [float(v) for v in x], [float(v) for v in y], rounding)
