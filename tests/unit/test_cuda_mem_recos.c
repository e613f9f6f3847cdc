/*
 * test_cuda_mem_recos.c — the GPU memory recommendations: cudaMalloc/cudaFree
 * churn (spread over the run, or inside a repeating range, with the top
 * allocation site), pinned host memory that failed or takes much of the RAM,
 * and a device peak near its memory; each carries its numbers and none fires
 * on allocations done once, up front, well below the limits.
 */
#include <stdio.h>
#include <unistd.h>

#include "test_cuda_build.h"
#include "testlib.h"

#define MiB (1ull << 20)

static void cb_mem(struct profile *p, uint32_t api, uint64_t addr, uint64_t bytes, int alloc,
		   uint32_t kind)
{
	struct prof_cuda_memory m = { .ts = p->cuda_api[api].start + 1, .address = addr,
				      .bytes = bytes, .alloc = alloc, .api = api, .mem_kind = kind,
				      .correlation = p->cuda_api[api].correlation };

	PB_ADD(p->memory, p->nmemory, m);
}

static void free_all(struct profile *p)
{
	pb_drop(p->memory);
	pb_profile_free(p);
}

static struct cuda_analysis *analyze(struct profile *p)
{
	struct cuda_analysis *a;

	REQUIRE(cuda_analyze(p, &a) == 0 && a);
	return a;
}

static const char *evidence(const struct cuda_analysis *a, const char *id)
{
	const struct rule_finding *r = cb_reco(a, id);

	return r ? r->evidence : "";
}

/* 30 steps of 1 ms; allocation calls from alloc_buf (buf.c:12). */
static void base(struct profile *p, uint32_t *stack)
{
	uint32_t rt, fn, mainf;

	cb_init(p);
	cb_h100(p, 0);
	p->devices[0].global_mem = 1024 * MiB;
	rt = cb_func(p, "cudaMalloc", "", 0, "libcudart.so.13");
	fn = cb_func(p, "alloc_buf", "/src/buf.c", 10, "app");
	mainf = cb_func(p, "main", "/src/main.c", 1, "app");
	*stack = cb_stack(p, 3, (uint32_t[]){ rt, fn, mainf }, (uint32_t[]){ 0, 12, 5 });
	p->wall_ns = 30 * MS;
}

/* Allocations once at start, freed once at the end: nothing to say. */
static void test_quiet(void)
{
	struct profile p;
	struct cuda_analysis *a;
	uint32_t st, c;
	int i;

	base(&p, &st);
	for (i = 0; i < 30; i++) {
		c = cb_api(&p, "cudaMalloc", 0, (uint64_t)i * 10 * US, (uint64_t)i * 10 * US + 5 * US);
		p.cuda_api[c].stack = st;
		cb_mem(&p, c, 0x100000 + i * 0x1000, 4 * MiB, 1, CBN_MEM_DEVICE);
	}
	c = cb_api(&p, "cudaMallocHost", 0, 1 * MS, 1 * MS + 5 * US);
	cb_mem(&p, c, 0x900000, 16 * MiB, 1, CBN_MEM_PINNED);
	a = analyze(&p);
	/* 30 calls, but all in the first slice of the run and in no range */
	CHECK(cb_reco(a, "cuda-malloc-churn") == NULL);
	CHECK(cb_reco(a, "pinned-memory") == NULL);
	CHECK(cb_reco(a, "gpu-memory-full") == NULL);
	cuda_analysis_free(a);
	free_all(&p);
}

/* cudaMalloc + cudaFree in every one of 30 "step" ranges. */
static void test_churn_in_steps(void)
{
	struct profile p;
	struct cuda_analysis *a;
	uint32_t st, c;
	const char *e;
	int i;

	base(&p, &st);
	for (i = 0; i < 30; i++) {
		uint64_t t = (uint64_t)i * MS;

		cb_range(&p, "step", 0, t, t + 900 * US);
		c = cb_api(&p, "cudaMalloc", 0, t + 10 * US, t + 60 * US);
		p.cuda_api[c].stack = st;
		cb_mem(&p, c, 0x100000, 8 * MiB, 1, CBN_MEM_DEVICE);
		c = cb_api(&p, "cudaFree", 0, t + 500 * US, t + 540 * US);
		cb_mem(&p, c, 0x100000, 8 * MiB, 0, CBN_MEM_DEVICE);
	}
	a = analyze(&p);
	e = evidence(a, "cuda-malloc-churn");
	CHECK(strstr(e, "60 synchronous allocation calls (30 allocations, 30 frees)") != NULL);
	CHECK(strstr(e, "took 2.700 ms") != NULL);
	CHECK(strstr(e, "60 inside range \"step\" (30 instances)") != NULL);
	CHECK(strstr(e, "top allocation site: alloc_buf (buf.c:12), 30 calls") != NULL);
	CHECK(strstr(cb_reco(a, "cuda-malloc-churn")->message, "cudaMallocAsync") != NULL);
	cuda_analysis_free(a);
	free_all(&p);
}

