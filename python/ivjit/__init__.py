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
import operator
import sys
from typing import NamedTuple

from . import _device
from ._ivjit import Error, GpuError, InputError, SyntaxError
from ._ivjit import _pinned
from ._ivjit import compile as _compile
from ._ivjit import relate
from ._ivjit import _constraint_vars, _contract, _pave, _solve_system
from ._ivjit import _minimize_subject_to, _problem_vars
from . import reduction

__all__ = [
    "compile",
    "relate",
    "reduction",
    "Function",
    "pinned_zeros",
    "render",
    "depth_map",
    "mesh",
    "Mesh",
    "trace",
    "Frame",
    "minimize",
    "roots",
    "solve",
    "solve_system",
    "SystemSolutions",
    "pave",
    "contract",
    "Paving",
    "Minimum",
    "ConstrainedMinimum",
    "Roots",
    "Solutions",
    "OUTSIDE",
    "INSIDE",
    "BOUNDARY",
    "Error",
    "SyntaxError",
    "InputError",
    "GpuError",
]

# Classes of a rendered pixel (`render`).
OUTSIDE = 0  # f > 0 on the whole pixel
INSIDE = 1  # f < 0 on the whole pixel
BOUNDARY = 2  # neither proven
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

    @property
    def form(self):
        """How boxes are evaluated: "natural", "mean-value" or "monotone"."""
        return self._native.form

    def __reduce__(self):
        # Pickled as its source and options: a worker process (Dask, multiprocessing) compiles
        # it again, on its own GPU or, for backend "auto" without one, on its CPU.
        return (
            compile,
            (
                self._native.source,
                self._native.precision,
                self._native._asked_backend,
                self._native.form,
            ),
        )

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
            return _device.call(self._native, bounds, out)
        return self._native._eval(bounds, out, progress)

    def decorated(self, **bounds):
        """IEEE 1788 decorated evaluation: `f.decorated(x=(lo, hi), y=(lo, hi, dec))`, arrays of
        one length or numbers; `dec` a decoration's code (16 com, 12 dac, 8 def, 4 trv, 0 ill)
        or name, per box or for all (without it, each box is decorated from its bounds: com if
        bounded, dac if not, trv if empty). Returns `(lo, hi, dec)` (float64, float64, uint8)
        for one output, a list of them for several; NaI is NaN bounds and code 0. The
        decoration says what is known of f on the box: com defined, continuous and bounded,
        dac defined and continuous, def defined, trv nothing (docs/decorations.md)."""
        rows = self._native._eval_decorated(bounds)
        return rows[0] if len(rows) == 1 else rows

    def eval(self, bounds, out=None, progress=None):
        """`f.eval({"x": (x_lo, x_hi), ...})`: the same as calling `f`, with the bounds in a
        dict (for variables whose names are not Python identifiers or clash with `out`)."""
        if _device.any_device_array(bounds):
            # One launch: nothing to report progress on, or to interrupt.
            return _device.call(self._native, bounds, out)
        return self._native._eval(bounds, out, progress)


def pinned_zeros(shape):
    """A float64 NumPy array of zeros in page-locked host memory (ordinary memory without a
    GPU). Batches whose bounds and `out=` arrays all lie in such arrays go to and from the GPU
    without host copies; the memory stays locked as long as the array (or a view of it) lives.
    `MemoryError` when the memory cannot be had; `ValueError` for a negative dimension or a
    size beyond the address space."""
    try:
        shape = (operator.index(shape),)
    except TypeError:
        shape = tuple(operator.index(d) for d in shape)
    if any(d < 0 for d in shape):
        raise ValueError(f"pinned_zeros{shape}: negative dimensions are not allowed")
    n = math.prod(shape)
    if n > sys.maxsize // 8:
        raise ValueError(f"pinned_zeros{shape}: {n} float64 values is more memory than the address space holds")
    import numpy as np

    buffer = _pinned(n)
    return np.asarray(buffer).reshape(shape)


def compile(source, precision="f64", backend="auto", form="natural"):
    """Compiles an expression (the syntax of the `ivjit` command-line tool):
    `compile("x^2 - y", precision="f64", backend="auto")`; backend "auto" is the GPU when there
    is one, else the CPU. `form="mean-value"` evaluates the mean-value (centered) form
    intersected with the natural extension: never wider, much narrower on small boxes of smooth
    expressions, and branch and bound (`minimize`) then needs far fewer boxes.
    `form="monotone"` adds the monotonicity test: variables whose partial derivative has a
    sign on the box are evaluated at the ends (exact where f is monotone in every variable)."""
    return Function(_compile(source, precision, backend, form))


