#!/bin/bash
# cpu_dlopen — CPU in a library loaded with dlopen and unloaded before exit:
# hot_spin in libhot.so dominates, with its file:line.
. "$(dirname "$0")/lib/common.bash"
need_cbn
need_example dlopen_hot
need_built "$EXAMPLES/libhot.so"

run_cbn --json "$T/r.json" -- "$EXAMPLES/dlopen_hot" "$SCALE"
expect_rc 0
row=$(json_func "$T/r.json" hot_spin)
note "hot_spin: $row"
[ "$row" != "{}" ] || fail "hot_spin is not in the profile"
python3 - "$T/r.json" <<'PY' || fail "hot_spin is not dominant"
import json, sys
d = json.load(open(sys.argv[1]))
f = d["functions"][0]
if f["name"] != "hot_spin":
    sys.exit("top function by self time is %s" % f["name"])
share = f["self_ns"] / d["run"]["cpu_ns"]
print("# hot_spin share %.2f (expected ~0.9)" % share, file=sys.stderr)
if share < 0.7:
    sys.exit("hot_spin is only %.2f of the CPU" % share)
if f["module"] != "libhot.so":
    sys.exit("hot_spin module is %r" % f["module"])
if not f["file"].endswith("hot.c"):
    sys.exit("hot_spin file is %r" % f["file"])
PY
line=$(def_line "$CBN_SOURCE_DIR/examples/hot.c" hot_spin)
[ "$(json_get "$T/r.json" 'functions[0].line')" = "$line" ] ||
	fail "hot_spin line is $(json_get "$T/r.json" 'functions[0].line'), expected $line"
grep_out "hot\.c:$line\(hot_spin\)$"
exit 0