/* Driver-API allocations spread over the run, no ranges: fires by spread. */
static void test_churn_spread(void)
{
	struct profile p;
	struct cuda_analysis *a;
	uint32_t st, c;
	const char *e;
	int i;

	base(&p, &st);
	for (i = 0; i < 20; i++) {
		uint64_t t = (uint64_t)i * 1500 * US;

		c = cb_api(&p, i % 2 ? "cuMemFree" : "cuMemAlloc", 0, t, t + 20 * US);
		cb_mem(&p, c, 0x100000, i % 2 ? 0 : 1 * MiB, !(i % 2), CBN_MEM_DEVICE);
	}
	a = analyze(&p);
	e = evidence(a, "cuda-malloc-churn");
	CHECK(strstr(e, "20 synchronous allocation calls (10 allocations, 10 frees)") != NULL);
	CHECK(strstr(e, "in 10 of 10 slices") != NULL);
	CHECK(strstr(e, "inside range") == NULL);
	cuda_analysis_free(a);
	free_all(&p);

	/* 19 calls: below the minimum */
	base(&p, &st);
	for (i = 0; i < 19; i++)
		cb_api(&p, "cudaFree", 0, (uint64_t)i * MS, (uint64_t)i * MS + 10 * US);
	a = analyze(&p);
	CHECK(cb_reco(a, "cuda-malloc-churn") == NULL);
	cuda_analysis_free(a);
	free_all(&p);
}

static void test_pinned(void)
{
	struct profile p;
	struct cuda_analysis *a;
	uint32_t st, c;
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	uint64_t ram = (uint64_t)pages * (uint64_t)psz;
	char want[128];

	/* a failed cudaHostAlloc */
	base(&p, &st);
	c = cb_api(&p, "cudaHostAlloc", 0, 1 * MS, 2 * MS);
	cb_mem(&p, c, 0x900000, 64 * MiB, 1, CBN_MEM_PINNED);
	c = cb_api(&p, "cudaHostAlloc", 0, 3 * MS, 4 * MS);
	p.cuda_api[c].ret = 2;
	a = analyze(&p);
	CHECK_STR(evidence(a, "pinned-memory"),
		  "1 pinned host allocations failed (first: cudaHostAlloc returned 2); pinned peak "
		  "64.0 MiB");
	cuda_analysis_free(a);
	free_all(&p);

	/* half of this machine's RAM pinned (records only: nothing is allocated) */
	if (pages <= 0 || psz <= 0) {
		fprintf(stderr, "test_pinned: RAM size unknown here, large case not checked\n");
		return;
	}
	base(&p, &st);
	c = cb_api(&p, "cudaMallocHost", 0, 1 * MS, 2 * MS);
	cb_mem(&p, c, 0x900000, ram / 4, 1, CBN_MEM_PINNED);
	c = cb_api(&p, "cudaMallocHost", 0, 3 * MS, 4 * MS);
	cb_mem(&p, c, 0x900000 + ram, ram / 4, 1, CBN_MEM_PINNED);
	a = analyze(&p);
	snprintf(want, sizeof(want), "pinned host memory peaked at %.1f MiB = 50.0%%",
		 (double)(ram / 4 * 2) / MiB);
	CHECK(strstr(evidence(a, "pinned-memory"), want) != NULL);
	/* pinned bytes are not device memory */
	CHECK(cb_reco(a, "gpu-memory-full") == NULL);
	cuda_analysis_free(a);
	free_all(&p);
}

/* 950 MiB of a 1 GiB device live inside range "fwd": fires; 900 MiB (87.9 %)
 * does not. */
static void test_gpu_full(void)
{
	struct profile p;
	struct cuda_analysis *a;
	uint32_t st, c;

	base(&p, &st);
	cb_range(&p, "fwd", 0, 5 * MS, 8 * MS);
	c = cb_api(&p, "cudaMalloc", 0, 1 * MS, 2 * MS);
	cb_mem(&p, c, 0x100000, 450 * MiB, 1, CBN_MEM_DEVICE);
	c = cb_api(&p, "cudaMalloc", 0, 6 * MS, 7 * MS);
	cb_mem(&p, c, 0x40000000, 500 * MiB, 1, CBN_MEM_DEVICE);
	a = analyze(&p);
	CHECK_STR(evidence(a, "gpu-memory-full"),
		  "GPU 0: allocations peaked at 950.0 MiB = 92.8% of its 1024.0 MiB, 6.000 ms after "
		  "the start in range \"fwd\"");
	cuda_analysis_free(a);
	free_all(&p);

	base(&p, &st);
	c = cb_api(&p, "cudaMalloc", 0, 1 * MS, 2 * MS);
	cb_mem(&p, c, 0x100000, 900 * MiB, 1, CBN_MEM_DEVICE);
	a = analyze(&p);
	CHECK(cb_reco(a, "gpu-memory-full") == NULL);
	cuda_analysis_free(a);
	free_all(&p);
}

int main(void)
{
	test_quiet();
	test_churn_in_steps();
	test_churn_spread();
	test_pinned();
	test_gpu_full();
	return test_result();
}
