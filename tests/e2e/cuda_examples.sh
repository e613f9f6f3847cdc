#!/bin/bash
# cuda_examples — the CUDA examples under cbottleneck on a real GPU (skipped
# without one): exact kernel and API counts the examples fix, NVTX ranges,
# pageable vs pinned copies, and the launch-bound / sync-bound signatures.
. "$(dirname "$0")/lib/common.bash"
[ "${CBN_HAVE_NVCC:-OFF}" = ON ] || skip "built without nvcc (CBN_HAVE_NVCC=${CBN_HAVE_NVCC:-OFF})"
need_cbn
need_example tiny_kernels vecadd_matmul copies sync_heavy
"$EXAMPLES/tiny_kernels" 0.01 >"$T/probe" 2>&1 ||
	skip "no usable GPU: $(tail -n 1 "$T/probe")"

run_cbn --json "$T/tiny.json" -- "$EXAMPLES/tiny_kernels"
expect_rc 0
run_cbn --json "$T/vm.json" -- "$EXAMPLES/vecadd_matmul" 0.5
expect_rc 0
run_cbn --json "$T/cp.json" -- "$EXAMPLES/copies" 0.5
expect_rc 0
run_cbn --json "$T/sh.json" -- "$EXAMPLES/sync_heavy" 0.5
expect_rc 0

python3 - "$T" <<'PY' || fail "CUDA examples' reports are wrong"
import json, sys
T = sys.argv[1]
bad = []
def load(n):
    c = json.load(open("%s/%s.json" % (T, n))).get("cuda")
    if not c:
        bad.append("%s: no cuda object" % n)
        return None
    st = c["status"]
    if not st or st[0]["state"] != "finished":
        bad.append("%s: status %s" % (n, st))
    return c
def kern(c, prefix):
    return [k for k in c["kernels"] if k["name"].startswith(prefix)]
def api(c, name):
    return sum(a["calls"] for a in c["api"] if a["name"] == name)
c = load("tiny")
if c:
    k = kern(c, "tiny(")
    if not k or k[0]["instances"] != 10000:
        bad.append("tiny: kernel rows %s" % k)
    if api(c, "cudaLaunchKernel") != 10000:
        bad.append("tiny: %d cudaLaunchKernel calls" % api(c, "cudaLaunchKernel"))
    if c["overview"]["verdict"] != "overhead-bound":
        bad.append("tiny: verdict %s" % c["overview"]["verdict"])
c = load("vm")
if c:
    ranges = {o["name"] for o in c["ops"] if o["kind"] == "range"}
    if not {"setup", "compute", "verify"} <= ranges:
        bad.append("vecadd_matmul: ranges %s" % ranges)
    for p, n in (("vecadd(", 5), ("matmul(", 5)):
        k = kern(c, p)
        if not k or k[0]["instances"] != n:
            bad.append("vecadd_matmul: %s rows %s" % (p, k))
    dev = [s for s in c["launch_sites"] if s["file"].endswith("vecadd_matmul.cu")]
    if not dev:
        bad.append("vecadd_matmul: no launch site in vecadd_matmul.cu: %s" % c["launch_sites"])
c = load("cp")
if c:
    m = {r["name"]: r for r in c["memops"]}
    h = m.get("[CUDA memcpy HtoD]", {})
    if h.get("pageable") != 4 or h.get("pinned") != 4:
        bad.append("copies: HtoD %s" % h)
    if "pageable-copies" not in {r["id"] for r in c["recommendations"]}:
        bad.append("copies: no pageable-copies recommendation")
c = load("sh")
if c:
    if api(c, "cudaDeviceSynchronize") != 1000:
        bad.append("sync_heavy: %d cudaDeviceSynchronize" % api(c, "cudaDeviceSynchronize"))
    if c["overview"]["sync_blocked_ns"] <= 0:
        bad.append("sync_heavy: no time blocked in sync")
for b in bad:
    print("# " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
