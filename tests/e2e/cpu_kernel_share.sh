#!/bin/bash
# cpu_kernel_share — one kernel share in the whole report.  On `dd bs=1`
# (a read and a write of one byte each, system calls most of its time) and on
# examples/syscalls (reads of /dev/zero between short computations): the
# header's kernel share (its CPU time line), the CPU overview's "In the kernel" share of the
# CPU, the JSON's waiting.activities.kernel / cpu_ns and the self time of the
# kernel's rows (module "kernel", or the one [kernel] row where kernel stacks
# are refused) are the same figure; the kernel's own count (getrusage of the
# tree) agrees with it within 30 points (getrusage splits user and kernel
# by the tick, and in a VM the sampling interrupt lands on the kernel's
# interrupt-enable points: 71.5 % sampled against 50.6 % counted on
# examples/syscalls at load 5).  The overview's shares of thread
# time add up to 100 %, with --off-cpu too (a runnable row).
. "$(dirname "$0")/lib/common.bash"
need_cbn
need_example syscalls

# check NAME: the shares of the last run (text in $OUTF, JSON in $T/NAME.json)
check()
{
	python3 - "$OUTF" "$T/$1.json" "$1" <<'PY' || fail "$1: the kernel shares disagree"
import json, re, sys
text, d, name = open(sys.argv[1]).read(), json.load(open(sys.argv[2])), sys.argv[3]
head = float(re.search(r"^  CPU time: .*\), ([\d.]+)% of it in the kernel$", text, re.M).group(1))
ov = re.search(r"^    In the kernel +([\d.]+)% +([\d.]+)% ", text, re.M)
w = d["waiting"]
js = 100.0 * w["activities"]["kernel"] / w["cpu_ns"]
rows = 100.0 * sum(f["self_ns"] for f in d["functions"]
                   if f.get("module") == "kernel" or f["name"] == "[kernel]") / d["run"]["cpu_ns"]
r = d["run"]
rus = 100.0 * r["kernel_ns"] / (r["kernel_ns"] + r["user_ns"])
print("%s: header %.1f, overview %.1f, JSON %.1f, [kernel] rows %.1f, getrusage %.1f" %
      (name, head, float(ov.group(2)), js, rows, rus), file=sys.stderr)
assert abs(head - float(ov.group(2))) < 0.051, "header and overview"
assert abs(head - js) < 0.051, "header and JSON"
assert abs(js - rows) < 0.5, "JSON and the [kernel] rows"
assert head > 40, "a syscall-heavy run with little kernel time"
assert abs(head - rus) < 30, "the samples and the kernel's count"
# the overview's shares of thread time add up to 100 %
col = [float(m) for m in re.findall(r"^    [A-Z][^\n]*?  +([\d.]+)% ", text.split("CPU overview", 1)[1]
                                    .split("Critical thread", 1)[0], re.M)]
assert abs(sum(col) - 100) < 0.5, (col, sum(col))
sh = w["shares"]
assert abs(sum(sh.values()) - 1) < 0.001, sh
PY
}

run_cbn --json "$T/dd.json" -- dd if=/dev/zero of=/dev/null bs=1 count=400000
expect_rc 0
check dd
run_cbn --json "$T/sys.json" -- "$EXAMPLES/syscalls" "$SCALE"
expect_rc 0
check sys
run_cbn --off-cpu --json "$T/off.json" -- "$EXAMPLES/syscalls" "$SCALE"
expect_rc 0
check off
grep_out '^    Runnable \(no core free\) '
exit 0
