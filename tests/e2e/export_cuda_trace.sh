#!/bin/bash
# export_cuda_trace — --trace of the simulated CUDA workload (tests/cuda,
# fake CUPTI): every kernel, copy and set is on a "stream N" lane of a GPU
# process, every one has a kineto "ac2g" flow from its launching API call
# (s inside the call, f on the op), API calls and NVTX ranges sit on their own
# lanes, all lanes nest strictly, and the trace has as many GPU operations
# as the JSON report counts.
. "$(dirname "$0")/lib/common.bash"
[ "${CBN_HAVE_CUDA:-OFF}" = ON ] || skip "built without CUDA (CBN_HAVE_CUDA=${CBN_HAVE_CUDA:-OFF})"
need_cbn
W="$CBN_BUILD_DIR/tests/cuda/cuda_workload"
need_built "$W"
"$CBN" --help 2>&1 | grep -q -- '--trace' || fail "--help does not mention --trace"
export LD_LIBRARY_PATH="$CBN_BUILD_DIR/tests/fakecupti${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

run_cbn -F 500 --json "$T/r.json" --trace "$T/t.json.gz" -- "$W" main 5
expect_rc 5
grep -q "CUDA tracing unavailable" "$ERRF" && fail "CUDA tracing unavailable under the simulated CUPTI"
# every kernel, copy and set of the workload is launched by an API call
ops=$(json_py "$T/r.json" 'd["cuda"]["totals"]["kernels"] + d["cuda"]["totals"]["memcpy"] + d["cuda"]["totals"]["memset"]')
[ "$ops" -gt 0 ] || fail "the JSON report counts no GPU operations"
python3 "$CBN_SOURCE_DIR/tests/e2e/export_check.py" trace "$T/t.json.gz" --flows "$ops" >"$T/c.out" ||
	fail "CUDA trace is malformed (expected $ops flows)"
python3 - "$T/t.json.gz" "$T/r.json" <<'PY' || fail "CUDA trace lanes are not as documented"
import gzip, json, sys
d = json.load(gzip.open(sys.argv[1]))
tot = json.load(open(sys.argv[2]))["cuda"]["totals"]
ev = d["traceEvents"]
names = {(e["pid"], e.get("tid")): e["args"]["name"] for e in ev
         if e["ph"] == "M" and e["name"] == "thread_name"}
procs = {e["pid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
bad = []
cnt = {}
for e in ev:
    c = e.get("cat")
    cnt[c] = cnt.get(c, 0) + 1
    lane = names.get((e["pid"], e.get("tid")), "")
    if c in ("kernel", "gpu_memcpy", "gpu_memset"):
        if not lane.startswith("stream ") or not procs.get(e["pid"], "").startswith("GPU "):
            bad.append("GPU op %s on lane %r of %r" % (e["name"], lane, procs.get(e["pid"])))
        for k in ("device", "stream", "correlation"):
            if k not in e.get("args", {}):
                bad.append("GPU op %s without args.%s" % (e["name"], k))
    if c in ("cuda_runtime", "cuda_driver") and "cuda api" not in lane:
        bad.append("API call %s on lane %r" % (e["name"], lane))
    if c == "user_annotation" and "annotations" not in lane:
        bad.append("range %s on lane %r" % (e["name"], lane))
want = {"kernel": tot["kernels"], "gpu_memcpy": tot["memcpy"], "gpu_memset": tot["memset"]}
for k, v in want.items():
    if cnt.get(k) != v:
        bad.append("%d %s events, the JSON report counts %d" % (cnt.get(k, 0), k, v))
if not cnt.get("user_annotation"):
    bad.append("no NVTX ranges")
for b in bad[:10]:
    print(b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
exit 0
