#!/usr/bin/env bash
# The GPU checks the eighth session (2026-11-25) could not run; the ninth session ran them
# (all passed: docs/gpu-runs.md, ninth session, run 1). Kept as the way to re-run them: after
# `tools/gpu-pack`, carry .gpu.tar.xz, command `bash tools/device/pending.sh`. Prints a summary
# last.
set -uo pipefail
tar -xJf .gpu.tar.xz
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
export IVJIT_REQUIRE_GPU=1 CARGO_MANIFEST_DIR=$PWD INSTA_UPDATE=no
T=$(ls .gpu/tests/gpu-* | grep -v '\.d$' | head -1)
echo "== interval Newton, the gradient's branch and bound, the forms: GPU against CPU"
timeout 300 $T newton_isolation gradient_branch gradients_equal --nocapture 2>&1 \
  | grep -E "^test |mismatches|test result|panicked" | tee /tmp/pending-tests.txt
echo "== roots demos on the GPU"
timeout 60 .gpu/bin/roots --backend gpu 2>&1 | grep -E "= 0 for|clusters;|not proven" | cut -c1-160
echo "== bench --render on the GPU (pruned rows on the CPU)"
timeout 400 .gpu/bin/ivjit bench --render --backend gpu 2>&1 | tail -9
echo "== summary"
grep -E "test result" /tmp/pending-tests.txt
