/*
 * test_convert.c — record-layout unit tests for src/agent/cuda/convert.c:
 * activity records built by hand with the real CUDA 13.0 layouts are walked
 * with the REAL cuptiActivityGetNextRecord (no GPU needed) and every field of
 * the produced cbn records is checked; also zero-timestamp counting, kinds we
 * skip, the INVALID_KIND tail, the clock offset, and the callback-side record
 * builders.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <dirent.h>
#include <stdio.h>
#include <unistd.h>

#include "convert.h"
#include "dump.h"
#include "testlib.h"

/* The layouts this test (and convert.c) rely on. */
_Static_assert(sizeof(CUpti_ActivityKernel10) == 216, "Kernel10");
_Static_assert(sizeof(CUpti_ActivityMemcpy6) == 96, "Memcpy6");
_Static_assert(sizeof(CUpti_ActivityMemcpyPtoP4) == 96, "MemcpyPtoP4");
_Static_assert(sizeof(CUpti_ActivityMemset4) == 88, "Memset4");
_Static_assert(sizeof(CUpti_ActivitySynchronization2) == 56, "Synchronization2");
_Static_assert(sizeof(CUpti_ActivityOverhead3) == 56, "Overhead3");
_Static_assert(sizeof(CUpti_ActivityDevice5) == 184, "Device5");
_Static_assert(sizeof(CUpti_ActivityContext3) == 32, "Context3");
_Static_assert(sizeof(CUpti_ActivityMemory4) == 128, "Memory4");
_Static_assert(sizeof(CUpti_ActivityMemoryPool3) == 80, "MemoryPool3");
_Static_assert(sizeof(CUpti_ActivityAPI) == 40, "API");
_Static_assert(offsetof(CUpti_ActivityMemcpy6, bytes) == 8, "Memcpy6.bytes");
_Static_assert(offsetof(CUpti_ActivityMemset4, start) == 16, "Memset4.start");

/* --- collector ------------------------------------------------------------------- */

static unsigned char *out[64];
static size_t nout;
static int fail_emit;

static int collect(void *arg, const void *rec, size_t size)
{
	(void)arg;
	if (fail_emit)
		return -1;
	REQUIRE(nout < 64);
	REQUIRE(size % 8 == 0 && ((const struct cbn_rec *)rec)->size == size);
	out[nout] = malloc(size);
	memcpy(out[nout], rec, size);
	nout++;
	return 0;
}

static void reset(void)
{
	while (nout)
		free(out[--nout]);
}

static int fake_attr(int *value, int attrib, int device)
{
	if (device != 0)
		return 101;
	if (attrib == 97)
		*value = 232448;
	else if (attrib == 111)
		*value = 1024;
	else
		return 1;
	return 0;
}

/* --- a buffer of hand-built records -------------------------------------------------- */

static _Alignas(8) uint8_t buf[8192];
static size_t used;
static size_t offs[32];
static size_t nrec;

static void *put(size_t size)
{
	void *p = buf + used;

	REQUIRE(used + size <= sizeof(buf));
	memset(p, 0, size);
	offs[nrec++] = used;
	used += size;
	return p;
}

