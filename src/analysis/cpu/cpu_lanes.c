/*
 * cpu_lanes.c — the CPU lanes of a run (cpu_lanes.h): each thread's samples
 * in time order, the frames they share kept open, the others closed into
 * slices handed to the caller.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_lanes.h"
#include "util.h"

static int cmp_sample_idx(const void *a, const void *b, void *arg)
{
	const struct profile *prof = arg;
	const struct prof_sample *x = &prof->samples[*(const uint32_t *)a];
	const struct prof_sample *y = &prof->samples[*(const uint32_t *)b];

	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

struct open_frame {
	uint32_t func;
	int inlined;
	int64_t start;
};

/* The walk over one thread at a time: its open frames, deepest last. */
struct lane_walk {
	const struct profile *p;
	int (*fn)(void *ctx, const struct cpu_slice *s);
	void *ctx;
	struct open_frame *st;
	size_t nopen;
	uint32_t thread;
};

/* ns of ts since the run's start, on the ranks' one clock. */
static int64_t lane_rel(const struct profile *p, uint32_t thread, uint64_t ts)
{
	uint32_t proc = thread < p->nthreads ? p->threads[thread].process : PROF_NONE;

	return (int64_t)(prof_rank_time(p, proc, ts) - p->start_ns);
}

/* Close open frames [from, nopen) at time at, deepest first. */
static int lane_close(struct lane_walk *w, size_t from, int64_t at)
{
	while (w->nopen > from) {
		const struct open_frame *o = &w->st[--w->nopen];
		struct cpu_slice s = {o->start, at, w->thread, o->func, (uint32_t)w->nopen,
				      (uint8_t)o->inlined};
		int rc;

		if (at <= o->start)
			continue;
		if ((rc = w->fn(w->ctx, &s)) != 0)
			return rc;
	}
	return 0;
}

/* Function at depth d (root 0) of a stack of n frames, the first of them the
 * "[truncated]" marker when trunc. */
static uint32_t lane_func_at(const struct profile *p, const struct prof_stack *sk, size_t n,
			     size_t trunc, size_t d)
{
	if (trunc && d == 0)
		return CPU_LANE_TRUNCATED;
	return p->frames[sk->first + n - 1 - d].func;
}

static int lane_inlined_at(const struct profile *p, const struct prof_stack *sk, size_t n,
			   size_t trunc, size_t d)
{
	return !(trunc && d == 0) && p->frames[sk->first + n - 1 - d].inlined;
}

/* Sample s of the walk's thread, from start: close the open frames it does
 * not share, open its others. */
static int lane_sample(struct lane_walk *w, const struct prof_sample *s, int64_t start)
{
	const struct profile *p = w->p;
	const struct prof_stack *sk = s->stack < p->nstacks ? &p->stacks[s->stack] : NULL;
	/* a stack cut at max_depth lacks its root: it goes under a
	 * "[truncated]" frame instead of posing as a root */
	size_t trunc = (s->flags & CBN_SAMPLE_TRUNCATED) && sk && sk->nframes ? 1 : 0;
	size_t n = (sk ? sk->nframes : 0) + trunc, k = 0;
	int rc;

	/* frames[first] is the leaf; depth d is frames[first + n - 1 - d] */
	while (k < n && k < w->nopen && lane_func_at(p, sk, n, trunc, k) == w->st[k].func &&
	       lane_inlined_at(p, sk, n, trunc, k) == w->st[k].inlined)
		k++;
	if ((rc = lane_close(w, k, start)) != 0)
		return rc;
	for (; k < n; k++) {
		w->st[w->nopen].func = lane_func_at(p, sk, n, trunc, k);
		w->st[w->nopen].inlined = lane_inlined_at(p, sk, n, trunc, k);
		w->st[w->nopen].start = start;
		w->nopen++;
	}
	return 0;
}

/* The samples idx[*i..] of one thread; *i moves past them. */
static int lane_thread(struct lane_walk *w, const uint32_t *idx, size_t *i)
{
	const struct profile *p = w->p;
	uint32_t thr = p->samples[idx[*i]].thread;
	uint64_t period = prof_period_of_thread(p, thr);
	int64_t last_end = INT64_MIN;
	int rc;

	w->thread = thr;
	w->nopen = 0;
	/* No period known at all (every time figure is then 0): still give
	 * each sample a visible width on the timeline. */
	if (!period)
		period = 1000000;
	for (; *i < p->nsamples && p->samples[idx[*i]].thread == thr; ++*i) {
		const struct prof_sample *s = &p->samples[idx[*i]];
		int64_t end, start;

		/* samples of an unknown thread index cannot be placed */
		if (thr >= p->nthreads)
			continue;
		end = lane_rel(p, thr, s->ts);
		start = end - (int64_t)(s->weight ? s->weight : 1) * (int64_t)period;
		if (last_end != INT64_MIN) {
			if (start <= last_end + (int64_t)period)
				start = last_end;
			else if ((rc = lane_close(w, 0, last_end)) != 0)
				return rc;
		}
		if (end <= start)
			continue;
		if ((rc = lane_sample(w, s, start)) != 0)
			return rc;
		last_end = end;
	}
	return lane_close(w, 0, last_end);
}

int cpu_lanes_walk(const struct profile *p, int (*fn)(void *ctx, const struct cpu_slice *s),
		   void *ctx)
{
	struct lane_walk w = {p, fn, ctx, NULL, 0, 0};
	uint32_t *idx = NULL;
	size_t maxdepth = 0, i = 0;
	int rc = 0;

	if (!p->nsamples)
		return 0;
	idx = util_reallocarray(NULL, p->nsamples, sizeof(*idx));
	if (!idx)
		return -ENOMEM;
	for (size_t k = 0; k < p->nsamples; k++) {
		idx[k] = (uint32_t)k;
		if (p->samples[k].stack < p->nstacks &&
		    p->stacks[p->samples[k].stack].nframes > maxdepth)
			maxdepth = p->stacks[p->samples[k].stack].nframes;
	}
	w.st = util_reallocarray(NULL, maxdepth + 2, sizeof(*w.st));
	if (!w.st) {
		rc = -ENOMEM;
		goto out;
	}
	qsort_r(idx, p->nsamples, sizeof(*idx), cmp_sample_idx, (void *)p);
	while (i < p->nsamples && !rc)
		rc = lane_thread(&w, idx, &i);
out:
	free(w.st);
	free(idx);
	return rc;
}

void cpu_lanes_extent(const struct profile *p, uint64_t *bound, int64_t *last)
{
	*bound = 0;
	*last = INT64_MIN;
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];
		int64_t t = lane_rel(p, s->thread, s->ts);

		if (s->stack < p->nstacks)
			*bound += p->stacks[s->stack].nframes + 1; /* + "[truncated]" */
		if (t > *last)
			*last = t;
	}
}
