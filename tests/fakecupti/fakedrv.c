/*
 * fakedrv.c — the simulated CUDA driver/runtime behind fakecuda.h: cuInit-like
 * injection loading, the runtime calls' ENTER/EXIT callbacks (with a nested
 * driver call, as cudart makes), and the activity records each call produces
 * on a simulated GPU timeline (per stream, back to back after the launch,
 * durations exactly as given).  Test-only.
 *
 * Assumption mirrored from CUPTI's documentation: a runtime call and the
 * driver call it makes share one correlation id, and the GPU records it causes
 * carry that id (memcpy: correlationId == runtimeCorrelationId).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fakecuda.h"
#include "fakeint.h"

#define FK_CONTEXT 1
#define FK_DEVICE 0

struct fk_call {
	CUpti_CallbackData cd;
	uint64_t corrdata;
	int ret;
};

static void fk_fire(CUpti_CallbackDomain dom, uint32_t cbid, const void *data)
{
	CUpti_CallbackFunc cb = fk.callback;

	if (cb && dom < FK_DOMAINS && cbid < FK_CBIDS && atomic_load(&fk.enabled[dom][cbid]))
		cb(fk.userdata, dom, cbid, data);
}

static void fk_enter(struct fk_call *c, CUpti_CallbackDomain dom, uint32_t cbid,
		     const char *symbol, uint32_t corr)
{
	memset(c, 0, sizeof(*c));
	cuptiGetCallbackName(dom, cbid, &c->cd.functionName);
	c->cd.callbackSite = CUPTI_API_ENTER;
	c->cd.functionReturnValue = &c->ret;
	c->cd.symbolName = symbol;
	c->cd.contextUid = FK_CONTEXT;
	c->cd.correlationData = &c->corrdata;
	c->cd.correlationId = corr;
	fk_fire(dom, cbid, &c->cd);
}

static void fk_exit(struct fk_call *c, CUpti_CallbackDomain dom, uint32_t cbid)
{
	c->cd.callbackSite = CUPTI_API_EXIT;
	fk_fire(dom, cbid, &c->cd);
}

int fakecuda_callback_enabled(int domain, unsigned cbid)
{
	if (domain < 0 || domain >= FK_DOMAINS || cbid >= FK_CBIDS || !fk.callback)
		return 0;
	return atomic_load(&fk.enabled[domain][cbid]) != 0;
}

static uint32_t fk_corr(void)
{
	return atomic_fetch_add(&fk.correlation, 1) + 1;
}

static void fk_sleep_until(uint64_t target)
{
	for (;;) {
		uint64_t now = fk_now();
		struct timespec ts;

		if (now >= target)
			return;
		ts.tv_sec = (time_t)((target - now) / 1000000000u);
		ts.tv_nsec = (long)((target - now) % 1000000000u);
		nanosleep(&ts, NULL);
	}
}

/* Reserve [start, start + ns) on a stream's timeline. */
static uint64_t fk_schedule(unsigned stream, uint64_t ns, int whole_device)
{
	uint64_t start = fk_now();
	unsigned s = stream % FK_STREAMS, i;

	pthread_mutex_lock(&fk.lock);
	if (whole_device) {
		for (i = 0; i < FK_STREAMS; i++)
			if (fk.stream_ready[i] > start)
				start = fk.stream_ready[i];
	} else if (fk.stream_ready[s] > start) {
		start = fk.stream_ready[s];
	}
	fk.stream_ready[s] = start + ns;
	pthread_mutex_unlock(&fk.lock);
	return start;
}

static uint64_t fk_ready(int whole_device, unsigned stream)
{
	uint64_t t = 0;
	unsigned i;

	pthread_mutex_lock(&fk.lock);
	if (whole_device) {
		for (i = 0; i < FK_STREAMS; i++)
			if (fk.stream_ready[i] > t)
				t = fk.stream_ready[i];
	} else {
		t = fk.stream_ready[stream % FK_STREAMS];
	}
	pthread_mutex_unlock(&fk.lock);
	return t;
}

uint64_t fakecuda_now(void)
{
	return fk_now();
}

uint64_t fakecuda_stream_ready(unsigned stream)
{
	return fk_ready(0, stream);
}

