/*
 * mem_wrap.c — which of the program's functions only forward to the
 * allocator (xmalloc, sqlite3Malloc, Perl_safesysmalloc: an allocation
 * site is their caller), found from the sampled allocations' stacks or
 * named with --alloc-fn, and which keep memory until exit on purpose (an
 * arena or a garbage collector: gcc's ggc, obstacks, sqlite's page cache,
 * pymalloc's arenas), whose blocks at exit are no leak.  A wrapper found in
 * one program makes its namesakes in the others wrappers too (wrap_by_name).
 * Launcher side.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mem_int.h"

/* A wrapper's name says what it does; a function without a symbol (a
 * stripped program's xmalloc) says nothing, so the shape alone decides. */
static int alloc_name(const struct prof_func *f)
{
	static const char *const words[] = { "alloc", "strdup", "strndup", "memdup" };
	char low[128];
	size_t i, n;

	if (f->flags & PROF_FUNC_NOSYM)
		return 1;
	if (!f->name || (f->flags & PROF_FUNC_PYTHON))
		return 0;
	for (n = 0; f->name[n] && f->name[n] != '(' && n + 1 < sizeof(low); n++)
		low[n] = (char)tolower((unsigned char)f->name[n]);
	low[n] = '\0';
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strstr(low, words[i]))
			return 1;
	return 0;
}

/* The allocators that keep their memory until the program exits on
 * purpose, by name (prefixes); their blocks at exit are their heap, not a
 * leak. */
static int arena_name(const char *name)
{
	static const char *const prefixes[] = {
		"ggc_",                 /* GCC's garbage-collected heap */
		"_obstack_", "obstack_", /* GNU obstacks */
		"pcache1", "sqlite3PageMalloc", "sqlite3PcacheAlloc", /* sqlite's page cache */
		"new_arena", "_PyObject_Arena", "pymalloc_", "allocate_from_new_pool",
		"_PyObject_Malloc", "_PyObject_Calloc", "_PyObject_Realloc", /* pymalloc */
		"Perl_more_bodies", "Perl_more_sv", "S_more_sv", /* perl's SV arenas */
		"g_slice_",             /* GLib's slices */
		"apr_palloc", "ngx_palloc", "talloc_", /* pools */
	};
	size_t i;

	if (!name)
		return 0;
	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return 1;
	return 0;
}

/* The name a user gives --alloc-fn matches a function by its name without
 * parameters ("xmalloc" matches "xmalloc(unsigned long)"). */
static int user_name(const struct prof_func *f, const char *const *fns, size_t n)
{
	size_t i, len;

	if (!f->name)
		return 0;
	len = strcspn(f->name, "(");
	for (i = 0; i < n; i++)
		if (strlen(fns[i]) == len && !strncmp(f->name, fns[i], len))
			return 1;
	return 0;
}

/* What one pass learns of each function in the frames just above the
 * allocator (and the wrappers found so far), MEM_WRAP_DEPTH deep: from which
 * return addresses it called down (the first three, with the stacks of
 * each), and which functions called it. */
struct seen {
	uint64_t pc[3];          /* the first three return addresses it called down from */
	uint32_t n[3];           /* the stacks with each */
	uint32_t other;          /* ... with any other */
	uint32_t caller;         /* the first caller, PROF_NONE at a stack's root */
	uint8_t callers2;        /* a second caller was seen */
	uint8_t used;            /* seen in those frames */
	uint8_t site;            /* seen in the first of them: a site candidate */
};

static int skip(const struct profile *p, const uint8_t *w, const struct prof_frame *fr)
{
	return mem_frame_is_allocator(p, fr) || (fr->func < p->nfuncs && (w[fr->func] & MW_SKIP));
}

static void seen_add(struct seen *s, uint64_t pc, uint32_t caller, int site)
{
	size_t i;

	if (!s->used) {
		*s = (struct seen){ .caller = caller, .used = 1 };
	} else {
		s->callers2 |= s->caller != caller;
	}
	for (i = 0; i < 3 && s->n[i] && s->pc[i] != pc; i++)
		;
	if (i == 3) {
		s->other++;
	} else {
		s->pc[i] = pc;
		s->n[i]++;
	}
	s->site |= (uint8_t)site;
}

