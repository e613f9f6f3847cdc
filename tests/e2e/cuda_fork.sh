#!/bin/bash
# cuda_fork — a child forked (without exec) after CUDA started must not touch
# CUDA through the layer: its status says fork_child, its kernel launch is not
# traced, its CPU time still is; the parent's CUDA data is complete.
. "$(dirname "$0")/lib/common.bash"
[ "${CBN_HAVE_CUDA:-OFF}" = ON ] || skip "built without CUDA (CBN_HAVE_CUDA=${CBN_HAVE_CUDA:-OFF})"
need_cbn
W="$CBN_BUILD_DIR/tests/cuda/cuda_workload"
need_built "$W"
export LD_LIBRARY_PATH="$CBN_BUILD_DIR/tests/fakecupti${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

run_cbn -F 500 --json "$T/r.json" -- "$W" fork
expect_rc 0
python3 - "$T/r.json" <<'PY' || fail "fork child and parent CUDA data are wrong"
import json, sys
d = json.load(open(sys.argv[1]))
c = d["cuda"]
bad = []
procs = d["processes"]
if len(procs) != 2:
    bad.append("%d processes, expected 2" % len(procs))
st = {s["pid"]: s["state"] for s in c["status"]}
print("# status: %s" % c["status"], file=sys.stderr)
if sorted(st.values()) != ["finished", "fork_child"]:
    bad.append("states %s, expected finished + fork_child" % sorted(st.values()))
names = [k["name"] for k in c["kernels"]]
if any("child_kern" in n for n in names):
    bad.append("the child's kernel was traced: %s" % names)
ka = [k for k in c["kernels"] if k["name"] == "kernelA(float*, int)"]
if not ka or ka[0]["instances"] != 10:
    bad.append("parent kernelA instances: %s" % ka)
api = {a["name"]: a["calls"] for a in c["api"]}
if api.get("cudaLaunchKernel") != 10 or api.get("cudaDeviceSynchronize") != 1:
    bad.append("parent API calls: %s" % api)
if not any(f["name"] == "host_work" and f["self_ns"] > 0 for f in d["functions"]):
    bad.append("host_work missing from the CPU table")
for b in bad:
    print("# " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
