/*
 * sandbox.h — the program's seccomp sandboxes (sandbox.c; whether the
 * calling thread is under one: agent_sandboxed, floor.h).  Normal context.
 */
#ifndef CBN_AGENT_SANDBOX_H
#define CBN_AGENT_SANDBOX_H

#include "agent.h"

/* A new thread of a filtered thread: filtered too. */
void sandbox_thread_inherit(void) AGENT_HIDDEN;
/* The calling thread is about to end (or exec): the allocation hooks'
 * pending counts. */
void sandbox_mem_thread_end(void) AGENT_HIDDEN;
/* prctl(PR_SET_SECCOMP, a[0], ...) through the prctl interposer
 * (threads_create.c): the real call in between. */
int sandbox_prctl(int (*real)(int, ...), unsigned long a[4]) AGENT_HIDDEN;

#endif
