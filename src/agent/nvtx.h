/*
 * nvtx.h — NVTX injection (nvtx.c): NVTX ranges and marks as RANGE records.
 * Normal context.
 */
#ifndef CBN_AGENT_NVTX_H
#define CBN_AGENT_NVTX_H

#include "agent.h"

/* The calling thread ends: its range stack goes; a fork child's lock. */
void nvtx_thread_end(void) AGENT_HIDDEN;
void nvtx_after_fork_child(void) AGENT_HIDDEN;

#endif
