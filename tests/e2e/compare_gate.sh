# compare_gate.sh — `cbottleneck compare` on real reports of the split example:
# an unchanged program passes a func[heavy].self gate, a program whose heavy()
# does twice the work fails it (exit 1, FAIL row); a GPU gate on a CPU-only run
# exits 3; a bad expression and a malformed or foreign baseline exit 2.
# ctest-labels: sanitize (the ASan+UBSan stage of .ci/run runs it)
. "$(dirname "$0")/lib/common.bash"
need_cbn
need_example split

run_cbn compare --help
[ "$RC" = 0 ] && grep -q 'usage: cbottleneck compare' "$OUTF" ||
	fail "'cbottleneck compare --help' failed or printed no usage (exit $RC)"

# split S F: heavy() burns S*F/(F+1) s, light() S/(F+1) s.  0.4 3 -> heavy 0.30 s;
# 0.7 6 -> heavy 0.60 s (2x) while light stays at 0.10 s.
profile()
{
	run_cbn --json "$1" -- "$EXAMPLES/split" "$2" "$3"
	[ "$RC" = 0 ] && [ -s "$1" ] ||
		fail "profiling 'split $2 $3' with --json failed (exit $RC)"
}
profile "$T/base.json" 0.4 3
profile "$T/same.json" 0.4 3
profile "$T/slow.json" 0.7 6

# Unchanged: passes.  At 99 Hz heavy has ~30 samples: a 25% threshold is ~8
# samples, the noise margin (2 sigma) ~15 samples, so a false FAIL needs a
# >50% swing between identical runs.
run_cbn compare --fail 'func[heavy].self:+25%' "$T/base.json" "$T/same.json"
expect_rc 0
grep_out '^func\[heavy\]\.self .* (ok|within noise)$'
grep_out '^PASS: 0 regressions'

# 2x heavier: ~30 more samples against a margin of 2*sqrt(90) ~ 19.
run_cbn compare --fail 'func[heavy].self:+25%' --warn 'func[light].self:+50%' \
	--markdown "$T/summary.md" --bench-json "$T/bench.json" "$T/base.json" "$T/slow.json"
expect_rc 1
grep_out '^func\[heavy\]\.self .*FAIL$'
grep_out '^func\[light\]\.self .* (ok|within noise)$'
grep_out '^FAIL: 1 regression'
grep -q '| `func\[heavy\].self` |.*| \*\*FAIL\*\* |' "$T/summary.md" ||
	fail "the Markdown summary has no FAIL row for func[heavy].self"
python3 - "$T/bench.json" <<'EOF' || fail "bench.json is not customSmallerIsBetter JSON"
import json, sys
rows = json.load(open(sys.argv[1]))
assert isinstance(rows, list) and rows
for r in rows:
    assert isinstance(r["name"], str) and isinstance(r["unit"], str)
    assert isinstance(r["value"], (int, float))
names = {r["name"] for r in rows}
assert {"func[heavy].self", "wall", "cpu"} <= names, names
heavy = [r for r in rows if r["name"] == "func[heavy].self"][0]
assert heavy["unit"] == "ms" and 400 < heavy["value"] < 800, heavy
EOF

# The default report (no gates) never fails, even on the slower run.
run_cbn compare "$T/base.json" "$T/slow.json"
expect_rc 0
grep_out '^func\[heavy\]\.self '

# A GPU gate on a CPU-only current run: could not measure.
run_cbn compare --fail 'gpu.kernels:+0' "$T/base.json" "$T/same.json"
expect_rc 3
grep_out '^gpu\.kernels .*n/a$'
# ... unless something really regressed.
run_cbn compare --fail 'gpu.kernels:+0' --fail 'func[heavy].self:+25%' "$T/base.json" \
	"$T/slow.json"
expect_rc 1

# Usage and input errors: exit 2 with one line on stderr.
run_cbn compare --fail 'func[heavy].self:+25' "$T/base.json" "$T/same.json"
expect_rc 2
grep -q 'needs a unit' "$ERRF" || fail "no 'needs a unit' message for a bad threshold"
run_cbn compare --fail 'func[no_such_function].self:+25%' "$T/base.json" "$T/same.json"
expect_rc 2
grep -q 'no_such_function' "$ERRF" || fail "the message does not name the pattern"
head -c 200 "$T/base.json" >"$T/cut.json"
run_cbn compare --fail 'wall:+10%' "$T/cut.json" "$T/same.json"
expect_rc 2
grep -q 'not valid JSON' "$ERRF" || fail "no 'not valid JSON' message"
sed 's/"schema_version":[[:space:]]*5/"schema_version":6/' "$T/base.json" >"$T/v6.json"
grep -q '"schema_version":6' "$T/v6.json" || fail "could not rewrite schema_version"
run_cbn compare --fail 'wall:+10%' "$T/v6.json" "$T/same.json"
expect_rc 2
grep -q 'baseline was written by schema 6; this cbottleneck reads 1 to 5' "$ERRF" ||
	fail "no schema mismatch message"
# schema 2 only added "memory", 3 only "steps", 4 only "waiting", 5 only
# "programs" and keys inside the others: a version 1 baseline is still read
sed 's/"schema_version":[[:space:]]*5/"schema_version":1/' "$T/base.json" >"$T/v1.json"
run_cbn compare --fail 'wall:+1000%' "$T/v1.json" "$T/same.json"
expect_rc 0
run_cbn compare "$T/base.json"
expect_rc 2

# The one-step form, `cbottleneck --baseline B --fail EXPR -- prog`.
if ! "$CBN" --help 2>&1 | grep -q -- '--baseline'; then
	note "launcher has no --baseline yet: one-step gate not checked"
	exit 0
fi
run_cbn --baseline "$T/base.json" --fail 'func[heavy].self:+25%' -- "$EXAMPLES/split" 0.4 3
expect_rc 0
run_cbn --baseline "$T/base.json" --fail 'func[heavy].self:+25%' -- "$EXAMPLES/split" 0.7 6
expect_rc 1
cat "$OUTF" "$ERRF" | grep -Eq '^func\[heavy\]\.self .*FAIL$' || fail "no FAIL row from --baseline"
run_cbn --baseline "$T/base.json" --fail 'gpu.kernels:+0' -- "$EXAMPLES/split" 0.1 3
expect_rc 3
# A bad expression is refused before the program runs.
run_cbn --baseline "$T/base.json" --fail 'func[heavy].self:+25' -- "$EXAMPLES/split" 0.1 3
expect_rc 2
! grep -q 'split: done' "$OUTF" || fail "the program ran although the gate expression was bad"
exit 0