static void build(void)
{
	CUpti_ActivityKernel10 *k;
	CUpti_ActivityMemcpy6 *m;
	CUpti_ActivityMemcpyPtoP4 *p;
	CUpti_ActivityMemset4 *s;
	CUpti_ActivitySynchronization2 *y;
	CUpti_ActivityOverhead3 *o;
	CUpti_ActivityDevice5 *d;
	CUpti_ActivityContext3 *c;
	CUpti_ActivityMemory4 *mem;
	CUpti_ActivityAPI *api;

	memset(buf, 0, sizeof(buf));
	used = nrec = 0;

	k = put(sizeof(*k));                       /* 0 */
	k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k->registersPerThread = 40;
	k->start = 1000;
	k->end = 51000;
	k->deviceId = 1;
	k->contextId = 2;
	k->streamId = 13;
	k->gridX = 264;
	k->gridY = 2;
	k->gridZ = 3;
	k->blockX = 256;
	k->blockY = 4;
	k->blockZ = 1;
	k->staticSharedMemory = 4096;
	k->dynamicSharedMemory = 102400;
	k->correlationId = 77;
	k->name = "_Z7kernelAPfi";
	k->shmemLimitConfig = CUPTI_FUNC_SHMEM_LIMIT_OPTIN;
	k->graphNodeId = 0x123456789ull;
	k->graphId = 9;

	m = put(sizeof(*m));                       /* 1 */
	m->kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	m->srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
	m->dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m->flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
	m->bytes = 1 << 20;
	m->start = 2000;
	m->end = 3000;
	m->deviceId = 1;
	m->contextId = 2;
	m->streamId = 14;
	m->correlationId = 78;
	m->graphId = 4;
	m->copyCount = 1;

	p = put(sizeof(*p));                       /* 2 */
	p->kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
	p->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
	p->srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	p->dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	p->bytes = 4096;
	p->start = 4000;
	p->end = 4500;
	p->deviceId = 0;
	p->contextId = 3;
	p->streamId = 15;
	p->srcDeviceId = 0;
	p->dstDeviceId = 1;
	p->correlationId = 79;

	s = put(sizeof(*s));                       /* 3 */
	s->kind = CUPTI_ACTIVITY_KIND_MEMSET;
	s->value = 0xab;
	s->bytes = 512;
	s->start = 5000;
	s->end = 5100;
	s->deviceId = 1;
	s->contextId = 2;
	s->streamId = 16;
	s->correlationId = 80;
	s->flags = CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC;
	s->memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;

	y = put(sizeof(*y));                       /* 4 */
	y->kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	y->type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
	y->start = 6000;
	y->end = 9000;
	y->correlationId = 81;
	y->contextId = 2;
	y->streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
	y->cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;

	o = put(sizeof(*o));                       /* 5 */
	o->kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
	o->overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
	o->start = 9500;
	o->end = 9700;
	o->correlationId = 0;

	d = put(sizeof(*d));                       /* 6 */
	d->kind = CUPTI_ACTIVITY_KIND_DEVICE;
	d->globalMemorySize = 85899345920ull;
	d->numThreadsPerWarp = 32;
	d->numMultiprocessors = 132;
	d->maxWarpsPerMultiprocessor = 64;
	d->maxBlocksPerMultiprocessor = 32;
	d->maxSharedMemoryPerMultiprocessor = 233472;
	d->maxRegistersPerMultiprocessor = 65536;
	d->maxRegistersPerBlock = 65536;
	d->maxSharedMemoryPerBlock = 49152;
	d->maxThreadsPerBlock = 1024;
	d->computeCapabilityMajor = 9;
	d->computeCapabilityMinor = 0;
	d->id = 0;
	d->name = "NVIDIA H100 80GB HBM3";

	c = put(sizeof(*c));                       /* 7 */
	c->kind = CUPTI_ACTIVITY_KIND_CONTEXT;
	c->contextId = 2;
	c->deviceId = 1;
	c->nullStreamId = 7;
	c->numMultiprocessors = 66;

	mem = put(sizeof(*mem));                   /* 8 */
	mem->kind = CUPTI_ACTIVITY_KIND_MEMORY2;
	mem->memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
	mem->memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	mem->correlationId = 82;
	mem->address = 0x7f0000100000ull;
	mem->bytes = 1 << 26;
	mem->timestamp = 10000;
	mem->deviceId = 1;
	mem->contextId = 2;
	mem->streamId = 17;

	api = put(sizeof(*api));                   /* 9: a kind we do not convert */
	api->kind = CUPTI_ACTIVITY_KIND_RUNTIME;
	api->cbid = 505;
	api->start = 900;
	api->end = 950;
	api->correlationId = 77;

	k = put(sizeof(*k));                       /* 10: never timed */
	k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k->name = "_Z4lostv";
	k->correlationId = 83;

	m = put(sizeof(*m));                       /* 11: end before start */
	m->kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m->start = 700;
	m->end = 600;
}

/* --- tests ---------------------------------------------------------------------------- */

static void test_parser_steps(void)
{
	CUpti_Activity *r = NULL;
	size_t i = 0;

	/* The real parser steps by exactly the 13.0 sizes we built with. */
	while (cuptiActivityGetNextRecord(buf, used, &r) == CUPTI_SUCCESS) {
		REQUIRE(i < nrec);
		CHECK_EQ_INT((uint8_t *)r - buf, offs[i]);
		i++;
	}
	CHECK_EQ_INT(i, nrec);
}

