#!/bin/bash
# valgrind_client — `cbottleneck valgrind PROGRAM`: Valgrind runs the
# program on its simulated CPU with its own libraries preloaded beside the
# agent, so the agent steps aside in that image and says why (docs/cli.md).
# Checked, against the same valgrind run plainly, on a program with a
# use after free (memcheck's report of it is the same in every run): the
# same output, exit status and Valgrind report, nothing in it about
# cbottleneck's library (before: 287 lines of "Bad set handler address" and
# rt_sigprocmask errors in its code, from the unwinder's probes); the
# report's Exit column has the status the launcher waited for, and Data
# quality says the agent stepped aside under Valgrind.
. "$(dirname "$0")/lib/common.bash"
need_cbn
command -v valgrind >/dev/null || skip "valgrind is not installed"
command -v cc >/dev/null || skip "no C compiler"
cat >"$T/uaf.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	int *a = malloc(4 * sizeof(int)), s;

	a[0] = 1;
	s = a[0];
	free(a);
	s += a[0]; /* read after free */
	printf("uaf: %d\n", s > 0);
	return 3;
}
EOF
cc -g -O0 -o "$T/uaf" "$T/uaf.c" || fail "cannot build the test program"

vg=(valgrind -q --error-exitcode=9 "$T/uaf")
set +e
"${vg[@]}" >"$T/plain.out" 2>"$T/plain.err"
prc=$?
set -e
[ "$prc" = 9 ] || fail "plain valgrind: status $prc, not 9 (an error found): $(tail -3 "$T/plain.err")"
grep -q "Invalid read of size 4" "$T/plain.err" || fail "plain valgrind saw no invalid read"
run_cbn --report "$T/report.txt" -o "$T/s" -- "${vg[@]}"
expect_rc 9
cmp -s "$T/plain.out" "$OUTF" || fail "the program's output differs: $(diff "$T/plain.out" "$OUTF" | head -5)"
# Valgrind's report without its pid prefixes and addresses (and the
# launcher's own line, where the session was kept): the same lines
norm() { grep -v '^cbottleneck: ' "$1" | sed -E 's/^==[0-9]+==/==/; s/0x[0-9A-Fa-f]+/ADDR/g'; }
norm "$T/plain.err" >"$T/plain.n"
norm "$ERRF" >"$T/prof.n"
cmp -s "$T/plain.n" "$T/prof.n" ||
	fail "Valgrind's report differs under cbottleneck: $(diff "$T/plain.n" "$T/prof.n" | head -8)"
grep -Eiq 'cbottleneck|cbn_|Bad set handler|unknown .how.' "$T/prof.n" &&
	fail "Valgrind's report speaks of cbottleneck: $(grep -Ei 'cbottleneck|cbn_|Bad set' "$T/prof.n" | head -3)"
grep -q 'runs under Valgrind' "$T/report.txt" ||
	fail "Data quality does not say the agent stepped aside: $(grep -A4 '^Data quality' "$T/report.txt")"
grep -Eq '^ +[0-9]+ +[0-9]+ .* 9 +[^ ]*uaf$' "$T/report.txt" ||
	fail "the Processes table has no exit status 9 for uaf: $(grep -A5 '^Processes' "$T/report.txt")"
note "valgrind: the client runs as plainly, its report untouched, the agent aside"
exit 0
