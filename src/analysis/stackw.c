/*
 * stackw.c — what each call stack weighs (stackw.h): the per-stack weights
 * of every sample type, once per report.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mem_samples.h"
#include "stackw.h"

const struct prof_frame *stackw_frames(const struct profile *p, uint32_t st, uint32_t *n)
{
	const struct prof_stack *s;

	*n = 0;
	if (st >= p->nstacks)
		return NULL;
	s = &p->stacks[st];
	if (!s->nframes || s->first >= p->nframes || s->nframes > p->nframes - s->first)
		return NULL;
	*n = s->nframes;
	return &p->frames[s->first];
}

double stackw_mem_value(const struct mem_sample *s, enum stackw_type t)
{
	switch (t) {
	case STACKW_ALLOC_SPACE:
		return s->bytes;
	case STACKW_ALLOC_OBJECTS:
		return s->objects;
	case STACKW_INUSE_SPACE:
		return s->live ? s->bytes : 0;
	case STACKW_INUSE_OBJECTS:
		return s->live ? s->objects : 0;
	default:
		return 0;
	}
}

size_t stackw_per(enum stackw_type t)
{
	return t == STACKW_WALL || t == STACKW_OFFCPU ? STACKW_WALL_SLOTS : 2;
}

size_t stackw_nslots(const struct stackw *w, enum stackw_type t)
{
	return stackw_per(t) * (w->nstacks + 1);
}

double stackw_get(const struct stackw *w, enum stackw_type t, size_t i)
{
	switch (t) {
	case STACKW_CPU:
		return w->cpu ? w->cpu[i] : 0;
	case STACKW_WALL:
	case STACKW_OFFCPU:
		/* offcpu: the off-CPU kinds only */
		if (!w->wall || (t == STACKW_OFFCPU && i % STACKW_WALL_SLOTS < 2))
			return 0;
		return w->wall[i];
	default:
		/* the memory types: one per stack, on its whole-stack slot */
		if ((size_t)t - STACKW_ALLOC_SPACE >= 4 || !w->mem[t - STACKW_ALLOC_SPACE] || i % 2)
			return 0;
		return w->mem[t - STACKW_ALLOC_SPACE][i / 2];
	}
}

/* The CPU samples in periods per (stack, truncated) slot. */
static void stackw_cpu(const struct profile *p, struct stackw *w)
{
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];
		size_t k = s->stack < p->nstacks ? s->stack : p->nstacks;

		w->cpu[2 * k + ((s->flags & CBN_SAMPLE_TRUNCATED) ? 1 : 0)] +=
		    s->weight ? s->weight : 1;
	}
}

/* Wall time in ns: on-CPU samples at their process's period (else the
 * run's), off-CPU stretches by kind. */
static void stackw_wall(const struct profile *p, double *w)
{
	size_t i;

	for (i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];
		size_t k = s->stack < p->nstacks ? s->stack : p->nstacks;
		uint64_t period = p->period_ns;

		if (s->thread < p->nthreads && p->threads[s->thread].process < p->nprocesses &&
		    p->processes[p->threads[s->thread].process].period_ns)
			period = p->processes[p->threads[s->thread].process].period_ns;
		w[k * STACKW_WALL_SLOTS + ((s->flags & CBN_SAMPLE_TRUNCATED) ? 1 : 0)] +=
		    (double)(s->weight ? s->weight : 1) * (double)period;
	}
	for (i = 0; i < p->noffcpu; i++) {
		const struct prof_offcpu *o = &p->offcpu[i];
		size_t k = o->stack < p->nstacks ? o->stack : p->nstacks;
		uint32_t kind = o->kind < CBN_OFF_NKINDS ? o->kind : CBN_OFF_OTHER;

		w[k * STACKW_WALL_SLOTS + 2 + kind] += (double)o->weight_ns;
	}
}

static int has_memory(const struct profile *p)
{
	if (p->nmem_allocs)
		return 1;
	for (size_t i = 0; i < p->nprocesses; i++)
		if (p->processes[i].mem.state == CBN_MEM_ON)
			return 1;
	return 0;
}

static int has_offcpu(const struct profile *p)
{
	if (p->noffcpu)
		return 1;
	for (size_t i = 0; i < p->nprocesses; i++)
		if (p->processes[i].offcpu.state == CBN_OFFCPU_ON)
			return 1;
	return 0;
}

/* --- the whole ------------------------------------------------------------------ */

int stackw_build(const struct profile *p, const struct mem_sample *ms, size_t nms,
		 struct stackw *w)
{
	size_t slots = p->nstacks + 1;

	memset(w, 0, sizeof(*w));
	w->nstacks = p->nstacks;
	w->memory = has_memory(p);
	w->offcpu = has_offcpu(p);
	if (!(w->cpu = calloc(2 * slots, sizeof(*w->cpu))))
		goto oom;
	stackw_cpu(p, w);
	for (int t = 0; w->memory && t < 4; t++) {
		if (!(w->mem[t] = calloc(slots, sizeof(*w->mem[t]))))
			goto oom;
		for (size_t i = 0; i < nms; i++)
			w->mem[t][ms[i].stack < p->nstacks ? ms[i].stack : p->nstacks] +=
			    stackw_mem_value(&ms[i], (enum stackw_type)(STACKW_ALLOC_SPACE + t));
	}
	if (w->offcpu) {
		if (!(w->wall = calloc(STACKW_WALL_SLOTS * slots, sizeof(*w->wall))))
			goto oom;
		stackw_wall(p, w->wall);
	}
	return 0;
oom:
	stackw_free(w);
	return -ENOMEM;
}

void stackw_free(struct stackw *w)
{
	if (!w)
		return;
	free(w->cpu);
	for (int t = 0; t < 4; t++)
		free(w->mem[t]);
	free(w->wall);
	memset(w, 0, sizeof(*w));
}
