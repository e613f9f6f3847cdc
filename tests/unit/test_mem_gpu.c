/*
 * test_mem_gpu.c — the GPU side of the memory view (src/analysis/mem/mem_gpu.c) on
 * hand-built profiles: per-device live bytes, peak and when, the range open at
 * the peak, reserved bytes with a memory pool, pinned host memory as its own
 * space, allocation sites from the API call's host stack (past the CUDA
 * runtime), short-lived churn, blocks never freed, what was live at the peak,
 * appending after spaces and sites already there, and the timeline's
 * max-preserving downsampling.  Every figure here is exact by construction.
 */
#include <stdio.h>

#include "memory.h"
#include "test_cuda_build.h"
#include "testlib.h"

#define MiB (1ull << 20)

static void cb_mem(struct profile *p, uint64_t ts, uint64_t addr, uint64_t bytes, int alloc,
		   uint32_t device, uint32_t kind, uint32_t api)
{
	struct prof_cuda_memory m = { .ts = ts, .address = addr, .bytes = bytes, .device = device,
				      .mem_kind = kind, .alloc = alloc, .api = api };

	if (api != PROF_NONE)
		m.correlation = p->cuda_api[api].correlation;
	PB_ADD(p->memory, p->nmemory, m);
}

static uint32_t api_at(struct profile *p, const char *name, uint64_t ts, uint32_t stack)
{
	uint32_t a = cb_api(p, name, 0, ts - 10 * US, ts + 10 * US);

	p->cuda_api[a].stack = stack;
	return a;
}

static const struct mem_site *site_named(const struct profile *p, const struct mem_analysis *m,
					 const char *fn, uint32_t *idx)
{
	size_t i;

	for (i = 0; i < m->nsites; i++) {
		const struct mem_site *s = &m->sites[i];

		if (s->kind == MEM_SPACE_GPU && s->func < p->nfuncs &&
		    strcmp(p->funcs[s->func].name, fn) == 0) {
			if (idx)
				*idx = (uint32_t)i;
			return s;
		}
	}
	return NULL;
}

static void free_profile(struct profile *p)
{
	pb_drop(p->memory);
	pb_drop(p->mempools);
	pb_profile_free(p);
}

