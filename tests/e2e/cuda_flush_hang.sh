#!/bin/bash
# cuda_flush_hang — a CUPTI flush that never returns at exit must not hang
# the program: after the 4 s watchdog the layer marks the status
# flush_timed_out (the report says so; the program's stderr stays its own),
# and the run finishes with the program's own status.
. "$(dirname "$0")/lib/common.bash"
[ "${CBN_HAVE_CUDA:-OFF}" = ON ] || skip "built without CUDA (CBN_HAVE_CUDA=${CBN_HAVE_CUDA:-OFF})"
need_cbn
W="$CBN_BUILD_DIR/tests/cuda/cuda_workload"
need_built "$W"
export LD_LIBRARY_PATH="$CBN_BUILD_DIR/tests/fakecupti${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

start=$(date +%s)
FAKECUPTI_FLUSH_HANG=1 run_cbn --json "$T/r.json" -- timeout 60 "$W" main 4
took=$(( $(date +%s) - start ))
expect_rc 4
[ "$took" -lt 30 ] || fail "the run took $took s"
grep -q "the final CUPTI flush timed out: the last GPU records may be missing" "$OUTF" ||
	fail "the report does not say the flush timed out"
grep -q "CUPTI flush" "$ERRF" && fail "the agent wrote on the program's stderr: $(cat "$ERRF")"
python3 - "$T/r.json" <<'PY' || fail "status does not record the flush timeout"
import json, sys
d = json.load(open(sys.argv[1]))
st = d["cuda"]["status"]
print("# status: %s" % st, file=sys.stderr)
sys.exit(0 if len(st) == 1 and st[0]["state"] == "finished" and st[0]["flush_timed_out"] else 1)
PY
grep -q "filename:lineno(function)" "$OUTF" || fail "the CPU table is missing"
