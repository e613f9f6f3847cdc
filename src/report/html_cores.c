/*
 * html_cores.c — the page's charts over the whole run (html.h): "cores",
 * the CPU the run kept busy by program (programs.h tl_*), for the
 * overview's chart in CPUs (a build on 2 CPUs reads up to 2, not one bin
 * of wall time), and "breakdown", the run's time split as a step's
 * (step_split.h), for a GPU run without steps; and the span the page's
 * timeline and charts cover (html_span), which html_data.c reads too.
 */
#include <cjson/cJSON.h>

#include "analysis.h"
#include "html.h"
#include "programs.h"
#include "stackw.h"
#include "step_split.h"

/* The span the page's timeline and breakdown cover: the earliest process
 * start to the last process end, sample or GPU operation. */
void html_span(const struct analysis *a, uint64_t *t0p, uint64_t *t1p)
{
	const struct profile *p = a->profile;
	uint64_t t0 = p->start_ns, t1 = t0;
	size_t i;

	for (i = 0; i < p->nprocesses; i++) {
		if (p->processes[i].start && (!t0 || p->processes[i].start < t0))
			t0 = p->processes[i].start;
		if (p->processes[i].end > t1)
			t1 = p->processes[i].end;
	}
	if (a->stackw && a->stackw->last_ts > t1)
		t1 = a->stackw->last_ts;
	for (i = 0; i < p->ngpu_ops; i++)
		if (p->gpu_ops[i].end > t1 && p->gpu_ops[i].end - t1 < (uint64_t)1e12)
			t1 = p->gpu_ops[i].end;
	*t0p = t0;
	*t1p = t1;
}

/* {"start_ns": since the run's start, "bin_ns", "cpus", "series": [names],
 *  "bins": [series values of bin 0, then bin 1, ...]}; cJSON null without a
 * timeline, NULL on OOM. */
cJSON *html_cores_json(const struct analysis *a)
{
	const struct prog_analysis *g = a->programs;
	const struct profile *p = a->profile;
	cJSON *o, *series, *bins;
	size_t i, k, n;

	if (!g || !g->tl_nbins || !g->tl_cpu)
		return cJSON_CreateNull();
	if (!(o = cJSON_CreateObject()))
		return NULL;
	n = g->n < PROG_TL_SERIES - 1 ? g->n : PROG_TL_SERIES - 1;
	cJSON_AddNumberToObject(o, "start_ns", (double)(g->tl_t0 > p->start_ns && p->start_ns
							 ? g->tl_t0 - p->start_ns : 0));
	cJSON_AddNumberToObject(o, "bin_ns", (double)g->tl_bin_ns);
	cJSON_AddNumberToObject(o, "cpus", p->env.found && p->env.cpus > 0 ? p->env.cpus : 0);
	series = cJSON_AddArrayToObject(o, "series");
	for (i = 0; series && i < n; i++)
		cJSON_AddItemToArray(series, cJSON_CreateString(g->v[i].name));
	if (series && g->n > n)
		cJSON_AddItemToArray(series, cJSON_CreateString("other programs"));
	bins = cJSON_AddArrayToObject(o, "bins");
	for (i = 0; bins && i < g->tl_nbins; i++)
		for (k = 0; k < n + (g->n > n); k++)
			cJSON_AddItemToArray(bins, cJSON_CreateNumber(
				(double)g->tl_cpu[i * PROG_TL_SERIES + (k < n ? k : PROG_TL_SERIES - 1)]));
	if (!series || !bins) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

#define HTML_SPLIT_BINS 60       /* bins of the breakdown of a run without steps */

/* "breakdown": {"bin_ns", "bins": [kernel, copy, sync wait, host, idle, ...]}:
 * the run's time in HTML_SPLIT_BINS bins at most (of a round width: 1, 2 or
 * 5 times a power of ten ns), each split by what went on (step_split.h), for
 * the overview of a run without steps.  NULL on OOM. */
cJSON *html_breakdown_json(const struct analysis *a)
{
	const struct profile *p = a->profile;
	struct step_split_line l;
	uint64_t t0, t1, bin, part[STEP_SPLIT_N];
	cJSON *o = cJSON_CreateObject(), *bins;

	if (!o || step_split_build(p, PROF_NONE, &l) < 0) {
		cJSON_Delete(o);
		return NULL;
	}
	html_span(a, &t0, &t1);
	for (uint64_t dec = 1;; dec *= 10) {
		if ((bin = dec) * HTML_SPLIT_BINS >= t1 - t0 ||
		    (bin = 2 * dec) * HTML_SPLIT_BINS >= t1 - t0 ||
		    (bin = 5 * dec) * HTML_SPLIT_BINS >= t1 - t0)
			break;
	}
	cJSON_AddNumberToObject(o, "bin_ns", (double)bin);
	bins = cJSON_AddArrayToObject(o, "bins");
	/* the last bin ends with the run */
	for (uint64_t t = t0; bins && t < t1; t += bin) {
		step_split_measure(&l, t, t1 - t < bin ? t1 : t + bin, part);
		for (int k = 0; k < STEP_SPLIT_N; k++)
			cJSON_AddItemToArray(bins, cJSON_CreateNumber((double)part[k]));
	}
	step_split_free(&l);
	if (!bins) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}
