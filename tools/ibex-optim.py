#!/usr/bin/env python3
# Runs `ivjit minimize -f PROBLEM.bch` on IBEX's optimization benchmarks (a folder of Minibex
# files, e.g. benchs/optim/easy of https://github.com/ibex-team/ibex-lib) and prints one
# Markdown row per problem: the enclosure, how the search stopped, boxes and time. With
# --ibexopt, also IBEX's `ibexopt` on the same file (same absolute tolerance, equality
# relaxation and timeout): its enclosure f* in [lo, hi], its time, and whether the two
# certified enclosures intersect (both hold the minimum, so they must: "no" is a bug in one).
# Usage: python3 tools/ibex-optim.py DIR [path/to/ivjit] [--max-boxes N] [--timeout S]
#        [--tol T] [--eq-tol E] [--ibexopt path]
import argparse, glob, json, os, re, subprocess, tempfile, time

ap = argparse.ArgumentParser()
ap.add_argument("dir")
ap.add_argument("ivjit", nargs="?", default="target/release/ivjit")
ap.add_argument("--max-boxes", default="1000000")
ap.add_argument("--timeout", type=float, default=10.0)
ap.add_argument("--tol", default="1e-4")
ap.add_argument("--eq-tol", default="1e-6")
ap.add_argument("--backend", default="cpu")
ap.add_argument("--ibexopt", default=None)
a = ap.parse_args()


def ibexopt(path):
    """(lo, hi, seconds) of ibexopt's enclosure, or None on a timeout or failure."""
    with tempfile.TemporaryDirectory() as tmp:
        args = [a.ibexopt, "-a", a.tol, "-r", "0", "--eps-h", a.eq_tol, "-t", str(a.timeout),
                "-o", os.path.join(tmp, "out.cov"), os.path.abspath(path)]
        t = time.perf_counter()
        try:
            r = subprocess.run(args, capture_output=True, text=True, timeout=a.timeout + 5,
                               cwd=tmp)
        except subprocess.TimeoutExpired:
            return None
        secs = time.perf_counter() - t
    out = re.sub(r"\x1b\[[0-9;]*m", "", r.stdout + r.stderr)
    m = re.search(r"f\* in\s*\[([^,\]]+),([^\]]+)\]", out)
    if not m:
        return ("infeasible" if "infeasible" in out else "—"), None, secs, out
    conv = lambda s: float(s.replace("+oo", "inf").replace("-oo", "-inf"))
    status = "time limit" if "time limit" in out else "ok"
    return conv(m[1]), conv(m[2]), secs, status


head = "| problem | vars | constraints | enclosure of the minimum | stopped | boxes | time |"
sep = "|---|---|---|---|---|---|---|"
if a.ibexopt:
    head += " ibexopt f* | ibexopt time | intersect |"
    sep += "---|---|---|"
print(head)
print(sep)
for path in sorted(glob.glob(os.path.join(a.dir, "*.bch"))):
    name = os.path.basename(path)[:-4]
    text = open(path).read()
    nvars = len(re.findall(r"\bin\s*\[", text.split("minimize")[0])) if "minimize" in text else 0
    ncons = text.split("constraints")[-1].count(";") if "constraints" in text.lower() else 0
    args = [a.ivjit, "minimize", "-f", path, "--backend", a.backend, "--max-boxes", a.max_boxes,
            "--tol", a.tol, "--eq-tol", a.eq_tol, "--format", "json"]
    t = time.perf_counter()
    ours = None
    try:
        r = subprocess.run(args, capture_output=True, text=True, timeout=a.timeout)
        secs = time.perf_counter() - t
        if r.returncode != 0:
            msg = (r.stderr.strip().splitlines() or ["?"])[-1][:80]
            row = f"| {name} | {nvars} | {ncons} | not read: {msg} | — | — | — |"
        else:
            d = json.loads(r.stdout)
            ours = (float(d["lower"]), float(d["upper"]))
            row = (f"| {name} | {nvars} | {ncons} | [{d['lower']}, {d['upper']}] | "
                   f"{d['stopped']} | {d['boxes']:,} | {secs:.2f} s |")
    except subprocess.TimeoutExpired:
        row = f"| {name} | {nvars} | {ncons} | — | timeout ({a.timeout:g} s) | — | — |"
    if a.ibexopt:
        ib = ibexopt(path)
        if ib is None:
            row += f" timeout | — | — |"
        elif ib[1] is None:
            row += f" {ib[0]} | {ib[2]:.2f} s | — |"
        else:
            lo, hi, s, status = ib
            meet = "—" if ours is None else ("yes" if max(lo, ours[0]) <= min(hi, ours[1])
                                              else "**no**")
            note = " (time limit)" if status == "time limit" else ""
            row += f" [{lo:.10g}, {hi:.10g}]{note} | {s:.2f} s | {meet} |"
    print(row, flush=True)
