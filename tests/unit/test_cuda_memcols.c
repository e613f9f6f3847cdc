/*
 * test_cuda_memcols.c — the autograd-style table's memory columns (CPU Mem,
 * Self CPU Mem, CUDA Mem, Self CUDA Mem): net bytes allocated inside a range
 * or API call on its own thread, host records weighted as sampled estimates,
 * CUDA bytes from the call's own MEMORY2 records (a release of 0 bytes frees
 * its block's size, pinned host memory is not CUDA memory), self = minus the
 * nested rows; the columns' absence without memory data, and the sort keys.
 */
#include <math.h>
#include <stdio.h>

#include "test_cuda_build.h"
#include "testlib.h"

#define MiB (1ull << 20)

static void host_alloc(struct profile *p, uint32_t thread, uint64_t ts, uint64_t size)
{
	struct prof_mem_alloc m = { .ts = ts, .addr = 0x1000 + ts, .size = size, .thread = thread,
				    .stack = PROF_NONE, .kind = CBN_ALLOC_HEAP, .fn = CBN_AFN_MALLOC };

	PB_ADD(p->mem_allocs, p->nmem_allocs, m);
}

static void host_free(struct profile *p, uint32_t thread, uint64_t ts, uint64_t size)
{
	struct prof_mem_free m = { .ts = ts, .addr = 0x1, .size = size, .thread = thread,
				   .kind = CBN_ALLOC_HEAP, .fn = CBN_AFN_FREE };

	PB_ADD(p->mem_frees, p->nmem_frees, m);
}

static void gpu_mem(struct profile *p, uint32_t api, uint64_t addr, uint64_t bytes, int alloc,
		    uint32_t kind)
{
	struct prof_cuda_memory m = { .ts = p->cuda_api[api].start + 1, .address = addr,
				      .bytes = bytes, .alloc = alloc, .api = api, .mem_kind = kind,
				      .correlation = p->cuda_api[api].correlation };

	PB_ADD(p->memory, p->nmemory, m);
}

static const struct cuda_op_row *row(const struct cuda_analysis *a, const char *name)
{
	size_t i;

	for (i = 0; i < a->nops; i++)
		if (strcmp(a->ops[i].name, name) == 0)
			return &a->ops[i];
	return NULL;
}

static void free_all(struct profile *p)
{
	pb_drop(p->mem_allocs);
	pb_drop(p->mem_frees);
	pb_drop(p->memory);
	pb_profile_free(p);
}

/* What a sampled record of s bytes stands for (cbn_format.h). */
static double weight(uint64_t s, uint64_t rate)
{
	return rate > 1 ? (double)s / (1.0 - exp(-(double)s / (double)rate)) : (double)s;
}

static void test_columns(uint64_t rate)
{
	struct profile p;
	struct cuda_analysis *a = NULL;
	const struct cuda_op_row *step, *mal, *fr, *host;
	uint32_t other, m, f, h;
	double w64k = weight(65536, rate), w1000 = weight(1000, rate), w400 = weight(400, rate);

	cb_init(&p);
	p.processes[0].mem.state = CBN_MEM_ON;
	p.processes[0].mem.rate = rate;
	other = cb_thread(&p, 101);
	cb_range(&p, "step", 0, 0, 10 * MS);
	m = cb_api(&p, "cudaMalloc", 0, 1 * MS, 2 * MS);
	f = cb_api(&p, "cudaFree", 0, 5 * MS, 6 * MS);
	h = cb_api(&p, "cudaMallocHost", 0, 7 * MS, 8 * MS);
	gpu_mem(&p, m, 0xa000, 8 * MiB, 1, CBN_MEM_DEVICE);
	gpu_mem(&p, f, 0xa000, 0, 0, CBN_MEM_DEVICE);   /* size from its allocation */
	gpu_mem(&p, h, 0xb000, 64 * MiB, 1, CBN_MEM_PINNED);
	host_alloc(&p, 0, 500 * US, 1000);            /* step itself */
	host_alloc(&p, 0, 1500 * US, 65536);          /* inside cudaMalloc */
	host_free(&p, 0, 4 * MS, 400);                /* step itself */
	host_alloc(&p, other, 3 * MS, 1 << 20);       /* another thread: not the step's */
	host_alloc(&p, 0, 20 * MS, 1 << 20);          /* after the step */

	REQUIRE(cuda_analyze(&p, &a) == 0 && a);
	CHECK_EQ_INT(a->has_mem, 1);
	step = row(a, "step");
	mal = row(a, "cudaMalloc");
	fr = row(a, "cudaFree");
	host = row(a, "cudaMallocHost");
	REQUIRE(step && mal && fr && host);
	/* host: allocations minus frees, each its estimate (exact at rate 1) */
	CHECK_NEAR(step->cpu_mem, w1000 + w64k - w400, 1e-6);
	CHECK_NEAR(step->self_cpu_mem, w1000 - w400, 1e-6);
	if (rate > 1) /* small blocks stand for about rate bytes each */
		CHECK(w1000 > 0.5 * (double)rate && w400 > 0.5 * (double)rate);
	CHECK_NEAR(mal->cpu_mem, w64k, 1e-6);
	CHECK_NEAR(mal->self_cpu_mem, w64k, 1e-6);
	/* CUDA: the calls' own records; the step nets out to 0 */
	CHECK_EQ_INT(mal->cuda_mem, 8 * MiB);
	CHECK_EQ_INT(mal->self_cuda_mem, 8 * MiB);
	CHECK_EQ_INT(fr->cuda_mem, -(int64_t)(8 * MiB));
	CHECK_EQ_INT(step->cuda_mem, 0);
	CHECK_EQ_INT(step->self_cuda_mem, 0);
	CHECK_EQ_INT(host->cuda_mem, 0);
	/* sorted by a torch memory key: cudaMalloc first, cudaFree last */
	CHECK(cuda_sort_key_valid("self_cuda_memory_usage"));
	CHECK(cuda_sort_key_valid("cpu_memory_usage"));
	CHECK_STR(cuda_sort_ops(a, "self_cuda_memory_usage"), "self_cuda_memory_usage");
	CHECK_STR(a->ops[0].name, "cudaMalloc");
	CHECK_STR(a->ops[a->nops - 1].name, "cudaFree");
	cuda_analysis_free(a);
	free_all(&p);
}

/* No memory recorded: no columns. */
static void test_absent(void)
{
	struct profile p;
	struct cuda_analysis *a = NULL;

	cb_init(&p);
	cb_range(&p, "step", 0, 0, 10 * MS);
	cb_api(&p, "cudaMalloc", 0, 1 * MS, 2 * MS);
	REQUIRE(cuda_analyze(&p, &a) == 0 && a);
	CHECK_EQ_INT(a->has_mem, 0);
	CHECK_NEAR(a->ops[0].cpu_mem, 0, 0);
	CHECK_EQ_INT(a->ops[0].cuda_mem, 0);
	cuda_analysis_free(a);
	pb_profile_free(&p);
}

int main(void)
{
	test_columns(1);
	test_columns(512 * 1024);
	test_absent();
	return test_result();
}
