/*
 * wait_sites.c — where the run waited (wait.h): the call sites of the waits,
 * the contended locks with who held them, and the wall-clock view per
 * function (on and off the CPU).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "wait_int.h"

/* --- sites -------------------------------------------------------------------- */

struct site_ent {
	uint32_t func, line, call, stack, thread, kind;
	const char *file;
	uint64_t ns;
};

static int site_key_cmp(const struct site_ent *a, const struct site_ent *b)
{
	if (a->func != b->func)
		return a->func < b->func ? -1 : 1;
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	if (a->call != b->call)
		return a->call < b->call ? -1 : 1;
	return wait_cmp_str(a->file, b->file);
}

static int site_ent_cmp(const void *x, const void *y)
{
	const struct site_ent *a = x, *b = y;
	int c = site_key_cmp(a, b);

	if (c)
		return c;
	return a->stack < b->stack ? -1 : a->stack > b->stack;
}

static int site_cmp(const void *x, const void *y)
{
	const struct wait_site *a = x, *b = y;
	int c = wait_cmp_u64_desc(a->ns, b->ns);

	return c ? c : (a->func < b->func ? -1 : a->func > b->func);
}

/* The call site of record r (no stack: one "[no stack]" site). */
static void site_fill(const struct profile *p, const uint16_t *cls, const struct prof_offcpu *r,
		      struct site_ent *e)
{
	const struct prof_frame *fr, *s;
	uint32_t n = 0;

	memset(e, 0, sizeof(*e));
	e->func = e->call = PROF_NONE;
	e->file = "";
	e->stack = r->stack < p->nstacks ? r->stack : PROF_NONE;
	e->thread = r->thread;
	e->kind = r->kind < CBN_OFF_NKINDS ? r->kind : CBN_OFF_OTHER;
	e->ns = r->weight_ns;
	if (!(fr = stackw_frames(p, r->stack, &n)))
		return;
	s = wait_site_of(p, cls, fr, n, &e->call);
	e->func = s->func < p->nfuncs ? s->func : PROF_NONE;
	e->line = s->line;
	e->file = s->file ? s->file : "";
}

int wait_build_sites(const struct profile *p, const uint16_t *cls, struct wait_analysis *w)
{
	struct site_ent *e;
	uint32_t *stamp;
	size_t i, j, n = 0, ns = 0;
	int ret = -ENOMEM;

	e = calloc(p->noffcpu ? p->noffcpu : 1, sizeof(*e));
	stamp = calloc(p->nthreads ? p->nthreads : 1, sizeof(*stamp));
	if (!e || !stamp)
		goto out;
	for (i = 0; i < p->noffcpu; i++) {
		const struct prof_offcpu *r = &p->offcpu[i];

		if (r->thread >= p->nthreads || r->kind == CBN_OFF_RUNQ || !r->weight_ns)
			continue;
		site_fill(p, cls, r, &e[n++]);
	}
	if (n)
		qsort(e, n, sizeof(*e), site_ent_cmp);
	for (i = 0; i < n; i = j)
		for (j = i, ns++; j < n && site_key_cmp(&e[i], &e[j]) == 0; j++)
			;
	if (ns && !(w->sites = calloc(ns, sizeof(*w->sites))))
		goto out;
	for (i = 0; i < n; i = j) {
		struct wait_site *s;
		uint64_t best = 0, run = 0;
		uint32_t k;

		for (j = i; j < n && site_key_cmp(&e[i], &e[j]) == 0; j++)
			;
		s = &w->sites[w->nsites++];
		memset(s, 0, sizeof(*s));
		s->func = e[i].func;
		s->file = e[i].file;
		s->line = e[i].line;
		s->call = e[i].call;
		s->stack = PROF_NONE;
		for (k = (uint32_t)i; k < j; k++) {
			s->ns += e[k].ns;
			s->kind_ns[e[k].kind] += e[k].ns;
			if (stamp[e[k].thread] != (uint32_t)w->nsites) {
				stamp[e[k].thread] = (uint32_t)w->nsites;
				s->nthreads++;
			}
			/* the heaviest stack: entries are sorted by stack within the site */
			run = (k > i && e[k].stack == e[k - 1].stack) ? run + e[k].ns : e[k].ns;
			if (run > best && e[k].stack != PROF_NONE) {
				best = run;
				s->stack = e[k].stack;
			}
		}
		for (k = 0; k < CBN_OFF_NKINDS; k++)
			if (s->kind_ns[k] > s->kind_ns[s->kind])
				s->kind = k;
	}
	if (w->nsites)
		qsort(w->sites, w->nsites, sizeof(*w->sites), site_cmp);
	ret = 0;
out:
	free(e);
	free(stamp);
	return ret;
}

