#!/bin/bash
# docs_commands — the docs and the binary agree.  Every cbottleneck command in
# README.md and docs/*.md is extracted and checked by the real option parser
# (CBN_ARGS_ONLY=1: the command checks its arguments as it would and exits
# before it reads, writes or runs anything):
#   - in code blocks (sh, bash, console, shell or unlabeled): each shell line
#     that runs cbottleneck, after a prompt, a wrapper (mpirun ... cbottleneck)
#     or an environment assignment, up to a pipe, redirection or comment, must
#     be accepted (exit 0);
#   - inline (`cbottleneck ...` in the text, often a fragment such as
#     `cbottleneck --json FILE`): must be accepted, or refused only because a
#     part is left out (an option's value, the program, the directory).
# Synopses ([OPTIONS], PROGRAM [ARGS...], start|stop) and captions (a line
# ending in ':') are not commands.  Then what the docs promise in words:
# reading-the-report.md's schema_version is the JSON's, `report DIR --html F`
# writes F (options after DIR), docs/cli.md documents every option --help
# lists, --help names every --sample-type, and the report excerpts have the
# shape the binary prints (tests/e2e/lib/excerpts.py).
. "$(dirname "$0")/lib/common.bash"
need_cbn
need_example split forkexec wait_lock mem_peak step_cold

python3 - "$CBN" "$CBN_SOURCE_DIR" <<'PY' || fail "commands in the docs that the binary refuses (above)"
import glob, os, re, shlex, subprocess, sys

cbn, src = sys.argv[1], sys.argv[2]
files = [os.path.join(src, "README.md")] + sorted(glob.glob(os.path.join(src, "docs", "*.md")))
STOP = {"|", "||", "&", "&&", ";", ";;", ">", ">>", "<", "<<", "(", ")", ">&", "&>"}
SKIP = ("[OPTIONS]", "[opts]", "PROGRAM [ARGS", "start|stop", "start\\|stop", "PID COMMAND")
FRAGMENT = ("needs a value", "no program to run", "needs a session directory",
            "expected BASE.json NEW.json", "needs a process id", "needs an argument")

def command(line):
    """The cbottleneck argument vector of one shell line, or None."""
    if any(s in line for s in SKIP) or line.rstrip().endswith(":"):
        return None
    try:
        lex = shlex.shlex(line, posix=True, punctuation_chars=True)
        lex.whitespace_split = True
        lex.commenters = "#"
        toks = list(lex)
    except ValueError:
        return None
    if "cbottleneck" not in toks:
        return None
    args = []
    for t in toks[toks.index("cbottleneck") + 1:]:
        if t in STOP or re.fullmatch(r"\d*[<>]+&?\d*", t):
            break
        args.append("4242" if t == "PID" else t)
    return args

def check(args):
    env = dict(os.environ, CBN_ARGS_ONLY="1")
    r = subprocess.run([cbn] + args, env=env, capture_output=True, text=True, timeout=30)
    return r.returncode, (r.stderr.strip().splitlines() or [""])[-1]

bad = checked = 0
for f in files:
    text = open(f).read()
    rel = os.path.relpath(f, src)
    # fenced code blocks of shell or no language
    for m in re.finditer(r"^[ \t]*```([\w-]*)[ \t]*\n(.*?)^[ \t]*```", text, re.S | re.M):
        if m.group(1) not in ("", "sh", "bash", "console", "shell"):
            continue
        first = text.count("\n", 0, m.start(2)) + 1
        lines = m.group(2).split("\n")
        i = 0
        while i < len(lines):
            n, line = i, lines[i].strip()
            while line.endswith("\\") and i + 1 < len(lines):
                i += 1
                line = line[:-1] + " " + lines[i].strip()
            i += 1
            if line.startswith("$ "):
                line = line[2:]
            args = command(line)
            if args is None:
                continue
            checked += 1
            rc, msg = check(args)
            if rc != 0:
                bad += 1
                print("%s:%d: exit %d: cbottleneck %s\n    %s" %
                      (rel, first + n, rc, " ".join(args), msg), file=sys.stderr)
    # inline code
    for m in re.finditer(r"`(cbottleneck [^`\n]+)`", text):
        args = command(m.group(1).replace("\\|", "|"))
        if args is None:
            continue
        checked += 1
        rc, msg = check(args)
        if rc != 0 and not (rc == 2 and any(s in msg for s in FRAGMENT)):
            bad += 1
            print("%s:%d: exit %d: `cbottleneck %s`\n    %s" %
                  (rel, text.count("\n", 0, m.start()) + 1, rc, " ".join(args), msg),
                  file=sys.stderr)
