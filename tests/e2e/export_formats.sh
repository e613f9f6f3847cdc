#!/bin/bash
# export_formats — split under cbottleneck with --trace (gzip), --folded,
# --flamegraph and --pprof at once: each file is what its viewer expects
# (tests/e2e/export_check.py) and agrees with the JSON report (heavy() wider
# than light() by the same ratio).  go tool pprof reads the profile when golang-go
# is installed.
# ctest-labels: sanitize (the ASan+UBSan stage of .ci/run runs it)
. "$(dirname "$0")/lib/common.bash"
need_cbn
need_example split
"$CBN" --help 2>&1 | grep -q -- '--flamegraph' || fail "--help does not mention --flamegraph"
CHECK="python3 $CBN_SOURCE_DIR/tests/e2e/export_check.py"

run_cbn -F 250 --json "$T/r.json" --trace "$T/t.json.gz" --folded "$T/f.folded" \
	--flamegraph "$T/f.svg" --pprof "$T/p.pb.gz" -- "$EXAMPLES/split" "$SCALE"
expect_rc 0
for f in t.json.gz f.folded f.svg p.pb.gz; do
	[ -s "$T/$f" ] || fail "--${f%%.*} output $f is missing or empty"
done
weight=$(json_get "$T/r.json" run.weight)
[ "$weight" -gt 10 ] || skip "only $weight samples: machine too loaded to judge shapes"

$CHECK trace "$T/t.json.gz" --names main,heavy,light >"$T/trace.out" || fail "trace is malformed"
$CHECK folded "$T/f.folded" --names main,heavy,light --total "$weight" >"$T/folded.out" ||
	fail "folded stacks are malformed or do not add up to run.weight=$weight"
$CHECK svg "$T/f.svg" --names main,heavy,light >"$T/svg.out" || fail "flame graph is malformed"
$CHECK pprof "$T/p.pb.gz" >"$T/pprof.out" || fail "pprof profile is malformed"

# The exporters draw the same samples the JSON report counts: heavy:light in the
# flame graph and the folded stacks must equal the JSON's total-time ratio
# (the true 3:1 split itself is checked, with its noise, by cpu_split.sh).
python3 - "$T/svg.out" "$T/f.folded" "$T/r.json" <<'PY' || fail "heavy/light ratio of the flame graph or folded stacks disagrees with the JSON report"
import json, sys
w = json.loads(open(sys.argv[1]).read().split("widths=", 1)[1])
r = w["heavy"] / w["light"]
h = l = 0
for line in open(sys.argv[2]):
    stack, n = line.rsplit(" ", 1)
    fr = stack.split(";")
    h += int(n) * ("heavy" in fr)
    l += int(n) * ("light" in fr)
fn = {f["name"]: f for f in json.load(open(sys.argv[3]))["functions"]}
j = fn["heavy"]["total_samples"] / fn["light"]["total_samples"]
print("svg heavy/light %.3f, folded %.3f, json %.3f" % (r, h / l, j), file=sys.stderr)
ok = r > 1 and abs(r - j) <= 0.01 * j and abs(h / l - j) <= 0.01 * j
sys.exit(0 if ok else 1)
PY

# the trace's CPU lane covers the samples: main()'s slices add up to about
# samples x period (gaps up to one period are joined, so more on a busy
# machine; overlapping samples are clamped, so less), and never to more
# than the wall time
python3 - "$T/t.json.gz" "$T/r.json" <<'PY' || fail "trace CPU slices do not match the run's CPU time"
import gzip, json, sys
d = json.load(gzip.open(sys.argv[1]))
r = json.load(open(sys.argv[2]))["run"]
main = sum(e["dur"] for e in d["traceEvents"] if e.get("cat") == "cpu_sample" and e["name"] == "main") * 1000
want = r["weight"] * r["period_ns"]
print("main slices %.0f ns, samples x period %d ns, wall %d ns" % (main, want, r["wall_ns"]), file=sys.stderr)
sys.exit(0 if 0.5 * want <= main <= min(2 * want, r["wall_ns"]) else 1)
PY

if command -v go >/dev/null 2>&1; then
	HOME="$T" GOFLAGS= go tool pprof -top "$T/p.pb.gz" >"$T/top.txt" 2>"$T/top.err" ||
		fail "go tool pprof cannot read the profile: $(head -3 "$T/top.err")"
	grep -Eq ' heavy$' "$T/top.txt" && grep -Eq ' light$' "$T/top.txt" ||
		fail "go tool pprof -top lacks heavy/light: $(head -20 "$T/top.txt")"
else
	note "go not installed (apt-get install golang-go): pprof not read by go tool pprof"
fi
exit 0
