#!/bin/bash
# cuda_sim — the CUDA layer end to end on the simulated CUPTI: a workload with
# known truth (tests/cuda/workload.h) run under cbottleneck must come out with
# exact kernel counts and GPU times (the simulation fixes them), exact API call
# counts, copies by kind with bytes and pageable/pinned, the NVTX ranges, and
# launch sites resolved to the launching functions' file:line.
. "$(dirname "$0")/lib/common.bash"
[ "${CBN_HAVE_CUDA:-OFF}" = ON ] || skip "built without CUDA (CBN_HAVE_CUDA=${CBN_HAVE_CUDA:-OFF})"
need_cbn
W="$CBN_BUILD_DIR/tests/cuda/cuda_workload"
need_built "$W"
export LD_LIBRARY_PATH="$CBN_BUILD_DIR/tests/fakecupti${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

run_cbn -F 500 --json "$T/r.json" -- "$W" main 5
expect_rc 5
grep -q "cuda_workload: main done" "$OUTF" || fail "the workload did not finish"
grep -q "CUDA tracing unavailable" "$ERRF" && fail "CUDA tracing reported unavailable"
[ "$(json_py "$T/r.json" '"cuda" in d')" = True ] ||
	fail "no \"cuda\" object in the JSON report although the layer traced the run"
validate_schema "$T/r.json"

src="$CBN_SOURCE_DIR/tests/cuda/workload.c"
line_a=$(grep -n 'fakecuda_launch(&wl_a' "$src" | cut -d: -f1)
line_b=$(grep -n 'fakecuda_launch(&wl_b' "$src" | cut -d: -f1)
line_c=$(grep -n 'fakecuda_memcpy(1 /\* HtoD' "$src" | cut -d: -f1)

python3 - "$T/r.json" "$line_a" "$line_b" "$line_c" <<'PY' || fail "CUDA report does not match the simulated truth"
import json, sys
d = json.load(open(sys.argv[1]))
la, lb, lc = map(int, sys.argv[2:5])
c = d["cuda"]
bad = []
def eq(what, got, exp):
    if got != exp:
        bad.append("%s: got %r, expected %r" % (what, got, exp))
MiB = 1 << 20
st = c["status"]
eq("status entries", len(st), 1)
s = st[0]
eq("state", s["state"], "finished")
for k in ("dropped", "zero_ts", "flush_timed_out", "cupti_error"):
    eq("status." + k, s[k], 0)
t = c["totals"]
eq("totals.kernels", t["kernels"], 100 + 10 + 10 + 3)
eq("totals.kernel_ns", t["kernel_ns"], 100 * 50000 + 10 * 2000000 + 10 * 10000 + 3 * 30000)
eq("totals.memcpy", t["memcpy"], 22)
eq("totals.memcpy_ns", t["memcpy_ns"], 20 * 100000 + 2 * 200000)
eq("totals.memcpy_bytes", t["memcpy_bytes"], 20 * MiB + 2 * 4 * MiB)
eq("totals.memset", t["memset"], 1)
eq("totals.memset_ns", t["memset_ns"], 20000)
eq("totals.api_calls", t["api_calls"], 120 + 3 + 22 + 1 + 11 + 10 + 2 + 2)
k = {r["name"]: r for r in c["kernels"]}
for name, n, ns in (("kernelA(float*, int)", 100, 50000), ("kernelB(float const*, float*, int)", 10, 2000000),
                    ("kernelC()", 10, 10000), ("kernelD_driver", 3, 30000)):
    if name not in k:
        bad.append("kernel %s missing (have %s)" % (name, sorted(k)))
        continue
    eq(name + " instances", k[name]["instances"], n)
    eq(name + " total_ns", k[name]["total_ns"], n * ns)
    eq(name + " min_ns", k[name]["min_ns"], ns)
    eq(name + " max_ns", k[name]["max_ns"], ns)
if "kernelA(float*, int)" in k:
    a = k["kernelA(float*, int)"]
    eq("kernelA grid", a["grid"], [264, 1, 1])
    eq("kernelA block", a["block"], [256, 1, 1])
    eq("kernelA registers", a["registers"], 32)
if "kernelB(float const*, float*, int)" in k:
    b = k["kernelB(float const*, float*, int)"]
    eq("kernelB smem", (b["static_smem"], b["dynamic_smem"]), (4096, 100 * 1024))
api = {r["name"]: r for r in c["api"]}
for name, n in (("cudaLaunchKernel", 120), ("cuLaunchKernel", 3), ("cudaMemcpy", 22), ("cudaMemset", 1),
                ("cudaDeviceSynchronize", 11), ("cudaStreamSynchronize", 10), ("cudaMalloc", 2), ("cudaFree", 2)):
    eq("api %s calls" % name, api.get(name, {}).get("calls"), n)
eq("api names", sorted(api), sorted(["cudaLaunchKernel", "cuLaunchKernel", "cudaMemcpy", "cudaMemset",
    "cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaMalloc", "cudaFree"]))
m = {r["name"]: r for r in c["memops"]}
h = m.get("[CUDA memcpy HtoD]", {})
eq("HtoD count", h.get("count"), 20)
eq("HtoD bytes", h.get("bytes"), 20 * MiB)
eq("HtoD pageable", h.get("pageable"), 20)
eq("HtoD pinned", h.get("pinned"), 0)
g = m.get("[CUDA memcpy DtoH]", {})
eq("DtoH count", g.get("count"), 2)
eq("DtoH bytes", g.get("bytes"), 8 * MiB)
eq("DtoH pinned", g.get("pinned"), 2)
eq("DtoH pageable", g.get("pageable"), 0)
eq("memset count", m.get("[CUDA memset]", {}).get("count"), 1)
ranges = {r["name"]: r for r in c["ops"] if r["kind"] == "range"}
for r in ("setup", "compute", "teardown"):
    if r not in ranges:
        bad.append("NVTX range %s missing (ranges: %s)" % (r, sorted(ranges)))
if "compute" in ranges and ranges["compute"]["cuda_total_ns"] < 100 * 50000 + 10 * 2000000:
    bad.append("compute range holds %d ns of GPU time, expected >= 25 ms" % ranges["compute"]["cuda_total_ns"])
sites = {}
for r in c["launch_sites"]:
    sites.setdefault(r["function"], []).append(r)
for fn, n, line, ns in (("launch_a", 100, la, 5000000), ("launch_b", 10, lb, 20000000), ("copy_input", 20, lc, 2000000)):
    rows = sites.get(fn, [])
    if len(rows) != 1:
        bad.append("launch site %s: %d rows (sites: %s)" % (fn, len(rows), sorted(sites)))
        continue
    r = rows[0]
    eq(fn + " launches", r["launches"], n)
    eq(fn + " gpu_ns", r["gpu_ns"], ns)
    eq(fn + " line", r["line"], line)
    if not r["file"].endswith("tests/cuda/workload.c"):
        bad.append("%s file %s" % (fn, r["file"]))
if not any(f["name"] == "host_work" and f["self_ns"] > 0 for f in d["functions"]):
    bad.append("host_work missing from the CPU table")
for b in bad:
    print("# " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
grep -q "CUDA GPU kernel summary" "$OUTF" || fail "text report has no CUDA kernel table"