print("%d commands checked, %d refused" % (checked, bad), file=sys.stderr)
assert checked >= 60, checked
sys.exit(1 if bad else 0)
PY

# the parser refuses what it must: the check above can fail
CBN_ARGS_ONLY=1 "$CBN" --no-such-option ./prog 2>/dev/null && fail "CBN_ARGS_ONLY accepted an unknown option"
CBN_ARGS_ONLY=1 "$CBN" report DIR --no-such-option 2>/dev/null && fail "report accepted an unknown option"

# reading-the-report.md's schema_version is the one the JSON has
run_cbn -q -o "$T/s" --json "$T/r.json" -- "$EXAMPLES/split" 0.05
expect_rc 0
doc=$(sed -n 's/.*`schema_version` (\([0-9]*\)).*/\1/p' "$CBN_SOURCE_DIR/docs/reading-the-report.md")
json=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["schema_version"])' "$T/r.json")
[ -n "$doc" ] && [ "$doc" = "$json" ] ||
	fail "docs/reading-the-report.md says schema_version ($doc), the JSON has $json"

# options after report's DIR, as the README types it
run_cbn report "$T/s" --html "$T/r.html" --limit 3
expect_rc 0
[ -s "$T/r.html" ] || fail "report DIR --html FILE wrote no page"

# docs/cli.md documents every option --help lists (and compare --help's
# are in cli.md or ci.md): each as `--name` or `-X` in the text
for o in $("$CBN" --help 2>&1 | grep -oE -- '(^ +-[A-Za-z],|--[a-z][a-z0-9-]+)' | tr -d ' ,' | sort -u); do
	grep -qF -- "\`$o" "$CBN_SOURCE_DIR/docs/cli.md" || fail "--help lists $o, docs/cli.md does not"
done
for o in $("$CBN" compare --help 2>&1 | grep -oE -- '(^ +-[A-Za-z],|--[a-z][a-z0-9-]+)' | tr -d ' ,' | sort -u); do
	grep -qF -- "\`$o" "$CBN_SOURCE_DIR/docs/cli.md" "$CBN_SOURCE_DIR/docs/ci.md" ||
		fail "compare --help lists $o, neither docs/cli.md nor docs/ci.md does"
done

# the report excerpts of README.md and docs/*.md have the shape this binary
# prints (lib/excerpts.py says what it checks): its reports of real runs
# are the reference
mkdir -p "$T/ref"
ref()
{
	local name=$1
	shift
	run_cbn "$@"
	expect_rc 0
	cp "$OUTF" "$T/ref/$name.txt"
}
ref split --limit 15 -- "$EXAMPLES/split" 0.3
ref split-v -v --limit 15 -- "$EXAMPLES/split" 0.3
ref forkexec --off-cpu -- "$EXAMPLES/forkexec" 0.3
ref lock --off-cpu -- "$EXAMPLES/wait_lock"
ref mem --memory --limit 3 -- "$EXAMPLES/mem_peak"
ref steps --limit 5 -o "$T/st" -- "$EXAMPLES/step_cold" 0.3
ref stepf report "$T/st" --report - --step-func train_step --limit 5
python3 "$CBN_SOURCE_DIR/tests/e2e/lib/excerpts.py" "$T/ref" "$CBN_SOURCE_DIR/README.md" \
	"$CBN_SOURCE_DIR"/docs/*.md || fail "report excerpts in the docs the binary no longer prints (above)"

# --help names every --sample-type value
help=$("$CBN" --help 2>&1)
for t in cpu wall offcpu alloc_space alloc_objects inuse_space inuse_objects; do
	grep -q -- "$t" <<<"$(sed -n '/--sample-type/,/^ *--[a-z]/p' <<<"$help")" ||
		fail "--help does not name --sample-type $t"
done
exit 0
