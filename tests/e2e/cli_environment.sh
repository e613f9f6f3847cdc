#!/bin/bash
# cli_environment — the header's Machine line (the CPU and its count, the
# load, the kernel, the program's compiler and -O level) and, with -v, the
# environment summary (torch.utils.bottleneck's first section): kernel, CPU,
# the program's compiler and flags, the tools' versions; JSON "environment"
# has the same; -q leaves it out; a program or a hot library built -O0 is
# warned about.
# ctest-labels: sanitize (the ASan+UBSan stage of .ci/run runs it)
. "$(dirname "$0")/lib/common.bash"
need_cbn
need_example split
command -v cc >/dev/null || skip "no C compiler for the -O0 programs"

run_cbn --json "$T/r.json" -- "$EXAMPLES/split" 0.2
expect_rc 0
grep -q '^Environment$' "$OUTF" && fail "the environment block without -v"
grep_out "^  Machine:    .*, $(getconf _NPROCESSORS_ONLN) CPUs?, load [0-9.]+ at start, Linux $(uname -r) .*; program built by GNU C[0-9]* [0-9.]+ -O2, with debug info\$"
run_cbn -v --json "$T/r.json" -- "$EXAMPLES/split" 0.2
expect_rc 0
grep_out '^Environment$'
grep_out "^  Kernel:     Linux $(uname -r) "
grep_out "^  CPU:        .*, $(getconf _NPROCESSORS_ONLN) CPUs,"
grep_out '^  Program:    built by GNU C[0-9]* [0-9.]+ .*-O2'
grep_out '^  Tools:      glibc [0-9.]+, libunwind [0-9.]+ \(the agent.s\), elfutils [0-9.]+'
python3 - "$T/r.json" "$(uname -r)" "$(getconf _NPROCESSORS_ONLN)" <<'PY' || fail "JSON environment"
import json, sys
e = json.load(open(sys.argv[1]))["environment"]
assert sys.argv[2] in e["kernel"] and e["cpus"] == int(sys.argv[3]), e
assert "-O2" in e["program_producer"] and e["program_debuginfo"] is True, e
assert e["libc"] and e["libunwind"] and e["elfutils"], e
PY
run_cbn -q -- "$EXAMPLES/split" 0.1
grep -q '^Environment' "$OUTF" && fail "-q still prints the environment"

# -O0: the program, and a hot library of an optimized program
cat >"$T/o0.c" <<'C'
#include <stdio.h>
#include <time.h>
static double cpu(void) { struct timespec t; clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t); return t.tv_sec + t.tv_nsec / 1e9; }
int main(void) { volatile long x = 0; while (cpu() < 0.3) for (int i = 0; i < 100000; i++) x += i; puts("o0"); return 0; }
C
cat >"$T/lib.c" <<'C'
void work(void) { volatile long x = 0; for (long i = 0; i < 300000000; i++) x += i; }
C
cat >"$T/main.c" <<'C'
void work(void);
int main(void) { work(); return 0; }
C
cc -O0 -g -o "$T/o0" "$T/o0.c" || fail "cannot build the -O0 program"
cc -O0 -g -shared -fPIC -o "$T/libslow.so" "$T/lib.c" || fail "cannot build the -O0 library"
cc -O2 -g -o "$T/fast" "$T/main.c" -L"$T" -lslow -Wl,-rpath,"$T" || fail "cannot build the -O2 program"
run_cbn -F 499 -- "$T/o0"
expect_rc 0
grep_out 'the program was built without optimization \(-O0\)'
run_cbn -F 499 -- "$T/fast"
expect_rc 0
grep_out 'libslow.so holds [0-9]+% of the CPU and was built without optimization \(-O0\)'
grep -q 'the program was built without optimization' "$OUTF" && fail "the -O2 program is called -O0"
exit 0
