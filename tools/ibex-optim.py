#!/usr/bin/env python3
# Runs `ivjit minimize -f PROBLEM.bch` on IBEX's optimization benchmarks (a folder of Minibex
# files, e.g. benchs/optim/easy of https://github.com/ibex-team/ibex-lib) and prints one
# Markdown row per problem: the enclosure, how the search stopped, boxes and time.
# Usage: python3 tools/ibex-optim.py DIR [path/to/ivjit] [--max-boxes N] [--timeout S] [--tol T]
import argparse, glob, os, re, subprocess, time

ap = argparse.ArgumentParser()
ap.add_argument("dir")
ap.add_argument("ivjit", nargs="?", default="target/release/ivjit")
ap.add_argument("--max-boxes", default="1000000")
ap.add_argument("--timeout", type=float, default=10.0)
ap.add_argument("--tol", default="1e-4")
ap.add_argument("--backend", default="cpu")
a = ap.parse_args()

print("| problem | vars | constraints | enclosure of the minimum | stopped | boxes | time |")
print("|---|---|---|---|---|---|---|")
for path in sorted(glob.glob(os.path.join(a.dir, "*.bch"))):
    name = os.path.basename(path)[:-4]
    text = open(path).read()
    nvars = len(re.findall(r"\bin\s*\[", text.split("minimize")[0])) if "minimize" in text else 0
    ncons = text.split("constraints")[-1].count(";") if "constraints" in text.lower() else 0
    args = [a.ivjit, "minimize", "-f", path, "--backend", a.backend, "--max-boxes", a.max_boxes,
            "--tol", a.tol, "--format", "json"]
    t = time.perf_counter()
    try:
        r = subprocess.run(args, capture_output=True, text=True, timeout=a.timeout)
        secs = time.perf_counter() - t
        if r.returncode != 0:
            msg = (r.stderr.strip().splitlines() or ["?"])[-1][:80]
            print(f"| {name} | {nvars} | {ncons} | not read: {msg} | — | — | — |")
            continue
        import json
        d = json.loads(r.stdout)
        print(f"| {name} | {nvars} | {ncons} | [{d['lower']}, {d['upper']}] | {d['stopped']} | "
              f"{d['boxes']:,} | {secs:.2f} s |", flush=True)
    except subprocess.TimeoutExpired:
        print(f"| {name} | {nvars} | {ncons} | — | timeout ({a.timeout:g} s) | — | — |", flush=True)
