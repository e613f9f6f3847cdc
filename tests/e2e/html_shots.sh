#!/bin/bash
# html_shots — the --html page as people see it: real runs (a CPU run with a
# deep recursion and compare --html of it against a second one, a --memory
# --off-cpu run, a make -j2 build of 12 generated C files, a sqlite3 query
# with --memory, a Python script with --step-func, and on the simulated
# CUPTI a run with steps and GPU work and one with steps and a GPU memory
# pool) opened in headless chromium at 1280
# and 1920 px, every view of each (tests/html/shots.py, one browser launch):
# each renders without a JavaScript error and passes the page's layout
# check (lib_check.js: nothing past the page or its container, every table's
# numbers in view, no blank band in a canvas, every chart drawn, no raw
# float, bare nanosecond count or JSON key as a label), and the standalone
# --flamegraph SVG shows frames in its first screen.  A screenshot of every
# view and width is kept in BUILD/html-screenshots/views (the last run's:
# .ci/run copies it into its log folder).
. "$(dirname "$0")/lib/common.bash"
. "$CBN_SOURCE_DIR/tests/html/browser.bash"
need_cbn
need_example recursion mem_threads
b=$(html_find_browser) || skip "no chromium on PATH (tools/deps.sh --test installs it)"

run_cbn -q --html "$T/cpu.html" --flamegraph "$T/cpu.svg" --json "$T/cpu.json" -- "$EXAMPLES/recursion"
expect_rc 0
# a second run of it for compare --html (the differential flame graph)
run_cbn -q --json "$T/cpu2.json" -- "$EXAMPLES/recursion"
expect_rc 0
"$CBN" compare "$T/cpu.json" "$T/cpu2.json" --html "$T/cmp.html" >/dev/null 2>&1 || fail "compare --html"
run_cbn -q --memory --off-cpu --html "$T/mem.html" -- "$EXAMPLES/mem_threads"
expect_rc 0
# its Source view holds the program's own file only: never the agent's
# allocation hooks (src/agent/mem*.c), never glibc's ./malloc/malloc.c
srcs=$(html_data "$T/mem.html" '" ".join(s["file"] for s in d["html"]["sources"])')
[ -n "$srcs" ] || note "no hot source file in this run's Source view"
for f in $srcs; do
	[ "${f##*/}" = mem_threads.c ] || fail "the Source view holds $f, not the program's own"
done
pages=(--page "cpu=$T/cpu.html" --page "mem=$T/mem.html" --page "cmp=$T/cmp.html")
# Real programs of many processes and of a library (issue 32): a build
# (make -j2 of 12 generated C files: cc1, as, the gcc driver, make), a
# sqlite3 query with --memory, and a Python script through --step-func
if command -v make >/dev/null && command -v cc >/dev/null; then
	mkdir -p "$T/proj"
	for i in $(seq 1 12); do
		{
			for j in 1 2 3 4 5 6; do
				echo "static double g$j(double *a, int n) { double s = 0; for (int k = 0; k < n; k++) s += a[k] * $j.5 + (k % 7 ? a[(k * 3) % n] : -a[k]); return s; }"
			done
			echo "double f$i(double *a, int n) { return g1(a, n) + g2(a, n + 1) + g3(a, n + 2) + g4(a, n + 3) + g5(a, n + 4) + g6(a, n + 5); }"
		} >"$T/proj/f$i.c"
	done
	echo 'int main(void) { return 0; }' >"$T/proj/main.c"
	printf 'OBJS = $(patsubst %%.c,%%.o,$(wildcard *.c))\nall: prog\nprog: $(OBJS)\n\t$(CC) -o $@ $^\n%%.o: %%.c\n\t$(CC) -O2 -c $< -o $@\n' >"$T/proj/Makefile"
	(cd "$T/proj" && run_cbn -q --off-cpu --html "$T/build.html" --json "$T/build.json" -- make -j2)
	expect_rc 0
	pages+=(--page "build=$T/build.html")
else
	note "no make or cc: no build page"
fi
if command -v sqlite3 >/dev/null; then
	run_cbn -q --memory --off-cpu --html "$T/sqlite.html" -- sqlite3 :memory: \
		"with recursive r(i) as (select 1 union all select i + 1 from r where i < 200000) select count(*), sum(length(printf('%s-%d', hex(randomblob(16)), i))) from r;"
	expect_rc 0
	pages+=(--page "sqlite=$T/sqlite.html")
