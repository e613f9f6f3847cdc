#!/bin/bash
# cpu_kernel_stacks — kernel time with named kernel frames: examples/syscalls
# spends most of its CPU reading /dev/zero.  Where the kernel allows kernel
# callchains (perf_event_paranoid <= 1, CAP_PERFMON or root) a kernel function
# of the read path appears as a "[kernel] NAME" frame right above read_zero, in
# the JSON (module "kernel") and the folded stacks, holding most of the CPU;
# otherwise the test skips, saying why.  The kernel stacks sit on the user
# stack that made the system call (read_zero's), not on the next sample's
# (user_work's), for at least 80% of the read path's kernel weight.
# CBN_KERNEL_STACKS=0 gives the plain
# [kernel] row of before.
. "$(dirname "$0")/lib/common.bash"
need_cbn
need_example syscalls
need_python_jsonschema

run_cbn -v -F 999 --json "$T/r.json" --folded "$T/r.folded" -- "$EXAMPLES/syscalls" "$SCALE"
expect_rc 0
grep -q '^syscalls: done$' "$OUTF" || fail "the target's own output is missing from stdout"
validate_schema "$T/r.json"
state=$(json_get "$T/r.json" run.sampler.kernel_stacks.state)
if [ "$state" != taken ]; then
	skip "no kernel stacks on this machine ($(json_get "$T/r.json" run.sampler.kernel_stacks.reason)); perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null)"
fi
grep_out '^  Kernel:     stacks named \(\[kernel\] frames\): [0-9]+ kernel samples'

# Kernel functions of the read path, named (or by address where the kernel
# hides its symbols), carry most of the CPU.
json_py "$T/r.json" '[ (f["name"], f["self_ns"]) for f in d["functions"] if f["module"] == "kernel" ][:8]' >&2
hidden=$(json_py "$T/r.json" 'all(f["name"].startswith("[kernel] 0x") for f in d["functions"] if f["module"] == "kernel" and f["name"] != "[kernel]")')
share=$(json_py "$T/r.json" 'sum(f["self_ns"] for f in d["functions"] if f["module"] == "kernel") / d["run"]["cpu_ns"]')
note "kernel self share $share (addresses only: $hidden)"
python3 -c "import sys; sys.exit(0 if $share > 0.4 else 1)" || fail "kernel frames hold $share of the CPU, expected most of it"
if [ "$hidden" = True ]; then
	note "kallsyms hides addresses here: kernel frames are [kernel] 0x..."
	pat='^\[kernel\][ _]0x[0-9a-f]+$'
else
	pat='^\[kernel\][ _].*(read|write|clear_user|copy|zero)'
fi
# (folded stacks write the space of "[kernel] NAME" as "_", as for every name)
# above read_zero in the folded stacks (libc's read between them): the kernel
# frames, innermost last: ...;read_zero;read;[kernel] ...;...;[kernel] LEAF
python3 - "$T/r.folded" "$pat" <<'PY' || fail "no folded stack has a kernel frame matching /$pat/ above read_zero"
import re, sys
pat = re.compile(sys.argv[2])
for line in open(sys.argv[1]):
    frames = line.rsplit(" ", 1)[0].split(";")
    if "read_zero" in frames:
        above = frames[frames.index("read_zero") + 1:]
        k = [i for i, f in enumerate(above) if f.startswith("[kernel]")]
        if k and k == list(range(k[0], len(above))) and any(pat.search(above[i]) for i in k):
            sys.exit(0)
sys.exit(1)
PY
# The agent places a kernel stack with the user registers and stack at entry;
# a kernel that refuses those (EINVAL: the event opens without them) leaves
# every stack unplaced, which is not this test's failure.
placed=$(json_get "$T/r.json" run.sampler.kernel_stacks.placed)
unplaced=$(json_get "$T/r.json" run.sampler.kernel_stacks.unplaced)
echo "cpu_kernel_stacks: $placed kernel samples placed, $unplaced unplaced" >&2
if [ "$placed" = 0 ] && [ "$unplaced" = 0 ]; then
	skip "kernel stacks taken but not placed: the kernel event has no user registers/stack at entry here"
fi
# On the user stack that made the system call, not the one the thread ran
# next: at least 80% of the kernel weight of the read path sits under
# read_zero (through libc's read), not under user_work (85 of ~125 kernel
# samples did before the agent placed them).  Without kernel names, every
# kernel stack but clock_gettime's (user_work's own system call) counts.
python3 - "$T/r.folded" "$pat" "$hidden" <<'PY' || fail "kernel stacks of the read path are not on read_zero's stack"
import re, sys
pat, hidden = re.compile(sys.argv[2]), sys.argv[3] == "True"
under = total = 0
for line in open(sys.argv[1]):
    stack, w = line.rsplit(" ", 1)
    frames = stack.split(";")
    kern = [f for f in frames if f.startswith("[kernel]_")]
    user = [f for f in frames if not f.startswith("[kernel]")]
    if not kern or "clock_gettime" in user:
        continue
    if not hidden and not any(pat.search(f) for f in kern):
        continue
    total += int(w)
    if "read_zero" in user and "user_work" not in user:
        under += int(w)
share = under / total if total else 0
print(f"cpu_kernel_stacks: {under} of {total} read-path kernel weight under read_zero ({share:.1%})", file=sys.stderr)
sys.exit(0 if total and share >= 0.8 else 1)
PY

# the innermost frame is a kernel function, the user stack is below it
json_py "$T/r.json" 'any(f["module"] == "kernel" and f["self_ns"] > 0 and f["name"] != "[kernel]" for f in d["functions"])' | grep -qx True ||
	fail "no named kernel function has self time"

# CBN_KERNEL_STACKS=0: today's output, one [kernel] row and a word why
CBN_KERNEL_STACKS=0 run_cbn -v -F 999 --json "$T/o.json" --folded "$T/o.folded" -- "$EXAMPLES/syscalls" "$SCALE"
expect_rc 0
validate_schema "$T/o.json"
[ "$(json_get "$T/o.json" run.sampler.kernel_stacks.state)" = off ] || fail "CBN_KERNEL_STACKS=0 did not turn kernel stacks off"
json_get "$T/o.json" run.sampler.kernel_stacks.reason | grep -q 'CBN_KERNEL_STACKS=0' || fail "the reason does not name CBN_KERNEL_STACKS=0"
grep_out '^  Kernel:     one \[kernel\] row, no kernel stacks \(CBN_KERNEL_STACKS=0\)$'
if grep -q '\[kernel\]_' "$T/o.folded"; then fail "named kernel frames with CBN_KERNEL_STACKS=0"; fi
# Without kernel stacks the kernel's time goes to the sample that saw the
# thread's system time grow: the kernel accounts it at its ticks, so that is
# read_zero's sample or, in some runs, the next one's (user_work's).
grep -Eq ';(read_zero;(read;)?|user_work;)\[kernel\] [0-9]+$' "$T/o.folded" ||
	fail "no [kernel] leaf over read_zero or user_work with CBN_KERNEL_STACKS=0"
exit 0
