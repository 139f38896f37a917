#!/usr/bin/env python3
# The compile-time row of docs/constraints.md: `ivjit contract` on N constraints over 20
# variables, x_a * x_b + x_c^2 - sin(x_d) + k/1000 in [-1, 1] for k = 0..N-1 (a, b, c, d
# spread over the variables), whole process, best of 3; and the same with one constraint, so
# that the difference is the compile of the N-constraint contractor.
# Usage: python3 tools/contract-compile.py [path/to/ivjit] [N]
import subprocess, sys, time

IVJIT = sys.argv[1] if len(sys.argv) > 1 else "target/release/ivjit"
N = int(sys.argv[2]) if len(sys.argv) > 2 else 500
V = 20

def constraints(n):
    out = []
    for k in range(n):
        a, b, c, d = k % V, (7 * k + 3) % V, (11 * k + 5) % V, (13 * k + 1) % V
        out.append(f"x{a} * x{b} + x{c}^2 - sin(x{d}) + {k}/1000 in [-1, 1]")
    return ", ".join(out)

def best(n):
    args = [IVJIT, "contract", constraints(n), "--backend", "cpu", "--sweeps", "1"]
    used = sorted({int(t[1:]) for t in constraints(n).replace("*", " ").replace("^", " ").replace("(", " ").replace(")", " ").split() if t.startswith("x") and t[1:].isdigit()})
    for v in used:
        args += ["--box", f"x{v}=[-2,2]"]
    times = []
    for _ in range(3):
        t = time.perf_counter()
        subprocess.run(args, capture_output=True, text=True, check=True)
        times.append(time.perf_counter() - t)
    return min(times)

one, many = best(1), best(N)
print(f"ivjit contract, whole process, best of 3: 1 constraint {one * 1e3:.0f} ms, "
      f"{N} constraints {many * 1e3:.0f} ms (difference {(many - one) * 1e3:.0f} ms)")
