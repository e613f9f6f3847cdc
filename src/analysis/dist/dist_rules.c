/*
 * dist_rules.c — the recommendations of the distributed view: one test per
 * rule over struct dist_analysis and the table dist_rules[] that gives each
 * its id, advice and order.  Thresholds: dist_int.h and docs/distributed.md.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "dist_int.h"

struct dist_ctx {
	const struct dist_analysis *d;
	uint64_t late_sender_ns;
};

/* "ranks 0,1,3" or "the other 63 ranks" */
static void others(char *buf, size_t len, const struct dist_analysis *d, int32_t except)
{
	size_t i, off;
	const char *sep = "";

	if (d->nranks > 9) {
		snprintf(buf, len, "the other %zu ranks", d->nranks - 1);
		return;
	}
	off = (size_t)snprintf(buf, len, d->nranks > 2 ? "ranks " : "rank ");
	for (i = 0; i < d->nranks && off < len; i++) {
		if (d->ranks[i].rank == except)
			continue;
		off += (size_t)snprintf(buf + off, len - off, "%s%d", sep, d->ranks[i].rank);
		sep = ",";
	}
}

static int t_straggler(const void *ctx, struct rules_pass *pass)
{
	const struct dist_analysis *d = ((const struct dist_ctx *)ctx)->d;
	char who[128];

	if (d->straggler < 0)
		return 0;
	if (!d->straggler_call)
		return rules_fire(pass, "rank %d computes %.1fx the median rank", d->straggler,
				  d->straggler_ratio);
	others(who, sizeof(who), d, d->straggler);
	return rules_fire(pass, "rank %d computes %.1fx the median; %s spend%s %.0f %% of the step "
				"in %s waiting for it", d->straggler, d->straggler_ratio, who,
			  d->nranks == 2 ? "s" : "", d->straggler_wait_pct, d->straggler_call);
}

static int t_imbalance(const void *ctx, struct rules_pass *pass)
{
	const struct dist_analysis *d = ((const struct dist_ctx *)ctx)->d;

	if (d->nranks < 2 || d->imbalance < DIST_STRAGGLER_MIN)
		return 0;
	return rules_fire(pass, "compute per step: max / mean over %zu ranks = %.2f", d->nranks,
			  d->imbalance);
}

static int t_mpi_bound(const void *ctx, struct rules_pass *pass)
{
	const struct dist_analysis *d = ((const struct dist_ctx *)ctx)->d;
	double s = d->app_ns ? (double)d->mpi_ns / (double)d->app_ns : 0;

	if (s < DIST_MPI_BOUND)
		return 0;
	return rules_fire(pass, "%.0f %% of the ranks' wall time is inside MPI calls%s%s", 100 * s,
			  d->nsites ? "; the top call site is " : "",
			  d->nsites ? d->sites[0].call : "");
}

static int t_late_sender(const void *ctx, struct rules_pass *pass)
{
	const struct dist_ctx *c = ctx;
	double s = c->d->mpi_ns ? (double)c->late_sender_ns / (double)c->d->mpi_ns : 0;

	if (s < DIST_LATE_SENDER)
		return 0;
	return rules_fire(pass, "%.0f %% of the MPI time is blocking receives waiting for a send "
				"that started later", 100 * s);
}

static const struct rule dist_rules[] = {
	{"dist-straggler", t_straggler,
	 "One rank computes more than the others, and they wait for it at the next collective: "
	 "give it less work (rebalance the domain decomposition or the data shards), or find why "
	 "it is slower (its CPU profile: cbottleneck report DIR --rank N).", 1},
	{"dist-imbalance", t_imbalance,
	 "The ranks do unequal compute per step: every step runs at the pace of the slowest; "
	 "balance the partition or overlap the waiting with independent work.", 1},
	{"dist-mpi-bound", t_mpi_bound,
	 "Much of the run is spent in MPI: send fewer, larger messages, overlap communication "
	 "with compute (non-blocking calls), or use fewer ranks per node.", 1},
	{"dist-late-sender", t_late_sender,
	 "Receivers block before their sender is ready: post receives non-blocking (MPI_Irecv) "
	 "and compute until the data is needed, or send earlier.", 1},
};

int dist_rules_run(struct dist_analysis *d, uint64_t late_sender_ns)
{
	struct dist_ctx c = {d, late_sender_ns};
	struct rule_hit *hits = NULL;
	size_t nhits = 0;
	int ret;

	if ((ret = rules_run(dist_rules, sizeof(dist_rules) / sizeof(dist_rules[0]), &c, &hits,
			     &nhits)) < 0)
		return ret;
	return rules_keep(hits, nhits, &d->findings, &d->nfindings);
}
