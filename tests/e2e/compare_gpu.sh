# compare_gpu.sh — GPU gates of `cbottleneck compare` on real reports of the
# simulated-CUPTI workload (tests/cuda): exact kernel/copy/API counts pass
# between two identical runs and fail when the kernel count grows; a GPU gate on
# a run without CUDA exits 3; against a CPU-only baseline it is a usage error (2).
. "$(dirname "$0")/lib/common.bash"
[ "${CBN_HAVE_CUDA:-OFF}" = ON ] || skip "built without CUDA (CBN_HAVE_CUDA=${CBN_HAVE_CUDA:-OFF})"
need_cbn
W="$CBN_BUILD_DIR/tests/cuda/cuda_workload"
need_built "$W"
export LD_LIBRARY_PATH="$CBN_BUILD_DIR/tests/fakecupti${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
run_cbn compare --help
[ "$RC" = 0 ] || fail "'cbottleneck compare --help' failed (exit $RC)"

profile()
{
	run_cbn -q --json "$1" -- "$W" "$2"
	[ "$RC" = 0 ] && [ -s "$1" ] || fail "profiling 'cuda_workload $2' failed (exit $RC)"
}
profile "$T/main1.json" main
profile "$T/main2.json" main
profile "$T/nosync.json" nosync # CUDA traced, no kernels
profile "$T/nocuda.json" nocuda # never touches CUDA: no cuda object
[ "$(json_py "$T/main1.json" '"cuda" in d')" = True ] || fail "the simulated run has no cuda object"

# Identical workloads: the exact counts agree.
run_cbn compare --fail 'gpu.kernels:+0' --fail 'kernel[kernelA*].calls:+0' \
	--fail 'gpu.memcpy_bytes:+0' --fail 'api[*].calls:+0' --fail 'gpu.memcpys:+0' \
	--warn 'kernel[*].total:+10%,>=1ms' "$T/main1.json" "$T/main2.json"
expect_rc 0
grep_out '^gpu\.kernels .* exact +ok$'
grep_out '^kernel\[kernelA\(float\*, int\)\]\.calls .* ok$'
grep_out '^PASS: 0 regressions'

# More kernels than the baseline: exact counts fail at once, no noise margin.
run_cbn compare --fail 'gpu.kernels:+0' --fail 'gpu.memcpy_bytes:+0' "$T/nosync.json" \
	"$T/main1.json"
expect_rc 1
grep_out '^gpu\.kernels .*FAIL$'
grep_out '^FAIL: 2 regressions'
# ... and a "must not drop" gate catches the opposite move.
run_cbn compare --fail 'gpu.kernels:-0' "$T/main1.json" "$T/nosync.json"
expect_rc 1

# Current run without CUDA: could not measure.
run_cbn compare --fail 'gpu.kernels:+0' --fail 'kernel[kernelA*].calls:+0' "$T/main1.json" \
	"$T/nocuda.json"
expect_rc 3
grep_out '^gpu\.kernels .*n/a$'
grep_out 'no CUDA data'
# Baseline without CUDA, current with: the gate is misconfigured.
run_cbn compare --fail 'gpu.kernels:+0' "$T/nocuda.json" "$T/main1.json"
expect_rc 2
grep -q 'baseline' "$ERRF" || fail "the message does not blame the baseline"
exit 0
