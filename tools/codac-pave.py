#!/usr/bin/env python3
# The paving comparison of docs/constraints.md: Codac (pip install codac==2.1.2) on the problem
# `ivjit pave` is timed on. Usage: python3 tools/codac-pave.py 1e-2 1e-3 1e-4
# Codac 2.1.2 (PyPI) SIVIA with a separator on the inverse image (SepInverse + pave), on the
# problem of `ivjit pave 'x^2 + y^2 <= 1, y >= x^3' --box x=[-2,2] --box y=[-2,2] --eps E`.
from codac import *
import time, sys, builtins
x = VectorVar(2)
f = AnalyticFunction([x], vec(sqr(x[0]) + sqr(x[1]), x[1] - x[0]*x[0]*x[0]))
sep = SepInverse(f, IntervalVector([[-oo, 1], [0, oo]]))
X = IntervalVector([[-2, 2], [-2, 2]])
def vol(bs):
    return sum((b[0].ub()-b[0].lb())*(b[1].ub()-b[1].lb()) for b in bs)
for eps in [float(a) for a in sys.argv[1:]]:
    times = []
    for r in range(3):
        t = time.perf_counter()
        p = pave(X, sep, eps)
        times.append(time.perf_counter() - t)
    ins = p.boxes(PavingInOut.inner); bnd = p.boxes(PavingInOut.bound)
    print(f"codac eps {eps}: {builtins.min(times)*1e3:.1f} ms (best of 3); inner {len(ins)} boxes vol {vol(ins):.6f}; boundary {len(bnd)} boxes vol {vol(bnd):.6f}")
