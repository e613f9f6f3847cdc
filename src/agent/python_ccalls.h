/*
 * python_ccalls.h — exact calls of builtins and methods of C types
 * (--calls, python_ccalls.c), for python_calls.c.
 */
#ifndef CBN_AGENT_PYTHON_CCALLS_H
#define CBN_AGENT_PYTHON_CCALLS_H

#include "agent.h"

struct py_obj;

/* Normal context, under the GIL.  python_ccalls_init finds the CPython
 * functions the names need (through sym, in the interpreter's module mod)
 * and maps the table: 0, or -1 (then nothing is counted).  _call and
 * _return take the builtin function object of a C_CALL and of its
 * C_RETURN or C_EXCEPTION.  The counts are in the session file
 * (python_counts_record); _flush writes those that found no room there
 * (PY_CCALLS records), _after_fork_child starts the child's from zero. */
int python_ccalls_init(void *(*sym)(void *mod, const char *name), void *mod) AGENT_HIDDEN;
void python_ccalls_call(struct py_obj *fn) AGENT_HIDDEN;
void python_ccalls_return(struct py_obj *fn) AGENT_HIDDEN;
/* 3.12+: a CALL (call 1), C_RETURN or C_RAISE (call 0) event's callable
 * and first argument (missing: sys.monitoring.MISSING). */
void python_ccalls_event(struct py_obj *callable, struct py_obj *self, struct py_obj *missing,
			 int call) AGENT_HIDDEN;
void python_ccalls_flush(void) AGENT_HIDDEN;
void python_ccalls_after_fork_child(void) AGENT_HIDDEN;

#endif
