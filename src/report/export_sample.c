/*
 * export_sample.c — what --folded, --flamegraph and --pprof weigh
 * (--sample-type, export.h): the sample types' names, and whether the run
 * has the data each needs (analysis/cpu/stackw.h weighs the stacks).
 */
#include <string.h>

#include "analysis.h"
#include "export.h"

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

int export_has_memory(const struct analysis *a)
{
	return a->stackw && a->stackw->memory;
}

int export_sample_is_wall(enum export_sample t)
{
	return t == EXPORT_WALL || t == EXPORT_OFFCPU;
}

int export_has_offcpu(const struct analysis *a)
{
	return a->stackw && a->stackw->offcpu;
}
