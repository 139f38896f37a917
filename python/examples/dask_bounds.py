"""Bounding an expression over more boxes than one machine holds, with Dask.

ivjit evaluates one batch on one machine; to scale out, hand its compiled function to an
engine you already run. `dask.array.map_blocks` calls it on each block of the bounds (a
compiled function pickles as its source, so every worker compiles it once, on its own GPU or,
for backend "auto" without one, on its CPU), and Dask's reductions combine the blocks without
ever holding the whole batch.

Run: python examples/dask_bounds.py [boxes per side]  (a local cluster of worker processes)

It proves a bound of the six-hump camel function over [-2, 2] x [-1, 1] cut into a grid of
side x side boxes: the boxes are made inside each block from their indices, so the batch
exists only block by block, and the answer is the smallest lower bound over all boxes (every
value of the function on the domain is at least that) and the number of boxes whose enclosure
could hold the value -1.0316 (the known minimum).
"""

import sys

import dask.array as da
import numpy as np

import ivjit

CAMEL = "4*x^2 - 2.1*x^4 + x^6/3 + x*y - 4*y^2 + 4*y^4"
DOMAIN = ((-2.0, 2.0), (-1.0, 1.0))


def evaluate(f, bounds):
    """`f` over dask arrays: `bounds` maps each variable to a pair (lo, hi) of 1-D dask arrays
    of one length and one chunking (numbers broadcast). Returns (lo, hi) as dask arrays, of
    shape (n,) for one output and (outputs, n) for several, with the chunks of the inputs."""
    names = f.vars
    arrays = [b for v in names for b in bounds[v]]
    template = next(a for a in arrays if isinstance(a, da.Array))
    m = f.outputs

    def block(*parts):
        lo, hi = f.eval({v: (parts[2 * k], parts[2 * k + 1]) for k, v in enumerate(names)})
        return np.stack([lo, hi])

    parts = [a if isinstance(a, da.Array) else da.full_like(template, a) for a in arrays]
    new_axes = [0] if m == 1 else [0, 1]
    chunks = ((2,),) + (((m,),) if m > 1 else ()) + template.chunks
    both = da.map_blocks(block, *parts, new_axis=new_axes, chunks=chunks, dtype=np.float64)
    return both[0], both[1]


def grid_bounds(side, chunk, domain=DOMAIN):
    """The boxes of a side x side grid over a 2-D domain, as lazy dask arrays (x_lo, x_hi, y_lo,
    y_hi), made block by block from the box indices. The cuts are rounded to float64, and
    neighbouring boxes share them, so the boxes cover the domain without gaps."""
    index = da.arange(side * side, chunks=chunk, dtype=np.int64)
    (x0, x1), (y0, y1) = domain

    def cut(k, a, b):
        return a + (b - a) * (k / side)

    def sides(k, a, b):
        # The cut formula is monotone in k, and the first and last cuts are the domain's own
        # ends (the formula could round them inward).
        lo = da.where(k == 0, a, k.map_blocks(cut, a, b, dtype=np.float64))
        hi = da.where(k + 1 == side, b, (k + 1).map_blocks(cut, a, b, dtype=np.float64))
        return lo, hi

    return sides(index // side, x0, x1), sides(index % side, y0, y1)


def main():
    from dask.distributed import Client, LocalCluster

    side = int(sys.argv[1]) if len(sys.argv) > 1 else 4096
    f = ivjit.compile(CAMEL, backend="auto")
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True) as cluster, Client(cluster):
        (xl, xh), (yl, yh) = grid_bounds(side, chunk=1 << 20)
        lo, hi = evaluate(f, {"x": (xl, xh), "y": (yl, yh)})
        smallest, candidates = da.compute(lo.min(), ((lo <= -1.0316) & (hi >= -1.0316)).sum())
    print(f"{side * side} boxes: camel >= {float(smallest)!r} on the domain; "
          f"{candidates} boxes may hold the value -1.0316")


if __name__ == "__main__":
    main()