static void test_device_view(void)
{
	struct profile p;
	struct mem_analysis *m = calloc(1, sizeof(*m));
	uint32_t rt, weights, step, act, mainf, s_w, s_step, s_act, a, i, fwd = 0;
	uint32_t i_w = 0, i_step = 0, i_act = 0;
	const struct mem_space *g0, *g1, *pin;
	const struct mem_site *sw, *ss, *sa;
	struct prof_cuda_mempool pool = { .ts = 5 * MS, .address = 0xe000000, .size = 64 * MiB,
					  .op = CBN_MEMPOOL_CREATED, .pool_type = 1 };
	size_t k;

	cb_init(&p);
	cb_h100(&p, 0);
	p.devices[0].global_mem = 80ull << 30;
	rt = cb_func(&p, "cudaMalloc", "", 0, "libcudart.so.13");
	weights = cb_func(&p, "alloc_weights", "/src/train.c", 10, "train");
	step = cb_func(&p, "step", "/src/train.c", 20, "train");
	act = cb_func(&p, "alloc_act", "/src/train.c", 40, "train");
	mainf = cb_func(&p, "main", "/src/train.c", 50, "train");
	s_w = cb_stack(&p, 3, (uint32_t[]){ rt, weights, mainf }, (uint32_t[]){ 0, 12, 55 });
	s_step = cb_stack(&p, 3, (uint32_t[]){ rt, step, mainf }, (uint32_t[]){ 0, 22, 56 });
	s_act = cb_stack(&p, 3, (uint32_t[]){ rt, act, mainf }, (uint32_t[]){ 0, 42, 57 });
	cb_range(&p, "train", 0, 0, 50 * MS);
	cb_range(&p, "fwd", 0, 19 * MS, 21 * MS);
	p.ranges[1].depth = 1;
	fwd = 1;

	/* weights: 100 MiB, never freed */
	a = api_at(&p, "cudaMalloc", 1 * MS, s_w);
	cb_mem(&p, 1 * MS, 0x1000000, 100 * MiB, 1, 0, CBN_MEM_DEVICE, a);
	/* ten steps: 10 MiB each, freed 0.5 ms later (the release says 0 bytes,
	 * as some CUPTI releases do: the block's size comes from its allocation) */
	for (i = 0; i < 10; i++) {
		uint64_t t = 10 * MS + i * MS;

		a = api_at(&p, "cudaMalloc", t, s_step);
		cb_mem(&p, t, 0x9000000, 10 * MiB, 1, 0, CBN_MEM_DEVICE, a);
		a = api_at(&p, "cudaFree", t + 500 * US, s_step);
		cb_mem(&p, t + 500 * US, 0x9000000, 0, 0, 0, CBN_MEM_DEVICE, a);
	}
	/* the pool and one async block from it (no API call recorded) */
	pool.process = 0;
	PB_ADD(p.mempools, p.nmempools, pool);
	cb_mem(&p, 6 * MS, 0xe000100, 16 * MiB, 1, 0, CBN_MEM_DEVICE, PROF_NONE);
	p.memory[p.nmemory - 1].pool_address = 0xe000000;
	p.memory[p.nmemory - 1].pool_size = 64 * MiB;
	p.memory[p.nmemory - 1].is_async = 1;
	/* its release without the pool extension (an older file): still a pool block */
	cb_mem(&p, 7 * MS, 0xe000100, 16 * MiB, 0, 0, CBN_MEM_DEVICE, PROF_NONE);
	/* activations: 300 MiB inside "fwd": the peak, 400 MiB at 20 ms */
	a = api_at(&p, "cudaMalloc", 20 * MS, s_act);
	cb_mem(&p, 20 * MS, 0x2000000, 300 * MiB, 1, 0, CBN_MEM_DEVICE, a);
	a = api_at(&p, "cudaFree", 25 * MS, s_act);
	cb_mem(&p, 25 * MS, 0x2000000, 300 * MiB, 0, 0, CBN_MEM_DEVICE, a);
	/* pinned host memory, 64 MiB for 1 ms */
	a = api_at(&p, "cudaMallocHost", 8 * MS, s_w);
	cb_mem(&p, 8 * MS, 0x7000000, 64 * MiB, 1, 0, CBN_MEM_PINNED, a);
	cb_mem(&p, 9 * MS, 0x7000000, 64 * MiB, 0, 0, CBN_MEM_PINNED, PROF_NONE);
	/* device 1: 1 MiB, recorded out of timestamp order (per-thread buffers) */
	cb_mem(&p, 30 * MS, 0x3000000, 1 * MiB, 0, 1, CBN_MEM_DEVICE, PROF_NONE);
	cb_mem(&p, 3 * MS, 0x3000000, 1 * MiB, 1, 1, CBN_MEM_DEVICE, PROF_NONE);

	/* a host space and site already there: GPU ones are appended */
	m->spaces = calloc(1, sizeof(*m->spaces));
	m->sites = calloc(1, sizeof(*m->sites));
	REQUIRE(m->spaces && m->sites);
	m->spaces[0].kind = MEM_SPACE_HOST;
	m->nspaces = 1;
	m->sites[0].kind = MEM_SPACE_HOST;
	m->sites[0].bytes = 1e12;
	m->nsites = 1;

	CHECK_EQ_INT(mem_gpu_analyze(&p, m), 0);
	REQUIRE(m->nspaces == 4);
	g0 = &m->spaces[1];
	g1 = &m->spaces[2];
	pin = &m->spaces[3];
	CHECK_EQ_INT(m->spaces[0].kind, MEM_SPACE_HOST);
	CHECK_EQ_INT(g0->kind, MEM_SPACE_GPU);
	CHECK_STR(g0->name, "GPU 0");
	CHECK_STR(g1->name, "GPU 1");
	CHECK_STR(pin->name, "pinned host");
	CHECK_EQ_INT(pin->device, MEM_DEVICE_PINNED);
	CHECK_EQ_INT(g0->process, PROF_NONE);

	CHECK_EQ_INT(g0->peak, 400 * MiB);
	CHECK_EQ_INT(g0->peak_ts, 20 * MS);
	CHECK_EQ_INT(g0->peak_exact, 1);
	CHECK_EQ_INT(g0->peak_range, fwd);
	/* reserved: 400 MiB outside pools + the 64 MiB pool */
	CHECK_EQ_INT(g0->reserved_peak, 464 * MiB);
	CHECK_EQ_INT(g0->total, 80ull << 30);
	CHECK_EQ_INT(g0->allocs, 1 + 10 + 1 + 1);
	CHECK_EQ_INT(g0->frees, 10 + 1 + 1);
	CHECK_EQ_INT(g0->alloc_bytes, 100 * MiB + 100 * MiB + 16 * MiB + 300 * MiB);
	CHECK_EQ_INT(g0->live_end, 100 * MiB);
	REQUIRE(g0->ntimeline == 2 * 10 + 2 + 2 + 1 + 1);
	for (k = 1; k < g0->ntimeline; k++)
		CHECK(g0->timeline[k].ts >= g0->timeline[k - 1].ts);
	/* the pool's reserve shows from its creation on */
	for (k = 0; k < g0->ntimeline; k++)
		if (g0->timeline[k].ts == 6 * MS || g0->timeline[k].ts == 7 * MS)
			CHECK_EQ_INT(g0->timeline[k].rss, 100 * MiB + 64 * MiB);

	CHECK_EQ_INT(g1->peak, 1 * MiB);
	CHECK_EQ_INT(g1->peak_ts, 3 * MS);
	CHECK_EQ_INT(g1->live_end, 0);
	CHECK_EQ_INT(g1->total, 0); /* no DEVICE record for it */
	CHECK_EQ_INT(pin->peak, 64 * MiB);
	CHECK_EQ_INT(pin->live_end, 0);
	CHECK_EQ_INT(pin->total, 0);

	/* sites: the first frame past libcudart, its executing line */
	sw = site_named(&p, m, "alloc_weights", &i_w);
	ss = site_named(&p, m, "step", &i_step);
	sa = site_named(&p, m, "alloc_act", &i_act);
	REQUIRE(sw && ss && sa);
	CHECK(i_w >= 1 && i_step >= 1 && i_act >= 1);
	CHECK_EQ_INT(m->sites[0].kind, MEM_SPACE_HOST);
	CHECK_STR(sw->file, "/src/train.c");
	CHECK_EQ_INT(sw->line, 12);
	CHECK_EQ_INT(sw->stack, s_w);
	CHECK_EQ_INT(sw->device, 0);
	CHECK_NEAR(sw->bytes, 100.0 * MiB, 0);
	CHECK_NEAR(sw->allocs, 1, 0);
	CHECK_EQ_INT(sw->records, 1);
	CHECK_NEAR(sw->live_end_bytes, 100.0 * MiB, 0);
	CHECK_NEAR(sw->live_end_blocks, 1, 0);
	CHECK_NEAR(sw->max_live, 100.0 * MiB, 0);
	CHECK_EQ_INT(sw->median_life_ns, 0);
	CHECK_EQ_INT(ss->line, 22);
	CHECK_NEAR(ss->allocs, 10, 0);
	CHECK_NEAR(ss->bytes, 100.0 * MiB, 0);
	CHECK_NEAR(ss->max_live, 10.0 * MiB, 0);
	CHECK_NEAR(ss->short_lived, 10, 0);
	CHECK_EQ_INT(ss->median_life_ns, 500 * US);
	CHECK_NEAR(ss->live_end_bytes, 0, 0);
	CHECK_NEAR(sa->bytes, 300.0 * MiB, 0);
	CHECK_NEAR(sa->short_lived, 0, 0);
	CHECK_EQ_INT(sa->median_life_ns, 5 * MS);
	/* the pinned block is its own site (same stack as the weights, other space) */
	for (k = 1; k < m->nsites; k++)
		if (m->sites[k].device == MEM_DEVICE_PINNED)
			CHECK_NEAR(m->sites[k].bytes, 64.0 * MiB, 0);
	/* GPU sites by bytes desc, after the host one */
	for (k = 2; k < m->nsites; k++)
		CHECK(m->sites[k].bytes <= m->sites[k - 1].bytes);

	/* at the peak: activations 300 MiB, then weights 100 MiB */
	REQUIRE(g0->nat_peak == 2);
	CHECK_EQ_INT(g0->at_peak[0].site, i_act);
	CHECK_NEAR(g0->at_peak[0].bytes, 300.0 * MiB, 0);
	CHECK_EQ_INT(g0->at_peak[1].site, i_w);
	CHECK_NEAR(g0->at_peak[1].bytes, 100.0 * MiB, 0);

	/* leaks: the weights (device 0) and nothing else */
	REQUIRE(m->nleaks == 1);
	CHECK_EQ_INT(m->leaks[0], i_w);

	mem_free(m);
	free_profile(&p);
}

