/*
 * trace_cpu.c — the trace's CPU lanes: each thread's samples joined into
 * nested slices of its stack's frames, and the plan that cuts every thread
 * at the same time when the slices would pass the size cap.
 */
#include "util.h"
#include "trace_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

/* Close open frames [from, *nopen) at time at, deepest first. */
static int trace_close(struct tctx *c, struct tvec *out, struct open_frame *st, size_t *nopen,
                       size_t from, int64_t at, const struct tev *proto)
{
	while (*nopen > from) {
		struct open_frame *o = &st[--*nopen];
		struct tev e = *proto;
		int64_t end = at;

		e.ts = o->start;
		if (end <= e.ts || !trace_clip(c, &e.ts, &end) || e.ts >= c->cpu_cut)
			continue;
		if (c->hist) {
			c->hist[(e.ts - c->hist_lo) / c->hist_width]++;
			continue;
		}
		if (out->n >= c->cpu_limit) {
			c->cpu_limited = 1;
			continue;
		}
		e.dur = end - e.ts;
		e.ref = o->func;
		e.inlined = (uint8_t)o->inlined;
		e.depth = (uint16_t)(*nopen > UINT16_MAX ? UINT16_MAX : *nopen);
		if (tvec_push(out, &e))
			return -ENOMEM;
	}
	return 0;
}

/* Function at depth d (root 0) of a stack of n frames, the first of them the
 * "[truncated]" marker when trunc. */
static uint32_t trace_func_at(const struct profile *p, const struct prof_stack *sk, size_t n,
                              size_t trunc, size_t d)
{
	if (trunc && d == 0)
		return TRACE_FUNC_TRUNCATED;
	return p->frames[sk->first + n - 1 - d].func;
}

static int trace_inlined_at(const struct profile *p, const struct prof_stack *sk, size_t n,
                            size_t trunc, size_t d)
{
	return !(trunc && d == 0) && p->frames[sk->first + n - 1 - d].inlined;
}

int trace_collect_cpu(struct tctx *c, struct tvec *out)
{
	const struct profile *p = c->p;
	uint32_t *idx = NULL;
	struct open_frame *st = NULL;
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
	st = util_reallocarray(NULL, maxdepth + 2, sizeof(*st));
	if (!st) {
		rc = -ENOMEM;
		goto out;
	}
	qsort_r(idx, p->nsamples, sizeof(*idx), cmp_sample_idx, (void *)p);

	while (i < p->nsamples) {
		uint32_t thr = p->samples[idx[i]].thread;
		struct tev proto;
		size_t nopen = 0;
		int64_t last_end = INT64_MIN;
		uint64_t period = 0;

		memset(&proto, 0, sizeof(proto));
		proto.type = TEV_SAMPLE;
		proto.kind = LANE_CPU;
		proto.thr = thr < p->nthreads ? thr : PROF_NONE;
		if (thr < p->nthreads) {
			uint32_t proc = p->threads[thr].process;

			trace_thread_id(c, thr, proc, &proto.pid, &proto.tid);
		}
		period = prof_period_of_thread(p, thr);
		/* No period known at all (every time figure is then 0): still
		 * give each sample a visible width on the timeline. */
		if (!period)
			period = 1000000;

		for (; i < p->nsamples && p->samples[idx[i]].thread == thr; i++) {
			const struct prof_sample *s = &p->samples[idx[i]];
			int64_t end = trace_rel(c, thr < p->nthreads ? p->threads[thr].process
								   : PROF_NONE, s->ts);
			int64_t start =
			    end - (int64_t)(s->weight ? s->weight : 1) * (int64_t)period;
			const struct prof_stack *sk =
			    s->stack < p->nstacks ? &p->stacks[s->stack] : NULL;
			/* a stack cut at max_depth lacks its root: it goes under
			 * a "[truncated]" frame instead of posing as a root */
			size_t trunc =
			    (s->flags & CBN_SAMPLE_TRUNCATED) && sk && sk->nframes ? 1 : 0;
			size_t n = (sk ? sk->nframes : 0) + trunc, k = 0;

			if (thr >= p->nthreads)
				break;
			if (last_end != INT64_MIN) {
				if (start <= last_end + (int64_t)period) {
					start = last_end;
				} else {
					rc = trace_close(c, out, st, &nopen, 0, last_end, &proto);
					if (rc)
						goto out;
				}
			}
			if (end <= start)
				continue;
			/* frames[first] is the leaf; depth d is frames[first + n - 1 - d] */
			while (k < n && k < nopen &&
			       trace_func_at(p, sk, n, trunc, k) == st[k].func &&
			       trace_inlined_at(p, sk, n, trunc, k) == st[k].inlined)
				k++;
			rc = trace_close(c, out, st, &nopen, k, start, &proto);
			if (rc)
				goto out;
			for (; k < n; k++) {
				st[nopen].func = trace_func_at(p, sk, n, trunc, k);
				st[nopen].inlined = trace_inlined_at(p, sk, n, trunc, k);
				st[nopen].start = start;
				nopen++;
			}
			last_end = end;
		}
		rc = trace_close(c, out, st, &nopen, 0, last_end, &proto);
		if (rc)
			goto out;
		/* samples of an unknown thread index cannot be placed */
		while (i < p->nsamples && p->samples[idx[i]].thread == thr)
			i++;
	}
out:
	free(st);
	free(idx);
	return rc;
}

#define TRACE_HIST_BUCKETS 4096

int trace_plan_cpu(struct tctx *c)
{
	const struct profile *p = c->p;
	uint64_t bound = 0, sum = 0;
	int64_t hi = c->ws + 1;
	struct tvec none = {0};
	int rc;

	c->cpu_cut = INT64_MAX;
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];
		int64_t t = trace_rel(c, s->thread < p->nthreads ? p->threads[s->thread].process
								 : PROF_NONE, s->ts);

		if (s->stack < p->nstacks)
			bound += p->stacks[s->stack].nframes + 1; /* + "[truncated]" */
		if (t > hi)
			hi = t;
	}
	if (bound <= c->cpu_limit)
		return 0;
	if (hi > c->we)
		hi = c->we;
	c->hist_lo = c->ws;
	c->hist_width = (hi - c->ws) / TRACE_HIST_BUCKETS + 1;
	c->hist = calloc(TRACE_HIST_BUCKETS + 1, sizeof(*c->hist));
	if (!c->hist)
		return -ENOMEM;
	rc = trace_collect_cpu(c, &none);
	for (size_t k = 0; !rc && k <= TRACE_HIST_BUCKETS; k++) {
		if (sum + c->hist[k] > c->cpu_limit && c->cpu_cut == INT64_MAX)
			c->cpu_cut = c->hist_lo + (int64_t)k * c->hist_width;
		sum += c->hist[k];
	}
	c->cpu_total = (size_t)sum;
	free(c->hist);
	c->hist = NULL;
	return rc;
}
