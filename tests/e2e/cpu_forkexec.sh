#!/bin/bash
# cpu_forkexec — a fork+exec tree: the parent and the exec'd split are two
# processes in the per-process table and in the JSON, each with its own CPU.
. "$(dirname "$0")/lib/common.bash"
need_cbn
need_example forkexec split
need_python_jsonschema

run_cbn --json "$T/r.json" -- "$EXAMPLES/forkexec" "$SCALE"
expect_rc 0
grep -q '^split: done$' "$OUTF" || fail "the exec'd child's output is missing"
validate_schema "$T/r.json"

python3 - "$T/r.json" <<'PY' || fail "the JSON does not show parent and exec'd child"
import json, sys
d = json.load(open(sys.argv[1]))
ps = d["processes"]
if d["run"]["processes"] < 2 or len(ps) < 2:
    sys.exit("expected 2 processes, got %d" % len(ps))
child = [p for p in ps if p["exe"].endswith("/split") or p["command"].split(" ")[0].endswith("split")]
parent = [p for p in ps if p["exe"].endswith("/forkexec")]
if not child or not parent:
    sys.exit("processes: %s" % [(p["pid"], p["exe"]) for p in ps])
c, p = child[-1], parent[0]
if c["ppid"] != p["pid"] and c["pid"] != p["pid"]:
    sys.exit("child %d has ppid %d, parent is %d" % (c["pid"], c["ppid"], p["pid"]))
for x in (c, p):
    if x["cpu_ns"] <= 0 or x["samples"] <= 0:
        sys.exit("process %d (%s) has no samples" % (x["pid"], x["exe"]))
# both burn SCALE seconds: neither is below a third of the other
r = c["cpu_ns"] / p["cpu_ns"]
print("# child/parent CPU = %.2f" % r, file=sys.stderr)
if not 0.33 < r < 3:
    sys.exit("child/parent CPU ratio %.2f" % r)
# both exited cleanly: the kernel's CPU time of each is known, about equal
# (the exec'd image counts only its own share of the thread's clock)
if not c["measured_cpu_ns"] or not p["measured_cpu_ns"]:
    sys.exit("measured_cpu_ns missing: child %s, parent %s" % (c["measured_cpu_ns"], p["measured_cpu_ns"]))
r = c["measured_cpu_ns"] / p["measured_cpu_ns"]
print("# child/parent measured CPU = %.2f" % r, file=sys.stderr)
if not 0.5 < r < 2:
    sys.exit("child/parent measured CPU ratio %.2f" % r)
names = {f["name"] for f in d["functions"] if f["self_ns"] > 0}
for n in ("parent_work", "heavy", "light"):
    if n not in names:
        sys.exit("%s has no self time" % n)
PY

grep_out '^Processes$'
# PID PPID CPU Measured CPU% Samples Exit Command (Measured is "-" when unknown)
grep_out '^ +[0-9]+ +[0-9]+ +[0-9.]+(s|ms|us) +([0-9.]+(s|ms|us)|-) +[0-9.]+% +[0-9]+ .*forkexec'
grep_out '^ +[0-9]+ +[0-9]+ +[0-9.]+(s|ms|us) +([0-9.]+(s|ms|us)|-) +[0-9.]+% +[0-9]+ .*split'
grep_out "^  Processes:  2( |\$)"
exit 0
