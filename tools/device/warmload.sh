#!/usr/bin/env bash
# Device run (2026-11-25): Prospero's compile from an empty and from a warm disk cache, the parse
# timed apart (issue 14's "first result <= 1 s after parsing", "<= 50 ms warm"). After
# `tools/gpu-pack`: carry .gpu.tar.xz, command `bash tools/device/warmload.sh`.
set -uo pipefail
tar -xJf .gpu.tar.xz
B=.gpu/bin/ivjit
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export CUDA_CACHE_DISABLE=1 IVJIT_CACHE_DIR=/tmp/cache-warm
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
rm -rf $IVJIT_CACHE_DIR
for k in 1 2 3; do
  timeout 150 $B bench --backend gpu --only prospero --seed 7 --json --boxes 1048576 > $OUT/b$k.json 2>/dev/null
  echo "bench $k rc=$?"
  F=$OUT/b$k.json python3 - <<'PY'
import json,os
for r in json.load(open(os.environ["F"]))["rows"]:
    c, p = r["cold_compile_ms"], r["parse_ms"]
    print(f'prospero {r["precision"]}: parse {p:7.1f} ms, then loaded {c - p:7.1f} ms after it (cold total {c:7.1f}); stages {r.get("stages")}')
PY
done
