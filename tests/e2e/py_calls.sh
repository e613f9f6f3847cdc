#!/bin/bash
# py_calls — --calls counts Python calls exactly, as cProfile counts them:
# on CPython 3.11 (the frame evaluation function, and with builtins the
# profile function), 3.12 and 3.13 (sys.monitoring),
# those installed, tests/python/calls.py's functions have the same total and
# primitive calls in the JSON report as cProfile gives on the same script
# (a recursion, an indirect one, a generator's resumptions, a recursive
# generator, a method, a function that raises, a lambda, comprehensions and
# generator expressions, asyncio tasks' coroutines, one called 3 times and
# never sampled; and with --calls=builtins three builtins by cProfile's names,
# which --calls alone does not count), by name and line, and a function run
# by two threads at once has its known counts (cProfile's own are wrong or
# missing there); the CPU
# table prints them as pstats does
# ("242785/1") with the times per call; a program started with SIGINT
# ignored is counted too, and so is a C program that embeds the interpreter
# with its signal handlers (without them the report says it did not count);
# the gate reads func[NAME].calls as an exact count; without --calls nothing
# is counted; the real coverage.py and pdb see what they see plainly.
. "$(dirname "$0")/lib/common.bash"
. "$(dirname "$0")/lib/python.bash"
need_cbn
need_python_jsonschema
CALLS="$CBN_SOURCE_DIR/tests/python/calls.py"

# cmp.py REPORT.json CPROFILE.txt VERSION builtins|python threads|main: every
# function of calls.py (and with builtins, each builtin it calls) has
# cProfile's counts, by name and line; with threads, those run by two threads
# at once their known counts
cat > "$T/cmp.py" <<'PY'
import json, sys
rep, ref, v = json.load(open(sys.argv[1])), {}, sys.argv[3]
want_b, threads = sys.argv[4] == "builtins", sys.argv[5] == "threads"
for line in open(sys.argv[2]):
    name, at, nc, cc = line.rsplit(None, 3)
    ref[(name, int(at))] = (int(nc), int(cc))
seen, bad = set(), []
builtins = {k for k in ref if k[0].startswith("{")} if want_b else set()
# run by two threads at once: cProfile keeps one stack for every thread
# (3.12+; 3.11's sees the main thread only), so these have known counts
# instead: TICKS calls in each thread, none nested in another
known = {"tick": (100000, 100000), "ticker": (2, 2)}
for f in rep["functions"]:
    if "cprofile_name" in f and not want_b:
        bad.append("a builtin counted: " + f["cprofile_name"])
        continue
    if "cprofile_name" in f and (f["cprofile_name"], 0) in builtins:
        k = (f["cprofile_name"], 0)
        seen.add(k[0])
        if (f["calls"], f["primitive_calls"]) != ref[k]:
            bad.append("%s: %d/%d, cProfile %d/%d" % ((k[0], f["calls"], f["primitive_calls"]) + ref[k]))
        continue
    if not f["file"].endswith("calls.py") or "calls" not in f:
        continue
    name = f["name"].rsplit(".", 1)[-1]
    k = (name, f["line"])
    seen.add(name)
    if name in known:
        if threads and (f["calls"], f["primitive_calls"]) != known[name]:
            bad.append("%s: %d/%d, not %d/%d" % ((name, f["calls"], f["primitive_calls"]) + known[name]))
        continue
    if k in ref and (f["calls"], f["primitive_calls"]) != ref[k]:
        bad.append("%s:%d: %d/%d, cProfile %d/%d" % (k + (f["calls"], f["primitive_calls"]) + ref[k]))
# rare is called 3 times and never sampled: its row comes from the count,
# as leaf's (12 calls, none nested, from frames laid over ended ones),
# named before the interpreter's finalization freed it
missing = {"tiny", "fib", "is_even", "counter", "walk", "rare", "leaf", "<lambda>", "<genexpr>", "hop"}
if threads:
    missing |= set(known)
if v == "3.11":
    missing.add("<listcomp>")
missing -= seen
missing |= {k[0] for k in builtins} - seen
# a builtin's samples are its own, not folded into the Python line that
# called it with the rest of the interpreter
sw = [f for f in rep["functions"] if f.get("cprofile_name") == "{built-in method builtins.sorted}"]
if want_b and (v == "3.11" or sw):
    if not sw or not sw[0]["total_ns"]:
        bad.append("sorted has no samples of its own: %r" % sw[:1])
