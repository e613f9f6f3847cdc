/*
 * convert.c — CUPTI 13.0 activity records and callback events → cbn_rec_cuda_*.
 * Reads only fields that exist in the 13.0 structs (Kernel10, Memcpy6,
 * MemcpyPtoP4, Memset4, Synchronization2, Overhead3, Device5, Context3,
 * Memory4, MemoryPool3): newer libcupti.so.13 builds write longer records with the same
 * prefix, which is why buffers are walked with cuptiActivityGetNextRecord and
 * never stepped by sizeof.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "convert.h"

/* The 13.0 layouts this file relies on (cupti.md §1, checked against the real
 * parser in tests/cuda/test_convert.c).  If a toolkit changes them, the build
 * must stop here rather than read garbage. */
_Static_assert(sizeof(CUpti_ActivityKernel10) == 216, "Kernel10 layout");
_Static_assert(offsetof(CUpti_ActivityKernel10, registersPerThread) == 6, "Kernel10.regs");
_Static_assert(offsetof(CUpti_ActivityKernel10, start) == 16, "Kernel10.start");
_Static_assert(offsetof(CUpti_ActivityKernel10, end) == 24, "Kernel10.end");
_Static_assert(offsetof(CUpti_ActivityKernel10, deviceId) == 40, "Kernel10.deviceId");
_Static_assert(offsetof(CUpti_ActivityKernel10, gridX) == 52, "Kernel10.gridX");
_Static_assert(offsetof(CUpti_ActivityKernel10, blockX) == 64, "Kernel10.blockX");
_Static_assert(offsetof(CUpti_ActivityKernel10, staticSharedMemory) == 76, "Kernel10.smem");
_Static_assert(offsetof(CUpti_ActivityKernel10, correlationId) == 92, "Kernel10.corr");
_Static_assert(offsetof(CUpti_ActivityKernel10, name) == 104, "Kernel10.name");
_Static_assert(offsetof(CUpti_ActivityKernel10, graphId) == 156, "Kernel10.graphId");
_Static_assert(sizeof(CUpti_ActivityMemcpy6) == 96, "Memcpy6 layout");
_Static_assert(sizeof(CUpti_ActivityMemcpyPtoP4) == 96, "MemcpyPtoP4 layout");
_Static_assert(sizeof(CUpti_ActivityMemset4) == 88, "Memset4 layout");
_Static_assert(sizeof(CUpti_ActivitySynchronization2) == 56, "Synchronization2 layout");
_Static_assert(sizeof(CUpti_ActivityOverhead3) == 56, "Overhead3 layout");
_Static_assert(sizeof(CUpti_ActivityDevice5) == 184, "Device5 layout");
_Static_assert(sizeof(CUpti_ActivityContext3) == 32, "Context3 layout");
_Static_assert(sizeof(CUpti_ActivityMemory4) == 128, "Memory4 layout");
_Static_assert(offsetof(CUpti_ActivityMemory4, PC) == 40, "Memory4.PC");
_Static_assert(offsetof(CUpti_ActivityMemory4, isAsync) == 72, "Memory4.isAsync");
_Static_assert(offsetof(CUpti_ActivityMemory4, memoryPoolConfig) == 80, "Memory4.memoryPoolConfig");
_Static_assert(sizeof(CUpti_ActivityMemoryPool3) == 80, "MemoryPool3 layout");
_Static_assert(offsetof(CUpti_ActivityMemoryPool3, minBytesToKeep) == 24, "MemoryPool3.minBytes");
_Static_assert(offsetof(CUpti_ActivityMemoryPool3, address) == 32, "MemoryPool3.address");
_Static_assert(offsetof(CUpti_ActivityMemoryPool3, timestamp) == 56, "MemoryPool3.timestamp");
_Static_assert(offsetof(CUpti_ActivityMemoryPool3, isManagedPool) == 72, "MemoryPool3.managed");
_Static_assert((int)CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED == CBN_MEMPOOL_CREATED &&
		       (int)CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED ==
			       CBN_MEMPOOL_DESTROYED &&
		       (int)CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED == CBN_MEMPOOL_TRIMMED,
	       "pool operation values");
