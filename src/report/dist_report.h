/*
 * dist_report.h — the writers of the distributed view (analysis/dist/dist.h): the
 * text report's "Distributed run" section (dist_text.c) and the JSON report's
 * "distributed" object (dist_json.c).  Each prints or adds nothing when the
 * profile has no rank.  Launcher side only.
 */
#ifndef CBN_DIST_REPORT_H
#define CBN_DIST_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "report.h"

struct analysis;
struct cJSON;

/* The "Distributed run" section.  0, or -ENOMEM. */
int report_dist_text(FILE *out, const struct analysis *a, const struct report_opts *o);

/* Add "distributed" to root when a->dist is set.  0 or -ENOMEM. */
int report_dist_json(const struct analysis *a, struct cJSON *root);

/* "none", "same-host", "mpi", "realtime" (enum prof_clock_source) */
const char *dist_clock_name(uint32_t source);
/* "ompi", "pmix", "pmi", "slurm", "torch", "mpi", "none" (enum cbn_rank_source) */
const char *dist_source_name(uint32_t source);

#endif
