#!/bin/bash
# py_views — Python frames beyond the CPU table, on the python3 tools/deps.sh
# installs (Debian's 3.11): allocation sites (--memory) and off-CPU waits
# (--off-cpu) name the Python line; --python native keeps the interpreter's
# frames, --python off (run and report) reads or shows none; the header and
# run.python say which interpreter was read; a C program has no Python line.
. "$(dirname "$0")/lib/common.bash"
. "$(dirname "$0")/lib/python.bash"
need_cbn
need_example split
need_python_jsonschema
py_need 3.11
VIEWS="$CBN_SOURCE_DIR/tests/python/views.py"

# allocation sites: the Python functions that allocated
run_cbn --memory -o "$T/mem" --json "$T/mem.json" -- "$PY" "$VIEWS" memory
expect_rc 0
validate_schema "$T/mem.json"
grep_out 'views\.py:[0-9]+\(grow\)'
grep_out 'views\.py:[0-9]+\(churn\)'
grep_out '^  Python:     CPython 3\.11\.[0-9]+: Python frames in [0-9.]+% of its samples'
[ "$(json_get "$T/mem.json" run.python.state)" = on ] || fail "run.python.state is not on"
json_py "$T/mem.json" 'd["run"]["python"]["version"].startswith("3.11.")' | grep -qx True ||
	fail "run.python.version is not 3.11.x"

# off-CPU waits: the sleeping and the lock-waiting Python functions
run_cbn --off-cpu --folded "$T/off.folded" --sample-type offcpu -- "$PY" "$VIEWS" offcpu
expect_rc 0
grep -Eq '(^|;)waiter;.*\[off-CPU: sleep\]' "$T/off.folded" ||
	fail "no off-CPU sleep under waiter: $(head -c 600 "$T/off.folded")"
grep -Eq '(^|;)lock_wait;.*\[off-CPU: futex\]' "$T/off.folded" ||
	fail "no off-CPU futex wait under lock_wait: $(head -c 600 "$T/off.folded")"

# --python native: the evaluation loop's frames stay, under the Python frames
run_cbn report --python native --folded "$T/native.folded" "$T/mem"
expect_rc 0
grep -q '_PyEval_EvalFrameDefault;<module>;memory;grow' "$T/native.folded" ||
	fail "--python native: no _PyEval_EvalFrameDefault;<module>;memory;grow stack"
run_cbn report --folded "$T/on.folded" "$T/mem"
# A stack with Python frames has its evaluation loop's frames folded into
# them.  A sample whose Python frames were not read (run.python: samples of
# samples_of; start-up, or a walk that found the thread state moving) keeps
# its native stack as it is, loop frames and all: at most that share.
python3 - "$T/on.folded" "$T/mem.json" <<'PY' ||
import json, sys
py = json.load(open(sys.argv[2]))["run"]["python"]
mine = ("<module>", "memory", "grow", "churn")
total = folded = unread = 0
for line in open(sys.argv[1]):
    stack, n = line.rsplit(" ", 1)
    frames, n = stack.split(";"), int(n)
    total += n
    if "_PyEval_EvalFrameDefault" in frames:
        if any(f in mine for f in frames):
            folded += n
            print("not folded: " + line.strip()[:300], file=sys.stderr)
        else:
            unread += n
allowed = 1 - py["samples"] / max(py["samples_of"], 1)
print("loop frames: %d with Python frames, %d in stacks without (%.3f of %d; %.3f unread)"
      % (folded, unread, unread / max(total, 1), total, allowed), file=sys.stderr)
sys.exit(0 if folded == 0 and unread / max(total, 1) <= allowed + 0.02 else 1)
PY
	fail "--python on (default): the evaluation loop's frames were not folded"
grep -q '<module>;memory;grow' "$T/on.folded" || fail "--python on: no <module>;memory;grow stack"

# --python off: a report of the same session shows native frames only ...
run_cbn report --python off --json "$T/off.json" "$T/mem"
expect_rc 0
[ "$(json_py "$T/off.json" 'sum(f["python"] for f in d["functions"])')" = 0 ] ||
	fail "report --python off still has Python functions"
# ... and a run with it reads none
run_cbn --python off --json "$T/runoff.json" -- "$PY" "$VIEWS" memory
expect_rc 0
grep_out '^  Python:     CPython 3\.11\.[0-9]+, frames not read \(--python off\)$'
[ "$(json_get "$T/runoff.json" run.python.state)" = off ] || fail "run.python.state is not off"
[ "$(json_py "$T/runoff.json" 'sum(f["python"] for f in d["functions"])')" = 0 ] ||
	fail "a --python off run has Python functions"

# a program without Python: no Python line, state ""
run_cbn --json "$T/c.json" -- "$EXAMPLES/split" 0.1
expect_rc 0
if grep -q '^  Python:' "$OUTF"; then fail "a C program's header has a Python line"; fi
[ -z "$(json_get "$T/c.json" run.python.state)" ] || fail "a C program's run.python.state is not empty"
exit 0