_Static_assert((int)CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION == 1, "alloc flag value");
_Static_assert((int)CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE == 2, "release flag value");

/* cuDeviceGetAttribute ids (cuda.h) for what Device5 lacks. */
#define ATTR_SMEM_PER_BLOCK_OPTIN 97
#define ATTR_RESERVED_SMEM_PER_BLOCK 111

static uint64_t conv_ts(const struct convert_ctx *c, uint64_t ts)
{
	if (ts == 0)
		return 0;
	if (c->ts_scale != 0)
		return (uint64_t)((int64_t)c->ts_dst +
				  (int64_t)((double)(int64_t)(ts - c->ts_src) * c->ts_scale));
	return (uint64_t)((int64_t)ts - c->ts_offset);
}

/* Interval records with both timestamps 0 were never timed (device buffer
 * overflow, forced flush of unfinished work: kineto#109); end < start is just
 * as unusable.  Counted and excluded so they cannot distort the metrics. */
static int conv_bad_interval(struct convert_ctx *c, uint64_t start, uint64_t end)
{
	if ((start == 0 && end == 0) || end < start) {
		c->stats.zero_ts++;
		return 1;
	}
	return 0;
}

static void conv_header(void *buf, uint16_t type, uint16_t flags, size_t size)
{
	struct cbn_rec *h = buf;

	h->type = type;
	h->flags = flags;
	h->size = (uint32_t)size;
}

static int conv_emit(struct convert_ctx *c, const void *rec, size_t size)
{
	if (c->emit(c->arg, rec, size) != 0) {
		c->stats.emit_failed++;
		return 0;
	}
	c->stats.records++;
	return 1;
}

/* Append name after a fixed part of `fixed` bytes; returns the padded size.
 * The tail is zeroed so records are deterministic byte for byte. */
static size_t conv_name(void *buf, size_t fixed, const char *name, size_t *len)
{
	size_t n = name ? strnlen(name, CONVERT_NAME_MAX) : 0;
	size_t size = CBN_REC_ALIGN(fixed + n + 1);

	memset((char *)buf + fixed, 0, size - fixed);
	if (n)
		memcpy((char *)buf + fixed, name, n);
	*len = n;
	return size;
}

static int conv_kernel(struct convert_ctx *c, const CUpti_ActivityKernel10 *k)
{
	_Alignas(8) unsigned char buf[CONVERT_REC_MAX];
	struct cbn_rec_cuda_kernel *o = (void *)buf;
	size_t len, size;

	if (conv_bad_interval(c, k->start, k->end))
		return 0;
	memset(o, 0, sizeof(*o));
	o->start = conv_ts(c, k->start);
	o->end = conv_ts(c, k->end);
	o->device = k->deviceId;
	o->context = k->contextId;
	o->stream = k->streamId;
	o->correlation = k->correlationId;
	o->grid[0] = k->gridX;
	o->grid[1] = k->gridY;
	o->grid[2] = k->gridZ;
	o->block[0] = k->blockX;
	o->block[1] = k->blockY;
	o->block[2] = k->blockZ;
	o->registers = k->registersPerThread;
	o->static_smem = k->staticSharedMemory;
	o->dynamic_smem = k->dynamicSharedMemory;
	o->shmem_limit_optin = k->shmemLimitConfig == CUPTI_FUNC_SHMEM_LIMIT_OPTIN;
	o->graph_id = k->graphId;
	o->graph_node_id = k->graphNodeId;
	size = conv_name(buf, sizeof(*o), k->name, &len);
	o->name_len = (uint32_t)len;
	conv_header(o, CBN_REC_CUDA_KERNEL, 0, size);
	return conv_emit(c, o, size);
}

