#!/usr/bin/env bash
# Device run (2026-11-25): gradients on the GPU (issue 16's first slice) and the whole suite.
# After `tools/gpu-pack`: carry .gpu.tar.xz, command `bash tools/device/gradient.sh`.
set -uo pipefail
tar -xJf .gpu.tar.xz
B=.gpu/bin/ivjit
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
export IVJIT_CACHE_DIR=/tmp/cache-grad
for g in "" --gradient; do
  timeout 120 $B bench --backend gpu --only tangle,rosenbrock10,trig --seed 7 $g --json > $OUT/bench$g.json 2>/dev/null
  F=$OUT/bench$g.json python3 - <<'PY'
import json,os
d=json.load(open(os.environ["F"]))
for r in d.get("rows",[]):
    print(f'{r["name"]:<18}{r["precision"]} kernel {r["kernel_ms"]:8.4f} ms  {r.get("bytes_per_box")} B/box  %copy {100*r.get("copy_fraction",0):5.1f}  ops/box {r.get("rounded_ops_per_box")}')
PY
done
$B eval 'x^4 - 5*x^2 + y*sin(z)' --var 'x=[1,2]' --var 'y=[0,1]' --var 'z=0.5' --gradient --backend gpu
unset IVJIT_CACHE_DIR
timeout 330 .gpu/run-tests 2>&1 | tail -12
