/*
 * stacks.h — the sampling handler's own stack, one per sampled thread, and
 * the program's alternate stacks kept its own (stacks.c).  Normal context,
 * except agent_switch_top, which the handler's entry reads.
 */
#ifndef CBN_AGENT_STACKS_H
#define CBN_AGENT_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include "agent.h"

/* The calling thread's handler stack (fresh: a new thread); its own stack's
 * bounds (here: an address in its first frame, size: from its attributes;
 * 0, 0: the main thread's); its end. */
int stacks_thread_begin(int fresh) AGENT_HIDDEN;
void stacks_user_bounds(uintptr_t here, size_t size) AGENT_HIDDEN;
void stacks_thread_end(void) AGENT_HIDDEN;

/*
 * SIGNAL-SAFE.  Top of the agent stack to move to, or 0 when the handler
 * already runs on it (the kernel altstack is ours); read by sampler_entry
 * with a plain load.  It must always agree with the kernel's alternate
 * stack (moving to the top of the stack the kernel just put its frame on
 * would overwrite that frame), so stacks.c changes the two together with
 * every signal blocked, or before the thread's sampler is armed.
 */
extern __thread _Atomic uintptr_t agent_switch_top AGENT_TLS AGENT_HIDDEN;

#endif
