#!/bin/bash
# dist_report — the merged report of a distributed run, on synthetic rank
# sessions (bench/gen_session.c: 8 ranks, four per host, node1's clock 5 ms
# behind node0's with CLOCK records saying so; 10 steps of compute then
# MPI_Allreduce then a Send/Recv ring; rank 2 computes twice as long):
#   - the text report names rank 2 the straggler at 2.0x the median, the
#     others waiting 45 % of the step in MPI_Allreduce (exact by construction:
#     tolerance 1 point for the clock's interpolation);
#   - the JSON section validates against docs/report.schema.json; byte
#     counts are exact (10 x (800 + 4096) each way); ranks on node1 are on
#     the reference clock (source mpi, offset 5 ms, uncertainty 10 us) and
#     wait as long as those on node0;
#   - --ranks 0-1,5 keeps those three; --rank with a list is a usage error;
#   - a rank file cut in half still merges (exit 1, a warning, 8 ranks);
#   - compare gates imbalance and mpi.time fire on the straggler run against
#     a balanced one (which says "Balanced"), and pass on itself;
#   - a session of no rank has no distributed section;
#   - the trace has one process group per rank, "rank N (host, pid P)",
#     sorted by rank, and the MPI calls as slices (cat mpi) that line up
#     across hosts (pids repeat across hosts, each rank keeps its own group);
. "$(dirname "$0")/lib/common.bash"
need_cbn
command -v cc >/dev/null 2>&1 || skip "no C compiler to build bench/gen_session.c"
command -v python3 >/dev/null 2>&1 || skip "python3 not installed"

gen="$T/gen_session"
cc -std=c11 -D_GNU_SOURCE -O1 -g -I"$CBN_SOURCE_DIR/src/format" \
	"$CBN_SOURCE_DIR/bench/gen_session.c" -o "$gen" || fail "cannot build bench/gen_session.c"
"$gen" "$T/s" 400 8 8 2 >/dev/null || fail "gen_session (straggler) failed"
"$gen" "$T/b" 400 8 8 -1 >/dev/null || fail "gen_session (balanced) failed"

run_cbn report --json "$T/s.json" --trace "$T/s.trace.json" "$T/s"
expect_rc 0
grep_out '^Distributed run: 8 ranks found of world size 8, MPI: Open MPI'
grep_out 'Straggler: rank 2 computes 2\.0x the median; ranks 0,1,3,4,5,6,7 spend 4[4-6] % of the step in MPI_Allreduce waiting for it'
grep_out 'MPI_Allreduce +10 +0 .*rank 2 \(10x\)'
grep_out '\[dist-straggler\]'
if python3 -c 'import jsonschema' 2>/dev/null; then
	validate_schema "$T/s.json"
else
	note "python3-jsonschema not installed: schema not checked"
fi
python3 - "$T/s.json" <<'PY' || fail "distributed section is wrong"
import json, sys
d = json.load(open(sys.argv[1]))["distributed"]
assert d["world_size"] == 8 and d["ranks_found"] == 8 and d["missing"] == 0, d
s = d["straggler"]
assert s["rank"] == 2 and abs(s["ratio"] - 2.0) < 0.01 and s["call"] == "MPI_Allreduce", s
assert 44 <= s["wait_pct"] <= 46, s
assert abs(d["imbalance"] - 16 / 9) < 0.01, d["imbalance"]
r = d["ranks"]
assert [x["rank"] for x in r] == list(range(8))
for x in r:
    assert x["bytes_sent"] == 10 * (800 + 4096) and x["bytes_recv"] == 10 * (800 + 4096), x
    assert x["steps"] == 10, x
    assert x["source"] == "ompi"
    node1 = x["rank"] >= 4
    assert x["host"] == ("node1" if node1 else "node0")
    assert x["clock"]["source"] == ("mpi" if node1 else "same-host"), x
    if node1:
        assert x["clock"]["offset_ns"] == 5000000 and x["clock"]["uncertainty_ns"] == 10000, x
    if x["rank"] != 2:
        # node1's ranks wait as long as node0's: their clocks are aligned
        assert abs(x["mpi_wait_ns"] - r[0]["mpi_wait_ns"]) <= 20000, (x, r[0])
assert r[2]["mpi_wait_ns"] == 0
assert d["clock"]["uncertainty_ns"] == 10000
c = [x for x in d["collectives"] if x["call"] == "MPI_Allreduce"][0]
assert c["instances"] == 10 and c["unmatched"] == 0 and c["latest_rank"] == 2, c
assert c["bytes"] == 8 * 10 * 1600, c
h = {x["call"]: x for x in d["histograms"]}
assert h["MPI_Send"]["bins"][3] == {"le": 4096, "count": 80}, h["MPI_Send"]
assert {x["call"] for x in d["sites"]} == {"MPI_Allreduce", "MPI_Send", "MPI_Recv"}
assert [x["id"] for x in d["recommendations"]][:2] == ["dist-straggler", "dist-imbalance"]
print("straggler", s, "imbalance %.3f" % d["imbalance"])
PY

