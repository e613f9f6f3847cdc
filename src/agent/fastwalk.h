/*
 * fastwalk.h — the handler's own walk of the interrupted stack (fastwalk.c):
 * frame rules read from the modules' .eh_frame (cfi.h) and kept per thread,
 * each frame a lookup and two loads from the thread's live stack.  It stops
 * at code without CFI (the recovery goes on from there: unwind_nocfi.h);
 * where it cannot follow a frame otherwise, the caller unwinds with
 * libunwind.
 */
#ifndef CBN_AGENT_FASTWALK_H
#define CBN_AGENT_FASTWALK_H

#include <stdint.h>
#include <ucontext.h>

#include "agent.h"

/* Normal context, at start-up: CBN_FAST_UNWIND=0 turns the walk off. */
void fastwalk_config(void) AGENT_HIDDEN;

/*
 * SIGNAL-SAFE, between unwind_begin and unwind_end.  The stack interrupted
 * in uc into pcs: pcs[0] its pc, then the return addresses, at most max
 * (CBN_SAMPLE_TRUNCATED in *flags when there were more).  Returns how many,
 * or -1 when some frame is not one it follows (no module, no CFI, a rule
 * it does not keep, a read off the thread's live stack): then pcs holds
 * nothing usable and the caller unwinds the whole stack with libunwind.
 * The frames it gives are the ones libunwind's cursor gives (the unwinder's
 * self-check compares them, docs/agent.md).
 */
struct fastwalk_cursor;
int fastwalk_stack(const ucontext_t *uc, uint64_t *pcs, int max, int *flags,
		   struct fastwalk_cursor *stop) AGENT_HIDDEN;
/* The same from the registers of a frame at an exact pc: the handler's from
 * uc, or a function's own, read where the pc is (agent.c's stacks taken in
 * normal code, with in_agent raised so that no sample walks meanwhile).
 * stop, when not NULL: a walk that reaches a frame whose code has no CFI
 * (JIT code, a module's code without an FDE) returns its frames up to that
 * one, pcs[n - 1], with that frame's registers in *stop (for the recovery
 * past it, unwind_nocfi.h); otherwise stop->exact is -1.  With stop NULL
 * such a walk returns -1. */
int fastwalk_regs(uint64_t pc, uint64_t sp, uint64_t bp, uint64_t *pcs, int max, int *flags,
		  struct fastwalk_cursor *stop) AGENT_HIDDEN;

/* SIGNAL-SAFE, between unwind_begin and unwind_end: ask the cache for what
 * the thread's next sampled walk will read (the last one's frames: table
 * slots and stack words), before anything else of the sample, so that their
 * misses overlap; pc: the interrupted one. */
void fastwalk_prefetch(uint64_t pc) AGENT_HIDDEN;

/* SIGNAL-SAFE: FASTWALK_AUX_BYTES of the calling thread's own, zeroed at
 * first, in the walk's per-thread mapping (the Python walk's ids and trail: not
 * static TLS, of which an agent loaded by dlopen has little); map: create
 * the mapping if the thread has none.  NULL where it has none (a thread
 * under a sandbox of the program's, a failed mmap). */
#define FASTWALK_AUX_BYTES 9408
void *fastwalk_aux(int map) AGENT_HIDDEN;

/*
 * SIGNAL-SAFE, between unwind_begin and unwind_end: the walk a frame at a
 * time, with each frame's stack pointer (the kernel stacks' placement,
 * unwind_place).  A cursor starts at a frame's registers with exact set
 * (pc is where it was stopped, not a return address); copy, when not NULL,
 * holds the stack words [copy_lo, copy_hi) to read instead of the live
 * stack (the user stack at a kernel entry, as the kernel copied it).
 * fastwalk_step: 1 and the cursor is the caller's frame, 0 at the stack's
 * end, -1 when the walk cannot follow (then libunwind must), FASTWALK_NOCFI
 * when the cursor's frame has no CFI (the cursor is left there).
 */
#define FASTWALK_NOCFI (-2)
struct fastwalk_cursor {
	uint64_t pc, sp, bp;
	int bp_ok, exact;
	const unsigned char *copy;
	uint64_t copy_lo, copy_hi;
};
int fastwalk_step(struct fastwalk_cursor *c) AGENT_HIDDEN;

/* A cursor at a frame whose pc is a return address, reading the live stack. */
static inline void fastwalk_caller_at(struct fastwalk_cursor *c, uint64_t pc, uint64_t sp,
				      uint64_t bp)
{
	c->pc = pc;
	c->sp = sp;
	c->bp = bp;
	c->bp_ok = 1;
	c->exact = 0;
	c->copy = NULL;
	c->copy_lo = c->copy_hi = 0;
}

/* SIGNAL-SAFE.  Forget the calling thread's rules (a module was unloaded);
 * fastwalk_thread_end: and give their memory back. */
void fastwalk_flush(void) AGENT_HIDDEN;
void fastwalk_thread_end(void) AGENT_HIDDEN;

#endif
