/*
 * test_json_read.h — what a unit test of a JSON writer needs: the --json
 * report of an analysis written by the real writer and parsed back, typed
 * getters that make a missing or mistyped key visible in a CHECK, and the
 * reports validated against docs/report.schema.json (python3 jsonschema;
 * skipped, said so on stderr, when it is missing).
 */
#ifndef CBN_TEST_JSON_READ_H
#define CBN_TEST_JSON_READ_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cjson/cJSON.h>

#include "report/report.h"
#include "test_export_fixture.h"

/* a's --json report as dir/name.json (its path into path), parsed; NULL
 * when it could not be written or read (said on stderr). */
static inline cJSON *jr_write_read(const struct analysis *a, const char *dir, const char *name,
				   char *path, size_t len)
{
	struct report_opts o = {.limit = 15};
	char err[256] = "";
	char *text;
	cJSON *root;

	snprintf(path, len, "%s/%s.json", dir, name);
	if (report_json_write(a, &o, path, err, sizeof(err)) < 0) {
		fprintf(stderr, "report_json_write: %s\n", err);
		return NULL;
	}
	text = ex_slurp(path, NULL);
	root = text ? cJSON_Parse(text) : NULL;
	free(text);
	return root;
}

static inline const cJSON *jr_get(const cJSON *o, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(o, key);
}

/* The number under key, -12345 when it is absent or not a number. */
static inline double jr_num(const cJSON *o, const char *key)
{
	const cJSON *v = jr_get(o, key);

	return cJSON_IsNumber(v) ? v->valuedouble : -12345;
}

/* The string under key, "(not a string)" when it is absent or not one. */
static inline const char *jr_str(const cJSON *o, const char *key)
{
	const cJSON *v = jr_get(o, key);

	return cJSON_IsString(v) ? v->valuestring : "(not a string)";
}

/* 0 when the n reports at paths validate against the schema and check
 * (Python lines, indented by 4, run for each report d; they add to bad
 * what the schema failed to reject) finds nothing; -1 otherwise. */
static inline int jr_validate(const char *const *paths, int n, const char *check)
{
	const char *src = getenv("CBN_SOURCE_DIR");
	char cmd[4096];
	size_t len;
	int st;

	if (!src || system("python3 -c 'import jsonschema' 2>/dev/null") != 0) {
		fprintf(stderr, "note: schema validation skipped (no CBN_SOURCE_DIR or no python3 "
				"jsonschema)\n");
		return 0;
	}
	len = (size_t)snprintf(cmd, sizeof(cmd), "python3 - '%s/docs/report.schema.json'", src);
	for (int i = 0; i < n; i++)
		len += (size_t)snprintf(cmd + len, sizeof(cmd) - len, " '%s'", paths[i]);
	snprintf(cmd + len, sizeof(cmd) - len,
		 " <<'EOF'\n"
		 "import json, sys, jsonschema\n"
		 "schema = json.load(open(sys.argv[1]))\n"
		 "cls = jsonschema.validators.validator_for(schema)\n"
		 "bad = 0\n"
		 "for p in sys.argv[2:]:\n"
		 "    d = json.load(open(p))\n"
		 "    for e in cls(schema).iter_errors(d):\n"
		 "        bad += 1; print('%%s: /%%s: %%s' %% (p, '/'.join(map(str, e.path)), e.message), file=sys.stderr)\n"
		 "%s"
		 "sys.exit(1 if bad else 0)\n"
		 "EOF", check);
	st = system(cmd);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

#endif
