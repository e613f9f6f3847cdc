#!/bin/bash
# cpu_stripped — a stripped program's static functions are grouped by the
# unwind tables' function starts ("split+0x...", [no symbol]), the same names
# in the text, JSON (nosym), folded stacks and pprof, and stable across runs,
# so that `compare` lines up the same rows; the hottest-lines table leaves
# the bare addresses out (JSON lines keep each pc).  The unstripped binary
# says which start is heavy().
. "$(dirname "$0")/lib/common.bash"
need_cbn
need_example split
command -v objcopy >/dev/null || skip "objcopy not installed"
objcopy --strip-all "$EXAMPLES/split" "$T/split" || fail "objcopy --strip-all"
heavy=$(nm "$EXAMPLES/split" | awk '$3 == "heavy" { sub(/^0+/, "", $1); print $1; exit }')
[ -n "$heavy" ] || fail "no heavy in the unstripped example"
name="split+0x$heavy"
name_re="split\\+0x$heavy"

export CBN_DEBUGINFO_PATH=/nonexistent-cbn-debug CBN_DEBUGINFOD=0
for run in 1 2; do
	run_cbn -F 999 --json "$T/$run.json" --folded "$T/$run.folded" --pprof "$T/$run.pb.gz" \
		--limit 30 -- "$T/split" 0.4 3
	expect_rc 0
	grep_out "\($name_re \[no symbol\]\)$"
	# the hottest-lines table leaves addresses out and says so
	grep_out "^Hottest source lines: none with line information|^   \([0-9.]+% of the CPU in code without line information left out: [0-9]+ address(es)?\)$"
	grep -q "$name" "$T/$run.folded" || fail "folded stacks lack $name"
done
python3 - "$T/1.json" "$T/2.json" "$name" <<'PY' || fail "JSON: grouping not as expected"
import json, sys
runs = [json.load(open(p)) for p in sys.argv[1:3]]
name = sys.argv[3]
for d in runs:
    f = {x["name"]: x for x in d["functions"]}
    h = f[name]
    assert h["nosym"] and h["file"] == "" and h["module"] == "split", h
    total = sum(x["self_ns"] for x in d["functions"])
    assert h["self_ns"] > 0.5 * total, (h["self_ns"], total)
    # per-pc rows would be many: the grouped table is short
    nosym = [x for x in d["functions"] if x["nosym"] and x["module"] == "split"]
    assert len(nosym) <= 6, [x["name"] for x in nosym]
a = {x["name"] for x in runs[0]["functions"] if x["nosym"] and x["self_ns"] > 0.05 * sum(y["self_ns"] for y in runs[0]["functions"])}
b = {x["name"] for x in runs[1]["functions"] if x["nosym"]}
assert a <= b, (a, b)
PY
if command -v go >/dev/null 2>&1; then
	go tool pprof -top "$T/1.pb.gz" 2>/dev/null | grep -q "$name" || fail "pprof lacks $name"
fi
# the gate compares the same rows run to run
run_cbn compare "$T/1.json" "$T/2.json" --fail "func[$name].self:+60%"
expect_rc 0
grep -q "$name" "$OUTF" || fail "compare did not find $name in both runs"
exit 0
