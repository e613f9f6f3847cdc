#!/bin/bash
# cuda_selftime — the CUDA layer's measuring settings on the simulated CUPTI
# (src/agent/cuda/selftime.c, bench/gpu_split.sh): CBN_CUDA_SELFTIME counts
# the callbacks a known workload makes; CBN_CUDA_SPLIT=nocb, empty and norec
# write no API records and keep every kernel; locked records the same as the
# defaults.  Then 600 Python launch sites, 5 times over: each site's stack is
# written in full once, not again at every step.
. "$(dirname "$0")/lib/common.bash"
need_fakecupti cuda_workload
W="$CBN_BUILD_DIR/tests/cuda/cuda_workload"

CBN_CUDA_SELFTIME="$T/self.txt" run_cbn -q --json "$T/full.json" -- "$W" main 5
expect_rc 5
[ -s "$T/self.txt" ] || fail "CBN_CUDA_SELFTIME wrote nothing"
for s in nocb empty norec locked; do
	CBN_CUDA_SPLIT=$s run_cbn -q --json "$T/$s.json" -- "$W" main 5
	expect_rc 5
done

python3 - "$T" <<'PY' || fail "measuring settings did not behave as documented"
import json, sys
T = sys.argv[1]
c = {n: json.load(open("%s/%s.json" % (T, n)))["cuda"]
     for n in ("full", "nocb", "empty", "norec", "locked")}
self = {}
for line in open(T + "/self.txt"):
    if not line.startswith("#"):
        f = line.rstrip("\n").split("\t")
        self[f[0]] = int(f[1])
def calls(x, dom=None):
    return sum(a["calls"] for a in x["api"]
               if dom is None or a["name"].startswith(dom))
bad = []
full = c["full"]["totals"]
# every traced runtime call is an ENTER and an EXIT callback; driver calls
# made alone (cuLaunchKernel) likewise; those inside a runtime call return
# at once
if self.get("runtime callbacks") != 2 * calls(c["full"], "cuda"):
    bad.append("runtime callbacks %s != 2 x %d" % (self.get("runtime callbacks"), calls(c["full"], "cuda")))
if self.get("driver callbacks (not nested)") != 2 * calls(c["full"], "cu") - 2 * calls(c["full"], "cuda"):
    bad.append("driver callbacks %s" % self.get("driver callbacks (not nested)"))
if not self.get("driver callbacks inside a runtime call"):
    bad.append("no nested driver callbacks counted")
if not self.get("stack capture") or self.get("stack capture") > calls(c["full"]):
    bad.append("stack captures %s for %d calls" % (self.get("stack capture"), calls(c["full"])))
for n in ("nocb", "empty", "norec"):
    t = c[n]["totals"]
    if t["api_calls"] != 0:
        bad.append("%s: %d API records" % (n, t["api_calls"]))
    if t["kernels"] != full["kernels"] or t["kernel_ns"] != full["kernel_ns"]:
        bad.append("%s: kernels %d (%d ns) != %d (%d ns)" % (n, t["kernels"], t["kernel_ns"], full["kernels"], full["kernel_ns"]))
lk = c["locked"]
keys = ("kernels", "kernel_ns", "memcpy", "memcpy_bytes", "memset", "api_calls")
if [lk["totals"][k] for k in keys] != [full[k] for k in keys] or \
        len(lk["launch_sites"]) != len(c["full"]["launch_sites"]):
    bad.append("locked: %s != %s" % (lk["totals"], full))
print("\n".join(bad), file=sys.stderr)
sys.exit(1 if bad else 0)
PY

CBN_CUDA_SELFTIME="$T/sites.txt" run_cbn -q --json "$T/sites.json" -- \
	python3 "$CBN_SOURCE_DIR/tests/cuda/many_sites.py" 600 5
expect_rc 0
full=$(awk -F'\t' '$1 == "stack records written in full" { print $2 }' "$T/sites.txt")
caps=$(awk -F'\t' '$1 == "stack capture" { print $2 }' "$T/sites.txt")
echo "600 sites x 5: $caps captures, $full written in full"
[ "$caps" = 3000 ] || fail "expected 3000 launch stacks captured, got $caps"
# once each, and a few more (a set of four that overflows); 256 slots
# direct-mapped wrote about 2700
[ "$full" -ge 600 ] && [ "$full" -le 720 ] || fail "$full of 3000 launch stacks written in full (600 sites)"
python3 - "$T/sites.json" <<'PY' || fail "600 sites: kernels lost"
import json, sys
t = json.load(open(sys.argv[1]))["cuda"]["totals"]
sys.exit(0 if t["kernels"] == 3000 and t["api_calls"] == 3000 else print(t) or 1)
PY
exit 0
