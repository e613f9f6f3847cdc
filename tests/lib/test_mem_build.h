/*
 * test_mem_build.h — host memory records on a hand-built profile (struct pb
 * of test_cpu_builder.h) for the memory analysis, text and rule tests: the
 * arrays the loader fills, each kept in (process, ts) order by the caller.
 */
#ifndef CBN_TEST_MEM_BUILD_H
#define CBN_TEST_MEM_BUILD_H

#include "test_cpu_builder.h"

static inline void pbm_on(struct pb *b, uint32_t proc, uint64_t rate, uint32_t flags)
{
	struct prof_mem_proc *m = &b->p.processes[proc].mem;

	m->state = CBN_MEM_ON;
	m->rate = rate;
	m->flags = flags | (rate == 1 ? CBN_MEMF_EXACT : 0);
	m->reason = "";
}

static inline void pbm_alloc(struct pb *b, uint32_t proc, uint64_t ts,
			     uint64_t addr, uint64_t size, uint32_t stack)
{
	struct prof_mem_alloc *a;

	b->p.mem_allocs = pb_grow(b->p.mem_allocs, b->p.nmem_allocs,
				  sizeof(*a));
	a = &b->p.mem_allocs[b->p.nmem_allocs++];
	memset(a, 0, sizeof(*a));
	a->ts = ts;
	a->addr = addr;
	a->size = size;
	a->process = proc;
	a->thread = 0;
	a->stack = stack;
	a->kind = CBN_ALLOC_HEAP;
	a->fn = CBN_AFN_MALLOC;
	b->p.processes[proc].mem.sampled++;
}

static inline void pbm_free(struct pb *b, uint32_t proc, uint64_t ts,
			    uint64_t addr)
{
	struct prof_mem_free *f;

	b->p.mem_frees = pb_grow(b->p.mem_frees, b->p.nmem_frees, sizeof(*f));
	f = &b->p.mem_frees[b->p.nmem_frees++];
	memset(f, 0, sizeof(*f));
	f->ts = ts;
	f->addr = addr;
	f->process = proc;
	f->kind = CBN_ALLOC_HEAP;
	f->fn = CBN_AFN_FREE;
}

static inline void pbm_counter(struct pb *b, uint32_t proc, uint64_t ts,
			       uint64_t rss, int64_t live)
{
	struct prof_mem_counter *c;

	b->p.mem_counters = pb_grow(b->p.mem_counters, b->p.nmem_counters,
				    sizeof(*c));
	c = &b->p.mem_counters[b->p.nmem_counters++];
	memset(c, 0, sizeof(*c));
	c->ts = ts;
	c->rss = rss;
	c->host_live = live;
	c->process = proc;
}

static inline void pbm_range(struct pb *b, uint32_t proc, uint64_t start,
			     uint64_t end, uint32_t kind, uint32_t depth, const char *name)
{
	struct prof_range *g;

	b->p.ranges = pb_grow(b->p.ranges, b->p.nranges, sizeof(*g));
	g = &b->p.ranges[b->p.nranges++];
	memset(g, 0, sizeof(*g));
	g->start = start;
	g->end = end;
	g->thread = PROF_NONE;
	g->process = proc;
	g->kind = kind;
	g->source = CBN_SRC_ANNOTATION;
	g->depth = depth;
	g->domain = "";
	g->name = name;
}

static inline void pbm_release(struct pb *b)
{
	pb_drop(b->p.mem_allocs);
	pb_drop(b->p.mem_frees);
	pb_drop(b->p.mem_counters);
	pb_drop(b->p.ranges);
	b->p.mem_allocs = NULL;
	b->p.mem_frees = NULL;
	b->p.mem_counters = NULL;
	b->p.ranges = NULL;
	b->p.nmem_allocs = b->p.nmem_frees = b->p.nmem_counters = b->p.nranges = 0;
}

#endif
