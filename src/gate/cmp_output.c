/*
 * cmp_output.c — the writers of `cbottleneck compare`: the text table, the
 * one-line summary, the GitHub-flavoured Markdown summary and the
 * github-action-benchmark "customSmallerIsBetter" JSON.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cmp_internal.h"
#include "util.h"

#define CMP_NAME_WIDTH 60        /* longer metric names are shortened in the middle */
#define CMP_CELL 96              /* bytes of one table cell */

static const char *status_name(enum cmp_status s)
{
	switch (s) {
	case CMP_S_OK: return "ok";
	case CMP_S_WARN: return "WARN";
	case CMP_S_FAIL: return "FAIL";
	case CMP_S_NOISE: return "within noise";
	case CMP_S_MISSING: return "missing";
	case CMP_S_NEW: return "new";
	case CMP_S_NA: return "n/a";
	}
	return "?";
}

void cmp_format_value(char *buf, size_t len, enum cmp_unit unit, double v)
{
	switch (unit) {
	case CMP_U_NS:
		util_fmt_ns(buf, len, v, UTIL_DUR_GATE);
		break;
	case CMP_U_BYTES:
		util_fmt_size(buf, len, v, UTIL_SIZE_GATE);
		break;
	case CMP_U_COUNT:
		snprintf(buf, len, "%.0f", v);
		break;
	case CMP_U_RATIO:
		snprintf(buf, len, "%.3g", v);
		break;
	}
}

static enum cmp_unit row_unit(const struct cmp_row *row)
{
	return row->expr->unit;
}

static void fmt_base(char *buf, size_t len, const struct cmp_row *row)
{
	if (row->has_base)
		cmp_format_value(buf, len, row_unit(row), row->base);
	else
		snprintf(buf, len, "-");
}

static void fmt_cur(char *buf, size_t len, const struct cmp_row *row)
{
	if (row->has_cur)
		cmp_format_value(buf, len, row_unit(row), row->cur);
	else
		snprintf(buf, len, "-");
}

static void fmt_delta(char *buf, size_t len, const struct cmp_row *row)
{
	char v[48];
	double d;

	if (!row->has_base || !row->has_cur) {
		snprintf(buf, len, "-");
		return;
	}
	d = row->cur - row->base;
	cmp_format_value(v, sizeof(v), row_unit(row), fabs(d));
	if (row->base > 0)
		snprintf(buf, len, "%s%s (%+.1f%%)", d < 0 ? "-" : "+", v, 100.0 * d / row->base);
	else
		snprintf(buf, len, "%s%s", d < 0 ? "-" : "+", v);
}

static void fmt_threshold(char *buf, size_t len, const struct cmp_row *row)
{
	snprintf(buf, len, "%s %s", row->expr->level == CMP_LEVEL_FAIL ? "fail" : "warn",
		 row->expr->th_text);
}

/* ascii: "~1.2 ms" (text), else "±1.2 ms" (Markdown). */
static void fmt_noise(char *buf, size_t len, const struct cmp_row *row, int ascii)
{
	char v[48];

	snprintf(buf, len, "-");
	if (row->status == CMP_S_NA)
		return;
	switch (row->noise) {
	case CMP_N_SAMPLED:
		cmp_format_value(v, sizeof(v), row_unit(row), CMP_NOISE_K * row->sigma);
		snprintf(buf, len, "%s%s", ascii ? "~" : "±", v);
		break;
	case CMP_N_EXACT:
		snprintf(buf, len, "exact");
		break;
	case CMP_N_SINGLE:
		snprintf(buf, len, "1 run");
		break;
	}
}

static void shorten(char *buf, size_t len, const char *name)
{
	size_t n = strlen(name), head = CMP_NAME_WIDTH / 2 - 2, tail = CMP_NAME_WIDTH - head - 3;

	if (n <= CMP_NAME_WIDTH)
		snprintf(buf, len, "%s", name);
	else
		snprintf(buf, len, "%.*s...%s", (int)head, name, name + n - tail);
}