static void test_buffer(void)
{
	struct convert_ctx c = { .emit = collect, .device_attr = fake_attr };
	const struct cbn_rec_cuda_kernel *k;
	const struct cbn_rec_cuda_memcpy *m;
	const struct cbn_rec_cuda_memset *s;
	const struct cbn_rec_cuda_sync *y;
	const struct cbn_rec_cuda_overhead *o;
	const struct cbn_rec_cuda_device *d;
	const struct cbn_rec_cuda_context *x;
	const struct cbn_rec_cuda_memory *mem;
	int n;

	/* Valid size includes a zero-filled tail, as CUPTI buffers may. */
	n = convert_buffer(&c, buf, used + 512);
	CHECK_EQ_INT(n, nrec);
	CHECK_EQ_INT(c.stats.walked, nrec);
	CHECK_EQ_INT(c.stats.records, 9);
	CHECK_EQ_INT(c.stats.zero_ts, 2);
	CHECK_EQ_INT(c.stats.skipped, 1);
	REQUIRE(nout == 9);

	k = (const void *)out[0];
	CHECK_EQ_INT(k->h.type, CBN_REC_CUDA_KERNEL);
	CHECK_EQ_INT(k->h.size, CBN_REC_ALIGN(sizeof(*k) + strlen("_Z7kernelAPfi") + 1));
	CHECK_EQ_INT(k->start, 1000);
	CHECK_EQ_INT(k->end, 51000);
	CHECK_EQ_INT(k->device, 1);
	CHECK_EQ_INT(k->context, 2);
	CHECK_EQ_INT(k->stream, 13);
	CHECK_EQ_INT(k->correlation, 77);
	CHECK_EQ_INT(k->grid[0], 264);
	CHECK_EQ_INT(k->grid[1], 2);
	CHECK_EQ_INT(k->grid[2], 3);
	CHECK_EQ_INT(k->block[0], 256);
	CHECK_EQ_INT(k->block[1], 4);
	CHECK_EQ_INT(k->block[2], 1);
	CHECK_EQ_INT(k->registers, 40);
	CHECK_EQ_INT(k->static_smem, 4096);
	CHECK_EQ_INT(k->dynamic_smem, 102400);
	CHECK_EQ_INT(k->shmem_limit_optin, 1);
	CHECK_EQ_INT(k->graph_id, 9);
	CHECK_EQ_INT(k->graph_node_id, 0x123456789ull);
	CHECK_EQ_INT(k->name_len, 13);
	CHECK_STR(k->name, "_Z7kernelAPfi");

	m = (const void *)out[1];
	CHECK_EQ_INT(m->h.type, CBN_REC_CUDA_MEMCPY);
	CHECK_EQ_INT(m->h.size, sizeof(*m));
	CHECK_EQ_INT(m->h.flags, CBN_GPU_ASYNC);
	CHECK_EQ_INT(m->start, 2000);
	CHECK_EQ_INT(m->end, 3000);
	CHECK_EQ_INT(m->bytes, 1 << 20);
	CHECK_EQ_INT(m->device, 1);
	CHECK_EQ_INT(m->context, 2);
	CHECK_EQ_INT(m->stream, 14);
	CHECK_EQ_INT(m->correlation, 78);
	CHECK_EQ_INT(m->copy_kind, CBN_COPY_HTOD);
	CHECK_EQ_INT(m->src_kind, CBN_MEM_PAGEABLE);
	CHECK_EQ_INT(m->dst_kind, CBN_MEM_DEVICE);
	CHECK_EQ_INT(m->src_device, 1);
	CHECK_EQ_INT(m->dst_device, 1);
	CHECK_EQ_INT(m->graph_id, 4);

	m = (const void *)out[2];
	CHECK_EQ_INT(m->h.type, CBN_REC_CUDA_MEMCPY);
	CHECK_EQ_INT(m->h.flags, CBN_GPU_PEER);
	CHECK_EQ_INT(m->copy_kind, CBN_COPY_PTOP);
	CHECK_EQ_INT(m->bytes, 4096);
	CHECK_EQ_INT(m->start, 4000);
	CHECK_EQ_INT(m->end, 4500);
	CHECK_EQ_INT(m->context, 3);
	CHECK_EQ_INT(m->stream, 15);
	CHECK_EQ_INT(m->src_device, 0);
	CHECK_EQ_INT(m->dst_device, 1);
	CHECK_EQ_INT(m->correlation, 79);

	s = (const void *)out[3];
	CHECK_EQ_INT(s->h.type, CBN_REC_CUDA_MEMSET);
	CHECK_EQ_INT(s->h.size, sizeof(*s));
	CHECK_EQ_INT(s->h.flags, CBN_GPU_ASYNC);
	CHECK_EQ_INT(s->start, 5000);
	CHECK_EQ_INT(s->end, 5100);
	CHECK_EQ_INT(s->bytes, 512);
	CHECK_EQ_INT(s->value, 0xab);
	CHECK_EQ_INT(s->device, 1);
	CHECK_EQ_INT(s->stream, 16);
	CHECK_EQ_INT(s->correlation, 80);
	CHECK_EQ_INT(s->mem_kind, CBN_MEM_DEVICE);

	y = (const void *)out[4];
	CHECK_EQ_INT(y->h.type, CBN_REC_CUDA_SYNC);
	CHECK_EQ_INT(y->start, 6000);
	CHECK_EQ_INT(y->end, 9000);
	CHECK_EQ_INT(y->type, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE);
	CHECK_EQ_INT(y->correlation, 81);
	CHECK_EQ_INT(y->context, 2);
	CHECK_EQ_INT(y->stream, 0xffffffffu);

	o = (const void *)out[5];
	CHECK_EQ_INT(o->h.type, CBN_REC_CUDA_OVERHEAD);
	CHECK_EQ_INT(o->start, 9500);
	CHECK_EQ_INT(o->end, 9700);
	CHECK_EQ_INT(o->kind, CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH);

	d = (const void *)out[6];
	CHECK_EQ_INT(d->h.type, CBN_REC_CUDA_DEVICE);
	CHECK_EQ_INT(d->global_mem, 85899345920ull);
	CHECK_EQ_INT(d->id, 0);
	CHECK_EQ_INT(d->sm_count, 132);
	CHECK_EQ_INT(d->cc_major, 9);
	CHECK_EQ_INT(d->cc_minor, 0);
	CHECK_EQ_INT(d->max_threads_per_block, 1024);
	CHECK_EQ_INT(d->max_warps_per_sm, 64);
	CHECK_EQ_INT(d->threads_per_warp, 32);
	CHECK_EQ_INT(d->max_blocks_per_sm, 32);
	CHECK_EQ_INT(d->regs_per_sm, 65536);
	CHECK_EQ_INT(d->regs_per_block, 65536);
	CHECK_EQ_INT(d->smem_per_sm, 233472);
	CHECK_EQ_INT(d->smem_per_block, 49152);
	CHECK_EQ_INT(d->smem_per_block_optin, 232448);
	CHECK_EQ_INT(d->reserved_smem_per_block, 1024);
	CHECK_EQ_INT(d->name_len, strlen("NVIDIA H100 80GB HBM3"));
	CHECK_STR(d->name, "NVIDIA H100 80GB HBM3");

	x = (const void *)out[7];
	CHECK_EQ_INT(x->h.type, CBN_REC_CUDA_CONTEXT);
	CHECK_EQ_INT(x->h.size, sizeof(*x));
	CHECK_EQ_INT(x->context, 2);
	CHECK_EQ_INT(x->device, 1);
	CHECK_EQ_INT(x->null_stream, 7);
	CHECK_EQ_INT(x->sm_count, 66);

	mem = (const void *)out[8];
	CHECK_EQ_INT(mem->h.type, CBN_REC_CUDA_MEMORY);
	CHECK_EQ_INT(mem->h.flags, 2);
	CHECK_EQ_INT(mem->ts, 10000);
	CHECK_EQ_INT(mem->address, 0x7f0000100000ull);
	CHECK_EQ_INT(mem->bytes, 1 << 26);
	CHECK_EQ_INT(mem->device, 1);
	CHECK_EQ_INT(mem->context, 2);
	CHECK_EQ_INT(mem->stream, 17);
	CHECK_EQ_INT(mem->correlation, 82);
	CHECK_EQ_INT(mem->mem_kind, CBN_MEM_DEVICE);
	/* The Memory4 extension follows, zero for a non-pool, synchronous call. */
	CHECK_EQ_INT(mem->h.size, sizeof(*mem) + sizeof(struct cbn_rec_cuda_memory_ext));
	{
		const struct cbn_rec_cuda_memory_ext *x = (const void *)(mem + 1);
		CHECK_EQ_INT(x->pool_address, 0);
		CHECK_EQ_INT(x->pool_type, 0);
		CHECK_EQ_INT(x->is_async, 0);
		CHECK_EQ_INT(x->pool_size, 0);
	}
	reset();
}

