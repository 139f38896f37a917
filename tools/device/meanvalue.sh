#!/usr/bin/env bash
# Device run (2026-11-25): the mean-value form on the GPU (issue 16). After `tools/gpu-pack`:
# carry .gpu.tar.xz, command `bash tools/device/meanvalue.sh`.
set -uo pipefail
tar -xJf .gpu.tar.xz
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
export IVJIT_REQUIRE_GPU=1 CARGO_MANIFEST_DIR=$PWD
.gpu/tests/gpu-* gradients_equal --nocapture 2>&1 | grep -E "mismatches|test result|panicked"
O=.gpu/bin/optimize
echo "== demos, natural extension, GPU"
timeout 120 $O --backend gpu --max-boxes 100000000 2>&1 | grep -E "^[A-Z]|minimum in|boxes in|known"
echo "== demos, mean-value form, GPU"
timeout 120 $O --backend gpu --mean-value --max-boxes 100000000 2>&1 | grep -E "^[A-Z]|minimum in|boxes in|known"
echo "== table, mean-value form, GPU then CPU (16 cores)"
timeout 200 $O table --mean-value --max-boxes 20000000 2>&1 | tail -24
