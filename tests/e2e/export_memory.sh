#!/bin/bash
# export_memory — the memory view in the machine-readable outputs of a real
# run.  Without memory data: --sample-type with a memory type is a one-line
# usage error (exit 2), the JSON report has no "memory" object, the trace no
# counter, and a mem.* gate on that baseline says "no memory data in the
# baseline" (exit 2).  When the launcher records memory (--memory), a Python
# run that allocates ~200 MB gives a JSON memory object that satisfies the
# schema, a "Host memory" counter track, pprof heap types that go tool pprof
# reads, alloc_space folded stacks, and a mem.peak gate that passes against
# itself.
. "$(dirname "$0")/lib/common.bash"
need_cbn
need_example split
CHECK="python3 $CBN_SOURCE_DIR/tests/e2e/export_check.py"

"$CBN" --help 2>&1 | grep -q -- '--sample-type' || fail "--help does not mention --sample-type"

# usage errors before anything runs
run_cbn --sample-type bogus --folded "$T/x.folded" -- "$EXAMPLES/split" 0.05
expect_rc 2
[ "$(wc -l <"$ERRF")" = 1 ] || fail "not a one-line error: $(cat "$ERRF")"
grep -q 'expected cpu, wall, offcpu, alloc_space' "$ERRF" || fail "bad --sample-type not explained"
run_cbn --sample-type alloc_space -- "$EXAMPLES/split" 0.05
expect_rc 2
grep -q -- '--sample-type needs --folded FILE or --flamegraph FILE' "$ERRF" ||
	fail "--sample-type without an output not refused: $(cat "$ERRF")"

# a run without memory data
run_cbn -q -o "$T/s" --json "$T/cpu.json" --trace "$T/cpu.trace.json" -- "$EXAMPLES/split" 0.2
expect_rc 0
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit("memory" in d or d["schema_version"] != 5)' \
	"$T/cpu.json" || fail "a run without memory data has a memory object (or not schema 3)"
$CHECK trace "$T/cpu.trace.json" >"$T/chk" || fail "trace check: $(cat "$T/chk")"
grep -q ' counters=0$' "$T/chk" || fail "counter tracks without memory data: $(cat "$T/chk")"
for t in alloc_space alloc_objects inuse_space inuse_objects; do
	run_cbn report -q --sample-type $t --folded "$T/m.folded" "$T/s"
	expect_rc 2
	[ "$(wc -l <"$ERRF")" = 1 ] || fail "$t: not a one-line error: $(cat "$ERRF")"
	grep -q "sample-type $t: the run has no memory data" "$ERRF" ||
		fail "$t: no 'no memory data' message: $(cat "$ERRF")"
	[ ! -e "$T/m.folded" ] || fail "$t: a folded file was written anyway"
done
run_cbn report -q --sample-type cpu --folded "$T/c.folded" "$T/s"
expect_rc 0
grep -q ' heavy ' "$T/c.folded" || grep -q 'heavy [0-9]' "$T/c.folded" || fail "cpu folded lacks heavy"
run_cbn compare --fail 'mem.peak:+10%' "$T/cpu.json" "$T/cpu.json"
expect_rc 2
grep -q "no memory data in the baseline $T/cpu.json" "$ERRF" ||
	fail "mem gate on a CPU-only baseline: $(cat "$ERRF")"

if ! "$CBN" --help 2>&1 | grep -q -- '--memory'; then
	note "launcher has no --memory yet: outputs of a real memory run not checked"
	exit 0
fi
command -v python3 >/dev/null 2>&1 || skip "python3 not installed"
PROG=(python3 -c 'x = [bytes(1000) for _ in range(200000)]; del x[::2]; print(len(x))')
run_cbn -q --memory --json "$T/m.json" --trace "$T/m.trace.json" --pprof "$T/m.pb.gz" \
	--folded "$T/m.folded" --sample-type alloc_space -- "${PROG[@]}"
expect_rc 0
python3 - "$T/m.json" <<'PY' || fail "JSON memory object: wrong shape"
import json, sys
m = json.load(open(sys.argv[1]))["memory"]
host = [s for s in m["spaces"] if s["kind"] == "host"]
assert host, "no host space"
# 200000 x ~1 KB live at once: the peak is at least 150 MB (in the
# interpreter's process: python3 may be a wrapper script that execs it)
peak = max(s["peak_bytes"] for s in host)
assert peak >= 150e6, [s["peak_bytes"] for s in host]
assert m["sites"], "no allocation site"
assert all(m["sites"][i]["bytes"] >= m["sites"][i + 1]["bytes"] for i in range(len(m["sites"]) - 1))
PY
if python3 -c 'import jsonschema' 2>/dev/null; then
	validate_schema "$T/m.json"
fi
$CHECK trace "$T/m.trace.json" --counters 'Host memory' >"$T/chk" || fail "trace: $(cat "$T/chk")"
[ -s "$T/m.folded" ] || fail "alloc_space folded stacks are empty"
if command -v go >/dev/null 2>&1; then
	HOME="$T" GOFLAGS= go tool pprof -sample_index=alloc_space -top "$T/m.pb.gz" >"$T/top" 2>"$T/top.err" ||
		fail "go tool pprof -sample_index=alloc_space: $(head -3 "$T/top.err")"
	grep -q 'Type: alloc_space' "$T/top" || fail "pprof: no alloc_space type: $(head "$T/top")"
fi
run_cbn compare --fail 'mem.peak:+10%' "$T/m.json" "$T/m.json"
expect_rc 0
exit 0
