#!/bin/bash
# py_long_names — a Python function whose names and line table are longer
# than what the agent reads of an object in one go (its 512-byte window,
# src/agent/python_copy.c): a qualified name of 583 bytes, a file name of
# 130, a body of 400 lines (its line table over 512 bytes), the hot line at
# its end.  The report names the function in full, in its file, and puts
# the time on the hot line, as it does for a short one.
. "$(dirname "$0")/lib/common.bash"
. "$(dirname "$0")/lib/python.bash"
need_cbn
py_need 3.11

X=$(printf 'x%.0s' $(seq 200))
Y=$(printf 'y%.0s' $(seq 200))
Z=$(printf 'z%.0s' $(seq 150))
SCRIPT="$T/long_names_$(printf 'q%.0s' $(seq 100)).py"
{
	echo "import time"
	echo "class Outer_$X:"
	echo "    class Inner_$Y:"
	echo "        @staticmethod"
	echo "        def method_$Z(n):"
	echo "            s = 0"
	for i in $(seq 400); do
		echo "            s += $i * n"
	done
	echo "            t = time.process_time() + 0.6"
	echo "            while time.process_time() < t:"
	echo "                s += sum(range(200))"
	echo "            return s"
	echo "print(Outer_$X.Inner_$Y.method_$Z(3) > 0)"
} >"$SCRIPT"
HOT=$(grep -n 'sum(range(200))' "$SCRIPT" | cut -d: -f1)

run_cbn --json "$T/r.json" -- "$PY" "$SCRIPT"
expect_rc 0
grep -qx True "$OUTF" || fail "the program's output is missing"
python3 - "$T/r.json" "$SCRIPT" "Outer_$X.Inner_$Y.method_$Z" "$HOT" <<'PY' 2>"$T/why" ||
import json, sys
d, path, want, hot = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3], int(sys.argv[4])
fs = [f for f in d["functions"] if f.get("python") and f["name"] == want]
problems = []
if not fs:
    problems.append("no function named in full; Python rows: %r" %
                    [f["name"][:60] for f in d["functions"] if f.get("python")][:5])
else:
    f = fs[0]
    if f["file"] != path:
        problems.append("file %r, not %r" % (f["file"], path))
    if f["self_samples"] < 100:
        problems.append("only %d samples in it" % f["self_samples"])
lines = [l for l in d["lines"] if l["file"] == path]
if not lines or lines[0]["line"] != hot:
    problems.append("hottest line %r, not %d" % (lines[0]["line"] if lines else None, hot))
if problems:
    sys.stderr.write("; ".join(problems) + "\n")
    sys.exit(1)
PY
	fail "$(cat "$T/why")"
note "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["run"]["samples"], "samples")' "$T/r.json")"
exit 0
