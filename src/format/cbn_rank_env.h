/*
 * cbn_rank_env.h — a process's rank from its launcher's environment, the
 * order of docs/distributed.md ("Layout of the output directory").  Shared by
 * the agent (rank.c: where the session file goes, the header's rank) and the
 * launcher (cmd_run.c: rank mode), so both read the same variables alike.
 * Header-only; no allocation, safe in a constructor.
 */
#ifndef CBN_RANK_ENV_H
#define CBN_RANK_ENV_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cbn_format.h"

struct cbn_rank_env {
	int32_t rank;                    /* -1: not a rank */
	int32_t local_rank;              /* -1: unknown */
	int32_t world_size;              /* 0: unknown */
	uint32_t source;                 /* enum cbn_rank_source */
};

/* A whole decimal number in [0, INT32_MAX), nothing else: "3" yes; "", " 3",
 * "3x", "-1", "0x3" no.  -1 when absent or garbage. */
static inline int32_t cbn_rank_env_int(const char *s)
{
	char *end;
	long v;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 0 || v >= INT32_MAX)
		return -1;
	return (int32_t)v;
}

/*
 * Fill e from getenv-like get(name).  The first family whose rank variable is
 * a valid number wins; its local-rank and size companions are taken when valid
 * (a size that does not exceed the rank is dropped).  A family whose rank is
 * garbage is skipped, not fatal: the next may hold a good one.
 */
static inline void cbn_rank_from_env(char *(*get)(const char *), struct cbn_rank_env *e)
{
	static const struct {
		const char *rank, *local, *size;
		uint32_t source;
	} fam[] = {
		{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE",
		 CBN_RANK_OMPI},
		{"PMIX_RANK", NULL, NULL, CBN_RANK_PMIX},
		{"PMI_RANK", "MPI_LOCALRANKID", "PMI_SIZE", CBN_RANK_PMI},
		{"SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS", CBN_RANK_SLURM},
		{"RANK", "LOCAL_RANK", "WORLD_SIZE", CBN_RANK_TORCH},
	};
	unsigned i;

	e->rank = -1;
	e->local_rank = -1;
	e->world_size = 0;
	e->source = CBN_RANK_NONE;
	for (i = 0; i < sizeof(fam) / sizeof(fam[0]); i++) {
		int32_t r = cbn_rank_env_int(get(fam[i].rank)), sz;

		if (r < 0)
			continue;
		e->rank = r;
		e->source = fam[i].source;
		if (fam[i].local)
			e->local_rank = cbn_rank_env_int(get(fam[i].local));
		sz = fam[i].size ? cbn_rank_env_int(get(fam[i].size)) : -1;
		e->world_size = sz > r ? sz : 0;
		return;
	}
}

/*
 * 1 when path names a job launcher or an MPI daemon (mpirun, srun, torchrun,
 * orted, ...): never a rank itself, whatever its environment says.  A batch
 * script under Slurm carries SLURM_PROCID=0, and `cbottleneck -o DIR --
 * mpirun ...` run from it must follow every rank, not act as rank 0.
 */
static inline int cbn_rank_is_job_launcher(const char *path)
{
	static const char *const names[] = {
		"mpirun", "mpiexec", "orterun", "prterun", "prun", "mpiexec.hydra", "orted",
		"prted", "hydra_pmi_proxy", "srun", "torchrun", "deepspeed", "accelerate",
	};
	const char *b = path ? strrchr(path, '/') : NULL;
	unsigned i;

	b = b ? b + 1 : path;
	if (!b)
		return 0;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(b, names[i]))
			return 1;
	return 0;
}

#endif