def _function(f, precision, backend):
    return f if isinstance(f, Function) else compile(f, precision, backend)


def _outward(x, upper):
    """A bound as a float: an integer that is no float rounded outward (down for a lower bound,
    up for an upper one), never to nearest, which could shrink the box."""
    if isinstance(x, float):
        return x
    try:
        x = operator.index(x)  # NumPy integers as Python ints: compared with floats exactly
    except TypeError:
        pass
    try:
        f = float(x)
    except OverflowError:
        f = math.inf if x > 0 else -math.inf
    if f != f:
        return f
    if upper and f < x:
        return math.nextafter(f, math.inf)
    if not upper and f > x:
        return math.nextafter(f, -math.inf)
    return f


def _root_box(f, box):
    """A box as one (lo, hi) per variable of `f`, in its order: from a dict by name or a
    sequence in variable order."""
    if isinstance(box, dict):
        missing = [v for v in f.vars if v not in box]
        extra = [k for k in box if k not in f.vars]
        if missing or extra:
            raise InputError(f"the box needs exactly the variables {', '.join(f.vars)}")
        box = [box[v] for v in f.vars]
    return [(_outward(lo, False), _outward(hi, True)) for lo, hi in box]


def render(f, width, height, region, tiles=None, precision="f64", backend="auto", prune=None):
    """Classifies every pixel of a `width` x `height` image over `region = (x0, x1, y0, y1)`
    as `OUTSIDE` (f > 0 on the whole pixel, proven), `INSIDE` (f < 0, proven) or `BOUNDARY`
    (neither), by subdivision through tiles of `tiles` pixels (default 64, 8, 1; a pruned
    render takes a coarser first level for larger images: on the CPU 128, 16, 1 from 1024
    pixels a side, on the GPU beyond 1024: 128, 16, 1 up to 2048, 256, 32, 4, 1 up to
    4096), on the function's backend. `f`: a compiled function of x and y, or its source. Returns a uint8
    array of shape (height, width), row 0 at the top (y = y1). Pruning: each boundary tile's
    children run the program pruned for it (docs/render.md) — tapes run by an interpreter on
    the function's backend (every operation and function of x and y): the same classes for
    +, -, *, sqr, sqrt, abs, min, max, many times faster for large min/max models
    such as Prospero (1024² in about 1.2 ms on an H200, 0.12 s on two CPU cores). `prune=None`
    (the default) prunes where f has a min or max and the pruned render runs on the function's
    backend; `True` always prunes, `False` never."""
    f = _function(f, precision, backend)
    region = [float(r) for r in region]
    prune = None if prune is None else bool(prune)
    classes, _ = f._native._render(int(width), int(height), region, list(tiles or []), prune)
    return classes


def depth_map(f, width, height, region, zrange=(-1.0, 1.0), steps=1024, precision="f64", backend="auto", prune=None, tiles=None, method="voxels", normals=False):
    """The surface f(x, y, z) = 0 seen from above, as a (height, width) float64 array of
    heights over a `width` x `height` image of `region = (x0, x1, y0, y1)`, NaN where nothing
    lies below a pixel, on the function's backend (docs/render.md).

    `method="voxels"` (the default, as `ivjit render`): the `width` x `height` x `steps`
    voxels over the region and `zrange` are classified through cubic tiles (`tiles`, default
    64, 16, 4, 1) with pruned tapes; a pixel's height is the top of its column's highest voxel
    not proven outside, so no point of the surface over the whole pixel lies above it.

    `method="rays"`: the vertical line through each pixel's center is searched from z1 down to
    z0 to 1/`steps` of the height; the height is the top of the first piece that may hold the
    surface (no point of the surface on that line lies above it). `prune=True`: blocks of rays
    (`tiles`, default 32, 8) with pruned tapes on the CPU, the same heights; `prune=None` (the
    default) prunes where the function runs on the CPU and has a min or max, `False` never.

    `normals=True` (voxels only) returns `(heights, normals)`: each column's unit normal as a
    (height, width, 3) float64 array (pointing to where f grows), certified by f's gradient
    enclosed on the column's top voxel, NaN where no normal is proven (the enclosure holds 0)
    or nothing lies below the pixel."""
    if method not in ("voxels", "rays"):
        raise InputError(f"method={method!r}: give 'voxels' or 'rays'")
    if prune is not None and method == "voxels":
        raise InputError("prune chooses how rays are searched: give method='rays' with it (voxels always prune)")
    f = _function(f, precision, backend)
    region = [float(r) for r in region]
    zrange = (float(zrange[0]), float(zrange[1]))
    prune = None if prune is None else bool(prune)
    voxels = method == "voxels"
    if normals and not voxels:
        raise InputError("normals come with method='voxels'")
    return f._native._depth(int(width), int(height), region, zrange, int(steps), prune, list(tiles or []), voxels, bool(normals))


