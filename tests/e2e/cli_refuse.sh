#!/bin/bash
# cli_refuse — programs the agent cannot get into are refused with 125 and a
# line saying why: static executables, setuid/setgid copies; and launcher setup
# failures: agent missing, -o pointing at a directory that is not a session;
# a kept session cut to what it holds.
# ctest-labels: sanitize (the ASan+UBSan stage of .ci/run runs it)
. "$(dirname "$0")/lib/common.bash"
need_cbn
need_example split

# setuid and setgid copies of a dynamic program
cp /bin/true "$T/suid-true"
chmod u+s "$T/suid-true"
run_cbn -- "$T/suid-true"
expect_rc 125
grep -q 'setuid.*secure-execution mode ignores LD_PRELOAD.*non-setuid copy' "$ERRF" ||
	fail "no secure-execution explanation for a setuid program"
cp /bin/true "$T/sgid-true"
chmod g+s,g+x "$T/sgid-true"
run_cbn -- "$T/sgid-true"
expect_rc 125

# File capabilities (security.capability), when this filesystem takes them.
cp /bin/true "$T/cap-true"
if python3 -c 'import os, struct, sys
os.setxattr(sys.argv[1], "security.capability", struct.pack("<IIIII", 0x02000001, 1 << 10, 0, 0, 0))' \
	"$T/cap-true" 2>/dev/null; then
	run_cbn -- "$T/cap-true"
	expect_rc 125
	grep -q 'file capabilities.*secure-execution' "$ERRF" || fail "no explanation for file capabilities"
else
	note "cannot set security.capability here: capability case not tested"
fi

# Another architecture (e_machine patched) or a 32-bit program: the loader
# would skip the 64-bit agent.
cp /bin/true "$T/foreign"
printf '\xb7\x00' | dd of="$T/foreign" bs=1 seek=18 conv=notrunc status=none # EM_AARCH64
[ "$(uname -m)" = aarch64 ] && printf '\x3e\x00' | dd of="$T/foreign" bs=1 seek=18 conv=notrunc status=none
run_cbn -- "$T/foreign"
expect_rc 125
grep -q 'another architecture or as 32-bit' "$ERRF" || fail "no explanation for a foreign ELF"
cp /bin/true "$T/elf32"
printf '\x01' | dd of="$T/elf32" bs=1 seek=4 conv=notrunc status=none # EI_CLASS = ELFCLASS32
run_cbn -- "$T/elf32"
expect_rc 125

# A missing agent: say where we looked.
CBN_AGENT_DIR="$T/nowhere" run_cbn -- /bin/true
expect_rc 125
grep -q "cannot find the agent libcbottleneck.so (looked in $T/nowhere)" "$ERRF" ||
	fail "no 'cannot find the agent' line naming where it looked"