static int conv_memcpy(struct convert_ctx *c, const CUpti_ActivityMemcpy6 *m)
{
	struct cbn_rec_cuda_memcpy o;

	if (conv_bad_interval(c, m->start, m->end))
		return 0;
	memset(&o, 0, sizeof(o));
	o.start = conv_ts(c, m->start);
	o.end = conv_ts(c, m->end);
	o.bytes = m->bytes;
	o.device = m->deviceId;
	o.context = m->contextId;
	o.stream = m->streamId;
	o.correlation = m->correlationId;
	o.copy_kind = m->copyKind;
	o.src_kind = m->srcKind;
	o.dst_kind = m->dstKind;
	/* Not a peer copy: both ends are on the record's device. */
	o.src_device = m->deviceId;
	o.dst_device = m->deviceId;
	o.graph_id = m->graphId;
	conv_header(&o, CBN_REC_CUDA_MEMCPY,
		    (m->flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) ? CBN_GPU_ASYNC : 0, sizeof(o));
	return conv_emit(c, &o, sizeof(o));
}

static int conv_peer(struct convert_ctx *c, const CUpti_ActivityMemcpyPtoP4 *m)
{
	struct cbn_rec_cuda_memcpy o;
	uint16_t flags = CBN_GPU_PEER;

	if (conv_bad_interval(c, m->start, m->end))
		return 0;
	memset(&o, 0, sizeof(o));
	o.start = conv_ts(c, m->start);
	o.end = conv_ts(c, m->end);
	o.bytes = m->bytes;
	o.device = m->deviceId;
	o.context = m->contextId;
	o.stream = m->streamId;
	o.correlation = m->correlationId;
	o.copy_kind = m->copyKind;
	o.src_kind = m->srcKind;
	o.dst_kind = m->dstKind;
	o.src_device = m->srcDeviceId;
	o.dst_device = m->dstDeviceId;
	o.graph_id = m->graphId;
	if (m->flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC)
		flags |= CBN_GPU_ASYNC;
	conv_header(&o, CBN_REC_CUDA_MEMCPY, flags, sizeof(o));
	return conv_emit(c, &o, sizeof(o));
}

static int conv_memset(struct convert_ctx *c, const CUpti_ActivityMemset4 *m)
{
	struct cbn_rec_cuda_memset o;

	if (conv_bad_interval(c, m->start, m->end))
		return 0;
	memset(&o, 0, sizeof(o));
	o.start = conv_ts(c, m->start);
	o.end = conv_ts(c, m->end);
	o.bytes = m->bytes;
	o.device = m->deviceId;
	o.context = m->contextId;
	o.stream = m->streamId;
	o.correlation = m->correlationId;
	o.value = m->value;
	o.mem_kind = m->memoryKind;
	conv_header(&o, CBN_REC_CUDA_MEMSET,
		    (m->flags & CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC) ? CBN_GPU_ASYNC : 0, sizeof(o));
	return conv_emit(c, &o, sizeof(o));
}

static int conv_sync(struct convert_ctx *c, const CUpti_ActivitySynchronization2 *s)
{
	struct cbn_rec_cuda_sync o;

	if (conv_bad_interval(c, s->start, s->end))
		return 0;
	memset(&o, 0, sizeof(o));
	o.start = conv_ts(c, s->start);
	o.end = conv_ts(c, s->end);
	o.type = s->type;
	o.correlation = s->correlationId;
	o.context = s->contextId;
	o.stream = s->streamId;
	conv_header(&o, CBN_REC_CUDA_SYNC, 0, sizeof(o));
	return conv_emit(c, &o, sizeof(o));
}

static int conv_overhead(struct convert_ctx *c, const CUpti_ActivityOverhead3 *v)
{
	struct cbn_rec_cuda_overhead o;

	if (conv_bad_interval(c, v->start, v->end))
		return 0;
	memset(&o, 0, sizeof(o));
	o.start = conv_ts(c, v->start);
	o.end = conv_ts(c, v->end);
	o.kind = v->overheadKind;
	o.correlation = v->correlationId;
	conv_header(&o, CBN_REC_CUDA_OVERHEAD, 0, sizeof(o));
	return conv_emit(c, &o, sizeof(o));
}

static uint32_t conv_attr(const struct convert_ctx *c, int attrib, int device)
{
	int v = 0;

	if (!c->device_attr || c->device_attr(&v, attrib, device) != 0 || v < 0)
		return 0;
	return (uint32_t)v;
}