if missing:
    bad.append("not counted (or not sampled): " + " ".join(sorted(missing)))
print("%s: %d functions compared" % (v, len({k for k in ref if k[0] in seen})))
if bad:
    print("\n".join(bad))
    sys.exit(1)
PY

tested=0
for v in 3.11 3.12 3.13; do
	PY=$(py_find "$v") || { note "no CPython $v here: not tested"; continue; }
	note "testing $PY"
	"$PY" "$CALLS" cprofile "$T/cp$v.txt" >/dev/null || fail "$v: calls.py under cProfile failed"
	# =builtins: 3.11's profile function, 3.12+'s sys.monitoring CALL
	run_cbn -F 4999 --calls=builtins --sort ncalls --json "$T/c$v.json" -- "$PY" "$CALLS"
	expect_rc 0
	grep -qx 'calls: done' "$OUTF" || fail "$v: the program's output is missing"
	grep -qx 'atexit imported: False' "$OUTF" || fail "$v: the counting left atexit in sys.modules"
	validate_schema "$T/c$v.json"
	grep_out 'Python function calls \([0-9]+ primitive calls\), counted exactly'
	grep_out '^ +242785/1 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ .*calls\.py:[0-9]+\(fib\)$'
	grep_out '^ +70000 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ \{built-in method math\.hypot\}$'
	grep_out "exact calls on the [0-9]+ rows counted \(Python functions and the builtins they called;"
	thr=threads
	[ "$v" = 3.11 ] && thr=main # =builtins there: the main thread's profile function
	python3 "$T/cmp.py" "$T/c$v.json" "$T/cp$v.txt" "$v" builtins "$thr" ||
		fail "$v: counts differ from cProfile's"
	if [ "$v" = 3.11 ]; then
		# --calls alone on 3.11: the frame evaluation function, no builtins
		run_cbn -F 4999 --calls --json "$T/e$v.json" -- "$PY" "$CALLS"
		expect_rc 0
		grep -qx 'calls: done' "$OUTF" || fail "$v --calls: the program's output is missing"
		python3 "$T/cmp.py" "$T/e$v.json" "$T/cp$v.txt" "$v" python threads ||
			fail "$v --calls: counts differ from cProfile's"
	fi
	tested=$((tested + 1))
done
[ "$tested" -gt 0 ] || skip "no CPython 3.11-3.13 here"

# a recursion 30,000 deep counts exactly on every version (the test of a
# running call looks through 200 data stack chunks).  On 3.11 the frame
# evaluation function makes each Python level a C call: where a thread's C
# stack runs low (that recursion, a thread with a 256 KiB stack) the hook
# steps aside for the deep part, the program runs as plainly, the counts
# stay exact (its profile function counts meanwhile), and the report says
# what was not counted; a program that sets that function itself is counted
# until it does, and the report says so
for v in 3.11 3.12 3.13; do
	PY=$(py_find "$v") || continue
	modes=deep
	[ "$v" = 3.11 ] && modes="deep thread"
	for m in $modes; do
		run_cbn --calls --json "$T/deep_$m.json" -- "$PY" "$CBN_SOURCE_DIR/tests/python/calls_deep.py" "$m"
		expect_rc 0
		grep -qx 'calls_deep: done' "$OUTF" || fail "$v $m: the program did not finish"
		want=30012
		[ "$m" = thread ] && want=3012
		got=$(json_py "$T/deep_$m.json" '[[f.get("calls"), f.get("primitive_calls")] for f in d["functions"] if f["name"] == "down"]')
		[ "$got" = "[[$want, 2]]" ] || fail "$v $m: down counted $got, not $want/2"
		if [ "$v" = 3.11 ]; then
			grep_out 'a thread ran low on C stack'
		fi
	done
done
if PY=$(py_find 3.11); then
	run_cbn --calls --json "$T/evalframe.json" -- "$PY" "$CBN_SOURCE_DIR/tests/python/calls_evalframe.py"
	expect_rc 0
	grep -qx 'evalframe: done' "$OUTF" || fail "3.11 evalframe: the program did not finish"
	got=$(json_py "$T/evalframe.json" '[f.get("calls") for f in d["functions"] if f["name"] == "tiny"]')
	[ "$got" = "[1000]" ] || fail "3.11 evalframe: tiny counted $got, not the 1000 calls before"
	grep_out 'the program set a frame evaluation function of its own'
fi