/* 5000 alloc/free pairs with one outstanding high point: the curve keeps at
 * most MEM_TIMELINE_MAX points and still shows the maximum. */
static void test_downsampling(void)
{
	struct profile p;
	struct mem_analysis *m = calloc(1, sizeof(*m));
	const struct mem_space *g;
	int64_t top = 0;
	size_t i;

	cb_init(&p);
	for (i = 0; i < 5000; i++) {
		uint64_t bytes = i == 3333 ? 777 * MiB : (i % 7 + 1) * MiB;

		cb_mem(&p, 1000 + i * 10, 0x100000 + i * 0x1000, bytes, 1, 0, CBN_MEM_DEVICE, PROF_NONE);
		cb_mem(&p, 1005 + i * 10, 0x100000 + i * 0x1000, bytes, 0, 0, CBN_MEM_DEVICE, PROF_NONE);
	}
	CHECK_EQ_INT(mem_gpu_analyze(&p, m), 0);
	REQUIRE(m->nspaces == 1);
	g = &m->spaces[0];
	CHECK(g->ntimeline <= MEM_TIMELINE_MAX);
	CHECK(g->ntimeline >= MEM_TIMELINE_MAX / 2);
	for (i = 0; i < g->ntimeline; i++)
		if (g->timeline[i].live > top)
			top = g->timeline[i].live;
	CHECK_EQ_INT(top, 777 * MiB);
	CHECK_EQ_INT(g->peak, 777 * MiB);
	CHECK_EQ_INT(g->peak_ts, 1000 + 3333 * 10);
	CHECK_EQ_INT(g->peak_range, PROF_NONE);
	CHECK_EQ_INT(g->allocs, 5000);
	CHECK_EQ_INT(g->live_end, 0);
	/* no API calls: one site, unknown function */
	REQUIRE(m->nsites == 1);
	CHECK_EQ_INT(m->sites[0].func, PROF_NONE);
	CHECK_NEAR(m->sites[0].short_lived, 5000, 0);
	CHECK_EQ_INT(m->nleaks, 0);
	mem_free(m);
	free_profile(&p);
}