# -o: a non-empty directory that is not a session is refused; a session or a
# new directory is fine, and a re-used session holds only the new run.
mkdir -p "$T/notes"
echo keep >"$T/notes/important.txt"
run_cbn -o "$T/notes" -- /bin/true
expect_rc 125
[ -f "$T/notes/important.txt" ] || fail "-o removed a file it should not touch"
run_cbn -q -o "$T/new/sub" --report "$T/r.txt" -- sh -c 'exit 0'
expect_rc 0
[ -f "$T/new/sub/session.json" ] || fail "-o did not create the session directory"
[ "$(stat -c %a "$T/new/sub")" = 700 ] || fail "the session directory is not private (0700)"
n1=$(find "$T/new/sub" -name '*.cbp' | wc -l)
run_cbn -q -o "$T/new/sub" --report "$T/r.txt" -- sh -c 'exit 0'
expect_rc 0
n2=$(find "$T/new/sub" -name '*.cbp' | wc -l)
[ "$n1" = "$n2" ] || fail "re-using -o kept the previous run's files ($n1 then $n2)"
# A kept session holds what was written, not the files' reserved length:
# the launcher's side files (PID.SEQ.cbs, --memory) are cut too, and a
# re-used session drops the previous run's (before, each read 256 MiB to
# ls, du --apparent-size and a copy that does not keep holes).
run_cbn -q -o "$T/new/sub" --memory --report "$T/r.txt" -- "$EXAMPLES/split" 0.1
expect_rc 0
for f in "$T/new/sub"/*; do
	[ "$(stat -c %s "$f")" -le $((16 << 20)) ] ||
		fail "$(basename "$f") of a kept session is $(stat -c %s "$f") bytes long"
done
[ -n "$(find "$T/new/sub" -name '*.cbs')" ] || fail "no side file (.cbs) in a --memory session"
run_cbn -q -o "$T/new/sub" --report "$T/r.txt" -- sh -c 'exit 0'
expect_rc 0
[ -z "$(find "$T/new/sub" -name '*.cbs')" ] || fail "re-using -o kept the previous run's side files"
touch "$T/afile"
run_cbn -o "$T/afile" -- /bin/true
expect_rc 125

# Private session directories are removed afterwards.
export TMPDIR="$T/tmp"
mkdir -p "$TMPDIR"
run_cbn -q --report "$T/r.txt" -- sh -c 'exit 0'
expect_rc 0
[ -z "$(ls -A "$TMPDIR")" ] || fail "the private session directory was left behind: $(ls "$TMPDIR")"
unset TMPDIR

# A static executable cannot load the agent: it is sampled from outside
# (src/cli/outside.c), its exit status its own; an option that needs the
# agent refuses it, saying which.
command -v gcc >/dev/null 2>&1 || skip "gcc not installed: static-binary case not tested"
printf 'int main(void) { return 0; }\n' >"$T/s.c"
if ! gcc -static -o "$T/static-prog" "$T/s.c" 2>"$T/gcc.err"; then
	skip "gcc -static failed (no libc.a? apt-get install libc6-dev): $(head -1 "$T/gcc.err")"
fi
run_cbn --memory -- "$T/static-prog"
expect_rc 125
grep -q "cannot profile $T/static-prog: it is statically linked, so LD_PRELOAD cannot load the agent, which --memory needs; rebuild it dynamically (Go: with cgo)" "$ERRF" ||
	fail "no static-binary explanation for --memory: $(cat "$ERRF")"
run_cbn --calls -- "$T/static-prog"
expect_rc 125
# A static program that burns CPU in a function of its own and exits 5.
cat >"$T/burn.c" <<'C'
#include <time.h>
static double cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}
__attribute__((noinline)) static unsigned long static_burn(double s)
{
	volatile unsigned long x = 1;
	double end = cpu() + s;
	while (cpu() < end)
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005ul + 1;
	return x;
}
int main(void) { return static_burn(0.4) ? 5 : 6; }
C
gcc -static -O1 -g -o "$T/static-burn" "$T/burn.c" || fail "gcc -static of the burner"
run_cbn --json "$T/static.json" -- "$T/static-burn"
expect_rc 5
grep -q "static-burn is statically linked, so LD_PRELOAD cannot load the agent: it is sampled from outside instead" "$ERRF" ||
	fail "no line saying the static program is sampled from outside: $(head -3 "$ERRF")"
python3 - "$T/static.json" <<'PY' || fail "the static program's samples"
import json, sys
d = json.load(open(sys.argv[1]))
f = [x for x in d["functions"] if x["name"] == "static_burn"]
assert d["run"]["exit_status"] == 5, d["run"].get("exit_status")
assert f and f[0]["self_samples"] >= 100, (f, d["run"].get("samples"))
print("# static: static_burn %d samples" % f[0]["self_samples"], file=sys.stderr)
PY
run_cbn -q -- "$T/static-prog"
expect_rc 0
if gcc -static-pie -o "$T/static-pie" "$T/s.c" 2>/dev/null; then
	run_cbn -q -- "$T/static-pie"
	expect_rc 0
fi
# A script whose interpreter is static runs the same way.
printf '#!%s\n' "$T/static-prog" >"$T/script"
chmod 755 "$T/script"
run_cbn -q -- "$T/script"
expect_rc 0
exit 0
