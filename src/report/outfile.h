/*
 * outfile.h — how the report's whole-document outputs (--json, --html) write
 * their file, the exporters' being gz.h: "-" is stdout (flushed, never
 * closed), any other path created or truncated, and a failure said once, in
 * the same words for each.  Launcher side only.
 */
#ifndef CBN_OUTFILE_H
#define CBN_OUTFILE_H

#include <stddef.h>
#include <stdio.h>

/* Writes path through fill(f, ctx), then flushes and closes it.  0, or -1
 * with err: "cannot write PATH: WHY; pick a writable OPT path" when it
 * cannot be opened, "cannot write PATH: WHY" when a write, the flush or the
 * close failed (fill's stream errors are found there). */
int outfile_write(const char *path, const char *opt, void (*fill)(FILE *f, const void *ctx),
		  const void *ctx, char *err, size_t errlen);

#endif
