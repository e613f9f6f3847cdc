# ctl.bash — helpers of the tests/e2e/ctl_*.sh tests (source it after
# common.bash): run examples/ctl_loop under the launcher in the background,
# call `cbottleneck ctl` and check its exit status and answer, read the
# CAPTURE records of a session file (ctl_records.py).
need_example ctl_loop
command -v python3 >/dev/null || skip "python3 not installed"
RECORDS=$CBN_SOURCE_DIR/tests/e2e/lib/ctl_records.py

# start_loop NAME ARGS...: run ctl_loop (up to 20 s, until $T/NAME.stop
# exists; LOOP_MODE=thread: in a thread, main calls pthread_exit) under the
# launcher in the background; sets PID (the program's) and BG (the launcher's).
start_loop()
{
	local name=$1 i
	shift
	# made here: the background job's redirection may come after the
	# first read below
	: >"$T/$name.out"
	"$CBN" -q -o "$T/$name" "$@" -- "$EXAMPLES/ctl_loop" 20 "$T/$name.stop" 10 \
		${LOOP_MODE:-} >"$T/$name.out" 2>"$T/$name.err" &
	BG=$!
	PID=
	for i in $(seq 100); do
		PID=$(sed -n 's/^ctl_loop: pid //p' "$T/$name.out")
		[ -n "$PID" ] && break
		sleep 0.05
	done
	[ -n "$PID" ] || { kill "$BG"; fail "$name: ctl_loop did not start: $(cat "$T/$name.err")"; }
}

# stop_loop NAME: let it finish; its launcher must exit 0.
stop_loop()
{
	local i
	touch "$T/$1.stop"
	# A process that outlives its program's threads is a failure, not a hang.
	for i in $(seq 100); do
		kill -0 "$BG" 2>/dev/null || break
		sleep 0.05
	done
	if kill -0 "$BG" 2>/dev/null; then
		kill -KILL "$PID"
		fail "$1: the process did not end within 5 s of its last thread"
	fi
	wait "$BG" || fail "$1: the launcher exited $? (stderr: $(cat "$T/$1.err"))"
	grep -q '^ctl_loop: done (stepped)' "$T/$1.out" || fail "$1: ctl_loop did not finish"
}

# ctl ARGS...: run `cbottleneck ctl`; sets RC, CTL_OUT (stdout), CTL_ERR.
ctl()
{
	set +e
	"$CBN" ctl "$@" >"$T/ctl.out" 2>"$T/ctl.err"
	RC=$?
	set -e
	CTL_OUT=$(<"$T/ctl.out")
	CTL_ERR=$(<"$T/ctl.err")
}

# expect_ctl RC REGEX ARGS...: exit status RC and stdout (0) or stderr matching.
expect_ctl()
{
	local rc=$1 re=$2 text
	shift 2
	ctl "$@"
	[ "$RC" = "$rc" ] || fail "ctl $*: exit $RC, expected $rc (out: $CTL_OUT; err: $CTL_ERR)"
	if [ "$rc" = 0 ]; then text=$CTL_OUT; else text=$CTL_ERR; fi
	[[ $text =~ $re ]] || fail "ctl $*: '$text' does not match /$re/"
}


# capture_of FILE...: "EVENT CAUSE NAME;" for each CAPTURE record, one line
# per file (one python3 start: they are slow on a loaded machine).
capture_of()
{
	python3 "$RECORDS" "$@" | awk '$1 == "=" { if (n++) print ""; next } { printf "%s %s %s;", $1, $2, $4 } END { print "" }'
}
