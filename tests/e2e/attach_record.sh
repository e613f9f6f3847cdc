#!/bin/bash
# attach_record — `cbottleneck --pid PID` on a program it did not start:
# the report names the hot functions with their shares, it is marked as
# attached, the outputs are written; it stops at --duration, at SIGINT
# (Ctrl-C) and at the process's exit; the program's output and exit status
# are its own; a CPython program's Python frames; code the program mapped
# from its own file a second time (V8's builtins) named as its own; and
# the refusals (docs/attach.md).
. "$(dirname "$0")/lib/common.bash"
need_cbn
need_example threads recursion syscalls nocfi
. "$(dirname "$0")/lib/attach.bash"

# threads: worker i burns i units in worker_spin, main 1 unit in main_spin,
# so worker_spin holds most of the CPU while all five run.
"$EXAMPLES/threads" 40 >"$T/prog.out" 2>&1 &
prog=$!
sleep 0.3
run_cbn -F 499 --duration 1.5 --json "$T/r.json" --folded "$T/f.txt" --pid "$prog"
kill -0 "$prog" 2>/dev/null || fail "the program did not survive being attached to"
expect_rc 0
grep -q "attaching to process $prog" "$ERRF" || fail "no 'attaching to process' line"
grep -q "^  Attached:   to running process $prog" "$OUTF" || fail "the report is not marked attached"
[ "$(json_get "$T/r.json" run.attached_pid)" = "$prog" ] || fail "JSON run.attached_pid is not $prog"
# The samples stand for the CPU the threads had while attached (a loaded
# machine gives them less, and the samples follow): sampled / measured.
samples=$(json_get "$T/r.json" run.samples)
[ "$samples" -ge 50 ] || fail "only $samples samples in 1.5 s of five busy threads at 499 Hz"
ratio=$(json_py "$T/r.json" 'round(d["run"]["cpu_ns"] / d["run"]["measured_cpu_ns"], 2)')
within "$ratio" 0.95 0.15 || fail "sampled CPU / measured CPU = $ratio, expected 0.95 +- 0.15"
# While all five run, the kernel gives each the same CPU: 4 of 5 shares.
w=$(json_func_field "$T/r.json" worker_spin self_samples)
share=$((100 * w / samples))
within "$share" 80 12 || fail "worker_spin has $share % of the samples, expected 80 +- 12"
grep -q '^clone3;start_thread;worker;worker_spin [0-9]' "$T/f.txt" || fail "no whole worker stack in --folded"
grep -q '^_start;__libc_start_main;__libc_start_call_main;main;main_spin [0-9]' "$T/f.txt" ||
	fail "no whole main stack in --folded"

# Ctrl-C: SIGINT to the launcher detaches and reports.
OUTF=$T/int.out ERRF=$T/int.err
"$CBN" --pid "$prog" >"$OUTF" 2>"$ERRF" &
cbn=$!
sleep 1
kill -INT "$cbn"
rc=0
wait "$cbn" || rc=$?
[ "$rc" = 0 ] || fail "after SIGINT: status $rc"
grep -q 'detached after' "$ERRF" || fail "no 'detached' line after SIGINT"
grep -q 'worker_spin' "$OUTF" || fail "no report after SIGINT"

# The process's exit ends the recording; its output and status are its own.
rc=0
run_cbn --pid "$prog"
wait "$prog" || rc=$?
expect_rc 0
grep -q 'process exited after' "$ERRF" || fail "no 'process exited' line"
[ "$rc" = 0 ] || fail "the program's exit status was $rc after being attached to"
[ "$(cat "$T/prog.out")" = "threads: done" ] || fail "the program's output changed: $(cat "$T/prog.out")"

# Python: a thread of CPython 3.11-3.13 spinning in spin() under thread_light().
. "$(dirname "$0")/lib/python.bash"
# py_spin FOLDED MIN WHAT: the report says the Python frames were read, and
# thread_light;spin holds at least MIN % of the samples of FOLDED.
py_spin() {
	local n all
	expect_rc 0
	grep -q '^  Python:     CPython 3\.1[123]\.[0-9]*: Python frames in' "$OUTF" ||
		fail "$3: the report does not say the Python frames were read"
	n=$(awk '/;thread_light;spin [0-9]+$/ { s += $NF } END { print s + 0 }' "$1")
	all=$(awk '{ s += $NF } END { print s + 0 }' "$1")
	[ "$all" -gt 0 ] && [ $((n * 100 / all)) -ge "$2" ] ||
		fail "$3: thread_light;spin in $n of $all samples, expected >= $2 %"
}
if PY=$(py_find 3.11 || py_find 3.12 || py_find 3.13); then
	attach_to 1 --duration 1.5 --folded "$T/py.txt" -- "$PY" "$WORKLOADS" threads 30
	py_spin "$T/py.txt" 80 "attached to Python"
	# ... and when the process becomes Python by exec while attached (a
	# wrapper script's `exec python3`): the new image's interpreter is
	# looked for at the exec, not only when the attach began
	attach_to 0.1 --duration 1.5 --folded "$T/pyx.txt" -- \
		sh -c "sleep 0.4; exec $PY $WORKLOADS threads 30"
	py_spin "$T/pyx.txt" 60 "exec'd into Python"
else
	note "no CPython 3.11-3.13 here: Python frames not tested"
fi

