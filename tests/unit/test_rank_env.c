/*
 * test_rank_env.c — the rank read from a launcher's environment
 * (src/format/cbn_rank_env.h, docs/distributed.md): the families in their
 * order, their companions, and strict parsing (garbage is not a rank).
 */
#include "testlib.h"
#include "format/cbn_rank_env.h"

/* A fake environment: NAME=VALUE strings, NULL-terminated. */
static const char **fake;

static char *fake_get(const char *name)
{
	size_t n = strlen(name);

	for (const char **e = fake; e && *e; e++)
		if (!strncmp(*e, name, n) && (*e)[n] == '=')
			return (char *)*e + n + 1;
	return NULL;
}

static struct cbn_rank_env from(const char **env)
{
	struct cbn_rank_env e;

	fake = env;
	cbn_rank_from_env(fake_get, &e);
	return e;
}

int main(void)
{
	struct cbn_rank_env e;

	e = from((const char *[]){NULL});
	CHECK(e.rank == -1 && e.local_rank == -1 && e.world_size == 0 && e.source == CBN_RANK_NONE);

	e = from((const char *[]){"OMPI_COMM_WORLD_RANK=3", "OMPI_COMM_WORLD_LOCAL_RANK=1",
				  "OMPI_COMM_WORLD_SIZE=8", "RANK=5", NULL});
	CHECK(e.rank == 3 && e.local_rank == 1 && e.world_size == 8 && e.source == CBN_RANK_OMPI);

	e = from((const char *[]){"PMIX_RANK=7", "SLURM_PROCID=2", NULL});
	CHECK(e.rank == 7 && e.local_rank == -1 && e.world_size == 0 && e.source == CBN_RANK_PMIX);

	e = from((const char *[]){"PMI_RANK=4", "MPI_LOCALRANKID=0", "PMI_SIZE=6", NULL});
	CHECK(e.rank == 4 && e.local_rank == 0 && e.world_size == 6 && e.source == CBN_RANK_PMI);

	e = from((const char *[]){"SLURM_PROCID=63", "SLURM_LOCALID=7", "SLURM_NTASKS=64", NULL});
	CHECK(e.rank == 63 && e.local_rank == 7 && e.world_size == 64 &&
	      e.source == CBN_RANK_SLURM);

	e = from((const char *[]){"RANK=0", "LOCAL_RANK=0", "WORLD_SIZE=2", NULL});
	CHECK(e.rank == 0 && e.local_rank == 0 && e.world_size == 2 && e.source == CBN_RANK_TORCH);

	/* Garbage: not a rank, and the next family is tried. */
	e = from((const char *[]){"RANK=1x", NULL});
	CHECK(e.rank == -1 && e.source == CBN_RANK_NONE);
	e = from((const char *[]){"RANK=", NULL});
	CHECK(e.rank == -1);
	e = from((const char *[]){"RANK= 1", NULL});
	CHECK(e.rank == -1);
	e = from((const char *[]){"RANK=-1", NULL});
	CHECK(e.rank == -1);
	e = from((const char *[]){"RANK=99999999999", NULL});
	CHECK(e.rank == -1);
	e = from((const char *[]){"OMPI_COMM_WORLD_RANK=abc", "SLURM_PROCID=5", NULL});
	CHECK(e.rank == 5 && e.source == CBN_RANK_SLURM);

	/* Companions: garbage or a size not above the rank is dropped. */
	e = from((const char *[]){"RANK=3", "LOCAL_RANK=x", "WORLD_SIZE=3", NULL});
	CHECK(e.rank == 3 && e.local_rank == -1 && e.world_size == 0);
	e = from((const char *[]){"RANK=3", "WORLD_SIZE=4.0", NULL});
	CHECK(e.rank == 3 && e.world_size == 0);

	/* Job launchers are never ranks. */
	CHECK(cbn_rank_is_job_launcher("mpirun"));
	CHECK(cbn_rank_is_job_launcher("/usr/bin/orterun"));
	CHECK(cbn_rank_is_job_launcher("/opt/slurm/bin/srun"));
	CHECK(cbn_rank_is_job_launcher("torchrun"));
	CHECK(!cbn_rank_is_job_launcher("./train"));
	CHECK(!cbn_rank_is_job_launcher("/usr/bin/mpirun-wrapper"));
	CHECK(!cbn_rank_is_job_launcher(NULL));
	return test_result();
}
