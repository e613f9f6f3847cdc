#!/bin/bash
# steps_cuda_sim — the steps table's GPU columns on the simulated CUPTI, whose
# truth is fixed (tests/cuda/workload.h): the workload's NVTX ranges setup,
# compute and teardown as steps (--step), each with its exact kernel and copy
# counts and GPU busy time (the union of its ops), and sync wait only in
# compute, where every long kernel is waited for; the JSON's step-time
# breakdown gives setup's and teardown's GPU time to copies, compute's to
# kernels, and adds up to each step's duration.
. "$(dirname "$0")/lib/common.bash"
[ "${CBN_HAVE_CUDA:-OFF}" = ON ] || skip "built without CUDA (CBN_HAVE_CUDA=${CBN_HAVE_CUDA:-OFF})"
need_cbn
W="$CBN_BUILD_DIR/tests/cuda/cuda_workload"
need_built "$W"
export LD_LIBRARY_PATH="$CBN_BUILD_DIR/tests/fakecupti${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

run_cbn -F 500 --json "$T/r.json" --step '^(setup|compute|teardown)$' -- "$W" main 0
expect_rc 0
grep_out "^Steps: 3 from ranges matching '\^\(setup\|compute\|teardown\)\\$'$"
python3 - "$OUTF" <<'PY' || fail "the steps' GPU columns do not match the simulated truth"
import re, sys
text = open(sys.argv[1]).read()
table = text.split("\nSteps: ", 1)[1].split("Step time:", 1)[0]
head = [l for l in table.splitlines() if l.startswith("Step ")][0].split()
print(" ".join(head), file=sys.stderr)
assert head[:3] == ["Step", "Duration", "CPU"] and "Kernels" in head and "Copies" in head, head
rows = [l.split() for l in table.splitlines() if re.match(r"\s+\d+\s", l)]
for r in rows:
    print(" ".join(r), file=sys.stderr)
assert len(rows) == 3, rows
# Step Duration CPU GPU-busy Sync-wait Kernels Copies
gpu = [r[3] for r in rows]
sync = [r[4] for r in rows]
kernels = [int(r[5]) for r in rows]
copies = [int(r[6]) for r in rows]
# setup: 20 HtoD copies of 100 us and a 20 us memset; compute: 100 x 50 us +
# 10 x 2 ms + 10 x 10 us + 3 x 30 us; teardown: 2 x 200 us.  All one after
# another but the 10 x 10 us, which two threads launch on two streams at
# once (5 each): where they overlap (a CI run: by 7 us) the union is less than
# the sum, by at most one thread's 5 x 10 us.
def ms(v):
    return float(v[:-2]) / (1000.0 if v.endswith("us") else 1.0)
assert gpu[0] == "2.020ms" and gpu[2] == "400.000us", gpu
assert 25.140 <= ms(gpu[1]) <= 25.190, gpu
assert kernels == [0, 123, 0], kernels
assert copies == [20, 0, 2], copies
assert sync[0] == "0.000us" and sync[1] != "0.000us", sync
PY
python3 - "$T/r.json" <<'PY' || fail "the steps' breakdown does not match the simulated truth"
import json, sys
steps = json.load(open(sys.argv[1]))["steps"]["steps"]
for s in steps:
    b = s["breakdown"]
    print(s["number"], s["duration_ns"], b, file=sys.stderr)
    assert sum(b.values()) == s["duration_ns"], "the parts do not add up"
setup, compute, teardown = (s["breakdown"] for s in steps)
# setup: 20 x 100 us copies and a 20 us set, no kernel; teardown: 2 x 200 us
assert setup["kernel_ns"] == 0 and setup["copy_ns"] == 2020000, setup
assert teardown["kernel_ns"] == 0 and teardown["copy_ns"] == 400000, teardown
# compute: the kernels' union (see the table above), no copy
assert 25140000 <= compute["kernel_ns"] <= 25190000 and compute["copy_ns"] == 0, compute
assert compute["host_ns"] > 0, compute
PY
exit 0