/* MEMORY2 from the async allocator (pool config), an IMPORTED pool (its
 * union holds a process id, not a size), pinned host memory, and the three
 * MEMORY_POOL operations; an unknown pool operation is skipped. */
static void test_memory_pools(void)
{
	struct convert_ctx c = { .emit = collect };
	const struct cbn_rec_cuda_memory *m;
	const struct cbn_rec_cuda_memory_ext *x;
	const struct cbn_rec_cuda_mempool *q;
	CUpti_ActivityMemory4 *mem;
	CUpti_ActivityMemoryPool3 *pool;

	memset(buf, 0, sizeof(buf));
	used = nrec = 0;

	mem = put(sizeof(*mem));                   /* 0: cudaMallocAsync, LOCAL pool */
	mem->kind = CUPTI_ACTIVITY_KIND_MEMORY2;
	mem->memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
	mem->memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	mem->correlationId = 90;
	mem->address = 0x7e0000000100ull;
	mem->bytes = 3 << 20;
	mem->timestamp = 20000;
	mem->PC = 0x4011aa;
	mem->processId = 4242;
	mem->deviceId = 2;
	mem->contextId = 5;
	mem->streamId = 21;
	mem->isAsync = 1;
	mem->memoryPoolConfig.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
	mem->memoryPoolConfig.address = 0x7e0000000000ull;
	mem->memoryPoolConfig.releaseThreshold = 1ull << 30;
	mem->memoryPoolConfig.pool.size = 32ull << 20;
	mem->memoryPoolConfig.utilizedSize = 5ull << 20;

	mem = put(sizeof(*mem));                   /* 1: IMPORTED pool */
	mem->kind = CUPTI_ACTIVITY_KIND_MEMORY2;
	mem->memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
	mem->memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	mem->correlationId = 91;
	mem->address = 0x7d0000000000ull;
	mem->bytes = 1 << 20;
	mem->timestamp = 21000;
	mem->isAsync = 1;
	mem->memoryPoolConfig.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_IMPORTED;
	mem->memoryPoolConfig.address = 0x7d0000000000ull;
	mem->memoryPoolConfig.releaseThreshold = 77;
	mem->memoryPoolConfig.pool.processId = 4343;
	mem->memoryPoolConfig.utilizedSize = 88;

	mem = put(sizeof(*mem));                   /* 2: cudaMallocHost */
	mem->kind = CUPTI_ACTIVITY_KIND_MEMORY2;
	mem->memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
	mem->memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
	mem->correlationId = 92;
	mem->address = 0x7f1000000000ull;
	mem->bytes = 64 << 20;
	mem->timestamp = 22000;
	mem->streamId = CUPTI_INVALID_STREAM_ID;

	pool = put(sizeof(*pool));                 /* 3: created */
	pool->kind = CUPTI_ACTIVITY_KIND_MEMORY_POOL;
	pool->memoryPoolOperationType = CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED;
	pool->memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
	pool->correlationId = 93;
	pool->deviceId = 2;
	pool->address = 0x7e0000000000ull;
	pool->size = 32ull << 20;
	pool->releaseThreshold = 1ull << 30;
	pool->timestamp = 19000;
	pool->utilizedSize = 0;
	pool->minBytesToKeep = 999; /* not a TRIMMED record: ignored */

	pool = put(sizeof(*pool));                 /* 4: trimmed */
	pool->kind = CUPTI_ACTIVITY_KIND_MEMORY_POOL;
	pool->memoryPoolOperationType = CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED;
	pool->memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
	pool->correlationId = 94;
	pool->deviceId = 2;
	pool->address = 0x7e0000000000ull;
	pool->size = 8ull << 20;
	pool->timestamp = 30000;
	pool->utilizedSize = 2ull << 20;
	pool->minBytesToKeep = 4ull << 20;
	pool->isManagedPool = 1;

	pool = put(sizeof(*pool));                 /* 5: destroyed, no timestamp */
	pool->kind = CUPTI_ACTIVITY_KIND_MEMORY_POOL;
	pool->memoryPoolOperationType = CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED;
	pool->address = 0x7e0000000000ull;

	pool = put(sizeof(*pool));                 /* 6: unknown operation */
	pool->kind = CUPTI_ACTIVITY_KIND_MEMORY_POOL;
	pool->memoryPoolOperationType = CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_INVALID;
	pool->timestamp = 31000;

	CHECK_EQ_INT(convert_buffer(&c, buf, used), 7);
	CHECK_EQ_INT(c.stats.records, 5);
	CHECK_EQ_INT(c.stats.zero_ts, 1);
	CHECK_EQ_INT(c.stats.skipped, 1);
	REQUIRE(nout == 5);

	m = (const void *)out[0];
	x = (const void *)(m + 1);
	CHECK_EQ_INT(m->h.type, CBN_REC_CUDA_MEMORY);
	CHECK_EQ_INT(m->h.size, sizeof(*m) + sizeof(*x));
	CHECK_EQ_INT(m->h.flags, 1);
	CHECK_EQ_INT(m->ts, 20000);
	CHECK_EQ_INT(m->address, 0x7e0000000100ull);
	CHECK_EQ_INT(m->bytes, 3 << 20);
	CHECK_EQ_INT(m->device, 2);
	CHECK_EQ_INT(m->context, 5);
	CHECK_EQ_INT(m->stream, 21);
	CHECK_EQ_INT(m->correlation, 90);
	CHECK_EQ_INT(m->mem_kind, CBN_MEM_DEVICE);
	CHECK_EQ_INT(x->pool_address, 0x7e0000000000ull);
	CHECK_EQ_INT(x->pool_release_threshold, 1ull << 30);
	CHECK_EQ_INT(x->pool_size, 32ull << 20);
	CHECK_EQ_INT(x->pool_utilized, 5ull << 20);
	CHECK_EQ_INT(x->pc, 0x4011aa);
	CHECK_EQ_INT(x->is_async, 1);
	CHECK_EQ_INT(x->pool_type, 1);

	m = (const void *)out[1];
	x = (const void *)(m + 1);
	CHECK_EQ_INT(m->h.flags, 2);
	CHECK_EQ_INT(x->pool_type, 2);
	CHECK_EQ_INT(x->pool_address, 0x7d0000000000ull);
	/* IMPORTED: the union is the exporter's pid, the rest undefined. */
	CHECK_EQ_INT(x->pool_size, 0);
	CHECK_EQ_INT(x->pool_release_threshold, 0);
	CHECK_EQ_INT(x->pool_utilized, 0);

	m = (const void *)out[2];
	x = (const void *)(m + 1);
	CHECK_EQ_INT(m->mem_kind, CBN_MEM_PINNED);
	CHECK_EQ_INT(m->bytes, 64 << 20);
	CHECK_EQ_INT(m->stream, CUPTI_INVALID_STREAM_ID);
	CHECK_EQ_INT(x->is_async, 0);
	CHECK_EQ_INT(x->pool_type, 0);

	q = (const void *)out[3];
	CHECK_EQ_INT(q->h.type, CBN_REC_CUDA_MEMPOOL);
	CHECK_EQ_INT(q->h.size, sizeof(*q));
	CHECK_EQ_INT(q->h.flags, CBN_MEMPOOL_CREATED);
	CHECK_EQ_INT(q->ts, 19000);
	CHECK_EQ_INT(q->address, 0x7e0000000000ull);
	CHECK_EQ_INT(q->size, 32ull << 20);
	CHECK_EQ_INT(q->utilized, 0);
	CHECK_EQ_INT(q->release_threshold, 1ull << 30);
	CHECK_EQ_INT(q->min_bytes_to_keep, 0);
	CHECK_EQ_INT(q->device, 2);
	CHECK_EQ_INT(q->correlation, 93);
	CHECK_EQ_INT(q->pool_type, 1);
	CHECK_EQ_INT(q->managed, 0);

	q = (const void *)out[4];
	CHECK_EQ_INT(q->h.flags, CBN_MEMPOOL_TRIMMED);
	CHECK_EQ_INT(q->ts, 30000);
	CHECK_EQ_INT(q->size, 8ull << 20);
	CHECK_EQ_INT(q->utilized, 2ull << 20);
	CHECK_EQ_INT(q->min_bytes_to_keep, 4ull << 20);
	CHECK_EQ_INT(q->managed, 1);
	reset();
}

