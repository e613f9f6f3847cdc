/*
 * layer.h — shared state of libcbottleneck_cuda.so: the agent's entry points
 * (found with dlsym, with harmless fallbacks), the layer's lifecycle state and
 * loss counters, and the functions the three parts (layer.c lifecycle, api.c
 * callback API, activity.c buffers) call in one another.  Internal only.
 */
#ifndef CBN_CUDA_LAYER_H
#define CBN_CUDA_LAYER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <cupti.h>

#include "../agent_api.h"

/* The agent's API (src/agent/agent_api.h), resolved once in InitializeInjection.
 * write is NULL without the agent: the layer then stays off. */
struct layer_agent {
	int (*write)(const void *rec, size_t size);
	/* the calling thread's own chunk (no lock); write when the agent has none */
	int (*write_own)(const void *rec, size_t size);
	int (*backtrace)(uint64_t *pcs, int max, int skip);
	const uint64_t *(*backtrace_cached)(int *n, uint64_t *key);  /* NULL: none */
	uint64_t (*now)(void);
	void (*enter)(void);
	void (*leave)(void);
	int (*forked_child)(void);
	/* Capture windows (agent_api.h): 1 without the agent or controls. */
	int (*capture_active)(void);
	int (*capture_set)(int on, int cause);
	void (*capture_listen)(void (*fn)(int active));
	/* tell the listener of an edge the launcher made (the flusher polls);
	 * 0 when the run has no capture controls (nothing to poll) */
	int (*capture_poll)(void);
	int (*capture_api)(void);
	/* CUPTI shared with the program (cupti_guard.c); NULL without the agent. */
	int (*cupti_attach)(const struct cbn_cupti_layer *layer, char *holder, size_t len);
};

struct layer_state {
	_Atomic int off;             /* 1: callbacks and completions do nothing */
	_Atomic uint32_t state;      /* enum cbn_cuda_state, 0 before init */
	int pid;                     /* process that started CUPTI */
	uint32_t version;            /* cuptiGetVersion */
	uint32_t driver;             /* cuDriverGetVersion, 0 unknown */
	int64_t ts_offset;           /* unused: share_clock maps CUPTI's clock per buffer */
	int (*device_attr)(int *value, int attrib, int device);
	const char *dump_dir;        /* CBN_CUDA_DUMP_DIR: raw buffers saved there */
	_Atomic uint64_t dropped;
	_Atomic uint64_t zero_ts;
	_Atomic uint64_t buffers;
	_Atomic uint64_t records;
	_Atomic uint64_t emit_failed;

	/* Taking and giving up CUPTI (layer.c does, share.c decides). */
	pthread_mutex_t lock;        /* start, yield, resume, capture changes, exit */
	int act_on;                  /* our buffer callbacks are the registered ones */
	_Atomic int act_mine;        /* completed buffers are ours to convert */
	int kinds_on;                /* our activity kinds are enabled */
	int kinds_known;             /* which kinds CUPTI accepts (layer_enabled) is known */
	int capture_on;              /* the capture window is open (1 without controls) */
	int dumped;                  /* DEVICE and CONTEXT records dumped once */
};

extern struct layer_agent layer_agent;
extern struct layer_state layer;

/* layer.c */
uint32_t layer_tid(void);
void layer_write(const void *rec, size_t size);
/* From an API callback: into the calling thread's own chunk. */
void layer_write_own(const void *rec, size_t size);
/* FlushAll(0) from a callback (cudaDeviceReset, context destroy). */
void layer_flush_soft(void);
void layer_fatal(const char *why);
void layer_status(uint32_t state, int32_t err, uint32_t timed_out, const char *msg);
const char *layer_result_name(CUptiResult st);
const char *layer_todo(CUptiResult st, const char *old);
const char *layer_getenv(const char *name);
long layer_env_ms(const char *name, long dflt);
/* FlushAll(FORCED) under a watchdog; 1 when it did not return in time. */
int layer_flush_forced(long timeout_ms);
void layer_wake_flusher(void);
/* With layer.lock held: our subscription (0 or a CUptiResult, why filled),
 * our buffers and kinds (the same), our kinds on or off, and all activity
 * flushed in and given up. */
extern CUpti_SubscriberHandle layer_sub;
int layer_subscribe(char *why, size_t len);
int layer_activity_take(char *note, size_t nlen, char *why, size_t wlen);
void layer_set_kinds(int on);
void layer_activity_give(void);

/* share.c: CUPTI shared with the program's own client. */
/* At start, before taking layer.lock (the guard's lock comes first): attach
 * to the agent's guard; returns what the program holds already
 * (CBN_CUPTI_*), which the layer leaves alone. */
int share_attach(void);
/* What the program holds now (layer.lock held). */
int share_held(void);
/* After the STARTED status: a YIELDED status for what the program held. */
void share_started(void);
/* From the flusher thread: take the activity buffers back once the program's
 * client has let go of them for a while. */
void share_tick(void);
/* Set c's clock mapping for a buffer completed now: CUPTI's clock (CLOCK_
 * REALTIME by default, or the program's timestamp callback) to ours. */
struct convert_ctx;
void share_clock(struct convert_ctx *c);

/* api.c: classify cbids and enable their callbacks; 0 or the CUptiResult. */
int api_setup(CUpti_SubscriberHandle sub);
void CUPTIAPI api_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
			   const void *data);
/* Module address ranges whose leading frames are cut from launch stacks. */
void api_scan_modules(void);

/* activity.c */
void CUPTIAPI activity_request(uint8_t **buffer, size_t *size, size_t *max_records);
void CUPTIAPI activity_complete(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
				size_t valid);
void activity_count_dropped(void);

/* selftime.c: measuring settings (CBN_CUDA_SELFTIME, CBN_CUDA_SPLIT). */
enum selftime_part {
	ST_CALLBACK, ST_RUNTIME, ST_DRIVER, ST_NESTED, ST_STACK, ST_STACK_WRITE,
	ST_STACK_FULL, ST_API_WRITE, ST_BUFFER, ST_NPARTS
};
enum { SPLIT_NONE, SPLIT_NOCB, SPLIT_EMPTY, SPLIT_NOREC };
extern int selftime_on;      /* CBN_CUDA_SELFTIME names a file */
extern int layer_split;      /* CBN_CUDA_SPLIT */
void selftime_setup(void);
uint64_t selftime_now(void);
void selftime_add(enum selftime_part part, uint64_t ns);
void selftime_dump(void);

#endif