void fakecuda_stream_wait(unsigned stream, uint64_t t)
{
	unsigned s = stream % FK_STREAMS;

	pthread_mutex_lock(&fk.lock);
	if (fk.stream_ready[s] < t)
		fk.stream_ready[s] = t;
	pthread_mutex_unlock(&fk.lock);
}

/* --- injection, like cuInit ---------------------------------------------------- */

/* What cudart's exit teardown shows CUPTI: the context being destroyed. */
static void fk_cudart_teardown(void)
{
	CUpti_ResourceData rd;

	memset(&rd, 0, sizeof(rd));
	fk_fire(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING, &rd);
}

static void fk_prepare(void)
{
	pthread_mutex_lock(&fk.lock);
}

static void fk_unlock(void)
{
	pthread_mutex_unlock(&fk.lock);
}

int fakecuda_init(void)
{
	static pthread_mutex_t once = PTHREAD_MUTEX_INITIALIZER;
	static int done, result;
	const char *path;
	int (*init)(void);
	void *h;

	pthread_mutex_lock(&once);
	if (done)
		goto out;
	done = 1;
	pthread_atfork(fk_prepare, fk_unlock, fk_unlock);
	/* cudart registers its teardown before it calls cuInit, so the
	 * injection's atexit handler (registered in cuInit) runs first. */
	atexit(fk_cudart_teardown);
	path = getenv("CUDA_INJECTION64_PATH");
	if (!path || !*path)
		goto out;
	h = dlopen(path, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "fakecuda: cannot load the injection library: %s\n", dlerror());
		result = -1;
		goto out;
	}
	init = (int (*)(void))dlsym(h, "InitializeInjection");
	if (!init) {
		fprintf(stderr, "fakecuda: %s has no InitializeInjection\n", path);
		result = -1;
		goto out;
	}
	init();
out:
	pthread_mutex_unlock(&once);
	return result;
}

/* --- kernels ---------------------------------------------------------------------- */

static void fk_kernel_record(const struct fakecuda_kernel *k, unsigned stream, uint32_t corr)
{
	CUpti_ActivityKernel10 r;
	uint64_t start = fk_schedule(stream, k->gpu_ns, 0);

	memset(&r, 0, sizeof(r));
	r.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	r.registersPerThread = (uint16_t)k->registers;
	r.start = start;
	r.end = start + k->gpu_ns;
	r.completed = r.end;
	r.deviceId = FK_DEVICE;
	r.contextId = FK_CONTEXT;
	r.streamId = stream;
	r.gridX = k->grid[0];
	r.gridY = k->grid[1];
	r.gridZ = k->grid[2];
	r.blockX = k->block[0];
	r.blockY = k->block[1];
	r.blockZ = k->block[2];
	r.staticSharedMemory = k->static_smem;
	r.dynamicSharedMemory = k->dynamic_smem;
	r.correlationId = corr;
	r.name = k->name;   /* CUPTI's names outlive the record; ours are the caller's */
	r.shmemLimitConfig = k->optin ? CUPTI_FUNC_SHMEM_LIMIT_OPTIN : CUPTI_FUNC_SHMEM_LIMIT_DEFAULT;
	r.graphId = 0;
	fk_record(&r, sizeof(r), r.end);
}

int fakecuda_launch(const struct fakecuda_kernel *k, unsigned stream)
{
	struct fk_call rt, drv;
	uint32_t corr = fk_corr();

	fk_enter(&rt, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
		 k->name, corr);
	fk_enter(&drv, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, k->name,
		 corr);
	fk_kernel_record(k, stream, corr);
	fk_exit(&drv, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);
	fk_exit(&rt, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000);
	return 0;
}

int fakecuda_launch_driver(const struct fakecuda_kernel *k, unsigned stream)
{
	struct fk_call drv;
	uint32_t corr = fk_corr();

	fk_enter(&drv, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, k->name,
		 corr);
	fk_kernel_record(k, stream, corr);
	fk_exit(&drv, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);
	return 0;
}

/* --- copies and sets ---------------------------------------------------------------- */

static uint32_t fk_copy_driver_cbid(int kind, int async)
{
	if (async)
		return CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync;
	switch (kind) {
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
		return CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2;
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
		return CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2;
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
		return CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoD_v2;
	default:
		return CUPTI_DRIVER_TRACE_CBID_cuMemcpy;
	}
}

