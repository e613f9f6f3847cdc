#!/bin/bash
# cuda_devices — one GPU used by two processes is one GPU: the header says
# "x1", and JSON cuda.gpus[] lists it once, with its UUID and 2 processes.
. "$(dirname "$0")/lib/common.bash"
need_fakecupti cuda_workload
W="$CBN_BUILD_DIR/tests/cuda/cuda_workload"

run_cbn --json "$T/r.json" -- sh -c "'$W' main >/dev/null && '$W' main >/dev/null"
expect_rc 0
# two lines, or one when both said the same (folded: "... 2 processes in all)")
lines=$(grep -c '^CUDA: pid [0-9]* (cuda_workload): traced' "$OUTF")
[ "$lines" = 2 ] || { [ "$lines" = 1 ] && grep -q '^CUDA: pid [0-9]* (cuda_workload): traced.*(the same in pid [0-9]*: 2 processes in all)$' "$OUTF"; } ||
	fail "two traced processes expected"
grep_out '^  CUDA: .*; NVIDIA H100 80GB HBM3 \(simulated\) x1$'
python3 - "$T/r.json" <<'PY' || fail "cuda.gpus"
import json, sys
g = json.load(open(sys.argv[1]))["cuda"]["gpus"]
assert len(g) == 1, g
assert g[0]["uuid"] == "GPU-8e2a3f1c-5510-4b7d-9a01-c36e2f88145b", g
assert g[0]["processes"] == 2 and g[0]["sm_count"] == 132, g
PY
exit 0
