#!/bin/bash
# steps_export — steps in the JSON report, the trace and the gate, end to end
# on examples/step_cold (12 steps marked with CBN_STEP(), steps 0 and 1 about
# 10x slower): the steps object (12 steps numbered 0..11, the two cold ones
# the slowest, the cold-start rule, the schema), one ProfilerStep#N slice per
# step on the process's Steps lane; under --schedule wait=1,warmup=1,active=3,
# repeat=2 only steps 2-4 and 7-9, in two windows the schedule opened, with a
# Capture lane, gated in the same run (--baseline) against the first: fewer
# steps fail step.count; and compare: pass on the same report, fail on fewer
# steps, exit 2 on a baseline without steps and 3 ("could not measure") on a
# current run without them.
. "$(dirname "$0")/lib/common.bash"
need_cbn
[ -x "$EXAMPLES/step_cold" ] ||
	skip "examples/step_cold is not built (it comes with the steps analysis)"
need_example split
need_python_jsonschema
CHECK="python3 $CBN_SOURCE_DIR/tests/e2e/export_check.py"

# every step, no controls
run_cbn -q --json "$T/all.json" --trace "$T/all.trace.json" -- "$EXAMPLES/step_cold"
expect_rc 0
validate_schema "$T/all.json"
$CHECK trace "$T/all.trace.json" >"$T/chk" || fail "trace check: $(cat "$T/chk")"
python3 - "$T/all.json" "$T/all.trace.json" <<'PY' || fail "step_cold: steps in JSON or trace"
import json, sys
d = json.load(open(sys.argv[1]))
s = d["steps"]
assert d["schema_version"] == 5
assert s["source"] == "marker", s["source"]
# 12 steps; a 13th when the example marks the end of its loop too
assert s["count"] == len(s["steps"]) and s["count"] in (12, 13), s["count"]
nums = [x["number"] for x in s["steps"]]
# the n-th cbn_step() starts step n (ProfilerStep#n, as torch numbers them)
assert nums == list(range(1, s["count"] + 1)), nums
dur = [x["duration_ns"] for x in s["steps"]]
assert s["min_ns"] <= s["median_ns"] <= s["p90_ns"] <= s["max_ns"]
assert s["total_ns"] == sum(dur)
# iterations 0 and 1 (steps 1 and 2) about 10x the others: over 4x the median, with a wide margin
assert dur[0] > 4 * s["median_ns"] and dur[1] > 4 * s["median_ns"], dur
slow = [x["number"] for x in s["slowest"]]
assert sorted(slow[:2]) == [1, 2], slow
assert s["cold"]["found"] and s["cold"]["ratio"] > 4, s["cold"]
assert not s["capture"]["controlled"]
# relative to the start of the run, not absolute clock readings
assert all(x["start_ns"] + x["duration_ns"] <= d["run"]["wall_ns"] * 1.05 + 5e6
           for x in s["steps"])
# the trace: ProfilerStep#1..#12 as Kineto, on one lane named Steps
t = json.load(open(sys.argv[2]))["traceEvents"]
ps = [e for e in t if e.get("ph") == "X" and e.get("name", "").startswith("ProfilerStep#")]
assert sorted(int(e["name"][13:]) for e in ps) == nums, [e["name"] for e in ps]
assert all(e["cat"] == "user_annotation" for e in ps)
lanes = {(e["pid"], e["tid"]) for e in ps}
assert len(lanes) == 1, lanes
names = [e["args"]["name"] for e in t if e.get("ph") == "M" and e.get("name") == "thread_name"
         and (e["pid"], e["tid"]) in lanes]
assert names == ["Steps"], names
for e in ps:
    n = int(e["name"][13:])
    assert abs(e["dur"] * 1000 - dur[n - 1]) <= 1000, (e, dur[n - 1])
assert not [e for e in t if e.get("cat") == "capture"]
PY

# a schedule: 2 windows of 3 active steps (2-4, 7-9); gated in the same run
# against the first (--baseline): fewer steps fail step.count
run_cbn -q --schedule wait=1,warmup=1,active=3,repeat=2 --json "$T/sched.json" \
	--trace "$T/sched.trace.json" --baseline "$T/all.json" --fail 'step.count:-0' \
	--warn 'step.median:+400%' -- "$EXAMPLES/step_cold"
expect_rc 1
grep_out '^step\.count .*FAIL'
grep_out '^step\.median '
validate_schema "$T/sched.json"
$CHECK trace "$T/sched.trace.json" >"$T/chk" || fail "trace check: $(cat "$T/chk")"
python3 - "$T/sched.json" "$T/sched.trace.json" <<'PY' || fail "step_cold --schedule: steps"
import json, sys
d = json.load(open(sys.argv[1]))
s = d["steps"]
nums = [x["number"] for x in s["steps"]]
assert nums == [2, 3, 4, 7, 8, 9], nums
assert s["count"] == 6
c = s["capture"]
assert c["controlled"]
w = c["windows"]
assert len(w) == 2, w
assert [x["first_step"] for x in w] == [2, 7], w
assert all(x["open_cause"] == "schedule" for x in w), w
assert all(x["start_ns"] < x["end_ns"] for x in w)
assert 0 < c["window_ns"] <= d["run"]["wall_ns"]
t = json.load(open(sys.argv[2]))["traceEvents"]
ps = sorted(int(e["name"][13:]) for e in t
            if e.get("ph") == "X" and e.get("name", "").startswith("ProfilerStep#"))
assert ps == nums, ps
cap = [e for e in t if e.get("ph") == "X" and e.get("cat") == "capture"]
assert len(cap) == 2 and all(e["name"] == "Capture" for e in cap), cap
assert [e["args"]["first_step"] for e in sorted(cap, key=lambda e: e["ts"])] == [2, 7]
PY

# the gate
run_cbn compare --fail 'step.median:+10%' --fail 'step.p90:+10%' --fail 'step.count:-0' \
	"$T/all.json" "$T/all.json"
expect_rc 0
grep_out '^step\.median '
grep_out '^step\.count '
run_cbn compare --fail 'step.count:-0' "$T/all.json" "$T/sched.json"
expect_rc 1
grep_out '^step\.count .*FAIL'
run_cbn -q --json "$T/nosteps.json" -- "$EXAMPLES/split" 0.1
expect_rc 0
python3 -c 'import json,sys; sys.exit("steps" in json.load(open(sys.argv[1])))' \
	"$T/nosteps.json" || fail "a run without steps has a steps object"
run_cbn compare --fail 'step.median:+10%' "$T/nosteps.json" "$T/all.json"
expect_rc 2
grep -q 'no steps in the baseline' "$ERRF" || fail "no 'no steps in the baseline' message"
run_cbn compare --fail 'step.median:+10%' "$T/all.json" "$T/nosteps.json"
expect_rc 3
grep_out 'could not measure: no steps in the current run'
exit 0
