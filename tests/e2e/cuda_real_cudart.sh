#!/bin/bash
# cuda_real_cudart — the REAL CUDA runtime and CUPTI under cbottleneck.  On a
# machine without an NVIDIA driver (CI) cudaGetDeviceCount fails and the
# driver never calls the injection: the program must still run, keep its exit
# status (3) and get a CPU profile, with a note that the runtime was loaded but
# CUDA never initialized for tracing.  With a driver the layer must start.
. "$(dirname "$0")/lib/common.bash"
[ "${CBN_HAVE_CUDA:-OFF}" = ON ] || skip "built without CUDA (CBN_HAVE_CUDA=${CBN_HAVE_CUDA:-OFF})"
need_cbn
P="$CBN_BUILD_DIR/tests/cuda/cudart_probe"
[ "${CBN_HAVE_CUDART:-OFF}" = ON ] || skip "no libcudart under the CUDA toolkit: cudart_probe is not built"
need_built "$P"

run_cbn -F 500 --json "$T/r.json" -- "$P"
expect_rc 3
grep -q "cudart_probe: cudaGetDeviceCount -> " "$OUTF" || fail "the probe did not run"
[ "$(json_func_field "$T/r.json" probe_spin self_ns)" -gt 0 ] || fail "probe_spin missing from the CPU table"
if grep -q "cudaGetDeviceCount -> 0 " "$OUTF"; then
	note "a CUDA driver is present: the layer must have started"
	[ "$(json_get "$T/r.json" 'cuda.status[0].state')" = finished ] || fail "CUDA layer did not finish"
	grep -q "never initialized for tracing" "$OUTF" && fail "a traced process got the never-initialized note"
else
	note "no usable driver: $(grep -o 'cudaGetDeviceCount -> .*' "$OUTF")"
	[ "$(json_py "$T/r.json" '[s["state"] for s in d.get("cuda", {}).get("status", [])]')" = "[]" ] ||
		fail "the injection ran although the driver could not initialize"
	# The module list shows libcudart mapped although no status was recorded:
	# the note says so whether or not a sample happened to land in libcudart.
	pid=$(json_get "$T/r.json" 'processes[0].pid')
	note="CUDA: cudart_probe (pid $pid) loaded the CUDA runtime but CUDA was never initialized for tracing (no driver or no GPU?)"
	grep -qxF "$note" "$OUTF" || fail "the text report lacks the line: $note"
	[ "$(json_py "$T/r.json" "sum(n == '''$note''' for n in d.get('cuda', {}).get('notes', []))")" = 1 ] ||
		fail "cuda.notes lacks exactly one: $note"
fi
exit 0