int fakecuda_memcpy(int kind, uint64_t bytes, int pinned, uint64_t gpu_ns, int async,
		    unsigned stream)
{
	uint32_t rt_cbid = async ? CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020
				 : CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020;
	uint32_t drv_cbid = fk_copy_driver_cbid(kind, async);
	uint8_t host = pinned ? CUPTI_ACTIVITY_MEMORY_KIND_PINNED : CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
	struct fk_call rt, drv;
	CUpti_ActivityMemcpy6 r;
	uint32_t corr = fk_corr();
	uint64_t start;

	if (!async)
		stream = 0;
	fk_enter(&rt, CUPTI_CB_DOMAIN_RUNTIME_API, rt_cbid, NULL, corr);
	fk_enter(&drv, CUPTI_CB_DOMAIN_DRIVER_API, drv_cbid, NULL, corr);
	/* A synchronous copy on the legacy stream waits for all earlier work. */
	start = fk_schedule(stream, gpu_ns, !async);
	memset(&r, 0, sizeof(r));
	r.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	r.copyKind = (uint8_t)kind;
	r.srcKind = kind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD ? host : CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	r.dstKind = kind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH ? host : CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	r.flags = async ? CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC : 0;
	r.bytes = bytes;
	r.start = start;
	r.end = start + gpu_ns;
	r.deviceId = FK_DEVICE;
	r.contextId = FK_CONTEXT;
	r.streamId = stream;
	r.correlationId = corr;
	r.runtimeCorrelationId = corr;
	r.copyCount = 1;
	fk_record(&r, sizeof(r), r.end);
	if (!async)
		fk_sleep_until(r.end);
	fk_exit(&drv, CUPTI_CB_DOMAIN_DRIVER_API, drv_cbid);
	fk_exit(&rt, CUPTI_CB_DOMAIN_RUNTIME_API, rt_cbid);
	return 0;
}

int fakecuda_memset(uint64_t bytes, int value, uint64_t gpu_ns, unsigned stream)
{
	uint32_t rt_cbid = CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020;
	uint32_t drv_cbid = CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2;
	struct fk_call rt, drv;
	CUpti_ActivityMemset4 r;
	uint32_t corr = fk_corr();
	uint64_t start;

	fk_enter(&rt, CUPTI_CB_DOMAIN_RUNTIME_API, rt_cbid, NULL, corr);
	fk_enter(&drv, CUPTI_CB_DOMAIN_DRIVER_API, drv_cbid, NULL, corr);
	start = fk_schedule(stream, gpu_ns, 1);
	memset(&r, 0, sizeof(r));
	r.kind = CUPTI_ACTIVITY_KIND_MEMSET;
	r.value = (uint32_t)value;
	r.bytes = bytes;
	r.start = start;
	r.end = start + gpu_ns;
	r.deviceId = FK_DEVICE;
	r.contextId = FK_CONTEXT;
	r.streamId = stream;
	r.correlationId = corr;
	r.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	fk_record(&r, sizeof(r), r.end);
	fk_sleep_until(r.end);
	fk_exit(&drv, CUPTI_CB_DOMAIN_DRIVER_API, drv_cbid);
	fk_exit(&rt, CUPTI_CB_DOMAIN_RUNTIME_API, rt_cbid);
	return 0;
}

/* --- synchronization ------------------------------------------------------------------ */

static int fk_sync(int whole_device, unsigned stream)
{
	uint32_t rt_cbid = whole_device ? CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020
					: CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020;
	uint32_t drv_cbid = whole_device ? CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize
					 : CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize;
	struct fk_call rt, drv;
	CUpti_ActivitySynchronization2 r;
	uint32_t corr = fk_corr();
	uint64_t start, until;

	fk_enter(&rt, CUPTI_CB_DOMAIN_RUNTIME_API, rt_cbid, NULL, corr);
	fk_enter(&drv, CUPTI_CB_DOMAIN_DRIVER_API, drv_cbid, NULL, corr);
	start = fk_now();
	until = fk_ready(whole_device, stream);
	if (until < start)
		until = start;
	fk_sleep_until(until);
	memset(&r, 0, sizeof(r));
	r.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	r.type = whole_device ? CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE
			      : CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
	r.start = start;
	r.end = until;
	r.correlationId = corr;
	r.contextId = FK_CONTEXT;
	r.streamId = whole_device ? CUPTI_SYNCHRONIZATION_INVALID_VALUE : stream;
	r.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
	fk_record(&r, sizeof(r), r.end);
	fk_exit(&drv, CUPTI_CB_DOMAIN_DRIVER_API, drv_cbid);
	fk_exit(&rt, CUPTI_CB_DOMAIN_RUNTIME_API, rt_cbid);
	return 0;
}

