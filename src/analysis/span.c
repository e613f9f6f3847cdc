/*
 * span.c — what stretch of the run the figures cover (span.h): the capture
 * windows of the processes that had controls, the whole life of the others.
 */
#include <stdlib.h>
#include <string.h>

#include "span.h"

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

struct ival {
	uint64_t s, e;
};

static int ival_cmp(const void *a, const void *b)
{
	const struct ival *x = a, *y = b;

	return x->s < y->s ? -1 : x->s > y->s;
}

void span_of_run(const struct profile *p, struct run_span *out)
{
	struct ival *v;
	size_t i, n = 0;
	uint64_t cs = 0, ce = 0;

	memset(out, 0, sizeof(*out));
	out->ns = p->wall_ns;
	for (i = 0; i < p->nprocesses; i++)
		out->windowed |= controlled(p, (uint32_t)i);
	if (!out->windowed)
		return;
	/* the union of every process's recorded stretches */
	v = calloc(p->nwindows + p->nprocesses + 1, sizeof(*v));
	if (!v)
		return; /* out of memory: the whole run, as without windows */
	for (i = 0; i < p->nwindows; i++) {
		const struct prof_window *w = &p->windows[i];

		if (!controlled(p, w->process))
			continue;
		out->windows++;
		if (w->end > w->start)
			v[n++] = (struct ival){w->start, w->end};
	}
	for (i = 0; i < p->nprocesses; i++) {
		const struct prof_process *pr = &p->processes[i];

		if (!controlled(p, (uint32_t)i) && pr->end > pr->start)
			v[n++] = (struct ival){pr->start, pr->end};
	}
	if (n)
		qsort(v, n, sizeof(*v), ival_cmp);
	out->ns = 0;
	for (i = 0; i < n; i++) {
		if (!out->start || v[i].s < out->start)
			out->start = v[i].s;
		if (v[i].e > out->end)
			out->end = v[i].e;
		if (i == 0 || v[i].s > ce) {
			out->ns += ce - cs;
			cs = v[i].s;
			ce = v[i].e;
		} else if (v[i].e > ce) {
			ce = v[i].e;
		}
	}
	out->ns += ce - cs;
	free(v);
}
