#!/bin/bash
# html_compare — `compare BASE.json NEW.json --html FILE`: the gate's table
# on stdout as without --html and the same text in the page with its exit
# status; in the browser the fragment selects the views it names alone, the
# per-function differential draws bars that grew (red) and shrank (blue)
# (split with heavy:light 1:1, then 5:1: heavy grows, light shrinks), and the
# differential flame graph from the two reports' call_tree colours its frames
# by their change, gives base/new/delta per frame and copes with a path on
# one side only (one added to NEW's tree, one renamed away from it).  A broken
# report is refused before any page is written.
# The same browser launch checks two views of the NEW report the compare
# page also shows (browser start-up is most of a test's time): the waiting
# view on the waiting section of a real off-CPU run (examples/wait_lock
# --off-cpu --html: verdict, lock and per-thread tables), and the distributed
# view on a hand-made "distributed" section in the shape docs/distributed.md
# gives (a row and a split bar per rank, the straggler sentence, sites and
# collectives).  One browser launch.
. "$(dirname "$0")/lib/common.bash"
. "$CBN_SOURCE_DIR/tests/html/browser.bash"
need_cbn
need_example split
need_example wait_lock

run_cbn --json "$T/base.json" -- "$EXAMPLES/split" 0.3 1
expect_rc 0
run_cbn --json "$T/new.json" -- "$EXAMPLES/split" 0.3 5
expect_rc 0
# a real off-CPU run's page: its data holds the waiting section the browser
# checks below, in the compare page
# (the lock is missed now and then, as in e2e.wait_lock: once more then)
for attempt in 1 2; do
	run_cbn --off-cpu --json "$T/w.json" --html "$T/w.html" -- "$EXAMPLES/wait_lock" 20
	expect_rc 0
	[ "$(html_data "$T/w.html" 'len(d["report"]["waiting"]["locks"])')" -ge 1 ] && break
	[ $attempt = 2 ] && fail "wait_lock --off-cpu --html: no lock in the page's waiting section (2 tries)"
	note "wait_lock --off-cpu --html: no lock in the first try; once more"
done
# NEW: the split run, with the waiting section of the wait_lock run, a
# distributed section by hand, and its call tree given a path BASE lacks
# and losing one BASE has
/usr/bin/python3 - "$T/new.json" "$T/w.json" <<'PY' || fail "cannot edit new.json"
import json, sys
d = json.load(open(sys.argv[1]))
d["waiting"] = json.load(open(sys.argv[2]))["waiting"]
ct = d["call_tree"]["nodes"]
assert ct and ct[0]["parent"] == -1, ct[:1]
add = 10000000
ct[0]["total_ns"] += add
ct.append({"parent": 0, "function": "only_in_new", "file": "", "line": 0, "self_ns": add,
	   "total_ns": add, "inlined": False})
gone = next(i for i in range(len(ct) - 1, 0, -1) if ct[i]["function"] != "only_in_new")
ct[gone]["function"] = "renamed_in_new"
def rank(r, wall, comp, comm):
	return {"rank": r, "local_rank": r, "host": "node1", "pid": 100 + r, "processes": 1,
		"device": "", "crashed": False, "source": "ompi", "wall_ns": wall, "cpu_ns": comp,
		"gpu_ns": 0, "mpi_ns": comm, "mpi_wait_ns": comm // 2, "compute_ns": comp,
		"bytes_sent": 4096, "bytes_recv": 4096, "steps": 10, "step_mean_ns": wall // 10,
		"step_max_ns": wall // 8, "compute_per_step_ns": comp // 10,
		"split": {"source": "host", "computation_ns": comp, "overlap_ns": 0,
			  "communication_ns": comm, "other_ns": wall - comp - comm},
		"clock": {"source": "same-host", "offset_ns": 0, "uncertainty_ns": 0}}