static const char *verdict(const struct cmp_result *r)
{
	switch (cmp_result_status(r)) {
	case CMP_PASS: return "PASS";
	case CMP_REGRESSION: return "FAIL";
	case CMP_UNMEASURABLE: return "NOT MEASURED";
	default: return "ERROR";
	}
}

void cmp_summary_line(const struct cmp_result *r, char *buf, size_t len)
{
	static const struct {
		enum cmp_status s;
		const char *one, *many;
		int always;
	} parts[] = {
		{CMP_S_FAIL, "regression", "regressions", 1},
		{CMP_S_WARN, "warning", "warnings", 1},
		{CMP_S_OK, "ok", "ok", 1},
		{CMP_S_NOISE, "within noise", "within noise", 0},
		{CMP_S_MISSING, "missing", "missing", 0},
		{CMP_S_NEW, "new", "new", 0},
		{CMP_S_NA, "not measurable", "not measurable", 0},
	};
	size_t i, n;

	n = (size_t)snprintf(buf, len, "%s: ", verdict(r));
	for (i = 0; i < sizeof(parts) / sizeof(parts[0]) && n < len; i++) {
		unsigned c = r->counts[parts[i].s];

		if (!c && !parts[i].always)
			continue;
		n += (size_t)snprintf(buf + n, len - n, "%s%u %s", i ? ", " : "", c,
				      c == 1 ? parts[i].one : parts[i].many);
	}
	if (r->config_error && n < len)
		snprintf(buf + n, len - n, "; some gates could not be evaluated (see above)");
}

enum { COL_METRIC, COL_BASE, COL_CUR, COL_DELTA, COL_TH, COL_NOISE, COL_STATUS, NCOLS };

static const char *col_names[NCOLS] = {
	"metric", "baseline", "current", "delta", "threshold", "noise", "status",
};

static void row_cells(const struct cmp_row *row, char cells[NCOLS][CMP_CELL], int ascii)
{
	const size_t len = CMP_CELL;

	shorten(cells[COL_METRIC], len, row->name);
	fmt_base(cells[COL_BASE], len, row);
	fmt_cur(cells[COL_CUR], len, row);
	fmt_delta(cells[COL_DELTA], len, row);
	fmt_threshold(cells[COL_TH], len, row);
	fmt_noise(cells[COL_NOISE], len, row, ascii);
	snprintf(cells[COL_STATUS], len, "%s", status_name(row->status));
}

void cmp_print_table(FILE *out, const struct cmp_result *r, int quiet)
{
	char cells[NCOLS][CMP_CELL];
	int width[NCOLS];
	char line[512];
	size_t i;
	int c, any_sampled = 0, any_single = 0, any_mem = 0;

	/* quiet: the table and the summary, like the launcher's -q ("tables only") */
	if (!quiet) {
		fprintf(out, "baseline: %s%s%s%s\n", r->base_path, *r->base_cmd ? " (" : "",
			r->base_cmd, *r->base_cmd ? ")" : "");
		fprintf(out, "current:  %s%s%s%s\n", r->cur_path, *r->cur_cmd ? " (" : "",
			r->cur_cmd, *r->cur_cmd ? ")" : "");
		if (r->defaults)
			fprintf(out, "no --fail/--warn given: comparing wall, cpu and the baseline's "
				"hottest functions (and host memory peak, when recorded), warning at "
				"+10%%; this never fails\n");
		fputc('\n', out);
	}
	for (c = 0; c < NCOLS; c++)
		width[c] = (int)strlen(col_names[c]);
	for (i = 0; i < r->nrows; i++) {
		row_cells(&r->rows[i], cells, 1);
		for (c = 0; c < NCOLS; c++)
			if ((int)strlen(cells[c]) > width[c])
				width[c] = (int)strlen(cells[c]);
	}
	for (c = 0; c < NCOLS; c++)
		fprintf(out, "%s%*s", c ? "  " : "", c == NCOLS - 1 ? 0
			: c >= COL_BASE && c <= COL_DELTA ? width[c] : -width[c], col_names[c]);
	fputc('\n', out);
	for (i = 0; i < r->nrows; i++) {
		const struct cmp_row *row = &r->rows[i];

		row_cells(row, cells, 1);
		for (c = 0; c < NCOLS; c++) {
			/* numbers right-aligned, text left-aligned; no trailing blanks */
			if (c == NCOLS - 1)
				fprintf(out, "  %s", cells[c]);
			else
				fprintf(out, "%s%*s", c ? "  " : "",
					c >= COL_BASE && c <= COL_DELTA ? width[c] : -width[c],
					cells[c]);
		}
		fputc('\n', out);
		any_sampled |= row->noise == CMP_N_SAMPLED;
		any_mem |= row->noise == CMP_N_SAMPLED && row->expr &&
			   row->expr->unit == CMP_U_BYTES;
		any_single |= row->noise == CMP_N_SINGLE;
	}
	for (i = 0; i < r->nrows; i++)
		if (r->rows[i].status == CMP_S_NA && *r->rows[i].note)
			fprintf(out, "n/a %s: %s\n", r->rows[i].name, r->rows[i].note);
	if (any_sampled && !quiet)
		fprintf(out, "~X: sampled figure; a change within X (2 sigma of the sampling "
			"error, sigma = period * sqrt(samples_base + samples_cur)) is within noise\n");
	if (any_mem && !quiet)
		fprintf(out, "   (memory estimates: sigma = sqrt(rate * (bytes_base + bytes_cur)), "
			"rate the host sampling interval)\n");
	if (any_single && !quiet)
		fprintf(out, "1 run: a single measurement per run, no noise estimate; gate it "
			"with a generous threshold\n");
	fputc('\n', out);
	cmp_summary_line(r, line, sizeof(line));
	fprintf(out, "%s\n", line);
}