# the program's own tools (a profile function, a trace function as a
# debugger's, cProfile, a sys.monitoring tool of its own on 3.12+) get every
# event they get plainly: the program's output is the same, and tiny's
# calls are counted beside them; on 3.11 --calls=builtins steps aside for
# the program's profile function (the same slot), and the report says so
TOOLS="$CBN_SOURCE_DIR/tests/python/calls_tools.py"
for v in 3.11 3.12 3.13; do
	PY=$(py_find "$v") || continue
	"$PY" "$TOOLS" >"$T/tools_plain.txt" || fail "$v: calls_tools.py failed plainly"
	for c in --calls --calls=builtins; do
		run_cbn "$c" --report "$T/tools_rep.txt" --json "$T/tools.json" -- "$PY" "$TOOLS"
		expect_rc 0
		diff "$T/tools_plain.txt" "$OUTF" >&2 || fail "$v $c: the program's tools saw other events"
		want='[4000]'
		[ "$v" = 3.11 ] && want='[3000]' # no sys.monitoring there
		if [ "$v" = 3.11 ] && [ "$c" = --calls=builtins ]; then
			want='[null]'
			grep -q 'the program set a profile function of its own' "$T/tools_rep.txt" ||
				fail "$v $c: the report does not say the program's profile function took the slot"
		fi
		got=$(json_py "$T/tools.json" '[f.get("calls") for f in d["functions"] if f["name"] == "tiny"]')
		# not counted: a row only if a sample fell in tiny (a loaded
		# machine may take none there)
		[ "$want" = '[null]' ] && [ "$got" = '[]' ] && got='[null]'
		[ "$got" = "$want" ] || fail "$v $c: tiny counted $got, not $want"
	done
done

# the real tools: coverage.py (Debian's python3-coverage: its C tracer on
# 3.11, its Python tracer on pyenv's 3.12 and 3.13, which it falls back to
# there) measures the same lines, and pdb stopped at a breakpoint in fib
# prints the same session, as plainly; fib and tick are counted exactly
# beside them, though pdb runs the script again at its end and the first
# run's code objects die unsampled (tick, run by two threads, is not
# counted on 3.11 with builtins: the profile function is the main
# thread's, and the report says so)
calls_peer() # VERSION FLAG WHAT: fib's and tick's counts as expected
{
	local want='[["fib", 1973, 1], ["tick", 4000, 4000]]'
	[ "$1" = 3.11 ] && [ "$2" = --calls=builtins ] && want='[["fib", 1973, 1], ["tick", null, null]]'
	[ "$(json_py "$T/peer.json" '[[n] + next(([f.get("calls"), f.get("primitive_calls")] for f in d["functions"] if f["name"] == n), [None, None]) for n in ("fib", "tick")]')" = "$want" ] ||
		fail "$1 $2 under $3: fib and tick not counted exactly"
	if [ "$1" = 3.11 ] && [ "$2" = --calls=builtins ]; then
		grep -q "other threads made were not counted" "$T/peer_rep.txt" ||
			fail "$1 $2 under $3: the report does not say the other threads were not counted"
	fi
}
PEERS="$CBN_SOURCE_DIR/tests/python/calls_peers.py"
printf 'b fib\nc\np n\nw\ncl 1\nc\nq\n' >"$T/pdb.in"
COVPATH=$(/usr/bin/python3 -c 'import coverage, os; print(os.path.dirname(os.path.dirname(coverage.__file__)))' 2>/dev/null) ||
	note "no python3-coverage here: coverage.py is not tested beside --calls"
