#!/bin/bash
# cpu_overhead_apart — the profiler's own work is never the program's: no
# frame of cbottleneck's libraries (the thread-start trampoline, allocation
# hooks, the unwinder) in any stack, function row, folded line or source
# line; samples in its own code are counted apart, on the header's "Profiler
# overhead" line (-v) and in JSON run.profiler_overhead; no debug-info advice about
# its libraries.
. "$(dirname "$0")/lib/common.bash"
need_cbn
need_example threads mem_leak

ours_absent()
{
	python3 - "$1" "$2" <<'PY' || fail "$3: a frame of cbottleneck's own"
import json, sys
d = json.load(open(sys.argv[1]))
bad = [f for f in d["functions"] if f["module"].startswith(("libcbottleneck", "libcbn_"))]
assert not bad, bad[:5]
for line in open(sys.argv[2]):
    assert "libcbottleneck" not in line and "libcbn_" not in line, line
    for name in ("threads_trampoline", "mem_record", "memtable_", "unwind_", "cbn_agent_"):
        assert name not in line, line
o = d["run"]["profiler_overhead"]
assert o["cpu_ns"] == o["program_threads_ns"] + o["helper_threads_ns"] + o["handler_ns"] + o["startup_ns"] + o["launcher_ns"], o
assert o["handler_ns"] > 0, o
print("# overhead %s" % o, file=sys.stderr)
PY
}

# Threads start through the agent's trampoline: not at the root of their stacks.
run_cbn -v --json "$T/t.json" --folded "$T/t.folded" -- "$EXAMPLES/threads"
expect_rc 0
ours_absent "$T/t.json" "$T/t.folded" threads
grep -Eq '(^|;)start_thread;worker;worker_spin' "$T/t.folded" ||
	fail "a worker's stack does not go start_thread -> worker: $(grep -m1 worker "$T/t.folded")"
grep_out '^  Profiler overhead: [0-9.]+(ns|us|ms|s) \([0-9.]+% of the program.s CPU: .* in the sampling handler'

# Every allocation recorded: the hooks' bookkeeping is the profiler's CPU.
run_cbn -v --memory --memory-rate 1 --json "$T/m.json" --folded "$T/m.folded" -- "$EXAMPLES/mem_leak"
expect_rc 0
ours_absent "$T/m.json" "$T/m.folded" mem_leak
python3 - "$T/m.json" <<'PY' || fail "mem_leak: no overhead counted in the hooks"
import json, sys
o = json.load(open(sys.argv[1]))["run"]["profiler_overhead"]
assert o["program_threads_samples"] > 0 and o["program_threads_ns"] > 0, o
PY
grep -q 'libcbn\|libcbottleneck' "$OUTF" && fail "the report names one of cbottleneck's libraries: $(grep -m3 'libcbn\|libcbottleneck' "$OUTF")"
exit 0
