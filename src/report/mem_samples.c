/*
 * mem_samples.c — sampled host allocations as weighted stacks (mem_samples.h):
 * the unbiasing weights and the pairing of allocations with their frees.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cbn_weight.h"
#include "mem_samples.h"
#include "util.h"

void mem_samples_weight(uint64_t s, uint64_t rate, double *bytes, double *objects)
{
	*bytes = cbn_mem_weight_bytes(s, rate);
	*objects = cbn_mem_weight_allocs(s, rate);
}

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
		mem_samples_weight(a->size, rate, &s[i].bytes, &s[i].objects);
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

double mem_samples_value(const struct mem_sample *s, enum export_sample t)
{
	switch (t) {
	case EXPORT_ALLOC_SPACE:
		return s->bytes;
	case EXPORT_ALLOC_OBJECTS:
		return s->objects;
	case EXPORT_INUSE_SPACE:
		return s->live ? s->bytes : 0;
	case EXPORT_INUSE_OBJECTS:
		return s->live ? s->objects : 0;
	default:
		return 0;
	}
}

static const char *const sample_names[] = {
	[EXPORT_CPU] = "cpu",
	[EXPORT_ALLOC_SPACE] = "alloc_space",
	[EXPORT_ALLOC_OBJECTS] = "alloc_objects",
	[EXPORT_INUSE_SPACE] = "inuse_space",
	[EXPORT_INUSE_OBJECTS] = "inuse_objects",
	[EXPORT_WALL] = "wall",
	[EXPORT_OFFCPU] = "offcpu",
};

int export_sample_parse(const char *s, enum export_sample *t)
{
	for (size_t i = 0; s && i < sizeof(sample_names) / sizeof(sample_names[0]); i++) {
		if (strcmp(s, sample_names[i]) == 0) {
			*t = (enum export_sample)i;
			return 0;
		}
	}
	return -1;
}

const char *export_sample_name(enum export_sample t)
{
	return (unsigned)t < sizeof(sample_names) / sizeof(sample_names[0]) ? sample_names[t]
									    : "?";
}

int export_has_memory(const struct profile *p)
{
	if (p->nmem_allocs)
		return 1;
	for (size_t i = 0; i < p->nprocesses; i++)
		if (p->processes[i].mem.state == CBN_MEM_ON)
			return 1;
	return 0;
}
