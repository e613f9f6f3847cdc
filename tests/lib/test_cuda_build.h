/*
 * test_cuda_build.h — builds hand-made struct profiles with CUDA data for the
 * test_cuda_* unit tests: processes, threads, API calls, kernels, copies,
 * ranges, devices, stacks, modules.  Arrays grow and are freed by
 * test_profile_builder.h (PB_ADD, pb_profile_free).
 * Times are in ns; helpers take microseconds where noted (_us).
 */
#ifndef CBN_TEST_CUDA_BUILD_H
#define CBN_TEST_CUDA_BUILD_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_analysis.h"
#include "profile.h"
#include "test_profile_builder.h"

#define US 1000ull
#define MS 1000000ull

static inline void cb_init(struct profile *p)
{
	memset(p, 0, sizeof(*p));
	struct prof_process pr = { .pid = 100, .exe = "/usr/bin/app", .period_ns = 1000000 };
	struct prof_thread th = { .tid = 100, .process = 0, .name = "app" };

	PB_ADD(p->processes, p->nprocesses, pr);
	PB_ADD(p->threads, p->nthreads, th);
}

static inline uint32_t cb_thread(struct profile *p, uint32_t tid)
{
	struct prof_thread th = { .tid = tid, .process = 0, .name = "t" };

	PB_ADD(p->threads, p->nthreads, th);
	return (uint32_t)p->nthreads - 1;
}

/* An H100-like device (cc 9.0, 132 SMs, 228 KiB smem/SM). */
static inline void cb_h100(struct profile *p, uint32_t id)
{
	struct prof_cuda_device d = {
		.process = 0, .id = id, .name = "H100", .sm_count = 132, .cc_major = 9,
		.cc_minor = 0, .max_threads_per_block = 1024, .max_warps_per_sm = 64,
		.threads_per_warp = 32, .max_blocks_per_sm = 32, .regs_per_sm = 65536,
		.regs_per_block = 65536, .smem_per_sm = 233472, .smem_per_block = 49152,
		.smem_per_block_optin = 232448, .reserved_smem_per_block = 1024,
	};

	PB_ADD(p->devices, p->ndevices, d);
}

static inline uint32_t cb_api(struct profile *p, const char *name, uint32_t thread, uint64_t start,
			      uint64_t end)
{
	struct prof_cuda_api c = { .start = start, .end = end, .thread = thread, .name = name,
				   .correlation = (uint32_t)p->ncuda_api + 1, .stack = PROF_NONE,
				   .domain = strncmp(name, "cuda", 4) ? 2 : 1 };

	PB_ADD(p->cuda_api, p->ncuda_api, c);
	return (uint32_t)p->ncuda_api - 1;
}

static inline uint32_t cb_kernel(struct profile *p, const char *name, uint64_t start, uint64_t end,
				 uint32_t api, int grid, int block, uint32_t regs)
{
	struct prof_gpu_op k = { .kind = PROF_GPU_KERNEL, .start = start, .end = end, .name = name,
				 .api = api, .grid = { grid, 1, 1 }, .block = { block, 1, 1 },
				 .registers = regs, .stream = 7 };

	if (api != PROF_NONE)
		k.correlation = p->cuda_api[api].correlation;
	PB_ADD(p->gpu_ops, p->ngpu_ops, k);
	return (uint32_t)p->ngpu_ops - 1;
}

static inline uint32_t cb_copy(struct profile *p, uint32_t copy_kind, uint32_t src, uint32_t dst,
			       uint64_t bytes, uint64_t start, uint64_t end, uint32_t api)
{
	struct prof_gpu_op c = { .kind = PROF_GPU_MEMCPY, .start = start, .end = end,
				 .name = cuda_memop_name(PROF_GPU_MEMCPY, copy_kind), .api = api,
				 .bytes = bytes, .copy_kind = copy_kind, .src_kind = src, .dst_kind = dst };

	PB_ADD(p->gpu_ops, p->ngpu_ops, c);
	return (uint32_t)p->ngpu_ops - 1;
}

static inline uint32_t cb_memset(struct profile *p, uint64_t bytes, uint64_t start, uint64_t end,
				 uint32_t api)
{
	struct prof_gpu_op c = { .kind = PROF_GPU_MEMSET, .start = start, .end = end,
				 .name = "[CUDA memset]", .api = api, .bytes = bytes };

	PB_ADD(p->gpu_ops, p->ngpu_ops, c);
	return (uint32_t)p->ngpu_ops - 1;
}

static inline void cb_range(struct profile *p, const char *name, uint32_t thread, uint64_t start,
			    uint64_t end)
{
	struct prof_range r = { .start = start, .end = end, .thread = thread, .kind = CBN_RANGE_PUSHPOP,
				.source = CBN_SRC_NVTX, .domain = "", .name = name };

	PB_ADD(p->ranges, p->nranges, r);
}

static inline uint32_t cb_func(struct profile *p, const char *name, const char *file, uint32_t line,
			       const char *module)
{
	struct prof_func f = { .name = name, .file = file, .line = line, .module = module };

	PB_ADD(p->funcs, p->nfuncs, f);
	return (uint32_t)p->nfuncs - 1;
}

/* A stack of n frames, leaf first: funcs[i] executing at lines[i]. */
static inline uint32_t cb_stack(struct profile *p, int n, const uint32_t *funcs, const uint32_t *lines)
{
	struct prof_stack s = { .first = (uint32_t)p->nframes, .nframes = (uint32_t)n };
	int i;

	for (i = 0; i < n; i++) {
		struct prof_frame f = { .func = funcs[i], .line = lines[i],
					.file = p->funcs[funcs[i]].file, .addr = 0x1000 + i };
		PB_ADD(p->frames, p->nframes, f);
	}
	PB_ADD(p->stacks, p->nstacks, s);
	return (uint32_t)p->nstacks - 1;
}

/* A module of process proc mapped at load_ts (the process's start: a start-up
 * dependency; later: dlopened during the run); name is path's basename. */
static inline void cb_module(struct profile *p, uint32_t proc, const char *path, uint64_t load_ts)
{
	const char *slash = strrchr(path, '/');
	struct prof_module m = { .process = proc, .path = path, .name = slash ? slash + 1 : path,
				 .base = 0x7f0000000000ull + p->nmodules * 0x1000000ull,
				 .load_ts = load_ts, .has_debuginfo = -1 };

	PB_ADD(p->modules, p->nmodules, m);
}

static inline const struct cuda_op_row *cb_op(const struct cuda_analysis *a, const char *name,
					      uint32_t kind)
{
	size_t i;

	for (i = 0; i < a->nops; i++)
		if (a->ops[i].kind == kind && strcmp(a->ops[i].name, name) == 0)
			return &a->ops[i];
	return NULL;
}

static inline const struct rule_finding *cb_reco(const struct cuda_analysis *a, const char *id)
{
	size_t i;

	for (i = 0; i < a->nrecos; i++)
		if (strcmp(a->recos[i].id, id) == 0)
			return &a->recos[i];
	return NULL;
}

#define CHECK_NEAR(a, b, tol)                                                             \
	do {                                                                              \
		double a_ = (a), b_ = (b);                                                \
		test_checks++;                                                            \
		if (!(a_ - b_ <= (tol) && b_ - a_ <= (tol))) {                            \
			fprintf(stderr, "%s:%d: CHECK_NEAR failed: %s == %.6f, expected %.6f\n", \
				__FILE__, __LINE__, #a, a_, b_);                          \
			test_failures++;                                                  \
		}                                                                         \
	} while (0)

#endif
