"""Boxes per second of a NumPy batch through the Python package, to set beside the Rust API's
figure from `ivjit bench --only mul,tangle --boxes 1048576` on the same backend (both evaluate
random boxes into fresh outputs; the median of runs after a warm-up).

Run: python bench/throughput.py [backend] [log2 boxes]
"""

import statistics
import sys
import time

import numpy as np

import ivjit

CASES = {
    "mul": ("x * y", (-10.0, 10.0), 1.0),
    "tangle": ("x^4 - 5*x^2 + y^4 - 5*y^2 + z^4 - 5*z^2 + 11.8", (-3.0, 3.0), 0.1),
}


def main():
    backend = sys.argv[1] if len(sys.argv) > 1 else "auto"
    n = 1 << (int(sys.argv[2]) if len(sys.argv) > 2 else 20)
    rng = np.random.default_rng(7)
    for name, (source, (a, b), width) in CASES.items():
        for precision in ("f64", "f32"):
            f = ivjit.compile(source, precision=precision, backend=backend)
            times = {"fresh": [], "out=": []}
            out = (np.empty(n), np.empty(n))
            for rep in range(6):
                bounds = {}
                for v in f.vars:
                    c = rng.uniform(a, b, n)
                    h = rng.uniform(0.0, width, n)
                    bounds[v] = (c - h, c + h)
                if precision == "f32":
                    # f32 bounds, rounded outward (nextafter after the nearest rounding).
                    bounds = {v: (np.nextafter(lo.astype(np.float32), np.float32(-np.inf)),
                                  np.nextafter(hi.astype(np.float32), np.float32(np.inf)))
                              for v, (lo, hi) in bounds.items()}
                for mode in times:
                    t = time.perf_counter()
                    f.eval(bounds, out=out if mode == "out=" else None)
                    if rep > 0:
                        times[mode].append(time.perf_counter() - t)
            rates = ", ".join(f"{mode} {n / statistics.median(ts):.3e}" for mode, ts in times.items())
            print(f"{name:8} {precision} {f.backend}: {n} boxes, boxes/s: {rates}")


if __name__ == "__main__":
    main()
