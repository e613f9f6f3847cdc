# common.bash — helpers shared by the end-to-end tests (source it, don't run it).
# Gives a private temp dir removed on exit ($T), fail/skip/note, run_cbn, the
# checks that the launcher and examples exist, and json_* helpers (python3) to
# read values out of a --json report.
#
#   . "$(dirname "$0")/lib/common.bash"
#   need_cbn; need_example split
#   run_cbn --json "$T/r.json" -- "$EXAMPLES/split" 0.3   # sets $RC, $OUTF, $ERRF
#   v=$(json_get "$T/r.json" 'run.samples')
#   row=$(json_func "$T/r.json" heavy)        # JSON of the first function named heavy

set -u

: "${CBN:=${CBN_BUILD_DIR:-}/cbottleneck}"
: "${EXAMPLES:=${CBN_BUILD_DIR:-}/examples}"
: "${CBN_SOURCE_DIR:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)}"
: "${SCALE:=0.3}"

E2E_NAME=$(basename "$0" .sh)
T=$(mktemp -d "${TMPDIR:-/tmp}/cbn-e2e-$E2E_NAME.XXXXXX")
trap 'rm -rf "$T"' EXIT

# fail MSG...: the test failed; say what was expected and what was seen.
fail()
{
	echo "FAIL ($E2E_NAME): $*" >&2
	if [ -n "${OUTF:-}" ] && [ -s "${OUTF:-}" ]; then
		echo "--- stdout of the last run (head) ---" >&2
		head -n 60 "$OUTF" >&2
	fi
	if [ -n "${ERRF:-}" ] && [ -s "${ERRF:-}" ]; then
		echo "--- stderr of the last run (tail) ---" >&2
		tail -n 20 "$ERRF" >&2
	fi
	exit 1
}

# skip REASON: exit 77 so ctest reports the test as skipped, with the reason.
skip()
{
	echo "SKIP ($E2E_NAME): $*" >&2
	exit 77
}

note()
{
	echo "# $*" >&2
}

# A program this build makes that is missing is a failure, never a skip: a
# broken build must not pass as "skipped".  Skips are for what lies outside
# the project (a tool, a GPU, CUDA left out at configure time).

# need_built FILE...: fail unless each program or library of this build exists.
need_built()
{
	local f
	for f in "$@"; do
		[ -e "$f" ] || fail "$f is missing: this build should have made it (cmake --build)"
	done
}

need_cbn()
{
	[ -x "$CBN" ] || fail "launcher not built: $CBN"
	[ -n "$("$CBN" --help 2>&1 | head -c 200)" ] ||
		fail "launcher at $CBN prints nothing for --help"
}

# need_example NAME...: fail while an example binary is missing.
need_example()
{
	local e
	for e in "$@"; do
		[ -x "$EXAMPLES/$e" ] || fail "example not built: $EXAMPLES/$e"
	done
}

# need_fakecupti PROGRAM: skip without CUDA in this build; otherwise the
# launcher and the test program of tests/cuda must exist, and the simulated
# libcupti.so.13 of tests/fakecupti goes in front of the real one.
need_fakecupti()
{
	[ "${CBN_HAVE_CUDA:-OFF}" = ON ] || skip "built without CUDA (CBN_HAVE_CUDA=${CBN_HAVE_CUDA:-OFF})"
	need_cbn
	need_built "$CBN_BUILD_DIR/tests/cuda/$1"
	export LD_LIBRARY_PATH="$CBN_BUILD_DIR/tests/fakecupti${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
}

need_python_jsonschema()
{
	command -v python3 >/dev/null 2>&1 || skip "python3 not installed"
	python3 -c 'import jsonschema' 2>/dev/null || skip "python3-jsonschema not installed"
}

# run_cbn ARGS...: run the launcher, stdout to $OUTF, stderr to $ERRF, exit
# status in $RC.  Never fails by itself.  Each call uses fresh files.  A run
# (not `report`, `compare` or `ctl`) without --report gets `--report -`: with
# stdout a file the report would otherwise go to stderr (docs/cli.md), and
# the tests read it after the program's output in $OUTF, as on a terminal.
RUN_SEQ=0
run_cbn()
{
	local a extra=(--report -)
	RUN_SEQ=$((RUN_SEQ + 1))
	OUTF="$T/out.$RUN_SEQ"
	ERRF="$T/err.$RUN_SEQ"
	case "${1:-}" in
	report | compare | ctl | help | version | --help | -h | --version | "") extra=() ;;
	esac
	for a in "$@"; do
		case "$a" in
		--report | --report=*) extra=() ;;
		--) break ;;
		esac
	done
	set +e
	"$CBN" "${extra[@]}" "$@" >"$OUTF" 2>"$ERRF"
	RC=$?
	set -e
	return 0
}

