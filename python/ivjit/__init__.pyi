from typing import Callable, Literal, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

Bound = Union[float, npt.ArrayLike]
Result = Tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]
Progress = Callable[[int, int], object]

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
    @property
    def source(self) -> str: ...
    def __call__(
        self,
        *,
        out: Optional[Result] = None,
        progress: Optional[Progress] = None,
        **bounds: Tuple[Bound, Bound],
    ) -> Result:
        """`f(x=(x_lo, x_hi), ...)`: arrays of one length n or numbers (broadcast); returns
        (lo, hi) of shape (n,) for one output, (outputs, n) for several. NumPy float64 and
        float32 arrays are read in place; `out=(lo, hi)` float64 arrays are filled and
        returned. `progress(done, n)` is called between pieces of a large batch; Ctrl-C stops
        it. CUDA arrays of CuPy or PyTorch are evaluated on their device and give arrays of the
        same library there."""
    def eval(
        self,
        bounds: Mapping[str, Tuple[Bound, Bound]],
        out: Optional[Result] = None,
        progress: Optional[Progress] = None,
    ) -> Result:
        """`f.eval({"x": (x_lo, x_hi), ...})`: calling `f` with the bounds in a dict."""

def pinned_zeros(shape: Union[int, Sequence[int]]) -> npt.NDArray[np.float64]:
    """Zeros in page-locked host memory (ordinary memory without a GPU): bounds and outputs
    there go to and from the GPU without host copies."""

def compile(
    source: str,
    precision: Literal["f64", "f32"] = "f64",
    backend: Literal["auto", "cpu", "gpu"] = "auto",
) -> Function:
    """Compiles an expression (the syntax of the `ivjit` command-line tool)."""
