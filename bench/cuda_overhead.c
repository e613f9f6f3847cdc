/*
 * cuda_overhead.c — host cost per kernel launch of the CUDA layer's callback
 * path, measured against the simulated CUPTI: N fakecuda_launch calls with
 * libcbottleneck_cuda.so injected (callbacks, stack capture, records) versus
 * without it (the simulation's own cost).  Built as cuda_overhead, this
 * program plays a minimal agent (records copied into memory, stacks by
 * libunwind) so it runs without the launcher; built as cuda_overhead_agent
 * (CBN_BENCH_REAL_AGENT) it has no agent of its own and is run under
 * cbottleneck, so the real agent's writer and unwinder are measured.
 * Usage: cuda_overhead N on|off [DEPTH]; prints "ns/launch".  DEPTH (default
 * 0) native frames of recursion stand between main and the launch loop, as
 * an interpreter's 100-200 stand between a script and its cudaLaunchKernel.
 */
#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fakecuda.h"

#define EXPORT __attribute__((visibility("default")))

static unsigned long bench_records;

#ifndef CBN_BENCH_REAL_AGENT

static pthread_mutex_t bench_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned char *bench_ring;
static size_t bench_pos;
#define BENCH_RING (64u << 20)

EXPORT int cbn_agent_write(const void *rec, size_t size)
{
	pthread_mutex_lock(&bench_lock);
	if (bench_pos + size > BENCH_RING)
		bench_pos = 0;
	memcpy(bench_ring + bench_pos, rec, size);
	bench_pos += size;
	bench_records++;
	pthread_mutex_unlock(&bench_lock);
	return 0;
}

/* The agent unwinds with libunwind's unw_backtrace (dlopened, as in
 * src/agent/unwind.c); glibc's backtrace() is several times slower. */
static int (*bench_unw)(void **buf, int size);

EXPORT int cbn_agent_backtrace(uint64_t *pcs, int max, int skip)
{
	void *b[64];
	int n = bench_unw ? bench_unw(b, 64) : backtrace(b, 64), k = 0;

	for (int i = skip + 1; i < n && k < max; i++)
		pcs[k++] = (uint64_t)(uintptr_t)b[i];
	return k;
}

#endif

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#ifndef CBN_BENCH_REAL_AGENT
EXPORT uint64_t cbn_agent_now(void)
{
	return now_ns();
}
#endif

static const struct fakecuda_kernel bench_k = { .name = "_Z5benchv", .gpu_ns = 1,
						.grid = { 1, 1, 1 }, .block = { 32, 1, 1 } };

/* The timed loop, depth frames below the caller (each frame a real call:
 * noinline, and work after the call so it is not a tail call). */
__attribute__((noinline)) static uint64_t bench_loop(long n, int depth)
{
	volatile uint64_t r;
	uint64_t t0;

	if (depth > 0) {
		r = bench_loop(n, depth - 1);
		return r + 0;
	}
	t0 = now_ns();
	for (long i = 0; i < n; i++)
		fakecuda_launch(&bench_k, 1);
	return now_ns() - t0;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	int on = argc > 2 && strcmp(argv[2], "on") == 0;
	int depth = argc > 3 ? atoi(argv[3]) : 0;
	uint64_t t;

#ifndef CBN_BENCH_REAL_AGENT
	void *unw = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);

	if (unw)
		bench_unw = (int (*)(void **, int))dlsym(unw, "unw_backtrace");
	bench_ring = malloc(BENCH_RING);
	if (!bench_ring)
		return 2;
	/* Touch every page now (a zero memset may become calloc and touch
	 * nothing): page faults here would be the stand-in's cost, not the layer's. */
	memset(bench_ring, 1, BENCH_RING);
#else
	bench_records = 1;   /* the real agent's file is checked by the script */
#endif
	if (n <= 0)
		return 2;
	if (on) {
		const char *lib = getenv("CBN_CUDA_LAYER");

		if (!lib)
			lib = getenv("CUDA_INJECTION64_PATH");   /* set by cbottleneck */
		if (!lib) {
			fprintf(stderr, "cuda_overhead: set CBN_CUDA_LAYER to libcbottleneck_cuda.so\n");
			return 2;
		}
		setenv("CUDA_INJECTION64_PATH", lib, 1);
	} else {
		unsetenv("CUDA_INJECTION64_PATH");
	}
	if (fakecuda_init() != 0)
		return 1;
	bench_loop(1000, depth);   /* warm up: buffers, tables, TLS, trace cache */
	t = bench_loop(n, depth);
	if (on && bench_records == 0) {
		fprintf(stderr, "cuda_overhead: the layer wrote nothing; is it built and exported?\n");
		return 1;
	}
	printf("cuda_overhead: layer %s: %ld launches, %d frames deep, %.0f ns/launch\n",
	       on ? "on" : "off", n, depth, (double)t / (double)n);
	return 0;
}