# expect_rc N: the last run_cbn must have exited with N.
expect_rc()
{
	[ "$RC" = "$1" ] || fail "expected exit status $1, got $RC"
}

# grep_out PATTERN [FILE]: an extended regex must match the stdout of the last run.
grep_out()
{
	grep -Eq -- "$1" "${2:-$OUTF}" || fail "no line matching /$1/ in ${2:-stdout}"
}

# def_line FILE FUNC: line number of FUNC's definition ("FUNC(" at the start of a
# line, or after the return type on the same line, followed by no ';').
def_line()
{
	awk -v f="$2" '
		$0 ~ "(^|[ *])" f "[ ]*\\(" && $0 !~ /;[ ]*$/ && $0 !~ /^[ \t]/ { print NR; exit }
	' "$1"
}

# json_get FILE EXPR: print a value of the report; EXPR is a dotted path with
# [i] indexes (run.samples, functions[0].name).  Objects and lists as JSON.
json_get()
{
	python3 - "$1" "$2" <<'EOF'
import json, re, sys
d = json.load(open(sys.argv[1]))
for part in re.findall(r'[^.\[\]]+|\[\d+\]', sys.argv[2]):
    d = d[int(part[1:-1])] if part.startswith('[') else d[part]
print(json.dumps(d) if isinstance(d, (dict, list)) else d)
EOF
}

# json_func FILE NAME: the first function row named NAME, as JSON ({} if none).
json_func()
{
	python3 - "$1" "$2" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
rows = [f for f in d.get("functions", []) if f.get("name") == sys.argv[2]]
print(json.dumps(rows[0] if rows else {}))
EOF
}

# json_func_field FILE NAME FIELD: one field of that row, summed over every row
# with that name (a function may appear once per module/file); 0 if absent.
json_func_field()
{
	python3 - "$1" "$2" "$3" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
print(sum(f.get(sys.argv[3], 0) for f in d.get("functions", []) if f.get("name") == sys.argv[2]))
EOF
}

# json_py FILE 'PYTHON EXPR using d': evaluate a python expression on the report.
json_py()
{
	python3 - "$1" "$2" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
r = eval(sys.argv[2], {"d": d})
print(json.dumps(r) if isinstance(r, (dict, list)) else r)
EOF
}

# cpu_rows [FILE]: the rows of the cProfile-style table of a text report
# (default: stdout of the last run), one per line.
cpu_rows()
{
	awk '/filename:lineno\(function\)$/ { on = 1; next }
	     on && (/^$/ || /^   \(/) { exit }
	     on { print }' "${1:-$OUTF}"
}

# cpu_row_field N COLUMN [FILE]: column COLUMN (1 ncalls, 2 tottime, 3 percall,
# 4 cumtime, 5 percall, 6 filename:lineno(function)) of row N (1-based).
cpu_row_field()
{
	cpu_rows "${3:-$OUTF}" | awk -v n="$1" -v c="$2" '
		NR == n && c < 6 { print $c }
		NR == n && c == 6 { sub(/^ *[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ /, ""); print }'
}

# validate_schema FILE: the report must satisfy docs/report.schema.json.
validate_schema()
{
	python3 - "$1" "$CBN_SOURCE_DIR/docs/report.schema.json" <<'EOF' || fail "$1 does not satisfy docs/report.schema.json"
import json, sys, jsonschema
inst = json.load(open(sys.argv[1]))
schema = json.load(open(sys.argv[2]))
cls = jsonschema.validators.validator_for(schema)
errs = sorted(cls(schema).iter_errors(inst), key=lambda e: list(e.path))
for e in errs[:10]:
    print("schema: %s: %s" % ("/".join(map(str, e.path)), e.message), file=sys.stderr)
sys.exit(1 if errs else 0)
EOF
}

# within VALUE EXPECTED TOLERANCE: |VALUE-EXPECTED| <= TOLERANCE (floats).
within()
{
	python3 -c 'import sys; v,e,t=map(float,sys.argv[1:4]); sys.exit(0 if abs(v-e)<=t else 1)' "$1" "$2" "$3"
}

set -e