for v in 3.11 3.12 3.13; do
	PY=$(py_find "$v") || continue
	"$PY" -m pdb "$PEERS" <"$T/pdb.in" >"$T/pdb_plain.txt" 2>&1 || fail "$v: pdb failed plainly"
	grep -q 'fib()' "$T/pdb_plain.txt" || fail "$v: pdb did not stop in fib plainly"
	for c in --calls --calls=builtins; do
		run_cbn "$c" --report "$T/peer_rep.txt" --json "$T/peer.json" -- "$PY" -m pdb "$PEERS" <"$T/pdb.in"
		expect_rc 0
		diff "$T/pdb_plain.txt" "$OUTF" >&2 || fail "$v $c: pdb's session differs from the plain one"
		calls_peer "$v" "$c" pdb
	done
	[ -n "$COVPATH" ] || continue
	rm -f "$T/cov.plain" "$T/cov.cbn"
	export PYTHONPATH="$COVPATH"
	"$PY" -m coverage run --data-file="$T/cov.plain" "$PEERS" >"$T/cov_out.txt" || fail "$v: coverage run failed plainly"
	"$PY" -m coverage report -m --include='*calls_peers.py' --data-file="$T/cov.plain" >"$T/cov_plain.txt"
	run_cbn --calls --report "$T/peer_rep.txt" --json "$T/peer.json" -- \
		"$PY" -m coverage run --data-file="$T/cov.cbn" "$PEERS"
	expect_rc 0
	diff "$T/cov_out.txt" "$OUTF" >&2 || fail "$v: the program's output under coverage differs"
	"$PY" -m coverage report -m --include='*calls_peers.py' --data-file="$T/cov.cbn" >"$T/cov_cbn.txt"
	unset PYTHONPATH
	grep -q 'calls_peers.py' "$T/cov_plain.txt" || fail "$v: coverage measured nothing plainly"
	diff "$T/cov_plain.txt" "$T/cov_cbn.txt" >&2 || fail "$v: coverage measured other lines under --calls"
	calls_peer "$v" --calls coverage
done

for v in 3.13 3.12; do
	PY=$(py_find "$v") || continue
	run_cbn --calls --json "$T/nob.json" -- "$PY" "$CALLS"
	expect_rc 0
	python3 - "$T/nob.json" <<'PY' || fail "$v: --calls alone counted builtins, or no Python function"
import json, sys
fs = json.load(open(sys.argv[1]))["functions"]
assert not any("cprofile_name" in f for f in fs), "a builtin counted"
assert any(f["name"] == "fib" and f.get("calls") == 242785 for f in fs), "fib not counted"
PY
	grep_out "exact calls on the [0-9]+ rows counted \(Python functions;"
	break
done

# started with SIGINT ignored (nohup, a shell's background job): the
# interpreter installs no SIGINT handler, and the counting still starts
for v in 3.11 3.12 3.13; do
	PY=$(py_find "$v") || continue
	trap '' INT
	run_cbn --calls --json "$T/noint.json" -- "$PY" "$CALLS"
	trap - INT
	expect_rc 0
	[ "$(json_py "$T/noint.json" '[f.get("calls") for f in d["functions"] if f["name"] == "fib"]')" = "[242785]" ] ||
		fail "$v with SIGINT ignored: fib not counted exactly"
	break
done

# a C program embedding CPython: counted when the interpreter has its
# signal handlers; without them not counted, and the report says so
EMBED="$EXAMPLES/py_embed"
if "$EMBED" libpython3.11.so.1.0 1 >/dev/null 2>&1; then
	run_cbn -F 4999 --calls --json "$T/emb1.json" -- "$EMBED" libpython3.11.so.1.0 1
	expect_rc 0
	[ "$(json_py "$T/emb1.json" 'sorted((f["name"], f.get("calls"), f.get("primitive_calls")) for f in d["functions"] if f["name"] in ("tiny", "fib"))')" = '[["fib", 57313, 1], ["tiny", 300000, 300000]]' ] ||
		fail "embedded CPython: tiny and fib not counted exactly"
	run_cbn --calls --json "$T/emb0.json" -- "$EMBED" libpython3.11.so.1.0 0
	expect_rc 0
	grep -qx 'embed: done' "$OUTF" || fail "embedded CPython: the program's output is missing"
	grep_out 'the Python calls were not counted: the interpreter never set its signal dispositions'
else
	note "no libpython3.11.so.1.0 here: the embedded interpreter is not tested"
fi

# the gate: func[NAME].calls is an exact count
J=$(ls "$T"/c3.1*.json | head -1)
run_cbn compare --fail 'func[fib].calls:+0' "$J" "$J"
expect_rc 0
python3 - "$J" "$T/more.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for f in d["functions"]:
    if f["name"] == "fib":
        f["calls"] += 1
json.dump(d, open(sys.argv[2], "w"))
PY
run_cbn compare --fail 'func[fib].calls:+0' "$J" "$T/more.json"
expect_rc 1
grep_out 'func\[fib\]\.calls +242785 +242786 .* exact +FAIL'

