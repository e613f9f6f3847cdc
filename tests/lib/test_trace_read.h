/*
 * test_trace_read.h — what a unit test of the trace writer needs: the
 * --trace file of an analysis written by the real writer, checked by
 * tests/e2e/export_check.py (skipped, said so on stderr, without python3),
 * and read back with the JSON getters of test_json_read.h (tr_str: ""
 * rather than a marker when a key is absent, as trace events leave args
 * out).
 */
#ifndef CBN_TEST_TRACE_READ_H
#define CBN_TEST_TRACE_READ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cjson/cJSON.h>

#include "report/export.h"
#include "test_json_read.h"

/* a's trace as dir/name.json, clipped to [ws, we) (0, 0: the whole run);
 * its path (one of 4 kept), or NULL (said on stderr). */
static inline const char *tr_write(const struct analysis *a, const char *dir, const char *name,
				   uint64_t ws, uint64_t we)
{
	static char path[4][256];
	static int k;
	char *p = path[k++ % 4], err[256];
	struct trace_opts o = {ws, we, 0, 1};

	snprintf(p, 256, "%s/%s.json", dir, name);
	if (export_trace(a, p, &o, err, sizeof(err)) < 0) {
		fprintf(stderr, "export_trace: %s\n", err);
		return NULL;
	}
	return p;
}

/* 0 when tests/e2e/export_check.py accepts the trace at path (extra: more
 * of its arguments, "--counters NAMES", "--window A:B"), -1 otherwise. */
static inline int tr_check(const char *path, const char *extra)
{
	const char *src = getenv("CBN_SOURCE_DIR");
	char cmd[1024];
	int st;

	if (!src || system("command -v python3 >/dev/null 2>&1") != 0) {
		fprintf(stderr, "note: export_check.py not run (no CBN_SOURCE_DIR or python3)\n");
		return 0;
	}
	snprintf(cmd, sizeof(cmd), "python3 %s/tests/e2e/export_check.py trace '%s' %s >/dev/null",
		 src, path, extra);
	st = system(cmd);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* The string under key, "" when it is absent or not a string. */
static inline const char *tr_str(const cJSON *o, const char *key)
{
	const cJSON *v = jr_get(o, key);

	return cJSON_IsString(v) && v->valuestring ? v->valuestring : "";
}

#endif
