/*
 * test_gate_harness.h — what a unit test of the regression gate needs: JSON
 * reports written by the real writer into a private folder, the gate run on
 * them with stdout and stderr kept, and the status cell of a row of its
 * table.  Used by test_compare_eval.c and test_compare_{mem,steps,wait}.c;
 * a test of a new gated view starts from these.
 *
 *   gh_dir        the test's folder (the test makes it: ex_tmpdir, mkdtemp)
 *   gh_write_report(a, name)   a's --json report as gh_dir/name.json
 *   gh_run(base, cur_path, cur, o)   cmp_run on two files, or
 *                 cmp_run_current when cur (the run in memory) is given;
 *                 its table in gh_out, its stderr in gh_err; the status
 *   gh_status_of(name)         the status cell of the row named name
 */
#ifndef CBN_TEST_GATE_HARNESS_H
#define CBN_TEST_GATE_HARNESS_H

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gate/cmp_internal.h"
#include "gate/gate_run.h"
#include "report/report.h"
#include "testlib.h"

static char gh_dir[64];
static char gh_out[65536], gh_err[8192];

static inline const char *gh_write_report(const struct analysis *a, const char *name)
{
	static char paths[8][300];
	static int k;
	char *p = paths[k++ % 8], err[256];
	struct report_opts o = {.limit = 15};

	snprintf(p, 300, "%s/%s.json", gh_dir, name);
	if (report_json_write(a, &o, p, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		exit(1);
	}
	return p;
}

static inline int gh_run(const char *base, const char *cur_path, const struct gate_run *cur,
			 const struct cmp_opts *o)
{
	char errpath[300];
	FILE *out = fmemopen(gh_out, sizeof(gh_out) - 1, "w");
	int saved = dup(2), fd, rc;
	ssize_t n;

	snprintf(errpath, sizeof(errpath), "%s/stderr", gh_dir);
	fd = open(errpath, O_RDWR | O_CREAT | O_TRUNC, 0600);
	REQUIRE(out && fd >= 0 && saved >= 0);
	memset(gh_out, 0, sizeof(gh_out));
	fflush(stderr);
	dup2(fd, 2);
	rc = cur ? cmp_run_current(base, cur, "this run", o, out) : cmp_run(base, cur_path, o, out);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	fclose(out);
	n = pread(fd, gh_err, sizeof(gh_err) - 1, 0);
	gh_err[n > 0 ? n : 0] = '\0';
	close(fd);
	return rc;
}

/* The status cell (last column) of the row whose first cell is name;
 * "within noise" has a blank in it. */
static inline const char *gh_status_of(const char *name)
{
	static char st[64];
	char needle[300];
	const char *p, *eol;

	snprintf(needle, sizeof(needle), "\n%s ", name);
	p = strstr(gh_out, needle);
	if (!p || !(eol = strchr(p + 1, '\n')))
		return "(no row)";
	if (eol - p > 14 && strncmp(eol - 12, "within noise", 12) == 0)
		return "within noise";
	for (p = eol; p[-1] != ' '; p--)
		;
	snprintf(st, sizeof(st), "%.*s", (int)(eol - p), p);
	return st;
}

#endif
