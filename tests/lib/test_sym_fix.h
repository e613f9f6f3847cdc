/*
 * test_sym_fix.h — helpers shared by the symbolizer unit tests: locate the
 * fixtures built by tests/symbols/, run one to collect its MARK lines, and
 * find the source lines the MARK: comments sit on.
 */
#ifndef TEST_SYM_FIX_H
#define TEST_SYM_FIX_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib.h"

struct fix_mark {
	char tag[64];
	char path[4096];
	uint64_t vaddr;
};

struct fix_run {
	struct fix_mark marks[16];
	int nmarks;
	uint8_t build_id[64];
	size_t build_id_len;
};

static char fix_dir[4096];
static char fix_src[4096];

/* Exits 77 (skip) outside ctest; fails when a fixture of this build is missing. */
static inline void fix_init(void)
{
	const char *b = getenv("CBN_BUILD_DIR");
	const char *s = getenv("CBN_SOURCE_DIR");

	if (!b || !s) {
		fprintf(stderr, "skip: CBN_BUILD_DIR/CBN_SOURCE_DIR not set (run through ctest)\n");
		exit(TEST_SKIP);
	}
	snprintf(fix_dir, sizeof(fix_dir), "%s/tests/symbols", b);
	snprintf(fix_src, sizeof(fix_src), "%s/tests/symbols", s);
	char p[8192];
	snprintf(p, sizeof(p), "%s/symfix_main", fix_dir);
	if (access(p, X_OK) != 0) {
		/* A fixture of this build: missing means a broken build, not a skip. */
		fprintf(stderr, "FAIL: %s not built (build target symbol_fixtures)\n", p);
		exit(1);
	}
}

static inline const char *fix_path(const char *name)
{
	static char bufs[4][8192];
	static int k;
	char *b = bufs[k++ & 3];

	snprintf(b, sizeof(bufs[0]), "%s/%s", fix_dir, name);
	return b;
}

static inline int fix_exec(const char *prog, struct fix_run *r)
{
	char line[8192];
	FILE *f = popen(fix_path(prog), "r");

	memset(r, 0, sizeof(*r));
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		struct fix_mark *m = &r->marks[r->nmarks];
		char hex[200];
		unsigned long long v;
		if (r->nmarks < 16 &&
		    sscanf(line, "MARK %63s %4095s 0x%llx", m->tag, m->path, &v) == 3) {
			m->vaddr = v;
			r->nmarks++;
		} else if (sscanf(line, "BUILDID %199s", hex) == 1) {
			for (size_t i = 0; hex[2 * i] && hex[2 * i + 1] && i < sizeof(r->build_id); i++) {
				unsigned x;
				sscanf(hex + 2 * i, "%2x", &x);
				r->build_id[i] = (uint8_t)x;
				r->build_id_len = i + 1;
			}
		}
	}
	return pclose(f) == 0 ? 0 : -1;
}

static inline const struct fix_mark *fix_find(const struct fix_run *r, const char *tag)
{
	for (int i = 0; i < r->nmarks; i++)
		if (strcmp(r->marks[i].tag, tag) == 0)
			return &r->marks[i];
	fprintf(stderr, "fixture printed no MARK %s\n", tag);
	exit(1);
}

/* Line number (1-based) of the first line of src containing needle. */
static inline uint32_t fix_line(const char *src, const char *needle)
{
	char p[8192], line[4096];
	uint32_t n = 0;

	snprintf(p, sizeof(p), "%s/%s", fix_src, src);
	FILE *f = fopen(p, "r");
	REQUIRE(f != NULL);
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, needle)) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	fprintf(stderr, "%s: no line contains \"%s\"\n", src, needle);
	exit(1);
}

static inline int fix_ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && strcmp(s + a - b, suffix) == 0;
}

#endif
