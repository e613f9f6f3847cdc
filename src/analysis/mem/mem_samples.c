/*
 * mem_samples.c — sampled host allocations as weighted stacks (mem_samples.h):
 * the unbiasing weights and the pairing of allocations with their frees,
 * built once by analysis_run for the per-stack writers.
 */
#include <errno.h>
#include <stdlib.h>

#include "cbn_weight.h"
#include "mem_samples.h"
#include "util.h"

/* Event index: allocations are 0..nallocs-1, frees nallocs + k. */
struct mev {
	uint64_t addr, ts;
	uint32_t process;
	uint32_t idx;
	int is_free;
};

static int cmp_mev(const void *a, const void *b)
{
	const struct mev *x = a, *y = b;

	if (x->process != y->process)
		return x->process < y->process ? -1 : 1;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	/* a free at the same instant as an allocation of the address released
	 * the earlier block: it sorts first */
	if (x->is_free != y->is_free)
		return x->is_free ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

int mem_samples_build(const struct profile *p, struct mem_sample **out, size_t *n)
{
	size_t na = p->nmem_allocs, nf = p->nmem_frees, i;
	struct mem_sample *s = NULL;
	struct mev *ev = NULL;

	*out = NULL;
	*n = 0;
	if (!na)
		return 0;
	s = util_reallocarray(NULL, na, sizeof(*s));
	ev = util_reallocarray(NULL, na + nf, sizeof(*ev));
	if (!s || !ev) {
		free(s);
		free(ev);
		return -ENOMEM;
	}
	for (i = 0; i < na; i++) {
		const struct prof_mem_alloc *a = &p->mem_allocs[i];
		uint64_t rate = a->process < p->nprocesses ? p->processes[a->process].mem.rate : 1;

		s[i].stack = a->stack;
		s[i].thread = a->thread;
		s[i].bytes = cbn_mem_weight_bytes(a->size, rate);
		s[i].objects = cbn_mem_weight_allocs(a->size, rate);
		s[i].live = 1;
		ev[i] = (struct mev){a->addr, a->ts, a->process, (uint32_t)i, 0};
	}
	for (i = 0; i < nf; i++) {
		const struct prof_mem_free *f = &p->mem_frees[i];

		ev[na + i] = (struct mev){f->addr, f->ts, f->process, (uint32_t)i, 1};
	}
	qsort(ev, na + nf, sizeof(*ev), cmp_mev);
	/* within one (process, address), by time: a free closes the allocation
	 * just before it, if that one is still open */
	for (i = 1; i < na + nf; i++) {
		const struct mev *prev = &ev[i - 1], *cur = &ev[i];

		if (cur->is_free && !prev->is_free && prev->process == cur->process &&
		    prev->addr == cur->addr)
			s[prev->idx].live = 0;
	}
	free(ev);
	*out = s;
	*n = na;
	return 0;
}
