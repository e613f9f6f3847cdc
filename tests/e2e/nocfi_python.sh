#!/bin/bash
# nocfi_python — CPython 3.12 and 3.13 with -X perf (docs/symbols.md, "Code
# without unwind information"): each Python call runs through a trampoline
# the interpreter writes at run time, without unwind information, and names
# in /tmp/perf-PID.map.  The native stacks must go on through every
# trampoline to Py_BytesMain (at least 95 % of the CPU, with --python off),
# and the Python view is unchanged (heavy() about 3x light()).
. "$(dirname "$0")/lib/common.bash"
. "$(dirname "$0")/lib/python.bash"
need_cbn
cat >"$T/perf.py" <<'PY'
import time
def leaf(n):
    s = 0
    for i in range(n):
        s += i * i
    return s
def heavy():
    return leaf(300000)
def light():
    return leaf(100000)
end = time.monotonic() + 1.5
while time.monotonic() < end:
    heavy()
    light()
PY
tested=0
for v in 3.12 3.13; do
	PY=$(py_find "$v") || { note "no CPython $v here: not tested"; continue; }
	tested=$((tested + 1))
	run_cbn --json "$T/on$v.json" -o "$T/s$v" -- "$PY" -X perf "$T/perf.py"
	expect_rc 0
	"$CBN" report "$T/s$v" --python off --json "$T/off$v.json" >/dev/null 2>"$T/rep.err" ||
		fail "report --python off: $(cat "$T/rep.err")"
	python3 - "$v" "$T/on$v.json" "$T/off$v.json" <<'PY' || fail "CPython $v -X perf (above)"
import json, sys
v, on, off = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
def total(d, name):
    return max([f["total_ns"] for f in d["functions"] if f["name"] == name] or [0]) / d["run"]["cpu_ns"] * 100
bad = 0
main = total(off, "Py_BytesMain")
h, l = total(on, "heavy"), total(on, "light")
print("# %s -X perf: Py_BytesMain %.1f %% of the CPU natively; heavy %.1f %%, light %.1f %%" % (v, main, h, l), file=sys.stderr)
if main < 95:
    bad = 1
if not (l > 0 and 2.0 < h / l < 4.5):
    bad = 1
sys.exit(bad)
PY
done
[ "$tested" -gt 0 ] || skip "no CPython 3.12 or 3.13 here (pyenv's versions/3.12.*, 3.13.*)"
exit 0
