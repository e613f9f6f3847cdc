/*
 * cmp_steps.c — the gate on the steps view (steps.h): step.median,
 * step.p90 and step.count.
 */
#include <math.h>

#include "cmp_eval.h"

/* --- step metrics: step.median, step.p90, step.count ----------------------- */

int cmp_is_step_metric(const struct cmp_expr *e)
{
	return e->metric == CMP_M_STEP_MEDIAN || e->metric == CMP_M_STEP_P90 ||
	       e->metric == CMP_M_STEP_COUNT;
}

static const char *step_key(const struct cmp_expr *e)
{
	return e->metric == CMP_M_STEP_MEDIAN ? "steps.median_ns"
	       : e->metric == CMP_M_STEP_P90 ? "steps.p90_ns" : "steps.count";
}

static double step_value(const struct gate_run *run, const struct cmp_expr *e)
{
	return e->metric == CMP_M_STEP_MEDIAN ? run->step_median
	       : e->metric == CMP_M_STEP_P90 ? run->step_p90 : run->step_count;
}

/*
 * Steps exist only when the program marks them (cbn_step(), --step,
 * --step-func).  The median and p90 summarize many steps of one run but are
 * still one run's measurement: no sampling error is claimed for them (as
 * wall); the count is exact.
 */
void cmp_eval_steps(struct cmp_result *r, const struct cmp_side *b, const struct cmp_side *c,
		    const struct cmp_expr *e)
{
	struct cmp_section g = {
		b->run->has_steps, c->run->has_steps,
		b->run->has_steps ? step_value(b->run, e) : NAN,
		c->run->has_steps ? step_value(c->run, e) : NAN,
		step_key(e),
		"no steps in the baseline",
		"; mark the steps when recording it (cbn_step(), --step or --step-func)",
		"could not measure: no steps in the current run; mark them with cbn_step(), "
		"--step or --step-func",
		e->metric == CMP_M_STEP_COUNT ? CMP_N_EXACT : CMP_N_SINGLE,
	};

	cmp_eval_section(r, b, e, &g);
}

