/*
 * outputs.c — what a run or `report DIR` writes once the analysis is done:
 * the text report, the files asked for (--json, --trace, --folded,
 * --flamegraph, --pprof, --html) and the regression gate's table after the
 * report.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis.h"
#include "cli.h"
#include "compare.h"
#include "export.h"
#include "gate_run.h"
#include "html.h"
#include "report.h"

/*
 * The text report, for a --baseline run that prints the gate's table after it
 * on stdout: without the blank lines a quiet report may end with, so that the
 * gate's one blank line is the only one between them.
 */
static int report_text_trimmed(FILE *out, const struct analysis *a, const struct report_opts *ro)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	int ret;

	if (!mem)
		return report_text(out, a, ro);
	ret = report_text(mem, a, ro);
	if (fclose(mem) != 0 && ret == 0)
		ret = -ENOMEM;
	while (len >= 2 && buf[len - 1] == '\n' && buf[len - 2] == '\n')
		len--;
	if (ret == 0 && len && fwrite(buf, 1, len, out) != len)
		ret = -EIO;
	free(buf);
	return ret;
}

/* 0 when path can be written (created in an existing, writable directory,
 * or an existing regular file we may write), else -1 with why. */
static int writable(const char *path, const char **why)
{
	char buf[PATH_MAX];
	const char *dir;
	struct stat st;

	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			*why = "is a directory";
			return -1;
		}
		if (access(path, W_OK) != 0) {
			*why = strerror(errno);
			return -1;
		}
		return 0;
	}
	if (errno != ENOENT) {
		*why = strerror(errno);
		return -1;
	}
	if (strlen(path) >= sizeof(buf)) {
		*why = strerror(ENAMETOOLONG);
		return -1;
	}
	strcpy(buf, path);
	dir = dirname(buf); /* "." for a bare name */
	if (stat(dir, &st) != 0) {
		*why = errno == ENOENT ? "no such directory" : strerror(errno);
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		*why = "its directory is not a directory";
		return -1;
	}
	if (access(dir, W_OK | X_OK) != 0) {
		*why = strerror(errno);
		return -1;
	}
	return 0;
}

int cli_outputs_preflight(const struct cli_opts *o)
{
	const struct {
		const char *opt, *path;
	} out[] = {
		{ "--report", o->report_file }, { "--json", o->json }, { "--trace", o->trace },
		{ "--folded", o->folded }, { "--flamegraph", o->flamegraph }, { "--pprof", o->pprof },
		{ "--html", o->html }, { "--markdown", o->markdown }, { "--bench-json", o->bench_json },
	};
	const char *why;
	char err[768];
	size_t i, j;

	for (i = 0; i < sizeof(out) / sizeof(out[0]); i++) {
		if (!out[i].path || strcmp(out[i].path, "-") == 0)
			continue;
		if (writable(out[i].path, &why) < 0)
			return cli_usage_error("%s %s: cannot write it (%s)", out[i].opt, out[i].path,
					       why);
		for (j = 0; j < i; j++)
			if (out[j].path && strcmp(out[j].path, out[i].path) == 0)
				return cli_usage_error("%s and %s both write %s", out[j].opt,
						       out[i].opt, out[i].path);
	}
	if (o->baseline) {
		struct gate_run base;
		int ret = gate_run_from_json(o->baseline, "baseline", &base, err, sizeof(err));

		if (ret == -ENOMEM) {
			fprintf(stderr, "cbottleneck: out of memory reading the baseline\n");
			return CLI_EXIT_NOMEM;
		}
		if (ret < 0) {
			fprintf(stderr, "cbottleneck: %s\n", err);
			return CLI_EXIT_USAGE;
		}
		gate_run_free(&base);
	}
	return 0;
}

FILE *cli_term(const struct cli_opts *o)
{
	if (o->report_file && strcmp(o->report_file, "-") == 0)
		return stdout;
	return o->run_mode && !isatty(STDOUT_FILENO) ? stderr : stdout;
}

