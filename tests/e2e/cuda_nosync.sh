#!/bin/bash
# cuda_nosync — kernels still running when the program exits (no
# synchronize): the forced flush returns them without timestamps; they are
# counted as zero_ts, kept out of the GPU tables, and their launches are kept.
. "$(dirname "$0")/lib/common.bash"
[ "${CBN_HAVE_CUDA:-OFF}" = ON ] || skip "built without CUDA (CBN_HAVE_CUDA=${CBN_HAVE_CUDA:-OFF})"
need_cbn
W="$CBN_BUILD_DIR/tests/cuda/cuda_workload"
need_built "$W"
export LD_LIBRARY_PATH="$CBN_BUILD_DIR/tests/fakecupti${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

FAKECUPTI_DROP=4 run_cbn --json "$T/r.json" -- "$W" nosync
expect_rc 0
python3 - "$T/r.json" <<'PY' || fail "unfinished kernels / dropped records are not accounted"
import json, sys
d = json.load(open(sys.argv[1]))
c = d["cuda"]
st = c["status"]
print("# status: %s" % st, file=sys.stderr)
ok = len(st) == 1 and st[0]["state"] == "finished" and st[0]["zero_ts"] == 5 and st[0]["dropped"] == 4
ok = ok and c["totals"]["kernels"] == 0
ok = ok and {a["name"]: a["calls"] for a in c["api"]}.get("cudaLaunchKernel") == 5
sys.exit(0 if ok else 1)
PY
