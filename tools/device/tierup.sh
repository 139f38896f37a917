#!/usr/bin/env bash
# Device run (2026-11-25): exit while the tier-up compiles (the warm-up of the driver's compiler),
# and Prospero frames with the single kernel. After `tools/gpu-pack`: carry .gpu.tar.xz.
set -uo pipefail
tar -xJf .gpu.tar.xz
B=.gpu/bin/ivjit
export CUDA_CACHE_DISABLE=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
M=tests/data/models/prospero.vm
t() { local l=$1; shift; local s=$EPOCHREALTIME; "$@" > /tmp/t.out 2>&1; local rc=$?; local e=$EPOCHREALTIME;
      python3 -c "import sys; print(f'{sys.argv[1]:<44} {float(sys.argv[3])-float(sys.argv[2]):7.3f} s rc={sys.argv[4]}  {sys.argv[5][:60]}')" "$l" $s $e $rc "$(grep -v '^ivjit:' /tmp/t.out | tail -1)"; }
E="eval -f $M --var x=[0.1,0.2] --var y=[0.1,0.2] --backend gpu"
for p in f64 f32; do
  export IVJIT_CACHE_DIR=/tmp/cache-$p; rm -rf $IVJIT_CACHE_DIR
  t "$p never (stages compiled into the cache)" env IVJIT_TIER_UP=never $B $E --precision $p
  t "$p now, stages from disk (exit waits)" env IVJIT_TIER_UP=now IVJIT_BATCH_TRACE=1 $B $E --precision $p
  grep "exit waits" /tmp/t.out
  t "$p warm (single kernel from disk)" $B $E --precision $p
  $B render -f $M --size 1024x1024 -o /tmp/q-$p.npy --repeat 5 --precision $p 2>&1 | grep fastest | sed "s/^/$p single: /"
done
for k in 1 2 3; do
  export IVJIT_CACHE_DIR=/tmp/cache-r$k; rm -rf $IVJIT_CACHE_DIR
  IVJIT_TIER_UP=never $B $E --precision f32 > /dev/null 2>&1
  t "f32 now, stages from disk, repeat $k" env IVJIT_TIER_UP=now $B $E --precision f32
done
.gpu/tests/gpu-* exit_during --nocapture 2>&1 | grep -E "IVJIT_TIER_UP|test result|panicked|FAIL" | tail -12
