/*
 * export.h — files for other tools: Chrome/Perfetto trace, folded stacks,
 * interactive flame graph SVG, pprof profile.proto.  Launcher side only.
 * Each reads the analysis result (the stacks' weights and frames of
 * analysis/cpu/stackw.h for the per-stack views) and returns 0, or -1 with a
 * one-line message in err.
 */
#ifndef CBN_EXPORT_H
#define CBN_EXPORT_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"
#include "stackw.h"

struct analysis;

struct trace_opts {
	uint64_t window_start_ns;   /* relative to profile start; 0 = from the start */
	uint64_t window_end_ns;     /* relative; 0 = to the end */
	uint64_t max_bytes;         /* size cap; 0 = default (256 MiB) */
	int quiet;
};

/* What --folded and --flamegraph weigh (--sample-type): CPU samples, the
 * host allocations under pprof's heap sample type names, or wall-clock time
 * (the weights themselves: analysis/cpu/stackw.h). */
enum export_sample {
	EXPORT_CPU = STACKW_CPU,
	EXPORT_ALLOC_SPACE = STACKW_ALLOC_SPACE,     /* bytes allocated */
	EXPORT_ALLOC_OBJECTS = STACKW_ALLOC_OBJECTS, /* allocations */
	EXPORT_INUSE_SPACE = STACKW_INUSE_SPACE,     /* bytes never freed */
	EXPORT_INUSE_OBJECTS = STACKW_INUSE_OBJECTS, /* blocks never freed */
	EXPORT_WALL = STACKW_WALL,                   /* ns on and off the CPU per stack
						      * (--off-cpu) */
	EXPORT_OFFCPU = STACKW_OFFCPU,               /* ns off the CPU per stack (--off-cpu) */
};

/* "cpu", "alloc_space", ...: 0 with *t set, -1 when s names none. */
int export_sample_parse(const char *s, enum export_sample *t);
const char *export_sample_name(enum export_sample t);
/* 1 when host allocations were recorded (some process's hooks were on). */
int export_has_memory(const struct analysis *a);
/* 1 for the wall-clock types (wall, offcpu), which need --off-cpu data. */
int export_sample_is_wall(enum export_sample t);
/* 1 when the off-CPU sampler recorded in some process. */
int export_has_offcpu(const struct analysis *a);

int export_trace(const struct analysis *a, const char *path, const struct trace_opts *o,
		 char *err, size_t errlen);
int export_folded(const struct analysis *a, const char *path, char *err, size_t errlen);
int export_flamegraph(const struct analysis *a, const char *path, char *err, size_t errlen);
/* The same weighed by t; a memory type on a profile without host allocation
 * records is an error (-1, "no memory data ..."). */
int export_folded_as(const struct analysis *a, const char *path, enum export_sample t, char *err,
		     size_t errlen);
int export_flamegraph_as(const struct analysis *a, const char *path, enum export_sample t,
			 char *err, size_t errlen);
int export_pprof(const struct analysis *a, const char *path, char *err, size_t errlen);

/* Parse "START:END" (each with an optional unit s/ms/us/ns; empty = open). */
int trace_window_parse(const char *s, uint64_t *start_ns, uint64_t *end_ns);

#endif
