#!/usr/bin/env bash
# Device run (2026-11-25): programs compiled as stages, and the tier-up (issue 14, compile time).
# Run on the GPU machine after `tools/gpu-pack`: carry .gpu.tar.xz, command `bash tools/device/staged.sh`.
# CUDA_CACHE_DISABLE=1 throughout: the driver's own JIT cache (~/.nv/ComputeCache) would
# otherwise make a second compile of the same PTX look cold when it is not.
set -uo pipefail
tar -xJf .gpu.tar.xz
B=.gpu/bin/ivjit
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export CUDA_CACHE_DISABLE=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
M=tests/data/models/prospero.vm
# t LABEL CMD...: wall time of one process, its exit status and the last line it printed.
t() { local l=$1; shift; local s=$EPOCHREALTIME; "$@" > /tmp/t.out 2>&1; local rc=$?; local e=$EPOCHREALTIME;
      python3 -c "import sys; print(f'{sys.argv[1]:<44} {float(sys.argv[3])-float(sys.argv[2]):7.3f} s rc={sys.argv[4]}  {sys.argv[5][:60]}')" "$l" $s $e $rc "$(grep -v '^ivjit:' /tmp/t.out | tail -1)"; }
E="eval -f $M --var x=[0.1,0.2] --var y=[0.1,0.2] --backend gpu"
echo "== prospero: one box, a new process each"
t "parse and one CPU box (no GPU work)" $B eval -f $M --var x=[0.1,0.2] --var y=[0.1,0.2] --backend cpu
t "GPU context only (x + y)" $B eval 'x + y' --var x=1 --var y=2 --backend gpu
for s in 250 1000 500; do
  export IVJIT_CACHE_DIR=/tmp/cache-s$s; rm -rf $IVJIT_CACHE_DIR
  t "f64 cold, stages of $s" env IVJIT_STAGE_INSTS=$s $B $E
done
for p in f64 f32; do
  export IVJIT_CACHE_DIR=/tmp/cache-$p; rm -rf $IVJIT_CACHE_DIR
  t "$p cold, empty cache (stages)" $B $E --precision $p
  t "$p warm (stages from disk)" $B $E --precision $p
  $B render -f $M --size 1024x1024 -o /tmp/p-$p.npy --repeat 5 --precision $p 2>&1 | grep fastest | sed "s/^/$p stages: /"
  t "$p IVJIT_TIER_UP=now (exit waits for it)" env IVJIT_TIER_UP=now IVJIT_BATCH_TRACE=1 $B $E --precision $p
  grep "exit waits" /tmp/t.out
  t "$p warm (single kernel from disk)" $B $E --precision $p
  $B render -f $M --size 1024x1024 -o /tmp/q-$p.npy --repeat 5 --precision $p 2>&1 | grep fastest | sed "s/^/$p single: /"
  cmp /tmp/p-$p.npy /tmp/q-$p.npy && echo "$p render: stages and single kernel give the same classes"
done
echo "== bench: prospero and generated, empty disk cache, then the same cache warm"
export IVJIT_CACHE_DIR=/tmp/cache-bench; rm -rf $IVJIT_CACHE_DIR
for k in 1 2; do
timeout 200 $B bench --backend gpu --only generated,prospero --seed 7 --json > $OUT/bench$k.json 2> $OUT/bench$k.err
echo "bench $k rc=$?"
OUTK=$OUT/bench$k.json python3 - <<'PY'
import json,os
d=json.load(open(os.environ["OUTK"]))
for r in d.get("rows",[]):
    print(f'{r["name"]:<10}{r["precision"]} kernel {r["kernel_ms"]:8.2f} ms  cold {r["cold_compile_ms"]:7.1f} ms  stages {r.get("stages")} {r.get("staged_kernel_ms") or 0:7.2f} ms  single compile {r.get("single_kernel_compile_s") or 0:6.2f} s')
PY
done
echo "== tests"
unset IVJIT_CACHE_DIR
timeout 280 .gpu/run-tests 2>&1 | tail -12
