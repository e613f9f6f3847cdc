#!/bin/bash
# mem_many — the memory view stays readable when a run has many processes
# (a shell script, a pyenv shim that runs 40 commands before python): past
# four host processes, those whose peak is under 1 % of the largest are one
# line with their count; examples/mem_peak's 64 MiB peak keeps its section,
# and the JSON keeps every process.
. "$(dirname "$0")/lib/common.bash"
need_cbn
need_example mem_peak

run_cbn --memory --json "$T/m.json" -- sh -c \
	"/bin/true; /bin/true; /bin/true; /bin/true; /bin/true; '$EXAMPLES/mem_peak'"
expect_rc 0
n=$(grep -c '^Memory: host' "$OUTF")
[ "$n" -ge 1 ] && [ "$n" -le 2 ] || fail "$n host memory sections, expected mem_peak's (and sh's at most)"
grep_out '^Memory: [0-9]+ more processes with host memory, each with a peak of at most .* \(under 1% of the largest\): in the JSON$'
python3 - "$T/m.json" <<'PY' || fail "the JSON does not keep every process"
import json, sys
h = [s for s in json.load(open(sys.argv[1]))["memory"]["spaces"] if s["kind"] == "host"]
assert len(h) >= 6, len(h)
PY
exit 0
