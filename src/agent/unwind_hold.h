/*
 * unwind_hold.h — the hold on unwinding (unwind_hold.c): unwinds counted,
 * held off around fork and dlclose, and the generation of unloads.  Under
 * both unwind.c and modules.c, calling nothing of the agent's.
 */
#ifndef CBN_UNWIND_HOLD_H
#define CBN_UNWIND_HOLD_H

#include "agent.h"

/* SIGNAL-SAFE.  unwind_enter: 1 when an unwind may start (then
 * unwind_leave after it), 0 while unwinding is held (fork, dlclose);
 * unwind_generation: bumped at each unload (unwind_invalidate). */
int unwind_enter(void) AGENT_HIDDEN;
void unwind_leave(void) AGENT_HIDDEN;
unsigned unwind_generation(void) AGENT_HIDDEN;

/* Normal context.  quiesce: hold new unwinds off and wait (bounded) for
 * those running, until release; idle: none runs (a retired module snapshot
 * may be freed); invalidate: a library was unloaded. */
void unwind_quiesce(void) AGENT_HIDDEN;
void unwind_release(void) AGENT_HIDDEN;
int unwind_idle(void) AGENT_HIDDEN;
void unwind_invalidate(void) AGENT_HIDDEN;
void unwind_after_fork_child(void) AGENT_HIDDEN;

#endif
