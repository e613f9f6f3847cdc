/*
 * cmp_dist.c — the gate on a distributed run (dist.h): rank.max.wall,
 * mpi.time and imbalance.
 */
#include <math.h>

#include "cmp_eval.h"

/* --- distributed metrics: rank.max.wall, mpi.time, imbalance ---------------- */

int cmp_is_dist_metric(const struct cmp_expr *e)
{
	return e->metric == CMP_M_RANK_MAX_WALL || e->metric == CMP_M_MPI_TIME ||
	       e->metric == CMP_M_IMBALANCE;
}

static const char *dist_key(const struct cmp_expr *e)
{
	return e->metric == CMP_M_RANK_MAX_WALL ? "distributed.ranks[].wall_ns"
	       : e->metric == CMP_M_MPI_TIME ? "distributed.mpi_ns" : "distributed.imbalance";
}

static double dist_value(const struct gate_run *run, const struct cmp_expr *e)
{
	return e->metric == CMP_M_RANK_MAX_WALL ? run->dist_max_wall
	       : e->metric == CMP_M_MPI_TIME ? run->dist_mpi_ns : run->dist_imbalance;
}

/* Only a distributed run (a process that is a rank) has these; each is one
 * run's measurement (as wall). */
void cmp_eval_dist(struct cmp_result *r, const struct cmp_side *b, const struct cmp_side *c,
		   const struct cmp_expr *e)
{
	struct cmp_section g = {
		b->run->has_dist, c->run->has_dist,
		b->run->has_dist ? dist_value(b->run, e) : NAN,
		c->run->has_dist ? dist_value(c->run, e) : NAN,
		dist_key(e),
		"the baseline",
		" is not a distributed run (no rank); profile the job's ranks "
		"(docs/distributed.md)",
		"could not measure: the current run is not a distributed run (no rank)",
		CMP_N_SINGLE,
	};

	cmp_eval_section(r, b, e, &g);
}