d["distributed"] = {
	"world_size": 3, "ranks_found": 3, "missing": 0, "mpi": "Open MPI v4.1.4",
	"clock": {"uncertainty_ns": 1234}, "imbalance": 1.9,
	"straggler": {"rank": 2, "ratio": 1.9, "call": "MPI_Allreduce", "wait_pct": 48.0},
	"app_ns": 3000000000, "mpi_ns": 900000000, "mpi_pct": 30.0,
	"ranks": [rank(0, 1000000000, 400000000, 500000000), rank(1, 1000000000, 420000000, 480000000),
		  rank(2, 1000000000, 800000000, 100000000)],
	"sites": [{"call": "MPI_Allreduce", "function": "main", "file": "train.c", "line": 42,
		   "calls": 30, "time_ns": 800000000, "max_ns": 90000000, "bytes": 122880,
		   "app_pct": 26.7, "mpi_pct": 88.9, "cov": 0.8, "wait_ns": 700000000},
		  {"call": "MPI_Barrier", "function": "main", "file": "train.c", "line": 50,
		   "calls": 3, "time_ns": 100000000, "max_ns": 40000000, "bytes": 0,
		   "app_pct": 3.3, "mpi_pct": 11.1, "cov": 0.2, "wait_ns": 90000000}],
	"collectives": [{"call": "MPI_Allreduce", "instances": 10, "unmatched": 0,
			 "time_ns": 800000000, "wait_ns": 700000000, "transfer_ns": 100000000,
			 "bytes": 122880, "latest_rank": 2, "latest_count": 10}],
	"histograms": [{"call": "MPI_Allreduce", "bins": [{"le": 64, "count": 0},
		       {"le": 4096, "count": 30}]}],
	"recommendations": [{"id": "dist-straggler", "message": "rank 2 computes 1.9x the mean",
			     "evidence": "compute per step"}]}
json.dump(d, open(sys.argv[1], "w"))
PY
st_plain=0
"$CBN" compare "$T/base.json" "$T/new.json" >"$T/plain.out" 2>/dev/null || st_plain=$?
st=0
"$CBN" compare "$T/base.json" "$T/new.json" --html "$T/cmp.html" >"$T/html.out" 2>"$T/err" || st=$?
[ $st = $st_plain ] || fail "compare exits $st with --html, $st_plain without"
# the tables agree but for the measured figures' noise: same rows
diff <(cut -c1-40 "$T/plain.out") <(cut -c1-40 "$T/html.out") >/dev/null ||
	fail "compare --html printed another table than compare"
[ -s "$T/cmp.html" ] || fail "compare --html wrote no page: $(cat "$T/err")"
[ "$(html_data "$T/cmp.html" 'd["gate"]["status"]')" = $st ] || fail "the page's gate status is not $st"
html_data "$T/cmp.html" 'd["gate"]["table"]' | grep 'func\[' >/dev/null || fail "the page lacks the gate's table"

echo '{"broken' >"$T/bad.json"
st=0
"$CBN" compare "$T/base.json" "$T/bad.json" --html "$T/bad.html" >/dev/null 2>&1 || st=$?
[ $st = 2 ] || fail "a broken report is not a usage error (2)"
[ -e "$T/bad.html" ] && fail "a page was written for a broken report"

html_open "$T/cmp.html" '#compare,waiting,distributed&selftest=all' html_compare 4000
html_expect '^render compare ok' '^render waiting ok' '^render distributed ok' \
	'^selftest compare\.bars ok grew=[1-9][0-9]* shrank=[1-9]' \
	'^selftest compare\.flame ok frames=[1-9][0-9]* grew=[1-9][0-9]* shrank=[1-9][0-9]* only_new=[1-9][0-9]* only_base=[1-9]' \
	'^selftest waiting\.tables ok verdict=[a-z-]+ per_thread=[1-9][0-9]* locks=[1-9]' \
	'^selftest distributed\.ranks ok ranks=3 segments=[1-9][0-9]* sites=2 collectives=1 straggler=2'
grep -q 'data-view="compare,waiting,distributed"' "$DOM" || fail "the fragment did not select the views it names"
grep -q 'id="view-cpu"' "$DOM" && fail "#compare,... rendered a view it does not name"
exit 0
