/*
 * load_util.c — the loader's out-of-memory policy (load_int.h): the containers
 * come from src/util; when one cannot grow, load_oom() returns control to
 * prof_load_with(), which frees the partial profile and reports
 * PROF_LOAD_NOMEM.  The loader runs single-threaded per call; the jump target
 * is per thread so two threads may load two sessions at once.
 */
#include <setjmp.h>
#include <stdlib.h>

#include "load_int.h"

_Thread_local jmp_buf *load_oom_target;

_Noreturn void load_oom(void)
{
	if (load_oom_target)
		longjmp(*load_oom_target, 1);
	/* Not inside prof_load_with: a caller bug, not a shortage to report. */
	abort();
}
