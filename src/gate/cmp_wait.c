/*
 * cmp_wait.c — the gate on the waiting view (wait.h): wait.total,
 * cpu.efficiency and lock[SITE].wait.
 */
#include <fnmatch.h>
#include <stdio.h>

#include "cmp_eval.h"

/* --- waiting metrics: wait.total, cpu.efficiency, lock[SITE].wait ---------- */

int cmp_is_wait_metric(const struct cmp_expr *e)
{
	return e->metric == CMP_M_WAIT_TOTAL || e->metric == CMP_M_CPU_EFFICIENCY ||
	       e->metric == CMP_M_LOCK;
}

/* The value of a waiting metric on one side: ok 0 with why set when the
 * side cannot give it.  wait.total and lock[] need --off-cpu: without it the
 * report has no off-CPU time to compare (0 would read as an improvement). */
static struct cmp_val wait_value(const struct cmp_side *s, const struct cmp_expr *e, char *why,
				 size_t len)
{
	const struct gate_run *r = s->run;
	struct cmp_val x = {0, 0, 0};
	int matched = 0;
	size_t i;

	if (!r->has_waiting) {
		snprintf(why, len, "no waiting object in the %s %s (a report older than schema 4, "
			 "or a run without CPU samples)", s->role, s->path);
		return x;
	}
	if (e->metric == CMP_M_CPU_EFFICIENCY) {
		x.ok = gate_has(r->wait_efficiency);
		x.v = r->wait_efficiency;
		if (!x.ok)
			snprintf(why, len, "the %s report has no waiting.efficiency", s->role);
		return x;
	}
	if (!r->wait_offcpu) {
		snprintf(why, len, "the %s run was recorded without --off-cpu", s->role);
		return x;
	}
	if (e->metric == CMP_M_WAIT_TOTAL) {
		x.ok = gate_has(r->wait_off_ns);
		x.v = r->wait_off_ns;
		if (!x.ok)
			snprintf(why, len, "the %s report has no waiting.off_ns", s->role);
		return x;
	}
	for (i = 0; i < r->nlocks; i++) {
		if (fnmatch(e->pattern, r->locks[i].function, 0) != 0)
			continue;
		matched = 1;
		x.v += r->locks[i].wait_ns;
	}
	/* a lock nobody waited for in the current run is 0 */
	x.ok = 1;
	if (!matched && s->role[0] == 'b') {
		x.ok = 0;
		snprintf(why, len, "no contended lock in the %s %s is taken in a function matching "
			 "'%s'", s->role, s->path, e->pattern);
	}
	return x;
}

/*
 * The waiting view is in every report of schema 4 with CPU samples; its
 * off-CPU figures only with --off-cpu.  A baseline that cannot give the
 * figure is a configuration error, a current run that cannot is n/a.  Each
 * figure is one run's measurement: no sampling error is claimed (as wall).
 */
void cmp_eval_wait(struct cmp_result *r, const struct cmp_side *b, const struct cmp_side *c,
		   const struct cmp_expr *e)
{
	char why_b[CMP_PATTERN_MAX + 200] = "", why_c[CMP_PATTERN_MAX + 200] = "";
	struct cmp_val vb = wait_value(b, e, why_b, sizeof(why_b)), vc;
	struct cmp_row *row;

	if (!vb.ok) {
		cmp_config_error(r, "'%s': %s%s", e->text, why_b,
				 e->metric != CMP_M_CPU_EFFICIENCY && b->run->has_waiting
				 ? "; record the baseline with --off-cpu" : "");
		return;
	}
	row = cmp_row_add(r, e, e->text);
	if (!row)
		return;
	cmp_metric_name(e, row->name);
	row->noise = CMP_N_SINGLE;
	row->has_base = 1;
	row->base = vb.v;
	vc = wait_value(c, e, why_c, sizeof(why_c));
	if (!vc.ok) {
		row->status = CMP_S_NA;
		snprintf(row->note, sizeof(row->note), "could not measure: %.230s", why_c);
	} else {
		row->has_cur = 1;
		row->cur = vc.v;
	}
	cmp_row_judge(r, row);
}

/* A row that could not be measured in the current run, saying why. */