int fakecuda_device_sync(void)
{
	return fk_sync(1, 0);
}

int fakecuda_stream_sync(unsigned stream)
{
	return fk_sync(0, stream);
}

/* --- memory ------------------------------------------------------------------------------ */

/*
 * Live simulated allocations, so a release record carries the block's kind,
 * size and pool as CUPTI's do; and the device's default pool behind
 * cudaMallocAsync (LOCAL, grows by FK_POOL_GRANULE, shrinks on trim).
 */
#define FK_BLOCKS 1024
#define FK_POOL_ADDR 0x7e0000000000ull
#define FK_POOL_GRANULE (32ull << 20)

struct fk_block {
	uint64_t addr, bytes;
	uint32_t kind, async;
};

static pthread_mutex_t fk_mem_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fk_block fk_blocks[FK_BLOCKS];
static uint64_t fk_pool_size, fk_pool_used;
static int fk_pool_created;

static void fk_memory_record(const struct fk_block *b, int op, uint32_t corr, unsigned stream)
{
	CUpti_ActivityMemory4 r;

	memset(&r, 0, sizeof(r));
	r.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
	r.memoryOperationType = op;
	r.memoryKind = b->kind;
	r.correlationId = corr;
	r.address = b->addr;
	r.bytes = b->bytes;
	r.timestamp = fk_now();
	r.PC = 0x401000 + corr;
	r.deviceId = FK_DEVICE;
	r.contextId = FK_CONTEXT;
	r.streamId = b->async ? stream : CUPTI_INVALID_STREAM_ID;
	r.isAsync = b->async;
	if (b->async) {
		r.memoryPoolConfig.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
		r.memoryPoolConfig.address = FK_POOL_ADDR;
		r.memoryPoolConfig.releaseThreshold = 0;
		r.memoryPoolConfig.pool.size = fk_pool_size;
		r.memoryPoolConfig.utilizedSize = fk_pool_used;
	}
	fk_record(&r, sizeof(r), r.timestamp);
}

static void fk_pool_record(int op, uint32_t corr, uint64_t keep)
{
	CUpti_ActivityMemoryPool3 r;

	memset(&r, 0, sizeof(r));
	r.kind = CUPTI_ACTIVITY_KIND_MEMORY_POOL;
	r.memoryPoolOperationType = op;
	r.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
	r.correlationId = corr;
	r.deviceId = FK_DEVICE;
	r.minBytesToKeep = keep;
	r.address = FK_POOL_ADDR;
	r.size = fk_pool_size;
	r.releaseThreshold = 0;
	r.timestamp = fk_now();
	r.utilizedSize = fk_pool_used;
	fk_record(&r, sizeof(r), r.timestamp);
}

/* Record the new block (caller holds fk_mem_lock); 0 when the table is full. */
static int fk_block_add(uint64_t addr, uint64_t bytes, uint32_t kind, uint32_t async)
{
	for (int i = 0; i < FK_BLOCKS; i++) {
		if (fk_blocks[i].addr == 0) {
			fk_blocks[i] = (struct fk_block){ addr, bytes, kind, async };
			return 1;
		}
	}
	return 0;
}

static int fk_block_take(uint64_t addr, struct fk_block *out)
{
	for (int i = 0; i < FK_BLOCKS; i++) {
		if (fk_blocks[i].addr == addr && addr) {
			*out = fk_blocks[i];
			memset(&fk_blocks[i], 0, sizeof(fk_blocks[i]));
			return 1;
		}
	}
	return 0;
}

