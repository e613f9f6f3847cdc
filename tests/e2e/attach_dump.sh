#!/bin/bash
# attach_dump — `cbottleneck dump PID` on programs it did not start: every
# thread listed with its name and stack, running threads (a perf sample) and
# blocked ones (/proc/PID/task/TID/syscall) alike, in under a second, and the
# program runs on undisturbed; and the refusals, one line and a documented
# status each: no such process, a process that has exited, a bad PID,
# another user's process (docs/attach.md).
. "$(dirname "$0")/lib/common.bash"
need_cbn
need_example threads wait_lock
. "$(dirname "$0")/lib/attach.bash"

# dump_of PID: the dump into $OUTF/$ERRF, its status in $RC, its wall in $MS.
dump_of()
{
	local t0 t1
	OUTF=$T/dump.out ERRF=$T/dump.err
	t0=$(date +%s%N)
	RC=0
	"$CBN" dump "$@" >"$OUTF" 2>"$ERRF" || RC=$?
	t1=$(date +%s%N)
	MS=$(((t1 - t0) / 1000000))
}

# Running threads: five threads burning CPU in worker_spin / main_spin.
"$EXAMPLES/threads" 30 >"$T/threads.out" 2>&1 &
prog=$!
sleep 0.5
dump_of "$prog"
[ "$RC" = 0 ] || { kill "$prog"; fail "dump of a running program: status $RC"; }
[ "$MS" -lt 1000 ] || note "dump took $MS ms (loaded machine?)"
grep -q "^Process $prog: .*threads 30" "$OUTF" || { kill "$prog"; fail "no Process line"; }
for w in 1 2 3 4; do
	grep -q "^Thread [0-9]* (worker-$w): running" "$OUTF" ||
		{ kill "$prog"; fail "worker-$w not shown running"; }
done
n=$(grep -c '^    worker_spin (.*threads.c:[0-9]*)' "$OUTF")
[ "$n" -ge 3 ] || { kill "$prog"; fail "worker_spin with file:line in $n stacks, want >= 3"; }
grep -A8 "^Thread $prog (threads)" "$OUTF" | grep -q '^    main (.*threads.c' ||
	{ kill "$prog"; fail "the main thread's stack does not reach main"; }
kill -0 "$prog" 2>/dev/null || fail "the program did not survive the dump"
kill "$prog"
wait "$prog" 2>/dev/null || true
note "dump of 5 running threads: $MS ms"

# Blocked threads: main in pthread_join, waiters in the mutex or nanosleep.
"$EXAMPLES/wait_lock" 300 >"$T/wl.out" 2>&1 &
prog=$!
sleep 0.3
dump_of "$prog"
[ "$RC" = 0 ] || { kill "$prog"; fail "dump of a waiting program: status $RC"; }
grep -q "^Thread $prog (wait_lock): waiting in futex" "$OUTF" ||
	{ kill "$prog"; fail "main thread not shown waiting in futex"; }
grep -A12 "^Thread $prog (wait_lock)" "$OUTF" | grep -q '^    main (.*wait_lock.c:[0-9]*)' ||
	{ kill "$prog"; fail "the joining main thread's stack does not reach main"; }
grep -q "^Thread [0-9]* (waiter-1)" "$OUTF" || { kill "$prog"; fail "waiter-1 missing"; }
grep -q "^Thread [0-9]* (holder)" "$OUTF" || { kill "$prog"; fail "holder missing"; }
rc=0
wait "$prog" || rc=$?
[ "$rc" = 0 ] && grep -q 'wait_lock: 300 periods, done' "$T/wl.out" ||
	fail "wait_lock after a dump: status $rc, output $(cat "$T/wl.out")"

# Python: the frames of CPython 3.11-3.13 in place of the evaluation loop's
# (tests/python/workloads.py threads: main joins thread_light while it spins).
. "$(dirname "$0")/lib/python.bash"
if PY=$(py_find 3.11 || py_find 3.12 || py_find 3.13); then
	"$PY" "$WORKLOADS" threads 30 >/dev/null &
	prog=$!
	sleep 1.5
	dump_of "$prog"
	kill "$prog"
	wait "$prog" 2>/dev/null || true
	[ "$RC" = 0 ] || fail "dump of $PY: status $RC"
	grep -q '^Python 3\.1[123]\.' "$OUTF" || fail "no Python version line"
	grep -q "^    spin (.*workloads.py:[0-9]*)" "$OUTF" || fail "the running thread's spin() is missing"
	grep -q "^    thread_light (.*workloads.py:[0-9]*)" "$OUTF" || fail "thread_light() is missing"
	grep -A30 "^Thread $prog " "$OUTF" | grep -q "^    threads (.*workloads.py:[0-9]*)" ||
		fail "the joining main thread's Python frames (threads()) are missing"
	! grep -q '_PyEval_EvalFrameDefault' "$OUTF" || fail "an evaluation-loop frame was not replaced"
else
	note "no CPython 3.11-3.13 here: Python frames not tested"
fi

# Refusals.
sh -c 'exit 0' &
gone=$!
wait "$gone" || true
dump_of "$gone"
[ "$RC" = 3 ] || fail "a pid that does not exist: status $RC, want 3"
grep -qx "cbottleneck: dump: no process $gone" "$ERRF" || fail "no 'no process' line"
[ "$(wc -l <"$ERRF")" = 1 ] || fail "more than one line for a missing pid"

zombie_start
dump_of "$zombie"
kill "$parent" 2>/dev/null || true
[ "$RC" = 3 ] || fail "a process that exited: status $RC, want 3"
grep -q "process $zombie has exited" "$ERRF" || fail "no 'has exited' line"

dump_of notapid
[ "$RC" = 2 ] || fail "a bad pid: status $RC, want 2"
dump_of
[ "$RC" = 2 ] || fail "no pid: status $RC, want 2"

# Another user's process: cbottleneck run as nobody on one of root's.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null &&
	setpriv --reuid=65534 --regid=65534 --clear-groups "$CBN" --version >/dev/null 2>&1; then
	sleep 5 &
	mine=$!
	OUTF=$T/dump.out ERRF=$T/dump.err
	RC=0
	setpriv --reuid=65534 --regid=65534 --clear-groups "$CBN" dump "$mine" >"$OUTF" 2>"$ERRF" ||
		RC=$?
	kill "$mine" || true
	[ "$RC" = 125 ] || fail "another user's process: status $RC, want 125"
	grep -q "process $mine belongs to user 0: run cbottleneck as that user, or as root" "$ERRF" ||
		fail "no line naming the owner"
else
	note "not root, or cbottleneck not runnable as nobody: another user's process not tested"
fi
exit 0