static int conv_device(struct convert_ctx *c, const CUpti_ActivityDevice5 *d)
{
	_Alignas(8) unsigned char buf[CONVERT_REC_MAX];
	struct cbn_rec_cuda_device *o = (void *)buf;
	size_t len, size;

	memset(o, 0, sizeof(*o));
	o->global_mem = d->globalMemorySize;
	o->id = d->id;
	o->sm_count = d->numMultiprocessors;
	o->cc_major = d->computeCapabilityMajor;
	o->cc_minor = d->computeCapabilityMinor;
	o->max_threads_per_block = d->maxThreadsPerBlock;
	o->max_warps_per_sm = d->maxWarpsPerMultiprocessor;
	o->threads_per_warp = d->numThreadsPerWarp;
	o->max_blocks_per_sm = d->maxBlocksPerMultiprocessor;
	o->regs_per_sm = d->maxRegistersPerMultiprocessor;
	o->regs_per_block = d->maxRegistersPerBlock;
	o->smem_per_sm = d->maxSharedMemoryPerMultiprocessor;
	o->smem_per_block = d->maxSharedMemoryPerBlock;
	o->smem_per_block_optin = conv_attr(c, ATTR_SMEM_PER_BLOCK_OPTIN, (int)d->id);
	o->reserved_smem_per_block = conv_attr(c, ATTR_RESERVED_SMEM_PER_BLOCK, (int)d->id);
	size = conv_name(buf, sizeof(*o), d->name, &len);
	o->name_len = (uint32_t)len;
	/* The UUID after the name: what tells one GPU seen by two processes. */
	if (size == CBN_DEVICE_UUID_OFF(len) && size + sizeof(d->uuid) <= sizeof(buf)) {
		memcpy(buf + size, &d->uuid, sizeof(d->uuid));
		size = CBN_REC_ALIGN(size + sizeof(d->uuid));
		o->flags |= CBN_DEVICE_UUID;
	}
	conv_header(o, CBN_REC_CUDA_DEVICE, 0, size);
	return conv_emit(c, o, size);
}

static int conv_context(struct convert_ctx *c, const CUpti_ActivityContext3 *x)
{
	struct cbn_rec_cuda_context o;

	memset(&o, 0, sizeof(o));
	o.context = x->contextId;
	o.device = x->deviceId;
	o.null_stream = x->nullStreamId;
	o.sm_count = x->numMultiprocessors;
	conv_header(&o, CBN_REC_CUDA_CONTEXT, 0, sizeof(o));
	return conv_emit(c, &o, sizeof(o));
}

static int conv_memory(struct convert_ctx *c, const CUpti_ActivityMemory4 *m)
{
	_Alignas(8) unsigned char buf[sizeof(struct cbn_rec_cuda_memory) +
				     sizeof(struct cbn_rec_cuda_memory_ext)];
	struct cbn_rec_cuda_memory o;
	struct cbn_rec_cuda_memory_ext *x;
	uint16_t op = (uint16_t)m->memoryOperationType;

	if (op != CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION &&
	    op != CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE) {
		c->stats.skipped++;
		return 0;
	}
	if (m->timestamp == 0) {
		c->stats.zero_ts++;
		return 0;
	}
	memset(&o, 0, sizeof(o));
	o.ts = conv_ts(c, m->timestamp);
	o.address = m->address;
	o.bytes = m->bytes;
	o.device = m->deviceId;
	o.context = m->contextId;
	o.stream = m->streamId;
	o.correlation = m->correlationId;
	o.mem_kind = (uint16_t)m->memoryKind;
	/* Memory4 fields the base record lacks: the pool (cudaMallocAsync,
	 * cudaMallocFromPoolAsync), async, and CUPTI's PC. */
	x = (struct cbn_rec_cuda_memory_ext *)(buf + sizeof(o));
	memset(x, 0, sizeof(*x));
	x->pc = m->PC;
	x->is_async = m->isAsync != 0;
	x->pool_type = (uint8_t)m->memoryPoolConfig.memoryPoolType;
	if (m->memoryPoolConfig.memoryPoolType != CUPTI_ACTIVITY_MEMORY_POOL_TYPE_INVALID) {
		x->pool_address = m->memoryPoolConfig.address;
		/* Threshold, size and utilized are valid for LOCAL pools only; an
		 * IMPORTED pool's union holds the exporting process id. */
		if (m->memoryPoolConfig.memoryPoolType == CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL) {
			x->pool_release_threshold = m->memoryPoolConfig.releaseThreshold;
			x->pool_size = m->memoryPoolConfig.pool.size;
			x->pool_utilized = m->memoryPoolConfig.utilizedSize;
		}
	}
	conv_header(&o, CBN_REC_CUDA_MEMORY, op, sizeof(o) + sizeof(*x));
	memcpy(buf, &o, sizeof(o));
	return conv_emit(c, buf, sizeof(o) + sizeof(*x));
}

