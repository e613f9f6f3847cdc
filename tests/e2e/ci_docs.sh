# ci_docs.sh — the CI jobs of docs/ci.md really work: the shell of their
# profile-and-gate steps (between "# cbn-ci-begin NAME" and "# cbn-ci-end") is
# taken from the YAML as a CI runner would parse it, pointed at this build tree
# (./build/ -> $CBN_BUILD_DIR/) and run three times, as on a CI history:
# first run without a baseline (profiles only), then with that report as the
# baseline (must pass), then with the program made 2x heavier in heavy()
# (split 0.4 3 -> split 0.7 6: must fail with exit 1 and a FAIL row).
. "$(dirname "$0")/lib/common.bash"
need_cbn
need_example split
DOC="$CBN_SOURCE_DIR/docs/ci.md"
[ -f "$DOC" ] || fail "$DOC is missing"
"$CBN" --help 2>&1 | grep -q -- '--baseline' ||
	fail "--help does not mention --baseline"

# extract NAME: the marked lines of the job, from the parsed YAML when PyYAML is
# there (so indentation and quoting are exactly what the runner would see),
# else from the Markdown text with the block's indentation removed.
extract()
{
	python3 - "$DOC" "$1" <<'EOF'
import re, sys, textwrap
doc, name = sys.argv[1], sys.argv[2]
text = open(doc).read()
begin, end = "# cbn-ci-begin " + name, "# cbn-ci-end"

def marked(s):
    lines = s.splitlines()
    idx = [i for i, l in enumerate(lines) if l.strip() == begin]
    if len(idx) != 1:
        return None
    rest = lines[idx[0] + 1:]
    stop = [i for i, l in enumerate(rest) if l.strip() == end]
    if not stop:
        sys.exit("no '%s' after '%s' in %s" % (end, begin, doc))
    return textwrap.dedent("\n".join(rest[:stop[0]])) + "\n"

try:
    import yaml
except ImportError:
    yaml = None
found = []
for block in re.findall(r"```yaml\n(.*?)```", text, re.S):
    if begin not in block:
        continue
    if yaml is None:
        found.append(marked(block))
        continue
    def walk(v):
        if isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, str) and begin in v:
            found.append(marked(v))
    walk(yaml.safe_load(block))
if len(found) != 1 or found[0] is None:
    sys.exit("expected exactly one '%s' block in a YAML job of %s, found %d" %
             (begin, doc, len(found)))
sys.stdout.write(found[0])
EOF
}

# job NAME SHELL SUMMARY: run the marked steps of job NAME like its CI would.
job()
{
	local name=$1 shell=$2 summary=$3 w="$T/$1"
	local script="$w/steps.sh" slow="$w/steps-slow.sh"

	mkdir -p "$w"
	extract "$name" >"$w/raw.sh" || fail "cannot extract the '$name' job from docs/ci.md"
	grep -q '\./build/cbottleneck' "$w/raw.sh" || fail "the '$name' job does not run ./build/cbottleneck"
	sed "s#\./build/#$CBN_BUILD_DIR/#g" "$w/raw.sh" >"$script"
	sed 's#split 0\.4 3#split 0.7 6#g' "$script" >"$slow"
	cmp -s "$script" "$slow" && fail "the '$name' job does not profile 'split 0.4 3'"

	# 1: no baseline yet (first run on main): profile only, keep the report.
	step "$name" "$shell" "$script" "$w"
	[ "$RC" = 0 ] || fail "$name, no baseline: exit $RC, expected 0"
	[ -s "$w/cbottleneck.json" ] || fail "$name: no cbottleneck.json written"
	mkdir -p "$w/baseline"
	mv "$w/cbottleneck.json" "$w/baseline/cbottleneck.json" # what the artifact fetch does

	# 2: unchanged program against that baseline: passes.
	step "$name" "$shell" "$script" "$w"
	[ "$RC" = 0 ] || fail "$name, unchanged program: exit $RC, expected 0"
	grep -q 'PASS' "$w/$summary" || fail "$name: $summary does not say PASS"
	grep_any '^PASS: 0 regressions'

	# 3: heavy() twice as heavy: the gate fails.
	rm -f "$w/$summary"
	step "$name" "$shell" "$slow" "$w"
	[ "$RC" = 1 ] || fail "$name, forced regression: exit $RC, expected 1"
	grep -q '| `func\[heavy\].self` |.*| \*\*FAIL\*\* |' "$w/$summary" ||
		fail "$name: $summary has no FAIL row for func[heavy].self"
	grep_any '^func\[heavy\]\.self .*FAIL$'
	note "$name job of docs/ci.md: first run, pass and forced regression behave"
}

# grep_any REGEX: in the step's stdout or stderr (the launcher prints its own
# report too; the gate's table may go to either).
grep_any()
{
	cat "$OUTF" "$ERRF" | grep -Eq -- "$1" || fail "no line matching /$1/ in the step's output"
}

# step NAME SHELL SCRIPT DIR: one CI step in DIR, output in $OUTF/$ERRF, status in $RC.
step()
{
	RUN_SEQ=$((RUN_SEQ + 1))
	OUTF="$T/out.$RUN_SEQ"
	ERRF="$T/err.$RUN_SEQ"
	set +e
	(cd "$4" && GITHUB_STEP_SUMMARY="$4/summary.md" $2 "$3") >"$OUTF" 2>"$ERRF"
	RC=$?
	set -e
}

# GitHub runs `run:` with bash -e -o pipefail; GitLab's debian image with sh (dash).
job github "bash --noprofile --norc -eo pipefail" summary.md
job gitlab "sh -e" perf.md
exit 0
