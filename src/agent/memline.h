/*
 * memline.h — the memory counters' timeline points the agent writes
 * (memline.c).  Only the lifecycle (agent.c: init, fork, exit, the layers'
 * API) calls these; the files below it ask through agent_mem_last_point
 * (floor.h).  Normal context.
 */
#ifndef CBN_AGENT_MEMLINE_H
#define CBN_AGENT_MEMLINE_H

#include "agent.h"

void agent_mem_start(void) AGENT_HIDDEN;
void agent_mem_counters(int rss) AGENT_HIDDEN;
void agent_mem_counters_now(void) AGENT_HIDDEN;
void agent_mem_after_fork_child(void) AGENT_HIDDEN;

#endif
