/*
 * test_memory.c — the host side of the memory view (analysis/mem/memory.c) and the
 * memory rules (mem_rules.c) on hand-built profiles: allocator frames skipped
 * (inlined std::allocator frames too), unbiased weights, peak from counters
 * and from the replay, sites at the peak, leaks, lifetimes, processes with
 * and without memory data, refusal, and each rule firing and not firing.
 */
#include <math.h>
#include <stdint.h>

#include <unistd.h>

#include "analysis.h"
#include "load.h"
#include "memory.h"
#include "analysed.h"
#include "testlib.h"
#include "test_mem_build.h"
#include "test_reader_synth.h"

#define NEAR(a, b, tol) (fabs((double)(a) - (double)(b)) <= (tol) * fabs((double)(b)) + 1e-9)

/* Functions every test uses: an allocator chain and two user callers. */
struct fx {
	uint32_t f_malloc, f_new, f_newalloc, f_traits, f_cbn, f_user, f_main, f_helper,
		f_consume, f_other;
	uint32_t st_vec;      /* operator new <- inlined allocator templates <- make_buffer */
	uint32_t st_helper;   /* malloc <- helper (inlined into main) <- main */
	uint32_t st_consume;  /* cbn hook <- malloc <- consume(std::vector<int, std::allocator<int> >&) */
	uint32_t st_other;    /* malloc <- other_site */
};

