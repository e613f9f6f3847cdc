#!/bin/bash
# cuda_memory — GPU memory end to end on the simulated CUPTI: the memory
# workload (wl_memory in tests/cuda/workload.h: cudaMalloc/cudaFree per step,
# cudaMallocAsync from a pool, a 512 MiB peak, pinned and managed memory, one
# failing cudaHostAlloc, one block never freed) run under cbottleneck must give
# the autograd table's CUDA Mem columns exactly (every MEMORY2 record joined to
# its call by correlation), the pool-or-cudaMallocAsync recommendation with the
# step loop and the allocating function as evidence, and the pinned-memory one
# for the failed cudaHostAlloc.
. "$(dirname "$0")/lib/common.bash"
[ "${CBN_HAVE_CUDA:-OFF}" = ON ] || skip "built without CUDA (CBN_HAVE_CUDA=${CBN_HAVE_CUDA:-OFF})"
need_cbn
W="$CBN_BUILD_DIR/tests/cuda/cuda_workload"
need_built "$W"
export LD_LIBRARY_PATH="$CBN_BUILD_DIR/tests/fakecupti${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

run_cbn -F 500 --json "$T/r.json" -- "$W" memory
expect_rc 0
grep -q "cuda_workload: memory done" "$OUTF" || fail "the workload did not finish"
validate_schema "$T/r.json"
for col in "CPU Mem" "Self CPU Mem" "CUDA Mem" "Self CUDA Mem"; do
	grep -q "$col" "$OUTF" || fail "text report: autograd table has no \"$col\" column"
done

src="$CBN_SOURCE_DIR/tests/cuda/workload.c"
line_step=$(grep -n 'fakecuda_malloc(WL_MEM_STEP_BYTES)' "$src" | cut -d: -f1)

python3 - "$T/r.json" "$line_step" <<'PY' || fail "GPU memory figures do not match the simulated truth"
import json, sys
d = json.load(open(sys.argv[1]))
line_step = int(sys.argv[2])
c = d["cuda"]
bad = []
def eq(what, got, exp):
    if got != exp:
        bad.append("%s: got %r, expected %r" % (what, got, exp))
MiB = 1 << 20
ops = {(r["kind"], r["name"]): r for r in c["ops"]}
def mem(kind, name, key="cuda_mem"):
    r = ops.get((kind, name))
    if r is None:
        bad.append("no %s row %s" % (kind, name))
        return None
    return r.get(key)
# every allocation and release joined to its call: exact bytes
eq("cudaMalloc cuda_mem", mem("api", "cudaMalloc"), (4 + 40 * 8 + 512) * MiB)
eq("cudaMalloc self_cuda_mem", mem("api", "cudaMalloc", "self_cuda_mem"), (4 + 40 * 8 + 512) * MiB)
eq("cudaFree cuda_mem", mem("api", "cudaFree"), -(40 * 8 + 512 + 32) * MiB)
eq("cudaMallocAsync cuda_mem", mem("api", "cudaMallocAsync"), 4 * 16 * MiB)
eq("cudaFreeAsync cuda_mem", mem("api", "cudaFreeAsync"), -4 * 16 * MiB)
eq("cudaMallocManaged cuda_mem", mem("api", "cudaMallocManaged"), 32 * MiB)
# pinned host memory is not device memory
eq("cudaMallocHost cuda_mem", mem("api", "cudaMallocHost"), 0)
eq("cudaHostAlloc cuda_mem", mem("api", "cudaHostAlloc"), 0)
# ranges: what stays allocated inside them; self = minus the calls
eq("range mem cuda_mem (the block never freed)", mem("range", "mem"), 4 * MiB)
eq("range mem self_cuda_mem", mem("range", "mem", "self_cuda_mem"), 0)
eq("range step cuda_mem", mem("range", "step"), 0)
eq("range step calls", (ops.get(("range", "step")) or {}).get("calls"), 40)
eq("range peak cuda_mem", mem("range", "peak"), 0)
api = {r["name"]: r for r in c["api"]}
for name, n in (("cudaMalloc", 42), ("cudaFree", 42), ("cudaMallocAsync", 4), ("cudaFreeAsync", 4),
                ("cudaMallocHost", 1), ("cudaHostAlloc", 2), ("cudaFreeHost", 2),
                ("cudaMallocManaged", 1), ("cudaMemPoolTrimTo", 1)):
    eq("api %s calls" % name, api.get(name, {}).get("calls"), n)
recos = {r["id"]: r for r in c.get("recommendations", [])}
churn = recos.get("cuda-malloc-churn", {}).get("evidence", "")
for want in ("84 synchronous allocation calls (42 allocations, 42 frees)",
             'inside range "step" (40 instances)',
             "top allocation site: alloc_step (workload.c:%d), 40 calls" % line_step):
    if want not in churn:
        bad.append("cuda-malloc-churn evidence lacks %r: %r" % (want, churn))
pinned = recos.get("pinned-memory", {}).get("evidence", "")
if "1 pinned host allocations failed (first: cudaHostAlloc returned 2)" not in pinned:
    bad.append("pinned-memory evidence: %r" % pinned)
if "gpu-memory-full" in recos:
    bad.append("gpu-memory-full fired for a 580 MiB peak on an 80 GB device")
for b in bad:
    print("# " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
