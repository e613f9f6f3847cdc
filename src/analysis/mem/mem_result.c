/*
 * mem_result.c — the memory view's result (memory.h): the strings it owns
 * (mem_strdup) and its release (mem_free).  Below the files that build it
 * (memory.c, mem_host.c) and those that free it (analysis.c, the CUDA
 * analysis), so that none of them calls another back.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memory.h"
#include "rules.h"
#include "util.h"

const char *mem_strdup(struct mem_analysis *m, const char *fmt, ...)
{
	char buf[256], **v, *s;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (!(s = strdup(buf)))
		return NULL;
	if (!(v = util_reallocarray(m->strs, m->nstrs + 1, sizeof(*v)))) {
		free(s);
		return NULL;
	}
	m->strs = v;
	m->strs[m->nstrs++] = s;
	return s;
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
	for (i = 0; i < m->nstrs; i++)
		free(m->strs[i]);
	free(m->spaces);
	free(m->sites);
	free(m->leaks);
	rules_findings_free(m->recos, m->nrecos);
	free(m->strs);
	free(m);
}
