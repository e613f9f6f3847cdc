#!/bin/bash
# mem_replaced — "the program defines malloc itself" only when it does: a
# non-PIE program that takes malloc's address (as Debian's /usr/bin/python3
# does: an undefined "malloc" whose value is its PLT entry) gets no such note,
# and its allocations are seen; a program with its own malloc gets the note.
. "$(dirname "$0")/lib/common.bash"
need_cbn
command -v gcc >/dev/null 2>&1 || skip "gcc not installed: cannot build the two programs"

cat >"$T/takes.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
int main(void)
{
	/* malloc's address taken in non-PIC code: a canonical PLT entry */
	void *(*volatile alloc)(size_t) = malloc;

	for (int i = 0; i < 200; i++)
		free(alloc(1 << 20));
	puts("takes: done");
	return 0;
}
EOF
cat >"$T/own.c" <<'EOF'
#include <stdio.h>
#include <stddef.h>
static char pool[1 << 20];
static size_t used;
void *malloc(size_t n) { void *p = pool + used; used += (n + 15) & ~(size_t)15; return used <= sizeof(pool) ? p : NULL; }
void free(void *p) { (void)p; }
void *calloc(size_t a, size_t b) { char *p = malloc(a * b); for (size_t i = 0; p && i < a * b; i++) p[i] = 0; return p; }
void *realloc(void *p, size_t n) { (void)p; return malloc(n); }
int main(void) { puts("own: done"); return 0; }
EOF
gcc -O1 -no-pie -fno-pie -o "$T/takes" "$T/takes.c" 2>"$T/gcc.err" || fail "gcc: $(head -1 "$T/gcc.err")"
gcc -O1 -o "$T/own" "$T/own.c" 2>"$T/gcc.err" || fail "gcc: $(head -1 "$T/gcc.err")"
# the case itself: malloc undefined, with the PLT entry's address as its value
readelf -W --dyn-syms "$T/takes" | grep -Eq ' [0-9a-f]*[1-9a-f][0-9a-f]* +0 FUNC +GLOBAL +DEFAULT +UND malloc' ||
	skip "gcc made no canonical PLT entry for malloc: the case is not built"

run_cbn --memory --json "$T/t.json" -- "$T/takes"
expect_rc 0
if grep -q 'defines malloc itself' "$OUTF"; then fail "a program that only takes &malloc was said to define it"; fi
python3 - "$T/t.json" <<'PY' || fail "the allocations of a non-PIE program were not seen"
import json, sys
h = [s for s in json.load(open(sys.argv[1]))["memory"]["spaces"] if s["kind"] == "host"]
assert h and h[0]["allocs"] >= 200, h
PY

run_cbn --memory -- "$T/own"
expect_rc 0
grep_out 'the program defines malloc itself'
exit 0
