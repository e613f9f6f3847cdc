#!/bin/bash
# cuda_nocuda — a program that never calls CUDA pays nothing for the CUDA
# layer: the driver never loads it, so the report has no CUDA section at all.
. "$(dirname "$0")/lib/common.bash"
[ "${CBN_HAVE_CUDA:-OFF}" = ON ] || skip "built without CUDA (CBN_HAVE_CUDA=${CBN_HAVE_CUDA:-OFF})"
need_cbn
W="$CBN_BUILD_DIR/tests/cuda/cuda_workload"
need_built "$W"
export LD_LIBRARY_PATH="$CBN_BUILD_DIR/tests/fakecupti${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

run_cbn -F 500 --json "$T/r.json" -- "$W" nocuda
expect_rc 0
[ "$(json_py "$T/r.json" '"cuda" in d')" = False ] || fail "a program without CUDA got a CUDA section"
grep -q "CUDA" "$OUTF" && fail "the text report mentions CUDA for a program without CUDA"
[ "$(json_func_field "$T/r.json" host_work self_ns)" -gt 0 ] || fail "host_work missing from the CPU table"

# Not even loaded: the session's module records never name the layer, while a
# CUDA run's do (the positive control keeps this check honest).
run_cbn -o "$T/nocuda" -- "$W" nocuda
expect_rc 0
run_cbn -o "$T/withcuda" -- "$W" nosync
expect_rc 0
grep -aq "libcbottleneck_cuda.so" "$T"/withcuda/*.cbp || fail "control: the CUDA run's modules do not name libcbottleneck_cuda.so"
grep -aq "libcbottleneck_cuda.so" "$T"/nocuda/*.cbp && fail "libcbottleneck_cuda.so was loaded into a program without CUDA"
exit 0
