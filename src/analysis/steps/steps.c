/*
 * steps.c — the steps view (steps.h): finds the run's steps (markers, ranges
 * or a function on the samples, steps_find.c), kept inside the capture
 * windows, gives each its CPU, GPU, sync and memory figures
 * (steps_figures.c); then the distribution of durations, the slowest steps
 * with what grew in them, and the cold-start rule (steps_slow.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "step_split.h"
#include "steps_int.h"

/* --- entry ------------------------------------------------------------------------ */

/* Each step's wall time by what went on (step_split.h): one line per process,
 * the steps being sorted by process. */
static int steps_split(const struct profile *p, struct step_analysis *a)
{
	struct step_split_line l = {0};
	uint32_t proc = PROF_NONE;
	size_t k;

	if (!(a->split = calloc(a->nsteps, sizeof(*a->split))))
		return -ENOMEM;
	for (k = 0; k < a->nsteps; k++) {
		const struct step *s = &a->steps[k];

		if (s->process != proc || !k) {
			step_split_free(&l);
			proc = s->process;
			if (step_split_build(p, proc, &l) < 0)
				return -ENOMEM;
		}
		step_split_measure(&l, s->start, s->end, a->split[k]);
	}
	step_split_free(&l);
	return 0;
}

static int step_cmp(const void *a, const void *b)
{
	const struct step *x = a, *y = b;

	if (x->process != y->process)
		return x->process < y->process ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* "; no stretch off the CPU ends a call: ..." and why (gap_rule), or "". */
static void unused_of(const struct profile *p, const struct step_edges *e, char *buf, size_t len)
{
	*buf = '\0';
	if (e->gaps_unused == STEP_GAPS_RUNQ)
		snprintf(buf, len, "; no stretch off the CPU ends a call: %.0f %% of the thread's "
			 "time off the CPU was spent waiting for a CPU (schedstat), which a return "
			 "cannot be told from", 100 * e->runq_share);
	else if (e->gaps_unused == STEP_GAPS_LOAD)
		snprintf(buf, len, "; no stretch off the CPU ends a call: the machine was loaded "
			 "(load %.2f on %d CPUs at start), and a wait for a CPU cannot be told from "
			 "a return (record with --step-func: it takes the off-CPU looks that tell)",
			 p->env.load[0], p->env.cpus);
	else if (e->gaps_unused == STEP_GAPS_SHORT)
		snprintf(buf, len, "; no stretch off the CPU ends a call: the thread stopped for "
			 "1-%.0f ms after %u of its %u samples, waiting for a CPU on a loaded "
			 "machine, which a return cannot be told from%s",
			 (double)STEP_FUNC_GAP_NS / 1e6, e->short_stops, e->pairs + 1,
			 e->looked ? "" : " (record with --step-func: it takes the off-CPU looks "
					  "that tell)");
}

/* --step-func: how exact each edge is, from how the ends were found: the
 * claims that hold for this run only (steps_from_func, call_ended). */
static char *precision_of(const struct profile *p, const struct step_edges *e)
{
	uint64_t period = prof_period_of_thread(p, e->thread);
	char ends[512] = "", unused[320] = "", behind[192] = "";
	size_t n = 0;
	char *s = NULL;

	if (e->by_sample)
		n += (size_t)snprintf(ends + n, sizeof(ends) - n, "%s%u by a sample outside the "
				      "function", n ? ", " : "", e->by_sample);
	if (e->by_look && n < sizeof(ends))
		n += (size_t)snprintf(ends + n, sizeof(ends) - n, "%s%u by the off-CPU sampler "
				      "finding the thread blocked outside it", n ? ", " : "",
				      e->by_look);
	if (e->by_gap && n < sizeof(ends))
		n += (size_t)snprintf(ends + n, sizeof(ends) - n, "%s%u by a stretch of over %.0f ms "
				      "off the CPU (a call that blocks inside for longer counts as "
				      "two)", n ? ", " : "", e->by_gap, (double)STEP_FUNC_GAP_NS / 1e6);
	if (e->behind)
		snprintf(behind, sizeof(behind), "; the off-CPU sampler fell behind, its looks %.1f "
			 "ms late on average (a loaded machine): where none said, %s",
			 (double)e->late_ns / 1e6, e->gaps_unused ? "nothing did"
			 : "a stretch of over 10 ms off the CPU ended a call");
	if (e->gaps_unused)
		unused_of(p, e, unused, sizeof(unused));
	if (asprintf(&s, "each edge is known to one sampling period (%.3f ms) of the thread's "
			 "CPU: a step starts up to one period before its first sample and ends up "
			 "to one period after its last%s%s%s; two calls with %s between them "
			 "count as one%s%s",
		     (double)period / 1e6, n ? " (ends seen: " : "", ends, n ? ")" : "",
		     e->gaps_unused ? (e->looked ? "nothing sampled and no look of the off-CPU "
						   "sampler" : "nothing sampled")
		     : e->looked && !e->behind ? "less than one period of CPU and no look of "
						 "the off-CPU sampler"
		     : "less than one period of CPU and under 10 ms off the CPU",
		     behind, unused) < 0)
		return NULL;
	return s;
}

/* What a step holds, and so what the time between steps is. */
static char *counts_of(const struct profile *p, int source, const char *func,
		       const struct step_edges *e)
{
	const struct prof_thread *t = e->thread < p->nthreads ? &p->threads[e->thread] : NULL;
	char *s = NULL;
	int n;

	if (source == STEP_SRC_FUNC)
		n = asprintf(&s, "one call of %s on thread %u%s%s%s, from its first sample to its "
			     "end", func, t ? t->tid : 0, t && *t->name ? " (" : "",
			     t && *t->name ? t->name : "", t && *t->name ? ")" : "");
	else if (source == STEP_SRC_RANGE)
		n = asprintf(&s, "one range, from its start to its end");
	else
		n = asprintf(&s, "from one marker to the next: the whole iteration");
	return n < 0 ? NULL : s;
}

/* The time between consecutive steps of a process that is in none. */
static uint64_t between_of(const struct step_analysis *a)
{
	uint64_t ns = 0;
	size_t k;

	for (k = 1; k < a->nsteps; k++)
		if (a->steps[k].process == a->steps[k - 1].process &&
		    a->steps[k].start > a->steps[k - 1].end)
			ns += a->steps[k].start - a->steps[k - 1].end;
	return ns;
}

int steps_func_note(const struct profile *p, const char *step_func, char **note)
{
	struct step_edges e;
	struct step_list l = {0};
	char why[512];
	int ret;

	*note = NULL;
	if (!step_func || !*step_func)
		return 0;
	if ((ret = steps_from_func(p, step_func, &l, &e)) < 0)
		return ret;
	free(l.v);
	if (l.n >= 2)
		return 0;
	unused_of(p, &e, why, sizeof(why));
	if (e.thread == UINT32_MAX)
		ret = asprintf(note, "--step-func %s: no sample was in a function of that name, "
			       "so there are no steps of it", step_func);
	else
		ret = asprintf(note, "--step-func %s: its samples on thread %u make %s, so no "
			       "steps%s", step_func, p->threads[e.thread].tid,
			       l.n ? "one call" : "no call in a capture window", why);
	if (ret < 0) {
		*note = NULL;
		return -ENOMEM;
	}
	return 0;
}

int steps_analyze(const struct profile *p, const char *step_regex, const char *step_func,
		  struct step_analysis **out)
{
	struct step_analysis *a = NULL;
	struct sample_index x = {0};
	struct step_list l = {0};
	struct step_ix ix = {0};
	struct cbn_rx re;
	int have_re = 0, ret, source = 0, pass;
	struct step_edges edges = { .thread = UINT32_MAX };
	char *what = NULL;
	size_t i;

	*out = NULL;
	if (step_regex && *step_regex && cbn_rx_compile(&re, step_regex, NULL, 0) == 0)
		have_re = 1;
	if ((ret = steps_sidx_build(p, &x)) < 0)
		goto out;
	/*
	 * What the user named first (marks, then ranges, then the function),
	 * then cbn_step(): the first that gives two steps.  steps.h lists
	 * cbn_step() first, but a program annotated with both would then never
	 * show the steps asked for by --step or --step-func.
	 */
	for (pass = 0; pass < 4 && l.n < 2; pass++) {
		static const int sources[] = {STEP_SRC_MARKER, STEP_SRC_RANGE, STEP_SRC_FUNC,
					      STEP_SRC_MARKER};
		int n;

		l.n = 0;
		if ((pass < 2 && !have_re) || (pass == 2 && !(step_func && *step_func)))
			continue;
		if (pass == 0)
			ret = steps_from_markers(p, &re, &x, &l);
		else if (pass == 1)
			ret = steps_from_ranges(p, &re, &l);
		else if (pass == 2)
			ret = steps_from_func(p, step_func, &l, &edges);
		else
			ret = steps_from_markers(p, NULL, &x, &l);
		if (ret < 0)
			goto out;
		if (l.n < 2)
			continue;
		source = sources[pass];
		if (pass == 0)
			n = asprintf(&what, "marks matching '%s'", step_regex);
		else if (pass == 1)
			n = asprintf(&what, "ranges matching '%s'", step_regex);
		else if (pass == 2)
			n = asprintf(&what, "function %s", step_func);
		else if (have_re || (step_func && *step_func))
			/* say that what was asked for gave nothing */
			n = asprintf(&what, "cbn_step() (%s%s%s%s%s gave fewer than two steps)",
				     have_re ? "--step " : "", have_re ? step_regex : "",
				     have_re && step_func && *step_func ? ", " : "",
				     step_func && *step_func ? "--step-func " : "",
				     step_func && *step_func ? step_func : "");
		else
			n = asprintf(&what, "cbn_step()");
		if (n < 0) {
			what = NULL;
			ret = -ENOMEM;
			goto out;
		}
	}
	if (l.n < 2)
		goto out;
	ret = -ENOMEM;
	if (!(a = calloc(1, sizeof(*a))))
		goto out;
	qsort(l.v, l.n, sizeof(*l.v), step_cmp);
	a->source = source;
	a->what = what;
	what = NULL;
	a->steps = l.v;
	a->nsteps = l.n;
	l.v = NULL;
	if (source == STEP_SRC_FUNC && !(a->precision = precision_of(p, &edges)))
		goto out;
	if (!(a->counts = counts_of(p, source, step_func, &edges)))
		goto out;
	a->between_ns = between_of(a);
	for (i = 0; i < p->nprocesses; i++)
		a->controlled |= p->processes[i].capture.mode == CBN_CAPTURE_CONTROLLED;
	if (a->controlled)
		for (i = 0; i < p->nwindows; i++)
			a->window_ns += p->windows[i].end - p->windows[i].start;
	if ((ret = steps_ix_build(p, &ix)) < 0)
		goto out;
	if ((ret = steps_figures(p, &x, &ix, a->steps, a->nsteps)) < 0 ||
	    (ret = steps_split(p, a)) < 0 ||
	    (ret = steps_distribution(a)) < 0 || (ret = steps_slow(p, &x, &ix, a)) < 0 ||
	    (ret = steps_cold_start(a)) < 0)
		goto out;
	*out = a;
	a = NULL;
	ret = 0;
out:
	free(x.idx);
	free(l.v);
	free(what);
	steps_ix_free(&ix);
	steps_free(a);
	return ret;
}

void steps_free(struct step_analysis *s)
{
	if (!s)
		return;
	free((char *)s->what);
	free((char *)s->precision);
	free((char *)s->counts);
	free(s->steps);
	free(s->split);
	free(s->slow);
	rules_findings_free(s->findings, s->nfindings);
	free(s);
}
