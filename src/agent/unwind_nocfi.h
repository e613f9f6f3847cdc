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

/* SIGNAL-SAFE, between unwind_begin and unwind_end.  1 when every frame of
 * pcs[1..n) (return addresses) follows a call instruction in known code, as
 * a frame of the cached trace must; 0: one does not (a frame the trace got
 * wrong, or a signal frame's interrupted pc). */
int unwind_frames_plausible(const uint64_t *pcs, int n) AGENT_HIDDEN;

/* SIGNAL-SAFE, between unwind_begin and unwind_end.  The interrupted stack
 * of uc frame by frame with libunwind's cursor (no trace cache), up to the
 * first frame without CFI, at most cap; *truncated: cap was reached. */
int unwind_retrace(const ucontext_t *uc, uint64_t *pcs, int cap, int *truncated) AGENT_HIDDEN;

#endif
