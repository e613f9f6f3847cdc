#!/bin/bash
# cli_outputs — every output is checked before the program starts: a path
# that cannot be written, two options writing one file, or a bad baseline is
# one line and exit 2, and the program never runs (a long run is not lost to
# a typo).  An output that still fails after the run (its directory removed
# meanwhile) keeps the private session and says how to write it again.
# ctest-labels: sanitize (the ASan+UBSan stage of .ci/run runs it)
. "$(dirname "$0")/lib/common.bash"
need_cbn

mark="$T/ran"
prog=(sh -c "touch '$mark'")
check_refused()
{
	local what=$1
	shift
	rm -f "$mark"
	run_cbn "$@" -- "${prog[@]}"
	expect_rc 2
	[ -e "$mark" ] && fail "$what: the program ran before the bad output was refused"
	[ "$(wc -l <"$ERRF")" = 1 ] || fail "$what: not one line: $(cat "$ERRF")"
	grep -q "$2" "$ERRF" || fail "$what: the line does not name $2: $(cat "$ERRF")"
}
check_refused "missing directory" --html /nonexistent/x.html
check_refused "a directory" --json "$T"
check_refused "same file twice" --json "$T/a.json" --trace "$T/a.json"
touch "$T/ro.txt"
chmod 444 "$T/ro.txt"
if [ "$(id -u)" != 0 ]; then
	check_refused "read-only file" --report "$T/ro.txt"
fi
for opt in --folded --flamegraph --pprof --trace --report; do
	check_refused "$opt" "$opt" /nonexistent/out
done
printf '{"schema_version": 5, "run": ' >"$T/bad.json"
check_refused "bad baseline" --baseline "$T/bad.json"
run_cbn report --json /nonexistent/r.json "$T"
expect_rc 2
grep -q -- '--json /nonexistent/r.json' "$ERRF" || fail "report DIR: bad output not refused first"

# A bare file name is written in the current directory.
(cd "$T" && "$CBN" -q --report /dev/null --json bare.json -- true) || fail "--json bare.json refused"
[ -s "$T/bare.json" ] || fail "--json bare.json wrote nothing"

# The directory of --json disappears while the program runs.
mkdir -p "$T/gone" "$T/tmp"
set +e
TMPDIR="$T/tmp" "$CBN" -q --report "$T/r.txt" --json "$T/gone/r.json" -- \
	sh -c "rmdir '$T/gone'; i=0; while [ \$i -lt 20000 ]; do i=\$((i+1)); done" \
	>"$T/g.out" 2>"$T/g.err"
rc=$?
set -e
[ "$rc" = 125 ] || fail "a failed write after the run: exit status $rc, expected 125"
dir=$(sed -n "s/^cbottleneck: the session is kept in \([^:]*\): .*/\1/p" "$T/g.err")
[ -n "$dir" ] && [ -d "$dir" ] || fail "no kept session named: $(cat "$T/g.err")"
case "$dir" in "$T/tmp"/*) ;; *) fail "the kept session $dir is not in TMPDIR" ;; esac
grep -q "cbottleneck report \[OPTIONS\] $dir" "$T/g.err" || fail "no way to write it again: $(cat "$T/g.err")"
run_cbn report -q --json "$T/again.json" "$dir"
expect_rc 0
[ -s "$T/again.json" ] || fail "report DIR on the kept session wrote no JSON"
exit 0
