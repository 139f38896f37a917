from typing import Literal, Mapping, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

Bound = Union[float, npt.ArrayLike]

class Error(Exception):
    """Base class of every ivjit error."""

class SyntaxError(Error):
    """The expression is malformed; the message shows the source line and a caret."""

class InputError(Error):
    """A bound is not a valid interval bound, or the arrays do not fit together."""

class GpuError(Error):
    """No usable GPU for backend='gpu', or the GPU failed."""

class Function:
    """An expression compiled for one precision and backend."""

    @property
    def vars(self) -> list[str]: ...
    @property
    def outputs(self) -> int: ...
    @property
    def precision(self) -> Literal["f64", "f32"]: ...
    @property
    def backend(self) -> Literal["cpu", "gpu"]: ...
    def ir(self) -> str: ...
    def ptx(self) -> str: ...
    def __call__(
        self, **bounds: Tuple[Bound, Bound]
    ) -> Tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """`f(x=(x_lo, x_hi), ...)`: arrays of one length n or numbers (broadcast); returns
        (lo, hi) of shape (n,) for one output, (outputs, n) for several. NumPy arrays give
        NumPy arrays; CUDA arrays of CuPy or PyTorch are evaluated on their device and give
        arrays of the same library there."""

def compile(
    source: str,
    precision: Literal["f64", "f32"] = "f64",
    backend: Literal["auto", "cpu", "gpu"] = "auto",
) -> Function:
    """Compiles an expression (the syntax of the `ivjit` command-line tool)."""