static void test_offset_and_no_attr(void)
{
	struct convert_ctx c = { .emit = collect, .ts_offset = 500 };
	const struct cbn_rec_cuda_kernel *k;
	const struct cbn_rec_cuda_device *d;

	convert_buffer(&c, buf, used);
	REQUIRE(nout == 9);
	k = (const void *)out[0];
	CHECK_EQ_INT(k->start, 500);
	CHECK_EQ_INT(k->end, 50500);
	d = (const void *)out[6];
	CHECK_EQ_INT(d->smem_per_block_optin, 0);
	CHECK_EQ_INT(d->reserved_smem_per_block, 0);
	reset();
}

static void test_tail_and_truncation(void)
{
	struct convert_ctx c = { .emit = collect };
	size_t save = used;

	/* A record after a zeroed gap is never reached: INVALID_KIND ends the walk. */
	used += 64;
	{
		CUpti_ActivityContext3 *x = put(sizeof(*x));

		x->kind = CUPTI_ACTIVITY_KIND_CONTEXT;
		x->contextId = 99;
	}
	CHECK_EQ_INT(convert_buffer(&c, buf, used), nrec - 1);
	reset();
	nrec--;
	used = save;

	/* A truncated valid size stops before the partial record. */
	memset(&c.stats, 0, sizeof(c.stats));
	CHECK_EQ_INT(convert_buffer(&c, buf, offs[1] + 10), 1);
	CHECK_EQ_INT(c.stats.records, 1);
	reset();

	CHECK_EQ_INT(convert_buffer(&c, NULL, 10), -22);
	CHECK_EQ_INT(convert_buffer(&c, buf, 0), 0);

	/* An emit failure is counted, not fatal. */
	memset(&c.stats, 0, sizeof(c.stats));
	fail_emit = 1;
	convert_buffer(&c, buf, used);
	fail_emit = 0;
	CHECK_EQ_INT(c.stats.emit_failed, 9);
	CHECK_EQ_INT(c.stats.records, 0);
}

