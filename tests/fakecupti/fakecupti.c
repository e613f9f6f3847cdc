/*
 * fakecupti.c — a test-only libcupti.so.13 (same SONAME, same symbol version)
 * implementing exactly the CUPTI entry points libcbottleneck_cuda.so calls:
 * subscription and callback enabling, the activity buffer protocol (requests
 * from the calling threads, completions from a worker thread and on flush),
 * timestamps through the registered callback, dropped counts, and env-scripted
 * failures.  The pure functions (record parser, callback names, result strings)
 * are the REAL ones: the real libcupti is dlopened by absolute path, RTLD_LOCAL,
 * as a separate copy.  fakedrv.c drives this from the simulated CUDA calls.
 *
 * Scripted behaviour (env): FAKECUPTI_FAIL=999|39|35 (subscribe fails with that
 * CUptiResult; 39 names "nsys" as the old subscriber), FAKECUPTI_FLUSH_HANG=1
 * (a FORCED flush never returns), FAKECUPTI_DROP=N (N dropped records reported
 * once), FAKECUPTI_TS_FAIL=1 (timestamp callback refused: records use
 * CLOCK_REALTIME like real CUPTI's default), FAKECUPTI_VERSION=N.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fakeint.h"

struct fk fk = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

static _Thread_local struct fk_thread *fk_self;

/* --- the real library, for the pure functions ------------------------------ */

static void *fk_real(const char *sym)
{
	static void *h;
	void *f;

	if (!h) {
		h = dlopen(FAKECUPTI_REAL_LIB, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			fprintf(stderr, "fakecupti: cannot load the real %s: %s\n",
				FAKECUPTI_REAL_LIB, dlerror());
			abort();
		}
	}
	f = dlsym(h, sym);
	if (!f) {
		fprintf(stderr, "fakecupti: real libcupti lacks %s\n", sym);
		abort();
	}
	return f;
}

CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid,
						CUpti_Activity **record)
{
	static CUptiResult(CUPTIAPI * f)(uint8_t *, size_t, CUpti_Activity **);

	if (!f)
		f = fk_real("cuptiActivityGetNextRecord");
	return f(buffer, valid, record);
}

CUptiResult CUPTIAPI cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid,
					  const char **name)
{
	static CUptiResult(CUPTIAPI * f)(CUpti_CallbackDomain, uint32_t, const char **);

	if (!f)
		f = fk_real("cuptiGetCallbackName");
	return f(domain, cbid, name);
}

CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char **str)
{
	static CUptiResult(CUPTIAPI * f)(CUptiResult, const char **);

	if (!f)
		f = fk_real("cuptiGetResultString");
	return f(result, str);
}

CUptiResult CUPTIAPI cuptiGetErrorMessage(CUptiResult result, const char **str)
{
	static CUptiResult(CUPTIAPI * f)(CUptiResult, const char **);

	if (!f)
		f = fk_real("cuptiGetErrorMessage");
	return f(result, str);
}

/* --- lifecycle -------------------------------------------------------------- */

static long fk_env(const char *name)
{
	const char *s = getenv(name);

	return s && *s ? strtol(s, NULL, 10) : 0;
}

CUptiResult CUPTIAPI cuptiGetVersion(uint32_t *version)
{
	long v = fk_env("FAKECUPTI_VERSION");

	if (!version)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*version = v > 0 ? (uint32_t)v : CUPTI_API_VERSION;
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiSubscribe_v2(CUpti_SubscriberHandle *subscriber,
				       CUpti_CallbackFunc callback, void *userdata,
				       CUpti_SubscriberParams *params)
{
	long fail = fk_env("FAKECUPTI_FAIL");

	if (!subscriber || !callback)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (params && params->structSize < CUpti_SubscriberParams_STRUCT_SIZE)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (fail) {
		*subscriber = NULL;
		if (fail == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED && params &&
		    params->oldSubscriberName && params->oldSubscriberSize)
			snprintf(params->oldSubscriberName, params->oldSubscriberSize, "nsys");
		return (CUptiResult)fail;
	}
	pthread_mutex_lock(&fk.lock);
	if (fk.callback) {
		pthread_mutex_unlock(&fk.lock);
		return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	}
	fk.callback = callback;
	fk.userdata = userdata;
	pthread_mutex_unlock(&fk.lock);
	*subscriber = (CUpti_SubscriberHandle)&fk;
	return CUPTI_SUCCESS;
}

/* The v1 entry point (Kineto's): no name, no parameters. */
CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
				    void *userdata)
{
	return cuptiSubscribe_v2(subscriber, callback, userdata, NULL);
}

