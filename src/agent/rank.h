/*
 * rank.h — the MPI rank of this process (rank.c).  Normal context.
 */
#ifndef CBN_AGENT_RANK_H
#define CBN_AGENT_RANK_H

#include "agent.h"

/* The rank from the environment and the session's rank directory (before
 * the file is opened), and a new file's header.rank. */
void rank_init(void) AGENT_HIDDEN;
void rank_header(struct cbn_file_header *h) AGENT_HIDDEN;

#endif
