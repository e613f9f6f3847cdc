/*
 * pathcache.h — backtraces of call paths seen before, without unwinding
 * (pathcache.c; its entry point is cbn_agent_backtrace_cached, agent_api.h).
 */
#ifndef CBN_AGENT_PATHCACHE_H
#define CBN_AGENT_PATHCACHE_H

#include "agent.h"

/* Normal context: the calling thread ends; its cached paths go. */
void pathcache_thread_end(void) AGENT_HIDDEN;

#endif
