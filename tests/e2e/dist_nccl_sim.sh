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
exit 0
