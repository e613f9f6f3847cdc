/*
 * load_util.c — the loader's out-of-memory policy (load_int.h): the containers
 * come from src/util; when one cannot grow, load_oom() returns control to
 * prof_load_with(), which frees the partial profile and reports
 * PROF_LOAD_NOMEM.  The loader runs single-threaded per call; the jump target
 * is per thread so two threads may load two sessions at once.
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdio.h>
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

/* 34567 -> "34,567" */
const char *load_thousands(char *buf, size_t len, uint64_t v)
{
	char tmp[32];
	int n = snprintf(tmp, sizeof(tmp), "%" PRIu64, v), i, o = 0;

	for (i = 0; i < n && (size_t)o + 2 < len; i++) {
		if (i > 0 && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = '\0';
	return buf;
}
