/*
 * memory.c — the memory view's entry point (memory.h): the host spaces
 * (mem_host.c, with mem_sites.c and mem_replay.c), then the GPU side
 * (mem_gpu.c) appended to the same result, the sites in order, then the
 * memory rules (mem_rules.c).  The result's strings and its release are
 * mem_result.c's, below every file that builds or frees it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "mem_int.h"
#include "util.h"

/* --- entry point ----------------------------------------------------------- */

int mem_analyze(struct analysis *a, const char *const *alloc_fns, size_t nalloc_fns)
{
	const struct profile *p = a->profile;
	struct mem_analysis *m;
	int ret;

	a->memory = NULL;
	if (!(m = calloc(1, sizeof(*m))))
		return -ENOMEM;
	if ((ret = mem_host_analyze(p, m, alloc_fns, nalloc_fns)) < 0 || (ret = mem_gpu_analyze(p, m)) < 0 ||
	    (ret = mem_sites_finish(m)) < 0)
		goto fail;
	if (!m->nspaces && !m->refused) {
		mem_free(m);
		return 0;
	}
	if ((ret = mem_rules_build(m, p)) < 0)
		goto fail;
	a->memory = m;
	return 0;
fail:
	mem_free(m);
	return ret;
}
