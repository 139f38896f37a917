#!/usr/bin/env python3
# The paving comparison of docs/constraints.md: Codac (pip install codac==2.1.2; SepInverse and
# pave, best of 3 in process) against `ivjit pave` (the whole process, compile included, best of
# 3) on five problems, each at one eps. Usage: python3 tools/codac-pave.py [path/to/ivjit]
# With --codac-only, Codac's rows alone (on the GPU machine, whose Python reaches no registry:
# the codac wheel for its Python unpacked into a folder on PYTHONPATH; `ivjit bench --search
# --only pave` gives ivjit's in-process times there).
import builtins, math, subprocess, sys, time
from codac import *

ARGS = [a for a in sys.argv[1:] if a != "--codac-only"]
CODAC_ONLY = "--codac-only" in sys.argv[1:]
IVJIT = ARGS[0] if ARGS else "target/release/ivjit"

def half_planes(x):
    return [math.cos(2 * math.pi * k / 12) * x[0] + math.sin(2 * math.pi * k / 12) * x[1] for k in range(12)]

# name, dims, root side, eps, ivjit constraints, Codac functions (of x), Codac ranges
PROBLEMS = [
    ("disk and cubic (2-D, polynomial)", 2, 2.0, 1e-3,
     "x^2 + y^2 <= 1, y >= x^3",
     lambda x: [sqr(x[0]) + sqr(x[1]), x[1] - x[0] * x[0] * x[0]],
     [[-oo, 1], [0, oo]]),
    ("annulus, rational (2-D)", 2, 3.0, 1e-3,
     "x^2 + y^2 in [1, 4], x / (1 + y^2) in [-0.5, 1]",
     lambda x: [sqr(x[0]) + sqr(x[1]), x[0] / (1 + sqr(x[1]))],
     [[1, 4], [-0.5, 1]]),
    ("ball and half-space (3-D, polynomial)", 3, 2.0, 2e-2,
     "x^2 + y^2 + z^2 <= 1, x + y + z >= 0.5",
     lambda x: [sqr(x[0]) + sqr(x[1]) + sqr(x[2]), x[0] + x[1] + x[2]],
     [[-oo, 1], [0.5, oo]]),
    ("trigonometric (2-D)", 2, 4.0, 2e-3,
     "sin(x) + cos(y) >= 0.5, x^2 + y^2 <= 9",
     lambda x: [sin(x[0]) + cos(x[1]), sqr(x[0]) + sqr(x[1])],
     [[0.5, oo], [-oo, 9]]),
    ("12 half-planes (2-D, 12 constraints)", 2, 2.0, 1e-3,
     ", ".join(f"{math.cos(2 * math.pi * k / 12)!r}*x + {math.sin(2 * math.pi * k / 12)!r}*y <= 1" for k in range(12)),
     half_planes,
     [[-oo, 1]] * 12),
]

def vol(bs):
    v = 0.0
    for b in bs:
        p = 1.0
        for i in range(b.size()):
            p *= b[i].ub() - b[i].lb()
        v += p
    return v

for name, n, side, eps, text, fs, ranges in PROBLEMS:
    x = VectorVar(n)
    if len(ranges) <= 10:
        sep = SepInverse(AnalyticFunction([x], vec(*fs(x))), IntervalVector(ranges))
    else:
        # (Codac's vec takes at most 10 components: the intersection of one separator each.)
        seps = [SepInverse(AnalyticFunction([x], g), Interval(*r)) for g, r in zip(fs(x), ranges)]
        sep = seps[0]
        for s2 in seps[1:]:
            sep = sep & s2
    X = IntervalVector([[-side, side]] * n)
    times = []
    for _ in range(3):
        t = time.perf_counter()
        p = pave(X, sep, eps)
        times.append(time.perf_counter() - t)
    ins, bnd = p.boxes(PavingInOut.inner), p.boxes(PavingInOut.bound)
    if CODAC_ONLY:
        print(f"| {name} | {eps:g} | {len(ins)} + {len(bnd)} = {len(ins) + len(bnd)} | "
              f"{vol(bnd):.3g} | {builtins.min(times) * 1e3:.1f} ms |", flush=True)
        continue
    names = ["x", "y", "z"][:n]
    args = [IVJIT, "pave", text, "--eps", repr(eps), "--backend", "cpu"]
    for v in names:
        args += ["--box", f"{v}=[{-side},{side}]"]
    itimes = []
    for _ in range(3):
        t = time.perf_counter()
        out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
        itimes.append(time.perf_counter() - t)
    lines = dict(l.split(":", 1) for l in out.strip().splitlines() if ":" in l)
    count = lambda k: int(lines[k].split()[0])
    volume = lambda k: float(lines[k].split("volume")[1])
    print(f"| {name} | {eps:g} | {len(ins)} + {len(bnd)} = {len(ins) + len(bnd)} | "
          f"{count('inner')} + {count('boundary')} = {count('inner') + count('boundary')} | "
          f"{vol(bnd):.3g} | {volume('boundary'):.3g} | {builtins.min(times) * 1e3:.0f} ms | "
          f"{builtins.min(itimes) * 1e3:.0f} ms |", flush=True)
