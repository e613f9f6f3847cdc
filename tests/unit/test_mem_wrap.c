/*
 * test_mem_wrap.c — allocation sites past the program's wrappers and
 * memory that arenas keep on purpose (analysis/mem/mem_wrap.c): an xmalloc that
 * forwards to malloc from one place for three callers is looked past (the
 * sites are its callers, "via xmalloc"); a function that allocates for one
 * caller (a real site) is not, nor one whose name says nothing; a stripped
 * program's private helper under a wrapper goes with it, a named function
 * under a stripped wrapper does not; another program's copy of a wrapper
 * (gcc's driver's xmalloc beside cc1's) is one though its samples show one
 * caller; a stray pc in a few of a wrapper's stacks is no third place of
 * it, three real places make no wrapper; --alloc-fn names
 * one the samples cannot tell; blocks a GC heap (ggc_internal_alloc) holds
 * at exit are no leak, and the evidence strings read as the tables do.
 */
#include <string.h>

#include "analysis.h"
#include "memory.h"
#include "analysed.h"
#include "testlib.h"
#include "test_mem_build.h"

#define KB 1024ull

/* The site of f (by name, the first one), NULL when none. */
static const struct mem_site *site_named(const struct analysis *a, const char *f)
{
	const struct profile *p = a->profile;
	size_t i;

	for (i = 0; a->memory && i < a->memory->nsites; i++) {
		const struct mem_site *s = &a->memory->sites[i];

		if (s->func < p->nfuncs && !strcmp(p->funcs[s->func].name, f))
			return s;
	}
	return NULL;
}

static int leaked(const struct analysis *a, const struct mem_site *s)
{
	size_t i;

	for (i = 0; i < a->memory->nleaks; i++)
		if (&a->memory->sites[a->memory->leaks[i]] == s)
			return 1;
	return 0;
}

/* A stack of funcs (leaf first) whose frame i returns to pcs[i]. */
static uint32_t stack_at(struct pb *b, size_t n, const uint32_t *funcs, const uint64_t *pcs)
{
	uint32_t st = pb_stack(b, n, funcs);
	size_t i;

	for (i = 0; i < n; i++)
		b->p.frames[b->p.stacks[st].first + i].addr = pcs[i];
	return st;
}

struct fx {
	uint32_t xmalloc, parse, lex, emit, table, mainf, helper, wrap, ggc, mk, keep, grow, wrap2;
	uint32_t xmalloc2, driver, abuf, xrealloc, xalloc3;
};