/* --- locks ------------------------------------------------------------------- */

struct lock_ent {
	uint64_t addr, start, end, ns;
	uint32_t process, thread, owner, stack;
};

static int lock_ent_cmp(const void *x, const void *y)
{
	const struct lock_ent *a = x, *b = y;

	if (a->process != b->process)
		return a->process < b->process ? -1 : 1;
	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->stack < b->stack ? -1 : a->stack > b->stack;
}

static int lock_stack_cmp(const void *x, const void *y)
{
	const struct lock_ent *a = x, *b = y;

	return a->stack < b->stack ? -1 : a->stack > b->stack;
}

static int lock_cmp(const void *x, const void *y)
{
	const struct wait_lock *a = x, *b = y;
	int c = wait_cmp_u64_desc(a->wait_ns, b->wait_ns);

	if (c)
		return c;
	if (a->process != b->process)
		return a->process < b->process ? -1 : 1;
	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

/* What lock_fill() works in, sized for every lock at once: per thread, its
 * part of the waits it made others do and the lock it was last counted
 * for; the waits' stretches. */
struct lock_scratch {
	uint64_t *own_ns;
	uint32_t *stamp;
	struct util_ival *iv;
};

/* One lock: e[0 .. n) are its waits, by start. */
static void lock_fill(const struct profile *p, const uint16_t *cls, struct lock_ent *e, size_t n,
		      struct wait_lock *l, const struct lock_scratch *sc, uint32_t mark)
{
	uint64_t *own_ns = sc->own_ns, best = 0, run = 0;
	uint32_t *stamp = sc->stamp;
	size_t k;

	memset(l, 0, sizeof(*l));
	l->addr = e[0].addr;
	l->process = e[0].process;
	l->func = l->holder = l->stack = PROF_NONE;
	l->file = "";
	for (k = 0; k < n; k++) {
		uint64_t s = e[k].start, t = e[k].end > s ? e[k].end : s;

		l->wait_ns += e[k].ns;
		if (stamp[e[k].thread] != mark) {
			stamp[e[k].thread] = mark;
			l->waiters++;
		}
		sc->iv[k] = (struct util_ival){ s, t };
		if (e[k].owner < p->nthreads && e[k].owner != e[k].thread)
			own_ns[e[k].owner] += e[k].ns;
	}
	util_ival_union(sc->iv, n, &l->contended_ns);
	for (k = 0; k < n; k++) {
		uint32_t o = e[k].owner;

		if (o < p->nthreads && own_ns[o] &&
		    (l->holder == PROF_NONE || own_ns[o] > own_ns[l->holder] ||
		     (own_ns[o] == own_ns[l->holder] && o < l->holder)))
			l->holder = o;
	}
	if (l->holder != PROF_NONE && l->wait_ns)
		l->holder_share = (double)own_ns[l->holder] / (double)l->wait_ns;
	for (k = 0; k < n; k++)
		if (e[k].owner < p->nthreads)
			own_ns[e[k].owner] = 0;
	/* the heaviest waiting stack, and its call site */
	qsort(e, n, sizeof(*e), lock_stack_cmp);
	for (k = 0; k < n; k++) {
		run = (k && e[k].stack == e[k - 1].stack) ? run + e[k].ns : e[k].ns;
		if (run > best && e[k].stack != PROF_NONE) {
			best = run;
			l->stack = e[k].stack;
		}
	}
	if (l->stack != PROF_NONE) {
		const struct prof_frame *fr, *s;
		uint32_t nf = 0, call;

		if ((fr = stackw_frames(p, l->stack, &nf))) {
			s = wait_site_of(p, cls, fr, nf, &call);
			l->func = s->func < p->nfuncs ? s->func : PROF_NONE;
			l->file = s->file ? s->file : "";
			l->line = s->line;
		}
	}
}

int wait_build_locks(const struct profile *p, const uint16_t *cls, const uint8_t *is_lock,
		     struct wait_analysis *w)
{
	struct lock_ent *e;
	struct lock_scratch sc;
	size_t i, j, n = 0, nl = 0;
	int ret = -ENOMEM;

	e = calloc(p->noffcpu ? p->noffcpu : 1, sizeof(*e));
	sc.own_ns = calloc(p->nthreads ? p->nthreads : 1, sizeof(*sc.own_ns));
	sc.stamp = calloc(p->nthreads ? p->nthreads : 1, sizeof(*sc.stamp));
	sc.iv = calloc(p->noffcpu ? p->noffcpu : 1, sizeof(*sc.iv));
	if (!e || !sc.own_ns || !sc.stamp || !sc.iv)
		goto out;
	for (i = 0; i < p->noffcpu; i++) {
		const struct prof_offcpu *r = &p->offcpu[i];

		if (!is_lock[i])
			continue;
		e[n++] = (struct lock_ent){ .addr = r->addr, .start = r->start, .end = r->end,
					    .ns = r->weight_ns, .process = r->process,
					    .thread = r->thread, .owner = r->owner_thread,
					    .stack = r->stack < p->nstacks ? r->stack : PROF_NONE };
	}
	if (n)
		qsort(e, n, sizeof(*e), lock_ent_cmp);
	for (i = 0; i < n; i = j)
		for (j = i, nl++; j < n && e[j].process == e[i].process && e[j].addr == e[i].addr; j++)
			;
	if (nl && !(w->locks = calloc(nl, sizeof(*w->locks))))
		goto out;
	for (i = 0; i < n; i = j) {
		for (j = i; j < n && e[j].process == e[i].process && e[j].addr == e[i].addr; j++)
			;
		lock_fill(p, cls, &e[i], j - i, &w->locks[w->nlocks], &sc, (uint32_t)w->nlocks + 1);
		w->nlocks++;
	}
	if (w->nlocks)
		qsort(w->locks, w->nlocks, sizeof(*w->locks), lock_cmp);
	ret = 0;
out:
	free(e);
	free(sc.own_ns);
	free(sc.stamp);
	free(sc.iv);
	return ret;
}

/* --- the wall-clock view ------------------------------------------------------- */

static int func_cmp(const void *x, const void *y)
{
	const struct wait_func *a = x, *b = y;
	int c = wait_cmp_u64_desc(a->total_on + a->total_off, b->total_on + b->total_off);

	return c ? c : (a->func < b->func ? -1 : a->func > b->func);
}

/* The frames every stack of a process or thread starts with (glibc's and
 * the loader's): each one's total is its thread's whole life, so at the top
 * of the wall-clock view they would say nothing. */
static int entry_frame(const struct prof_func *f)
{
	static const char *const names[] = {
		"_start", "__libc_start_main", "__libc_start_main_impl", "__libc_start_call_main",
		"start_thread", "clone", "clone3", "__clone", "__clone3", "__clone_internal",
	};
	size_t i;

	for (i = 0; f->name && i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(f->name, names[i]))
			return 1;
	return 0;
}

int wait_build_funcs(const struct profile *p, const uint64_t *on, const uint64_t *off,
		     struct wait_analysis *w)
{
	struct wait_func *f;
	uint32_t *stamp;
	size_t i, n;
	int ret = -ENOMEM;

	f = calloc(p->nfuncs ? p->nfuncs : 1, sizeof(*f));
	stamp = calloc(p->nfuncs ? p->nfuncs : 1, sizeof(*stamp));
	if (!f || !stamp)
		goto out;
	for (i = 0; i < p->nstacks; i++) {
		const struct prof_frame *fr;
		uint32_t nf = 0, k;

		if ((!on[i] && !off[i]) || !(fr = stackw_frames(p, (uint32_t)i, &nf)))
			continue;
		if (fr[0].func < p->nfuncs) {
			f[fr[0].func].self_on += on[i];
			f[fr[0].func].self_off += off[i];
		}
		/* each function once per stack: recursion does not count twice */
		for (k = 0; k < nf; k++) {
			uint32_t fn = fr[k].func;

			if (fn >= p->nfuncs || stamp[fn] == (uint32_t)i + 1)
				continue;
			stamp[fn] = (uint32_t)i + 1;
			f[fn].total_on += on[i];
			f[fn].total_off += off[i];
		}
	}
	for (i = 0, n = 0; i < p->nfuncs; i++) {
		if (!f[i].total_on && !f[i].total_off)
			continue;
		if (!f[i].self_on && !f[i].self_off && entry_frame(&p->funcs[i])) {
			w->nentry_funcs++;
			continue;
		}
		f[n] = f[i];
		f[n++].func = (uint32_t)i;
	}
	if (n)
		qsort(f, n, sizeof(*f), func_cmp);
	w->funcs = f;
	w->nfuncs = n;
	f = NULL;
	ret = 0;
out:
	free(f);
	free(stamp);
	return ret;
}

