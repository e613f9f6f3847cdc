#!/bin/bash
# cuda_exit_early — exits that skip atexit (_exit, SIGKILL) lose no finished
# GPU work older than the layer's periodic flush: kernels synchronized before
# the exit are in the report, and the status stays "started" (no final flush).
. "$(dirname "$0")/lib/common.bash"
[ "${CBN_HAVE_CUDA:-OFF}" = ON ] || skip "built without CUDA (CBN_HAVE_CUDA=${CBN_HAVE_CUDA:-OFF})"
need_cbn
W="$CBN_BUILD_DIR/tests/cuda/cuda_workload"
need_built "$W"
export LD_LIBRARY_PATH="$CBN_BUILD_DIR/tests/fakecupti${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export CBN_CUDA_FLUSH_PERIOD_MS=100

for mode in exit kill; do
	run_cbn --json "$T/$mode.json" -- "$W" $mode
	if [ $mode = exit ]; then expect_rc 0; else expect_rc 137; fi
	grep -q "cuda_workload: $mode now" "$OUTF" || fail "[$mode] the workload did not run"
	python3 - "$T/$mode.json" <<'PY' || fail "[$mode] finished GPU work was lost"
import json, sys
d = json.load(open(sys.argv[1]))
c = d.get("cuda")
if not c:
    sys.exit("no cuda object")
st = c["status"]
print("# status: %s" % st, file=sys.stderr)
k = [r for r in c["kernels"] if r["name"] == "kernelA(float*, int)"]
ok = len(st) == 1 and st[0]["state"] == "started"
ok = ok and k and k[0]["instances"] == 10 and k[0]["total_ns"] == 10 * 50000
ok = ok and {a["name"]: a["calls"] for a in c["api"]}.get("cudaLaunchKernel") == 10
sys.exit(0 if ok else 1)
PY
done
exit 0
