/*
 * unwind_check.h — the unwinder's self-check (CBN_UNWIND_CHECK=1): every
 * sample's stack, as the handler's cached unwind gave it, compared with a
 * full unwind of the same registers (unwind_check.c).
 */
#ifndef CBN_AGENT_UNWIND_CHECK_H
#define CBN_AGENT_UNWIND_CHECK_H

#include <stdint.h>
#include <ucontext.h>

#include "agent.h"

/* In the constructor: whether the check is on. */
void unwind_check_config(void) AGENT_HIDDEN;
int unwind_check_on(void) AGENT_HIDDEN;

/* SIGNAL-SAFE, between unwind_begin and unwind_end.  pcs[0..n): the
 * sample's native frames (pcs[0] interrupted in uc), recovered frames and
 * their markers included; truncated: n is the depth cap's, not the stack's
 * end; fast: the agent's own walk gave them (fastwalk.h), not libunwind.
 * The frames before the first marker are compared; the count goes to the
 * file header. */
void unwind_check_sample(const ucontext_t *uc, const uint64_t *pcs, int n, int truncated,
			 int fast)
	AGENT_HIDDEN;

/* Normal context, between unwind_begin and unwind_end, in a function that
 * took its own stack with the agent's walk: pcs[0..n), pcs[0] in that
 * function, compared from pcs[1] on with unw_backtrace's from the same
 * function (want: the most either took), counted as a sample compared. */
void unwind_check_walk(const uint64_t *pcs, int n, int want) AGENT_HIDDEN;

#endif
