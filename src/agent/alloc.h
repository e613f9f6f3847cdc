/*
 * alloc.h — the agent's own heap (alloc.c): mappings of its own, never the
 * program's allocator nor glibc's arenas; its lock around a fork.  In the
 * floor: it calls no other file of the agent.  Normal context only.
 */
#ifndef CBN_AGENT_ALLOC_H
#define CBN_AGENT_ALLOC_H

#include <stddef.h>

#include "agent.h"

void agent_alloc_lock(void) AGENT_HIDDEN;
void agent_alloc_unlock(void) AGENT_HIDDEN;
/* 1 when taken at once */
int agent_alloc_trylock(void) AGENT_HIDDEN;
void agent_alloc_after_fork_child(void) AGENT_HIDDEN;
void *agent_alloc(size_t n) AGENT_HIDDEN;
void *agent_calloc(size_t n, size_t size) AGENT_HIDDEN;
void *agent_realloc(void *p, size_t n) AGENT_HIDDEN;
void agent_free(void *p) AGENT_HIDDEN;
char *agent_strdup(const char *s) AGENT_HIDDEN;
/* A block (up to 64 bytes from a pool) one thread gives to a new one: freed
 * there without a malloc arena for it. */
void *agent_handoff_alloc(size_t n) AGENT_HIDDEN;
void agent_handoff_free(void *p) AGENT_HIDDEN;

#endif
