#!/bin/bash
# attach_signals — a signal to `cbottleneck --pid` at any phase leaves no
# private session directory behind (TMPDIR/cbottleneck-XXXXXX) and the
# attached process alive and its own: one SIGINT or SIGTERM while attached
# detaches and reports (status 0); one while the report is written (held
# there by a --json FIFO nobody opens) ends the launcher with that signal
# (130, 143); two in a row, the second while it detaches or reports, end it
# the one way or the other; an -o DIR is kept (docs/attach.md).
. "$(dirname "$0")/lib/common.bash"
need_cbn
need_example threads

mkdir "$T/tmp"
export TMPDIR=$T/tmp
"$EXAMPLES/threads" 200 >"$T/prog.out" 2>&1 &
prog=$!
trap 'kill "$prog" 2>/dev/null; rm -rf "$T"' EXIT
sleep 0.3
tasks0=$(ls "/proc/$prog/task" | wc -l)

# The launcher in the background (a background job of a script starts with
# SIGINT ignored: the launcher takes it all the same); $cbn its pid.
start()
{
	OUTF=$T/out.$1 ERRF=$T/err.$1
	shift
	"$CBN" "$@" --pid "$prog" >"$OUTF" 2>"$ERRF" &
	cbn=$!
}

# wait_for PATTERN: until the launcher's stderr says it (10 s at most).
wait_for()
{
	local i
	for i in $(seq 100); do
		grep -q "$1" "$ERRF" && return 0
		sleep 0.1
	done
	fail "no '$1' line in 10 s"
}

# finish WANT...: the launcher's status is one of WANT, no session directory
# is left in TMPDIR, and the attached process runs on with its threads.
finish()
{
	local rc=0 w
	wait "$cbn" || rc=$?
	for w in "$@"; do
		[ "$rc" = "$w" ] && break
	done
	[ "$rc" = "$w" ] || fail "status $rc, want one of: $*"
	[ -z "$(ls -A "$T/tmp")" ] || fail "left behind in TMPDIR: $(ls -A "$T/tmp")"
	kill -0 "$prog" 2>/dev/null || fail "the attached process did not survive"
	[ "$(ls "/proc/$prog/task" | wc -l)" = "$tasks0" ] || fail "the process's threads changed"
	RC=$rc
}

# While attached: one signal detaches and reports.
for sig in INT TERM; do
	start "att$sig"
	wait_for 'attaching to process'
	sleep 0.5
	kill -s "$sig" "$cbn"
	finish 0
	grep -q 'detached after' "$ERRF" || fail "SIG$sig while attached: no 'detached' line"
	grep -q 'worker_spin' "$OUTF" || fail "SIG$sig while attached: no report"
done

# While reporting: the report waits for a reader of its --json FIFO.
mkfifo "$T/r.json"
for sig in INT TERM; do
	start "rep$sig" --duration 0.5 --json "$T/r.json"
	wait_for 'detached after'
	sleep 0.3
	kill -0 "$cbn" 2>/dev/null || fail "SIG$sig while reporting: the report did not wait for its FIFO"
	kill -s "$sig" "$cbn"
	case $sig in
	INT) finish 130 ;;
	TERM) finish 143 ;;
	esac
done

# Two in a row: the second comes while it detaches or reports (130), or the
# two arrive as one (0: reported).
for gap in 0.01 0.05 0.2; do
	start "two$gap"
	wait_for 'attaching to process'
	sleep 0.3
	kill -INT "$cbn"
	sleep "$gap"
	kill -INT "$cbn" 2>/dev/null || true
	finish 0 130
	note "two SIGINTs $gap s apart: status $RC"
done

# With -o DIR the session is the user's: kept, whatever the signal.
start keep --duration 0.5 --json "$T/r.json" -o "$T/kept"
wait_for 'detached after'
sleep 0.3
kill -INT "$cbn"
finish 130
ls "$T/kept"/*.cbp >/dev/null 2>&1 || fail "-o DIR: its session was not kept"
exit 0