/* A caching allocator's blocks still held at the end (PyTorch's pool at
 * exit) are its cache: counted in cached_end, not among the leaks; a block
 * the program itself never freed still is a leak. */
static void test_caching_allocator(void)
{
	struct profile p;
	struct mem_analysis *m = calloc(1, sizeof(*m));
	uint32_t rt, cache, user, mainf, s_c, s_u, a;
	const struct mem_site *sc, *su;

	cb_init(&p);
	cb_h100(&p, 0);
	rt = cb_func(&p, "cudaMalloc", "", 0, "libcudart.so.13");
	cache = cb_func(&p, "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc"
			    "(signed char, unsigned long, CUstream_st*)", "", 0, "libc10_cuda.so");
	user = cb_func(&p, "alloc_table", "/src/t.c", 5, "t");
	mainf = cb_func(&p, "main", "/src/t.c", 50, "t");
	s_c = cb_stack(&p, 3, (uint32_t[]){ rt, cache, mainf }, (uint32_t[]){ 0, 0, 55 });
	s_u = cb_stack(&p, 3, (uint32_t[]){ rt, user, mainf }, (uint32_t[]){ 0, 7, 56 });
	a = api_at(&p, "cudaMalloc", 1 * MS, s_c);
	cb_mem(&p, 1 * MS, 0x1000000, 400 * MiB, 1, 0, CBN_MEM_DEVICE, a);
	a = api_at(&p, "cudaMalloc", 2 * MS, s_u);
	cb_mem(&p, 2 * MS, 0x9000000, 8 * MiB, 1, 0, CBN_MEM_DEVICE, a);
	CHECK_EQ_INT(mem_gpu_analyze(&p, m), 0);
	REQUIRE(m->nspaces == 1);
	CHECK_EQ_INT(m->spaces[0].live_end, 408 * MiB);
	CHECK_EQ_INT(m->spaces[0].cached_end, 400 * MiB);
	sc = site_named(&p, m, p.funcs[mainf].name, NULL);
	su = site_named(&p, m, "alloc_table", NULL);
	REQUIRE(su != NULL);
	CHECK_EQ_INT(su->caching, 0);
	if (sc)
		CHECK_EQ_INT(sc->caching, 1);
	REQUIRE(m->nleaks == 1);
	CHECK(m->sites[m->leaks[0]].func == su->func);
	mem_free(m);
	free_profile(&p);
}

/* No MEMORY2 records: nothing appended. */
static void test_none(void)
{
	struct profile p;
	struct mem_analysis m;

	cb_init(&p);
	memset(&m, 0, sizeof(m));
	CHECK_EQ_INT(mem_gpu_analyze(&p, &m), 0);
	CHECK_EQ_INT(m.nspaces, 0);
	CHECK_EQ_INT(m.nsites, 0);
	pb_profile_free(&p);
}

int main(void)
{
	test_device_view();
	test_downsampling();
	test_caching_allocator();
	test_none();
	return test_result();
}
