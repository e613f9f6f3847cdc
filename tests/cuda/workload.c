/*
 * workload.c — simulated CUDA workloads with known truth (workload.h), driven
 * through the fake CUDA of tests/fakecupti.  Every launching function is
 * noinline and exported so a captured launch stack can be checked against it.
 */
#include <pthread.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include <nvtx3/nvToolsExt.h>

#include "cbottleneck.h"

#include "fakecuda.h"
#include "workload.h"

#define WL_NOINLINE __attribute__((noinline, visibility("default")))

static const struct fakecuda_kernel wl_a = {
	.name = WL_A_NAME, .gpu_ns = WL_A_NS, .grid = { 264, 1, 1 }, .block = { 256, 1, 1 },
	.registers = 32,
};
static const struct fakecuda_kernel wl_b = {
	.name = WL_B_NAME, .gpu_ns = WL_B_NS, .grid = { 132, 1, 1 }, .block = { 1024, 1, 1 },
	.registers = 64, .static_smem = 4096, .dynamic_smem = 100 * 1024, .optin = 1,
};
static const struct fakecuda_kernel wl_c = {
	.name = WL_C_NAME, .gpu_ns = WL_C_NS, .grid = { 8, 1, 1 }, .block = { 128, 1, 1 },
	.registers = 16,
};
static const struct fakecuda_kernel wl_d = {
	.name = WL_D_NAME, .gpu_ns = WL_D_NS, .grid = { 64, 2, 1 }, .block = { 32, 4, 1 },
	.registers = 40,
};

static volatile uint64_t wl_sink;

