/*
 * threads_create.h — the pthread_create interposer and the names threads
 * are given (threads_create.c).  Normal context.
 */
#ifndef CBN_AGENT_THREADS_CREATE_H
#define CBN_AGENT_THREADS_CREATE_H

#include <pthread.h>

#include "agent.h"

/* The real pthread_create (0, or -1 when not found). */
int threads_init(void) AGENT_HIDDEN;
int threads_real_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
	AGENT_HIDDEN;
/* Our own pthread_create, whatever the symbol resolves to globally: the
 * constructor compares the two to tell whether we are really preloaded. */
extern int threads_self_create(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *)
	AGENT_HIDDEN;

#endif
