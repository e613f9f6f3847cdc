#!/bin/bash
# cli_stdio — the target's stdin, stdout and stderr are inherited untouched:
# byte-identical output with and without the profiler (the report goes to a
# file here), and stdin still reaches the program.
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

# Without --report, the report follows the target's own output on stdout.
if [ -x "$EXAMPLES/split" ]; then
	run_cbn -q -- "$EXAMPLES/split" 0.1
	expect_rc 0
	[ "$(head -1 "$OUTF")" = "split: done" ] || fail "the target's output is not first"
	grep_out 'filename:lineno\(function\)'

	# A reader that stops early (| head) neither kills the launcher before
	# its cleanup nor changes the exit status.
	mkdir -p "$T/tmp"
	set +e
	TMPDIR="$T/tmp" "$CBN" -- "$EXAMPLES/split" 0.1 2>/dev/null | head -1 >/dev/null
	rc=${PIPESTATUS[0]}
	set -e
	[ "$rc" = 0 ] || fail "exit status $rc with stdout closed early"
	[ -z "$(ls -A "$T/tmp")" ] || fail "a closed stdout left the session behind: $(ls "$T/tmp")"
fi
exit 0
