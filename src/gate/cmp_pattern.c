/*
 * cmp_pattern.c — the gate on the rows of the CPU, CUDA and operator tables
 * named by a pattern: func[], line[], kernel[], api[] and op[], each row
 * that matches in either run compared with its counterpart.
 */
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmp_eval.h"
#include "util.h"

/* --- pattern metrics: func[], line[], kernel[], api[] -------------------- */

struct cmp_match {
	char *key;
	double a;                /* the value, or the total for an average */
	double n;                /* the count for an average */
	double var;
};

struct cmp_matches {
	struct cmp_match *m;
	size_t n, cap;
};

int cmp_file_matches(const char *pattern, const char *file)
{
	const char *p;

	if (fnmatch(pattern, file, 0) == 0)
		return 1;
	/* "split.c" matches ".../examples/split.c": try every path suffix. */
	for (p = strchr(file, '/'); p; p = strchr(p + 1, '/'))
		if (fnmatch(pattern, p + 1, 0) == 0)
			return 1;
	return 0;
}

/* Append m (its key copied); 0, or -1 with r->nomem set. */
static int match_add(struct cmp_result *r, struct cmp_matches *out, struct cmp_match m,
		     const char *key)
{
	if (out->n == out->cap) {
		size_t cap = out->cap ? out->cap * 2 : 16;
		struct cmp_match *v = util_reallocarray(out->m, cap, sizeof(*v));

		if (!v)
			goto nomem;
		out->m = v;
		out->cap = cap;
	}
	if (!(m.key = cmp_strdup(key)))
		goto nomem;
	out->m[out->n++] = m;
	return 0;
nomem:
	r->nomem = 1;
	return -1;
}

/* A value that must be there (else the entry is skipped), or one that
 * counts as 0 when absent. */
static int need(double v, double *out)
{
	if (!gate_has(v))
		return -1;
	*out = v;
	return 0;
}

static double or_zero(double v)
{
	return gate_has(v) ? v : 0;
}

static int name_matches(const struct cmp_expr *e, const char *name)
{
	return e->exact ? strcmp(e->pattern, name) == 0 : fnmatch(e->pattern, name, 0) == 0;
}

static void collect(struct cmp_result *r, const struct cmp_side *s, const struct cmp_expr *e,
		    struct cmp_matches *out)
{
	const struct gate_run *run = s->run;
	char key[CMP_PATTERN_MAX + 64];
	size_t i;

	switch (e->metric) {
	case CMP_M_FUNC:
	case CMP_M_LINE: {
		int self = e->field == CMP_F_SELF, line = e->metric == CMP_M_LINE;
		size_t n = line ? run->nlines : run->nfuncs;

		for (i = 0; i < n; i++) {
			const struct gate_func *f = line ? NULL : &run->funcs[i];
			const struct gate_line *l = line ? &run->lines[i] : NULL;
			struct cmp_match m = {0};
			struct cmp_val x;
			double v;

			if (line) {
				/* lines[] have self time only */
				if (l->line != (double)e->line || !cmp_file_matches(e->pattern, l->file))
					continue;
				snprintf(key, sizeof(key), "%s:%lu", l->file, e->line);
				if (!self || need(l->self_ns, &v) < 0)
					continue;
				x = cmp_sampled(v, or_zero(l->self_samples), run->period_ns);
			} else {
				if (!name_matches(e, f->name))
					continue;
				snprintf(key, sizeof(key), "%s", f->name);
				if (e->field == CMP_F_CALLS) { /* exact (--calls) */
					if (need(f->calls, &m.a) < 0)
						continue;
					if (match_add(r, out, m, key) < 0)
						return;
					continue;
				}
				if (need(self ? f->self_ns : f->total_ns, &v) < 0)
					continue;
				x = cmp_sampled(v, or_zero(self ? f->self_samples : f->total_samples),
					    run->period_ns);
			}
			m.a = x.v;
			m.var = x.var;
			if (match_add(r, out, m, key) < 0)
				return;
		}
		break;
	}
	case CMP_M_OP:
		/* operators: CUDA and launches exact, CPU sampled */
		for (i = 0; i < run->nops; i++) {
			const struct gate_op *o = &run->ops[i];
			struct cmp_match m = {0};
			double v;

			if (!name_matches(e, o->name))
				continue;
			if (e->field == CMP_F_CPU || e->field == CMP_F_SELF_CPU) {
				int self = e->field == CMP_F_SELF_CPU;
				struct cmp_val x;

				if (need(self ? o->self_cpu_ns : o->cpu_total_ns, &v) < 0)
					continue;
				x = cmp_sampled(v, or_zero(self ? o->self_samples : o->total_samples),
					    run->period_ns);
				m.a = x.v;
				m.var = x.var;
			} else if (need(e->field == CMP_F_CUDA ? o->cuda_total_ns
					: e->field == CMP_F_SELF_CUDA ? o->self_cuda_ns : o->launches,
					&m.a) < 0) {
				continue;
			}
			snprintf(key, sizeof(key), "%s", o->name);
			if (match_add(r, out, m, key) < 0)
				return;
		}
		break;
	default: {
		/* kernel[]: count is instances; api[]: count is calls */
		const struct gate_count *v = e->metric == CMP_M_KERNEL ? run->kernels : run->api;
		size_t n = e->metric == CMP_M_KERNEL ? run->nkernels : run->napi;

		if (!run->has_cuda)
			break;
		for (i = 0; i < n; i++) {
			struct cmp_match m = {0};

			if (!name_matches(e, v[i].name))
				continue;
			if (e->field == CMP_F_CALLS) {
				if (need(v[i].count, &m.a) < 0)
					continue;
			} else {
				if (need(v[i].total_ns, &m.a) < 0)
					continue;
				m.n = or_zero(v[i].count);
			}
			snprintf(key, sizeof(key), "%s", v[i].name);
			if (match_add(r, out, m, key) < 0)
				return;
		}
		break;
	}
	}
}

