#!/bin/bash
# steps_spiky — the slowest steps of examples/step_spiky.c (30 steps, its
# iterations 0, 10 and 20 about 5x the others because of slow_path(); a
# CBN_STEP() starts each, so iteration i is step i + 1 as torch numbers them):
# the table holds the 30 steps; by CPU, the steps above twice the median are
# exactly 1, 11 and 21;
# each of them is among the slowest steps with slow_path as what grew, and no
# other step names slow_path.  (Durations are wall time: on a loaded machine
# another step may be slow too, so it is not required to be absent.)
. "$(dirname "$0")/lib/common.bash"
need_cbn
need_example step_spiky

run_cbn --limit 40 -- "$EXAMPLES/step_spiky"
expect_rc 0
grep_out '^Steps: 30 from cbn_step\(\)$'
python3 - "$OUTF" <<'PY' || fail "step_spiky: the slow steps"
import re, sys
text = open(sys.argv[1]).read()
sec = text.split("\nSteps: ", 1)[1]
table = sec.split("Step time:", 1)[0]

def ms(s):
    m = re.match(r"([\d.]+)(ms|us|s)$", s)
    return float(m.group(1)) * {"s": 1e3, "ms": 1, "us": 1e-3}[m.group(2)]

rows = [l.split() for l in table.splitlines() if re.match(r"\s+\d+\s", l)]
assert len(rows) == 30, len(rows)
cpu = {int(r[0]): ms(r[2]) for r in rows}
med = sorted(cpu.values())[15]
heavy = sorted(n for n, c in cpu.items() if c > 2 * med)
print("CPU median %.1f ms, steps above 2x: %s" % (med, heavy), file=sys.stderr)
assert heavy == [1, 11, 21], heavy
slow = sec.split("Slowest steps", 1)[1].split("\n\n", 1)[0]
blocks = {}
for b in re.split(r"\n  step ", "\n" + slow.split("\n", 1)[1]):
    if b.strip():
        blocks[int(b.split(":", 1)[0])] = b
print("slowest:", sorted(blocks), file=sys.stderr)
for n in (1, 11, 21):
    assert n in blocks, "step %d not among the slowest" % n
    assert "slow_path" in blocks[n].split("\n")[1], blocks[n]
for n, b in blocks.items():
    if n % 10 != 1:
        assert "slow_path" not in b, b
PY
exit 0
