#!/usr/bin/env python3
# Runs `ivjit solve -f PROBLEM.bch` and, where given, IBEX's `ibexsolve` (same eps, same
# timeout) on IBEX's solver benchmarks (Minibex files, e.g. benchs/solver of
# https://github.com/ibex-team/ibex-lib) and prints one Markdown row per problem: solutions
# proven unique, boxes left undecided (IBEX: unknown + pending), whole-process wall time;
# and, where both finish, how many of ibexsolve's solution boxes meet none of ivjit's solution
# or undecided boxes (every solution lies in one of ivjit's boxes, so a nonzero count is a bug
# in one of the two; ibexsolve may report one zero in several boxes, ivjit in one).
# Usage: python3 tools/ibex-solve.py FILE.bch... [--ivjit path] [--ibexsolve path]
#        [--eps 1e-8] [--timeout 30] [--max-boxes N]
import argparse, json, os, re, subprocess, tempfile, time

ap = argparse.ArgumentParser()
ap.add_argument("files", nargs="+")
ap.add_argument("--ivjit", default="target/release/ivjit")
ap.add_argument("--ibexsolve", default=None)
ap.add_argument("--eps", default="1e-8")
ap.add_argument("--timeout", type=float, default=30.0)
ap.add_argument("--max-boxes", default="100000000")
a = ap.parse_args()


def run(args, cwd=None, grace=0.0):
    t = time.perf_counter()
    try:
        r = subprocess.run(args, capture_output=True, text=True, timeout=a.timeout + grace,
                           cwd=cwd)
        return r, time.perf_counter() - t
    except subprocess.TimeoutExpired:
        return None, a.timeout


def boxes_of(rows):
    return [[(float(lo), float(hi)) for lo, hi in b] for b in rows]


def ivjit(path):
    """The row's cells, and the solution and undecided boxes (None where it did not finish)."""
    r, secs = run([a.ivjit, "solve", "-f", path, "--backend", "cpu", "--eps", a.eps,
                   "--max-boxes", a.max_boxes, "--format", "json"])
    if r is None:
        return (f"timeout ({a.timeout:g} s)", "", ""), None
    if r.returncode != 0:
        return ("error: " + (r.stderr.strip().splitlines() or ["?"])[-1][:60], "", ""), None
    d = json.loads(r.stdout)
    und = len(d["undecided"])
    note = "" if d["complete"] else " (budget)"
    found = boxes_of(d["solutions"]) + boxes_of(d["undecided"]) if d["complete"] else None
    return (str(len(d["solutions"])), f"{und}{note}", f"{secs:.2f} s"), found


def ibex(path):
    """The row's cells, and the solution boxes (None where it did not finish)."""
    with tempfile.TemporaryDirectory() as tmp:
        r, secs = run([a.ibexsolve, "-e", a.eps, "-t", str(a.timeout), "-s", "-o",
                       os.path.join(tmp, "out.cov"), os.path.abspath(path)], cwd=tmp, grace=5)
    if r is None:
        return (f"timeout ({a.timeout:g} s)", "", ""), None
    out = re.sub(r"\x1b\[[0-9;]*m", "", r.stdout + r.stderr)
    sols = [[tuple(float(v) for v in side.strip()[1:-1].split(",")) for side in m[1].split(";")]
            for m in re.finditer(r"solution n°\d+ = \((.*)\)", out)]
    num = lambda key: (re.search(key + r":\s*(\S+)", out) or [None, "?"])[1]
    sol = num("number of solution boxes").replace("--", "0")
    und = sum(int(x) for x in (num("number of unknown boxes"), num("number of pending boxes"))
              if x.isdigit())
    timed_out = "time limit" in out
    cells = (sol, f"{und}{' (timeout)' if timed_out else ''}", f"{secs:.2f} s")
    return cells, (None if timed_out else sols)


def meet(a, b):
    return all(max(x[0], y[0]) <= min(x[1], y[1]) for x, y in zip(a, b))


head = "| problem | vars | ivjit solutions | undecided | time |"
sep = "|---|---|---|---|---|"
if a.ibexsolve:
    head += " ibexsolve solutions | unknown + pending | time | ibexsolve's outside ivjit's |"
    sep += "---|---|---|---|"
print(head)
print(sep)
for path in a.files:
    name = os.path.basename(path)[:-4]
    r = subprocess.run([a.ivjit, "solve", "-f", path, "--max-boxes", "0", "--format", "json"],
                       capture_output=True, text=True)
    nvars = len(json.loads(r.stdout)["vars"]) if r.returncode == 0 else "?"
    cells, ours = ivjit(path)
    row = f"| {name} | {nvars} | " + " | ".join(cells) + " |"
    if a.ibexsolve:
        cells, theirs = ibex(path)
        row += " " + " | ".join(cells) + " |"
        if ours is None or theirs is None:
            row += " — |"
        else:
            outside = sum(not any(meet(b, o) for o in ours) for b in theirs)
            row += f" {outside} |" if outside == 0 else f" **{outside}** |"
    print(row, flush=True)
