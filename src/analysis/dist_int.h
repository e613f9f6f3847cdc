/*
 * dist_int.h — internals of the distributed view shared by dist.c (the
 * numbers) and dist_rules.c (the recommendations).  Launcher side only.
 */
#ifndef CBN_DIST_INT_H
#define CBN_DIST_INT_H

#include "dist.h"

/* Thresholds, in docs/distributed.md ("The merged report"). */
#define DIST_STRAGGLER_MIN 1.10  /* imbalance below this: balanced, no straggler */
#define DIST_MPI_BOUND 0.30      /* MPI time / wall over the ranks */
#define DIST_LATE_SENDER 0.10    /* late-sender wait / MPI time */

/* Run the distributed rules over d into d->findings.  0 or -ENOMEM. */
int dist_rules_run(struct dist_analysis *d, uint64_t late_sender_ns);

#endif