/* Detach from the process: every subscription, enabled callback and kind,
 * the buffer callbacks and the timestamp callback are forgotten (buffers
 * still queued are dropped, as CUPTI drops them). */
CUptiResult CUPTIAPI cuptiFinalize(void)
{
	pthread_mutex_lock(&fk.lock);
	fk.callback = NULL;
	memset(fk.enabled, 0, sizeof(fk.enabled));
	memset((void *)fk.act, 0, sizeof(fk.act));
	fk.timestamp = NULL;
	pthread_mutex_unlock(&fk.lock);
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiUnsubscribe(CUpti_SubscriberHandle subscriber)
{
	if (subscriber != (CUpti_SubscriberHandle)&fk || !fk.callback)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&fk.lock);
	fk.callback = NULL;
	memset(fk.enabled, 0, sizeof(fk.enabled));
	pthread_mutex_unlock(&fk.lock);
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
					 CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	if (subscriber != (CUpti_SubscriberHandle)&fk || !fk.callback)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if ((unsigned)domain >= FK_DOMAINS || cbid >= FK_CBIDS)
		return CUPTI_ERROR_INVALID_PARAMETER;
	atomic_store(&fk.enabled[domain][cbid], enable ? 1 : 0);
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiSetThreadIdType(CUpti_ActivityThreadIdType type)
{
	fk.tid_type = type;
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc f)
{
	if (fk_env("FAKECUPTI_TS_FAIL"))
		return CUPTI_ERROR_UNKNOWN;
	/* Real CUPTI: registering twice corrupts timestamps (pytorch#192021); the
	 * fake refuses so a test notices. */
	if (fk.timestamp)
		return CUPTI_ERROR_INVALID_OPERATION;
	for (int k = 0; k < CUPTI_ACTIVITY_KIND_COUNT; k++)
		if (fk.act[k])
			return CUPTI_ERROR_INVALID_OPERATION;  /* must precede enables */
	fk.timestamp = f;
	fk.ts_m0 = fk_now();
	fk.ts_f0 = f();
	return CUPTI_SUCCESS;
}

/* The simulated GPU's clock: CLOCK_MONOTONIC.  The device timeline (when
 * work starts and ends, what synchronizing calls wait for) runs on it. */
uint64_t fk_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A device time as the records give it, like CUPTI's own normalization: on
 * the client's timestamp callback when one is registered (a line through its
 * first reading and one now, so a clock ticking in other units works), else
 * on CLOCK_REALTIME, a fixed offset from CLOCK_MONOTONIC for the whole run. */
uint64_t fk_ts(uint64_t t)
{
	uint64_t m = fk_now(), f;
	double scale = 1.0;

	if (t == 0)
		return 0;
	if (fk.timestamp) {
		f = fk.timestamp();
		if (m > fk.ts_m0 + 1000000u && f > fk.ts_f0)
			scale = (double)(f - fk.ts_f0) / (double)(m - fk.ts_m0);
		return f + (uint64_t)(int64_t)((double)(int64_t)(t - m) * scale);
	}
	if (!fk.rt_offset) {
		struct timespec r;

		clock_gettime(CLOCK_REALTIME, &r);
		fk.rt_offset = (uint64_t)r.tv_sec * 1000000000u + (uint64_t)r.tv_nsec - m;
	}
	return t + fk.rt_offset;
}

/* --- buffers ------------------------------------------------------------------ */

/* Hands completed buffers to the client from a "CUPTI worker" thread. */
static void *fk_worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&fk.lock);
	for (;;) {
		struct fk_buf *b;

		while (!fk.full)
			pthread_cond_wait(&fk.cond, &fk.lock);
		b = fk.full;
		fk.full = b->next;
		fk.inflight++;
		pthread_mutex_unlock(&fk.lock);
		fk.complete(NULL, 0, b->p, b->size, b->used);
		free(b);
		pthread_mutex_lock(&fk.lock);
		fk.inflight--;
		pthread_cond_broadcast(&fk.cond);
	}
	return NULL;
}

CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
						    CUpti_BuffersCallbackCompleteFunc comp)
{
	pthread_t th;

	if (!req || !comp)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&fk.lock);
	fk.request = req;
	fk.complete = comp;
	if (!fk.worker_started && pthread_create(&th, NULL, fk_worker, NULL) == 0) {
		pthread_detach(th);
		fk.worker_started = 1;
	}
	pthread_mutex_unlock(&fk.lock);
	return CUPTI_SUCCESS;
}

static struct fk_thread *fk_thread_self(void)
{
	if (!fk_self) {
		fk_self = calloc(1, sizeof(*fk_self));
		if (!fk_self)
			abort();
		pthread_mutex_lock(&fk.lock);
		fk_self->next = fk.threads;
		fk.threads = fk_self;
		pthread_mutex_unlock(&fk.lock);
	}
	return fk_self;
}

/* Append one activity record (already in its real 13.0 layout) to the calling
 * thread's buffer, asking the client for a new one when it is full: CUDA 13's
 * per-thread buffers, so requests come from application threads. */
/* A copy of rec (in its real layout, device times on fk_now's clock) with its
 * timestamps as the client's clock gives them (fk_ts). */
static const void *fk_restamp(const void *rec, size_t size, uint64_t *buf)
{
	CUpti_Activity *r = (CUpti_Activity *)buf;

	if (size > 1024)
		abort();
	memcpy(buf, rec, size);
	switch (r->kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
		CUpti_ActivityKernel10 *k = (void *)r;

		k->start = fk_ts(k->start);
		k->end = fk_ts(k->end);
		k->completed = fk_ts(k->completed);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY: {
		CUpti_ActivityMemcpy6 *c = (void *)r;

		c->start = fk_ts(c->start);
		c->end = fk_ts(c->end);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMSET: {
		CUpti_ActivityMemset4 *c = (void *)r;

		c->start = fk_ts(c->start);
		c->end = fk_ts(c->end);
		break;
	}
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
		CUpti_ActivitySynchronization2 *c = (void *)r;

		c->start = fk_ts(c->start);
		c->end = fk_ts(c->end);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMORY2: {
		CUpti_ActivityMemory4 *c = (void *)r;

		c->timestamp = fk_ts(c->timestamp);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMORY_POOL: {
		CUpti_ActivityMemoryPool3 *c = (void *)r;

		c->timestamp = fk_ts(c->timestamp);
		break;
	}
	default:
		break;
	}
	return buf;
}

void fk_record(const void *rec, size_t size, uint64_t end)
{
	uint64_t stamped[128];
	struct fk_thread *t;
	struct fk_buf *nb;
	uint8_t *p = NULL;
	size_t sz = 0, maxrec = 0;

	if (!fk.request || !fk.act[((const CUpti_Activity *)rec)->kind])
		return;
	rec = fk_restamp(rec, size, stamped);
	t = fk_thread_self();
	pthread_mutex_lock(&fk.lock);
	if (t->cur && t->cur->used + size <= t->cur->size)
		goto append;
	if (t->cur) {
		t->cur->next = fk.full;
		fk.full = t->cur;
		t->cur = NULL;
		pthread_cond_broadcast(&fk.cond);
	}
	pthread_mutex_unlock(&fk.lock);
	fk.request(&p, &sz, &maxrec);
	nb = calloc(1, sizeof(*nb));
	pthread_mutex_lock(&fk.lock);
	if (!p || sz < size || !nb) {
		fk.dropped++;
		pthread_mutex_unlock(&fk.lock);
		free(nb);
		return;
	}
	nb->p = p;
	nb->size = sz;
	t->cur = nb;
append:
	memcpy(t->cur->p + t->cur->used, rec, size);
	t->cur->used += size;
	if (end > t->cur->max_end)
		t->cur->max_end = end;
	pthread_mutex_unlock(&fk.lock);
}

/* A forced flush hands back unfinished work too; like CUPTI, its records
 * carry no timestamps (start == end == 0). */
static void fk_zero_unfinished(struct fk_buf *b, uint64_t now)
{
	CUpti_Activity *r = NULL;

	while (cuptiActivityGetNextRecord(b->p, b->used, &r) == CUPTI_SUCCESS) {
		uint64_t *se = NULL;

		switch (r->kind) {
		case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
			se = &((CUpti_ActivityKernel10 *)r)->start;
			break;
		case CUPTI_ACTIVITY_KIND_MEMCPY:
			se = &((CUpti_ActivityMemcpy6 *)r)->start;
			break;
		case CUPTI_ACTIVITY_KIND_MEMSET:
			se = &((CUpti_ActivityMemset4 *)r)->start;
			break;
		default:
			break;
		}
		if (se && se[1] > now)
			se[0] = se[1] = 0;
	}
}

CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag)
{
	struct fk_buf *mine = NULL, *keep = NULL, *b, *next;
	struct fk_thread *t;
	uint64_t now = fk_now();      /* device clock: b->max_end */
	uint64_t now_ts = fk_ts(now); /* the records' clock */
	int forced = (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) != 0;

	if (forced && fk_env("FAKECUPTI_FLUSH_HANG"))
		for (;;)
			pause();
	pthread_mutex_lock(&fk.lock);
	for (t = fk.threads; t; t = t->next) {
		if (t->cur) {
			t->cur->next = fk.pending;
			fk.pending = t->cur;
			t->cur = NULL;
		}
	}
	while (fk.full) {
		b = fk.full;
		fk.full = b->next;
		b->next = fk.pending;
		fk.pending = b;
	}
	/* FlushAll(0) returns only buffers whose work is all done. */
	for (b = fk.pending; b; b = next) {
		next = b->next;
		if (forced || b->max_end <= now) {
			b->next = mine;
			mine = b;
		} else {
			b->next = keep;
			keep = b;
		}
	}
	fk.pending = keep;
	/* Wait for completions the worker is running, as CUPTI's flush does. */
	while (fk.inflight)
		pthread_cond_wait(&fk.cond, &fk.lock);
	pthread_mutex_unlock(&fk.lock);
	for (b = mine; b; b = next) {
		next = b->next;
		if (forced)
			fk_zero_unfinished(b, now_ts);
		fk.complete(NULL, 0, b->p, b->size, b->used);
		free(b);
	}
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext ctx, uint32_t stream,
						       size_t *dropped)
{
	static atomic_int scripted;

	(void)ctx;
	(void)stream;
	if (!dropped)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&fk.lock);
	*dropped = fk.dropped;
	fk.dropped = 0;    /* resets on read, like CUPTI */
	pthread_mutex_unlock(&fk.lock);
	if (!atomic_exchange(&scripted, 1))
		*dropped += (size_t)fk_env("FAKECUPTI_DROP");
	return CUPTI_SUCCESS;
}