static void build(struct pb *b, struct fx *x)
{
	uint32_t pr;
	uint64_t ts = 1000;
	int i, j;

	pb_init(b, 1000000, "./prog");
	x->xmalloc = pb_func(b, "xmalloc", "xmalloc.c", 10, "prog");
	x->parse = pb_func(b, "parse", "parse.c", 20, "prog");
	x->lex = pb_func(b, "lex", "lex.c", 30, "prog");
	x->emit = pb_func(b, "emit", "emit.c", 40, "prog");
	x->table = pb_func(b, "build_table", "table.c", 50, "prog");
	x->mainf = pb_func(b, "main", "main.c", 1, "prog");
	x->helper = pb_func(b, "prog+0x4000", "prog+0x4010", 0, "prog");
	x->wrap = pb_func(b, "prog+0x5000", "prog+0x5020", 0, "prog");
	b->p.funcs[x->helper].flags |= PROF_FUNC_NOSYM;
	b->p.funcs[x->wrap].flags |= PROF_FUNC_NOSYM;
	x->ggc = pb_func(b, "ggc_internal_alloc(unsigned long)", "", 0, "cc1");
	x->mk = pb_func(b, "make_node", "tree.c", 60, "cc1");
	x->keep = pb_func(b, "keep_forever", "keep.c", 70, "prog");
	x->grow = pb_func(b, "vdbe_mem_grow", "vdbe.c", 80, "prog");
	x->wrap2 = pb_func(b, "prog+0xb000", "prog+0xb010", 0, "prog");
	b->p.funcs[x->wrap2].flags |= PROF_FUNC_NOSYM;
	/* another program's copy of xmalloc (gcc's driver beside cc1) */
	x->xmalloc2 = pb_func(b, "xmalloc", "", 0, "gcc");
	x->driver = pb_func(b, "driver_main", "", 0, "gcc");
	x->abuf = pb_func(b, "alloc_buf", "", 0, "gcc");
	x->xrealloc = pb_func(b, "xrealloc", "", 0, "prog");
	x->xalloc3 = pb_func(b, "xalloc3", "", 0, "prog");
	pr = pb_process(b, 1, 0, "prog", "./prog", 1000000);
	pb_thread(b, 1, pr, "prog");
	pbm_on(b, pr, 1, 0);
	for (i = 0; i < 10; i++) {
		/* xmalloc from its one call of malloc, for parse, lex, emit */
		pbm_alloc(b, pr, ts++, 0x10000 + 0x100 * (uint64_t)i, 64,
			  stack_at(b, 3, (uint32_t[]){ x->xmalloc, x->parse, x->mainf },
				   (uint64_t[]){ 0x1010, 0x2010, 0x3010 }));
		pbm_alloc(b, pr, ts++, 0x20000 + 0x100 * (uint64_t)i, 64,
			  stack_at(b, 3, (uint32_t[]){ x->xmalloc, x->lex, x->mainf },
				   (uint64_t[]){ 0x1010, 0x2110, 0x3020 }));
		pbm_alloc(b, pr, ts++, 0x30000 + 0x100 * (uint64_t)i, 64,
			  stack_at(b, 3, (uint32_t[]){ x->xmalloc, x->emit, x->mainf },
				   (uint64_t[]){ 0x1010, 0x2210, 0x3030 }));
		/* build_table allocates for main alone: a site */
		pbm_alloc(b, pr, ts++, 0x40000 + 0x100 * (uint64_t)i, 128,
			  stack_at(b, 2, (uint32_t[]){ x->table, x->mainf },
				   (uint64_t[]){ 0x2310, 0x3040 }));
		/* a stripped wrapper (two callers) over its private helper */
		pbm_alloc(b, pr, ts++, 0x50000 + 0x100 * (uint64_t)i, 32,
			  stack_at(b, 4, (uint32_t[]){ x->helper, x->wrap, x->parse, x->mainf },
				   (uint64_t[]){ 0x4010, 0x5020, 0x2020, 0x3010 }));
		pbm_alloc(b, pr, ts++, 0x60000 + 0x100 * (uint64_t)i, 32,
			  stack_at(b, 4, (uint32_t[]){ x->helper, x->wrap, x->emit, x->mainf },
				   (uint64_t[]){ 0x4010, 0x5020, 0x2220, 0x3030 }));
		/* the GC heap's pages, never freed: make_node's */
		pbm_alloc(b, pr, ts++, 0x70000 + 0x1000 * (uint64_t)i, 4 * KB,
			  stack_at(b, 3, (uint32_t[]){ x->ggc, x->mk, x->mainf },
				   (uint64_t[]){ 0x6010, 0x7010, 0x3050 }));
		/* a named function that only another stripped function calls,
		 * itself called from two places: a site (its name does not
		 * say allocation), not a helper */
		pbm_alloc(b, pr, ts++, 0xa0000 + 0x100 * (uint64_t)i, 32,
			  stack_at(b, 3, (uint32_t[]){ x->grow, x->wrap2, i % 2 ? x->lex : x->emit },
				   (uint64_t[]){ 0x9010, 0xb010, i % 2 ? 0x2130 : 0x2230 }));
		/* the driver's xmalloc, sampled under its one caller here, and
		 * a function named for allocation that is nobody's wrapper */
		pbm_alloc(b, pr, ts++, 0xc0000 + 0x100 * (uint64_t)i, 48,
			  stack_at(b, 2, (uint32_t[]){ x->xmalloc2, x->driver },
				   (uint64_t[]){ 0xc010, 0xd010 }));
		pbm_alloc(b, pr, ts++, 0xe0000 + 0x100 * (uint64_t)i, 48,
			  stack_at(b, 2, (uint32_t[]){ x->abuf, x->driver },
				   (uint64_t[]){ 0xe010, 0xd020 }));
		/* xrealloc calls malloc (returning to 0xf648) or realloc (to
		 * 0xf631), for parse and lex; one of its 40 stacks holds a pc
		 * that is no return address, 0xf614: a stray, not a place */
		for (j = 0; j < 4; j++)
			pbm_alloc(b, pr, ts++, 0xf0000 + 0x100 * (uint64_t)i + 0x10 * (uint64_t)j, 48,
				  stack_at(b, 2, (uint32_t[]){ x->xrealloc, j % 2 ? x->parse : x->lex },
					   (uint64_t[]){ i == 9 && j == 3 ? 0xf614
							 : j % 2 ? 0xf648 : 0xf631,
							 j % 2 ? 0x2040 : 0x2140 }));
		/* xalloc3 calls malloc from three places as often: no wrapper */
		pbm_alloc(b, pr, ts++, 0xf8000 + 0x100 * (uint64_t)i, 48,
			  stack_at(b, 2, (uint32_t[]){ x->xalloc3, i % 2 ? x->parse : x->lex },
				   (uint64_t[]){ 0xa10 + 0x10 * (uint64_t)(i % 3),
						 i % 2 ? 0x2050 : 0x2150 }));
		/* and a plain leak */
		pbm_alloc(b, pr, ts++, 0x90000 + 0x100 * (uint64_t)i, 64,
			  stack_at(b, 2, (uint32_t[]){ x->keep, x->mainf },
				   (uint64_t[]){ 0x8010, 0x3060 }));
	}
	/* everything but the GC pages and keep_forever's blocks is freed */
	for (i = 0; i < 10; i++) {
		pbm_free(b, pr, ts++, 0x10000 + 0x100 * (uint64_t)i);
		pbm_free(b, pr, ts++, 0x20000 + 0x100 * (uint64_t)i);
		pbm_free(b, pr, ts++, 0x30000 + 0x100 * (uint64_t)i);
		pbm_free(b, pr, ts++, 0x40000 + 0x100 * (uint64_t)i);
		pbm_free(b, pr, ts++, 0x50000 + 0x100 * (uint64_t)i);
		pbm_free(b, pr, ts++, 0x60000 + 0x100 * (uint64_t)i);
		pbm_free(b, pr, ts++, 0xa0000 + 0x100 * (uint64_t)i);
		pbm_free(b, pr, ts++, 0xc0000 + 0x100 * (uint64_t)i);
		pbm_free(b, pr, ts++, 0xe0000 + 0x100 * (uint64_t)i);
		for (j = 0; j < 4; j++)
			pbm_free(b, pr, ts++, 0xf0000 + 0x100 * (uint64_t)i + 0x10 * (uint64_t)j);
		pbm_free(b, pr, ts++, 0xf8000 + 0x100 * (uint64_t)i);
	}
	b->p.processes[pr].start = 1;
	b->p.processes[pr].end = ts + 1000;
}