static void test_long_name(void)
{
	struct convert_ctx c = { .emit = collect };
	CUpti_ActivityKernel10 k;
	char *name = malloc(CONVERT_NAME_MAX + 100);
	const struct cbn_rec_cuda_kernel *o;

	memset(name, 'x', CONVERT_NAME_MAX + 99);
	name[CONVERT_NAME_MAX + 99] = '\0';
	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.start = 1;
	k.end = 2;
	k.name = name;
	CHECK_EQ_INT(convert_record(&c, (CUpti_Activity *)&k), 1);
	o = (const void *)out[0];
	CHECK_EQ_INT(o->name_len, CONVERT_NAME_MAX);
	CHECK_EQ_INT(strlen(o->name), CONVERT_NAME_MAX);
	CHECK(o->h.size <= CONVERT_REC_MAX);
	/* A kernel without a name gets an empty one. */
	k.name = NULL;
	CHECK_EQ_INT(convert_record(&c, (CUpti_Activity *)&k), 1);
	CHECK_EQ_INT(((const struct cbn_rec_cuda_kernel *)out[1])->name_len, 0);
	free(name);
	reset();
}

static void test_api_names(void)
{
	char s[64];
	const char *raw;

	CHECK_EQ_INT(convert_api_name(s, sizeof(s), "cudaMemcpy_v3020"), 10);
	CHECK_STR(s, "cudaMemcpy");
	convert_api_name(s, sizeof(s), "__cudaLaunchKernel_v13000");
	CHECK_STR(s, "cudaLaunchKernel");
	convert_api_name(s, sizeof(s), "__cudaLaunchKernel_ptsz_v13000");
	CHECK_STR(s, "cudaLaunchKernel_ptsz");
	convert_api_name(s, sizeof(s), "cuLaunchKernel");
	CHECK_STR(s, "cuLaunchKernel");
	convert_api_name(s, sizeof(s), "cuMemcpyHtoD_v2");
	CHECK_STR(s, "cuMemcpyHtoD");
	convert_api_name(s, sizeof(s), "cuCtxCreate_v4");
	CHECK_STR(s, "cuCtxCreate");
	convert_api_name(s, sizeof(s), "cudaFoo_v");
	CHECK_STR(s, "cudaFoo_v");
	convert_api_name(s, sizeof(s), NULL);
	CHECK_STR(s, "");
	convert_api_name(s, 5, "cudaMalloc_v3020");
	CHECK_STR(s, "cuda");

	/* With the real names table (works without a driver). */
	REQUIRE(cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, 505, &raw) == CUPTI_SUCCESS);
	convert_api_name(s, sizeof(s), raw);
	CHECK_STR(s, "cudaLaunchKernel");
	REQUIRE(cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, 211, &raw) == CUPTI_SUCCESS);
	convert_api_name(s, sizeof(s), raw);
	CHECK_STR(s, "cudaLaunchKernel");
	REQUIRE(cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, 506, &raw) == CUPTI_SUCCESS);
	convert_api_name(s, sizeof(s), raw);
	CHECK_STR(s, "cudaLaunchKernel_ptsz");
}