static int conv_mempool(struct convert_ctx *c, const CUpti_ActivityMemoryPool3 *m)
{
	struct cbn_rec_cuda_mempool o;
	uint16_t op = (uint16_t)m->memoryPoolOperationType;

	if (op < CBN_MEMPOOL_CREATED || op > CBN_MEMPOOL_TRIMMED) {
		c->stats.skipped++;
		return 0;
	}
	if (m->timestamp == 0) {
		c->stats.zero_ts++;
		return 0;
	}
	memset(&o, 0, sizeof(o));
	o.ts = conv_ts(c, m->timestamp);
	o.address = m->address;
	o.device = m->deviceId;
	o.correlation = m->correlationId;
	o.pool_type = (uint16_t)m->memoryPoolType;
	o.managed = m->isManagedPool != 0;
	/* As for Memory4: the sizes are valid for LOCAL pools only. */
	if (m->memoryPoolType == CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL) {
		o.size = m->size;
		o.utilized = m->utilizedSize;
		o.release_threshold = m->releaseThreshold;
	}
	if (op == CBN_MEMPOOL_TRIMMED)
		o.min_bytes_to_keep = m->minBytesToKeep;
	conv_header(&o, CBN_REC_CUDA_MEMPOOL, op, sizeof(o));
	return conv_emit(c, &o, sizeof(o));
}

int convert_record(struct convert_ctx *c, const CUpti_Activity *r)
{
	switch (r->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		return conv_kernel(c, (const CUpti_ActivityKernel10 *)r);
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		return conv_memcpy(c, (const CUpti_ActivityMemcpy6 *)r);
	case CUPTI_ACTIVITY_KIND_MEMCPY2:
		return conv_peer(c, (const CUpti_ActivityMemcpyPtoP4 *)r);
	case CUPTI_ACTIVITY_KIND_MEMSET:
		return conv_memset(c, (const CUpti_ActivityMemset4 *)r);
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		return conv_sync(c, (const CUpti_ActivitySynchronization2 *)r);
	case CUPTI_ACTIVITY_KIND_OVERHEAD:
		return conv_overhead(c, (const CUpti_ActivityOverhead3 *)r);
	case CUPTI_ACTIVITY_KIND_DEVICE:
		return conv_device(c, (const CUpti_ActivityDevice5 *)r);
	case CUPTI_ACTIVITY_KIND_CONTEXT:
		return conv_context(c, (const CUpti_ActivityContext3 *)r);
	case CUPTI_ACTIVITY_KIND_MEMORY2:
		return conv_memory(c, (const CUpti_ActivityMemory4 *)r);
	case CUPTI_ACTIVITY_KIND_MEMORY_POOL:
		return conv_mempool(c, (const CUpti_ActivityMemoryPool3 *)r);
	default:
		c->stats.skipped++;
		return 0;
	}
}

