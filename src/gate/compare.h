/*
 * compare.h — the regression gate: compare a run with a baseline JSON report
 * (report_json_write) through expressions like 'func[heavy].self:+10%'.  The
 * run is another JSON report (`cbottleneck compare`) or the run just analysed
 * (--baseline).  Launcher side; prints its table, never exits.
 */
#ifndef CBN_COMPARE_H
#define CBN_COMPARE_H

#include <errno.h>
#include <stddef.h>
#include <stdio.h>

/* Exit statuses of compare (and of a run with --baseline). */
#define CMP_PASS 0
#define CMP_REGRESSION 1
#define CMP_USAGE 2
#define CMP_UNMEASURABLE 3
/* Not an exit status: memory ran short; the caller says so and exits. */
#define CMP_NOMEM (-ENOMEM)

struct gate_run;

struct cmp_opts {
	const char **fail;  size_t nfail;   /* --fail EXPR ... */
	const char **warn;  size_t nwarn;   /* --warn EXPR ... */
	const char *markdown;               /* --markdown FILE, or NULL */
	const char *bench_json;             /* --bench-json FILE, or NULL */
	int quiet;
};

/* Compare the report at current_path against the one at baseline_path;
 * prints the table to out, messages to stderr.  Returns CMP_*. */
int cmp_run(const char *baseline_path, const char *current_path, const struct cmp_opts *o,
	    FILE *out);
/* The same with the current run in memory (gate_run_from_analysis); cur_label
 * names it in the table. */
int cmp_run_current(const char *baseline_path, const struct gate_run *cur, const char *cur_label,
		    const struct cmp_opts *o, FILE *out);

/* 0 if expr parses, else -1 with a message in err (used to reject bad options
 * before running the program). */
int cmp_expr_check(const char *expr, char *err, size_t errlen);

#endif