static void test_builders(void)
{
	_Alignas(8) unsigned char b[CONVERT_REC_MAX];
	const struct cbn_rec_cuda_api *a = (const void *)b;
	const struct cbn_rec_cuda_stack *s = (const void *)b;
	const struct cbn_rec_cuda_status *st = (const void *)b;
	uint64_t pcs[300];
	size_t size;
	int i;

	size = convert_api(b, 10, 20, 1234, 77, 505, CBN_CUDA_RUNTIME, 35, "cudaLaunchKernel");
	CHECK_EQ_INT(size, CBN_REC_ALIGN(sizeof(*a) + 17));
	CHECK_EQ_INT(a->h.type, CBN_REC_CUDA_API);
	CHECK_EQ_INT(a->h.size, size);
	CHECK_EQ_INT(a->start, 10);
	CHECK_EQ_INT(a->end, 20);
	CHECK_EQ_INT(a->tid, 1234);
	CHECK_EQ_INT(a->correlation, 77);
	CHECK_EQ_INT(a->cbid, 505);
	CHECK_EQ_INT(a->domain, CBN_CUDA_RUNTIME);
	CHECK_EQ_INT(a->ret, 35);
	CHECK_EQ_INT(a->name_len, 16);
	CHECK_STR(a->name, "cudaLaunchKernel");

	for (i = 0; i < 300; i++)
		pcs[i] = 0x400000 + (uint64_t)i;
	size = convert_stack(b, 77, 1234, pcs, 3, 0);
	CHECK_EQ_INT(size, sizeof(*s) + 24);
	CHECK_EQ_INT(s->h.type, CBN_REC_CUDA_STACK);
	CHECK_EQ_INT(s->h.size, size);
	CHECK_EQ_INT(s->correlation, 77);
	CHECK_EQ_INT(s->tid, 1234);
	CHECK_EQ_INT(s->nframes, 3);
	CHECK_EQ_INT(s->pc[2], 0x400002);
	size = convert_stack(b, 1, 1, pcs, 300, 0);
	CHECK_EQ_INT(s->nframes, CBN_MAX_FRAMES);
	CHECK_EQ_INT(size, sizeof(*s) + CBN_MAX_FRAMES * 8);
	/* keyed: the key after the frames; a reference has no frames */
	size = convert_stack(b, 9, 2, pcs, 3, 0xfeedULL);
	CHECK_EQ_INT(s->h.flags, CBN_CSTACK_KEYED);
	CHECK_EQ_INT(size, sizeof(*s) + 32);
	CHECK(memcmp(&s->pc[3], &(uint64_t){ 0xfeedULL }, 8) == 0);
	size = convert_stack(b, 10, 2, NULL, 0, 0xfeedULL);
	CHECK_EQ_INT(s->nframes, 0);
	CHECK_EQ_INT(size, sizeof(*s) + 8);

	size = convert_status(b, 5, CBN_CUDA_FINISHED, 0, 130001, 1, 2, 3, 4, 5, "hello");
	CHECK_EQ_INT(size % 8, 0);
	CHECK_EQ_INT(st->h.type, CBN_REC_CUDA_STATUS);
	CHECK_EQ_INT(st->ts, 5);
	CHECK_EQ_INT(st->state, CBN_CUDA_FINISHED);
	CHECK_EQ_INT(st->cupti_version, 130001);
	CHECK_EQ_INT(st->flush_timed_out, 1);
	CHECK_EQ_INT(st->dropped, 2);
	CHECK_EQ_INT(st->zero_ts, 3);
	CHECK_EQ_INT(st->buffers, 4);
	CHECK_EQ_INT(st->records, 5);
	CHECK_EQ_INT(st->message_len, 5);
	CHECK_STR(st->message, "hello");
	convert_status(b, 5, CBN_CUDA_STARTED, 0, 0, 0, 0, 0, 0, 0, NULL);
	CHECK_EQ_INT(st->message_len, 0);
	CHECK_STR(st->message, "");
}

