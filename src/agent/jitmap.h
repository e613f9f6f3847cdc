/*
 * jitmap.h — executable memory outside the modules (JIT code), recorded as
 * JIT_REGION for the launcher to name (jitmap.c): the program's mmap,
 * mprotect and munmap.  Normal context.
 */
#ifndef CBN_AGENT_JITMAP_H
#define CBN_AGENT_JITMAP_H

#include "agent.h"

/* Find the real mmap, mprotect and munmap: at start-up, before any sampler. */
void jitmap_init(void) AGENT_HIDDEN;
/* A fork child's new file: JIT_REGION again for each region it inherited. */
void jitmap_replay(void) AGENT_HIDDEN;

#endif
