"""ivjit: rigorous interval evaluation of expressions over millions of boxes.

    >>> import numpy as np, ivjit
    >>> f = ivjit.compile("x^2 - y", precision="f64", backend="auto")
    >>> lo, hi = f(x=(np.array([-1.0, 2.0]), np.array([1.0, 3.0])), y=(0.5, 0.5))

Every returned interval [lo[i], hi[i]] contains every real value the expression takes on box i
(outward rounding on the GPU and the CPU alike); an empty result is NaN in both bounds. Bounds
may be NumPy arrays (results are NumPy arrays) or CUDA arrays of CuPy or PyTorch (evaluated on
the device, results of the same library on the same device).
"""

import math

from . import _device
from ._ivjit import Error, GpuError, InputError, SyntaxError
from ._ivjit import _pinned
from ._ivjit import compile as _compile

__all__ = ["compile", "Function", "pinned_zeros", "Error", "SyntaxError", "InputError", "GpuError"]
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

    @property
    def source(self):
        """The expression's source text."""
        return self._native.source

    def __reduce__(self):
        # Pickled as its source and options: a worker process (Dask, multiprocessing) compiles
        # it again, on its own GPU or, for backend "auto" without one, on its CPU.
        return (compile, (self._native.source, self._native.precision, self._native._asked_backend))

    def __call__(self, *args, out=None, progress=None, **bounds):
        """`f(x=(x_lo, x_hi), ...)`: arrays of one length n or numbers (broadcast); returns
        `(lo, hi)` of shape (n,) for one output, (outputs, n) for several. `out=(lo, hi)`:
        float64 arrays of that shape to fill (and return) instead of new ones. `progress`: a
        function called as `progress(done, n)` between pieces of a large batch. A variable
        named `out` or `progress` is passed with `f.eval({...})`."""
        if args:
            names = ", ".join(f"{v}=(lo, hi)" for v in self.vars)
            raise TypeError(f"pass the bounds by name: f({names})")
        if _device.any_device_array(bounds):
            return self.eval(bounds, out=out, progress=progress)
        return self._native._eval(bounds, out, progress)

    def eval(self, bounds, out=None, progress=None):
        """`f.eval({"x": (x_lo, x_hi), ...})`: the same as calling `f`, with the bounds in a
        dict (for variables whose names are not Python identifiers or clash with `out`)."""
        if _device.any_device_array(bounds):
            if out is not None or progress is not None:
                raise InputError("out= and progress= are for host arrays; device arrays return new arrays")
            return _device.call(self._native, bounds)
        return self._native._eval(bounds, out, progress)


def pinned_zeros(shape):
    """A float64 NumPy array of zeros in page-locked host memory (ordinary memory without a
    GPU). Batches whose bounds and `out=` arrays all lie in such arrays go to and from the GPU
    without host copies; the memory stays locked as long as the array (or a view of it) lives."""
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    import numpy as np

    buffer = _pinned(math.prod(shape))
    return np.asarray(buffer).reshape(shape)


def compile(source, precision="f64", backend="auto"):
    """Compiles an expression (the syntax of the `ivjit` command-line tool):
    `compile("x^2 - y", precision="f64", backend="auto")`; backend "auto" is the GPU when there
    is one, else the CPU."""
    return Function(_compile(source, precision, backend))
