#!/bin/bash
# wait_windows — with capture windows every figure of the CPU overview covers
# the windows: examples/step_cold under --schedule records 3 of its 12
# iterations (about a fifth of the run); the overview's span is the windows'
# time (the steps view's window_ns), its single thread's time is inside them
# (not its whole life, which made a program that computes in its windows read
# "84 % off the CPU"), parallel efficiency is CPU over the span, and the header
# and the overview say what they cover.  Without controls, the span is the wall.
. "$(dirname "$0")/lib/common.bash"
need_cbn
need_example step_cold

run_cbn --schedule wait=2,warmup=1,active=3 --json "$T/w.json" -- "$EXAMPLES/step_cold" 0.3
expect_rc 0
grep_out '^  Span:       every figure below covers the capture windows \('
grep_out '^CPU overview \(inside the capture windows\)$'
grep_out '^  Span +[0-9.]+m?s captured of the [0-9.]+m?s run$'
python3 - "$T/w.json" <<'PY' || fail "the overview does not cover the capture windows"
import json, sys
d = json.load(open(sys.argv[1]))
w, cap = d["waiting"], d["steps"]["capture"]
print("span %d, windows %d, wall %d, thread %d, cpu %d" %
      (w["span_ns"], cap["window_ns"], w["wall_ns"], w["thread_ns"], w["cpu_ns"]), file=sys.stderr)
assert w["windowed"] and cap["controlled"]
assert abs(w["span_ns"] - cap["window_ns"]) <= 0.01 * cap["window_ns"], "span is not the windows"
assert w["span_ns"] < 0.6 * w["wall_ns"], "3 of 12 iterations are not most of the run"
assert w["threads"] == 1, "the agent's threads counted as the program's"
assert w["thread_ns"] <= 1.01 * w["span_ns"], "thread time outside the windows"
eff = (w["cpu_ns"] - w["activities"]["spin"]) / w["span_ns"]
assert abs(w["efficiency"] - min(eff, 1.0)) < 0.01, (w["efficiency"], eff)
assert abs(sum(w["shares"].values()) - 1) < 0.001, w["shares"]
PY

run_cbn --json "$T/a.json" -- "$EXAMPLES/step_cold" 0.1
expect_rc 0
grep_out '^CPU overview$'
python3 - "$T/a.json" <<'PY' || fail "without controls the span is not the wall"
import json, sys
w = json.load(open(sys.argv[1]))["waiting"]
assert not w["windowed"] and w["span_ns"] == w["wall_ns"], w
PY
exit 0
