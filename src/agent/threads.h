/*
 * threads.h — the registry of the target's live threads the agent follows
 * (threads.c): registered by the sampler at a thread's begin and end, read
 * for names set from another thread and at exit.  Above the floor only.
 * Normal context.
 */
#ifndef CBN_AGENT_THREADS_H
#define CBN_AGENT_THREADS_H

#include <pthread.h>
#include <stdint.h>

#include "agent.h"

void threads_register(pthread_t th, uint32_t tid, uint64_t cpu0, struct agent_thread *t)
	AGENT_HIDDEN;
void threads_unregister(pthread_t th) AGENT_HIDDEN;
/* fn on every live thread, under the table's lock (fn must not call back
 * into threads.c); returns the threads visited. */
int threads_each(void (*fn)(struct agent_thread *t, uint32_t tid, void *arg), void *arg)
	AGENT_HIDDEN;
/* At exit: a THREAD_END for every thread still alive; quick (at _exit):
 * only if the table's lock is free at once (returns 0 if not). */
int threads_end_all(int quick) AGENT_HIDDEN;
void threads_after_fork_child(void) AGENT_HIDDEN;
/* Live threads we know of; the tid of one (0: unknown). */
int threads_count(void) AGENT_HIDDEN;
uint32_t threads_lookup(pthread_t th) AGENT_HIDDEN;

#endif
