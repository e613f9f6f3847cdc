/*
 * activity.c — CUPTI activity buffers: a small pool of 8-byte aligned 4 MiB
 * buffers handed to CUPTI on request, and the completion handler that converts
 * each completed buffer into cbn records and gives the buffer back to the pool.
 *
 * Threading: CUDA 13 defaults to per-thread activity buffers, so requests come
 * from any application thread and completions from CUPTI's worker thread or the
 * flushing thread, concurrently (NVIDIA/Fuser#5402).  The pool has its own
 * mutex, never held across a CUPTI call (kineto's ABBA deadlock in
 * CuptiActivityApi::bufferCompleted).  A buffer is only freed once CUPTI has
 * handed it back (pytorch#195207).
 */
#include <pthread.h>
#include <stdlib.h>

#include "convert.h"
#include "dump.h"
#include "layer.h"

#define ACT_BUF_SIZE (4u << 20)
#define ACT_POOL_KEEP 8   /* idle buffers kept for reuse; more are freed */

static pthread_mutex_t act_lock = PTHREAD_MUTEX_INITIALIZER;
static void *act_pool[ACT_POOL_KEEP];
static int act_npool;

void CUPTIAPI activity_request(uint8_t **buffer, size_t *size, size_t *max_records)
{
	void *b = NULL;

	pthread_mutex_lock(&act_lock);
	if (act_npool)
		b = act_pool[--act_npool];
	pthread_mutex_unlock(&act_lock);
	/* Out of memory: an empty answer makes CUPTI drop records (counted as
	 * dropped), which 13.0 allows; rejecting crashed CUPTI before v27. */
	if (!b && posix_memalign(&b, 8, ACT_BUF_SIZE) != 0)
		b = NULL;
	*buffer = b;
	*size = b ? ACT_BUF_SIZE : 0;
	*max_records = 0;
}

static void act_release(void *b)
{
	pthread_mutex_lock(&act_lock);
	if (act_npool < ACT_POOL_KEEP) {
		act_pool[act_npool++] = b;
		b = NULL;
	}
	pthread_mutex_unlock(&act_lock);
	free(b);
}

static int act_emit(void *arg, const void *rec, size_t size)
{
	(void)arg;
	return layer_agent.write ? layer_agent.write(rec, size) : -1;
}

void activity_count_dropped(void)
{
	size_t dropped = 0;

	if (cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped) == CUPTI_SUCCESS && dropped)
		atomic_fetch_add(&layer.dropped, dropped);
}

void CUPTIAPI activity_complete(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
				size_t valid)
{
	struct convert_ctx c = { 0 };

	(void)ctx;
	(void)stream;
	(void)size;
	if (!buffer)
		return;

	/* A forked child inherits no CUPTI threads, but a flush racing the fork
	 * could still land here in the parent only; the child never converts. */
	/* Not ours: buffers CUPTI hands us while the program's client holds the
	 * activity API (it enabled kinds before registering its callbacks). */
	if (!atomic_load_explicit(&layer.off, memory_order_relaxed) && valid &&
	    atomic_load(&layer.act_mine)) {
		uint64_t t0 = selftime_on ? selftime_now() : 0;

		layer_agent.enter();
		/* Raw buffers for replay on machines without a GPU (dump.h). */
		if (layer.dump_dir)
			dump_write(layer.dump_dir, layer.version, buffer, valid);
		c.emit = act_emit;
		share_clock(&c);
		c.device_attr = layer.device_attr;
		convert_buffer(&c, buffer, valid);
		atomic_fetch_add(&layer.buffers, 1);
		atomic_fetch_add(&layer.records, c.stats.records);
		atomic_fetch_add(&layer.zero_ts, c.stats.zero_ts);
		atomic_fetch_add(&layer.emit_failed, c.stats.emit_failed);
		layer_agent.leave();
		if (selftime_on)
			selftime_add(ST_BUFFER, selftime_now() - t0);
	}
	act_release(buffer);
	activity_count_dropped();
}
