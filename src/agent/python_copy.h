/*
 * python_copy.h — each code object's names and line table, copied once by
 * the thread that meets it first (python_copy.c).
 */
#ifndef CBN_AGENT_PYTHON_COPY_H
#define CBN_AGENT_PYTHON_COPY_H

#include <stdint.h>

#include "agent.h"

/* SIGNAL-SAFE.  A PY_CODE record for each of ids not yet in this
 * generation's file, into the calling thread's names chunk (python_stack
 * calls it at the end of its walk; normal callers get every signal blocked
 * meanwhile). */
void python_copy_ids(const uint32_t *ids, int n) AGENT_HIDDEN;
/* Normal context, under the GIL: the same, where the caller knows the
 * object at code alive (its call is being counted, or it is dying with its
 * fields still there): its id is read directly instead of through
 * agent_vmread, nine system calls fewer a copy. */
void python_copy_live(const uint32_t *ids, int n, uintptr_t code) AGENT_HIDDEN;

/* Normal context.  Fork child: a new file, so copy again what the child
 * uses; exit: copy what is still pending. */
void python_after_fork_child(void) AGENT_HIDDEN;
void python_exit(void) AGENT_HIDDEN;

#endif
