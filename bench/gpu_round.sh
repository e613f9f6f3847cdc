#!/bin/bash
# gpu_round.sh — the GPU checks of the open issues in one job, for a session
# that has a machine with a GPU for a few minutes (run from the bundle of
# tools/gpu_bundle.sh there, with OUT set to a folder that comes back):
#
#   1. bench/gpu_split.sh 2 5: a launch's host cost split by part, and the
#      layer's own parts timed from inside (CBN_CUDA_SELFTIME);
#   2. the ResNet-18 step once under CBN_CUDA_SELFTIME (the same, per step);
#   3. bench/gpu_step.sh 3: plain, torch.profiler, cbottleneck, --no-cuda,
#      --memory, --memory --no-cuda, then torch.profiler inside the loop under
#      cbottleneck (its kernel count against plain).
#
# Each part has a time limit, so that the whole job ends within about
# 7 minutes and what is done comes back; each writes its own file in OUT.
# Usage: OUT=DIR bench/gpu_round.sh     (CBN=path/to/cbottleneck)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:?gpu_round: set OUT to a folder}
cbn=${CBN:-$here/../cbottleneck}
export CBN=$cbn PYTHONUNBUFFERED=1
mkdir -p "$out"
{
	date -u
	nvidia-smi -L
	nvidia-smi --query-gpu=driver_version --format=csv,noheader
	uname -r
	nproc
	python3 -c 'import sys, torch; print(sys.version.split()[0], torch.__version__)'
} >"$out/env.txt" 2>&1
cat "$out/env.txt"
echo "== gpu_split"
timeout 90 bash "$here/gpu_split.sh" 2 5 2>&1 | tee "$out/split.txt"
echo "== gpu_step under CBN_CUDA_SELFTIME"
timeout 40 env CBN_CUDA_SELFTIME="$out/step_self.txt" "$cbn" -q --report /dev/null -- \
	python3 "$here/gpu_step.py" --model resnet18 2>&1 | tail -n 1
cat "$out/step_self.txt" 2>/dev/null
echo "== gpu_step"
timeout 260 bash "$here/gpu_step.sh" 3 resnet18 2>&1 | tee "$out/step.txt"
