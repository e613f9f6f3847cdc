/*
 * fakecuda.h — the driver simulation exported by the test-only libcupti.so.13
 * in tests/fakecupti.  Each call behaves like the CUDA call it names as far as
 * CUPTI can see: it fires that call's runtime (and nested driver) ENTER/EXIT
 * callbacks on the calling thread with a fresh correlation id, and queues
 * activity records with the real CUDA 13.0 layouts on a simulated GPU timeline
 * (per stream, back to back, durations exactly as given).  Synchronizing calls
 * really wait (sleep) until the simulated GPU is done.
 *
 * Only for tests: see docs/cuda-collection.md for what it does and does not
 * cover.  All functions are thread-safe; none may be called from signal context.
 */
#ifndef CBN_FAKECUDA_H
#define CBN_FAKECUDA_H

#include <stdint.h>

struct fakecuda_kernel {
	const char *name;        /* mangled, as nvcc emits it ("_Z7kernelAPfi") */
	uint64_t gpu_ns;         /* simulated duration on the GPU */
	int grid[3];
	int block[3];
	int registers;
	int static_smem;
	int dynamic_smem;
	int optin;               /* 1: shmemLimitConfig = OPTIN */
};

/* Like cuInit: the first call dlopens $CUDA_INJECTION64_PATH (when set) and
 * calls its InitializeInjection, after registering a simulated cudart exit
 * teardown (so the injection's atexit handler runs first, as with the real
 * cudart).  Returns 0, or -1 when the injection library cannot be loaded
 * (the reason is printed: a CUPTI entry point missing from the fake shows
 * here). */
int fakecuda_init(void);

/* Kernel launch as nvcc 13 emits it: runtime __cudaLaunchKernel (cbid 505),
 * with a nested driver cuLaunchKernel.  Asynchronous.  Returns 0. */
int fakecuda_launch(const struct fakecuda_kernel *k, unsigned stream);
/* A driver-API-only launch (cuLaunchKernel, as Triton/NVRTC do). */
int fakecuda_launch_driver(const struct fakecuda_kernel *k, unsigned stream);

/* cudaMemcpy (synchronous, stream 0) or cudaMemcpyAsync.  kind is a
 * CUpti_ActivityMemcpyKind (1 HtoD, 2 DtoH, 8 DtoD); pinned says whether the
 * host side is page-locked (else pageable). */
int fakecuda_memcpy(int kind, uint64_t bytes, int pinned, uint64_t gpu_ns, int async,
		    unsigned stream);
/* cudaMemset (synchronous). */
int fakecuda_memset(uint64_t bytes, int value, uint64_t gpu_ns, unsigned stream);
/* cudaDeviceSynchronize / cudaStreamSynchronize: sleep until the simulated
 * GPU work is done; emit a SYNCHRONIZATION record. */
int fakecuda_device_sync(void);
int fakecuda_stream_sync(unsigned stream);
/* cudaMalloc / cudaFree with MEMORY2 records; addresses are simulated. */
uint64_t fakecuda_malloc(uint64_t bytes);
int fakecuda_free(uint64_t address);
/* cudaMallocAsync / cudaFreeAsync from the device's default pool (LOCAL; it
 * grows by 32 MiB steps and keeps its size on free; its first use emits a
 * MEMORY_POOL CREATED record); MEMORY2 records carry the pool config. */
uint64_t fakecuda_malloc_async(uint64_t bytes, unsigned stream);
int fakecuda_free_async(uint64_t address, unsigned stream);
/* cudaMemPoolTrimTo on the default pool: a MEMORY_POOL TRIMMED record. */
int fakecuda_pool_trim(uint64_t keep);
/* cudaMallocHost (host_alloc 0) or cudaHostAlloc (1): pinned host memory,
 * MEMORY2 kind PINNED; fail: the call returns cudaErrorMemoryAllocation and
 * allocates nothing (returns 0). */
uint64_t fakecuda_malloc_host(uint64_t bytes, int host_alloc, int fail);
int fakecuda_free_host(uint64_t address);
/* cudaMallocManaged: MEMORY2 kind MANAGED. */
uint64_t fakecuda_malloc_managed(uint64_t bytes);
/* cudaDeviceReset. */
int fakecuda_device_reset(void);

/* Simulation-only control of the GPU timeline (no CUDA call behind them: no
 * callbacks, no records).  fakecuda_now: the simulated GPU clock now (the
 * clock of the records' timestamps).  fakecuda_stream_ready: when the work
 * queued so far on stream completes, what a cudaEventRecord there would mark.
 * fakecuda_stream_wait: later work on stream starts no earlier than t, as
 * after cudaStreamWaitEvent on such an event.  Together they place ops on
 * streams at exact offsets from each other whatever the host's timing, as
 * long as the host queues them before the streams run dry. */
uint64_t fakecuda_now(void);
uint64_t fakecuda_stream_ready(unsigned stream);
void fakecuda_stream_wait(unsigned stream, uint64_t t);

/* Introspection for tests: 1 when the subscriber enabled the callback
 * (domain is a CUpti_CallbackDomain), else 0. */
int fakecuda_callback_enabled(int domain, unsigned cbid);

#endif
