/*
 * memory.c — the host side of the memory view (memory.h) and its entry point:
 * sampled allocations by site, peak, leaks and the live-bytes curve, then the
 * GPU side (mem_gpu.c) appended to the same result.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "memory.h"

/* Host analysis is not written yet: only the GPU part runs. */
int mem_analyze(struct analysis *a)
{
	struct mem_analysis *m;
	int ret;

	a->memory = NULL;
	if (!(m = calloc(1, sizeof(*m))))
		return -ENOMEM;
	if ((ret = mem_gpu_analyze(a->profile, m)) < 0 || !m->nspaces) {
		mem_free(m);
		return ret < 0 ? ret : 0;
	}
	a->memory = m;
	return 0;
}

void mem_free(struct mem_analysis *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->nspaces; i++) {
		free(m->spaces[i].timeline);
		free(m->spaces[i].at_peak);
	}
	free(m->spaces);
	free(m->sites);
	free(m->leaks);
	free(m);
}
