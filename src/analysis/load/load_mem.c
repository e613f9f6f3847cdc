/*
 * load_mem.c — host memory (--memory) of a session file turned into the
 * profile: header.mem into prof_process.mem, MEM_ALLOC / MEM_FREE /
 * MEM_COUNTERS records into profile.mem_allocs / mem_frees / mem_counters,
 * each sorted by (process, ts), allocation stacks interned like CUDA stacks.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "load_int.h"

void load_mem_header(struct load *L, struct prof_process *pr, const struct cbn_file_header *h)
{
	const struct cbn_mem_state *m = &h->mem;
	struct prof_mem_proc *pm = &pr->mem;
	size_t n = m->reason_len < sizeof(m->reason) ? m->reason_len : sizeof(m->reason);

	memset(pm, 0, sizeof(*pm));
	pm->state = m->state;
	if (pm->state > CBN_MEM_REFUSED) {
		load_warn(L, "%s: unknown host memory state %u; host memory ignored", pr->file,
			  pm->state);
		pm->state = CBN_MEM_OFF;
	}
	pm->flags = m->flags;
	pm->rate = m->rate ? m->rate : 1;
	if (pm->flags & CBN_MEMF_EXACT)
		pm->rate = 1;
	pm->host_peak = m->host_peak;
	pm->host_peak_ts = m->host_peak_ts;
	pm->rss_peak = m->rss_peak;
	pm->reserved_peak = h->mem_reserved_peak;
	pm->allocs = m->allocs;
	pm->frees = m->frees;
	pm->alloc_bytes = m->alloc_bytes;
	pm->sampled = m->sampled;
	pm->lost = m->lost;
	pm->untracked = m->untracked;
	pm->no_stack = m->no_stack;
	pm->host_live_end = m->host_live;
	pm->reason = load_strndup(L, m->reason, strnlen(m->reason, n));
}

static void note_ts(struct load_file *F, uint64_t ts)
{
	if (ts > F->last_ts)
		F->last_ts = ts;
}

void load_mem_rec(struct load *L, const struct reader_rec *r)
{
	struct profile *p = L->p;
	struct load_file *F = L->f;

	switch (r->type) {
	case CBN_REC_MEM_ALLOC: {
		const struct cbn_rec_mem_alloc *s = (const void *)r->raw;
		struct prof_mem_alloc *a = LOAD_PUSH(L, p->mem_allocs, p->nmem_allocs, L->capmemallocs);
		struct load_cstack *c = a ? LOAD_PUSH(L, F->mstacks, F->nmstacks, F->capmstacks) :
					    NULL;

		if (!c)
			break;
		a->ts = s->ts;
		a->addr = s->addr;
		a->size = s->size;
		a->process = F->proc;
		a->thread = load_thread(L, F->proc, s->tid ? s->tid : r->chunk_tid);
		a->stack = PROF_NONE;
		a->kind = s->kind;
		a->fn = s->fn;
		/* the stack is built once the module map is complete (load_mem_finish) */
		c->correlation = (uint32_t)(p->nmem_allocs - 1 - F->malloc_first);
		c->pcs = r->pcs;
		c->nframes = r->nframes;
		note_ts(F, s->ts);
		break;
	}
	case CBN_REC_MEM_FREE: {
		const struct cbn_rec_mem_free *s = (const void *)r->raw;
		struct prof_mem_free *f = LOAD_PUSH(L, p->mem_frees, p->nmem_frees, L->capmemfrees);

		if (!f)
			break;
		f->ts = s->ts;
		f->addr = s->addr;
		f->size = s->size;
		f->process = F->proc;
		f->thread = load_thread(L, F->proc, s->tid ? s->tid : r->chunk_tid);
		f->kind = s->kind;
		f->fn = s->fn;
		note_ts(F, s->ts);
		break;
	}
	case CBN_REC_MEM_COUNTERS: {
		const struct cbn_rec_mem_counters *s = (const void *)r->raw;
		struct prof_mem_counter *c =
			LOAD_PUSH(L, p->mem_counters, p->nmem_counters, L->capmemctrs);

		if (!c)
			break;
		c->ts = s->ts;
		c->rss = s->rss;
		c->brk = s->brk;
		c->allocs = s->allocs;
		c->frees = s->frees;
		c->alloc_bytes = s->alloc_bytes;
		c->host_live = s->host_live;
		c->mmap_live = s->mmap_live;
		c->process = F->proc;
		note_ts(F, s->ts);
		break;
	}
	}
}

/* Records of one file come per thread (one MEMORY chunk stream each): by ts,
 * then address, so the replay sees one global order. */
static int alloc_cmp(const void *a, const void *b)
{
	const struct prof_mem_alloc *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int free_cmp(const void *a, const void *b)
{
	const struct prof_mem_free *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int ctr_cmp(const void *a, const void *b)
{
	const struct prof_mem_counter *x = a, *y = b;

	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

void load_mem_finish(struct load *L)
{
	struct profile *p = L->p;
	struct load_file *F = L->f;
	size_t i, n;

	/* Every pc of an allocation stack is a return address: the hook's
	 * caller and up (symbolized at pc-1, as CUDA stacks are). */
	for (i = 0; i < F->nmstacks; i++) {
		const struct load_cstack *c = &F->mstacks[i];
		struct prof_mem_alloc *a = &p->mem_allocs[F->malloc_first + c->correlation];

		if (c->nframes)
			a->stack = load_stack(L, c->pcs, c->nframes, a->ts, 1);
		if (L->nomem)
			return;
	}
	if ((n = p->nmem_allocs - F->malloc_first) > 1)
		qsort(p->mem_allocs + F->malloc_first, n, sizeof(*p->mem_allocs), alloc_cmp);
	if ((n = p->nmem_frees - F->mfree_first) > 1)
		qsort(p->mem_frees + F->mfree_first, n, sizeof(*p->mem_frees), free_cmp);
	if ((n = p->nmem_counters - F->mctr_first) > 1)
		qsort(p->mem_counters + F->mctr_first, n, sizeof(*p->mem_counters), ctr_cmp);
	if (p->processes[F->proc].mem.state == CBN_MEM_OFF &&
	    p->nmem_allocs + p->nmem_frees + p->nmem_counters >
		    F->malloc_first + F->mfree_first + F->mctr_first)
		load_warn(L, "%s: host memory records in a file whose header says memory was not "
			     "recorded; they are ignored", p->processes[F->proc].file);
}