WL_NOINLINE void host_work(int ms)
{
	struct timespec t0, t;
	uint64_t x = 1;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do {
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
	wl_sink = x;
}

WL_NOINLINE void launch_a(void)
{
	fakecuda_launch(&wl_a, 1);
	wl_sink++; /* keeps the call from being a tail call */
}

WL_NOINLINE void launch_b(void)
{
	fakecuda_launch(&wl_b, 1);
	wl_sink++;
}

WL_NOINLINE void copy_input(void)
{
	fakecuda_memcpy(1 /* HtoD */, WL_HTOD_BYTES, 0, WL_HTOD_NS, 0, 0);
	wl_sink++;
}

__attribute__((noinline)) static void copy_output(void)
{
	fakecuda_memcpy(2 /* DtoH */, WL_DTOH_BYTES, 1, WL_DTOH_NS, 0, 0);
	wl_sink++;
}

__attribute__((noinline)) static void launch_d_driver(void)
{
	fakecuda_launch_driver(&wl_d, 4);
	wl_sink++;
}

/*
 * What nvcc generates for `kernelE<<<g, b>>>(p)`: the call site calls the
 * kernel's host wrapper (named like the kernel, often inlined), which calls
 * __device_stub__<mangled>, which calls __cudaLaunchKernel.  Both generated
 * frames live in the user's executable, and the stub's file is a temporary
 * *.cudafe1.stub.c, so a launch site must look past them to the caller.
 */
static const struct fakecuda_kernel wl_e = {
	.name = WL_E_NAME, .gpu_ns = WL_E_NS, .grid = { 16, 1, 1 }, .block = { 64, 1, 1 },
	.registers = 24,
};

__attribute__((noinline)) void __device_stub__Z7kernelEPf(float *p)
{
	(void)p;
	fakecuda_launch(&wl_e, 1);
	wl_sink++;
}

/* The host wrapper: its symbol is the kernel's own mangled name. */
__attribute__((noinline)) void _Z7kernelEPf(float *p)
{
	__device_stub__Z7kernelEPf(p);
	wl_sink++;
}

WL_NOINLINE void launch_e_like_nvcc(void)
{
	_Z7kernelEPf(NULL);
	wl_sink++;
}

static void *wl_thread(void *arg)
{
	unsigned stream = (unsigned)(uintptr_t)arg;

	for (int i = 0; i < WL_C_PER_THREAD; i++) {
		fakecuda_launch(&wl_c, stream);
		fakecuda_stream_sync(stream);
	}
	return NULL;
}

int wl_main(void)
{
	pthread_t th[WL_C_THREADS];
	uint64_t buf[WL_MALLOCS];
	int i;

	if (fakecuda_init() != 0)
		return 99;
	nvtxRangePushA("setup");
	for (i = 0; i < WL_MALLOCS; i++)
		buf[i] = fakecuda_malloc(64ull << 20);
	fakecuda_memset(WL_MEMSET_BYTES, 0, WL_MEMSET_NS, 0);
	for (i = 0; i < WL_HTOD_COUNT; i++)
		copy_input();
	host_work(50);
	nvtxRangePop();

	nvtxRangePushA("compute");
	for (i = 0; i < WL_A_COUNT; i++)
		launch_a();
	/* sync-heavy: every long kernel is waited for */
	for (i = 0; i < WL_B_COUNT; i++) {
		launch_b();
		fakecuda_device_sync();
	}
	for (i = 0; i < WL_C_THREADS; i++)
		pthread_create(&th[i], NULL, wl_thread, (void *)(uintptr_t)(2 + i));
	for (i = 0; i < WL_C_THREADS; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < WL_D_COUNT; i++)
		launch_d_driver();
	host_work(100);
	nvtxRangePop();

	nvtxRangePushA("teardown");
	fakecuda_device_sync();
	for (i = 0; i < WL_DTOH_COUNT; i++)
		copy_output();
	for (i = 0; i < WL_MALLOCS; i++)
		fakecuda_free(buf[i]);
	nvtxRangePop();
	return 0;
}

int wl_nvcc(void)
{
	if (fakecuda_init() != 0)
		return 99;
	for (int i = 0; i < WL_E_COUNT; i++)
		launch_e_like_nvcc();
	fakecuda_device_sync();
	return 0;
}

int wl_nosync(int n)
{
	const struct fakecuda_kernel k = {
		.name = "_Z9long_kernv", .gpu_ns = 10ull * 1000 * 1000 * 1000, /* 10 s */
		.grid = { 1, 1, 1 }, .block = { 32, 1, 1 }, .registers = 8,
	};

	if (fakecuda_init() != 0)
		return 99;
	for (int i = 0; i < n; i++)
		fakecuda_launch(&k, 5);
	return 0;
}

WL_NOINLINE uint64_t alloc_step(void)
{
	uint64_t p = fakecuda_malloc(WL_MEM_STEP_BYTES);

	wl_sink++;
	return p;
}

WL_NOINLINE uint64_t alloc_async(void)
{
	uint64_t p = fakecuda_malloc_async(WL_MEM_ASYNC_BYTES, 3);

	wl_sink++;
	return p;
}

WL_NOINLINE uint64_t alloc_peak(void)
{
	uint64_t p = fakecuda_malloc(WL_MEM_PEAK_BYTES);

	wl_sink++;
	return p;
}

WL_NOINLINE uint64_t alloc_leak(void)
{
	uint64_t p = fakecuda_malloc(WL_MEM_LEAK_BYTES);

	wl_sink++;
	return p;
}

int wl_memory(void)
{
	uint64_t a[WL_MEM_ASYNC], peak, pinned[2], managed;
	int i;

	if (fakecuda_init() != 0)
		return 99;
	nvtxRangePushA("mem");
	alloc_leak();
	for (i = 0; i < WL_MEM_STEPS; i++) {
		uint64_t p;

		nvtxRangePushA("step");
		p = alloc_step();
		launch_a();
		fakecuda_device_sync();
		fakecuda_free(p);
		nvtxRangePop();
	}
	for (i = 0; i < WL_MEM_ASYNC; i++)
		a[i] = alloc_async();
	nvtxRangePushA("peak");
	peak = alloc_peak();
	host_work(20);
	fakecuda_free(peak);
	nvtxRangePop();
	for (i = 0; i < WL_MEM_ASYNC; i++)
		fakecuda_free_async(a[i], 3);
	fakecuda_pool_trim(0);
	pinned[0] = fakecuda_malloc_host(WL_MEM_PINNED_BYTES, 0, 0);
	pinned[1] = fakecuda_malloc_host(WL_MEM_PINNED_BYTES, 1, 0);
	fakecuda_malloc_host(WL_MEM_PINNED_BYTES, 1, 1);
	managed = fakecuda_malloc_managed(WL_MEM_MANAGED_BYTES);
	fakecuda_free_host(pinned[0]);
	fakecuda_free_host(pinned[1]);
	fakecuda_free(managed);
	fakecuda_device_sync();
	nvtxRangePop();
	return 0;
}

/* One step of wl_nccl (timeline in workload.h).  Every op is placed relative
 * to the first, which starts WL_NCCL_LEAD_NS from now, through the streams'
 * ready times: the offsets hold whatever the host's timing, as long as it
 * queues the step within the lead (a loaded CI machine may stall it for
 * milliseconds; the ops would then start late and the split move). */
static void wl_nccl_step(nvtxDomainHandle_t nccl)
{
	const uint64_t u = WL_NCCL_UNIT_NS;
	const struct fakecuda_kernel gemm1 = {
		.name = "_Z5gemm1PKfS0_Pf", .gpu_ns = 2 * u, .grid = { 132, 1, 1 },
		.block = { 256, 1, 1 }, .registers = 64,
	};
	const struct fakecuda_kernel gemm2 = {
		.name = "_Z5gemm2PKfS0_Pf", .gpu_ns = 4 * u, .grid = { 132, 1, 1 },
		.block = { 256, 1, 1 }, .registers = 64,
	};
	const struct fakecuda_kernel allreduce = {
		.name = WL_NCCL_KERNEL, .gpu_ns = 3 * u, .grid = { 8, 1, 1 },
		.block = { 640, 1, 1 }, .registers = 96,
	};
	const struct fakecuda_kernel pack = {
		.name = WL_NCCL_PACK, .gpu_ns = 3 * u, .grid = { 8, 1, 1 },
		.block = { 512, 1, 1 }, .registers = 32,
	};
	nvtxEventAttributes_t at = {
		.version = NVTX_VERSION, .size = NVTX_EVENT_ATTRIB_STRUCT_SIZE,
		.messageType = NVTX_MESSAGE_TYPE_ASCII, .message.ascii = "ncclAllGather",
	};

	fakecuda_stream_wait(1, fakecuda_now() + WL_NCCL_LEAD_NS);
	fakecuda_launch(&gemm1, 1);
	fakecuda_stream_wait(2, fakecuda_stream_ready(1));   /* the gradients are ready */
	fakecuda_launch(&gemm2, 1);
	fakecuda_launch(&allreduce, 2);
	nvtxDomainRangePushEx(nccl, &at);
	fakecuda_launch(&pack, 2);
	nvtxDomainRangePop(nccl);
	fakecuda_stream_wait(1, fakecuda_stream_ready(2));   /* the reduced values */
	fakecuda_memcpy(8 /* DtoD */, 1 << 20, 0, u, 1, 1);
	wl_sink++;
}

int wl_nccl(void)
{
	nvtxDomainHandle_t nccl;

	if (fakecuda_init() != 0)
		return 99;
	nccl = nvtxDomainCreateA("NCCL");
	for (int i = 0; i < WL_NCCL_STEPS; i++) {
		cbn_annotate_step();
		wl_nccl_step(nccl);
		fakecuda_device_sync();
		usleep(WL_NCCL_IDLE_MS * 1000);
	}
	cbn_annotate_step();
	return 0;
}
