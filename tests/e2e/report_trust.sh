#!/bin/bash
# report_trust — what a person reads first agrees with itself (issue 32):
# the header holds a dozen lines at most (the sampler's workings with -v);
# the verdict line is the JSON's (verdict.text, the HTML's), and the share
# it quotes is the tables': of a function for one program
# (examples/split), of the program for a run of several
# (examples/forkexec: forkexec and the split it execs), whose Programs
# table comes before the processes; a command whose child holds the run
# (gcc and its cc1; here a launcher and the split it starts) names the
# child's program first; children of fork that leave through _exit as they
# are meant to are no Data quality line (-v counts them).
# ctest-labels: sanitize (the ASan+UBSan stage of .ci/run runs it)
. "$(dirname "$0")/lib/common.bash"
need_cbn
need_example split forkexec
command -v cc >/dev/null || skip "no C compiler for the fork-and-_exit program"

# check_report JSON: the header's lines, the verdict against the JSON
check_report()
{
	python3 - "$OUTF" "$1" "$PWD" <<'PY' || fail "$1: the header or the verdict"
import json, re, sys
text, d, cwd = open(sys.argv[1]).read().split("\n"), json.load(open(sys.argv[2])), sys.argv[3]
i = text.index("cbottleneck: CPU sampling profile")
head = []
for l in text[i:]:
    if not l.strip():
        break
    head.append(l)
print("# header: %d lines" % len(head), file=sys.stderr)
assert 6 <= len(head) <= 12, head
assert not any(l.startswith(("  Sampler:", "  Kernel:", "  Lost:", "  User/kernel:")) for l in head), head
v = [l for l in head if l.startswith("  Verdict:    ")][0][14:]
want = d["verdict"]["text"].replace(cwd + "/", "")
assert v == want, (v, want)
print("# verdict: %s" % v, file=sys.stderr)
cpu = d["run"]["cpu_ns"]
progs = [g for g in d["programs"] if g["cpu_ns"] > 0]
m = re.match(r"CPU-bound: (\d+) % of the CPU in ([^\s,;]+)", v)
assert m, v
pct, name = int(m.group(1)), m.group(2)
root = d["processes"][0]["pid"]
own = {(x["exe"] or x["command"]).split()[0].rsplit("/", 1)[-1]
       for x in d["processes"] if x["pid"] == root}
if len(progs) > 1 and (progs[0]["processes"] > 1 or progs[0]["cpu_ns"] < 0.95 * cpu or
                       progs[0]["name"] not in own):
    # the program first, with its share of the Programs table
    tot = sum(g["cpu_ns"] for g in progs)
    assert name == progs[0]["name"], (name, progs[0]["name"])
    assert abs(pct - 100.0 * progs[0]["cpu_ns"] / tot) <= 0.51, (pct, progs[0]["cpu_ns"], tot)
else:
    f = [x for x in d["functions"] if x["name"].split("(")[0] == name][0]
    assert abs(pct - 100.0 * f["self_ns"] / cpu) <= 0.51, (pct, f["self_ns"], cpu)
PY
}

run_cbn --json "$T/one.json" -- "$EXAMPLES/split" "$SCALE"
expect_rc 0
check_report "$T/one.json"
grep -q '^Programs (' "$OUTF" && fail "a table of programs for one program"

run_cbn --off-cpu --json "$T/two.json" -- "$EXAMPLES/forkexec" "$SCALE"
expect_rc 0
check_report "$T/two.json"
grep_out '^Programs \(CPU by program image, then by the module of the innermost frame'
[ "$(grep -n '^Programs (' "$OUTF" | cut -d: -f1)" -lt "$(grep -n '^Processes$' "$OUTF" | cut -d: -f1)" ] ||
	fail "the Programs table comes after the processes"
grep_out '^  Processes:  2 in 2 programs '

# a launcher that works a little, then starts split in a child and waits:
# split holds the run but is not the command, so the verdict names it
cat >"$T/launch.c" <<'C'
#include <sys/wait.h>
#include <unistd.h>
static volatile double x;
int main(int argc, char **argv)
{
	pid_t p;

	(void)argc;
	for (int k = 0; k < 1500000; k++)
		x += k * 0.5;
	if (!(p = fork())) {
		execv(argv[1], argv + 1);
		_exit(127);
	}
	waitpid(p, 0, 0);
	return 0;
}
C
cc -O1 -g -o "$T/launch" "$T/launch.c" || fail "cannot build the launcher"
run_cbn --json "$T/child.json" -- "$T/launch" "$EXAMPLES/split" "$SCALE"
expect_rc 0
check_report "$T/child.json"
grep_out '^  Verdict:    CPU-bound: [0-9]+ % of the CPU in split, hottest function heavy '

# fork and _exit, twenty times: an idiom, not a problem
cat >"$T/forkexit.c" <<'C'
#include <sys/wait.h>
#include <unistd.h>
static volatile double x;
int main(void)
{
	for (int i = 0; i < 20; i++) {
		pid_t p = fork();
		if (!p) {
			for (int k = 0; k < 2000000; k++)
				x += k * 0.5;
			_exit(0);
		}
		waitpid(p, 0, 0);
	}
	return 0;
}
C
cc -O1 -g -o "$T/forkexit" "$T/forkexit.c" || fail "cannot build the fork-and-_exit program"
run_cbn -- "$T/forkexit"
expect_rc 0
grep -q 'ended without exiting normally' "$OUTF" && fail "forked children's _exit reported as a problem"
run_cbn -v -- "$T/forkexit"
expect_rc 0
grep_out '^  Forked:     20 children of fork ended through _exit'
exit 0
