"""ivjit: rigorous interval evaluation of expressions over millions of boxes.

    >>> import numpy as np, ivjit
    >>> f = ivjit.compile("x^2 - y", precision="f64", backend="auto")
    >>> lo, hi = f(x=(np.array([-1.0, 2.0]), np.array([1.0, 3.0])), y=(0.5, 0.5))

Every returned interval [lo[i], hi[i]] contains every real value the expression takes on box i
(outward rounding on the GPU and the CPU alike); an empty result is NaN in both bounds.
"""

from ._ivjit import Error, Function, GpuError, InputError, SyntaxError, compile

__all__ = ["compile", "Function", "Error", "SyntaxError", "InputError", "GpuError"]
__version__ = "0.1.0"
