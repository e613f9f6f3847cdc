/*
 * test_mem_fixture.h — a hand-built memory view (analysis/mem/memory.h) for the
 * writers' unit tests (JSON, trace, gate): a profile from
 * test_export_fixture.h with one process, and a struct analysis whose
 * memory is host-only, GPU-only, both, or empty (no spaces), as
 * analysis_run would hand it over.  Static storage: one fixture at a time.
 */
#ifndef CBN_TEST_MEM_FIXTURE_H
#define CBN_TEST_MEM_FIXTURE_H

#include "analysed.h"
#include "memory.h"
#include "test_export_fixture.h"

enum mf_kind { MF_EMPTY, MF_HOST, MF_GPU, MF_BOTH };

#define MF_PID 4242
#define MF_HOST_PEAK 3000000ull       /* at EX_T0 + 40 ms */
#define MF_GPU_PEAK (256ull << 20)    /* at EX_T0 + 60 ms */

static struct mem_point mf_host_tl[4], mf_gpu_tl[4];
static struct mem_peak_site mf_host_at[2], mf_gpu_at[1];
static struct mem_space mf_spaces[2];
static struct mem_site mf_sites[3];
static uint32_t mf_leaks[2];
static struct mem_analysis mf_mem;

/* The profile: main -> grow (host site at app.c:42), main -> leak (app.c:77),
 * main -> upload (the cudaMalloc caller, app.c:99); CPU samples on grow. */
static inline void mf_profile(struct profile *p)
{
	uint32_t th, f_main, f_grow, f_leak, f_up, s;

	ex_init(p, "./app");
	ex_process(p, MF_PID, 0, "/usr/bin/app");
	th = ex_thread(p, MF_PID, 0, "app");
	f_main = ex_func(p, "main", "/src/app.c", 3, "app");
	f_grow = ex_func(p, "grow_buffer", "/src/app.c", 40, "app");
	f_leak = ex_func(p, "leak_table", "/src/app.c", 70, "app");
	f_up = ex_func(p, "upload", "/src/app.c", 95, "app");
	(void)f_leak;
	(void)f_up;
	s = ex_stack(p, 2, (uint32_t[]){f_main, f_grow});
	for (int k = 0; k < 50; k++)
		ex_sample(p, th, EX_T0 + (uint64_t)k * 2 * EX_MS, s, 1);
	ex_range(p, "step 3", th, EX_T0 + 30 * EX_MS, EX_T0 + 50 * EX_MS, 0);
}

/* The analysis of p with the memory view of kind k (NULL memory for none:
 * pass k < 0).  The returned struct is a copy: writers only read it. */
static inline struct analysis mf_analysis(const struct profile *p, int k)
{
	struct analysis a = *analysed(p);
	size_t ns = 0, nsite = 0;

	if (k < 0) {
		a.memory = NULL;
		return a;
	}
	memset(&mf_mem, 0, sizeof(mf_mem));
	if (k == MF_HOST || k == MF_BOTH) {
		mf_sites[nsite] = (struct mem_site){
			.kind = MEM_SPACE_HOST, .func = 1, .file = "/src/app.c", .line = 42,
			.stack = 0, .bytes = 52428800.4, .allocs = 1000.2, .records = 120,
			.live_end_bytes = 0, .max_live = 2000000, .short_lived = 900,
			.median_life_ns = 40000};
		mf_sites[nsite + 1] = (struct mem_site){
			.kind = MEM_SPACE_HOST, .func = 2, .file = "/src/app.c", .line = 77,
			.inlined = 1, .stack = PROF_NONE, .bytes = 1048576, .allocs = 16,
			.records = 9, .live_end_bytes = 1048576, .live_end_blocks = 16,
			.max_live = 1048576};
		mf_host_tl[0] = (struct mem_point){EX_T0 + 10 * EX_MS, 1000000, 8000000};
		mf_host_tl[1] = (struct mem_point){EX_T0 + 40 * EX_MS, (int64_t)MF_HOST_PEAK, 9000000};
		mf_host_tl[2] = (struct mem_point){EX_T0 + 70 * EX_MS, 1500000, 9500000};
		mf_host_tl[3] = (struct mem_point){EX_T0 + 90 * EX_MS, 1048576, 9000000};
		mf_host_at[0] = (struct mem_peak_site){(uint32_t)nsite, 1951424};
		mf_host_at[1] = (struct mem_peak_site){(uint32_t)nsite + 1, 1048576};
		mf_spaces[ns++] = (struct mem_space){
			.kind = MEM_SPACE_HOST, .process = 0, .device = 0, .name = "host",
			.peak = MF_HOST_PEAK, .peak_ts = EX_T0 + 40 * EX_MS, .peak_exact = 1,
			.peak_range = 0, .rss_peak = 9500000, .live_end = 1048576, .allocs = 1016,
			.frees = 1000, .alloc_bytes = 53477376, .timeline = mf_host_tl,
			.ntimeline = 4, .at_peak = mf_host_at, .nat_peak = 2};
		mf_leaks[mf_mem.nleaks++] = (uint32_t)nsite + 1;
		nsite += 2;
		mf_mem.rate = 524288;
		mf_mem.sampled = 129;
		mf_mem.lost = 1;
	}
	if (k == MF_GPU || k == MF_BOTH) {
		mf_sites[nsite] = (struct mem_site){
			.kind = MEM_SPACE_GPU, .device = 0, .func = 3, .file = "/src/app.c",
			.line = 99, .stack = PROF_NONE, .bytes = (double)MF_GPU_PEAK, .allocs = 2,
			.records = 2, .live_end_bytes = 0, .max_live = (double)MF_GPU_PEAK};
		mf_gpu_tl[0] = (struct mem_point){EX_T0 + 20 * EX_MS, 128 << 20, 128 << 20};
		mf_gpu_tl[1] = (struct mem_point){EX_T0 + 60 * EX_MS, (int64_t)MF_GPU_PEAK,
						 MF_GPU_PEAK + (64 << 20)};
		mf_gpu_tl[2] = (struct mem_point){EX_T0 + 80 * EX_MS, 0, 64 << 20};
		mf_gpu_tl[3] = (struct mem_point){EX_T0 + 95 * EX_MS, 0, 0};
		mf_gpu_at[0] = (struct mem_peak_site){(uint32_t)nsite, (double)MF_GPU_PEAK};
		mf_spaces[ns++] = (struct mem_space){
			.kind = MEM_SPACE_GPU, .process = PROF_NONE, .device = 0, .name = "GPU 0",
			.peak = MF_GPU_PEAK, .peak_ts = EX_T0 + 60 * EX_MS, .peak_exact = 1,
			.peak_range = PROF_NONE, .reserved_peak = MF_GPU_PEAK + (64 << 20),
			.total = 80ull << 30, .live_end = 0, .allocs = 2, .frees = 2,
			.alloc_bytes = MF_GPU_PEAK, .timeline = mf_gpu_tl, .ntimeline = 4,
			.at_peak = mf_gpu_at, .nat_peak = 1};
		nsite++;
	}
	mf_mem.exact = 0;
	mf_mem.spaces = ns ? mf_spaces : NULL;
	mf_mem.nspaces = ns;
	mf_mem.sites = nsite ? mf_sites : NULL;
	mf_mem.nsites = nsite;
	mf_mem.leaks = mf_mem.nleaks ? mf_leaks : NULL;
	a.memory = &mf_mem;
	return a;
}

#endif