# a real program: CPython's own tests of json (where the interpreter has
# its test package), whose modules hold classes of one shape (`class
# TestPyIndent(TestIndent, PyTest): pass`, then TestPyScanstring...): every
# function of those test files has cProfile's counts.  On 3.13.0 two of
# those bodies took one dead body's addresses and were counted as one
# (TestPyScanstring 2 calls, TestPyIndent none).  The json modules
# themselves are loaded twice (C and Python), two code objects a function,
# of which pstats keeps one: not compared.
for v in 3.11 3.12 3.13; do
	PY=$(py_find "$v") || continue
	"$PY" -c 'import test.test_json' 2>/dev/null || { note "$v: no test.test_json here"; continue; }
	mods="test.test_json.test_decode test.test_json.test_encode_basestring_ascii"
	mods="$mods test.test_json.test_speedups test.test_json.test_scanstring"
	mods="$mods test.test_json.test_indent test.test_json.test_fail test.test_json.test_dump"
	# shellcheck disable=SC2086
	(cd "$T" && "$PY" -m cProfile -o "$T/tj$v.prof" -m unittest -q $mods >/dev/null 2>&1) ||
		fail "$v: test_json under cProfile failed"
	# shellcheck disable=SC2086
	run_cbn --calls --json "$T/tj$v.json" -- "$PY" -m unittest -q $mods
	expect_rc 0
	"$PY" - "$T/tj$v.json" "$T/tj$v.prof" "$v" <<'PY' || fail "$v: test_json's counts differ from cProfile's"
import json, os, pstats, sys
rep, st = json.load(open(sys.argv[1])), pstats.Stats(sys.argv[2]).stats
mine = lambda fn: "/test/test_json/" in fn
ref = {(os.path.realpath(fn), line, name): (nc, cc)
       for (fn, line, name), (cc, nc, _, _, _) in st.items() if mine(fn) and name != "<module>"}
ours = {(os.path.realpath(f["file"]), f["line"], f["name"].rsplit(".", 1)[-1]): (f["calls"], f["primitive_calls"])
        for f in rep["functions"] if "calls" in f and mine(f.get("file") or "")}
bad = ["%s:%d(%s): %s, cProfile %s" % (k + (ours.get(k), v)) for k, v in sorted(ref.items()) if ours.get(k) != v]
print("%s: %d functions of test_json compared" % (sys.argv[3], len(ref)))
if bad or len(ref) < 50:
    print("\n".join(bad) or "too few functions")
    sys.exit(1)
PY
done

# processes that end by _exit (every child multiprocessing forks ends by
# os._exit, with no atexit callback left) or by a signal (a pool's `with`
# block ends its workers by SIGTERM; a child kills itself with SIGKILL):
# the counts are in the session file as they are made, the names copied at
# the first call.  Before, only the parent's 300 were counted; then 2,800
# (the workers ended by a signal lost theirs)
# (with builtins, the builtins' counts too)
for v in 3.11 3.12 3.13; do
	PY=$(py_find "$v") || continue
	for c in --calls --calls=builtins; do
		run_cbn "$c" --json "$T/fork$v.json" -- "$PY" "$CBN_SOURCE_DIR/tests/python/calls_fork.py"
		expect_rc 0
		grep -qx 'parent 8955350' "$OUTF" || fail "$v $c fork: the program's output is missing"
		grep -qx "killed child's exit code -9" "$OUTF" || fail "$v $c fork: the child was not killed"
		got=$(json_py "$T/fork$v.json" '[[f["name"], f.get("calls"), f.get("primitive_calls")] for f in sorted(d["functions"], key=lambda f: f["name"]) if f["name"] in ("work", "child", "killed")]')
		[ "$got" = '[["child", 2, 2], ["killed", 1, 1], ["work", 3300, 3300]]' ] ||
			fail "$v $c fork: child, killed and work counted $got, not 2, 1 and 3300"
		[ "$c" = --calls ] && continue
		got=$(json_py "$T/fork$v.json" '[[f.get("calls"), f.get("primitive_calls")] for f in d["functions"] if f.get("cprofile_name") == "{built-in method builtins.abs}"]')
		[ "$got" = '[[3300, 3300]]' ] || fail "$v $c fork: abs counted $got, not 3300"
	done
done

# without --calls: sample counts, no calls in the JSON
run_cbn --json "$T/plain.json" -- "$PY" "$CALLS"
expect_rc 0
[ "$(json_py "$T/plain.json" 'sum("calls" in f for f in d["functions"])')" = 0 ] ||
	fail "a run without --calls has call counts"
if grep -q 'counted exactly' "$OUTF"; then
	fail "a run without --calls says it counted"
fi
exit 0
