/*
 * jitmap.h — executable memory outside the modules (JIT code), recorded as
 * JIT_REGION for the launcher to name (jitmap.c).
 */
#ifndef CBN_AGENT_JITMAP_H
#define CBN_AGENT_JITMAP_H

/* Find the real mmap, mprotect and munmap: at start-up, before any sampler. */
void jitmap_init(void) __attribute__((visibility("hidden")));
/* A fork child's new file: JIT_REGION again for each region it inherited. */
void jitmap_replay(void) __attribute__((visibility("hidden")));

#endif
