/*
 * selfprof.c — a simulated-CUDA program that profiles itself the way
 * torch.profiler's Kineto does, with its own CUPTI client: cuptiSubscribe (v1)
 * with the launch callback enabled, optionally its own timestamp callback,
 * buffer callbacks, CONCURRENT_KERNEL enabled around a stretch of work, then
 * disabled and flushed.  It prints what its own profiler saw, which must be
 * the same with and without cbottleneck (tests/e2e/cuda_selfprof.sh).
 *
 * Usage: cuda_selfprof keep|release|finalize [clock]
 *   phase 1: 7 kernels _Z6beforev (no client of its own yet)
 *   phase 2: its client on, 11 kernels _Z6duringv, its kinds off and flushed
 *   keep: it keeps its subscription (as Kineto does); release: it
 *   unsubscribes; finalize: it calls cuptiFinalize
 *   (300 ms pause: the profiler's layer takes the buffers back)
 *   phase 3: 13 kernels _Z5afterv
 * With clock, its timestamp callback counts 3 ticks per nanosecond of
 * CLOCK_MONOTONIC from an arbitrary origin, like a TSC.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cupti.h>

#include "fakecuda.h"

#define N_BEFORE 7
#define N_DURING 11
#define N_AFTER 13
#define BUF_SIZE (64u << 10)

static atomic_int seen_launch_enter;
static atomic_int seen_kernels, seen_other;
static atomic_int bad_ts;

static uint64_t mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t CUPTIAPI ticks(void)
{
	return 3 * mono() + 12345678901ull;
}

static void CUPTIAPI on_call(void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId cbid,
			     const void *data)
{
	const CUpti_CallbackData *cd = data;

	(void)ud;
	if (dom == CUPTI_CB_DOMAIN_RUNTIME_API &&
	    cbid == CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000 &&
	    cd->callbackSite == CUPTI_API_ENTER)
		atomic_fetch_add(&seen_launch_enter, 1);
}

static void CUPTIAPI buf_request(uint8_t **buf, size_t *size, size_t *max)
{
	*buf = aligned_alloc(8, BUF_SIZE);
	*size = *buf ? BUF_SIZE : 0;
	*max = 0;
}

static int use_clock;
static uint64_t clock_from, clock_to;   /* phase 2, in its own ticks */

static void CUPTIAPI buf_done(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
			      size_t valid)
{
	CUpti_Activity *r = NULL;

	(void)ctx;
	(void)stream;
	(void)size;
	while (valid && cuptiActivityGetNextRecord(buf, valid, &r) == CUPTI_SUCCESS) {
		if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
			const CUpti_ActivityKernel10 *k = (const void *)r;

			if (strcmp(k->name, "_Z6duringv") == 0)
				atomic_fetch_add(&seen_kernels, 1);
			else
				atomic_fetch_add(&seen_other, 1);
			/* Its own clock, unchanged: the kernel ran inside phase 2. */
			if (use_clock && (k->start < clock_from || k->end > clock_to + 50000000ull))
				atomic_fetch_add(&bad_ts, 1);
		} else {
			atomic_fetch_add(&seen_other, 1);
		}
	}
	free(buf);
}

static void launches(const char *name, int n)
{
	const struct fakecuda_kernel k = { .name = name, .gpu_ns = 20000, .grid = { 4, 1, 1 },
					   .block = { 128, 1, 1 } };

	for (int i = 0; i < n; i++)
		fakecuda_launch(&k, 0);
	fakecuda_device_sync();
}

#define CALL(x)                                                                          \
	do {                                                                             \
		CUptiResult st_ = (x);                                                   \
		if (st_ != CUPTI_SUCCESS) {                                              \
			printf("selfprof: %s failed: %d\n", #x, (int)st_);               \
			return 1;                                                        \
		}                                                                        \
	} while (0)

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "keep";
	CUpti_SubscriberHandle sub;

	use_clock = argc > 2 && strcmp(argv[2], "clock") == 0;
	if (fakecuda_init() != 0)
		return 99;
	launches("_Z6beforev", N_BEFORE);

	/* Its profiler starts. */
	CALL(cuptiSubscribe(&sub, on_call, NULL));
	CALL(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API,
				 CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000));
	if (use_clock)
		CALL(cuptiActivityRegisterTimestampCallback(ticks));
	CALL(cuptiActivityRegisterCallbacks(buf_request, buf_done));
	CALL(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
	clock_from = ticks();
	launches("_Z6duringv", N_DURING);
	clock_to = ticks();
	CALL(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
	CALL(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
	printf("selfprof: its profiler saw %d of %d kernels, %d other records, %d launch "
	       "callbacks%s\n",
	       atomic_load(&seen_kernels), N_DURING, atomic_load(&seen_other),
	       atomic_load(&seen_launch_enter),
	       use_clock ? (atomic_load(&bad_ts) ? ", timestamps off its clock" :
						   ", timestamps on its clock") : "");
	if (strcmp(mode, "release") == 0)
		CALL(cuptiUnsubscribe(sub));
	else if (strcmp(mode, "finalize") == 0)
		CALL(cuptiFinalize());
	fflush(stdout);

	usleep(300 * 1000);
	launches("_Z5afterv", N_AFTER);
	printf("selfprof: done (%s)\n", mode);
	return 0;
}
