#!/bin/bash
# wait_io — I/O wait with a known length (examples/wait_io.c: the parent reads
# 18 records at IO-SITE in read_slowly from a pipe a child fills every
# 17 ms: 306 ms).  Under --off-cpu: the site read_slowly (IO-SITE), kind io, one
# thread, 215..400 ms (-30 % +30 %); the child's sleeps in feed too (kind sleep);
# the program's output is unchanged.
. "$(dirname "$0")/lib/common.bash"
need_cbn
need_example wait_io
PY=/usr/bin/python3
IO_LINE=$(grep -n '/\* IO-SITE \*/' "$CBN_SOURCE_DIR/examples/wait_io.c" | cut -d: -f1)

plain=$("$EXAMPLES/wait_io") || fail "the example failed without the profiler"
run_cbn --off-cpu --json "$T/r.json" -- "$EXAMPLES/wait_io"
expect_rc 0
[ "$(grep '^wait_io:' "$OUTF")" = "$plain" ] || fail "the program's output changed under --off-cpu"
grep_out 'Off-CPU: where threads waited'
$PY - "$T/r.json" "$IO_LINE" <<'PYEOF' || fail "wait_io --off-cpu: the read wait"
import json, sys
w = json.load(open(sys.argv[1]))["waiting"]
ms = 1e6
by = {s["function"]: s for s in w["sites"]}
print("# sites: %s" % ", ".join("%s %s %.0f ms" % (s["function"], s["kind"], s["ns"] / ms)
      for s in w["sites"][:6]), file=sys.stderr)
s = by.get("read_slowly")
assert s, "no site read_slowly"
assert s["kind"] == "io" and s["threads"] == 1, s
assert s["file"].endswith("wait_io.c") and s["line"] == int(sys.argv[2]), s
assert 215 * ms <= s["ns"] <= 400 * ms, s
f = by.get("feed")
assert f and f["kind"] == "sleep", f
assert 215 * ms <= f["ns"] <= 400 * ms, f
assert w["off_cpu"]["io"] >= s["ns"], w["off_cpu"]
PYEOF
exit 0