/*
 * Whether a function called down from max places at most: its stacks at
 * any other place are strays, MEM_WRAP_STRAY of them at most.  A few
 * allocation stacks hold a pc that is no return address (4 of 328 of
 * cc1's xrealloc stacks in a gcc -O2 -c run at xrealloc+0x4, just past
 * its endbr64, or at its malloc call's own address beside the return
 * address after it), and a wrapper taken for three places is no wrapper.
 */
#define MEM_WRAP_STRAY 0.05

static int few_places(const struct seen *s, unsigned max)
{
	uint32_t n[3] = { s->n[0], s->n[1], s->n[2] }, t, all = s->other, out = s->other;
	size_t i, j;

	for (i = 0; i < 3; i++) /* most first */
		for (j = i + 1; j < 3; j++)
			if (n[j] > n[i]) {
				t = n[i];
				n[i] = n[j];
				n[j] = t;
			}
	for (i = 0; i < 3; i++) {
		all += n[i];
		out += i >= max ? n[i] : 0;
	}
	return (double)out <= MEM_WRAP_STRAY * (double)all;
}

/* One pass over the allocation stacks: each one's frames above the
 * allocator, their return addresses and callers. */
static void wrap_pass(const struct profile *p, const uint8_t *w, const uint8_t *used_stack,
		      struct seen *s)
{
	size_t i;

	memset(s, 0, p->nfuncs * sizeof(*s));
	for (i = 0; i < p->nstacks; i++) {
		const struct prof_stack *st = &p->stacks[i];
		const struct prof_frame *fr;
		uint32_t k, j;

		if (!used_stack[i] || (uint64_t)st->first + st->nframes > p->nframes)
			continue;
		fr = &p->frames[st->first];
		for (k = 0; k < st->nframes && skip(p, w, &fr[k]); k++)
			;
		/* an allocation's stack starts at the allocator's caller (the
		 * hooks are no frame of it): frame k called it, or a wrapper */
		if (k == st->nframes)
			continue;
		for (j = k; j < st->nframes && j < k + MEM_WRAP_DEPTH; j++) {
			if (fr[j].func >= p->nfuncs)
				break;
			seen_add(&s[fr[j].func], fr[j].addr,
				 j + 1 < st->nframes ? fr[j + 1].func : PROF_NONE, j == k);
		}
	}
}

/* How many places a wrapper may call the allocator from: xrealloc calls
 * malloc or realloc, a stripped program's function has nothing else to
 * tell it by, so one. */
static unsigned max_pcs(const struct prof_func *f)
{
	return f->flags & PROF_FUNC_NOSYM ? 1 : 2;
}

static int wraps(const struct profile *p, const struct seen *s, uint32_t f)
{
	return few_places(&s[f], max_pcs(&p->funcs[f]));
}

/*
 * A wrapper forwards to the allocator from one place (two for a named one) and serves several
 * callers (xmalloc); or, one call deep, a private helper that only the
 * next one up calls (sqlite's static sqlite3MemMalloc under
 * sqlite3Malloc): a chain of one-caller frames, each calling down from
 * one place, that ends in such a wrapper.  The wrapper's name must say
 * allocation, or it has no symbol.
 */
static int wrap_mark(const struct profile *p, uint8_t *w, const struct seen *s)
{
	size_t f;
	int found = 0;

	for (f = 0; f < p->nfuncs; f++) {
		uint32_t g = (uint32_t)f, depth;

		if (!s[f].site || (w[f] & MW_SKIP) || !wraps(p, s, (uint32_t)f))
			continue;
		/* up the one-caller chain to where the callers fan in */
		for (depth = 0; depth < MEM_WRAP_DEPTH; depth++) {
			if (g >= p->nfuncs || !s[g].used || !wraps(p, s, g)) {
				g = PROF_NONE;
				break;
			}
			if (s[g].callers2)
				break;
			g = s[g].caller;
		}
		/* a stripped wrapper says nothing by its name: a named function
		 * under it (sqlite3VdbeMemGrow) has a name that would say it
		 * was a helper, so only a stripped one goes with it */
		if (depth == MEM_WRAP_DEPTH || g >= p->nfuncs || !alloc_name(&p->funcs[g]) ||
		    (g != f && (p->funcs[g].flags & PROF_FUNC_NOSYM) &&
		     !(p->funcs[f].flags & PROF_FUNC_NOSYM)))
			continue;
		w[f] |= MW_WRAPPER;
		found = 1;
	}
	return found;
}

