#!/bin/bash
# json_schema — real --json reports from a process tree, a threaded program and
# a crash all satisfy docs/report.schema.json, and keep their public keys.
# ctest-labels: sanitize (the ASan+UBSan stage of .ci/run runs it)
. "$(dirname "$0")/lib/common.bash"
need_cbn
need_example forkexec split threads crash
need_python_jsonschema

run_cbn --json "$T/fork.json" -- "$EXAMPLES/forkexec" 0.2
expect_rc 0
validate_schema "$T/fork.json"
run_cbn --json "$T/threads.json" -- "$EXAMPLES/threads" 0.2
expect_rc 0
validate_schema "$T/threads.json"
run_cbn --json "$T/crash.json" -- "$EXAMPLES/crash" 0.2
expect_rc 139
validate_schema "$T/crash.json"

python3 - "$T/fork.json" "$T/threads.json" "$T/crash.json" <<'PY' || fail "JSON content is inconsistent"
import json, sys
for path in sys.argv[1:]:
    d = json.load(open(path))
    run = d["run"]
    assert d["schema_version"] == 5
    assert run["samples"] > 0, "%s: no samples" % path
    assert run["weight"] >= run["samples"]
    # functions: by self_ns, and self_ns = self_samples x period within each process
    s = [f["self_ns"] for f in d["functions"]]
    assert s == sorted(s, reverse=True), "%s: functions not by self_ns" % path
    assert all(f["self_ns"] <= f["total_ns"] <= run["cpu_ns"] for f in d["functions"])
    assert sum(s) <= run["cpu_ns"]
    assert sum(p["cpu_ns"] for p in d["processes"]) == run["cpu_ns"]
    assert sum(t["cpu_ns"] for t in d["threads"]) == run["cpu_ns"]
    assert len(d["processes"]) == run["processes"]
    assert len(d["threads"]) == run["threads"]
    assert run["command"], "%s: empty command" % path
    if run["period_ns"] and len(d["processes"]) == 1:
        assert all(f["self_ns"] == f["self_samples"] * run["period_ns"] for f in d["functions"])
    l = [x["self_ns"] for x in d["lines"]]
    assert l == sorted(l, reverse=True)
PY
[ "$(json_get "$T/crash.json" run.exit_status)" = -1 ] || fail "crash: run.exit_status is not -1"
[ "$(json_get "$T/crash.json" run.exit_signal)" = 11 ] || fail "crash: run.exit_signal is not 11"
exit 0
