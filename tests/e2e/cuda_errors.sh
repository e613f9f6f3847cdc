#!/bin/bash
# cuda_errors — when CUPTI cannot start (999: no driver, 39: another tool
# holds CUPTI, 35: no profiling permission) the program runs on with its own
# exit status, its stderr holds nothing of ours, the report has one clear
# line, the CPU profile is complete and the JSON says why CUDA was not traced.
. "$(dirname "$0")/lib/common.bash"
[ "${CBN_HAVE_CUDA:-OFF}" = ON ] || skip "built without CUDA (CBN_HAVE_CUDA=${CBN_HAVE_CUDA:-OFF})"
need_cbn
W="$CBN_BUILD_DIR/tests/cuda/cuda_workload"
need_built "$W"
export LD_LIBRARY_PATH="$CBN_BUILD_DIR/tests/fakecupti${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

for err in 999 39 35; do
	FAKECUPTI_FAIL=$err run_cbn -F 500 --json "$T/r$err.json" -- "$W" main 7
	expect_rc 7
	grep -q "cuda_workload: main done" "$OUTF" || fail "[$err] the workload did not finish"
	grep -q "CUDA tracing" "$ERRF" && fail "[$err] the agent wrote on the program's stderr"
	n=$(grep -c "CUDA tracing unavailable" "$OUTF" || true)
	[ "$n" = 1 ] || fail "[$err] expected one 'CUDA tracing unavailable' line in the report, got $n"
	grep -Eq "^CUDA: pid [0-9]+ \(cuda_workload\): CUDA tracing unavailable: .* $err\); [^;]+; CPU profile only$" "$OUTF" ||
		fail "[$err] the report's line does not name the error, what to do, and say the CPU profile goes on"
	if [ "$err" = 39 ]; then
		grep -q "CUDA tracing unavailable: CUPTI is already in use by nsys" "$OUTF" ||
			fail "[39] the report's line does not name the other subscriber (nsys)"
	fi
	python3 - "$T/r$err.json" "$err" <<'PY' || fail "[$err] JSON does not report CUDA as unavailable with a CPU profile"
import json, sys
d = json.load(open(sys.argv[1])); err = int(sys.argv[2])
c = d.get("cuda")
if not c:
    sys.exit("no cuda object: the unavailable status is missing")
st = c["status"]
ok = len(st) == 1 and st[0]["state"] == "unavailable" and st[0]["cupti_error"] == err and st[0]["message"]
ok = ok and c["totals"]["kernels"] == 0 and c["totals"]["api_calls"] == 0
ok = ok and any(f["name"] == "host_work" and f["self_ns"] > 0 for f in d["functions"])
print("# status: %s" % st, file=sys.stderr)
sys.exit(0 if ok else 1)
PY
	grep -q "filename:lineno(function)" "$OUTF" || fail "[$err] the CPU table is missing"
done

# A libcupti reporting another major version: one warning in the report,
# tracing goes on.
FAKECUPTI_VERSION=140000 run_cbn --json "$T/v.json" -- "$W" main 0
expect_rc 0
grep -q "loaded libcupti reports API version 140000" "$OUTF" ||
	fail "no warning about the libcupti version in the report"
grep -q "libcupti" "$ERRF" && fail "the version warning went to the program's stderr"
[ "$(json_get "$T/v.json" 'cuda.status[0].state')" = finished ] || fail "version warning stopped tracing"
[ "$(json_get "$T/v.json" 'cuda.totals.kernels')" = 123 ] || fail "version warning lost kernels"
exit 0