static void test_wrappers(void)
{
	struct pb b;
	struct fx x;
	const struct analysis *a;
	const struct mem_site *s;
	size_t i;

	build(&b, &x);
	a = analysed(&b.p);
	REQUIRE(a->memory != NULL);
	/* xmalloc is no site: its callers are, each via it */
	CHECK(site_named(a, "xmalloc") == NULL);
	REQUIRE((s = site_named(a, "parse")) != NULL);
	CHECK_EQ_INT(s->via, x.xmalloc);
	CHECK(s->bytes >= 640 - 0.5);
	REQUIRE((s = site_named(a, "lex")) != NULL);
	CHECK_EQ_INT(s->via, x.xmalloc);
	/* one caller, its own allocation: a site, past nothing */
	REQUIRE((s = site_named(a, "build_table")) != NULL);
	CHECK_EQ_INT(s->via, PROF_NONE);
	/* the stripped wrapper and its helper: their callers are the sites */
	CHECK(site_named(a, "prog+0x4000") == NULL);
	CHECK(site_named(a, "prog+0x5000") == NULL);
	REQUIRE((s = site_named(a, "emit")) != NULL);
	/* a named function under a stripped wrapper stays a site */
	CHECK(site_named(a, "vdbe_mem_grow") != NULL);
	/* a stray pc in one stack of forty is no third place; three places
	 * as often are */
	CHECK(site_named(a, "xrealloc") == NULL);
	CHECK(site_named(a, "xalloc3") != NULL);
	/* a copy of a wrapper found elsewhere in the run is one too, though
	 * one caller of it was sampled: the site is that caller */
	CHECK(site_named(a, "xmalloc") == NULL);
	REQUIRE((s = site_named(a, "driver_main")) != NULL);
	CHECK_EQ_INT(s->via, x.xmalloc2);
	/* ... but a function of one caller is no wrapper by its name alone */
	REQUIRE((s = site_named(a, "alloc_buf")) != NULL);
	CHECK_EQ_INT(s->via, PROF_NONE);
	/* the GC heap: make_node's pages are kept on purpose, no leak */
	REQUIRE((s = site_named(a, "make_node")) != NULL);
	CHECK(s->arena && !strncmp(s->arena, "ggc_internal_alloc", 18));
	CHECK(!leaked(a, s));
	CHECK(a->memory->arena_end_bytes >= 40 * KB - 0.5);
	CHECK(a->memory->arena_top && !strncmp(a->memory->arena_top, "ggc_internal_alloc", 18));
	/* a real leak is still one, and the rules say it as the tables do */
	REQUIRE((s = site_named(a, "keep_forever")) != NULL);
	CHECK(leaked(a, s) && !s->arena);
	for (i = 0; i < a->memory->nrecos; i++)
		CHECK(!strstr(a->memory->recos[i].evidence, "~:0(") &&
		      !strstr(a->memory->recos[i].evidence, "make_node"));
	pbm_release(&b);
	pb_free(&b);
}

/* --alloc-fn: build_table named as a wrapper, its caller is the site. */
static void test_alloc_fn(void)
{
	static const char *const fns[] = { "build_table" };
	struct analysis_opts o = { .alloc_fns = fns, .nalloc_fns = 1 };
	struct analysis a;
	struct pb b;
	struct fx x;
	const struct mem_site *s = NULL;
	size_t i;

	build(&b, &x);
	REQUIRE(analysis_run(&b.p, &o, &a) == 0);
	for (i = 0; i < a.memory->nsites; i++)
		if (a.memory->sites[i].func == x.table)
			s = &a.memory->sites[i];
	CHECK(s == NULL);
	for (i = 0; i < a.memory->nsites; i++)
		if (a.memory->sites[i].func == x.mainf && a.memory->sites[i].via == x.table)
			s = &a.memory->sites[i];
	CHECK(s != NULL);
	analysis_free(&a);
	pbm_release(&b);
	pb_free(&b);
}

int main(void)
{
	test_wrappers();
	test_alloc_fn();
	return test_result();
}
