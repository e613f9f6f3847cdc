#!/bin/bash
# gpu_ops.sh — the real-GPU check of the operator table (issue 23 item 7): one
# PyTorch training loop (bench/gpu_ops.py) under torch.profiler and under
# cbottleneck (the same measured steps: --capture-range cudaProfilerApi), then
# every operator torch.profiler gave GPU time must be in cbottleneck's table
# with the same launches and a CUDA total and self CUDA within 1 %.  Not part
# of ctest (needs a GPU and PyTorch).
#
# Needs only the NVIDIA driver, PyTorch and cbottleneck; on a machine without
# the project's build dependencies use the bundle of tools/gpu_bundle.sh
# (CBN=DIR/cbottleneck, or DIR/bench/gpu_ops.sh).  Files land in OUT.
# Exit status: 0 all operators agree, 1 some differ (the table says which),
# 2 no cbottleneck, 77 no GPU.
#
# Usage: bench/gpu_ops.sh [OUT]    (CBN=path/to/cbottleneck, PYTHON=python3)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-/tmp/gpu_ops}
cbn=${CBN:-$here/../build/cbottleneck}
py=${PYTHON:-python3}
[ -x "$cbn" ] || { echo "gpu_ops: no cbottleneck at $cbn (CBN=...)" >&2; exit 2; }
"$py" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null ||
	{ echo "gpu_ops: no usable GPU for PyTorch" >&2; exit 77; }
mkdir -p "$out"
export CBN_SYMCACHE_DIR=${CBN_SYMCACHE_DIR:-$out/symcache}

"$py" "$here/gpu_ops.py" torch "$out/torch.json" || exit 1
# Python stacks are deep: the whole stack, so the outer operators are on it
"$cbn" -q --depth 256 --capture-range cudaProfilerApi --json "$out/cbn.json" \
	--report "$out/cbn.txt" -- "$py" "$here/gpu_ops.py" run || exit 1
"$py" "$here/gpu_ops.py" compare "$out/torch.json" "$out/cbn.json" | tee "$out/compare.txt"
rc=${PIPESTATUS[0]}
sed -n '/^Operators, autograd-style/,/^$/p' "$out/cbn.txt"
exit "$rc"