static int match_cmp(const void *a, const void *b)
{
	return strcmp(((const struct cmp_match *)a)->key, ((const struct cmp_match *)b)->key);
}

/* Sort by key and fold entries with the same key (one function name in two
 * modules, one kernel with two launch configurations) into one. */
static void fold(struct cmp_matches *ms)
{
	size_t i, o = 0;

	if (ms->n == 0)
		return;
	qsort(ms->m, ms->n, sizeof(*ms->m), match_cmp);
	for (i = 1; i < ms->n; i++) {
		if (strcmp(ms->m[o].key, ms->m[i].key) == 0) {
			ms->m[o].a += ms->m[i].a;
			ms->m[o].n += ms->m[i].n;
			ms->m[o].var += ms->m[i].var;
			free(ms->m[i].key);
		} else {
			ms->m[++o] = ms->m[i];
		}
	}
	ms->n = o + 1;
}

static double match_value(const struct cmp_expr *e, const struct cmp_match *m)
{
	if (e->field == CMP_F_AVG)
		return m->n > 0 ? m->a / m->n : 0;
	return m->a;
}

static void free_matches(struct cmp_matches *ms)
{
	size_t i;

	for (i = 0; i < ms->n; i++)
		free(ms->m[i].key);
	free(ms->m);
}

static const char *field_name(enum cmp_field f)
{
	switch (f) {
	case CMP_F_SELF: return "self";
	case CMP_F_TOTAL: return "total";
	case CMP_F_CALLS: return "calls";
	case CMP_F_AVG: return "avg";
	case CMP_F_CUDA: return "cuda";
	case CMP_F_SELF_CUDA: return "self_cuda";
	case CMP_F_CPU: return "cpu";
	case CMP_F_SELF_CPU: return "self_cpu";
	case CMP_F_LAUNCHES: return "launches";
	default: return "?";
	}
}

void cmp_eval_pattern(struct cmp_result *r, const struct cmp_side *b, const struct cmp_side *c,
		      const struct cmp_expr *e)
{
	struct cmp_matches mb = {0}, mc = {0};
	const char *prefix = e->metric == CMP_M_FUNC ? "func"
			     : e->metric == CMP_M_LINE ? "line"
			     : e->metric == CMP_M_KERNEL ? "kernel"
			     : e->metric == CMP_M_OP ? "op" : "api";
	size_t i = 0, j = 0;
	char *name = NULL;

	collect(r, b, e, &mb);
	collect(r, c, e, &mc);
	if (r->nomem)
		goto out;
	fold(&mb);
	fold(&mc);
	if (mb.n == 0 && !e->exact) {
		cmp_config_error(r, "'%s': no %s in the baseline %s matches '%s'%s; check the name "
				 "(see the baseline's report)", e->text,
				 e->metric == CMP_M_FUNC ? "function"
				 : e->metric == CMP_M_LINE ? "source line"
				 : e->metric == CMP_M_KERNEL ? "kernel"
				 : e->metric == CMP_M_OP ? "operator" : "CUDA API function",
				 b->path, e->pattern,
				 e->metric == CMP_M_LINE ? " at that line"
				 : e->metric == CMP_M_OP && !b->run->has_ops
				 ? " (it has no operators: no frame entered one)" : "");
		goto out;
	}
	while (i < mb.n || j < mc.n) {
		int order = i >= mb.n ? 1 : j >= mc.n ? -1 : strcmp(mb.m[i].key, mc.m[j].key);
		struct cmp_row *row;
		const char *key = order <= 0 ? mb.m[i].key : mc.m[j].key;
		size_t len = strlen(prefix) + strlen(key) + 16;
		double var = 0;
		char *nn = realloc(name, len);

		if (!nn) {
			r->nomem = 1;
			goto out;
		}
		name = nn;
		snprintf(name, len, "%s[%s].%s", prefix, key, field_name(e->field));
		if (!(row = cmp_row_add(r, e, name)))
			goto out;
		row->noise = cmp_metric_noise(e);
		if (order <= 0) {
			row->has_base = 1;
			row->base = match_value(e, &mb.m[i]);
			var += mb.m[i].var;
		}
		if (order >= 0) {
			row->has_cur = 1;
			row->cur = match_value(e, &mc.m[j]);
			var += mc.m[j].var;
		}
		row->sigma = sqrt(var); /* the two runs' sampling errors are independent */
		if (order <= 0)
			i++;
		if (order >= 0)
			j++;
		cmp_row_judge(r, row);
	}
out:
	free(name);
	free_matches(&mb);
	free_matches(&mc);
}

