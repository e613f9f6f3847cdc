/*
 * span.c — what stretch of the run the figures cover (span.h): the capture
 * windows of the processes that had controls, the whole life of the others.
 */
#include <stdlib.h>
#include <string.h>

#include "span.h"
#include "util.h"

static int controlled(const struct profile *p, uint32_t pi)
{
	return pi < p->nprocesses && p->processes[pi].capture.mode == CBN_CAPTURE_CONTROLLED;
}

/* The first window of process pi (p->windows is by process, then start). */
static size_t first_window(const struct profile *p, uint32_t pi)
{
	size_t lo = 0, hi = p->nwindows;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (p->windows[mid].process < pi)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

uint64_t span_in_process(const struct profile *p, uint32_t pi, uint64_t s, uint64_t e)
{
	uint64_t ns = 0;
	size_t i;

	if (e <= s)
		return 0;
	if (!controlled(p, pi))
		return e - s;
	for (i = first_window(p, pi); i < p->nwindows && p->windows[i].process == pi; i++) {
		const struct prof_window *w = &p->windows[i];
		uint64_t lo = w->start > s ? w->start : s, hi = w->end < e ? w->end : e;

		if (w->start >= e)
			break;
		if (hi > lo)
			ns += hi - lo;
	}
	return ns;
}

/* The recorded stretches of every process, merged and in order: *n
 * intervals, NULL when there are none (or no memory). */
static struct util_ival *recorded(const struct profile *p, size_t *n)
{
	struct util_ival *v = calloc(p->nwindows + p->nprocesses + 1, sizeof(*v));
	size_t i, k = 0;

	*n = 0;
	if (!v)
		return NULL;
	for (i = 0; i < p->nwindows; i++) {
		const struct prof_window *w = &p->windows[i];

		if (controlled(p, w->process) && w->end > w->start)
			v[k++] = (struct util_ival){w->start, w->end};
	}
	for (i = 0; i < p->nprocesses; i++) {
		const struct prof_process *pr = &p->processes[i];

		if (!controlled(p, (uint32_t)i) && pr->end > pr->start)
			v[k++] = (struct util_ival){pr->start, pr->end};
	}
	*n = util_ival_union(v, k, NULL);
	return v;
}

void span_of_run(const struct profile *p, struct run_span *out)
{
	struct util_ival *v;
	size_t i, n;

	memset(out, 0, sizeof(*out));
	out->ns = p->wall_ns;
	for (i = 0; i < p->nprocesses; i++)
		out->windowed |= controlled(p, (uint32_t)i);
	if (!out->windowed)
		return;
	for (i = 0; i < p->nwindows; i++)
		out->windows += controlled(p, p->windows[i].process);
	if (!(v = recorded(p, &n)))
		return; /* out of memory: the whole run, as without windows */
	out->ns = 0;
	for (i = 0; i < n; i++)
		out->ns += v[i].e - v[i].s;
	if (n) {
		out->start = v[0].s;
		out->end = v[n - 1].e;
	}
	free(v);
}

uint64_t span_between(const struct profile *p, uint64_t s, uint64_t e)
{
	struct run_span sp;
	struct util_ival *v;
	uint64_t ns = 0;
	size_t i, n;

	if (e <= s)
		return 0;
	span_of_run(p, &sp);
	if (!sp.windowed || !(v = recorded(p, &n)))
		return e - s;
	for (i = 0; i < n; i++) {
		uint64_t lo = v[i].s > s ? v[i].s : s, hi = v[i].e < e ? v[i].e : e;

		if (hi > lo)
			ns += hi - lo;
	}
	free(v);
	return ns;
}
