#!/bin/bash
# fortran — a Fortran program with a module (examples/fortran/mod_work.f90,
# built here by gfortran: tools/deps.sh --test installs it), as an HPC user
# runs it.
#   - it runs as plainly: its output and STOP 3's exit status;
#   - module procedures read in Fortran's terms, work::matmul_loop at its
#     SUBROUTINE line, never gfortran's symbols (__work_MOD_matmul_loop),
#     and fib's copies inlined into itself are the same function, work::fib,
#     so no row splits it in two;
#   - the hottest line is in the triple loop.
. "$(dirname "$0")/lib/common.bash"
need_cbn
command -v gfortran >/dev/null || skip "gfortran not installed (apt-get install gfortran)"
SRC="$CBN_SOURCE_DIR/examples/fortran/mod_work.f90"

gfortran -O2 -g -o "$T/mod_work" "$SRC" 2>"$T/build.log" || fail "gfortran: $(tail -5 "$T/build.log")"
set +e
"$T/mod_work" >"$T/plain.out" 2>"$T/plain.err"
plain_rc=$?
set -e
[ "$plain_rc" = 3 ] || fail "plain run: exit $plain_rc"

run_cbn --json "$T/r.json" -- "$T/mod_work"
expect_rc 3
head -1 "$OUTF" | cmp -s - "$T/plain.out" ||
	fail "stdout differs: '$(head -1 "$OUTF")' against '$(cat "$T/plain.out")'"
sub=$(grep -n '^  subroutine matmul_loop' "$SRC" | cut -d: -f1)
loop=$(grep -n '^    do j = 1, n' "$SRC" | cut -d: -f1)
body=$(grep -n 'c(i, j) = c(i, j) + a(i, k)' "$SRC" | cut -d: -f1)
grep_out "^ +[0-9]+ +[0-9.]+ +- +[0-9.]+ +- +[^ ]*mod_work\.f90:$sub\(work::matmul_loop\)\$"
! grep -q "__work_MOD_" "$OUTF" || fail "a gfortran symbol in the report: $(grep -m1 __work_MOD_ "$OUTF")"
python3 - "$T/r.json" "$loop" "$body" <<'PY' || fail "fib's rows or the hot lines"
import json, sys
d = json.load(open(sys.argv[1]))
loop, body = int(sys.argv[2]), int(sys.argv[3])
names = {f["name"] for f in d["functions"]}
assert not [n for n in names if n.startswith("__work_MOD_")], names
fib = [n for n in names if "fib" in n]
assert fib and all(n == "work::fib" for n in fib), fib
top = d["lines"][0]
assert top["function"] == "work::matmul_loop" and loop <= top["line"] <= body, top
print("# fortran: fib rows %s, hottest line %d" % (fib, top["line"]), file=sys.stderr)
PY
