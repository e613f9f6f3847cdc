#!/bin/bash
# nocfi_stacks — stacks through code without unwind information (docs/
# symbols.md, "Code without unwind information"): examples/nocfi spends known
# shares of its CPU in JIT code without CFI (a leaf without a frame pointer
# 35 %, one with a frame pointer 15 %, JIT code calling back into C 25 %) and
# in an assembly function without .cfi directives (25 %), each under a C
# caller of its own.  Checked:
#   - every caller keeps its share (within 8 points: 2 s of CPU at 1 kHz)
#     of what the program's own thread clock says it spent (its last line)
#     and the stacks go on to main (at least 97 % of the CPU under main):
#     the unwinding went past the code without CFI, by frame pointer or by
#     scanning the stack (without that, 75 % of the samples end in
#     [unknown] with no caller);
#   - the JIT code is one `[jit] 0xSTART` row for its region, no [unknown]
#     row holds time, and Data quality says how much ran in JIT code;
#   - with --perf-map (the program writes /tmp/perf-PID.map) its three
#     functions are named from the map, module [jit], also by a later
#     `cbottleneck report DIR` once the program's map is gone;
#   - `chain`: JIT code with a frame pointer calling more of it, as V8's
#     and the JVM's does: both JIT functions in every stack, under main,
#     by frame pointer (before: the stacks stopped at the inner one);
#   - `remap`: a function of the program called through a second mapping
#     of its own file, as V8 maps its builtins: named as the program's
#     function with its line, under main (before: [unknown]);
#   - nocfi_fp, the same program with frame pointers in its C code: rbp is
#     the C caller's frame while the JIT leaf without one (and the assembly
#     function) runs, so the frame pointer leads past that caller to its
#     own; every caller keeps its share all the same (before: run_jit_leaf
#     and run_asm had none, their time went to main).
. "$(dirname "$0")/lib/common.bash"
need_cbn
need_example nocfi nocfi_fp

# shares JSON PROGRAM_OUTPUT: each caller's share against the program's own
# clock (8 points), and main's (97 %)
shares()
{
	python3 - "$1" "$2" <<'EOF'
import json, re, sys
d = json.load(open(sys.argv[1]))
cpu = d["run"]["cpu_ns"]
tot = {}
for f in d["functions"]:
    tot[f["name"]] = max(tot.get(f["name"], 0), f["total_ns"])
# The program's own clock says what each part spent; the nominal shares
# bound it, so a program that missed them is told apart from a profiler
# that did.
own = dict(re.findall(r"(run_\w+) ([0-9.]+) %", open(sys.argv[2]).read()))
want = {"run_jit_leaf": 35, "run_jit_fp": 15, "run_jit_calls": 25, "run_asm": 25}
bad = 0 if len(own) == 4 else 1
for name, share in want.items():
    mine = float(own.get(name, -100))
    got = 100.0 * tot.get(name, 0) / cpu
    print("# %-14s %5.1f %% of the CPU (the program's clock: %.1f %%, nominal %d %%)"
          % (name, got, mine, share), file=sys.stderr)
    if abs(got - mine) > 8 or abs(mine - share) > 5:
        bad = 1
main = 100.0 * tot.get("main", 0) / cpu
print("# main           %5.1f %% of the CPU" % main, file=sys.stderr)
if main < 97:
    bad = 1
sys.exit(bad)
EOF
}

run_cbn --json "$T/r.json" -o "$T/s" -- "$EXAMPLES/nocfi" 2
expect_rc 0
shares "$T/r.json" "$OUTF" || fail "shares of the callers (above)"
grep -Eq '\[jit\]:0\(\[jit\] 0x[0-9a-f]+\)' "$OUTF" || fail "no [jit] 0xSTART row"
grep -q '~:0(\[unknown\])' "$OUTF" && fail "an [unknown] row is left"
grep -q 'of the samples ran in JIT code' "$OUTF" || fail "Data quality says nothing of JIT code"
note "nocfi: callers keep their shares through JIT code and assembly without CFI"

run_cbn -o "$T/m" --json "$T/m.json" -- "$EXAMPLES/nocfi" 0.5 --perf-map
expect_rc 0
for f in jit_kernel_leaf jit_kernel_fp; do
	grep -q "\[jit\]:0($f)" "$OUTF" || fail "$f not named from the perf map"
done
# jit_kernel_calls has no time of its own (it calls back into C): a row
# below the table's limit, so looked for in JSON.
[ "$(json_func "$T/m.json" jit_kernel_calls)" != "{}" ] || fail "jit_kernel_calls not named from the perf map"
pid=$(ls "$T/m" | sed -n 's/^\([0-9]*\)\.[0-9]*\.cbp$/\1/p' | head -1)
[ -s "$T/m/perf-$pid.map" ] || fail "no perf-$pid.map copied into the session: $(ls "$T/m")"
rm -f "/tmp/perf-$pid.map"
"$CBN" report "$T/m" >"$T/later.out" 2>&1 || fail "report: $(tail -3 "$T/later.out")"
grep -q '\[jit\]:0(jit_kernel_leaf)' "$T/later.out" || fail "report DIR lost the perf map's names"
note "nocfi --perf-map: the three JIT functions named, also from the session alone"

share() { # JSON, function: its total as a % of the run's CPU
	python3 - "$1" "$2" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
t = max([f["total_ns"] for f in d["functions"] if f["name"] == sys.argv[2]] or [0])
print(int(100.0 * t / d["run"]["cpu_ns"]))
EOF
}
run_cbn -o "$T/c" --json "$T/c.json" -- "$EXAMPLES/nocfi" 1 --perf-map chain
expect_rc 0
for f in jit_kernel_fp jit_kernel_chain run_jit_chain main; do
	[ "$(share "$T/c.json" "$f")" -ge 95 ] ||
		fail "chain: $f holds $(share "$T/c.json" "$f") % of the CPU, not all of it"
done
grep -q 'unwinding stopped early' "$OUTF" &&
	fail "chain: stacks stopped early: $(grep -A2 'stopped early' "$OUTF")"
fp='unwound past code without unwind information, (9[5-9]|100)\.[0-9]% by frame pointer'
grep -Eq "$fp" "$OUTF" ||
	fail "chain: not by frame pointer: $(grep 'unwound past' "$OUTF")"
note "nocfi chain: JIT code calling JIT code walked by frame pointer up to main"

run_cbn -o "$T/r" --json "$T/r2.json" -- "$EXAMPLES/nocfi" 1 remap
expect_rc 0
[ "$(share "$T/r2.json" remap_spin)" -ge 90 ] ||
	fail "remap: remap_spin holds $(share "$T/r2.json" remap_spin) % of the CPU"
[ "$(share "$T/r2.json" main)" -ge 95 ] || fail "remap: main holds $(share "$T/r2.json" main) %"
grep -Eq 'nocfi\.c:[0-9]+\(remap_spin\)' "$OUTF" ||
	fail "remap: remap_spin has no line: $(grep remap_spin "$OUTF")"
grep -q '\[unknown\]' "$OUTF" && fail "remap: an [unknown] row is left"
note "nocfi remap: code mapped again from the program's file is the program's"

run_cbn --json "$T/f.json" -- "$EXAMPLES/nocfi_fp" 1
expect_rc 0
shares "$T/f.json" "$OUTF" || fail "nocfi_fp: shares of the callers (above)"
note "nocfi_fp: a JIT leaf's C caller kept where the frame pointer skips it"
exit 0
