/*
 * steps_figures.c — each step's figures (steps.h): CPU from the samples,
 * GPU busy time, sync time and memory from intervals indexed by (process,
 * start), so a step finds its own with a binary search.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "step_split.h"
#include "steps_int.h"
#include "util.h"

/* --- per-step figures ------------------------------------------------------------ */

static uint64_t clip(uint64_t s, uint64_t e, uint64_t lo, uint64_t hi)
{
	if (s < lo)
		s = lo;
	if (e > hi)
		e = hi;
	return e > s ? e - s : 0;
}

static int tindex_add(struct tindex *t, uint32_t process, size_t i, uint64_t s, uint64_t e)
{
	if (util_grow((void **)&t->v, &t->cap, t->n, sizeof(*t->v)) < 0)
		return -ENOMEM;
	if (e < s)
		e = s;
	t->v[t->n++] = (struct tent){process, (uint32_t)i, s, e};
	if (e - s > t->maxlen)
		t->maxlen = e - s;
	return 0;
}

static int tent_cmp(const void *a, const void *b)
{
	const struct tent *x = a, *y = b;

	if (x->process != y->process)
		return x->process < y->process ? -1 : 1;
	if (x->s != y->s)
		return x->s < y->s ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

static void tindex_sort(struct tindex *t)
{
	if (t->n > 1)
		qsort(t->v, t->n, sizeof(*t->v), tent_cmp);
}

/* First entry of process proc that may overlap [start, ...). */
size_t steps_tindex_first(const struct tindex *t, uint32_t proc, uint64_t start)
{
	uint64_t from = start > t->maxlen ? start - t->maxlen : 0;
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (t->v[mid].process < proc || (t->v[mid].process == proc && t->v[mid].s < from))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void steps_ix_free(struct step_ix *ix)
{
	free(ix->gpu.v);
	free(ix->sync.v);
	free(ix->mem.v);
	memset(ix, 0, sizeof(*ix));
}

int steps_ix_build(const struct profile *p, struct step_ix *ix)
{
	unsigned char *proc_syncs = NULL;
	size_t i;
	int ret = -ENOMEM;

	memset(ix, 0, sizeof(*ix));
	if (p->nprocesses && !(proc_syncs = calloc(p->nprocesses, 1)))
		return -ENOMEM;
	for (i = 0; i < p->ngpu_ops; i++)
		if (tindex_add(&ix->gpu, p->gpu_ops[i].process, i, p->gpu_ops[i].start,
			       p->gpu_ops[i].end) < 0)
			goto out;
	for (i = 0; i < p->nsyncs; i++) {
		if (p->syncs[i].process < p->nprocesses)
			proc_syncs[p->syncs[i].process] = 1;
		if (tindex_add(&ix->sync, p->syncs[i].process, i, p->syncs[i].start,
			       p->syncs[i].end) < 0)
			goto out;
	}
	/* without CUPTI's sync records, the API calls that synchronize */
	for (i = 0; i < p->ncuda_api; i++) {
		const struct prof_cuda_api *c = &p->cuda_api[i];

		if (c->process < p->nprocesses && !proc_syncs[c->process] &&
		    step_split_is_sync_api(c->name) &&
		    tindex_add(&ix->sync, c->process, i, c->start, c->end) < 0)
			goto out;
	}
	for (i = 0; i < p->nmem_counters; i++)
		if (tindex_add(&ix->mem, p->mem_counters[i].process, i, p->mem_counters[i].ts,
			       p->mem_counters[i].ts) < 0)
			goto out;
	tindex_sort(&ix->gpu);
	tindex_sort(&ix->sync);
	tindex_sort(&ix->mem);
	ret = 0;
out:
	free(proc_syncs);
	if (ret < 0)
		steps_ix_free(ix);
	return ret;
}

int steps_figures(const struct profile *p, const struct sample_index *x,
		  const struct step_ix *ix, struct step *v, size_t nsteps)
{
	struct util_ival *iv = NULL;
	size_t cap = 0, k;

	for (k = 0; k < nsteps; k++) {
		struct step *s = &v[k];
		size_t j = steps_sidx_lower(x, s->process, s->start), n = 0;

		for (; j < x->n && steps_sample_proc(p, x->idx[j]) == s->process; j++) {
			const struct prof_sample *sm = &p->samples[x->idx[j]];

			if (sm->ts >= s->end)
				break;
			s->cpu_ns += (uint64_t)sm->weight * prof_period_of_thread(p, sm->thread);
		}
		TINDEX_EACH(&ix->gpu, s, e) {
			const struct prof_gpu_op *g = &p->gpu_ops[ix->gpu.v[e].i];

			if (g->end <= s->start)
				continue;
			if (g->start >= s->start) {
				s->kernels += g->kind == PROF_GPU_KERNEL;
				s->copies += g->kind == PROF_GPU_MEMCPY;
			}
			if (util_grow((void **)&iv, &cap, n, sizeof(*iv)) < 0) {
				free(iv);
				return -ENOMEM;
			}
			iv[n].s = g->start > s->start ? g->start : s->start;
			iv[n++].e = g->end < s->end ? g->end : s->end;
		}
		util_ival_union(iv, n, &s->gpu_busy_ns);
		TINDEX_EACH(&ix->sync, s, e)
			s->sync_ns += clip(ix->sync.v[e].s, ix->sync.v[e].e, s->start, s->end);
		TINDEX_EACH(&ix->mem, s, e) {
			const struct prof_mem_counter *c = &p->mem_counters[ix->mem.v[e].i];

			if (c->ts >= s->start && c->host_live > 0 && (uint64_t)c->host_live > s->mem_peak)
				s->mem_peak = (uint64_t)c->host_live;
		}
	}
	free(iv);
	return 0;
}

