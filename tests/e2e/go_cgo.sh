#!/bin/bash
# go_cgo — a Go program built with cgo (examples/go/cgo_fib.go; golang-go is
# installed by tools/deps.sh --test), and a C program built by clang when
# clang is installed: programs whose producers write .debug_aranges for
# part of the code (Go: the C part only) or none (clang).
#   - the Go program runs as plainly: its output and exit status 5 (it died
#     with "failed to get system page size" when the agent shortened the
#     environment array its runtime walks past to find the auxiliary vector);
#   - its Go function reads in Go's terms, at its definition's line
#     (main.go:N(main.fib), though Go writes no DW_AT_decl_line), and its
#     hot lines are Go source lines; the C function called from Go has its
#     own line;
#   - a Go program built without cgo (static) is sampled from outside, with
#     the same names and its own exit status;
#   - clang's binary gets file:line for its function.
. "$(dirname "$0")/lib/common.bash"
need_cbn
command -v go >/dev/null || skip "go not installed (apt-get install golang-go)"
SRC="$CBN_SOURCE_DIR/examples/go/cgo_fib.go"

cp "$SRC" "$T/main.go"
(cd "$T" && HOME="$T" GOCACHE="$T/gocache" GOFLAGS= CGO_ENABLED=1 go build -o "$T/cgo_fib" main.go) \
	>"$T/build.log" 2>&1 || fail "go build: $(tail -5 "$T/build.log")"
set +e
"$T/cgo_fib" >"$T/plain.out" 2>"$T/plain.err"
plain_rc=$?
set -e
[ "$plain_rc" = 5 ] || fail "plain run: exit $plain_rc ($(head -3 "$T/plain.err"))"

run_cbn --json "$T/r.json" -- "$T/cgo_fib"
[ "$RC" = 5 ] || fail "exit status $RC under cbottleneck, 5 plainly: $(head -5 "$ERRF")"
head -1 "$OUTF" | cmp -s - "$T/plain.out" ||
	fail "stdout differs: '$(head -1 "$OUTF")' against '$(cat "$T/plain.out")'"
grep -q "failed to get system page size" "$ERRF" && fail "the Go runtime found no auxiliary vector"

fib=$(grep -n '^func fib(' "$T/main.go" | cut -d: -f1)
cwork=$(grep -n 's += i % 7;' "$T/main.go" | cut -d: -f1)
grep_out "^ +[0-9]+ +[0-9.]+ +- +[0-9.]+ +- +(/[^ ]*/)?main\.go:$fib\(main\.fib\)\$"
grep_out "^ +[0-9]+ +[0-9.]+ +- +[0-9.]+ +- +(/[^ ]*/)?main\.go:[0-9]+\(cwork( \[inlined in [^]]+\])?\)\$"
python3 - "$T/r.json" "$fib" "$cwork" <<'PY' || fail "the hot lines are not Go's and C's source lines"
import json, sys
d = json.load(open(sys.argv[1]))
fib, cwork = int(sys.argv[2]), int(sys.argv[3])
lines = d["lines"]
go = [l for l in lines if l["file"].endswith("main.go") and l["function"] == "main.fib"]
c = [l for l in lines if l["file"].endswith("main.go") and l["function"] == "cwork"]
assert go and all(fib <= l["line"] <= fib + 5 for l in go), go
assert c and any(l["line"] == cwork for l in c), c
print("# go: main.fib lines %s, cwork lines %s" % (sorted(l["line"] for l in go),
      sorted(l["line"] for l in c)), file=sys.stderr)
PY

# Go's default build, without cgo, is static: sampled from outside
# (src/cli/outside.c), its names and exit status as above.
cat >"$T/pure.go" <<'GO'
package main

import "os"

func fib(n int) int {
	if n < 2 {
		return n
	}
	return fib(n-1) + fib(n-2)
}

func main() {
	s := 0
	for i := 0; i < 6; i++ {
		s += fib(30)
	}
	if s > 0 {
		os.Exit(6)
	}
}
GO
(cd "$T" && HOME="$T" GOCACHE="$T/gocache" GOFLAGS= CGO_ENABLED=0 go build -o "$T/pure" pure.go) \
	>"$T/build.log" 2>&1 || fail "go build (static): $(tail -5 "$T/build.log")"
run_cbn -- "$T/pure"
[ "$RC" = 6 ] || fail "the static Go program: exit status $RC, 6 plainly: $(head -5 "$ERRF")"
grep -q "is statically linked, so LD_PRELOAD cannot load the agent: it is sampled from outside" "$ERRF" ||
	fail "no line saying the static Go program is sampled from outside"
grep_out "^ +[0-9]+ +[0-9.]+ +- +[0-9.]+ +- +(/[^ ]*/)?pure\.go:$(grep -n '^func fib(' "$T/pure.go" | cut -d: -f1)\(main\.fib\)\$"

if command -v clang >/dev/null; then
	cat >"$T/c1.c" <<'C'
#include <stdio.h>
__attribute__((noinline)) static long work(long n)
{
	long s = 0;
	for (long i = 0; i < n; i++)
		s += (i % 7) * (i & 3) + s / 3;
	return s;
}
int main(void)
{
	long t = 0;
	for (int k = 0; k < 60; k++)
		t += work(1000000);
	printf("%ld\n", t);
	return 0;
}
C
	clang -g -O1 -o "$T/c1" "$T/c1.c" || fail "clang cannot build"
	run_cbn -- "$T/c1"
	expect_rc 0
	grep_out "c1\.c:$(grep -n '^__attribute__((noinline)) static long work' "$T/c1.c" | cut -d: -f1)\(work\)\$"
else
	note "clang not installed: its binary (no .debug_aranges) not tried"
fi
