from typing import Callable, Literal, Mapping, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

Bound = Union[float, npt.ArrayLike]
Result = Tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]
Progress = Callable[[int, int], object]
DecoratedResult = Tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.uint8]]

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
    @property
    def form(self) -> Literal["natural", "mean-value", "monotone"]: ...
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
    def decorated(
        self, **bounds: Union[Tuple[Bound, Bound], Tuple[Bound, Bound, Union[int, str, npt.ArrayLike]]]
    ) -> Union[DecoratedResult, list[DecoratedResult]]:
        """IEEE 1788 decorated evaluation: `f.decorated(x=(lo, hi), y=(lo, hi, dec))`; `dec` a
        code (16 com, 12 dac, 8 def, 4 trv, 0 ill) or a name, per box or for all. Returns
        (lo, hi, dec) per output: float64, float64, uint8; NaI is NaN bounds and 0."""
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

OUTSIDE: int
INSIDE: int
BOUNDARY: int

Box = Union[Mapping[str, Tuple[float, float]], Sequence[Tuple[float, float]]]

def depth_map(
    f: Union[Function, str],
    width: int,
    height: int,
    region: Tuple[float, float, float, float],
    zrange: Tuple[float, float] = (-1.0, 1.0),
    steps: int = 1024,
    precision: Literal["f64", "f32"] = "f64",
    backend: Literal["auto", "cpu", "gpu"] = "auto",
    prune: Optional[bool] = None,
    tiles: Optional[Sequence[int]] = None,
    method: Literal["voxels", "rays"] = "voxels",
    normals: bool = False,
) -> Union[npt.NDArray[np.float64], Tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]]:
    """Heights of the surface f(x, y, z) = 0 seen from above, NaN where nothing lies below a pixel."""

class Mesh(NamedTuple):
    """A closed triangle mesh of f = 0: vertices (V, 3) float64, triangles (T, 3) uint32
    counter-clockwise seen from outside, and the search's counts."""

    vertices: npt.NDArray[np.float64]
    triangles: npt.NDArray[np.uint32]
    stats: dict[str, int]
    normals: Optional[npt.NDArray[np.float64]]
    normal_certain: Optional[npt.NDArray[np.bool_]]

def mesh(
    f: Union[Function, str],
    depth: int = 7,
    region: Tuple[float, float, float, float, float, float] = (-1.0, 1.0, -1.0, 1.0, -1.0, 1.0),
    witness_levels: int = 3,
    bisections: int = 10,
    normals: bool = False,
    precision: Literal["f64", "f32"] = "f64",
    backend: Literal["auto", "cpu", "gpu"] = "auto",
) -> Mesh:
    """A closed, 2-manifold mesh of f(x, y, z) = 0 that keeps parts thinner than a cell."""

class Minimum(NamedTuple):
    """A certified enclosure `lower <= min f <= upper` over the box, and what it cost."""

    lower: float
    upper: float
    argmin: list[float]
    stopped: Literal["converged", "budget", "memory", "rounds"]
    rounds: int
    boxes: int
    remaining: int

class ConstrainedMinimum(NamedTuple):
    """A certified enclosure of the minimum over the points that satisfy the constraints."""

    lower: float
    upper: float
    argmin: Optional[list[float]]
    stopped: Literal["converged", "narrow", "budget", "infeasible"]
    relaxation: float
    rounds: int
    boxes: int
    remaining: int

class Roots(NamedTuple):
    """Every box where f may equal the level: (count, vars, 2) arrays of (lo, hi) sides."""

    boxes: npt.NDArray[np.float64]
    unfinished: npt.NDArray[np.float64]
    ended: Literal["done", "budget", "memory", "rounds"]
    rounds: int
    evaluated: int

def render(
    f: Union[Function, str],
    width: int,
    height: int,
    region: Tuple[float, float, float, float],
    tiles: Optional[Sequence[int]] = None,
    precision: Literal["f64", "f32"] = "f64",
    backend: Literal["auto", "cpu", "gpu"] = "auto",
    prune: bool = False,
) -> npt.NDArray[np.uint8]:
    """Classes (OUTSIDE, INSIDE, BOUNDARY) of the pixels of an image of f(x, y), proven by
    subdivision; shape (height, width), row 0 at the top."""

