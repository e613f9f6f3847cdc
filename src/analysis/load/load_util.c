/*
 * load_util.c — what every file of the loader calls (load_int.h): its
 * out-of-memory policy, its warnings and its index of threads.  The
 * containers come from src/util; when one cannot grow, load_oom() returns
 * control to prof_load_with(), which frees the partial profile and reports
 * PROF_LOAD_NOMEM.  The loader runs single-threaded per call; the jump target
 * is per thread so two threads may load two sessions at once.  Below load.c
 * and the family loaders, so that they need not call each other back.
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* --- warnings ------------------------------------------------------------- */

void load_warn(struct load *L, const char *fmt, ...)
{
	struct profile *p = L->p;
	char buf[1024];
	va_list ap;
	size_t i;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	for (i = 0; i < p->nwarnings; i++)
		if (strcmp(p->warnings[i], buf) == 0)
			return;
	*LOAD_PUSH(p->warnings, p->nwarnings, L->capwarn) =
		load_arena_strndup(&L->arena, buf, strlen(buf));
}

/* --- threads --------------------------------------------------------------- */

struct thread_probe {
	const struct profile *p;
	uint32_t proc, tid;
};

static int thread_eq(const void *ctx, uint32_t v)
{
	const struct thread_probe *t = ctx;

	return t->p->threads[v].tid == t->tid && t->p->threads[v].process == t->proc;
}

uint32_t load_thread(struct load *L, uint32_t proc, uint32_t tid)
{
	struct profile *p = L->p;
	struct thread_probe probe = {p, proc, tid};
	uint64_t h = util_mix64(((uint64_t)proc << 32) | tid);
	uint32_t v = util_map_find(&L->threadmap, h, thread_eq, &probe);
	struct prof_thread *t;

	if (v != UINT32_MAX)
		return v;
	t = LOAD_PUSH(p->threads, p->nthreads, L->capthreads);
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->process = proc;
	t->name = "";
	v = (uint32_t)(p->nthreads - 1);
	load_map_put(&L->threadmap, h, v);
	return v;
}

uint32_t load_thread_find(struct load *L, uint32_t proc, uint32_t tid)
{
	struct thread_probe probe = {L->p, proc, tid};
	uint32_t v = util_map_find(&L->threadmap, util_mix64(((uint64_t)proc << 32) | tid),
				   thread_eq, &probe);

	return v == UINT32_MAX ? PROF_NONE : v;
}
