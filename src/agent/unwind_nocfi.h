/*
 * unwind_nocfi.h — unwinding past code without CFI (unwind_nocfi.c): by the
 * frame pointer or a bounded scan of the stack, above the private libunwind
 * (unwind.h) and the module snapshot (modules.h).
 */
#ifndef CBN_AGENT_UNWIND_NOCFI_H
#define CBN_AGENT_UNWIND_NOCFI_H

#include <stdint.h>
#include <ucontext.h>

#include "agent.h"

/* SIGNAL-SAFE, between unwind_begin and unwind_end.  pcs[0..n) a sample's
 * native frames (pcs[0] interrupted in uc); when the last has no unwind
 * information, go on by frame pointer or a bounded stack scan, with
 * CBN_UWM_* marker words.  Returns the new count, at most cap. */
int unwind_recover(const ucontext_t *uc, uint64_t *pcs, int n, int cap) AGENT_HIDDEN;
/* SIGNAL-SAFE, between unwind_begin and unwind_end.  The same for a stack
 * the agent's own walk gave (fastwalk.h), which stopped at pcs[n-1], a
 * frame without CFI whose registers are *at: the recovered callers are
 * walked on by the agent's walk, and by libunwind's cursor only from a
 * frame that walk cannot follow. */
struct fastwalk_cursor;
int unwind_recover_walk(const ucontext_t *uc, uint64_t *pcs, int n, int cap,
			const struct fastwalk_cursor *at) AGENT_HIDDEN;

#endif