def minimize(
    f: Union[Function, str],
    box: Box,
    tol: float = 1e-6,
    max_boxes: int = 100_000_000,
    precision: Literal["f64", "f32"] = "f64",
    backend: Literal["auto", "cpu", "gpu"] = "auto",
    gradient: bool = False,
    subject_to: Optional[str] = None,
    eq_tol: float = 1e-6,
) -> Union[Minimum, ConstrainedMinimum]:
    """Interval branch and bound: a certified enclosure of the global minimum over the box
    (with `subject_to`, over its points that satisfy the constraints: a ConstrainedMinimum)."""

def roots(
    f: Union[Function, str],
    box: Box,
    level: float = 0.0,
    tol: float = 1e-9,
    max_boxes: int = 100_000_000,
    precision: Literal["f64", "f32"] = "f64",
    backend: Literal["auto", "cpu", "gpu"] = "auto",
) -> Roots:
    """Every box where f may equal the level (every such point lies in one)."""

def compile(
    source: str,
    precision: Literal["f64", "f32"] = "f64",
    backend: Literal["auto", "cpu", "gpu"] = "auto",
    form: Literal["natural", "mean-value", "monotone"] = "natural",
) -> Function:
    """Compiles an expression (the syntax of the `ivjit` command-line tool)."""


class Solutions(NamedTuple):
    boxes: npt.NDArray[np.float64]
    unique: list[bool]
    ended: Literal["done", "budget", "memory", "rounds"]
    evaluated: int
    newton_steps: int

def solve(
    f: Union[Function, str],
    box: Box,
    tol: float = 1e-12,
    max_boxes: int = 100_000_000,
    backend: Literal["auto", "cpu", "gpu"] = "auto",
) -> Solutions:
    """The zeros of a square system, each proven unique by interval Newton where it can be."""


class SystemSolutions(NamedTuple):
    vars: list[str]
    solutions: npt.NDArray[np.float64]
    undecided: npt.NDArray[np.float64]
    inner: npt.NDArray[np.float64]
    complete: bool
    square: bool
    boxes: int
    newton_steps: int

def solve_system(
    constraints: str,
    box: Box,
    eps: float = 1e-8,
    max_boxes: int = 10_000_000,
    backend: Literal["auto", "cpu", "gpu"] = "auto",
) -> SystemSolutions:
    """Every solution of constraints like "x^2 + y^2 == 5, x*y == 2", each proven unique where it can be."""


class Paving(NamedTuple):
    vars: list[str]
    inner: npt.NDArray[np.float64]
    boundary: npt.NDArray[np.float64]
    outer: npt.NDArray[np.float64]
    evaluated: int
    truncated: bool

def pave(
    constraints: str,
    box: Box,
    eps: float = 1e-2,
    max_boxes: int = 10_000_000,
    precision: Literal["f64", "f32"] = "f64",
    backend: Literal["auto", "cpu", "gpu"] = "auto",
) -> Paving:
    """Inner, boundary and outer boxes of `box` for constraints like "x^2 + y^2 <= 1, y >= x^3"."""


def contract(
    constraints: str,
    box: Box,
    sweeps: int = 3,
    precision: Literal["f64", "f32"] = "f64",
    backend: Literal["auto", "cpu", "gpu"] = "auto",
) -> Optional[list[Tuple[float, float]]]:
    """The box narrowed by the constraints' contractor; None where no point satisfies them."""


Interval = Union[Tuple[float, float], float, str]

def relate(
    a: Interval, b: Optional[Interval] = None, member: Optional[float] = None
) -> dict[str, Union[bool, str, None]]:
    """IEEE 1788's comparisons of intervals (exact): isEmpty, isEntire, isNaI,
    isCommonInterval, isSingleton of a; isMember of member; with b the overlap state (None for
    NaI) and equal, subset, interior, disjoint, less, strictLess, precedes, strictPrecedes."""
    ...