class Mesh(NamedTuple):
    """A closed triangle mesh of f = 0 (`mesh`)."""

    vertices: object  # (V, 3) float64, each on a sign change of f to the bisections' precision
    triangles: object  # (T, 3) uint32 vertex indices, counter-clockwise seen from outside (f > 0)
    stats: dict  # what the search proved and found (cells, witnesses, uncertain, ...)
    normals: object = None  # with normals=True: (V, 3) float64 unit normals pointing outside
    normal_certain: object = None  # with normals=True: (V,) bool, where the gradient proves it


def mesh(f, depth=7, region=(-1.0, 1.0, -1.0, 1.0, -1.0, 1.0), witness_levels=3, bisections=10,
         normals=False, precision="f64", backend="auto"):
    """A closed, 2-manifold, outward-oriented triangle mesh of the surface f(x, y, z) = 0 over
    `region = (x0, x1, y0, y1, z0, z1)` on a lattice of 2**depth cells a side (docs/mesh.md):
    cells proven outside or inside by interval subdivision are skipped, each boundary cell is
    split into 24 tetrahedra (marching tetrahedra: no ambiguous cases), and edges, faces and
    cells whose samples agree are searched `witness_levels` deep for a point of the other sign,
    so parts thinner than a cell are kept (`witness_levels=0`: the point-sampled mesh). The
    region's faces count as outside, so the mesh is closed there. Each vertex is placed by
    `bisections` bisection steps of f. Returns `Mesh(vertices, triangles, stats)`; the stats
    count the proven cells, the witnesses, and the `uncertain` elements where the surface may
    pass unseen at this depth. `normals=True` adds the vertices' normals from f's gradient,
    each flagged certain where the gradient's enclosure proves it, and `stats["certain_cells"]`:
    the boundary cells where f is proven monotone along an axis (one sheet of surface there).
    Ctrl-C stops it (KeyboardInterrupt)."""
    f = _function(f, precision, backend)
    region = [float(r) for r in region]
    vertices, triangles, stats, with_normals = f._native._mesh(
        int(depth), region, int(witness_levels), int(bisections), bool(normals))
    n, certain = with_normals if with_normals is not None else (None, None)
    return Mesh(vertices, triangles, dict(stats), n, certain)


class Frame(NamedTuple):
    """A traced camera frame: each pixel's first candidate root along its ray, and a picture."""

    hits: object  # (height, width, 2) float64: [t_lo, t_hi] of the first hit, NaN where none (None: hits=False)
    rgb: object  # (height, width, 3) uint8, top row first (the shading is cosmetic)
    boxes: int  # boxes evaluated


def trace(f, width, height, eye, center=(0.0, 0.0, 0.0), fov=40.0, scene=(0.0, 0.0, 0.0), radius=2.0,
          steps=1024, split=8, precision="f64", backend="auto", hits=True):
    """Ray traces the surface f(x, y, z) = 0 with a pinhole camera at `eye` looking at `center`
    (y up; field of view `fov` degrees) on a `width` x `height` image: every pixel's ray
    `eye + t d` is clipped to the ball of `radius` around `scene` and searched for its first
    root to 1/`steps` of its clipped length (`split` pieces per round), with interval
    arithmetic: a pixel with no hit provably sees no point of the surface inside the ball. The
    whole frame runs on the function's backend (on a GPU: a kernel for rays and search, one for
    shading). Returns a `Frame`; with `hits=False` its hits are None (the image alone, as a
    viewer draws frames: on a GPU the hits stay on the device). docs/raytrace.md."""
    f = _function(f, precision, backend)
    v3 = lambda p: tuple(float(c) for c in p)  # noqa: E731
    hits, rgb, boxes = f._native._trace(int(width), int(height), v3(eye), v3(center), float(fov), v3(scene),
                                        float(radius), int(steps), int(split), bool(hits))
    return Frame(hits, rgb, boxes)