/* One allocating call: runtime cbid rcb around driver cbid dcb (0: none). */
static uint64_t fk_alloc(uint32_t rcb, uint32_t dcb, uint64_t bytes, uint32_t kind, int async,
			 unsigned stream, int fail)
{
	static _Atomic uint64_t next = 0x7f0000000000ull;
	struct fk_call rt, drv;
	struct fk_block b = { 0 };
	uint32_t corr = fk_corr();

	fk_enter(&rt, CUPTI_CB_DOMAIN_RUNTIME_API, rcb, NULL, corr);
	if (dcb)
		fk_enter(&drv, CUPTI_CB_DOMAIN_DRIVER_API, dcb, NULL, corr);
	if (fail) {
		rt.ret = 2; /* cudaErrorMemoryAllocation */
		drv.ret = 2; /* CUDA_ERROR_OUT_OF_MEMORY */
	} else {
		pthread_mutex_lock(&fk_mem_lock);
		if (async) {
			b.addr = FK_POOL_ADDR + fk_pool_used;
			fk_pool_used += (bytes + 0xff) & ~0xffull;
			if (!fk_pool_created) {
				fk_pool_created = 1;
				fk_pool_record(CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED, corr,
					       0);
			}
			while (fk_pool_size < fk_pool_used)
				fk_pool_size += FK_POOL_GRANULE;
		} else {
			b.addr = atomic_fetch_add(&next, (bytes + 0xfffff) & ~0xfffffull);
		}
		b.bytes = bytes;
		b.kind = kind;
		b.async = (uint32_t)async;
		fk_block_add(b.addr, bytes, kind, b.async);
		fk_memory_record(&b, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, corr, stream);
		pthread_mutex_unlock(&fk_mem_lock);
	}
	if (dcb)
		fk_exit(&drv, CUPTI_CB_DOMAIN_DRIVER_API, dcb);
	fk_exit(&rt, CUPTI_CB_DOMAIN_RUNTIME_API, rcb);
	return b.addr;
}

static int fk_release(uint32_t rcb, uint32_t dcb, uint64_t address, unsigned stream)
{
	struct fk_call rt, drv;
	struct fk_block b = { 0 };
	uint32_t corr = fk_corr();

	fk_enter(&rt, CUPTI_CB_DOMAIN_RUNTIME_API, rcb, NULL, corr);
	if (dcb)
		fk_enter(&drv, CUPTI_CB_DOMAIN_DRIVER_API, dcb, NULL, corr);
	pthread_mutex_lock(&fk_mem_lock);
	if (fk_block_take(address, &b)) {
		/* Async frees return the bytes to the pool, which keeps its size. */
		if (b.async)
			fk_pool_used -= (b.bytes + 0xff) & ~0xffull;
		fk_memory_record(&b, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, corr, stream);
	} else {
		rt.ret = 1; /* cudaErrorInvalidValue */
	}
	pthread_mutex_unlock(&fk_mem_lock);
	if (dcb)
		fk_exit(&drv, CUPTI_CB_DOMAIN_DRIVER_API, dcb);
	fk_exit(&rt, CUPTI_CB_DOMAIN_RUNTIME_API, rcb);
	return rt.ret;
}

uint64_t fakecuda_malloc(uint64_t bytes)
{
	return fk_alloc(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020,
			CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, bytes,
			CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 0, 0, 0);
}

int fakecuda_free(uint64_t address)
{
	return fk_release(CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020,
			  CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2, address, 0);
}

uint64_t fakecuda_malloc_async(uint64_t bytes, unsigned stream)
{
	return fk_alloc(CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020,
			CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync, bytes,
			CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 1, stream, 0);
}

int fakecuda_free_async(uint64_t address, unsigned stream)
{
	return fk_release(CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_v11020,
			  CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync, address, stream);
}

int fakecuda_pool_trim(uint64_t keep)
{
	struct fk_call rt;
	uint32_t corr = fk_corr();

	fk_enter(&rt, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemPoolTrimTo_v11020,
		 NULL, corr);
	pthread_mutex_lock(&fk_mem_lock);
	if (keep < fk_pool_used)
		keep = fk_pool_used;
	while (fk_pool_size >= keep + FK_POOL_GRANULE)
		fk_pool_size -= FK_POOL_GRANULE;
	fk_pool_record(CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED, corr, keep);
	pthread_mutex_unlock(&fk_mem_lock);
	fk_exit(&rt, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemPoolTrimTo_v11020);
	return 0;
}

