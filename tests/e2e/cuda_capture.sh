#!/bin/bash
# cuda_capture — the CUDA layer follows the capture windows, on the simulated
# CUPTI: under --capture-range api a workload that never calls cbn_start()
# (nor cudaProfilerStart) has its activity kinds disabled from the start and
# writes no API record, so its report has no kernel, copy or API call; the
# same run without the control has them all (cuda_sim checks the exact truth).
. "$(dirname "$0")/lib/common.bash"
[ "${CBN_HAVE_CUDA:-OFF}" = ON ] || skip "built without CUDA (CBN_HAVE_CUDA=${CBN_HAVE_CUDA:-OFF})"
need_cbn
W="$CBN_BUILD_DIR/tests/cuda/cuda_workload"
need_built "$W"
export LD_LIBRARY_PATH="$CBN_BUILD_DIR/tests/fakecupti${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

run_cbn -F 500 --capture-range api --json "$T/r.json" -- "$W" main 5
expect_rc 5
grep -q "cuda_workload: main done" "$OUTF" || fail "the workload did not finish"
python3 - "$T/r.json" <<'PY' || fail "CUDA records outside any capture window"
import json, sys
c = json.load(open(sys.argv[1]))["cuda"]
t = c["totals"]
bad = [k for k in ("kernels", "memcpy", "memset", "api_calls") if t[k] != 0]
if c["status"][0]["state"] != "finished":
    bad.append("state " + c["status"][0]["state"])
if bad:
    print("nonzero outside windows:", bad, t)
    sys.exit(1)
PY

run_cbn -F 500 --json "$T/r2.json" -- "$W" main 5
expect_rc 5
[ "$(json_py "$T/r2.json" 'd["cuda"]["totals"]["kernels"]')" = 123 ] ||
	fail "without controls the workload's 123 kernels are not all there"
exit 0