int cli_write_outputs(const struct analysis *a, const struct cli_opts *o,
			 const char *json_path)
{
	struct report_opts ro = {o->sort, o->limit, o->quiet, o->verbose};
	enum export_sample st = (enum export_sample)o->sample_type;
	char err[512];
	int failed = 0;
	FILE *term = cli_term(o);
	FILE *out = term;

	if (export_sample_is_wall(st) && (o->folded || o->flamegraph) &&
	    !export_has_offcpu(a)) {
		fprintf(stderr, "cbottleneck: --sample-type %s: the run has no off-CPU data; "
			"profile it with --off-cpu, or use --sample-type cpu\n",
			export_sample_name(st));
		return CLI_EXIT_USAGE;
	}
	if (st != EXPORT_CPU && !export_sample_is_wall(st) && (o->folded || o->flamegraph) &&
	    !export_has_memory(a)) {
		fprintf(stderr, "cbottleneck: --sample-type %s: the run has no memory data; "
			"profile it with --memory, or use --sample-type cpu\n",
			export_sample_name(st));
		return CLI_EXIT_USAGE;
	}

	if (o->report_file && strcmp(o->report_file, "-") != 0) {
		out = fopen(o->report_file, "w");
		if (!out) {
			fprintf(stderr, "cbottleneck: --report %s: %s\n", o->report_file,
				strerror(errno));
			failed = 1;
		}
	}
	if (out) {
		fflush(stdout);
		errno = 0;
		if ((out == term && o->baseline ? report_text_trimmed(out, a, &ro)
						: report_text(out, a, &ro)) < 0 ||
		    fflush(out) != 0) {
			/* A reader that stopped early (| head) is not our failure. */
			if (!(out == term && errno == EPIPE)) {
				fprintf(stderr, "cbottleneck: cannot write the report: %s\n",
					strerror(errno ? errno : EIO));
				failed = 1;
			}
		}
		if (out != term && fclose(out) != 0) {
			fprintf(stderr, "cbottleneck: --report %s: %s\n", o->report_file,
				strerror(errno));
			failed = 1;
		}
		fflush(stdout);
	}
#define OUT(cond, call, opt, file)                                                      \
	do {                                                                             \
		if ((cond) && (call) < 0) {                                              \
			fprintf(stderr, "cbottleneck: %s %s: %s\n", opt, file, err);    \
			failed = 1;                                                      \
		}                                                                        \
	} while (0)
	err[0] = '\0';
	OUT(json_path, report_json_write(a, &ro, json_path, err, sizeof(err)), "--json", json_path);
	if (o->trace) {
		struct trace_opts to = {o->window_start, o->window_end, 0, o->quiet};
		OUT(1, export_trace(a, o->trace, &to, err, sizeof(err)), "--trace", o->trace);
	}
	OUT(o->folded, export_folded_as(a, o->folded, st, err, sizeof(err)), "--folded", o->folded);
	OUT(o->flamegraph, export_flamegraph_as(a, o->flamegraph, st, err, sizeof(err)),
	    "--flamegraph", o->flamegraph);
	OUT(o->pprof, export_pprof(a, o->pprof, err, sizeof(err)), "--pprof", o->pprof);
	if (o->html) {
		struct html_opts ho = {o->source_root};
		OUT(1, report_html_write(a, &ro, &ho, o->html, err, sizeof(err)), "--html", o->html);
	}
#undef OUT
	return failed;
}

/* 1 if the text report went to cli_term (no --report FILE, or --report -). */
static int report_on_term(const struct cli_opts *o)
{
	return !o->report_file || strcmp(o->report_file, "-") == 0;
}

/* The run just profiled, compared with the baseline in memory: the figures
 * its JSON report would hold.  CMP_* or CMP_NOMEM. */
static int gate_cmp(const struct analysis *a, const char *label, const char *baseline,
		    const struct cmp_opts *co, FILE *out)
{
	struct gate_run cur;
	int st;

	if (gate_run_from_analysis(a, &cur) < 0)
		return CMP_NOMEM;
	st = cmp_run_current(baseline, &cur, label, co, out);
	gate_run_free(&cur);
	return st;
}

/*
 * The gate's table follows the report on cli_term, after one blank line.  The
 * table is built in memory first so that the blank line is printed only when
 * there is a table (a bad baseline prints nothing on stdout).  label names the
 * current run in the table.
 */
int cli_gate(const struct cli_opts *o, const struct analysis *a, const char *label)
{
	struct cmp_opts co;
	char *buf = NULL;
	size_t len = 0;
	FILE *term = cli_term(o);
	FILE *mem;
	int st;

	memset(&co, 0, sizeof(co));
	co.fail = o->fail;
	co.nfail = o->nfail;
	co.warn = o->warn;
	co.nwarn = o->nwarn;
	co.markdown = o->markdown;
	co.bench_json = o->bench_json;
	co.quiet = o->quiet;
	fflush(stdout);
	mem = open_memstream(&buf, &len);
	if (!mem) {
		/* no memory for the buffer: the table straight out, unseparated */
		st = gate_cmp(a, label, o->baseline, &co, term);
	} else {
		st = gate_cmp(a, label, o->baseline, &co, mem);
		if (fclose(mem) == 0 && len) {
			if (report_on_term(o))
				fputc('\n', term);
			fwrite(buf, 1, len, term);
		}
		free(buf);
	}
	fflush(term);
	if (st == CMP_NOMEM) {
		fprintf(stderr, "cbottleneck: out of memory in the regression gate\n");
		st = CMP_USAGE;
	}
	return st;
}

const char *cli_gate_word(int st)
{
	switch (st) {
	case CMP_PASS: return "pass";
	case CMP_REGRESSION: return "regression";
	case CMP_USAGE: return "bad baseline or expression";
	case CMP_UNMEASURABLE: return "could not measure";
	}
	return "?";
}
