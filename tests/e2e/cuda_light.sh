#!/bin/bash
# cuda_light — the lighter CUDA tracing settings on the simulated CUPTI:
# CBN_CUDA_STACKS=0 records no host stacks (launches show as "[no stack
# captured]", kernels still counted), CBN_CUDA_DRIVER=0 drops the driver-API-only launches
# (cuLaunchKernel) while runtime launches stay.
. "$(dirname "$0")/lib/common.bash"
[ "${CBN_HAVE_CUDA:-OFF}" = ON ] || skip "built without CUDA (CBN_HAVE_CUDA=${CBN_HAVE_CUDA:-OFF})"
need_cbn
W="$CBN_BUILD_DIR/tests/cuda/cuda_workload"
need_built "$W"
export LD_LIBRARY_PATH="$CBN_BUILD_DIR/tests/fakecupti${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

run_cbn -q --json "$T/full.json" -- "$W" main 5
expect_rc 5
CBN_CUDA_STACKS=0 run_cbn -q --json "$T/nostack.json" -- "$W" main 5
expect_rc 5
CBN_CUDA_DRIVER=0 run_cbn -q --json "$T/nodrv.json" -- "$W" main 5
expect_rc 5

python3 - "$T" <<'PY' || fail "lighter CUDA settings did not behave as documented"
import json, sys
T = sys.argv[1]
c = {n: json.load(open("%s/%s.json" % (T, n)))["cuda"] for n in ("full", "nostack", "nodrv")}
def calls(x, name):
    return sum(a["calls"] for a in x["api"] if a["name"] == name)
bad = []
if not c["full"]["launch_sites"]:
    bad.append("full: no launch sites")
if [s for s in c["nostack"]["launch_sites"] if s["file"] or s["function"] != "[no stack captured]"]:
    bad.append("CBN_CUDA_STACKS=0: launch sites %s" % c["nostack"]["launch_sites"][:2])
if c["nostack"]["totals"]["kernels"] != c["full"]["totals"]["kernels"]:
    bad.append("CBN_CUDA_STACKS=0: kernels %d != %d" % (c["nostack"]["totals"]["kernels"], c["full"]["totals"]["kernels"]))
if calls(c["full"], "cuLaunchKernel") == 0:
    bad.append("full: no cuLaunchKernel calls")
if calls(c["nodrv"], "cuLaunchKernel") != 0:
    bad.append("CBN_CUDA_DRIVER=0: %d cuLaunchKernel calls" % calls(c["nodrv"], "cuLaunchKernel"))
if calls(c["nodrv"], "cudaLaunchKernel") != calls(c["full"], "cudaLaunchKernel"):
    bad.append("CBN_CUDA_DRIVER=0: runtime launches changed")
print("\n".join(bad), file=sys.stderr)
sys.exit(1 if bad else 0)
PY
exit 0
