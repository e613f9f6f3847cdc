/*
 * cmp_mem.c — the gate on the memory view (memory.h): mem.peak,
 * mem.leaked, mem.gpu[N].peak and mem.site[PATTERN].
 */
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cmp_eval.h"

/* --- memory metrics: mem.peak, mem.leaked, mem.gpu[N].peak, mem.site[] ---- */

int cmp_is_mem_metric(const struct cmp_expr *e)
{
	return e->metric == CMP_M_MEM_PEAK || e->metric == CMP_M_MEM_LEAKED ||
	       e->metric == CMP_M_MEM_GPU || e->metric == CMP_M_MEM_SITE;
}

/* A host estimate from allocations sampled every rate bytes on average: its
 * variance is about value * rate (a Poisson count of sampled bytes); exact
 * when every allocation was recorded. */
static double mem_var(double v, double rate)
{
	return rate > 1 && v > 0 ? v * rate : 0;
}

static int site_matches(const struct cmp_expr *e, const struct gate_mem_site *s)
{
	if (e->line) {
		char file[CMP_PATTERN_MAX];
		char *colon;

		snprintf(file, sizeof(file), "%s", e->pattern);
		colon = strrchr(file, ':');
		if (colon)
			*colon = '\0';
		if (s->line == (double)e->line && cmp_file_matches(file, s->file))
			return 1;
	}
	return fnmatch(e->pattern, s->function, 0) == 0;
}

/* The value of a memory metric on one side: ok 0 with why set when the
 * side cannot give it. */
static struct cmp_val mem_value(const struct cmp_side *s, const struct cmp_expr *e, char *why,
				size_t len)
{
	const struct gate_run *r = s->run;
	struct cmp_val x = {0, 0, 0};
	size_t i;

	switch (e->metric) {
	case CMP_M_MEM_PEAK:
		if (!gate_has(r->mem_peak)) {
			snprintf(why, len, "no host memory data in the %s run", s->role);
			break;
		}
		x.ok = 1;
		x.v = r->mem_peak;
		x.var = r->mem_peak_exact ? 0 : mem_var(x.v, r->mem_rate);
		break;
	case CMP_M_MEM_LEAKED:
		if (!gate_has(r->mem_leaked)) {
			snprintf(why, len, "no host memory data in the %s run", s->role);
			break;
		}
		x.ok = 1;
		x.v = r->mem_leaked;
		x.var = mem_var(x.v, r->mem_rate);
		break;
	case CMP_M_MEM_GPU:
		for (i = 0; i < r->nmem_gpus; i++) {
			if (r->mem_gpus[i].device == (double)e->device) {
				x.ok = 1;
				x.v = r->mem_gpus[i].peak;
				break;
			}
		}
		if (!x.ok)
			snprintf(why, len, "no memory data for GPU %lu in the %s run", e->device,
				 s->role);
		break;
	case CMP_M_MEM_SITE: {
		int matched = 0;

		for (i = 0; i < r->nmem_sites; i++) {
			const struct gate_mem_site *m = &r->mem_sites[i];
			double v = e->field == CMP_F_ALLOCS ? m->allocs : m->bytes;

			if (!site_matches(e, m) || !gate_has(v))
				continue;
			matched = 1;
			x.v += v;
			if (!m->gpu && e->field == CMP_F_ALLOCS)
				x.var += m->bytes > 0 ? mem_var(v * v / m->bytes, r->mem_rate) : 0;
			else if (!m->gpu)
				x.var += mem_var(v, r->mem_rate);
		}
		/* a site that allocated nothing the agent saw is 0 */
		x.ok = 1;
		if (!matched && s->role[0] == 'b') {
			x.ok = 0;
			snprintf(why, len, "no allocation site in the %s %s matches '%s'", s->role,
				 s->path, e->pattern);
		}
		break;
	}
	default:
		break;
	}
	return x;
}

void cmp_eval_mem(struct cmp_result *r, const struct cmp_side *b, const struct cmp_side *c,
		  const struct cmp_expr *e)
{
	struct cmp_val vb, vc;
	struct cmp_row *row;
	char why_b[CMP_PATTERN_MAX + 200] = "", why_c[CMP_PATTERN_MAX + 200] = "";

	/* Memory data is recorded only with --memory: a baseline without it
	 * cannot be gated on (config error), a current run without it cannot be
	 * measured (n/a). */
	if (!b->run->has_memory) {
		cmp_config_error(r, "'%s': no memory data in the baseline %s; record the baseline "
				 "with --memory", e->text, b->path);
		return;
	}
	vb = mem_value(b, e, why_b, sizeof(why_b));
	if (!vb.ok) {
		cmp_config_error(r, "'%s': %s", e->text, why_b);
		return;
	}
	row = cmp_row_add(r, e, e->text);
	if (!row)
		return;
	cmp_metric_name(e, row->name);
	row->has_base = 1;
	row->base = vb.v;
	if (!c->run->has_memory) {
		row->status = CMP_S_NA;
		snprintf(row->note, sizeof(row->note), "no memory data in the current run; "
			 "profile it with --memory");
	} else {
		vc = mem_value(c, e, why_c, sizeof(why_c));
		row->has_cur = vc.ok;
		row->cur = vc.v;
		row->sigma = sqrt(vb.var + vc.var);
		if (!vc.ok) {
			row->status = CMP_S_NA;
			snprintf(row->note, sizeof(row->note), "%.250s", why_c);
		}
	}
	row->noise = row->sigma > 0 ? CMP_N_SAMPLED : CMP_N_EXACT;
	cmp_row_judge(r, row);
}

