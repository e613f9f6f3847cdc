/*
 * export_sample.c — what --folded, --flamegraph and --pprof weigh
 * (--sample-type, export.h): the sample types' names, and a sampled
 * allocation's value under each memory type.
 */
#include <string.h>

#include "export.h"
#include "mem_samples.h"

double export_sample_value(const struct mem_sample *s, enum export_sample t)
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
