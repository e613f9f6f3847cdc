/*
 * test_export_fixture.h — hand-built struct profile values and file helpers
 * for the test_export_* unit tests (trace, folded, flame graph, pprof).
 * Arrays grow and are freed by test_profile_builder.h (PB_ADD,
 * pb_profile_free); strings are literals.
 */
#ifndef CBN_TEST_EXPORT_FIXTURE_H
#define CBN_TEST_EXPORT_FIXTURE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile.h"
#include "report/export.h"
#include "test_profile_builder.h"

#if defined(__has_include)
#if __has_include(<zlib.h>)
#include <zlib.h>
#define EX_HAVE_ZLIB 1
#endif
#endif

#define EX_US 1000ull
#define EX_MS 1000000ull
#define EX_T0 5000000000ull /* profile start_ns */

static inline void ex_init(struct profile *p, const char *cmd)
{
	static char *argv[3];

	memset(p, 0, sizeof(*p));
	argv[0] = (char *)cmd;
	argv[1] = (char *)"--flag";
	p->argv = argv;
	p->start_ns = EX_T0;
	p->period_ns = EX_MS;
	p->frequency_hz = 1000;
	p->wall_ns = 100 * EX_MS;
}

static inline uint32_t ex_process(struct profile *p, uint32_t pid, uint32_t seq, const char *exe)
{
	struct prof_process pr = {.pid = pid,
	                          .exec_seq = seq,
	                          .exe = exe,
	                          .cmdline = exe,
	                          .file = "",
	                          .period_ns = EX_MS,
	                          .start = EX_T0,
	                          .clean_exit = 1,
	                          .exited = 1};

	PB_ADD(p->processes, p->nprocesses, pr);
	return (uint32_t)p->nprocesses - 1;
}

static inline uint32_t ex_thread(struct profile *p, uint32_t tid, uint32_t proc, const char *name)
{
	struct prof_thread t = {.tid = tid, .process = proc, .name = name};

	PB_ADD(p->threads, p->nthreads, t);
	return (uint32_t)p->nthreads - 1;
}

static inline uint32_t ex_func(struct profile *p, const char *name, const char *file, uint32_t line,
                               const char *module)
{
	struct prof_func f = {.name = name, .file = file, .line = line, .module = module};

	PB_ADD(p->funcs, p->nfuncs, f);
	return (uint32_t)p->nfuncs - 1;
}

/* A stack given ROOT FIRST (easier to read in tests); stored leaf first.
 * inl_mask bit i (root-first index) marks frame i as inlined into frame i-1,
 * its caller: the two then share one pc, as the symbolizer reports them. */
static inline uint32_t ex_stack_inl(struct profile *p, int n, const uint32_t *root_first,
                                    uint32_t inl_mask)
{
	struct prof_stack st = {.first = (uint32_t)p->nframes, .nframes = (uint32_t)n};
	uint64_t addr = 0;

	for (int i = n - 1; i >= 0; i--) {
		struct prof_frame f = {.func = root_first[i],
		                       .line = 10 + root_first[i],
		                       .file = p->funcs[root_first[i]].file,
		                       .inlined = (inl_mask >> i) & 1};

		/* frames of one pc share the address: a new pc starts after a
		 * physical frame */
		if (i == n - 1 || !p->frames[p->nframes - 1].inlined)
			addr = 0x400000 + 0x100 * root_first[i] + 4 * (uint64_t)i;
		f.addr = addr;
		PB_ADD(p->frames, p->nframes, f);
	}
	PB_ADD(p->stacks, p->nstacks, st);
	return (uint32_t)p->nstacks - 1;
}

static inline uint32_t ex_stack(struct profile *p, int n, const uint32_t *root_first)
{
	return ex_stack_inl(p, n, root_first, 0);
}

static inline void ex_sample(struct profile *p, uint32_t thread, uint64_t ts, uint32_t stack,
                             uint32_t weight)
{
	struct prof_sample s = {.ts = ts, .stack = stack, .thread = thread, .weight = weight};

	PB_ADD(p->samples, p->nsamples, s);
	p->threads[thread].weight += weight;
	p->processes[p->threads[thread].process].samples++;
	p->processes[p->threads[thread].process].weight += weight;
}