class Minimum(NamedTuple):
    """A certified enclosure `lower <= min f <= upper` over the box, and what it cost."""

    lower: float
    upper: float
    argmin: list  # a point whose enclosure gave `upper` (variables in order)
    stopped: str  # "converged" (upper - lower <= tol), "budget", "memory" or "rounds"
    rounds: int
    boxes: int  # boxes evaluated
    remaining: int  # boxes alive at the end
    gpu_rounds: int = 0  # how many of the rounds (the last ones) ran on the GPU


class ConstrainedMinimum(NamedTuple):
    """A certified enclosure `lower <= min f <= upper` over the box's points that satisfy the
    constraints (equalities relaxed to |h| <= relaxation), and what it cost."""

    lower: float
    upper: float  # inf until a feasible point is proven
    argmin: object  # the point proven feasible that gave `upper` (variables in order), or None
    stopped: str  # "converged", "narrow", "budget" or "infeasible" (no feasible point: proven)
    relaxation: float  # the half-width equalities were relaxed to (0: none)
    rounds: int
    boxes: int  # boxes evaluated
    remaining: int  # boxes that may still hold a minimizer


def minimize(
    f,
    box,
    tol=1e-6,
    max_boxes=100_000_000,
    precision="f64",
    backend="auto",
    gradient=False,
    subject_to=None,
    eq_tol=1e-6,
):
    """Interval branch and bound: a certified enclosure of the global minimum of `f` over `box`
    (a dict {variable: (lo, hi)} or one (lo, hi) per variable, finite), to `upper - lower <=
    tol`, evaluating at most `max_boxes` boxes, on the function's backend. `lower` is rigorous
    for any f; `upper` is where f is defined at the point that gave it. `gradient=True` uses f's
    gradient: the mean-value form with the monotonicity test and gradient-based exclusion, and a
    local descent for the upper bound (far fewer boxes; docs/optimize.md). With
    backend="auto" on a GPU machine the rounds start on the CPU and move to the GPU once they are
    large enough to pay for its fixed cost per round (`gpu_rounds` says how many ran there).

    `subject_to="g <= 0, h == 0, ..."` (comma-separated as for `pave`) minimizes over the points
    that satisfy the constraints, with contractors (docs/constraints.md) and upper bounds only
    at points proven feasible; equalities are relaxed to |h| <= eq_tol. The box's variables are
    those of f, then the constraints', in order of appearance; returns a ConstrainedMinimum."""
    if subject_to is not None:
        source = f.source if isinstance(f, Function) else str(f)
        names = _problem_vars(source, subject_to)

        class _Vars:
            vars = names

        root = _root_box(_Vars, box)
        return ConstrainedMinimum(
            *_minimize_subject_to(
                source, subject_to, root, float(tol), float(eq_tol), int(max_boxes), precision, backend
            )
        )
    f = _function(f, precision, backend)
    root = _root_box(f, box)
    return Minimum(*f._native._minimize(root, float(tol), int(max_boxes), bool(gradient)))


class Paving(NamedTuple):
    """A paving: (count, vars, 2) float64 arrays of (lo, hi) sides, variables in `vars` order."""

    vars: list
    inner: object  # boxes whose every point satisfies every constraint
    boundary: object  # boxes at most eps wide that are neither proven
    outer: object  # boxes none of whose points satisfies every constraint
    evaluated: int  # boxes evaluated
    truncated: bool  # the budget ran out (the undecided boxes are then in `boundary`)


def pave(constraints, box, eps=1e-2, max_boxes=10_000_000, precision="f64", backend="auto", ratio=0.0):
    """Paves `box` (a dict {variable: (lo, hi)} or one (lo, hi) per variable in the order of
    the constraints' variables) for comma-separated constraints `f <= g`, `f >= g`, `f == g`,
    `f in [a, b]` (e.g. `"x^2 + y^2 <= 1, y >= x^3"`): every box ends inner (proven inside the
    set), outer (proven outside) or boundary (at most `eps` wide), as `ivjit pave` does
    (docs/constraints.md). `ratio` in [0, 1): a box that one contraction narrows by more than
    this fraction of a side is contracted again before it is cut (0: once per cut)."""
    names = _constraint_vars(constraints)

    class _Vars:
        vars = names

    root = _root_box(_Vars, box)
    inner, boundary, outer, evaluated, truncated = _pave(
        constraints, root, float(eps), int(max_boxes), precision, backend, float(ratio)
    )
    return Paving(names, inner, boundary, outer, evaluated, truncated)