/* Inline code for a Markdown table cell: '|' must be escaped even inside a
 * code span (GFM), and a backtick would end it. */
static void md_code(FILE *f, const char *s)
{
	fputc('`', f);
	for (; *s; s++) {
		if (*s == '|')
			fputs("\\|", f);
		else if (*s == '`')
			fputc('\'', f);
		else if (*s == '\n' || *s == '\r')
			fputc(' ', f);
		else
			fputc(*s, f);
	}
	fputc('`', f);
}

int cmp_write_markdown(const char *path, const struct cmp_result *r, char *err, size_t errlen)
{
	/* Appends: $GITHUB_STEP_SUMMARY may already hold this step's other output. */
	int to_stdout = strcmp(path, "-") == 0;
	FILE *f = to_stdout ? stdout : fopen(path, "a");
	char cells[NCOLS][CMP_CELL];
	char line[512];
	size_t i;
	int c, any_sampled = 0;

	if (!f) {
		snprintf(err, errlen, "cannot write the Markdown summary %s: %s", path,
			 strerror(errno));
		return -1;
	}
	fprintf(f, "### cbottleneck compare: %s\n\n", verdict(r));
	fputs("Baseline ", f);
	md_code(f, r->base_path);
	if (*r->base_cmd) {
		fputs(" (", f);
		md_code(f, r->base_cmd);
		fputc(')', f);
	}
	fputs(" vs current ", f);
	md_code(f, r->cur_path);
	if (*r->cur_cmd) {
		fputs(" (", f);
		md_code(f, r->cur_cmd);
		fputc(')', f);
	}
	fputs(".\n\n", f);
	fputs("| metric | baseline | current | delta | threshold | noise (±2σ) | status |\n", f);
	fputs("|:--|--:|--:|--:|:--|--:|:--|\n", f);
	for (i = 0; i < r->nrows; i++) {
		const struct cmp_row *row = &r->rows[i];

		row_cells(row, cells, 0);
		fputs("| ", f);
		md_code(f, row->name);
		for (c = COL_BASE; c < NCOLS; c++) {
			const char *cell = cells[c];

			if (c == COL_STATUS && (row->status == CMP_S_FAIL ||
						row->status == CMP_S_WARN))
				fprintf(f, " | **%s**", cell);
			else
				fprintf(f, " | %s", cell);
		}
		fputs(" |\n", f);
		any_sampled |= row->noise == CMP_N_SAMPLED;
	}
	cmp_summary_line(r, line, sizeof(line));
	fprintf(f, "\n**%s**\n", line);
	for (i = 0; i < r->nrows; i++)
		if (r->rows[i].status == CMP_S_NA && *r->rows[i].note) {
			fputs("\nn/a ", f);
			md_code(f, r->rows[i].name);
			fprintf(f, ": %s\n", r->rows[i].note);
		}
	if (any_sampled)
		fputs("\n<sub>±: sampled figure; a change within 2σ of the sampling error "
		      "(σ = period·√(samples<sub>base</sub> + samples<sub>cur</sub>)) is "
		      "reported as within noise, not as a regression.</sub>\n", f);
	fputc('\n', f);
	if (to_stdout) {
		fflush(f);
		return 0;
	}
	if (fclose(f) != 0) {
		snprintf(err, errlen, "cannot write the Markdown summary %s: %s", path,
			 strerror(errno));
		return -1;
	}
	return 0;
}

