#!/bin/bash
# attach_refusals — refusals of `dump` and `--pid` (docs/attach.md,
# "Refusals and exit status") not tested with the rest in attach_dump.sh and
# attach_record.sh.  A process that exits while they attach to it: the
# moment cannot be chosen from outside, so processes that end 0 to 150 ms
# after they start (one thread, or five) are attached to at once, and each
# outcome must be a documented one: exit 3 with one line (no process, has
# exited, exited while attaching), or, when the process was read before it
# ended, 0 with its stacks (dump) or `process exited after` and a report
# (--pid); never another status, and never a session directory left in
# TMPDIR.  The same for processes attached to in the middle of execve.
# Also --pid on a process that has exited but is not reaped, and both on a
# kernel thread.
. "$(dirname "$0")/lib/common.bash"
need_cbn
need_example threads
. "$(dirname "$0")/lib/attach.bash"

mkdir "$T/tmp"
export TMPDIR=$T/tmp
declare -A seen=()

# check WHAT: the last outcome ($RC, $OUTF, $ERRF) is a documented one.
check()
{
	local what=$1 lines
	lines=$(grep -vc 'attaching to process' "$ERRF" || true)
	case $RC in
	3)
		[ "$lines" = 1 ] || fail "$what: exit 3 with $lines lines on stderr (besides 'attaching'), want 1"
		grep -Eq ": (no process [0-9]+|process [0-9]+ has exited .*|process [0-9]+ exited while cbottleneck attached)$" "$ERRF" ||
			fail "$what: exit 3 without a documented line: $(cat "$ERRF")"
		;;
	0)
		if [ "$what" = dump ]; then
			grep -q '^Process [0-9]*: ' "$OUTF" || fail "dump: exit 0 without a Process line"
		else
			grep -q 'process exited after' "$ERRF" || fail "--pid: exit 0 without 'process exited after'"
			grep -q 'Attached:' "$OUTF" || fail "--pid: exit 0 without a report"
		fi
		;;
	*) fail "$what: exit $RC, want 0 or 3" ;;
	esac
	[ -z "$(ls -A "$T/tmp")" ] || fail "$what: left behind in TMPDIR: $(ls -A "$T/tmp")"
	seen["$what $RC"]=1
}

for ms in 0 5 10 20 40 80 150; do
	for prog in sleep threads; do
		for what in dump --pid; do
			if [ "$prog" = sleep ]; then
				sleep "0.$(printf %03d "$ms")" &
			else
				"$EXAMPLES/threads" "0.$(printf %03d "$ms")" >/dev/null &
			fi
			pid=$!
			# Past its exec (a process in the middle of execve is
			# another race: its maps change under the reader).
			while read -r comm <"/proc/$pid/comm" 2>/dev/null && [ "$comm" != "$prog" ]; do
				:
			done
			if [ "$what" = dump ]; then
				OUTF=$T/dump.out ERRF=$T/dump.err RC=0
				"$CBN" dump "$pid" >"$OUTF" 2>"$ERRF" || RC=$?
			else
				run_cbn --pid "$pid"
			fi
			wait "$pid" 2>/dev/null || true
			check "$what"
		done
	done
done
note "outcomes seen: ${!seen[*]}"

# A process in the middle of execve (a shell that execs the program 0 to 9
# ms after it starts), attached to at once: its modules are read again once
# it is through (it was refused with 125 "cannot read the modules", or
# libdwfl aborted on an architecture guessed from a half-read module).
seen=()
for i in $(seq 0 19); do
	bash -c "sleep 0.00$((i % 10)); exec '$EXAMPLES/threads' 0.1" >/dev/null &
	pid=$!
	if [ $((i % 2)) = 0 ]; then
		what=dump OUTF=$T/dump.out ERRF=$T/dump.err RC=0
		"$CBN" dump "$pid" >"$OUTF" 2>"$ERRF" || RC=$?
	else
		what=--pid
		run_cbn --pid "$pid"
	fi
	wait "$pid" 2>/dev/null || true
	check "$what"
done
note "outcomes seen across execve: ${!seen[*]}"

# Exited, not reaped.
zombie_start
run_cbn --pid "$zombie"
kill "$parent" 2>/dev/null || true
expect_rc 3
grep -qx "cbottleneck: --pid: process $zombie has exited (its parent has not reaped it yet)" "$ERRF" ||
	fail "--pid on a zombie: no 'has exited' line"
[ -z "$(ls -A "$T/tmp")" ] || fail "--pid on a zombie: left behind in TMPDIR"

# A kernel thread: kthreadd is pid 2 unless in a pid namespace of our own.
if [ "$(cat /proc/2/comm 2>/dev/null)" = kthreadd ]; then
	OUTF=$T/k.out ERRF=$T/k.err RC=0
	"$CBN" dump 2 >"$OUTF" 2>"$ERRF" || RC=$?
	expect_rc 125
	grep -qx 'cbottleneck: dump: process 2 is a kernel thread: it runs no user code to read' "$ERRF" ||
		fail "dump of a kernel thread: no line saying so"
	run_cbn --pid 2
	expect_rc 125
	grep -qx 'cbottleneck: --pid: process 2 is a kernel thread: it runs no user code to read' "$ERRF" ||
		fail "--pid on a kernel thread: no line saying so"
else
	note "pid 2 is not kthreadd here (a pid namespace): the kernel thread's refusal not tested"
fi
exit 0
