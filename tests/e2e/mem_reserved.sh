#!/bin/bash
# mem_reserved — reserved address space is not memory: a program that
# reserves 8 GiB with a PROT_NONE mapping (as libcuda does, tens of GiB) and
# uses 4 MiB reads a 4 MiB peak, no leak and no peak advice, and one
# "Address space" line says 8 GiB were reserved (JSON:
# address_reserved_peak_bytes); half of the reservation unmapped and the
# rest left at exit is no leak either.
. "$(dirname "$0")/lib/common.bash"
need_cbn
command -v gcc >/dev/null 2>&1 || skip "gcc not installed: cannot build the program"

cat >"$T/resv.c" <<'EOC'
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
int main(void)
{
	size_t big = (size_t)8 << 30, one = (size_t)4 << 20;
	char *r = mmap(NULL, big, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	char *m = mmap(NULL, one, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (r == MAP_FAILED || m == MAP_FAILED)
		return 1;
	memset(m, 1, one);
	munmap(m, one);
	munmap(r, big / 2);
	puts("resv: done");
	return 0;
}
EOC
gcc -O1 -o "$T/resv" "$T/resv.c" 2>"$T/gcc.err" || fail "gcc: $(head -1 "$T/gcc.err")"

run_cbn --memory --json "$T/r.json" -- "$T/resv"
expect_rc 0
grep_out '^resv: done$'
grep_out '^  Address space:   8\.00 GiB reserved at most \(PROT_NONE mappings'
grep_out '^  Peak:            4\.00 MiB \(exact\)'
if grep -Eq '\[(leak|peak-one-site)\]' "$OUTF"; then fail "reserved address space taken for memory"; fi
python3 - "$T/r.json" <<'PY' || fail "JSON: reserved address space counted as memory"
import json, sys
h = [s for s in json.load(open(sys.argv[1]))["memory"]["spaces"] if s["kind"] == "host"][0]
assert h["address_reserved_peak_bytes"] == 8 << 30, h["address_reserved_peak_bytes"]
assert h["peak_bytes"] < 16 << 20, h["peak_bytes"]
assert h["live_end_bytes"] < 1 << 20, h["live_end_bytes"]
PY
exit 0