# the trace: one group per rank, named and sorted by rank
python3 - "$T/s.trace.json" <<'PY' || fail "the trace's rank groups are wrong"
import json, re, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"] if isinstance(d, dict) else d
names = {e["pid"]: e["args"]["name"] for e in ev if e.get("name") == "process_name"}
order = {e["pid"]: e["args"]["sort_index"] for e in ev if e.get("name") == "process_sort_index"}
ranks = sorted((order[p], n) for p, n in names.items())
assert len(ranks) == 8, ranks
for i, (o, n) in enumerate(ranks):
    assert o == i and re.fullmatch(r"rank %d \(node%d, pid \d+\)" % (i, i // 4), n), (o, n)
# node1's samples start with node0's (one timeline): within 1 ms
first = {}
for e in ev:
    if e.get("ph") == "X":
        first[e["pid"]] = min(first.get(e["pid"], 1e18), e["ts"])
assert max(first.values()) - min(first.values()) < 1000, first
# the MPI calls, one slice each (Init, 10 x Allreduce + Send + Recv, Finalize per rank), and
# the allreduce of one step ends at once on every rank (the clocks aligned: within 5 us)
mpi = [e for e in ev if e.get("cat") == "mpi"]
assert len(mpi) == 8 * 32, len(mpi)
ends = [e["ts"] + e["dur"] for e in mpi if e["name"] == "MPI_Allreduce" and e["args"]["seq"] == 5]
assert len(ends) == 8 and max(ends) - min(ends) < 5, ends
PY

# --ranks / --rank
run_cbn report --json "$T/f.json" --ranks 0-1,5 "$T/s"
expect_rc 0
[ "$(json_py "$T/f.json" '[r["rank"] for r in d["distributed"]["ranks"]]')" = "[0, 1, 5]" ] ||
	fail "--ranks 0-1,5 kept $(json_py "$T/f.json" '[r["rank"] for r in d["distributed"]["ranks"]]')"
# the ranks left out are not missing: 3 of 8 selected, none missing
[ "$(json_py "$T/f.json" '(d["distributed"]["selected"], d["distributed"]["missing"])')" = "(3, 0)" ] ||
	fail "--ranks 0-1,5: selected/missing $(json_py "$T/f.json" '(d["distributed"]["selected"], d["distributed"]["missing"])'), expected (3, 0)"
grep_out '^Distributed run: 3 ranks found of world size 8 \(3 selected by --ranks\), MPI'
# a selected rank without a session is missing (rank 1's directory gone)
cp -r "$T/s" "$T/m"
rm -rf "$T/m/rank-00001"
run_cbn report --json "$T/g.json" --ranks 0-1,6-9 "$T/m"
expect_rc 0
[ "$(json_py "$T/g.json" '(d["distributed"]["selected"], d["distributed"]["missing"], d["distributed"]["ranks_found"])')" = "(4, 1, 3)" ] ||
	fail "--ranks 0-1,6-9 (world 8, rank 1 gone): $(json_py "$T/g.json" '(d["distributed"]["selected"], d["distributed"]["missing"], d["distributed"]["ranks_found"])'), expected (4, 1, 3)"
grep_out '^Distributed run: 3 ranks found of world size 8 \(4 selected by --ranks, 1 missing\), MPI'
rm -rf "$T/m"
run_cbn report -q --rank 1-2 "$T/s"
expect_rc 2
grep -q -- "--rank 1-2: expected a rank number" "$ERRF" || fail "no usage error for --rank 1-2"
run_cbn report -q --ranks 3-1 "$T/s"
expect_rc 2

# a rank file cut in half still merges, with a warning
cp -r "$T/s" "$T/t"
f=$(ls "$T"/t/rank-00003/*.cbp)
truncate -s $(($(stat -c %s "$f") / 2)) "$f"
run_cbn report -q --json "$T/t.json" "$T/t"
expect_rc 1
grep -q "rank-00003/.*truncated" "$ERRF" || fail "no warning about the cut rank file"
[ "$(json_get "$T/t.json" 'distributed.ranks_found')" = 8 ] || fail "the cut rank did not merge"

# the gates (and the balanced run says so)
run_cbn report --json "$T/b.json" "$T/b"
expect_rc 0
grep_out '^  Balanced: compute per step max / mean = 1\.00'
[ "$(json_get "$T/b.json" 'distributed.straggler')" = None ] || fail "a straggler in the balanced run"

# a session of no rank (older files: rank state all zero) has no distributed section
"$gen" "$T/plain" 400 8 >/dev/null || fail "gen_session (plain) failed"
run_cbn report -q --json "$T/plain.json" "$T/plain"
expect_rc 0
[ "$(json_py "$T/plain.json" '"distributed" in d')" = False ] || fail "distributed section without ranks"
grep -q '^Distributed run' "$OUTF" && fail "Distributed run section without ranks"
run_cbn compare --fail 'imbalance:+10%' --fail 'mpi.time:+20%' --fail 'rank.max.wall:+5%' \
	"$T/b.json" "$T/s.json"
expect_rc 1
grep_out '^imbalance .* FAIL'
grep_out '^mpi\.time .* FAIL'
grep_out '^rank\.max\.wall .* ok'
run_cbn compare --fail 'imbalance:+10%' --fail 'mpi.time:+20%' "$T/s.json" "$T/s.json"
expect_rc 0
echo "dist_report: ok"
