/*
 * dist_int.h — internals of the distributed view shared by dist*.c (the
 * numbers) and dist_rules.c (the recommendations).  Launcher side only.
 */
#ifndef CBN_DIST_INT_H
#define CBN_DIST_INT_H

#include "../../format/cbn_mpi.h"
#include "analysis.h"
#include "dist.h"

/* Thresholds, in docs/distributed.md ("The merged report"). */
#define DIST_STRAGGLER_MIN 1.10  /* imbalance below this: balanced, no straggler */
#define DIST_MPI_BOUND 0.30      /* MPI time / wall over the ranks */
#define DIST_LATE_SENDER 0.10    /* late-sender wait / MPI time */

/* Working state of one dist_analyze(). */
struct dist_work {
	const struct profile *p;
	const struct analysis *a;
	struct dist_analysis *d;
	int32_t *procrank;           /* process -> index into d->ranks, -1 */
	uint64_t *wait;              /* per MPI call: its late-arrival / late-sender wait */
	uint32_t *site;              /* per MPI call: index into d->sites, UINT32_MAX none */
	uint64_t *call_rank_wait;    /* [call * nranks + r] */
	uint32_t *call_rank_count;   /* [call * nranks + r] collectives */
	uint32_t *call_rank_latest;  /* [call * nranks + r] groups where r arrived last */
	uint64_t late_sender_ns;
};

static inline uint64_t dist_ref_time(const struct profile *p, uint32_t proc, uint64_t t)
{
	return prof_rank_time(p, proc, t);
}

static inline int dist_is_env(unsigned call)
{
	return cbn_mpi_call_kind(call) == CBN_MPI_KIND_ENV;
}

/* dist_match.c: the late-arrival wait of collectives (per call name into
 * percall) and the late-sender wait of blocking receives, into w->wait. */
int dist_collectives(struct dist_work *w, struct dist_collective *percall);
int dist_late_senders(struct dist_work *w);

/* dist_sites.c: the MPI call sites and the message-size histograms. */
int dist_sites(struct dist_work *w);
int dist_histograms(struct dist_work *w);

/* dist_split.c: each rank's split of its wall, run and steps. */
int dist_splits(struct dist_work *w);

/* Run the distributed rules over d into d->findings.  0 or -ENOMEM. */
int dist_rules_run(struct dist_analysis *d, uint64_t late_sender_ns);

#endif