class SystemSolutions(NamedTuple):
    """Every solution of a set of constraints in a box: (count, vars, 2) arrays of (lo, hi)."""

    vars: list  # the variables, in the boxes' order
    solutions: object  # boxes proven to hold exactly one solution each (Krawczyk)
    undecided: object  # boxes that may hold solutions, none proven
    inner: object  # boxes of solutions only (systems without equalities)
    complete: bool  # False: the budget stopped the search (the unsplit rest is undecided)
    square: bool  # as many equalities as variables (uniqueness can be proven)
    boxes: int  # boxes evaluated
    newton_steps: int


def solve_system(constraints, box, eps=1e-8, max_boxes=10_000_000, backend="auto"):
    """Every solution of comma-separated constraints `f == g`, `f <= g`, `f >= g`, `f in [a, b]`
    (e.g. `"x^2 + y^2 == 5, x*y == 2, x >= 0"`) in `box` (a dict {variable: (lo, hi)}, sides
    may be unbounded, or one (lo, hi) per variable in the constraints' order), by branch and
    prune as `ivjit solve` does: HC4 contraction, Krawczyk's test where the equalities are as
    many as the variables (a solution box holds exactly one solution, narrowed to a few ulps),
    bisection down to `eps`. Every solution lies in a solution, inner or undecided box.
    In double precision. docs/constraints.md."""
    names = _constraint_vars(constraints)

    class _Vars:
        vars = names

    root = _root_box(_Vars, box)
    solutions, undecided, inner, complete, square, boxes, steps = _solve_system(
        constraints, root, float(eps), int(max_boxes), backend
    )
    return SystemSolutions(names, solutions, undecided, inner, complete, square, boxes, steps)


def contract(constraints, box, sweeps=3, precision="f64", backend="auto"):
    """`box` narrowed to the points that can satisfy the comma-separated constraints (HC4Revise,
    `sweeps` forward-backward sweeps, compiled into one program): one (lo, hi) per variable in
    the constraints' order, or None where no point of the box satisfies them."""
    names = _constraint_vars(constraints)

    class _Vars:
        vars = names

    return _contract(constraints, _root_box(_Vars, box), int(sweeps), precision, backend)


class Roots(NamedTuple):
    """Every box where f may equal the level: (count, vars, 2) arrays of (lo, hi) sides."""

    boxes: object  # final boxes, sorted
    unfinished: object  # boxes not final when the budget stopped the search
    ended: str  # "done", "budget", "memory" or "rounds"
    rounds: int
    evaluated: int


def roots(f, box, level=0.0, tol=1e-9, max_boxes=100_000_000, precision="f64", backend="auto"):
    """Every box of `box` where `f` may equal `level`, each side at most `tol` wide (relative
    above 1): boxes proven free of the level set are dropped, so every point where f = level
    lies in a returned box (in `unfinished` when the budget stopped the search). A box that
    holds a root is not proven to: the search excludes, it does not prove existence."""
    f = _function(f, precision, backend)
    boxes, unfinished, ended, rounds, evaluated = f._native._exclude(
        _root_box(f, box), float(level), float(tol), int(max_boxes)
    )
    return Roots(boxes, unfinished, ended, rounds, evaluated)


class Solutions(NamedTuple):
    """The zeros of a square system: every zero in the box lies in one of `boxes`."""

    boxes: object  # (count, vars, 2) float64 array of (lo, hi) sides
    unique: list  # per box: proven to hold exactly one zero (interval Newton)
    ended: str  # how the exclusion ended: "done", "budget", "memory" or "rounds"
    evaluated: int  # boxes the exclusion evaluated
    newton_steps: int


def solve(f, box, tol=1e-12, max_boxes=100_000_000, backend="auto"):
    """The zeros of a square system f = 0 (as many outputs as variables, e.g. `"x^2 + y^2 - 1,
    y - x^3"`) in `box`: boxes where the residual max(|f_i|) excludes 0 are dropped down to
    `tol`, the survivors merged into clusters, and each cluster given to Krawczyk's test
    (interval Newton, with f's Jacobian compiled into the kernel). `unique[k]` says that box k
    is proven to hold exactly one zero (it is then narrowed to a few ulps); a box not proven
    may hold none, one or several (a multiple zero, a cluster). In double precision, on the
    function's backend. docs/roots.md."""
    f = _function(f, "f64", backend)
    boxes, unique, ended, evaluated, steps = f._native._solve(
        _root_box(f, box), float(tol), int(max_boxes)
    )
    return Solutions(boxes, unique, ended, evaluated, steps)
