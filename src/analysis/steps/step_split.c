/*
 * step_split.c — the step-time breakdown (step_split.h): one sweep over the
 * interval ends of a process's GPU operations, synchronizing and other CUDA
 * calls and on-CPU samples gives the line of what went on when; a step or
 * any stretch of time is then measured on the line.  Launcher side only.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "step_split.h"
#include "util.h"

int step_split_is_sync_api(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	return n >= 11 && !strcmp(name + n - 11, "Synchronize");
}

struct ev {
	uint64_t t;
	int32_t kind;                    /* enum step_split_kind */
	int32_t d;                       /* +1 starts, -1 ends */
};

struct evs {
	struct ev *v;
	size_t n, cap;
};

static int ev_add(struct evs *e, uint64_t s, uint64_t end, int kind)
{
	if (end <= s)
		return 0;
	if (e->n + 2 > e->cap) {
		size_t cap = e->cap ? 2 * e->cap : 1024;
		struct ev *v = util_reallocarray(e->v, cap, sizeof(*v));

		if (!v)
			return -ENOMEM;
		e->v = v;
		e->cap = cap;
	}
	e->v[e->n++] = (struct ev){s, kind, 1};
	e->v[e->n++] = (struct ev){end, kind, -1};
	return 0;
}

static int ev_cmp(const void *a, const void *b)
{
	const struct ev *x = a, *y = b;

	return x->t < y->t ? -1 : x->t > y->t;
}

static int mine(uint32_t proc, uint32_t of)
{
	return proc == PROF_NONE || proc == of;
}

/* On-CPU samples as intervals, each thread's touching ones joined first: a
 * busy thread gives a few long intervals, not one per sample. */
static int add_samples(const struct profile *p, uint32_t proc, struct evs *e)
{
	uint64_t *s = calloc(p->nthreads + 1, sizeof(*s)), *en = calloc(p->nthreads + 1, sizeof(*en));
	int ret = -ENOMEM;
	size_t i;

	if (!s || !en)
		goto out;
	for (i = 0; i < p->nsamples; i++) {
		const struct prof_sample *sm = &p->samples[i];
		uint32_t t = sm->thread;
		uint64_t len, from;

		if (t >= p->nthreads || !mine(proc, p->threads[t].process))
			continue;
		len = (uint64_t)(sm->weight ? sm->weight : 1) * prof_period_of_thread(p, t);
		from = sm->ts > len ? sm->ts - len : 0;
		if (en[t] && from <= en[t] && sm->ts >= s[t]) {
			if (sm->ts > en[t])
				en[t] = sm->ts;
			continue;
		}
		if (en[t] && ev_add(e, s[t], en[t], STEP_SPLIT_HOST) < 0)
			goto out;
		s[t] = from;
		en[t] = sm->ts;
	}
	for (i = 0; i < p->nthreads; i++)
		if (en[i] && ev_add(e, s[i], en[i], STEP_SPLIT_HOST) < 0)
			goto out;
	ret = 0;
out:
	free(s);
	free(en);
	return ret;
}

int step_split_build(const struct profile *p, uint32_t proc, struct step_split_line *l)
{
	struct evs e = {0};
	int cnt[STEP_SPLIT_IDLE] = {0}, last = STEP_SPLIT_IDLE;
	size_t i, cap = 0;

	memset(l, 0, sizeof(*l));
	for (i = 0; i < p->ngpu_ops; i++) {
		const struct prof_gpu_op *g = &p->gpu_ops[i];

		if (mine(proc, g->process) &&
		    ev_add(&e, g->start, g->end, g->kind == PROF_GPU_KERNEL ? STEP_SPLIT_KERNEL
									  : STEP_SPLIT_COPY) < 0)
			goto oom;
	}
	for (i = 0; i < p->nsyncs; i++)
		if (mine(proc, p->syncs[i].process) &&
		    ev_add(&e, p->syncs[i].start, p->syncs[i].end, STEP_SPLIT_SYNC) < 0)
			goto oom;
	for (i = 0; i < p->ncuda_api; i++) {
		const struct prof_cuda_api *c = &p->cuda_api[i];

		if (mine(proc, c->process) &&
		    ev_add(&e, c->start, c->end, step_split_is_sync_api(c->name) ? STEP_SPLIT_SYNC
										  : STEP_SPLIT_HOST) < 0)
			goto oom;
	}
	if (add_samples(p, proc, &e) < 0)
		goto oom;
	if (e.n > 1)
		qsort(e.v, e.n, sizeof(*e.v), ev_cmp);
	for (i = 0; i < e.n;) {
		uint64_t t = e.v[i].t;
		int k;

		for (; i < e.n && e.v[i].t == t; i++)
			cnt[e.v[i].kind] += e.v[i].d;
		for (k = 0; k < STEP_SPLIT_IDLE && cnt[k] <= 0; k++)
			;
		if (k == last)
			continue;
		if (l->n + 1 > cap) {
			size_t nc = cap ? 2 * cap : 256;
			uint64_t *nt = util_reallocarray(l->t, nc, sizeof(*nt));
			uint8_t *nk;

			if (!nt)
				goto oom;
			l->t = nt;
			if (!(nk = util_reallocarray(l->kind, nc, sizeof(*nk))))
				goto oom;
			l->kind = nk;
			cap = nc;
		}
		l->t[l->n] = t;
		l->kind[l->n++] = (uint8_t)k;
		last = k;
	}
	free(e.v);
	return 0;
oom:
	free(e.v);
	step_split_free(l);
	return -ENOMEM;
}

void step_split_measure(const struct step_split_line *l, uint64_t start, uint64_t end,
			uint64_t out[STEP_SPLIT_N])
{
	size_t lo = 0, hi = l->n;
	uint64_t at = start;
	int kind;

	memset(out, 0, STEP_SPLIT_N * sizeof(*out));
	if (end <= start)
		return;
	/* the last change at or before start */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (l->t[mid] <= start)
			lo = mid + 1;
		else
			hi = mid;
	}
	kind = lo ? l->kind[lo - 1] : STEP_SPLIT_IDLE;
	for (; lo < l->n && l->t[lo] < end; lo++) {
		out[kind] += l->t[lo] - at;
		at = l->t[lo];
		kind = l->kind[lo];
	}
	out[kind] += end - at;
}

void step_split_free(struct step_split_line *l)
{
	free(l->t);
	free(l->kind);
	memset(l, 0, sizeof(*l));
}
