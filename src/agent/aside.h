/*
 * aside.h — run a function that needs a descriptor outside the program's
 * descriptor table (aside.c).  SIGNAL-SAFE.
 */
#ifndef CBN_AGENT_ASIDE_H
#define CBN_AGENT_ASIDE_H

#include "agent.h"

/* fn(arg) in a transient thread with a descriptor table of its own (clone
 * without CLONE_FILES, vfork-style), unless the process has no other thread
 * of the program's (agent_program_alone, floor.h).  Returns fn's result,
 * or -errno when the thread could not be made. */
int aside_run(int (*fn)(void *), void *arg) AGENT_HIDDEN;

#endif