/* --- activity kinds ------------------------------------------------------------- */

static int fk_kind_supported(CUpti_ActivityKind k)
{
	switch (k) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
	case CUPTI_ACTIVITY_KIND_MEMCPY:
	case CUPTI_ACTIVITY_KIND_MEMCPY2:
	case CUPTI_ACTIVITY_KIND_MEMSET:
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
	case CUPTI_ACTIVITY_KIND_OVERHEAD:
	case CUPTI_ACTIVITY_KIND_MEMORY2:
	case CUPTI_ACTIVITY_KIND_MEMORY_POOL:
	case CUPTI_ACTIVITY_KIND_DEVICE:
	case CUPTI_ACTIVITY_KIND_CONTEXT:
		return 1;
	default:
		return 0;
	}
}

CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind)
{
	if ((unsigned)kind >= CUPTI_ACTIVITY_KIND_COUNT)
		return CUPTI_ERROR_INVALID_KIND;
	if (!fk_kind_supported(kind))
		return CUPTI_ERROR_NOT_COMPATIBLE;
	fk.act[kind] = 1;
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind)
{
	if ((unsigned)kind >= CUPTI_ACTIVITY_KIND_COUNT)
		return CUPTI_ERROR_INVALID_KIND;
	fk.act[kind] = 0;
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnableAndDump(CUpti_ActivityKind kind)
{
	CUptiResult st = cuptiActivityEnable(kind);

	if (st != CUPTI_SUCCESS)
		return st;
	if (kind == CUPTI_ACTIVITY_KIND_DEVICE)
		fk_dump_device();
	else if (kind == CUPTI_ACTIVITY_KIND_CONTEXT)
		fk_dump_context();
	return CUPTI_SUCCESS;
}
