#!/bin/bash
# cli_report — `cbottleneck report DIR` on a kept session reproduces the run's
# report; on a truncated or corrupted session it still prints a table from what
# was intact, warns, and exits 1; an empty directory exits 66, a non-directory 2.
# ctest-labels: sanitize (the ASan+UBSan stage of .ci/run runs it)
. "$(dirname "$0")/lib/common.bash"
need_cbn
need_example split

run_cbn -o "$T/s" --json "$T/run.json" -- "$EXAMPLES/split" "$SCALE"
expect_rc 0
grep -q "session kept in $T/s" "$ERRF" || fail "no 'session kept' line"
cp "$OUTF" "$T/run.txt"
tail -n +2 "$T/run.txt" >"$T/run.report" # drop the target's own "split: done"

run_cbn report --json "$T/again.json" "$T/s"
expect_rc 0
cmp "$T/run.report" "$OUTF" || {
	diff "$T/run.report" "$OUTF" >&2
	fail "report DIR does not reproduce the run's report"
}
python3 - "$T/run.json" "$T/again.json" <<'PY' || fail "the JSON reports differ"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
assert a["functions"] == b["functions"], "functions differ"
assert a["run"] == b["run"], (a["run"], b["run"])
PY

# Report options apply to a kept session too.
run_cbn report -q --limit 1 --sort cumtime --report "$T/one.txt" "$T/s"
expect_rc 0
[ -s "$T/one.txt" ] || fail "--report FILE not written"
run_cbn report -F 10 "$T/s"
expect_rc 2

# Truncated: cut the file of the process in the middle.
f=$(ls "$T/s"/*.cbp | head -1)
size=$(stat -c %s "$f")
mkdir "$T/cut"
cp "$T/s/session.json" "$T/cut/"
head -c $((8192 + 65536 + 3000)) "$f" >"$T/cut/$(basename "$f")"
run_cbn report "$T/cut"
expect_rc 1
grep -q "warning: $(basename "$f"): truncated" "$ERRF" || fail "no truncation warning on stderr"
grep_out 'filename:lineno\(function\)'
grep_out 'truncated'

# Corrupted: garbage over a chunk in the middle.
mkdir "$T/bad"
cp "$T/s"/* "$T/bad/"
g="$T/bad/$(basename "$f")"
if [ "$size" -gt $((8192 + 2 * 65536)) ]; then off=$((8192 + 65536 + 100)); else off=$((8192 + 200)); fi
head -c 4000 /dev/urandom | dd of="$g" bs=1 seek="$off" conv=notrunc status=none
run_cbn report "$T/bad"
expect_rc 1
grep -q 'warning: ' "$ERRF" || fail "no warning line for the corrupted file"
grep_out 'filename:lineno\(function\)'

# No session: empty directory, garbage only, not a directory, missing.
mkdir "$T/empty"
run_cbn report "$T/empty"
expect_rc 66
grep -q 'no session files' "$ERRF" || fail "no 'no session files' line"
mkdir "$T/garbage"
head -c 100 /dev/urandom >"$T/garbage/1.0.cbp"
run_cbn report "$T/garbage"
expect_rc 66
run_cbn report "$T/run.json"
expect_rc 2
run_cbn report "$T/missing"
expect_rc 2
run_cbn report
expect_rc 2
exit 0
