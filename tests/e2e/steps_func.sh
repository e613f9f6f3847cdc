#!/bin/bash
# steps_func — --step-func finds each call as a step (docs/steps.md): a
# Python loop of 12 iterations that sleep 20 ms and then call
# process_batch() (15 ms of CPU, 45 ms in iteration 5;
# tests/python/steps_loop.py).  The run records the off-CPU looks that see
# the sleep outside the function: 12 steps, never fewer (no two calls
# merged into one); the time between calls is said and in no step; the 3x
# call is the one slow step; the precision line says how the ends were
# found.  The same session re-read without the looks' help would still not
# merge calls: a session recorded without --step-func, read with it, falls
# back on the stretches off the CPU.  On a loaded machine, where a return
# cannot be told from a wait for a CPU, the report says so (loaded below;
# tests/unit/test_steps.c checks each rule on a built profile).
# ctest-labels: sanitize serial (the ASan+UBSan stage of .ci/run runs it;
# alone: under ASan the launcher's off-CPU looks, which tell a call's end,
# run slower, and another test beside it made them miss a sleep between
# two calls: 10 or 11 steps, one run in four with two busy loops beside it)
. "$(dirname "$0")/lib/common.bash"
. "$(dirname "$0")/lib/python.bash"
need_cbn
py_need 3.11
LOOP="$CBN_SOURCE_DIR/tests/python/steps_loop.py"

# check JSON: 12 or 13 steps (a call is never merged with the next; a
# preempted one may at worst be cut in two without looks), one step with
# over 1.6x the median CPU (the 3x call, and no merged pair), and it is
# among the slow steps listed (a preempted call on a loaded machine may join
# it: durations are wall time)
check()
{
	python3 - "$1" "$2" <<'PY' || fail "$2: the steps of process_batch"
import json, sys
s = json.load(open(sys.argv[1]))["steps"]
cpu = sorted(x["cpu_ns"] for x in s["steps"])
med = cpu[len(cpu) // 2]
big = [x for x in s["steps"] if x["cpu_ns"] > 1.6 * med]
print("# %s: %d steps, CPU median %.1f ms, big %s, slowest %s, between %.0f ms" % (
    sys.argv[2], s["count"], med / 1e6, [(x["number"], x["cpu_ns"] / 1e6) for x in big],
    [x["number"] for x in s["slowest"]], s["between_ns"] / 1e6), file=sys.stderr)
assert s["source"] == "function" and 12 <= s["count"] <= 13, s["count"]
assert len(big) == 1 and 2.2 <= big[0]["cpu_ns"] / med <= 4.0, big
assert big[0]["number"] in [x["number"] for x in s["slowest"]], s["slowest"]
# the sleeps between the calls (12 x 20 ms) are in no step
assert s["between_ns"] >= 11 * 15e6, s["between_ns"]
assert s["counts"].startswith("one call of process_batch on thread "), s["counts"]
PY
}

# On a loaded machine the report may not be able to tell a call's return
# from a wait for a CPU (the off-CPU sampler fell behind, the thread mostly
# waited for a CPU, the load at start was the CPUs'): then it says so, in
# the precision line or, with fewer than two steps left, in Data quality,
# and never shows more steps than calls
loaded()
{
	python3 - "$1" "$2" <<'PY' || fail "$2: a loaded machine, and the report did not say so"
import json, sys
r = json.load(open(sys.argv[1]))
s, w = r.get("steps"), r.get("warnings") or []
why = "no stretch off the CPU ends a call"
if s is None or s["source"] != "function":
    n = [x for x in w if x.startswith("--step-func process_batch: its samples on thread ")]
    assert n and why in n[0], w
else:
    assert why in s["precision"] and 2 <= s["count"] <= 12, (s["count"], s["precision"])
print("# %s: a loaded machine: %s" % (sys.argv[2], s and s["precision"] or w[-1]), file=sys.stderr)
PY
}

run_cbn --step-func process_batch --json "$T/r.json" -o "$T/s" -- "$PY" "$LOOP"
expect_rc 0
grep_out '^steps_loop: 12 calls, done$'
# the run turned the off-CPU looks on for it
grep_out '^  Off-CPU:    recorded at 100 Hz'
if grep -q 'no stretch off the CPU ends a call' "$OUTF"; then
	grep_out 'the off-CPU sampler fell behind, its looks [0-9.]+ ms late on average'
	loaded "$T/r.json" run
else
	grep_out '^Steps: 1[23] from function process_batch \(found on the samples\)$'
	grep_out '^  each step: one call of process_batch on thread [0-9]+ \(.*\), from its first sample to its end; the [0-9.]+ms between steps are in none$'
	grep_out '^  precision: each edge is known to one sampling period \(1.001 ms\) of the thread.s CPU: .* by the off-CPU sampler finding the thread blocked outside it'
	check "$T/r.json" run
fi

# a session without the looks: the stretches off the CPU end the calls
run_cbn -o "$T/plain" -- "$PY" "$LOOP"
expect_rc 0
run_cbn report --step-func process_batch --json "$T/p.json" "$T/plain"
expect_rc 0
if grep -q 'no stretch off the CPU ends a call' "$OUTF"; then
	loaded "$T/p.json" report
else
	grep_out 'by a stretch of over 10 ms off the CPU'
	check "$T/p.json" report
fi
exit 0
