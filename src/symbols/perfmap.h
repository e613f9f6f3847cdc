/*
 * perfmap.h — perf maps (`/tmp/perf-PID.map`: "START SIZE name" lines, hex,
 * as CPython -X perf, node --perf-basic-prof and oneDNN's
 * ONEDNN_JIT_PROFILE=1 write them) read into a table of disjoint address
 * ranges, each named by the entry written last that covers it (a JIT that
 * reuses memory writes the new code's line after the old one, so the last
 * line is the code that ran at the end).  Launcher side only; not
 * thread-safe.
 */
#ifndef CBN_PERFMAP_H
#define CBN_PERFMAP_H

#include <stddef.h>
#include <stdint.h>

struct perfmap_entry {
	uint64_t start, end;     /* [start, end) */
	const char *name;        /* NUL-terminated, owned by the table */
};

struct perfmap {
	struct perfmap_entry *v; /* sorted by start, disjoint */
	size_t n;
	size_t lines;            /* entries read (lines that parsed) */
	size_t skipped;          /* lines that did not parse (junk, size 0, wrap) */
	char *text;              /* the names' storage */
};

/* The perf map in text[0, len) into m (zeroed first; free with
 * perfmap_free).  Returns 0, or -ENOMEM (m then empty).  Never fails on
 * content: a line that does not parse is counted in m->skipped. */
int perfmap_parse(const char *text, size_t len, struct perfmap *m);
/* perfmap_parse() of the file at path, of its first max_bytes bytes (cut at
 * the last whole line).  Returns 0, -ENOENT when it does not exist, another
 * negative errno when it cannot be read (m then empty). */
int perfmap_read(const char *path, size_t max_bytes, struct perfmap *m);
/* The entry whose range holds addr, or NULL. */
const struct perfmap_entry *perfmap_find(const struct perfmap *m, uint64_t addr);
void perfmap_free(struct perfmap *m);

#endif
