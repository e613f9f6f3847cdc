/*
 * mem_samples.h — the host allocation records of a profile as weighted stack
 * samples for the per-stack writers (pprof, folded, flame graph), built once
 * by analysis_run (struct analysis' mem_samples): each sampled allocation
 * with its unbiased bytes and objects and whether it was still live at the
 * end.  Launcher side only.
 */
#ifndef CBN_MEM_SAMPLES_H
#define CBN_MEM_SAMPLES_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"

struct mem_sample {
	uint32_t stack;          /* prof.stacks index, PROF_NONE */
	uint32_t thread;         /* prof.threads index, PROF_NONE */
	double bytes, objects;   /* what the record stands for at its process's rate
				  * (cbn_weight.h) */
	int live;                /* no matching free: still allocated at the end */
};

/* One mem_sample per p->mem_allocs record, in that order (malloc'd into
 * *out, *n of them; *out NULL when there are none).  An allocation is live
 * when no MEM_FREE of its process and address follows it before the next
 * allocation of that address.  0 or -ENOMEM. */
int mem_samples_build(const struct profile *p, struct mem_sample **out, size_t *n);

#endif
