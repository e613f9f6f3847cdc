#!/bin/bash
# dist_nccl_sim — the computation/communication split (docs/distributed.md
# "Computation and communication (NCCL)") on the simulated CUPTI: one
# torchrun-style rank (RANK/LOCAL_RANK/WORLD_SIZE, no launcher of its own)
# runs compute kernels on stream 1 and NCCL's on stream 2 overlapping them by
# exact amounts, per cbn_step(); test_dist_gpu loads the session and checks
# each step's computation, overlapping and communication to the nanosecond
# (the simulation fixes every GPU op's offset) and other within its slack.
. "$(dirname "$0")/lib/common.bash"
[ "${CBN_HAVE_CUDA:-OFF}" = ON ] || skip "built without CUDA (CBN_HAVE_CUDA=${CBN_HAVE_CUDA:-OFF})"
need_cbn
W="$CBN_BUILD_DIR/tests/cuda/cuda_workload"
C="$CBN_BUILD_DIR/tests/test_dist_gpu"
need_built "$W"
need_built "$C"
export LD_LIBRARY_PATH="$CBN_BUILD_DIR/tests/fakecupti${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

RANK=0 LOCAL_RANK=0 WORLD_SIZE=1 run_cbn -F 200 -o "$T/prof" -- "$W" nccl
expect_rc 0
grep -q "cuda_workload: nccl done" "$OUTF" || fail "the workload did not finish"
grep -q "CUDA tracing unavailable" "$ERRF" && fail "CUDA tracing reported unavailable"
"$C" load "$T/prof" >"$T/check" 2>&1 || { cat "$T/check" >&2; fail "the split does not match the simulated truth"; }
cat "$T/check" >&2

# The same split in the merged report: the rank's whole run and each step,
# exact on the simulation (5 steps of 6 ms computation only, 8 ms overlap,
# 4 ms communication only).
run_cbn report --json "$T/r.json" "$T/prof"
expect_rc 0
/usr/bin/python3 - "$T/r.json" <<'PYEOF' || fail "the distributed section's split"
import json, sys
r = json.load(open(sys.argv[1]))["distributed"]["ranks"]
assert len(r) == 1 and r[0]["rank"] == 0, r
s = r[0]["split"]
assert s["source"] == "gpu" and (s["computation_ns"], s["overlap_ns"], s["communication_ns"]) == \
    (30000000, 40000000, 20000000), s
st = r[0]["step_splits"]
# After the last marker the program tears down (CUPTI's flush, exit): a
# stretch that is a step of its own when a sample lands in it (steps.md),
# which a loaded machine makes likely.  It has no GPU op: the host's split.
if len(st) == 6 and st[5]["source"] == "host":
    st = st[:5]
assert len(st) == 5 and all((x["computation_ns"], x["overlap_ns"], x["communication_ns"]) ==
                            (6000000, 8000000, 4000000) for x in st), st
PYEOF
exit 0
