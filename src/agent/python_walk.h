/*
 * python_walk.h — the calling thread's Python frames, read where it stands
 * (python_walk.c, docs/agent.md section 17).  SIGNAL-SAFE throughout.
 */
#ifndef CBN_AGENT_PYTHON_WALK_H
#define CBN_AGENT_PYTHON_WALK_H

#include <stdint.h>

#include "agent.h"

/* The calling thread's Python frames as CBN_PYW words, leaf first (at most
 * max; python_stack_for: the share of a budget of cap frames that Python
 * frames may take); 0 when the thread runs no Python or its chain fails a
 * check (counted by reason in header.python).  sp: the bottom of the live
 * part of this thread's stack.  python_active: an interpreter is read. */
int python_stack(uint64_t *out, int max, uintptr_t sp) AGENT_HIDDEN;
int python_stack_for(uint64_t *out, int cap, uintptr_t sp) AGENT_HIDDEN;
/* SIGNAL-SAFE: how many code objects the calling thread's last walk met
 * first and copied the names of (0 in the steady state). */
int python_last_fresh(void) AGENT_HIDDEN;
int python_active(void) AGENT_HIDDEN;
/* SIGNAL-SAFE: ask the cache for the calling thread's last walk's frames and
 * code objects, which its next walk will mostly read again (a prefetch
 * never faults: stale addresses cost nothing but the request). */
void python_prefetch(void) AGENT_HIDDEN;

#endif