/* github-action-benchmark wants one unit per series: ms for times. */
static double bench_value(enum cmp_unit u, double v, const char **unit)
{
	switch (u) {
	case CMP_U_NS:
		*unit = "ms";
		return v / 1e6;
	case CMP_U_BYTES:
		*unit = "bytes";
		return v;
	default:
		*unit = "count";
		return v;
	}
}

static void bench_add(cJSON *arr, const char *name, enum cmp_unit u, double v, int sampled,
		      double sigma, const char *extra)
{
	cJSON *o = cJSON_CreateObject();
	const char *unit;
	char range[64];
	double x = bench_value(u, v, &unit);

	cJSON_AddStringToObject(o, "name", name);
	cJSON_AddStringToObject(o, "unit", unit);
	cJSON_AddNumberToObject(o, "value", x);
	if (sampled) {
		snprintf(range, sizeof(range), "± %.6g", bench_value(u, CMP_NOISE_K * sigma, &unit));
		cJSON_AddStringToObject(o, "range", range);
	}
	if (extra)
		cJSON_AddStringToObject(o, "extra", extra);
	cJSON_AddItemToArray(arr, o);
}

int cmp_write_bench_json(const char *path, const struct cmp_result *r, char *err, size_t errlen)
{
	cJSON *arr = cJSON_CreateArray();
	char *text = NULL;
	char extra[256], base[48], th[96];
	int have_wall = 0, have_cpu = 0, ret = -1;
	size_t i;
	FILE *f = NULL;

	for (i = 0; i < r->nrows; i++) {
		const struct cmp_row *row = &r->rows[i];

		/* customSmallerIsBetter: leave out "must not drop" gates and ratios */
		if (!row->has_cur || row->expr->th.dir < 0 || row->expr->unit == CMP_U_RATIO)
			continue;
		fmt_base(base, sizeof(base), row);
		fmt_threshold(th, sizeof(th), row);
		snprintf(extra, sizeof(extra), "baseline %s; threshold %s; status %s", base, th,
			 status_name(row->status));
		bench_add(arr, row->name, row->expr->unit, row->cur, row->noise == CMP_N_SAMPLED,
			  row->sigma, extra);
		have_wall |= strcmp(row->name, "wall") == 0;
		have_cpu |= strcmp(row->name, "cpu") == 0;
	}
	if (!have_wall && r->has_wall)
		bench_add(arr, "wall", CMP_U_NS, r->wall, 0, 0, "not gated");
	if (!have_cpu && r->has_cpu)
		bench_add(arr, "cpu", CMP_U_NS, r->cpu, 1, r->cpu_sigma,
			  "not gated");
	text = cJSON_Print(arr);
	if (!text) {
		snprintf(err, errlen, "out of memory writing %s", path);
		goto out;
	}
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fputc('\n', f) < 0) {
		snprintf(err, errlen, "cannot write the benchmark JSON %s: %s", path,
			 strerror(errno));
		goto out;
	}
	ret = 0;
out:
	if (f && fclose(f) != 0 && ret == 0) {
		snprintf(err, errlen, "cannot write the benchmark JSON %s: %s", path,
			 strerror(errno));
		ret = -1;
	}
	free(text);
	cJSON_Delete(arr);
	return ret;
}
