/*
 * analysed.h — for unit tests that call a writer: the analysis result of a
 * (usually hand-built) profile, as the CLI hands it to every writer.  The
 * result lives until a few more are made (a ring) or the test exits; the
 * profile must not change while it is in use.
 */
#ifndef CBN_TEST_ANALYSED_H
#define CBN_TEST_ANALYSED_H

#include <stdio.h>
#include <stdlib.h>

#include "analysis.h"

#define ANALYSED_RING 8

static struct analysis analysed_ring[ANALYSED_RING];
static unsigned analysed_next;

static void analysed_free_all(void)
{
	unsigned i;

	for (i = 0; i < ANALYSED_RING; i++)
		analysis_free(&analysed_ring[i]);
}

/* Analyse p (exits the test when memory runs short). */
static inline const struct analysis *analysed(const struct profile *p)
{
	struct analysis *a = &analysed_ring[analysed_next++ % ANALYSED_RING];

	if (analysed_next == 1)
		atexit(analysed_free_all);
	analysis_free(a);
	if (analysis_run(p, NULL, a) < 0) {
		fprintf(stderr, "analysis_run: out of memory\n");
		exit(1);
	}
	return a;
}

#endif
