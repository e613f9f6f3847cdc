#!/bin/bash
# attach_dump_many — `cbottleneck dump PID` of a CPython process with 200
# threads parked in threading.Event.wait() and one spinning: every thread of
# /proc/PID/task is listed once, each parked one with its Python frames
# (parked() under Thread.run), none "not read".  Completeness only: how
# long it takes is measured in docs/attach.md, not asserted here.
. "$(dirname "$0")/lib/common.bash"
need_cbn
. "$(dirname "$0")/lib/python.bash"
PY=$(py_find 3.12 || py_find 3.11 || py_find 3.13) ||
	skip "no CPython 3.11-3.13 here (looked for /usr/bin/python3.1x, pyenv's versions)"
note "testing $PY"

cat >"$T/many.py" <<'EOF'
import sys, threading, time
stop = threading.Event()
def parked():
    stop.wait()
def spinning():
    s = 0
    while not stop.is_set():
        for i in range(10000):
            s += i * i
ts = [threading.Thread(target=parked, name="parked-%d" % i) for i in range(200)]
ts.append(threading.Thread(target=spinning, name="spinning"))
for t in ts:
    t.start()
print("ready", flush=True)
time.sleep(60)
stop.set()
EOF
"$PY" "$T/many.py" >"$T/many.out" 2>&1 &
prog=$!
trap 'kill "$prog" 2>/dev/null; rm -rf "$T"' EXIT
for _ in $(seq 200); do grep -q ready "$T/many.out" && break; sleep 0.05; done
grep -q ready "$T/many.out" || fail "the 200-thread program did not start: $(cat "$T/many.out")"

OUTF=$T/dump.out ERRF=$T/dump.err
RC=0
t0=$(date +%s%N)
"$CBN" dump "$prog" >"$OUTF" 2>"$ERRF" || RC=$?
t1=$(date +%s%N)
ls "/proc/$prog/task" | sort -n >"$T/tasks"
kill -0 "$prog" 2>/dev/null || fail "the program did not survive the dump"
expect_rc 0
note "dump of $(wc -l <"$T/tasks") threads: $(((t1 - t0) / 1000000)) ms"

[ "$(wc -l <"$T/tasks")" = 202 ] || fail "the program has $(wc -l <"$T/tasks") threads, want 202"
sed -n 's/^Thread \([0-9]*\) .*/\1/p' "$OUTF" | sort -n >"$T/listed"
diff "$T/tasks" "$T/listed" >"$T/diff" ||
	fail "the threads listed are not those of /proc/$prog/task: $(head -5 "$T/diff")"
# Each parked thread: its own function and Thread.run, from the Python frames.
n=$(awk '/^Thread /{ t = $0 } /^    parked \(.*many\.py:[0-9]+\)$/ { p[t] = 1 }
	/^    Thread\.run \(/ { if ((t in p) && !(t in r)) { r[t] = 1; k++ } } END { print k + 0 }' "$OUTF")
[ "$n" = 200 ] || fail "parked() under Thread.run in $n threads, want 200"
# The spinning thread may be given no CPU for the sample's 500 ms on a
# loaded machine (listed "not read", with why); no other thread may.
unread=$(grep -c '^Thread .*: not read' "$OUTF" || true)
[ "$unread" -le 1 ] || fail "$unread threads not read: $(grep -m3 'not read' "$OUTF")"
if [ "$unread" = 0 ]; then
	grep -q '^    spinning (.*many\.py:[0-9]*)' "$OUTF" ||
		fail "the spinning thread's spinning() is missing"
else
	note "one thread not read: $(grep -m1 'not read' "$OUTF")"
fi
exit 0