else
	note "no sqlite3 (tools/deps.sh --test installs it): no sqlite page"
fi
run_cbn -q --step-func process_batch --html "$T/python.html" -- /usr/bin/python3 "$CBN_SOURCE_DIR/tests/python/steps_loop.py"
expect_rc 0
pages+=(--page "python=$T/python.html")
if [ "${CBN_HAVE_CUDA:-OFF}" = ON ]; then
	W="$CBN_BUILD_DIR/tests/cuda/cuda_workload"
	need_built "$W"
	export LD_LIBRARY_PATH="$CBN_BUILD_DIR/tests/fakecupti${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	# cbn_step() steps, kernels on two streams, copies, syncs and an idle
	# sleep per step (workload.h, wl_nccl)
	run_cbn -q -F 500 --memory --html "$T/cuda.html" -- "$W" nccl
	expect_rc 0
	# 40 steps of cudaMalloc/cudaFree, a cudaMallocAsync pool and a peak
	# (workload.h, wl_memory): allocated and reserved curves
	run_cbn -q -F 500 --memory --step '^step$' --html "$T/gpumem.html" -- "$W" memory
	expect_rc 0
	pages+=(--page "cuda=$T/cuda.html" --page "gpumem=$T/gpumem.html")
else
	note "built without CUDA: no simulated-CUDA pages"
fi

# the build's page: its CPUs in use by program (cc1 first), the programs
# and modules table, the waiting view's colours told apart and no second
# verdict
if [ -s "$T/build.html" ]; then
	html_open "$T/build.html" '#overview,cpu,waiting&selftest=all' html_build 4000
	html_expect '^render overview ok' '^render cpu ok' '^render waiting ok' \
		'^selftest overview\.cores ok bars=[1-9][0-9]* series=cc1\|' \
		'^selftest waiting\.tables ok '
	grep -q 'data-table="programs"' "$DOM" || fail "the build's CPU view has no programs table"
	python3 - "$T/build.json" <<'PY' || fail "the build's JSON programs"
import json, sys
d = json.load(open(sys.argv[1]))
g = d["programs"]
assert g[0]["name"] == "cc1" and g[0]["processes"] >= 12, g[0]
assert d["verdict"]["text"].startswith("CPU-bound: "), d["verdict"]
assert " of the CPU in cc1 (" in d["verdict"]["text"], d["verdict"]
PY
fi

out="$CBN_BUILD_DIR/html-screenshots/views"
rm -rf "$out"
rc=0
/usr/bin/python3 "$CBN_SOURCE_DIR/tests/html/shots.py" "$b" "$out" --width 1280 --width 1920 \
	"${pages[@]}" --svg "cpu=$T/cpu.svg" >"$T/shots.out" 2>&1 || rc=$?
cat "$T/shots.out" >&2
[ $rc = 77 ] && skip "chromium could not start"
[ $rc = 0 ] || fail "$(grep -c '^FAIL' "$T/shots.out") views failed their check (above)"
# the views each page has (shots.py asks the page), the same at both
# widths: at least the CPU page's five (overview, CPU, source, timeline,
# waiting), the memory page's six (and memory), the compare page's five
# (overview, CPU, source, waiting, compare), the CUDA ones' seven and nine
# (operators, kernels, memory, steps; the nccl one may have too few
# samples for a CPU view)
n1=$(grep -c '^ok [a-z]* [a-z]* 1280 elements=' "$T/shots.out")
n2=$(grep -c '^ok [a-z]* [a-z]* 1920 elements=' "$T/shots.out")
min=$((16 + 3 * (${#pages[@]} / 2 - 3)))
[ "${CBN_HAVE_CUDA:-OFF}" = ON ] && min=$((min + 16))
[ "$n1" = "$n2" ] && [ "$n1" -ge $min ] || fail "$n1 and $n2 views checked at 1280 and 1920 px, $min expected"
grep -q '^ok cpu svg 1280 ' "$T/shots.out" || fail "the flame graph SVG was not checked"
[ "$(ls "$out"/*.png | wc -l)" -ge $((n1 + n2 + 2)) ] || fail "screenshots missing in $out"
note "screenshots: $out"
exit 0
