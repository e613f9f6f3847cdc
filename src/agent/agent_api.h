/*
 * agent_api.h — what the preloaded agent (libcbottleneck.so) exports to the CUDA
 * layer (libcbottleneck_cuda.so).  The CUDA layer finds these with
 * dlsym(RTLD_DEFAULT, ...) so that it works (and does nothing) without the agent.
 *
 * None of these may be called from a signal handler.  All are thread-safe.
 */
#ifndef CBN_AGENT_API_H
#define CBN_AGENT_API_H

#include <stddef.h>
#include <stdint.h>

/* Copy one complete record (rec->size == size, a multiple of 8, <= 60 KiB) into
 * this process's session file.  Returns 0, or -1 when there is no session, the
 * file is full (counted) or the process is a forked child whose file is gone. */
int cbn_agent_write(const void *rec, size_t size);

/* Capture the calling thread's stack as return addresses, outermost last,
 * skipping `skip` innermost frames (the caller's own frames).  Returns the
 * number of pcs written (0 if unwinding is unavailable). */
int cbn_agent_backtrace(uint64_t *pcs, int max, int skip);

/* CLOCK_MONOTONIC in nanoseconds: the session's one clock. */
uint64_t cbn_agent_now(void);

/* Mark the calling thread as inside profiler code (CUPTI callbacks, buffer
 * completion) so a sampling signal there is counted, not unwound through
 * CUPTI's locks.  Calls nest. */
void cbn_agent_enter(void);
void cbn_agent_leave(void);

/* 1 when the calling process was forked (without exec) from a profiled parent
 * that had already started the CUDA layer: such a child must not touch CUDA. */
int cbn_agent_forked_child(void);

#endif
