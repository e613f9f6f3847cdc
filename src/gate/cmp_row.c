/*
 * cmp_row.c — the gate's rows (cmp_eval.h): a row added, judged against its
 * expression's threshold and noise, a section's figure as a row, a
 * configuration error said, a metric's name and noise, and the exit status
 * of the rows.  Below compare.c and the evaluators of each view (cmp_*.c),
 * which all add rows, and cmp_output.c, which reads their status.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmp_eval.h"
#include "gate_run.h"
#include "util.h"

char *cmp_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = malloc(n);

	return d ? memcpy(d, s, n) : NULL;
}

/* --- rows ---------------------------------------------------------------- */

/* A new row, or NULL with r->nomem set. */
struct cmp_row *cmp_row_add(struct cmp_result *r, const struct cmp_expr *e, const char *name)
{
	struct cmp_row *row;
	char *copy;

	if (r->nrows == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 16;
		struct cmp_row *rows = util_reallocarray(r->rows, cap, sizeof(*rows));

		if (!rows) {
			r->nomem = 1;
			return NULL;
		}
		r->rows = rows;
		r->cap = cap;
	}
	if (!(copy = cmp_strdup(name))) {
		r->nomem = 1;
		return NULL;
	}
	row = &r->rows[r->nrows++];
	memset(row, 0, sizeof(*row));
	row->name = copy;
	row->expr = e;
	return row;
}

/* Decide one row's status from its numbers and its expression's threshold. */
void cmp_row_judge(struct cmp_result *r, struct cmp_row *row)
{
	const struct cmp_threshold *th = &row->expr->th;
	double delta, d, rel;
	int fires;

	if (row->status == CMP_S_NA) {
		/* already decided */
	} else if (!row->has_base) {
		row->status = CMP_S_NEW;
	} else if (!row->has_cur) {
		row->status = CMP_S_MISSING;
	} else {
		delta = row->cur - row->base;
		d = th->dir * delta;
		if (row->base > 0)
			rel = d / row->base;
		else
			rel = d > 0 ? INFINITY : 0;
		fires = th->relative ? rel > th->value : d > th->value;
		if (fires && th->has_floor)
			fires = d >= th->floor;
		if (!fires)
			row->status = CMP_S_OK;
		else if (row->noise == CMP_N_SAMPLED && fabs(delta) <= CMP_NOISE_K * row->sigma)
			row->status = CMP_S_NOISE;
		else
			row->status = row->expr->level == CMP_LEVEL_FAIL ? CMP_S_FAIL : CMP_S_WARN;
	}
	if (row->status == CMP_S_NA && row->expr->level == CMP_LEVEL_FAIL)
		r->unmeasurable = 1;
	r->counts[row->status]++;
}

void cmp_config_error(struct cmp_result *r, const char *fmt, ...)
{
	va_list ap;

	fputs("cbottleneck compare: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	r->config_error = 1;
}

void cmp_eval_section(struct cmp_result *r, const struct cmp_side *b, const struct cmp_expr *e,
		      const struct cmp_section *g)
{
	struct cmp_row *row;

	if (!g->base_has) {
		cmp_config_error(r, "'%s': %s %s%s", e->text, g->base_pre, b->path, g->base_post);
		return;
	}
	if (!gate_has(g->base)) {
		cmp_config_error(r, "'%s': the baseline %s has no %s; is it a complete cbottleneck "
				 "report?", e->text, b->path, g->key);
		return;
	}
	row = cmp_row_add(r, e, e->text);
	if (!row)
		return;
	cmp_metric_name(e, row->name);
	row->noise = g->noise;
	row->has_base = 1;
	row->base = g->base;
	if (!g->cur_has) {
		row->status = CMP_S_NA;
		snprintf(row->note, sizeof(row->note), "%s", g->cur_note);
	} else if (!gate_has(g->cur)) {
		row->status = CMP_S_NA;
		snprintf(row->note, sizeof(row->note), "the current report has no %s", g->key);
	} else {
		row->has_cur = 1;
		row->cur = g->cur;
	}
	cmp_row_judge(r, row);
}


/* Sampled time in ns with its weight in samples: variance = p^2 * n, the
 * Poisson error of n counted periods of p = v / n each. */
struct cmp_val cmp_sampled(double v, double n, double period)
{
	struct cmp_val x = {1, v, 0};

	if (n > 0)
		x.var = v * v / n;
	else
		x.var = v * period;
	return x;
}

/* The metric part of an expression ("gpu.kernels" of "gpu.kernels:+0"), in
 * place: name holds a copy of e->text. */
void cmp_metric_name(const struct cmp_expr *e, char *name)
{
	size_t n = strlen(name), t = strlen(e->th_text);

	if (n > t && name[n - t - 1] == ':')
		name[n - t - 1] = '\0';
}

enum cmp_noise cmp_metric_noise(const struct cmp_expr *e)
{
	switch (e->metric) {
	case CMP_M_CPU:
	case CMP_M_SAMPLES:
	case CMP_M_FUNC:
		return e->field == CMP_F_CALLS ? CMP_N_EXACT : CMP_N_SAMPLED;
	case CMP_M_LINE:
		return CMP_N_SAMPLED;
	case CMP_M_WALL:
		return CMP_N_SINGLE;
	case CMP_M_OP:
		/* sampled CPU; exact GPU times are one measurement per run,
		 * launches exact counts */
		return e->field == CMP_F_CPU || e->field == CMP_F_SELF_CPU ? CMP_N_SAMPLED
		       : e->field == CMP_F_LAUNCHES ? CMP_N_EXACT : CMP_N_SINGLE;
	default:
		return e->unit == CMP_U_NS || e->unit == CMP_U_RATIO ? CMP_N_SINGLE : CMP_N_EXACT;
	}
}

int cmp_result_status(const struct cmp_result *r)
{
	if (r->config_error)
		return CMP_USAGE;
	if (r->counts[CMP_S_FAIL])
		return CMP_REGRESSION;
	if (r->unmeasurable)
		return CMP_UNMEASURABLE;
	return CMP_PASS;
}