/* Dump the hand-built buffer, load it back: same records, names rebuilt; a
 * damaged file is refused, never trusted. */
static void test_dump_roundtrip(void)
{
	char dir[] = "/tmp/cbn-dump-test.XXXXXX", path[512] = "";
	struct convert_ctx c = { .emit = collect };
	struct dirent *e;
	struct dump d;
	DIR *dp;
	FILE *f;
	long size;
	char *bytes;

	REQUIRE(mkdtemp(dir));
	REQUIRE(dump_write(dir, 130001, buf, used) == 0);
	dp = opendir(dir);
	REQUIRE(dp);
	while ((e = readdir(dp)))
		if (strncmp(e->d_name, "cupti.", 6) == 0)
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
	closedir(dp);
	REQUIRE(*path);
	REQUIRE(dump_load(path, &d) == 0);
	CHECK_EQ_INT(d.valid, used);
	CHECK_EQ_INT(d.cupti_version, 130001);
	CHECK_EQ_INT(d.nstrings, 3);   /* two kernel names and the device name */
	CHECK(d.buf != buf);
	CHECK_EQ_INT(convert_buffer(&c, d.buf, d.valid), nrec);
	REQUIRE(nout == 9);
	CHECK_STR(((const struct cbn_rec_cuda_kernel *)out[0])->name, "_Z7kernelAPfi");
	CHECK_STR(((const struct cbn_rec_cuda_device *)out[6])->name, "NVIDIA H100 80GB HBM3");
	CHECK_EQ_INT(((const struct cbn_rec_cuda_kernel *)out[0])->grid[0], 264);
	dump_free(&d);
	reset();

	/* Damaged copies: truncated anywhere, or a wrong magic. */
	f = fopen(path, "rb");
	REQUIRE(f);
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	rewind(f);
	bytes = malloc((size_t)size);
	REQUIRE(bytes && fread(bytes, 1, (size_t)size, f) == (size_t)size);
	fclose(f);
	for (long cut = 0; cut < size; cut += 37) {
		f = fopen(path, "wb");
		fwrite(bytes, 1, (size_t)cut, f);
		fclose(f);
		CHECK(dump_load(path, &d) == -22);
	}
	bytes[0] = 'X';
	f = fopen(path, "wb");
	fwrite(bytes, 1, (size_t)size, f);
	fclose(f);
	CHECK(dump_load(path, &d) == -22);
	free(bytes);
	unlink(path);
	rmdir(dir);
	CHECK(dump_load("/nonexistent/cupti.bin", &d) < 0);
}

int main(void)
{
	build();
	test_parser_steps();
	test_buffer();
	test_offset_and_no_attr();
	test_tail_and_truncation();
	test_long_name();
	test_api_names();
	test_builders();
	test_dump_roundtrip();
	test_memory_pools(); /* rebuilds buf: last */
	return test_result();
}
