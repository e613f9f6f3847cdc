#!/bin/bash
# sym_debuginfod — a stripped program's names and lines come from a real
# debuginfod server (Debian's `debuginfod`, serving the program's separate
# debug file from a directory) through elfutils' client, when DEBUGINFOD_URLS
# names it; and only then: without it, the same run has no file:line.
. "$(dirname "$0")/lib/common.bash"
need_cbn
need_example split
command -v debuginfod >/dev/null || skip "debuginfod not installed (apt-get install debuginfod)"
command -v objcopy >/dev/null || skip "objcopy not installed"

mkdir -p "$T/srv" "$T/cache"
objcopy --only-keep-debug "$EXAMPLES/split" "$T/srv/split.debug" || fail "objcopy --only-keep-debug"
objcopy --strip-all "$EXAMPLES/split" "$T/split" || fail "objcopy --strip-all"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
debuginfod -p "$port" -F "$T/srv" -d "$T/db.sqlite" >"$T/srv.log" 2>&1 &
srv=$!
trap 'kill $srv 2>/dev/null; wait $srv 2>/dev/null; rm -rf "$T"' EXIT
# Wait until the server has indexed the debug file (at most 30 s).
bid=$(readelf -n "$T/split" | awk '/Build ID:/ { print $3; exit }')
[ -n "$bid" ] || fail "the example has no build-id"
for _ in $(seq 60); do
	python3 - "$port" "$bid" <<'PY' && break
import sys, urllib.request
try:
    urllib.request.urlopen("http://127.0.0.1:%s/buildid/%s/debuginfo" % (sys.argv[1], sys.argv[2]), timeout=2)
except Exception:
    sys.exit(1)
PY
	sleep 0.5
done

export CBN_DEBUGINFO_PATH=/nonexistent-cbn-debug DEBUGINFOD_CACHE_PATH="$T/cache"
DEBUGINFOD_URLS=http://127.0.0.1:$port run_cbn -q -- "$T/split" 0.3
expect_rc 0
grep -qE "examples/split.c:[0-9]+\(heavy\)" "$OUTF" ||
	fail "names and lines of the stripped program did not come from debuginfod"

unset DEBUGINFOD_URLS
rm -rf "$T/cache"
run_cbn -q -- "$T/split" 0.3
expect_rc 0
grep -q "split.c" "$OUTF" && fail "file:line without DEBUGINFOD_URLS: the check above proves nothing"
grep -q "\[no symbol\]" "$OUTF" || fail "the stripped program's static functions are not grouped as [no symbol]"
exit 0
