#!/bin/bash
# cli_exit_status — the launcher's exit statuses: the target's own code, 128+N
# with a stderr line when it dies of signal N, 127 missing, 126 not executable
# or a directory, 2 for usage errors (found before anything runs); a script
# without #! runs through /bin/sh as execvp runs it.
# ctest-labels: sanitize (the ASan+UBSan stage of .ci/run runs it)
. "$(dirname "$0")/lib/common.bash"
need_cbn

# The target's own exit code passes through.
run_cbn -q -- sh -c 'exit 7'
expect_rc 7
run_cbn -q /bin/sh -c 'exit 0'
expect_rc 0

# Killed by a signal: 128+N and one line saying so (none with -q: nothing
# of ours on the program's stderr).
run_cbn -q -- sh -c 'kill -TERM $$'
expect_rc 143
grep -q 'cbottleneck:' "$ERRF" && fail "-q: a line of ours on stderr: $(grep 'cbottleneck:' "$ERRF")"
run_cbn --report "$T/r.txt" -- sh -c 'kill -TERM $$'
expect_rc 143
grep -q 'sh was killed by signal 15 (Terminated)' "$ERRF" || fail "no 'killed by signal 15' line"
if [ -x "$EXAMPLES/crash" ]; then
	run_cbn --report - -- "$EXAMPLES/crash" 0.1
	expect_rc 139
	grep -q 'crash was killed by signal 11 (Segmentation fault)' "$ERRF" ||
		fail "no 'killed by signal 11 (Segmentation fault)' line"
	grep_out 'before_crash'
else
	note "crash example not built: signal 11 case skipped"
fi

# A shell ends by _exit (dash does): the status of each is known, its
# thread's CPU measured, and none is said to have ended abnormally, as a
# build's many "sh -c" would be.
run_cbn --json "$T/sh.json" --report "$T/sh.txt" -- \
	sh -c 'sh -c "i=0; while [ \$i -lt 2000 ]; do i=\$((i+1)); done; exit 3"; exit 4'
expect_rc 4
inner='[p for p in d["processes"] if p["command"].startswith("sh -c i=0")]'
[ "$(json_py "$T/sh.json" "[p['exit_code'] for p in $inner]")" = "[3]" ] ||
	fail "the inner shell's exit code: $(json_py "$T/sh.json" '[(p["command"], p["exited"], p["exit_code"]) for p in d["processes"]]')"
[ "$(json_py "$T/sh.json" "[p['measured_cpu_ns'] is not None for p in $inner]")" = "[true]" ] ||
	fail "the inner shell's CPU was not measured at its _exit"
[ "$(json_py "$T/sh.json" 'all(p["exited"] and not p["clean_exit"] for p in d["processes"] if p["command"].startswith("sh "))')" = True ] ||
	fail "a shell that called _exit is not 'exited' (or ran exit handlers)"
grep -q 'ended without exiting normally' "$T/sh.txt" && fail "a shell's _exit reported as abnormal: $(grep 'ended without' "$T/sh.txt")"
grep -q 'no clean exit' "$T/sh.txt" && fail "a shell's _exit shown as 'no clean exit'"

# A script without "#!" runs as the shell (and execvp) would run it: /bin/sh
# FILE ARGS, profiled, with its own output and exit status.
printf 'echo "no-shebang $1"\nexit 5\n' >"$T/noshebang"
chmod 755 "$T/noshebang"
run_cbn -- "$T/noshebang" arg1
expect_rc 5
grep_out '^no-shebang arg1$'
grep_out '^  Processes: '
if grep -q 'Exec format error' "$ERRF"; then fail "a script without #! was refused"; fi

# Missing, not executable, directory.
run_cbn -- "$T/no-such-prog"
expect_rc 127
grep -q "cbottleneck: $T/no-such-prog: no such file or directory" "$ERRF" ||
	fail "no 'no such file or directory' line"
