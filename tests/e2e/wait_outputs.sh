#!/bin/bash
# wait_outputs — the waiting view's outputs through the launcher: --sample-type
# wall and offcpu are accepted by name and, on a run without off-CPU data, are
# a one-line usage error (exit 2) naming --off-cpu, with no file written; an
# unknown type lists them; the JSON report is schema 4.
. "$(dirname "$0")/lib/common.bash"
need_cbn
need_example split

run_cbn --sample-type nowhere --folded "$T/x.folded" -- "$EXAMPLES/split" 0.05
expect_rc 2
grep -q 'expected cpu, wall, offcpu' "$ERRF" || fail "unknown --sample-type does not list wall, offcpu"

for st in wall offcpu; do
	run_cbn -q --sample-type "$st" --folded "$T/$st.folded" --json "$T/$st.json" -- \
		"$EXAMPLES/split" 0.05
	expect_rc 2
	grep -q -- "--sample-type $st: the run has no off-CPU data; profile it with --off-cpu" \
		"$ERRF" || fail "--sample-type $st without off-CPU data not explained: $(cat "$ERRF")"
	[ ! -e "$T/$st.folded" ] || fail "--sample-type $st wrote a folded file anyway"
done

run_cbn -q --json "$T/r.json" -- "$EXAMPLES/split" 0.05
expect_rc 0
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(d["schema_version"] != 5)' \
	"$T/r.json" || fail "the JSON report is not schema 4"
exit 0