int convert_buffer(struct convert_ctx *c, uint8_t *buf, size_t valid)
{
	CUpti_Activity *r = NULL;
	int n = 0;

	if (!buf)
		return -EINVAL;
	if (valid == 0)
		return 0;
	for (;;) {
		CUptiResult st = cuptiActivityGetNextRecord(buf, valid, &r);

		/* MAX_LIMIT_REACHED: end of the valid bytes.  INVALID_KIND: a
		 * zero-filled tail or a kind this parser does not know; the walk
		 * cannot step over a record of unknown size, so it ends too. */
		if (st == CUPTI_ERROR_MAX_LIMIT_REACHED || st == CUPTI_ERROR_INVALID_KIND)
			break;
		if (st != CUPTI_SUCCESS)
			return n ? n : -EINVAL;
		n++;
		c->stats.walked++;
		convert_record(c, r);
	}
	return n;
}

size_t convert_api_name(char *out, size_t outsz, const char *name)
{
	size_t n, i;

	if (!outsz)
		return 0;
	if (!name)
		name = "";
	/* nvcc 13 launches through __cudaLaunchKernel (cbid 505/506): shown as
	 * cudaLaunchKernel, which is what users and the PyTorch tables know. */
	if (strncmp(name, "__cuda", 6) == 0)
		name += 2;
	n = strnlen(name, outsz - 1);
	/* Drop a trailing "_v" followed only by digits: "cudaMemcpy_v3020". */
	for (i = n; i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9'; i--)
		;
	if (i < n && i >= 2 && name[i - 1] == 'v' && name[i - 2] == '_')
		n = i - 2;
	memcpy(out, name, n);
	out[n] = '\0';
	return n;
}

size_t convert_api(void *buf, uint64_t start, uint64_t end, uint32_t tid, uint32_t correlation,
		   uint32_t cbid, uint16_t domain, int32_t ret, const char *name)
{
	struct cbn_rec_cuda_api *o = buf;
	size_t len, size;

	memset(o, 0, sizeof(*o));
	o->start = start;
	o->end = end;
	o->tid = tid;
	o->correlation = correlation;
	o->cbid = cbid;
	o->domain = domain;
	o->ret = ret;
	size = conv_name(buf, sizeof(*o), name, &len);
	o->name_len = (uint16_t)len;
	conv_header(o, CBN_REC_CUDA_API, 0, size);
	return size;
}

size_t convert_stack(void *buf, uint32_t correlation, uint32_t tid, const uint64_t *pcs, int npcs,
		     uint64_t key)
{
	struct cbn_rec_cuda_stack *o = buf;
	size_t size;

	if (npcs < 0)
		npcs = 0;
	if (npcs > CONVERT_STACK_MAX - 1)
		npcs = CONVERT_STACK_MAX - 1; /* room for the key */
	if (npcs > CBN_MAX_FRAMES)
		npcs = CBN_MAX_FRAMES;
	memset(o, 0, sizeof(*o));
	o->correlation = correlation;
	o->tid = tid;
	o->nframes = (uint16_t)npcs;
	if (npcs)
		memcpy(o->pc, pcs, (size_t)npcs * sizeof(uint64_t));
	size = sizeof(*o) + (size_t)npcs * sizeof(uint64_t);
	if (key) {
		memcpy((char *)buf + size, &key, sizeof(key));
		size += sizeof(key);
	}
	conv_header(o, CBN_REC_CUDA_STACK, key ? CBN_CSTACK_KEYED : 0, size);
	return size;
}

size_t convert_status(void *buf, uint64_t ts, uint32_t state, int32_t cupti_error,
		      uint32_t cupti_version, uint32_t flush_timed_out, uint64_t dropped,
		      uint64_t zero_ts, uint64_t buffers, uint64_t records, const char *message)
{
	struct cbn_rec_cuda_status *o = buf;
	size_t len, size;

	memset(o, 0, sizeof(*o));
	o->ts = ts;
	o->state = state;
	o->cupti_error = cupti_error;
	o->cupti_version = cupti_version;
	o->flush_timed_out = flush_timed_out;
	o->dropped = dropped;
	o->zero_ts = zero_ts;
	o->buffers = buffers;
	o->records = records;
	size = conv_name(buf, sizeof(*o), message, &len);
	o->message_len = (uint32_t)len;
	conv_header(o, CBN_REC_CUDA_STATUS, 0, size);
	return size;
}