run_cbn -- no-such-command-cbn-test
expect_rc 127
printf '#!/bin/sh\necho hi\n' >"$T/noexec.sh"
chmod 644 "$T/noexec.sh"
run_cbn -- "$T/noexec.sh"
expect_rc 126
grep -q 'not an executable' "$ERRF" || fail "no 'not an executable' line"
run_cbn -- "$T"
expect_rc 126
grep -q 'is a directory' "$ERRF" || fail "no 'is a directory' line"
printf '#!/nonexistent/interp\n' >"$T/badinterp.sh"
chmod 755 "$T/badinterp.sh"
run_cbn -- "$T/badinterp.sh"
expect_rc 126

# A PATH lookup like execvp, and the target's own options pass through.
run_cbn -q --report "$T/r.txt" -- sh -c 'echo "$1 $2"' sh -F --limit
expect_rc 0
grep -qx -- '-F --limit' "$OUTF" || fail "the target's options did not pass through"
run_cbn -q --report "$T/r.txt" sh -c 'echo plain'
expect_rc 0
grep -qx 'plain' "$OUTF" || fail "options stop at the first operand"

# Usage errors: exit 2, one line, and the program never runs (the capture
# controls' values are checked here, not by the agent).
for args in "--no-such-option" "-F" "-F 0" "-F 10001" "-F abc" "--limit 0" "--sort bogus" \
	"--depth 0" "--buffer-mb x" "--trace-window 1s:2s" "--fail wall:+10%" \
	"--schedule active=0" "--schedule wait=1" "--schedule active=1,speed=2" "--schedule active=1," \
	"--delay 0" "--delay -1s" "--delay 5parsecs" "--duration x" "--capture-range nvtx:" \
	"--capture-range hotkey" "--toggle-signal SIGKILL" "--toggle-signal SIGSEGV" "--step (" \
	"--calls=bogus" \
	"-q --report $T/r.txt"; do
	# shellcheck disable=SC2086
	run_cbn $args -- sh -c "touch $T/ran"
	if [ "$args" = "-q --report $T/r.txt" ]; then
		expect_rc 0
		[ -e "$T/ran" ] || fail "the control run did not run the program"
		rm -f "$T/ran"
		continue
	fi
	expect_rc 2
	[ "$(wc -l <"$ERRF")" -ge 1 ] || fail "no message for '$args'"
	[ ! -e "$T/ran" ] || fail "the program ran despite the usage error '$args'"
done
run_cbn
expect_rc 2
grep -q 'no program' "$ERRF" || fail "no 'no program' message"
echo '{}' >"$T/base.json"
run_cbn --baseline "$T/base.json" --fail 'func[heavy].self:+10' -- sh -c "touch $T/ran"
expect_rc 2
[ ! -e "$T/ran" ] || fail "the program ran despite a bad --fail expression"
run_cbn --baseline "$T/missing.json" -- sh -c "touch $T/ran"
expect_rc 2
[ ! -e "$T/ran" ] || fail "the program ran despite a missing baseline"

# A warning, not an error, above 1000 Hz.
run_cbn -F 2000 --report "$T/r.txt" -- sh -c 'exit 0'
expect_rc 0
grep -q 'warning: -F 2000 is high' "$ERRF" || fail "no warning for -F 2000"

# --help documents every option and every exit status; --version.
run_cbn --help
expect_rc 0
for o in -F --frequency -o --output --sort --limit --report -q --quiet -h --help --version \
	--depth --buffer-mb --no-cuda --json --trace --trace-window --folded --flamegraph \
	--pprof --baseline --fail --warn --markdown --bench-json; do
	grep -q -- "$o" "$OUTF" || fail "--help does not mention $o"
done
for s in 2 66 125 126 127 128+N; do
	grep -q -- "$s" "$OUTF" || fail "--help does not document exit status $s"
done
run_cbn --version
expect_rc 0
grep_out '^cbottleneck [0-9]+\.[0-9]+\.[0-9]+$'
exit 0