uint64_t fakecuda_malloc_host(uint64_t bytes, int host_alloc, int fail)
{
	if (host_alloc)
		return fk_alloc(CUPTI_RUNTIME_TRACE_CBID_cudaHostAlloc_v3020,
				CUPTI_DRIVER_TRACE_CBID_cuMemHostAlloc, bytes,
				CUPTI_ACTIVITY_MEMORY_KIND_PINNED, 0, 0, fail);
	return fk_alloc(CUPTI_RUNTIME_TRACE_CBID_cudaMallocHost_v3020,
			CUPTI_DRIVER_TRACE_CBID_cuMemAllocHost_v2, bytes,
			CUPTI_ACTIVITY_MEMORY_KIND_PINNED, 0, 0, fail);
}

int fakecuda_free_host(uint64_t address)
{
	return fk_release(CUPTI_RUNTIME_TRACE_CBID_cudaFreeHost_v3020,
			  CUPTI_DRIVER_TRACE_CBID_cuMemFreeHost, address, 0);
}

uint64_t fakecuda_malloc_managed(uint64_t bytes)
{
	return fk_alloc(CUPTI_RUNTIME_TRACE_CBID_cudaMallocManaged_v6000,
			CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged, bytes,
			CUPTI_ACTIVITY_MEMORY_KIND_MANAGED, 0, 0, 0);
}

int fakecuda_device_reset(void)
{
	struct fk_call rt;
	uint32_t corr = fk_corr();

	fk_enter(&rt, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020,
		 NULL, corr);
	fk_exit(&rt, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020);
	return 0;
}

/* --- device and context, for EnableAndDump ------------------------------------------------- */

void fk_dump_device(void)
{
	CUpti_ActivityDevice5 r;

	memset(&r, 0, sizeof(r));
	r.kind = CUPTI_ACTIVITY_KIND_DEVICE;
	r.globalMemoryBandwidth = 3352000000u;  /* KB/s */
	r.globalMemorySize = 85899345920ull;
	r.constantMemorySize = 65536;
	r.l2CacheSize = 52428800;
	r.numThreadsPerWarp = 32;
	r.coreClockRate = 1980000;
	r.numMemcpyEngines = 3;
	r.numMultiprocessors = 132;
	r.maxIPC = 4;
	r.maxWarpsPerMultiprocessor = 64;
	r.maxBlocksPerMultiprocessor = 32;
	r.maxSharedMemoryPerMultiprocessor = 228 * 1024;
	r.maxRegistersPerMultiprocessor = 65536;
	r.maxRegistersPerBlock = 65536;
	r.maxSharedMemoryPerBlock = 48 * 1024;
	r.maxThreadsPerBlock = 1024;
	r.maxBlockDimX = 1024;
	r.maxBlockDimY = 1024;
	r.maxBlockDimZ = 64;
	r.maxGridDimX = 2147483647;
	r.maxGridDimY = 65535;
	r.maxGridDimZ = 65535;
	r.computeCapabilityMajor = 9;
	r.computeCapabilityMinor = 0;
	r.id = FK_DEVICE;
	/* "Client is responsible for freeing this memory" (Device5.name). */
	r.name = strdup("NVIDIA H100 80GB HBM3 (simulated)");
	/* One simulated GPU: every process sees the same UUID. */
	memcpy(&r.uuid, "\x8e\x2a\x3f\x1c\x55\x10\x4b\x7d\x9a\x01\xc3\x6e\x2f\x88\x14\x5b",
	       sizeof(r.uuid));
	r.isCudaVisible = 1;
	fk_record(&r, sizeof(r), 0);
}

void fk_dump_context(void)
{
	CUpti_ActivityContext3 r;

	memset(&r, 0, sizeof(r));
	r.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
	r.contextId = FK_CONTEXT;
	r.deviceId = FK_DEVICE;
	r.computeApiKind = CUPTI_ACTIVITY_COMPUTE_API_CUDA;
	r.nullStreamId = 7;
	r.numMultiprocessors = 132;
	fk_record(&r, sizeof(r), 0);
}
