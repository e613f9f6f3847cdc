/*
 * rank.c — the process's rank in a distributed job (docs/distributed.md): read
 * from the launcher's environment at start, it picks the session's rank
 * directory (SESSION/rank-NNNNN) and fills every file's header.rank;
 * libcbottleneck_mpi.so completes it at MPI_Init through cbn_agent_rank_*.
 * Normal context only (constructor, fork child, the MPI wrappers).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "floor.h"
#include "rank.h"
#include "agent_api.h"
#include "cbn_rank_env.h"

/* What this image knows of its rank.  Kept here, not only in the header, so a
 * fork child's new file starts with its parent's rank (even one learnt from
 * MPI_Comm_rank after start). */
static struct cbn_rank_env rank_env = {-1, -1, 0, CBN_RANK_NONE};
static char rank_host[64];

/* 1 when the last component of dir is "rank-" and five or more digits: a
 * session the launcher already chose for a rank (rank mode) or an image that
 * inherited a CBN_SESSION some agent had already extended. */
static int rank_is_rank_dir(const char *dir)
{
	const char *b = strrchr(dir, '/');
	size_t n;

	b = b ? b + 1 : dir;
	if (strncmp(b, "rank-", 5))
		return 0;
	b += 5;
	n = strspn(b, "0123456789");
	return n >= 5 && b[n] == '\0';
}

void rank_init(void)
{
	size_t len = strlen(agent.session);
	int tries;

	cbn_rank_from_env(getenv, &rank_env);
	if (cbn_rank_is_job_launcher(agent.exe)) {
		rank_env.rank = -1; /* stays at the top (cbn_rank_env.h says why) */
		rank_env.local_rank = -1;
		rank_env.world_size = 0;
		rank_env.source = CBN_RANK_NONE;
	}
	if (gethostname(rank_host, sizeof(rank_host) - 1) < 0)
		rank_host[0] = '\0';
	rank_host[sizeof(rank_host) - 1] = '\0';
	if (rank_env.rank < 0 || rank_is_rank_dir(agent.session))
		return;
	/*
	 * The image this one replaced may have left its file at the top, under
	 * the same pid (mpirun forks, the child execs the rank with an
	 * environment that lost our exec counter): number this image after it,
	 * so pid.seq stays unique across the session's directories.
	 */
	for (tries = 0; tries < 64; tries++) {
		char top[sizeof(agent.session) + 64];
		struct stat st;

		snprintf(top, sizeof(top), "%s/%u.%u%s", agent.session, agent.pid, agent.exec_seq,
			 CBN_FILE_EXT);
		if (stat(top, &st) < 0)
			break;
		agent.exec_seq++;
	}
	/* agent.session has room for 64 more bytes (agent_init checked). */
	snprintf(agent.session + len, sizeof(agent.session) - len, "/rank-%05d",
		 (int)rank_env.rank);
	/* Every process of the rank, and on a shared filesystem other ranks'
	 * launchers, may race here: whoever comes first creates it. */
	if (mkdir(agent.session, 0755) < 0 && errno != EEXIST) {
		agent.session[len] = '\0'; /* at the top, the header still says the rank */
		agent_say("cannot create %s/rank-%05d: %s; this rank's file stays at the top",
			  agent.session, (int)rank_env.rank, strerror(errno));
	}
}

void rank_header(struct cbn_file_header *h)
{
	struct cbn_rank_state *s = &h->rank;

	atomic_store(&s->rank, rank_env.rank);
	s->local_rank = rank_env.local_rank;
	atomic_store(&s->world_size, rank_env.world_size);
	atomic_store(&s->source, rank_env.source);
	memcpy(s->host, rank_host, sizeof(s->host));
}

/* --- agent_api.h: libcbottleneck_mpi.so ----------------------------------- */

#define AGENT_API __attribute__((visibility("default")))

AGENT_API struct cbn_rank_state *cbn_agent_rank_state(void)
{
	return agent.w.hdr ? &agent.w.hdr->rank : NULL;
}

AGENT_API void cbn_agent_rank_from_mpi(int rank, int world_size)
{
	struct cbn_rank_state *s = cbn_agent_rank_state();

	if (rank_env.source != CBN_RANK_NONE || rank < 0)
		return; /* the launcher's word stands */
	rank_env.rank = rank;
	rank_env.world_size = world_size > rank ? world_size : 0;
	rank_env.source = CBN_RANK_MPI;
	if (s)
		rank_header(agent.w.hdr);
}
