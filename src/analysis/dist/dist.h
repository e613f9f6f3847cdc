/*
 * dist.h — the distributed view (docs/distributed.md): every rank of an MPI /
 * NCCL / torchrun job in one report.  Filled by dist_analyze() from
 * analysis_run; NULL in struct analysis when no process of the profile is a
 * rank (prof_process.rank.rank < 0 for all).  Launcher side only.
 *
 * A rank is every process whose header names that world rank (a rank that
 * forks keeps its children under it).  Times are on the reference clock
 * (prof_rank_time) wherever ranks are compared.
 */
#ifndef CBN_DIST_H
#define CBN_DIST_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"
#include "rules.h"

struct analysis;

/* The PyTorch Profiler's four-way split of a rank's (or a step's) wall time,
 * from the GPU ops of its processes (docs/distributed.md "Computation and
 * communication"): communication = union of communication kernels (nccl*,
 * ncclDevKernel_*, and kernels inside NCCL's NVTX ranges); computation =
 * union of the other kernels, copies and sets; overlapping = their
 * intersection; other = wall - (computation ∪ communication).  Reported as
 * computation - overlapping, overlapping, communication - overlapping, other,
 * which sum to the wall.  Without GPU ops the host side is used instead:
 * communication = time inside MPI calls, computation = the rest of the
 * process's busy time (sampled CPU), overlapping 0. */
struct dist_split {
	uint64_t wall_ns;
	uint64_t computation_ns;         /* computation only (minus overlap) */
	uint64_t overlap_ns;
	uint64_t communication_ns;       /* communication only (minus overlap) */
	uint64_t other_ns;
	int gpu;                         /* 1: from GPU ops, 0: from the host side */
};

struct dist_rank {
	int32_t rank, local_rank, world_size;
	const char *host;
	uint32_t process;                /* its main process (index into prof.processes) */
	uint32_t pid;
	uint32_t nprocesses;             /* processes under this rank */
	const char *device;              /* CUDA device(s) it used ("0", "0,1"), "" none */
	int crashed;                     /* its main process did not exit cleanly */
	uint64_t start, end;             /* reference clock */
	uint64_t wall_ns, cpu_ns, gpu_ns;/* gpu: union of its GPU ops */
	uint64_t mpi_ns;                 /* time inside MPI calls (all threads, not nested) */
	uint64_t mpi_wait_ns;            /* of mpi_ns: late-arrival wait in collectives and
					  * late-sender wait in receives (docs) */
	uint64_t compute_ns;             /* wall inside MPI_Init..Finalize minus mpi_ns
					  * (or wall minus mpi_ns without them) */
	uint64_t bytes_sent, bytes_recv;
	size_t nsteps;
	uint64_t step_mean_ns, step_max_ns;
	uint64_t compute_per_step_ns;    /* mean compute per step (compute_ns / steps) */
	struct dist_split split;         /* over the rank's whole run */
	struct dist_split *step_split;   /* one per step of the rank (nsteps), NULL without */
	/* clock alignment */
	uint32_t clock_source;           /* enum prof_clock_source */
	int64_t clock_offset_ns;
	uint64_t clock_uncertainty_ns;   /* UINT64_MAX unknown */
};

/* One MPI call site, mpiP's "callsite": (call, innermost frame outside MPI). */
struct dist_site {
	const char *call;                /* "MPI_Allreduce" */
	const char *function, *file;     /* the host caller; file "" unknown */
	uint32_t line;
	uint64_t calls;
	uint64_t time_ns;                /* summed over ranks */
	uint64_t max_ns;                 /* longest single call */
	uint64_t bytes;                  /* sent + received, summed */
	double app_pct, mpi_pct;         /* of all ranks' wall / all ranks' MPI time */
	double cov;                      /* coefficient of variation of its time across ranks */
	uint64_t wait_ns;                /* of time_ns: late-arrival / late-sender wait */
};

/* Per collective (call), matched across ranks by (comm, seq). */
struct dist_collective {
	const char *call;
	uint64_t instances;              /* matched (comm, seq) groups */
	uint64_t unmatched;              /* calls whose group lacked some rank */
	uint64_t time_ns;                /* summed over ranks */
	uint64_t wait_ns;                /* late-arrival: last rank's arrival - own arrival */
	uint64_t transfer_ns;            /* time_ns - wait_ns */
	uint64_t bytes;
	int32_t latest_rank;             /* the rank that arrived last most often, -1 */
	uint64_t latest_count;
};

#define DIST_HIST_BINS 12            /* 0-64 B, then x4 up to >= 256 MiB */
struct dist_histogram {
	const char *call;
	uint64_t count[DIST_HIST_BINS];  /* calls by message size (bytes sent + received) */
};

struct dist_analysis {
	struct dist_rank *ranks;         /* by rank */
	size_t nranks;
	int32_t world_size;              /* as the ranks said, 0 unknown */
	size_t missing;                  /* ranks of world_size (that --ranks selects) with no
					  * session */
	size_t selected;                 /* ranks of world_size --ranks selects; world_size
					  * without --ranks, 0 when it is unknown */
	const char *mpi;                 /* "Open MPI v4.1.4, ..." or "" */
	/* load balance */
	double imbalance;                /* max / mean of compute per step over ranks (>= 1) */
	int32_t straggler;               /* the rank that computes most, -1 when balanced
					  * (imbalance < 1.10) */
	double straggler_ratio;          /* its compute / the median rank's */
	const char *straggler_call;      /* where the others wait for it ("MPI_Allreduce") */
	double straggler_wait_pct;       /* others' mean share of step time in that wait */
	/* MPI */
	uint64_t app_ns, mpi_ns;         /* summed over ranks */
	struct dist_site *sites;         /* by time, descending */
	size_t nsites;
	struct dist_collective *colls;   /* by time, descending */
	size_t ncolls;
	struct dist_histogram *hists;    /* one per call with bytes */
	size_t nhists;
	/* clock */
	uint64_t clock_uncertainty_ns;   /* worst of the ranks, UINT64_MAX unknown */
	/* the distributed rules (rules.h) that fired, with their evidence */
	struct rule_finding *findings;
	size_t nfindings;
};

/* The four-way split of the GPU ops of the processes whose proc_mask[i] is
 * nonzero (NULL: every process) over [t0, t1) on their own clock
 * (dist_gpu.c).  Returns 1 with *out filled (gpu = 1) when any GPU op of
 * those processes overlaps the window, 0 when none does (*out has only
 * wall_ns), -ENOMEM. */
int dist_gpu_split(const struct profile *p, const uint8_t *proc_mask, uint64_t t0, uint64_t t1,
		   struct dist_split *out);

/* The same for nwin windows [t0[i], t1[i]) at once, into out[0..nwin): the
 * ops are classified, sorted and merged once, so a rank's steps cost
 * O(n log n + nwin log n) rather than a pass over every op per step.
 * Returns how many windows had GPU ops (out[i].gpu = 1), or -ENOMEM. */
int dist_gpu_split_many(const struct profile *p, const uint8_t *proc_mask, const uint64_t *t0,
			const uint64_t *t1, size_t nwin, struct dist_split *out);

/* 1 if a GPU op (kernel) named name is communication: nccl*, ncclDevKernel_*,
 * ncclKernel_* (dist_gpu.c). */
int dist_is_comm_kernel(const char *name);

/* Fill *out from the profile (and a->steps, a->cuda when present).
 * Returns 1 when the profile has ranks, 0 when not (out zeroed), -ENOMEM. */
int dist_analyze(const struct profile *p, const struct analysis *a, struct dist_analysis *out);
void dist_free(struct dist_analysis *d);

#endif