static void fx_init(struct pb *b, struct fx *x)
{
	x->f_malloc = pb_func(b, "malloc", "", 0, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	x->f_new = pb_func(b, "operator new(unsigned long)", "", 0,
			   "/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.33");
	x->f_newalloc = pb_func(b, "std::__new_allocator<int>::allocate(unsigned long, void const*)",
				"/usr/include/c++/14/bits/new_allocator.h", 126, "/tmp/prog");
	x->f_traits = pb_func(b, "std::allocator_traits<std::allocator<int> >::allocate("
				 "std::allocator<int>&, unsigned long)",
			      "/usr/include/c++/14/bits/alloc_traits.h", 478, "/tmp/prog");
	x->f_cbn = pb_func(b, "cbn_mem_malloc", "src/agent/mem/hooks.c", 80,
			   "/opt/cbn/lib/libcbottleneck_mem.so");
	x->f_user = pb_func(b, "make_buffer", "/src/buf.c", 40, "/tmp/prog");
	x->f_main = pb_func(b, "main", "/src/main.c", 10, "/tmp/prog");
	x->f_helper = pb_func(b, "helper", "/src/main.c", 5, "/tmp/prog");
	x->f_consume = pb_func(b, "consume(std::vector<int, std::allocator<int> >&)", "/src/c.cc",
			       20, "/tmp/prog");
	x->f_other = pb_func(b, "other_site", "/src/other.c", 70, "/tmp/prog");
	{
		uint32_t f[] = { x->f_new, x->f_newalloc, x->f_traits, x->f_user, x->f_main };
		uint32_t l[] = { 0, 151, 482, 42, 12 };
		/* the two template frames are inlined into make_buffer */
		x->st_vec = pb_stack_inl(b, 5, f, l, 0x6);
	}
	{
		uint32_t f[] = { x->f_malloc, x->f_helper, x->f_main };
		uint32_t l[] = { 0, 7, 14 };
		x->st_helper = pb_stack_inl(b, 3, f, l, 0x2);
	}
	{
		uint32_t f[] = { x->f_cbn, x->f_malloc, x->f_consume, x->f_main };
		uint32_t l[] = { 81, 0, 22, 16 };
		x->st_consume = pb_stack_inl(b, 4, f, l, 0);
	}
	{
		uint32_t f[] = { x->f_malloc, x->f_other, x->f_main };
		uint32_t l[] = { 0, 71, 18 };
		x->st_other = pb_stack_inl(b, 3, f, l, 0);
	}
}

static void base(struct pb *b, struct fx *x, uint32_t nproc)
{
	uint32_t i;

	pb_init(b, 1000000, "./prog");
	b->p.start_ns = 1000000000ull;
	for (i = 0; i < nproc; i++) {
		uint32_t pr = pb_process(b, 10 + i, 1, "/tmp/prog", "./prog", 1000000);
		b->p.processes[pr].start = 1000000000ull;
		b->p.processes[pr].end = 2000000000ull;
		pb_thread(b, 10 + i, pr, "prog");
	}
	fx_init(b, x);
}

static const struct mem_site *site_named(const struct analysis *a, const char *fn)
{
	size_t i;

	for (i = 0; a->memory && i < a->memory->nsites; i++) {
		const struct mem_site *s = &a->memory->sites[i];
		if (s->func < a->profile->nfuncs && strcmp(a->profile->funcs[s->func].name, fn) == 0)
			return s;
	}
	return NULL;
}

static const struct rule_finding *reco(const struct analysis *a, const char *id)
{
	size_t i;

	for (i = 0; a->memory && i < a->memory->nrecos; i++)
		if (strcmp(a->memory->recos[i].id, id) == 0)
			return &a->memory->recos[i];
	return NULL;
}

static void test_allocator_frames(void)
{
	struct pb b;
	struct fx x;
	const struct analysis *a;
	const struct mem_site *s;

	base(&b, &x, 1);
	pbm_on(&b, 0, 1, 0);
	pbm_alloc(&b, 0, 1100000000ull, 0x1000, 400, x.st_vec);
	pbm_alloc(&b, 0, 1200000000ull, 0x2000, 300, x.st_helper);
	pbm_alloc(&b, 0, 1300000000ull, 0x3000, 200, x.st_consume);
	pbm_alloc(&b, 0, 1400000000ull, 0x4000, 100, PROF_NONE);
	a = analysed(&b.p);
	REQUIRE(a->memory != NULL);
	CHECK_EQ_INT(a->memory->nsites, 4);
	/* operator new and both inlined allocator templates skipped */
	REQUIRE((s = site_named(a, "make_buffer")) != NULL);
	CHECK_EQ_INT(s->line, 42);
	CHECK_EQ_INT(s->inlined, 0);
	CHECK(NEAR(s->bytes, 400, 1e-9));
	CHECK_EQ_INT(s->stack, x.st_vec);
	/* an inlined user frame is the site, marked */
	REQUIRE((s = site_named(a, "helper")) != NULL);
	CHECK_EQ_INT(s->inlined, 1);
	CHECK_EQ_INT(s->line, 7);
	/* std::allocator in a parameter type is not the allocator; cbn_ hook is */
	REQUIRE((s = site_named(a, "consume(std::vector<int, std::allocator<int> >&)")) != NULL);
	CHECK_EQ_INT(s->line, 22);
	CHECK(site_named(a, "operator new(unsigned long)") == NULL);
	CHECK(site_named(a, "malloc") == NULL);
	/* sites by bytes, the no-stack one last */
	CHECK(a->memory->sites[0].bytes >= a->memory->sites[1].bytes);
	CHECK_EQ_INT(a->memory->sites[3].func, PROF_NONE);
	/* direct checks of the predicate */
	CHECK(mem_frame_is_allocator(&b.p, &b.p.frames[b.p.stacks[x.st_vec].first + 1]));
	CHECK(mem_frame_is_allocator(&b.p, &b.p.frames[b.p.stacks[x.st_vec].first + 2]));
	CHECK(!mem_frame_is_allocator(&b.p, &b.p.frames[b.p.stacks[x.st_vec].first + 3]));
	CHECK(mem_frame_is_allocator(&b.p, &b.p.frames[b.p.stacks[x.st_consume].first]));
	pbm_release(&b);
	pb_free(&b);
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static double urand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

/* Known sizes: each record of size s stands for s / (1 - exp(-s/rate)) bytes;
 * and a Poisson-sampled population is estimated without bias. */
static void test_weights(void)
{
	struct pb b;
	struct fx x;
	const struct analysis *a;
	const struct mem_site *s;
	double true_bytes = 0, true_count = 0, w = 1.0 / (1.0 - exp(-1.0));
	uint64_t ts = 1000000000ull, addr = 0x100000;
	int i;

	base(&b, &x, 1);
	pbm_on(&b, 0, 1000, 0);
	/* population: 200000 small blocks of 32 B and 200 large of 200 KiB, rate 64 KiB */
	pbm_on(&b, 0, 65536, 0);
	for (i = 0; i < 200000 + 200; i++) {
		uint64_t size = i % 1001 == 0 ? 204800 : 32;
		double p = 1.0 - exp(-(double)size / 65536.0);

		true_bytes += (double)size;
		true_count += 1;
		if (urand() < p)
			pbm_alloc(&b, 0, ts++, addr++, size, x.st_other);
	}
	a = analysed(&b.p);
	REQUIRE((s = site_named(a, "other_site")) != NULL);
	/* the number of sampled records is ~ 6.4e6/65536 + 200: the estimate of
	 * the total is within 15 % (a few standard deviations at this count) */
	CHECK(NEAR(s->bytes, true_bytes, 0.15));
	CHECK(NEAR(s->allocs, true_count, 0.30));
	CHECK(s->records < 1000);
	pbm_release(&b);

	/* exact arithmetic on one size at rate 1000 */
	b.p.processes[0].mem.rate = 1000;
	for (i = 0; i < 10; i++)
		pbm_alloc(&b, 0, ts++, addr++, 1000, x.st_helper);
	a = analysed(&b.p);
	REQUIRE((s = site_named(a, "helper")) != NULL);
	CHECK(NEAR(s->bytes, 10 * 1000 * w, 1e-9));
	CHECK(NEAR(s->allocs, 10 * w, 1e-9));
	CHECK_EQ_INT(s->records, 10);
	CHECK_EQ_INT(a->memory->rate, 1000);
	CHECK_EQ_INT(a->memory->exact, 0);
	/* leak estimate carries the same weight */
	CHECK(NEAR(s->live_end_bytes, 10 * 1000 * w, 1e-9));
	pbm_release(&b);
	pb_free(&b);
}

/* Replay (exact mode, no usable counters): peak at the second allocation. */
static void test_peak_replay(void)
{
	struct pb b;
	struct fx x;
	const struct analysis *a;
	const struct mem_space *sp;
	const uint64_t t0 = 1000000000ull;

	base(&b, &x, 1);
	pbm_on(&b, 0, 1, 0);
	pbm_range(&b, 0, t0 + 100, t0 + 900, CBN_RANGE_PUSHPOP, 0, "train");
	pbm_range(&b, 0, t0 + 150, t0 + 400, CBN_RANGE_PUSHPOP, 1, "forward");
	pbm_alloc(&b, 0, t0 + 100, 0xa000, 1 << 20, x.st_helper);
	pbm_alloc(&b, 0, t0 + 200, 0xb000, 2 << 20, x.st_vec);
	pbm_alloc(&b, 0, t0 + 250, 0xc000, 1000, x.st_other);
	pbm_free(&b, 0, t0 + 300, 0xa000);
	pbm_free(&b, 0, t0 + 310, 0xc000);
	pbm_alloc(&b, 0, t0 + 400, 0xd000, 512 << 10, x.st_other);
	pbm_free(&b, 0, t0 + 500, 0xb000);
	a = analysed(&b.p);
	REQUIRE(a->memory && a->memory->nspaces == 1);
	sp = &a->memory->spaces[0];
	CHECK_STR(sp->name, "host");
	CHECK_EQ_INT(sp->kind, MEM_SPACE_HOST);
	CHECK_EQ_INT(sp->peak, (3 << 20) + 1000);
	CHECK_EQ_INT(sp->peak_ts, t0 + 250);
	CHECK_EQ_INT(sp->peak_exact, 1);
	CHECK_EQ_INT(sp->live_end, 512 << 10);
	REQUIRE(sp->peak_range != PROF_NONE);
	CHECK_STR(b.p.ranges[sp->peak_range].name, "forward");
	REQUIRE(sp->nat_peak == 3);
	CHECK(NEAR(sp->at_peak[0].bytes, 2 << 20, 1e-9));
	CHECK_EQ_INT(a->memory->sites[sp->at_peak[0].site].func, x.f_user);
	CHECK(NEAR(sp->at_peak[1].bytes, 1 << 20, 1e-9));
	CHECK(NEAR(sp->at_peak[2].bytes, 1000, 1e-9));
	CHECK(sp->ntimeline >= 7);
	CHECK(site_named(a, "make_buffer")->max_live == 2 << 20);
	/* leaks: only other_site's 512 KiB block */
	REQUIRE(a->memory->nleaks == 1);
	CHECK_EQ_INT(a->memory->sites[a->memory->leaks[0]].func, x.f_other);
	CHECK(NEAR(a->memory->sites[a->memory->leaks[0]].live_end_bytes, 512 << 10, 1e-9));
	CHECK(NEAR(a->memory->sites[a->memory->leaks[0]].live_end_blocks, 1, 1e-9));
	CHECK(NEAR(site_named(a, "other_site")->max_live, 512 << 10, 1e-9));
	pbm_release(&b);
	pb_free(&b);
}

/* Usable sizes: peak and curve from the exact counters, sites from the replay. */
static void test_peak_counters(void)
{
	struct pb b;
	struct fx x;
	const struct analysis *a;
	const struct mem_space *sp;
	const uint64_t t0 = 1000000000ull;
	struct prof_mem_proc *pm;
	size_t i, found = 0;

	base(&b, &x, 1);
	pbm_on(&b, 0, 4096, CBN_MEMF_USABLE);
	pm = &b.p.processes[0].mem;
	pm->host_peak = 5000000;
	pm->host_peak_ts = t0 + 15000000;
	pm->rss_peak = 9000000;
	pm->allocs = 1234;
	pm->frees = 1200;
	pm->alloc_bytes = 77777777;
	pm->host_live_end = 4096;
	pbm_alloc(&b, 0, t0 + 5000000, 0xa000, 3000000, x.st_helper);
	pbm_free(&b, 0, t0 + 20000000, 0xa000);
	pbm_counter(&b, 0, t0 + 10000000, 6000000, 3100000);
	pbm_counter(&b, 0, t0 + 20000000, 8000000, 200000);
	pbm_counter(&b, 0, t0 + 30000000, 7000000, 4096);
	a = analysed(&b.p);
	REQUIRE(a->memory && a->memory->nspaces == 1);
	sp = &a->memory->spaces[0];
	CHECK_EQ_INT(sp->peak, 5000000);
	CHECK_EQ_INT(sp->peak_ts, t0 + 15000000);
	CHECK_EQ_INT(sp->peak_exact, 1);
	CHECK_EQ_INT(sp->rss_peak, 9000000);
	CHECK_EQ_INT(sp->allocs, 1234);
	CHECK_EQ_INT(sp->frees, 1200);
	CHECK_EQ_INT(sp->alloc_bytes, 77777777);
	CHECK_EQ_INT(sp->live_end, 4096);
	/* the counters plus the peak point, in time order */
	CHECK_EQ_INT(sp->ntimeline, 4);
	for (i = 0; i < sp->ntimeline; i++) {
		found += sp->timeline[i].ts == t0 + 15000000 && sp->timeline[i].live == 5000000;
		if (i)
			CHECK(sp->timeline[i - 1].ts <= sp->timeline[i].ts);
	}
	CHECK_EQ_INT(found, 1);
	CHECK_EQ_INT(sp->timeline[0].rss, 6000000);
	/* the sampled block was live at the exact peak */
	REQUIRE(sp->nat_peak == 1);
	CHECK(NEAR(sp->at_peak[0].bytes, 3000000.0 / -expm1(-3000000.0 / 4096), 1e-9));
	pbm_release(&b);

	/* sampled shares above the exact peak (and live at exit above the exact
	 * live): scaled down to the whole, never above it */
	pbm_on(&b, 0, 1 << 20, CBN_MEMF_USABLE);
	pm->host_peak = 1500000;
	pm->host_peak_ts = t0 + 15000000;
	pm->host_live_end = 1000000;
	pbm_alloc(&b, 0, t0 + 5000000, 0xa000, 1000000, x.st_helper); /* stands for ~1.6 MB */
	pbm_alloc(&b, 0, t0 + 6000000, 0xb000, 1000, x.st_vec);       /* ~1 MiB */
	pbm_free(&b, 0, t0 + 20000000, 0xb000);
	pbm_counter(&b, 0, t0 + 30000000, 7000000, 1000000);
	a = analysed(&b.p);
	REQUIRE(a->memory && a->memory->nspaces == 1);
	sp = &a->memory->spaces[0];
	/* each site's share is one sample's weight: no figure per site, their
	 * sum counted apart, scaled to the whole */
	CHECK_EQ_INT(sp->nat_peak, 0);
	CHECK_EQ_INT(sp->nat_peak_other, 2);
	CHECK(NEAR(sp->at_peak_other, 1500000, 1e-6));
	for (i = 0; i < a->memory->nsites; i++) {
		CHECK(a->memory->sites[i].max_live <= 1500000);
		CHECK(!a->memory->sites[i].max_live_known);
		CHECK(a->memory->sites[i].live_end_bytes <= 1000000 + 1e-6);
	}
	pbm_release(&b);

	/* a block recorded for certain (8 MiB at a 1 MiB rate) keeps its size
	 * when the uncertain ones overshoot the exact peak: only they shrink;
	 * and the peak is when the heap first got within the counters'
	 * precision of it, not a later few bytes more */
	pbm_on(&b, 0, 1 << 20, CBN_MEMF_USABLE);
	pm->host_peak = 9000000;
	pm->host_peak_ts = t0 + 25000000;
	pm->host_live_end = 0;
	pbm_alloc(&b, 0, t0 + 1000000, 0xa000, 8u << 20, x.st_helper);
	pbm_alloc(&b, 0, t0 + 2000000, 0xb000, 1000, x.st_vec);       /* ~1 MiB */
	pbm_counter(&b, 0, t0 + 3000000, 12000000, 8990000);
	pbm_counter(&b, 0, t0 + 30000000, 12000000, 8000000);
	pbm_free(&b, 0, t0 + 40000000, 0xa000);
	pbm_free(&b, 0, t0 + 40000001, 0xb000);
	a = analysed(&b.p);
	REQUIRE(a->memory && a->memory->nspaces == 1);
	sp = &a->memory->spaces[0];
	CHECK_EQ_INT(sp->peak, 9000000);
	CHECK_EQ_INT(sp->peak_ts, t0 + 3000000);
	REQUIRE(sp->nat_peak == 1);
	CHECK(NEAR(sp->at_peak[0].bytes, (8u << 20) / -expm1(-8.0), 1e-9));
	CHECK_EQ_INT(sp->nat_peak_other, 1);
	CHECK(NEAR(sp->at_peak[0].bytes + sp->at_peak_other, 9000000, 1e-6));
	for (i = 0; i < a->memory->nsites; i++)
		if (a->memory->sites[i].func == x.f_main)
			CHECK(a->memory->sites[i].max_live_known);
	pbm_release(&b);
	pb_free(&b);
}

/* Lifetimes: short-lived counts and the median of freed sampled blocks. */
static void test_lifetimes(void)
{
	struct pb b;
	struct fx x;
	const struct analysis *a;
	const struct mem_site *s;
	uint64_t t = 1000000000ull;
	int i;

	base(&b, &x, 1);
	pbm_on(&b, 0, 1, 0);
	for (i = 0; i < 9; i++) {
		pbm_alloc(&b, 0, t, 0x1000 + i, 64, x.st_helper);
		pbm_alloc(&b, 0, t + 1, 0x9000 + i, 64, x.st_other);
		pbm_free(&b, 0, t + 100000 + 1000 * i, 0x1000 + i);   /* ~100 us */
		pbm_free(&b, 0, t + 5000000, 0x9000 + i);             /* 5 ms */
		t += 10000000;
	}
	/* frees and allocs interleave in time: keep each array sorted */
	{
		size_t n = b.p.nmem_frees, j, k;
		for (j = 1; j < n; j++)
			for (k = j; k > 0 && b.p.mem_frees[k - 1].ts > b.p.mem_frees[k].ts; k--) {
				struct prof_mem_free tmp = b.p.mem_frees[k];
				b.p.mem_frees[k] = b.p.mem_frees[k - 1];
				b.p.mem_frees[k - 1] = tmp;
			}
	}
	a = analysed(&b.p);
	REQUIRE((s = site_named(a, "helper")) != NULL);
	CHECK(NEAR(s->short_lived, 9, 1e-9));
	CHECK_EQ_INT(s->median_life_ns, 104000);
	CHECK(NEAR(s->live_end_bytes, 0, 1e-9));
	REQUIRE((s = site_named(a, "other_site")) != NULL);
	CHECK(NEAR(s->short_lived, 0, 1e-9));
	CHECK_EQ_INT(s->median_life_ns, 4999999);
	CHECK_EQ_INT(a->memory->nleaks, 0);
	pbm_release(&b);
	pb_free(&b);
}

/* The allocator hands one address out again and again (a churn loop): each
 * free ends the block allocated just before it; one free is missing, so the
 * next allocation at that address ends the block instead (no lifetime). */
static void test_address_reuse(void)
{
	struct pb b;
	struct fx x;
	const struct analysis *a;
	const struct mem_site *s;
	uint64_t t = 1000000000ull;
	const int n = getenv("CBN_TEST_MEM_N") ? atoi(getenv("CBN_TEST_MEM_N")) : 200000;
	int i;

	base(&b, &x, 1);
	pbm_on(&b, 0, 1, 0);
	for (i = 0; i < n; i++, t += 1000) {
		pbm_alloc(&b, 0, t, 0x5000, 128, x.st_other);
		if (i != 7)
			pbm_free(&b, 0, t + 500, 0x5000);
	}
	a = analysed(&b.p);
	REQUIRE((s = site_named(a, "other_site")) != NULL);
	CHECK(NEAR(s->allocs, n, 1e-12));
	CHECK(NEAR(s->short_lived, n - 1, 1e-12));
	CHECK_EQ_INT(s->median_life_ns, 500);
	CHECK(NEAR(s->max_live, 128, 1e-12));
	CHECK(NEAR(s->live_end_bytes, 0, 1e-12));
	CHECK_EQ_INT(a->memory->spaces[0].peak, 128);
	CHECK_EQ_INT(a->memory->nleaks, 0);
	/* 2n events pooled into a bounded curve that keeps the peak */
	{
		const struct mem_space *sp = &a->memory->spaces[0];
		int64_t hi = 0;
		size_t k;

		CHECK(sp->ntimeline <= MEM_TIMELINE_MAX);
		CHECK(sp->ntimeline >= MEM_TIMELINE_MAX / 2 || (size_t)n < MEM_TIMELINE_MAX);
		for (k = 0; k < sp->ntimeline; k++) {
			if (sp->timeline[k].live > hi)
				hi = sp->timeline[k].live;
			if (k)
				CHECK(sp->timeline[k - 1].ts <= sp->timeline[k].ts);
		}
		CHECK_EQ_INT(hi, 128);
	}
	pbm_release(&b);
	pb_free(&b);
}

/* No memory data: no memory view.  One process of two: one space "host". */
static void test_processes(void)
{
	struct pb b;
	struct fx x;
	const struct analysis *a;

	base(&b, &x, 2);
	a = analysed(&b.p);
	CHECK(a->memory == NULL);

	pbm_on(&b, 1, 1, 0);
	pbm_alloc(&b, 1, 1100000000ull, 0x10, 100, x.st_helper);
	a = analysed(&b.p);
	REQUIRE(a->memory && a->memory->nspaces == 1);
	CHECK_STR(a->memory->spaces[0].name, "host");
	CHECK_EQ_INT(a->memory->spaces[0].process, 1);

	/* two processes: one space each, named by pid, records kept apart (the
	 * same address in both is two blocks) */
	pbm_release(&b);
	pbm_on(&b, 0, 1, 0);
	pbm_alloc(&b, 0, 1100000000ull, 0x10, 100, x.st_helper);
	pbm_alloc(&b, 1, 1050000000ull, 0x10, 700, x.st_helper);
	pbm_free(&b, 1, 1200000000ull, 0x10);
	a = analysed(&b.p);
	REQUIRE(a->memory && a->memory->nspaces == 2);
	CHECK_STR(a->memory->spaces[0].name, "host pid 10");
	CHECK_STR(a->memory->spaces[1].name, "host pid 11");
	CHECK_EQ_INT(a->memory->spaces[0].peak, 100);
	CHECK_EQ_INT(a->memory->spaces[1].peak, 700);
	CHECK_EQ_INT(a->memory->spaces[0].live_end, 100);
	CHECK_EQ_INT(a->memory->spaces[1].live_end, 0);
	CHECK_EQ_INT(a->memory->nsites, 1);
	CHECK(NEAR(a->memory->sites[0].bytes, 800, 1e-9));
	CHECK(NEAR(a->memory->sites[0].live_end_bytes, 100, 1e-9));
	CHECK(NEAR(a->memory->sites[0].max_live, 700, 1e-9));

	/* refused: said, with no space */
	pbm_release(&b);
	b.p.processes[0].mem.state = CBN_MEM_REFUSED;
	b.p.processes[0].mem.reason = "the program is statically linked";
	b.p.processes[1].mem.state = CBN_MEM_OFF;
	a = analysed(&b.p);
	REQUIRE(a->memory != NULL);
	CHECK_EQ_INT(a->memory->nspaces, 0);
	CHECK_STR(a->memory->refused, "the program is statically linked");
	pb_free(&b);
}

/* Each rule fires on a profile made for it and stays quiet on a tame one. */
static void test_rules(void)
{
	struct pb b;
	struct fx x;
	const struct analysis *a;
	const struct rule_finding *r;
	uint64_t t0 = 1000000000ull, t;
	int i;

	/* tame: a few long-lived blocks, all freed, peak shared */
	base(&b, &x, 1);
	pbm_on(&b, 0, 1, 0);
	pbm_alloc(&b, 0, t0 + 1000, 0x10, 1 << 20, x.st_helper);
	pbm_alloc(&b, 0, t0 + 2000, 0x20, 1 << 20, x.st_other);
	pbm_alloc(&b, 0, t0 + 3000, 0x30, 1 << 20, x.st_vec);
	pbm_free(&b, 0, t0 + 800000000ull, 0x30);
	pbm_free(&b, 0, t0 + 900000000ull, 0x10);
	pbm_free(&b, 0, t0 + 900000001ull, 0x20);
	pbm_counter(&b, 0, t0 + 1000, 50 << 20, 0);
	pbm_counter(&b, 0, t0 + 500000000ull, 53 << 20, 2 << 20);
	a = analysed(&b.p);
	REQUIRE(a->memory);
	CHECK_EQ_INT(a->memory->nrecos, 0);
	for (i = 0; i < (int)a->memory->nrecos; i++)
		fprintf(stderr, "unexpected: %s: %s\n", a->memory->recos[i].id,
			a->memory->recos[i].evidence);
	pbm_release(&b);

	/* churn: 120000 blocks freed after 10 us (over 100000 a second of the
	 * 1 s run); one big block dominates the peak and leaks; RSS grows 300
	 * MiB past the heap */
	for (i = 0, t = t0 + 1000; i < 120000; i++, t += 2000) {
		pbm_alloc(&b, 0, t, 0x100000 + (uint64_t)i * 64, 64, x.st_other);
		pbm_free(&b, 0, t + 10000, 0x100000 + (uint64_t)i * 64);
	}
	pbm_alloc(&b, 0, t0 + 100, 0x10, 128 << 20, x.st_vec);
	/* keep allocs sorted: move the big one first */
	{
		struct prof_mem_alloc big = b.p.mem_allocs[b.p.nmem_allocs - 1];
		memmove(b.p.mem_allocs + 1, b.p.mem_allocs,
			(b.p.nmem_allocs - 1) * sizeof(*b.p.mem_allocs));
		b.p.mem_allocs[0] = big;
	}
	pbm_counter(&b, 0, t0 + 50, 40 << 20, 0);
	pbm_counter(&b, 0, t0 + 600000000ull, 360 << 20, 128 << 20);
	a = analysed(&b.p);
	REQUIRE(a->memory);
	REQUIRE((r = reco(a, "alloc-churn")) != NULL);
	CHECK(strstr(r->evidence, "120000 allocations") != NULL);
	CHECK(strstr(r->evidence, "100% freed within 1 ms") != NULL);
	CHECK(strstr(r->evidence, "other_site") != NULL);
	REQUIRE((r = reco(a, "peak-one-site")) != NULL);
	CHECK(strstr(r->evidence, "make_buffer") != NULL);
	CHECK(strstr(r->evidence, "128.00 MiB") != NULL);
	REQUIRE((r = reco(a, "leak")) != NULL);
	CHECK(strstr(r->evidence, "128.00 MiB in 1 blocks") != NULL);
	CHECK(reco(a, "leak-growing") == NULL);
	REQUIRE((r = reco(a, "rss-retained")) != NULL);
	CHECK(strstr(r->evidence, "RSS 360.00 MiB") != NULL);
	CHECK(strstr(r->evidence, "includes profiler overhead") != NULL);
	/* table order: churn, peak, leak, rss */
	CHECK_STR(a->memory->recos[0].id, "alloc-churn");
	CHECK_STR(a->memory->recos[a->memory->nrecos - 1].id, "rss-retained");
	pbm_release(&b);

	/* thresholds that scale with the program: one site holding all of an
	 * 8 MiB peak is no peak advice (under 32 MiB), nor one holding all of a
	 * 40 MiB peak in a 400 MiB RSS (a tenth of it); and a 100 KiB leak
	 * beside a 40 MiB peak (under 1 % of it) is no leak finding */
	pbm_alloc(&b, 0, t0 + 100, 0x10, 8 << 20, x.st_vec);
	pbm_counter(&b, 0, t0 + 50, 10 << 20, 0);
	pbm_counter(&b, 0, t0 + 600000000ull, 20 << 20, 8 << 20);
	a = analysed(&b.p);
	REQUIRE(a->memory);
	CHECK(reco(a, "peak-one-site") == NULL);
	CHECK(reco(a, "leak") != NULL); /* 8 MiB of an 8 MiB peak still is */
	pbm_release(&b);
	pbm_alloc(&b, 0, t0 + 100, 0x10, 40 << 20, x.st_vec);
	pbm_alloc(&b, 0, t0 + 200, 0x20, 100 << 10, x.st_other);
	pbm_free(&b, 0, t0 + 300, 0x10);
	pbm_counter(&b, 0, t0 + 50, 100 << 20, 0);
	pbm_counter(&b, 0, t0 + 600000000ull, 400 << 20, 100 << 10);
	a = analysed(&b.p);
	REQUIRE(a->memory);
	CHECK(reco(a, "peak-one-site") == NULL);
	CHECK(reco(a, "leak") == NULL);
	pbm_release(&b);

	/* a leak that grows per step: 10 steps, 100 KiB leaked in each */
	for (i = 0; i < 11; i++)
		pbm_range(&b, 0, t0 + (uint64_t)i * 50000000ull, t0 + (uint64_t)i * 50000000ull,
			  CBN_RANGE_STEP, 0, "step");
	for (i = 0; i < 10; i++)
		pbm_alloc(&b, 0, t0 + (uint64_t)i * 50000000ull + 1000, 0x1000 + (uint64_t)i,
			  100 << 10, x.st_helper);
	a = analysed(&b.p);
	REQUIRE((r = reco(a, "leak-growing")) != NULL);
	CHECK(strstr(r->evidence, "born in 10 of 10 steps") != NULL);
	CHECK(strstr(r->evidence, "100.00 KiB per step") != NULL);
	CHECK(strstr(r->evidence, "helper") != NULL);
	CHECK(reco(a, "leak") == NULL);
	pbm_release(&b);

	/* steps from a repeated outermost range (given out of time order), leaks
	 * in 4 of its 5 instances, two blocks in one of them */
	for (i = 4; i >= 0; i--)
		pbm_range(&b, 0, t0 + (uint64_t)i * 100000000ull,
			  t0 + (uint64_t)i * 100000000ull + 90000000ull, CBN_RANGE_PUSHPOP, 0, "iter");
	pbm_range(&b, 0, t0, t0 + 10, CBN_RANGE_PUSHPOP, 0, "init");
	for (i = 0; i < 4; i++)
		pbm_alloc(&b, 0, t0 + (uint64_t)i * 100000000ull + 1000, 0x1000 + (uint64_t)i,
			  100 << 10, x.st_helper);
	pbm_alloc(&b, 0, t0 + 3 * 100000000ull + 2000, 0x2000, 100 << 10, x.st_helper);
	a = analysed(&b.p);
	REQUIRE((r = reco(a, "leak-growing")) != NULL);
	CHECK(strstr(r->evidence, "born in 4 of 5 steps") != NULL);
	CHECK(strstr(r->evidence, "100.00 KiB per step") != NULL);
	pbm_release(&b);

	/* without steps: never-freed blocks spread over the run */
	for (i = 0; i < 10; i++)
		pbm_alloc(&b, 0, t0 + (uint64_t)i * 90000000ull + 1000, 0x1000 + (uint64_t)i,
			  100 << 10, x.st_helper);
	a = analysed(&b.p);
	REQUIRE((r = reco(a, "leak-growing")) != NULL);
	CHECK(strstr(r->evidence, "never freed, allocated from") != NULL);
	pbm_release(&b);
	pb_free(&b);
}

/* Two functions of this executable whose entry + 1 serves as a return
 * address: the loader must symbolize pc - 1, inside them. */
__attribute__((noinline)) int mem_probe_a(int x);
__attribute__((noinline)) int mem_probe_b(int x);
__attribute__((noinline)) int mem_probe_a(int x)
{
	return x * 3 + 1;
}
__attribute__((noinline)) int mem_probe_b(int x)
{
	return mem_probe_a(x) * 5 + 2;
}

/* Through the real loader: header.mem, records of two threads in time order,
 * stacks symbolized at pc - 1, counters sorted, a refused process. */
static void test_load(void)
{
	struct synth_self me;
	struct synth s;
	char dir[] = "/tmp/cbn-test-memory-XXXXXX", path[256], err[256];
	uint64_t pcs[2] = { (uint64_t)(uintptr_t)&mem_probe_a + 1,
			    (uint64_t)(uintptr_t)&mem_probe_b + 1 };
	struct profile *p = NULL;
	const struct analysis *a;
	const struct prof_stack *st;
	struct cbn_file_header *h;
	size_t i;

	if (synth_self_find(&me) != 0) {
		fprintf(stderr, "test_load: cannot find this executable's segments; skipped\n");
		return;
	}
	REQUIRE(mkdtemp(dir) != NULL);
	synth_init(&s, 100, 1, 0, 0, me.path);
	synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
	synth_self_module(&s, &me);
	synth_thread(&s, CBN_REC_THREAD_START, 20, 100, "main", 0);
	synth_mem_on(&s, 1, CBN_MEMF_USABLE);
	h = synth_hdr(&s);
	h->mem.host_peak = 3000;
	h->mem.host_peak_ts = 1000002500ull;
	h->mem.allocs = 3;
	h->mem.alloc_bytes = 3000;
	h->mem.frees = 1;
	h->mem.host_live = 2000;
	h->mem.rss_peak = 1 << 20;
	synth_chunk(&s, CBN_CHUNK_MEMORY, 100);
	synth_mem_alloc(&s, 1000001000ull, 0x1000, 1000, 100, CBN_ALLOC_HEAP, CBN_AFN_MALLOC, pcs, 2);
	synth_mem_alloc(&s, 1000003000ull, 0x3000, 1000, 100, CBN_ALLOC_HEAP, CBN_AFN_MALLOC, pcs + 1, 1);
	synth_chunk(&s, CBN_CHUNK_MEMORY, 101);
	synth_mem_alloc(&s, 1000002000ull, 0x2000, 1000, 101, CBN_ALLOC_MMAP, CBN_AFN_MMAP, NULL, 0);
	synth_mem_free(&s, 1000002600ull, 0x1000, 1000, 101, CBN_ALLOC_HEAP, CBN_AFN_FREE);
	synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
	synth_mem_counters(&s, 1000005000ull, 2 << 20, 2000);
	synth_mem_counters(&s, 1000004000ull, 1 << 20, 3000);
	synth_exit(&s, 1000006000ull, 0);
	snprintf(path, sizeof(path), "%s/100.0.cbp", dir);
	REQUIRE(synth_write(&s, path) == 0);
	synth_free(&s);

	/* a child whose memory was refused */
	synth_init(&s, 101, 100, 0, 0, me.path);
	h = synth_hdr(&s);
	h->start_mono_ns = 1000000500ull;
	h->mem.state = CBN_MEM_REFUSED;
	h->mem.reason_len = (uint32_t)strlen("the allocator hooks did not load");
	memcpy(h->mem.reason, "the allocator hooks did not load", h->mem.reason_len);
	synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
	synth_exit(&s, 1000005500ull, 0);
	snprintf(path, sizeof(path), "%s/101.0.cbp", dir);
	REQUIRE(synth_write(&s, path) == 0);
	synth_free(&s);

	CHECK(prof_load(dir, &p, err, sizeof(err)) >= 0);
	REQUIRE(p != NULL);
	REQUIRE(p->nprocesses == 2);
	CHECK_EQ_INT(p->processes[0].mem.state, CBN_MEM_ON);
	CHECK_EQ_INT(p->processes[0].mem.rate, 1);
	CHECK(p->processes[0].mem.flags & CBN_MEMF_USABLE);
	CHECK_EQ_INT(p->processes[0].mem.host_peak, 3000);
	CHECK_EQ_INT(p->processes[0].mem.host_live_end, 2000);
	CHECK_EQ_INT(p->processes[0].mem.sampled, 3);
	CHECK_STR(p->processes[0].mem.reason, "");
	CHECK_EQ_INT(p->processes[1].mem.state, CBN_MEM_REFUSED);
	CHECK_STR(p->processes[1].mem.reason, "the allocator hooks did not load");
	/* allocations of both threads in time order */
	REQUIRE(p->nmem_allocs == 3);
	CHECK_EQ_INT(p->mem_allocs[0].addr, 0x1000);
	CHECK_EQ_INT(p->mem_allocs[1].addr, 0x2000);
	CHECK_EQ_INT(p->mem_allocs[2].addr, 0x3000);
	CHECK_EQ_INT(p->threads[p->mem_allocs[1].thread].tid, 101);
	CHECK_EQ_INT(p->mem_allocs[1].kind, CBN_ALLOC_MMAP);
	CHECK_EQ_INT(p->mem_allocs[1].stack, PROF_NONE);
	REQUIRE(p->nmem_frees == 1);
	CHECK_EQ_INT(p->threads[p->mem_frees[0].thread].tid, 101);
	REQUIRE(p->nmem_counters == 2);
	CHECK_EQ_INT(p->mem_counters[0].ts, 1000004000ull);
	CHECK_EQ_INT(p->mem_counters[0].host_live, 3000);
	/* the stack: return addresses looked up at pc - 1, inside the probes */
	REQUIRE(p->mem_allocs[0].stack < p->nstacks);
	st = &p->stacks[p->mem_allocs[0].stack];
	REQUIRE(st->nframes >= 2);
	CHECK_STR(p->funcs[p->frames[st->first].func].name, "mem_probe_a");
	CHECK_EQ_INT(p->frames[st->first].addr, pcs[0]);
	CHECK_STR(p->funcs[p->frames[st->first + st->nframes - 1].func].name, "mem_probe_b");

	a = analysed(p);
	REQUIRE(a->memory != NULL);
	CHECK_STR(a->memory->refused, "the allocator hooks did not load");
	REQUIRE(a->memory->nspaces == 1);
	CHECK_STR(a->memory->spaces[0].name, "host");
	CHECK_EQ_INT(a->memory->spaces[0].peak, 3000);
	CHECK_EQ_INT(a->memory->spaces[0].peak_exact, 1);
	CHECK_EQ_INT(a->memory->spaces[0].rss_peak, 2 << 20);
	/* at the peak (2.5 us): the first two blocks, 1000 B each, one site each */
	CHECK_EQ_INT(a->memory->spaces[0].nat_peak, 2);
	CHECK(site_named(a, "mem_probe_a") != NULL);
	CHECK(site_named(a, "mem_probe_b") != NULL);
	CHECK_EQ_INT(a->memory->nleaks, 2);
	for (i = 0; i < a->memory->nsites; i++)
		CHECK(a->memory->sites[i].records == 1);
	analysed_free_all();
	prof_free(p);
	snprintf(path, sizeof(path), "%s/100.0.cbp", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/101.0.cbp", dir);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	test_load();
	test_allocator_frames();
	test_weights();
	test_peak_replay();
	test_peak_counters();
	test_lifetimes();
	test_processes();
	test_address_reuse();
	test_rules();
	return test_result();
}
