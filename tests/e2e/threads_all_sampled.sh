#!/bin/bash
# threads_all_sampled — every thread that runs gets samples, also on a loaded
# machine: examples/threads (workers of 27, 54, 81 and 108 ms of CPU at scale
# 0.3) four times beside two busy loops.  New threads used to start on a POSIX
# CPU timer, which on a loaded Linux 6.18 sometimes expired and never fired:
# one worker of the five threads had no sample in 5 to 15 % of such runs
# (docs/agent.md, "new thread").  Each thread must have samples in every run.
. "$(dirname "$0")/lib/common.bash"
need_cbn
need_example threads

busy=()
for _ in 1 2; do
	sh -c 'while :; do :; done' &
	busy+=($!)
done
trap 'kill "${busy[@]}" 2>/dev/null; rm -rf "$T"' EXIT

for run in 1 2 3 4; do
	run_cbn -F 999 --json "$T/r$run.json" -- "$EXAMPLES/threads" 0.3
	expect_rc 0
	out=$(json_py "$T/r$run.json" '" ".join("%s=%d" % (t["name"], t["samples"]) for t in d["threads"])')
	note "run $run: $out"
	n=$(json_py "$T/r$run.json" 'len(d["threads"])')
	[ "$n" = 5 ] || fail "run $run: $n threads, expected 5 ($out)"
	json_py "$T/r$run.json" 'all(t["samples"] > 0 for t in d["threads"])' | grep -qx True ||
		fail "run $run: a thread has no sample ($out)"
done
exit 0
