/*
 * compare.h — gate a run against a baseline: both sides are JSON reports
 * (report_json_write), expressions like 'func[heavy].self:+10%'.  Launcher side.
 */
#ifndef CBN_COMPARE_H
#define CBN_COMPARE_H

#include <stddef.h>
#include <stdio.h>

/* Exit statuses of compare (and of a run with --baseline). */
#define CMP_PASS 0
#define CMP_REGRESSION 1
#define CMP_USAGE 2
#define CMP_UNMEASURABLE 3

struct cmp_opts {
	const char **fail;  size_t nfail;   /* --fail EXPR ... */
	const char **warn;  size_t nwarn;   /* --warn EXPR ... */
	const char *markdown;               /* --markdown FILE, or NULL */
	const char *bench_json;             /* --bench-json FILE, or NULL */
	int quiet;
};

/* Compare current against baseline; prints the table to out.  Returns CMP_*. */
int cmp_run(const char *baseline_path, const char *current_path, const struct cmp_opts *o,
	    FILE *out);

/* 0 if expr parses, else -1 with a message in err (used to reject bad options
 * before running the program). */
int cmp_expr_check(const char *expr, char *err, size_t errlen);

/* `cbottleneck compare [OPTIONS] BASE.json NEW.json`; returns the exit status. */
int cmp_main(int argc, char **argv);

#endif
