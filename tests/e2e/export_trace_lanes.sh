#!/bin/bash
# export_trace_lanes — --trace on multi-thread and multi-process runs: one
# named CPU lane per sampled thread (worker-1..worker-4), both processes of forkexec
# (the exec'd split shows its functions), strict nesting everywhere, and
# --trace-window keeping only events inside the window.
. "$(dirname "$0")/lib/common.bash"
need_cbn
need_example threads forkexec split
"$CBN" --help 2>&1 | grep -q -- '--trace-window' || fail "--help does not mention --trace-window"
CHECK="python3 $CBN_SOURCE_DIR/tests/e2e/export_check.py"

run_cbn -F 250 --json "$T/threads.r.json" --trace "$T/threads.json" -- "$EXAMPLES/threads" "$SCALE"
expect_rc 0
$CHECK trace "$T/threads.json" --names worker_spin >"$T/threads.out" || fail "threads trace is malformed"
# A lane per thread that has samples (on a loaded machine the shortest worker
# can get none: CPU timers fire at the tick), and at least three workers.
sampled=$(json_py "$T/threads.r.json" '" ".join(t["name"] for t in d["threads"] if t["samples"] > 0 and t["name"].startswith("worker-"))')
[ "$(echo "$sampled" | wc -w)" -ge 3 ] || fail "fewer than three workers sampled: $sampled"
for w in $sampled; do
	grep -q "\"$w\"" "$T/threads.out" || fail "no lane named $w: $(grep threads= "$T/threads.out")"
done

run_cbn -F 250 --trace "$T/fe.json" -- "$EXAMPLES/forkexec" "$SCALE"
expect_rc 0
$CHECK trace "$T/fe.json" --names parent_work,heavy >"$T/fe.out" || fail "forkexec trace is malformed"
python3 - "$T/fe.json" <<'PY' || fail "forkexec trace does not show two processes"
import json, sys
d = json.load(open(sys.argv[1]))
pids = {e["pid"] for e in d["traceEvents"] if e.get("cat") == "cpu_sample"}
sys.exit(0 if len(pids) >= 2 else 1)
PY

# a window in the middle of a 0.6 s run: everything inside it, something there
# (half a second wide, so a loaded machine still runs split in it)
run_cbn -F 250 --trace "$T/w.json" --trace-window 100ms:600ms -- "$EXAMPLES/split" 0.6
expect_rc 0
$CHECK trace "$T/w.json" --window 100000:600000 >"$T/w.out" || fail "windowed trace is malformed or leaks outside the window"
grep -q '^ok lanes=[1-9]' "$T/w.out" || fail "windowed trace is empty: $(cat "$T/w.out")"

# bad windows are usage errors
run_cbn --trace "$T/x.json" --trace-window 3s:1s -- "$EXAMPLES/split" 0.1
expect_rc 2
exit 0
