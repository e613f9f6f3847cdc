/*
 * fakeint.h — state shared by the two halves of the simulated CUPTI:
 * fakecupti.c (the CUPTI entry points) and fakedrv.c (the simulated CUDA
 * calls that fire callbacks and produce activity records).  Test-only.
 */
#ifndef CBN_FAKEINT_H
#define CBN_FAKEINT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <cupti.h>

#define FK_DOMAINS 8      /* > CUPTI_CB_DOMAIN_STATE */
#define FK_CBIDS 1024     /* > CUPTI_DRIVER_TRACE_CBID_SIZE */
#define FK_STREAMS 64

struct fk_buf {
	uint8_t *p;
	size_t size;
	size_t used;
	uint64_t max_end;        /* latest end timestamp in the buffer */
	struct fk_buf *next;
};

struct fk_thread {               /* one per thread that produced records */
	struct fk_buf *cur;
	struct fk_thread *next;
};

struct fk {
	pthread_mutex_t lock;    /* buffers, threads, dropped, streams */
	pthread_cond_t cond;
	CUpti_CallbackFunc callback;
	void *userdata;
	_Atomic uint8_t enabled[FK_DOMAINS][FK_CBIDS];
	CUpti_ActivityThreadIdType tid_type;
	CUpti_TimestampCallbackFunc timestamp;
	uint64_t ts_m0, ts_f0;   /* the timestamp callback's first reading, and fk_now's */
	uint64_t rt_offset;      /* CLOCK_REALTIME - fk_now(), fixed at the first record */
	CUpti_BuffersCallbackRequestFunc request;
	CUpti_BuffersCallbackCompleteFunc complete;
	volatile uint8_t act[CUPTI_ACTIVITY_KIND_COUNT];
	int worker_started;
	int inflight;            /* completions running on the worker */
	struct fk_thread *threads;
	struct fk_buf *full;     /* waiting for the worker */
	struct fk_buf *pending;  /* unfinished work, kept by FlushAll(0) */
	size_t dropped;
	_Atomic uint32_t correlation;
	uint64_t stream_ready[FK_STREAMS];   /* simulated GPU timeline */
};

extern struct fk fk;

uint64_t fk_now(void);
uint64_t fk_ts(uint64_t device_ns);
void fk_record(const void *rec, size_t size, uint64_t end);
void fk_dump_device(void);
void fk_dump_context(void);

#endif
