/*
 * python_calls.h — exact call counts of Python functions (--calls,
 * python_calls.c, docs/agent.md section 17).
 */
#ifndef CBN_AGENT_PYTHON_CALLS_H
#define CBN_AGENT_PYTHON_CALLS_H

#include "agent.h"

/* Normal context.  python_calls_config reads CBN_PYCALLS (constructor, after
 * python_config) and asks the signal interposer to say when a handler is
 * installed; python_calls_flush writes what the session file does not hold
 * yet (exit, before an exec); python_calls_after_fork_child starts the
 * child's counts from zero (its own file). */
void python_calls_config(void) AGENT_HIDDEN;
void python_calls_flush(void) AGENT_HIDDEN;
/* _exit (no exit handler, no atexit: os._exit, every multiprocessing child
 * it forks): the names of what was counted, then the counts. */
void python_calls_quick_exit(void) AGENT_HIDDEN;
void python_calls_after_fork_child(void) AGENT_HIDDEN;

#endif
