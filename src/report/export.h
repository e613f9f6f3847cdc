/*
 * export.h — files for other tools: Chrome/Perfetto trace, folded stacks,
 * interactive flame graph SVG, pprof profile.proto.  Launcher side only.
 * Each reads the analysis result (its profile's samples, for the per-stack
 * views) and returns 0, or -1 with a one-line message in err.
 */
#ifndef CBN_EXPORT_H
#define CBN_EXPORT_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"

struct analysis;

struct trace_opts {
	uint64_t window_start_ns;   /* relative to profile start; 0 = from the start */
	uint64_t window_end_ns;     /* relative; 0 = to the end */
	uint64_t max_bytes;         /* size cap; 0 = default (256 MiB) */
	int quiet;
};

int export_trace(const struct analysis *a, const char *path, const struct trace_opts *o,
		 char *err, size_t errlen);
int export_folded(const struct analysis *a, const char *path, char *err, size_t errlen);
int export_flamegraph(const struct analysis *a, const char *path, char *err, size_t errlen);
int export_pprof(const struct analysis *a, const char *path, char *err, size_t errlen);

/* Parse "START:END" (each with an optional unit s/ms/us/ns; empty = open). */
int trace_window_parse(const char *s, uint64_t *start_ns, uint64_t *end_ns);

#endif