static inline uint32_t ex_api(struct profile *p, const char *name, uint32_t thread, uint64_t start,
                              uint64_t end, uint32_t corr, uint32_t domain)
{
	struct prof_cuda_api a = {.start = start,
	                          .end = end,
	                          .thread = thread,
	                          .process = thread == PROF_NONE ? 0 : p->threads[thread].process,
	                          .correlation = corr,
	                          .cbid = 211,
	                          .domain = domain,
	                          .name = name,
	                          .stack = PROF_NONE};

	PB_ADD(p->cuda_api, p->ncuda_api, a);
	return (uint32_t)p->ncuda_api - 1;
}

static inline uint32_t ex_gpu(struct profile *p, uint32_t kind, const char *name, uint64_t start,
                              uint64_t end, uint32_t stream, uint32_t corr, uint32_t api)
{
	struct prof_gpu_op g = {.kind = kind,
	                        .process = 0,
	                        .start = start,
	                        .end = end,
	                        .device = 0,
	                        .context = 1,
	                        .stream = stream,
	                        .correlation = corr,
	                        .name = name,
	                        .api = api,
	                        .grid = {64, 2, 1},
	                        .block = {128, 1, 1},
	                        .registers = 32,
	                        .static_smem = 1024,
	                        .dynamic_smem = 2048,
	                        .bytes = kind == PROF_GPU_KERNEL ? 0 : 1 << 20};

	PB_ADD(p->gpu_ops, p->ngpu_ops, g);
	return (uint32_t)p->ngpu_ops - 1;
}

static inline void ex_range(struct profile *p, const char *name, uint32_t thread, uint64_t start,
                            uint64_t end, uint32_t kind)
{
	struct prof_range r = {.start = start,
	                       .end = end,
	                       .thread = thread,
	                       .process = 0,
	                       .kind = kind,
	                       .source = CBN_SRC_NVTX,
	                       .domain = "",
	                       .name = name};

	PB_ADD(p->ranges, p->nranges, r);
}

static inline void ex_device(struct profile *p, uint32_t id, const char *name, uint32_t sms)
{
	struct prof_cuda_device d = {.process = 0, .id = id, .name = name, .sm_count = sms};

	PB_ADD(p->devices, p->ndevices, d);
}

/* Whole file (gunzipped when it is gzip and zlib is there), NUL-terminated;
 * *len gets the length.  NULL when it cannot be read. */
static inline char *ex_slurp(const char *path, size_t *len)
{
	size_t n = 0, cap = 1 << 16;
	char *buf = malloc(cap + 1);

	if (!buf)
		return NULL;
#ifdef EX_HAVE_ZLIB
	gzFile g = gzopen(path, "rb"); /* reads plain files unchanged */
	int r;

	if (!g) {
		free(buf);
		return NULL;
	}
	while ((r = gzread(g, buf + n, (unsigned)(cap - n))) > 0) {
		n += (size_t)r;
		if (n == cap) {
			cap *= 2;
			buf = realloc(buf, cap + 1);
			if (!buf)
				abort();
		}
	}
	gzclose(g);
	if (r < 0) {
		free(buf);
		return NULL;
	}
#else
	FILE *f = fopen(path, "rb");
	size_t r;

	if (!f) {
		free(buf);
		return NULL;
	}
	while ((r = fread(buf + n, 1, cap - n, f)) > 0) {
		n += r;
		if (n == cap) {
			cap *= 2;
			buf = realloc(buf, cap + 1);
			if (!buf)
				abort();
		}
	}
	fclose(f);
#endif
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

/* A fresh private directory for output files; removed by ex_rmdir(). */
static inline char *ex_tmpdir(void)
{
	static char dir[64];

	snprintf(dir, sizeof(dir), "/tmp/cbn-test-export.XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		exit(1);
	}
	return dir;
}

static inline void ex_rmdir(const char *dir)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
}

#endif
