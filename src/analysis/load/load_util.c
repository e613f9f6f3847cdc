/*
 * load_util.c — what every file of the loader calls (load_int.h): its
 * warnings and its index of threads.  Below load.c and the family loaders,
 * so that they need not call each other back.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load_int.h"

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
	{
		char *copy = load_strndup(L, buf, strlen(buf));
		char **slot = copy ? LOAD_PUSH(L, p->warnings, p->nwarnings, L->capwarn) :
				     NULL;

		if (slot)
			*slot = copy;
	}
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
	t = LOAD_PUSH(L, p->threads, p->nthreads, L->capthreads);
	if (!t)
		return PROF_NONE;
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->process = proc;
	t->name = "";
	v = (uint32_t)(p->nthreads - 1);
	return load_map_put(L, &L->threadmap, h, v) < 0 ? PROF_NONE : v;
}

uint32_t load_thread_find(struct load *L, uint32_t proc, uint32_t tid)
{
	struct thread_probe probe = {L->p, proc, tid};
	uint32_t v = util_map_find(&L->threadmap, util_mix64(((uint64_t)proc << 32) | tid),
				   thread_eq, &probe);

	return v == UINT32_MAX ? PROF_NONE : v;
}
