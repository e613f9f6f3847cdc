/*
 * report.h — options shared by every report writer, and the entry points of the
 * text report (stdout) and the JSON report.  Writers take the analysis result
 * (analysis.h) and only format it.  Launcher side only.
 */
#ifndef CBN_REPORT_H
#define CBN_REPORT_H

#include <stdio.h>

#include "profile.h"

struct analysis;

struct report_opts {
	const char *sort;        /* as given to --sort; NULL = each table's default */
	int limit;               /* rows per table: 0 the default, < 0 all (report_limit) */
	int quiet;               /* -q: tables only, no banner/hints */
	int verbose;             /* -v: the sampler's inner workings in the header, the
				  * environment block, the notes of expected events */
};

/* Rows per table when --limit is not given: the one home of the default
 * (the CLI's --help says it too). */
#define REPORT_DEFAULT_LIMIT 15

/* How many of a table's n rows it shows under o: o->limit, at most n;
 * REPORT_DEFAULT_LIMIT when it is 0 (or o is NULL), all n when it is < 0.
 * Every text table takes its rows from here. */
size_t report_limit(const struct report_opts *o, size_t n);

/* Sort keys accepted by --sort: the pstats keys of the CPU table and the
 * key_averages keys of the CUDA tables.  1 if key is one of them. */
int report_sort_key_valid(const char *key);

/* The whole text report: header, CPU table, hot lines, per-process/thread,
 * then the CUDA tables when the run had GPU work, then data quality. */
int report_text(FILE *out, const struct analysis *a, const struct report_opts *o);

/* --json FILE.  Returns 0, or -1 with a message in err. */
int report_json_write(const struct analysis *a, const struct report_opts *o, const char *path,
		      char *err, size_t errlen);

#endif
