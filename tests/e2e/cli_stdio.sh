#!/bin/bash
# cli_stdio — the target's stdin, stdout and stderr are inherited untouched:
# byte-identical output with and without the profiler (the report goes to a
# file, or to stderr when stdout is a file or a pipe), and stdin still
# reaches the program.
# ctest-labels: sanitize (the ASan+UBSan stage of .ci/run runs it)
. "$(dirname "$0")/lib/common.bash"
need_cbn

cat >"$T/talk.sh" <<'EOS'
#!/bin/sh
printf 'line one\n'
printf 'to stderr\n' >&2
printf '\001\002\377 binary\000tail' 
printf 'no newline at end' >&2
[ -t 0 ] || cat
EOS
chmod 755 "$T/talk.sh"
printf 'from stdin\n' | "$T/talk.sh" >"$T/plain.out" 2>"$T/plain.err"
printf 'from stdin\n' | "$CBN" -q --report "$T/r.txt" -- "$T/talk.sh" >"$T/prof.out" 2>"$T/prof.err"
rc=$?
[ "$rc" = 0 ] || fail "exit status $rc"
cmp "$T/plain.out" "$T/prof.out" || fail "stdout differs under the profiler"
cmp "$T/plain.err" "$T/prof.err" || fail "stderr differs under the profiler"
grep -q 'from stdin' "$T/prof.out" || fail "stdin did not reach the target"
[ -s "$T/r.txt" ] || fail "no report written to --report FILE"

# Without --report: a program that writes binary data to stdout (a file, then
# a pipe) gets exactly its own bytes there; the report goes to stderr, as
# time(1) writes there, and only after the program's own stderr.
cat >"$T/bin.sh" <<'EOS'
#!/bin/sh
head -c 65536 /dev/urandom >"$1"
i=0
while [ $i -lt 20000 ]; do i=$((i + 1)); done
cat "$1"
printf 'program stderr\n' >&2
EOS
chmod 755 "$T/bin.sh"
"$CBN" -- "$T/bin.sh" "$T/data" >"$T/bin.out" 2>"$T/bin.err"
rc=$?
[ "$rc" = 0 ] || fail "binary writer: exit status $rc"
cmp "$T/data" "$T/bin.out" || fail "stdout a file: the program's bytes changed under the profiler"
[ "$(head -1 "$T/bin.err")" = "program stderr" ] || fail "stderr does not start with the program's own"
grep -q 'filename:lineno(function)' "$T/bin.err" || fail "no report on stderr with stdout a file"
"$CBN" -- "$T/bin.sh" "$T/data" 2>"$T/pipe.err" | cat >"$T/pipe.out"
cmp "$T/data" "$T/pipe.out" || fail "stdout a pipe: the program's bytes changed under the profiler"
grep -q 'filename:lineno(function)' "$T/pipe.err" || fail "no report on stderr with stdout a pipe"
# -q too: nothing of ours on stdout.
"$CBN" -q -- "$T/bin.sh" "$T/data" >"$T/q.out" 2>/dev/null
cmp "$T/data" "$T/q.out" || fail "-q: the program's bytes changed under the profiler"

# The agent writes nothing to the program's streams: a process that loads it
# without LD_PRELOAD is named in the report's Data quality, not on its stderr;
# -v echoes the note on the launcher's stderr.  The program never sees our
# variables, so only an exec that bypasses libc (the raw system call, with an
# environment of its own that names the session) makes such a process: a
# worker that scrubs LD_PRELOAD with `env -u` is followed all the same.
AGENT=${CBN_BUILD_DIR:-$(dirname "$CBN")}/lib/libcbottleneck.so
if [ -e "$AGENT" ] && command -v python3 >/dev/null; then
	cat >"$T/noload.py" <<'EOS'
import ctypes, os, sys
if sys.argv[1] == "load":
    ctypes.CDLL(sys.argv[2])
    print("loaded")
    sys.exit(0)
exe = os.path.realpath(sys.executable).encode()
argv = (ctypes.c_char_p * 5)(exe, sys.argv[0].encode(), b"load", sys.argv[2].encode(), None)
envp = (ctypes.c_char_p * 3)(b"CBN_SESSION=" + sys.argv[3].encode(), b"PATH=/usr/bin:/bin", None)
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall(59, exe, argv, envp)  # SYS_execve, past libc's wrappers
sys.exit(1)
EOS
	python3 "$T/noload.py" exec "$AGENT" "$T/nl.none" >"$T/nl.plain.out" 2>"$T/nl.plain.err"
	"$CBN" -o "$T/nls" --report "$T/nl.txt" -- python3 "$T/noload.py" exec "$AGENT" "$T/nls" \
		>"$T/nl.out" 2>"$T/nl.err" || fail "noload: exit status $?"
	cmp "$T/nl.plain.out" "$T/nl.out" || fail "noload: stdout differs"
	grep -v '^cbottleneck: session kept' "$T/nl.err" | cmp "$T/nl.plain.err" - ||
		fail "noload: the agent wrote on the program's stderr: $(cat "$T/nl.err")"
	grep -Eq 'pid [0-9]+: not profiled: the agent was loaded without LD_PRELOAD' "$T/nl.txt" ||
		fail "noload: the report does not name the process it could not profile"
	rm -rf "$T/nls"
	"$CBN" -v -o "$T/nls" --report "$T/nl.txt" -- python3 "$T/noload.py" exec "$AGENT" "$T/nls" \
		>/dev/null 2>"$T/nlv.err"
	grep -q 'agent note: pid [0-9]*: not profiled' "$T/nlv.err" || fail "-v did not echo the agent's note"
	# env -u LD_PRELOAD: the variable is not in the program's view, and the
	# worker is profiled like any child.
	rm -rf "$T/nls"
	"$CBN" -o "$T/nls" --report "$T/nl.txt" -- sh -c 'env -u LD_PRELOAD python3 -c "print(1)"' \
		>"$T/nl.out" 2>&1 || fail "env -u: exit status $?"
	grep -q 'not profiled' "$T/nl.txt" && fail "env -u: a worker was not followed: $(grep 'not profiled' "$T/nl.txt")"
	[ "$(ls "$T/nls"/*.cbp | wc -l)" -ge 3 ] || fail "env -u: sh, env and python3 each have a file: $(ls "$T/nls")"
fi

# --report - asks for the report on stdout, after the program's output.
if [ -x "$EXAMPLES/split" ]; then
	run_cbn -q --report - -- "$EXAMPLES/split" 0.1
	expect_rc 0
	[ "$(head -1 "$OUTF")" = "split: done" ] || fail "the target's output is not first"
	grep_out 'filename:lineno\(function\)'
	grep -q 'filename:lineno' "$ERRF" && fail "--report -: the report went to stderr too"

	# A reader that stops early (| head) neither kills the launcher before
	# its cleanup nor changes the exit status.
	mkdir -p "$T/tmp"
	set +e
	TMPDIR="$T/tmp" "$CBN" --report - -- "$EXAMPLES/split" 0.1 2>/dev/null | head -1 >/dev/null
	rc=${PIPESTATUS[0]}
	set -e
	[ "$rc" = 0 ] || fail "exit status $rc with stdout closed early"
	[ -z "$(ls -A "$T/tmp")" ] || fail "a closed stdout left the session behind: $(ls "$T/tmp")"
fi
exit 0