/* Same name, parameters aside ("xmalloc" and "xmalloc(unsigned long)"). */
static int same_bare(const char *a, const char *b)
{
	size_t n = strcspn(a, "(");

	return n == strcspn(b, "(") && !strncmp(a, b, n);
}

/*
 * Another program's copy of a wrapper found in the run (libiberty's xmalloc
 * in gcc's driver beside cc1's, sqlite3Malloc in two programs of a script)
 * is one too where few of its allocations were sampled and one caller is
 * all they show: a named function of the wrapper's name that calls the
 * allocator itself from as few places.  Stripped functions' names are
 * their addresses, so they never match.
 */
static void wrap_by_name(const struct profile *p, uint8_t *w, const struct seen *s)
{
	uint32_t *found;
	size_t f, k, n = 0;

	for (f = 0; f < p->nfuncs; f++)
		n += (w[f] & MW_WRAPPER) && p->funcs[f].name &&
		     !(p->funcs[f].flags & PROF_FUNC_NOSYM);
	if (!n || !(found = malloc(n * sizeof(*found))))
		return; /* out of memory: the samples' shape alone decides */
	for (f = 0, n = 0; f < p->nfuncs; f++)
		if ((w[f] & MW_WRAPPER) && p->funcs[f].name &&
		    !(p->funcs[f].flags & PROF_FUNC_NOSYM))
			found[n++] = (uint32_t)f;
	for (f = 0; f < p->nfuncs; f++) {
		const struct prof_func *fn = &p->funcs[f];

		if ((w[f] & MW_SKIP) || !s[f].site || !fn->name || (fn->flags & PROF_FUNC_NOSYM) ||
		    !wraps(p, s, (uint32_t)f))
			continue;
		for (k = 0; k < n; k++)
			if (same_bare(fn->name, p->funcs[found[k]].name)) {
				w[f] |= MW_WRAPPER;
				break;
			}
	}
	free(found);
}

int mem_wrap_find(const struct profile *p, const char *const *fns, size_t nfns, uint8_t **out)
{
	uint8_t *w = calloc(p->nfuncs ? p->nfuncs : 1, 1), *used = NULL;
	struct seen *s = calloc(p->nfuncs ? p->nfuncs : 1, sizeof(*s));
	size_t i;
	int pass;

	*out = NULL;
	if (!w || !s || !(used = calloc(p->nstacks ? p->nstacks : 1, 1))) {
		free(w);
		free(s);
		return -ENOMEM;
	}
	for (i = 0; i < p->nfuncs; i++) {
		if (user_name(&p->funcs[i], fns, nfns))
			w[i] |= MW_USER;
		if (arena_name(p->funcs[i].name))
			w[i] |= MW_ARENA;
	}
	for (i = 0; i < p->nmem_allocs; i++)
		if (p->mem_allocs[i].stack < p->nstacks)
			used[p->mem_allocs[i].stack] = 1;
	/* layer by layer: sqlite3DbMallocRaw over sqlite3Malloc over its
	 * private helper */
	for (pass = 0; pass < MEM_WRAP_LAYERS; pass++) {
		wrap_pass(p, w, used, s);
		if (!wrap_mark(p, w, s))
			break;
	}
	wrap_pass(p, w, used, s);
	wrap_by_name(p, w, s);
	free(s);
	free(used);
	*out = w;
	return 0;
}

const char *mem_wrap_arena(const struct profile *p, const uint8_t *w, uint32_t stack)
{
	const struct prof_stack *st;
	uint32_t k;

	if (!w || stack >= p->nstacks)
		return NULL;
	st = &p->stacks[stack];
	for (k = 0; k < st->nframes && st->first + k < p->nframes; k++) {
		uint32_t f = p->frames[st->first + k].func;

		if (f < p->nfuncs && (w[f] & MW_ARENA))
			return p->funcs[f].name;
	}
	return NULL;
}
