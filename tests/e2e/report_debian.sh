#!/bin/bash
# report_debian — the report of real Debian programs, as a new user runs
# them (issue 32): gcc -O2 -c (--memory), a make -j2 build (--off-cpu) and a
# sqlite3 query (--memory).
#   - the verdict names the program that held the CPU first: cc1, not the
#     gcc driver nor make, and not one of a build's 20 processes;
#   - waiting for a child process is never [sleep] advice;
#   - a memory site is the caller of the program's allocation wrappers
#     (gcc's xmalloc/xcalloc/xrealloc, sqlite's sqlite3Malloc), found from
#     the samples, with "via" naming the wrapper;
#   - memory that gcc's garbage-collected heap keeps until exit is no leak.
# Each part is skipped (and said) when its program is not installed
# (tools/deps.sh --test installs sqlite3; gcc and make come with the build).
. "$(dirname "$0")/lib/common.bash"
need_cbn
command -v python3 >/dev/null || skip "python3 not installed"
ran=0

# A C file of some 400 lines for the compiler: enough for cc1 to own the
# run and for its GC heap to hold memory at exit
gen_c()
{
	local i
	for i in $(seq 1 "$2"); do
		echo "static double g$i(const double *a, int n) { double s = 0; for (int k = 0; k < n; k++) s += a[k] * $i.5 + (k % 7 ? a[(k * 3) % n] : -a[k]); return s; }"
		echo "struct s$i { int a; double b[$i]; const char *name; };"
		echo "double f$i(double *a, int n) { struct s$i x = { $i, { 0 }, \"s$i\" }; return g$i(a, n) + x.a + (n > $i ? f$i(a, n - 1) : 0); }"
	done >"$1"
}

if command -v gcc >/dev/null; then
	ran=1
	gen_c "$T/big.c" 140
	run_cbn --memory --json "$T/gcc.json" -- gcc -O2 -c "$T/big.c" -o "$T/big.o"
	expect_rc 0
	python3 - "$T/gcc.json" <<'PY' || fail "gcc -O2 -c: the verdict or the memory sites"
import json, sys
d = json.load(open(sys.argv[1]))
v = d["verdict"]["text"]
print("# gcc: %s" % v, file=sys.stderr)
assert v.startswith("CPU-bound: ") and " % of the CPU in cc1" in v.split(";")[0], v
m = d["memory"]
bare = lambda f: (f or "").split("(")[0]
# libiberty's wrappers of many callers (xstrdup, seen under one caller in
# a run, is a site by the rule: docs/reading-the-report.md) and the GC heap
wrappers = {"xmalloc", "xcalloc", "xrealloc", "ggc_internal_alloc",
            "ggc_internal_cleared_alloc", "ggc_realloc"}
named = [s for s in m["sites"] if bare(s["function"]) in wrappers]
assert not named, [(s["function"], s["bytes"]) for s in named]
via = [s for s in m["sites"] if bare(s["via"]) in wrappers]
assert via, "no site past gcc's wrappers: %s" % [s["function"] for s in m["sites"][:5]]
# the GC heap at exit is kept on purpose: counted apart, no leak rule on it
assert m["arena_end_bytes"] > 0, m["arena_end_bytes"]
ids = [r["id"] for r in m["recommendations"]]
assert "leak-growing" not in ids, ids
for r in m["recommendations"]:
    assert "ggc_" not in r["evidence"].split(" via ")[0], r["evidence"]
print("# gcc: %d sites past the wrappers, %.2f MiB kept by arenas, rules %s" %
      (len(via), m["arena_end_bytes"] / 2**20, ids), file=sys.stderr)
PY
	grep_out '^Kept until exit on purpose, not leaks: ~[0-9.]+ [KMG]iB held by arena and GC allocators \(most by ggc_'
	grep -q 'at \[cc1\]:0(xmalloc)\|at ~:0(' "$OUTF" && fail "gcc: a rule's evidence names a wrapper or ~:0"
else
	note "no gcc: no compiler part"
fi

if command -v make >/dev/null && command -v gcc >/dev/null; then
	ran=1
	mkdir -p "$T/proj"
	for i in 1 2 3 4 5 6; do
		gen_c "$T/proj/f$i.c" 30
	done
	echo 'int main(void) { return 0; }' >"$T/proj/main.c"
	printf 'OBJS = $(patsubst %%.c,%%.o,$(wildcard *.c))\nall: prog\nprog: $(OBJS)\n\tgcc -o $@ $^\n%%.o: %%.c\n\tgcc -O2 -c $< -o $@\n' >"$T/proj/Makefile"
	(cd "$T/proj" && run_cbn --off-cpu --json "$T/make.json" -- make -j2)
	expect_rc 0
	python3 - "$T/make.json" <<'PY' || fail "make -j2: the verdict"
import json, sys
d = json.load(open(sys.argv[1]))
v = d["verdict"]["text"]
print("# make: %s" % v, file=sys.stderr)
g = [p for p in d["programs"] if p["cpu_ns"] > 0]
assert g[0]["name"] == "cc1" and g[0]["processes"] >= 6, [(p["name"], p["processes"]) for p in g]
assert v.startswith("CPU-bound: ") and " % of the CPU in cc1 (" in v, v
assert "the run kept its " in v, v
PY
	grep -q '^  \[sleep\]' "$OUTF" && fail "make -j2: waiting for the compilers read as [sleep] advice"
	grep_out '^Programs \(CPU by program image'
else
	note "no make or gcc: no build part"
fi

if command -v sqlite3 >/dev/null; then
	ran=1
	run_cbn --memory --json "$T/sqlite.json" -- sqlite3 :memory: \
		"with recursive r(i) as (select 1 union all select i + 1 from r where i < 100000) select count(*), sum(length(printf('%s-%d', hex(randomblob(16)), i))) from r;"
	expect_rc 0
	python3 - "$T/sqlite.json" <<'PY' || fail "sqlite3: the memory sites"
import json, sys
d = json.load(open(sys.argv[1]))
m = d["memory"]
bare = lambda f: (f or "").split("(")[0]
wrappers = {"sqlite3Malloc", "sqlite3MemMalloc", "sqlite3_malloc", "sqlite3_malloc64",
            "sqlite3Realloc", "sqlite3MemRealloc", "sqlite3DbMallocRawNN", "sqlite3DbMallocRaw"}
top = m["sites"][:5]
print("# sqlite3: %s" % ["%s via %s" % (s["function"], s["via"]) for s in top], file=sys.stderr)
assert top and not [s for s in m["sites"] if bare(s["function"]) in wrappers], top
assert [s for s in top if s["via"]], "no site past sqlite's wrappers: %s" % top
for r in m["recommendations"]:
    at = r["evidence"].split(" at ")[-1].split(" via ")[0]
    assert not any("(%s)" % w in at for w in wrappers), r["evidence"]
PY
else
	note "no sqlite3 (tools/deps.sh --test installs it): no sqlite part"
fi
[ "$ran" = 1 ] || skip "none of gcc, make and sqlite3 is installed"
exit 0
