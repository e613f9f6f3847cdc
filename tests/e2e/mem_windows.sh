#!/bin/bash
# mem_windows — with capture windows the memory peak is the windows' too:
# examples/mem_peak builds its 64 MiB peak at the end of its run; recorded
# for its first 20 ms only (--duration), the peak is the highest live heap
# read inside that window, below the whole run's, and says so.
. "$(dirname "$0")/lib/common.bash"
need_cbn
need_example mem_peak

run_cbn --memory --json "$T/all.json" -- "$EXAMPLES/mem_peak"
expect_rc 0
run_cbn --memory --duration 20ms --json "$T/w.json" -- "$EXAMPLES/mem_peak"
expect_rc 0
grep_out '^  Peak: .*\(exact, inside the capture windows\)'
python3 - "$T/all.json" "$T/w.json" <<'PY' || fail "the peak is not the capture window's"
import json, sys
a, w = (json.load(open(f)) for f in sys.argv[1:3])
ha = [s for s in a["memory"]["spaces"] if s["kind"] == "host"][0]
hw = [s for s in w["memory"]["spaces"] if s["kind"] == "host"][0]
print("whole run %d, window %d" % (ha["peak_bytes"], hw["peak_bytes"]), file=sys.stderr)
assert not ha["peak_in_windows"] and hw["peak_in_windows"]
assert hw["peak_bytes"] < ha["peak_bytes"], (hw["peak_bytes"], ha["peak_bytes"])
# the window opens when the agent starts: its peak is read within its 20 ms
# of that (a loaded machine may give the window no CPU sample, hence no
# waiting object).  peak_s counts from the launch, and a loaded machine
# delays the agent's start: 37 ms seen at load 5, 22 ms at load 1.
assert hw["peak_s"] is None or hw["peak_s"] <= 0.020 + 0.080, hw["peak_s"]
PY
exit 0