# Refusals.
run_cbn --pid "$prog"
expect_rc 3
grep -q "no process $prog" "$ERRF" || fail "no 'no process' line for a pid that is gone"
run_cbn --pid "$$" -- /bin/true
expect_rc 2
run_cbn --memory --pid "$$"
expect_rc 2
grep -q -- '--memory cannot be used with --pid' "$ERRF" || fail "no line refusing --memory with --pid"
run_cbn --pid x
expect_rc 2

# Not root: a user attaches to a process of its own (perf_event_paranoid 2
# lets it; the rings come out of its locked-memory allowance) and is refused
# another user's.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null &&
	setpriv --reuid=65534 --regid=65534 --clear-groups "$CBN" --version >/dev/null 2>&1; then
	nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups env TMPDIR=/tmp)
	"${nobody[@]}" "$EXAMPLES/threads" 20 >/dev/null &
	prog=$!
	sleep 0.3
	RC=0
	"${nobody[@]}" "$CBN" --duration 1 --pid "$prog" >"$OUTF" 2>"$ERRF" || RC=$?
	expect_rc 0
	grep -q 'worker_spin' "$OUTF" || fail "no worker_spin when attaching as the process's own user"
	RC=0
	"${nobody[@]}" "$CBN" --duration 1 --pid "$$" >"$OUTF" 2>"$ERRF" || RC=$?
	kill "$prog" 2>/dev/null || true
	wait "$prog" 2>/dev/null || true
	expect_rc 125
	grep -q "process $$ belongs to user 0" "$ERRF" || fail "no line naming the owner"
else
	note "not root, or cbottleneck not runnable as nobody: attaching as another user not tested"
fi
# A stack deeper than the copied part (recursion: ~200 frames of ~100 bytes
# past 16 KiB) stops at the copy's end: marked truncated, counted, and said.
"$EXAMPLES/recursion" 40 >/dev/null 2>&1 &
prog=$!
sleep 0.3
run_cbn --duration 1 --json "$T/deep.json" --pid "$prog"
kill "$prog" 2>/dev/null
expect_rc 0
cut=$(json_get "$T/deep.json" run.truncated)
[ "$cut" -gt 0 ] || fail "no stack of a 200-deep recursion was cut at the copy's end"
grep_out 'samples were cut at the maximum stack depth or, attached, at the end of the stack copied'

# A thread that spends most of its CPU in system calls (syscalls: read of
# /dev/zero): each sample weighs the CPU since the one before (its event's
# count), so the samples stand for all the CPU measured, not only the user
# part; as root its kernel part is sampled and said, as in a launched run
# (docs/attach.md, "How it samples").  With one sample per period and user
# samples only, sampled / measured was about 0.3 here.
"$EXAMPLES/syscalls" 20 >/dev/null 2>&1 &
prog=$!
sleep 0.3
run_cbn --duration 1 --json "$T/sys.json" --folded "$T/sys.folded" --pid "$prog"
kill "$prog" 2>/dev/null
expect_rc 0
ratio=$(json_py "$T/sys.json" 'round(d["run"]["cpu_ns"] / d["run"]["measured_cpu_ns"], 3)')
within "$ratio" 1 0.03 || fail "syscalls: sampled CPU / measured CPU = $ratio, expected 1 +- 0.03"
if [ "$(id -u)" = 0 ]; then
	k=$(json_py "$T/sys.json" 'round(100 * d["programs"][0]["kernel_ns"] / d["programs"][0]["cpu_ns"])')
	[ "$k" -ge 40 ] || fail "syscalls attached as root: $k % of the CPU in the kernel, expected >= 40"
	# ... under the kernel's own call chain, named as in a launched run
	# (cpu_kernel_stacks): kernel functions above read_zero's read
	state=$(json_get "$T/sys.json" run.sampler.kernel_stacks.state)
	[ "$state" = taken ] || fail "syscalls attached as root: kernel stacks '$state', expected taken"
	ks=$(json_get "$T/sys.json" run.sampler.kernel_stacks.samples)
	[ "$ks" -gt 100 ] || fail "syscalls attached as root: $ks samples with a kernel stack"
	python3 - "$T/sys.folded" <<'PY' || fail "attached: no folded stack has [kernel] frames above read_zero"
import sys
for line in open(sys.argv[1]):
    frames = line.rsplit(" ", 1)[0].split(";")
    if "read_zero" in frames:
        above = frames[frames.index("read_zero") + 1:]
        k = [i for i, f in enumerate(above) if f.startswith("[kernel]_")]
        if len(k) >= 2 and k == list(range(k[0], len(above))):
            sys.exit(0)
sys.exit(1)
PY
fi
# A function called through a second mapping of the program's own file
# (nocfi remap): named from the module, as in a launched run (before: all
# of it [unknown]).
"$EXAMPLES/nocfi" 3 remap >/dev/null 2>&1 &
prog=$!
sleep 0.3
run_cbn --duration 1 --json "$T/remap.json" --pid "$prog"
kill "$prog" 2>/dev/null
expect_rc 0
share=$(json_py "$T/remap.json" \
	'round(100 * sum(f["self_ns"] for f in d["functions"] if f["name"] == "remap_spin") / d["run"]["cpu_ns"])')
[ "$share" -ge 80 ] || fail "attached to nocfi remap: remap_spin has $share % of the CPU: $(head -24 "$OUTF" | tail -8)"
exit 0
