"""ivjit: rigorous interval evaluation of expressions over millions of boxes.

    >>> import numpy as np, ivjit
    >>> f = ivjit.compile("x^2 - y", precision="f64", backend="auto")
    >>> lo, hi = f(x=(np.array([-1.0, 2.0]), np.array([1.0, 3.0])), y=(0.5, 0.5))

Every returned interval [lo[i], hi[i]] contains every real value the expression takes on box i
(outward rounding on the GPU and the CPU alike); an empty result is NaN in both bounds. Bounds
may be NumPy arrays (results are NumPy arrays) or CUDA arrays of CuPy or PyTorch (evaluated on
the device, results of the same library on the same device).
"""

from . import _device
from ._ivjit import Error, GpuError, InputError, SyntaxError
from ._ivjit import compile as _compile

__all__ = ["compile", "Function", "Error", "SyntaxError", "InputError", "GpuError"]
__version__ = "0.1.0"


class Function:
    """An expression compiled for one precision and backend (made by `ivjit.compile`)."""

    __slots__ = ("_native",)

    def __init__(self, native):
        self._native = native

    @property
    def vars(self):
        """The variables, in the order of the batch."""
        return self._native.vars

    @property
    def outputs(self):
        """The number of outputs (comma-separated expressions)."""
        return self._native.outputs

    @property
    def precision(self):
        """'f64' or 'f32'."""
        return self._native.precision

    @property
    def backend(self):
        """'gpu' or 'cpu': where the batches run."""
        return self._native.backend

    def ir(self):
        """The interval IR after rewrites, as text."""
        return self._native.ir()

    def ptx(self):
        """The PTX kernel of this precision."""
        return self._native.ptx()

    def __repr__(self):
        return repr(self._native)

    def __call__(self, *args, **bounds):
        """`f(x=(x_lo, x_hi), ...)`: arrays of one length n or numbers (broadcast); returns
        `(lo, hi)` of shape (n,) for one output, (outputs, n) for several."""
        if not args and _device.any_device_array(bounds):
            return _device.call(self._native, bounds)
        return self._native(*args, **bounds)


def compile(source, precision="f64", backend="auto"):
    """Compiles an expression (the syntax of the `ivjit` command-line tool):
    `compile("x^2 - y", precision="f64", backend="auto")`; backend "auto" is the GPU when there
    is one, else the CPU."""
    return Function(_compile(source, precision, backend))
