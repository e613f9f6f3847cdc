/*
 * layer.h — shared state of libcbottleneck_cuda.so: the agent's entry points
 * (found with dlsym, with harmless fallbacks), the layer's lifecycle state and
 * loss counters, and the functions the three parts (layer.c lifecycle, api.c
 * callback API, activity.c buffers) call in one another.  Internal only.
 */
#ifndef CBN_CUDA_LAYER_H
#define CBN_CUDA_LAYER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <cupti.h>

/* The agent's API (src/agent/agent_api.h), resolved once in InitializeInjection.
 * write is NULL without the agent: the layer then stays off. */
struct layer_agent {
	int (*write)(const void *rec, size_t size);
	int (*backtrace)(uint64_t *pcs, int max, int skip);
	uint64_t (*now)(void);
	void (*enter)(void);
	void (*leave)(void);
	int (*forked_child)(void);
	/* Capture windows (agent_api.h): 1 without the agent or controls. */
	int (*capture_active)(void);
	int (*capture_set)(int on, int cause);
	void (*capture_listen)(void (*fn)(int active));
	int (*capture_api)(void);
};

struct layer_state {
	_Atomic int off;             /* 1: callbacks and completions do nothing */
	_Atomic uint32_t state;      /* enum cbn_cuda_state, 0 before init */
	int quiet;                   /* CBN_QUIET=1 */
	int pid;                     /* process that started CUPTI */
	uint32_t version;            /* cuptiGetVersion */
	uint32_t driver;             /* cuDriverGetVersion, 0 unknown */
	int64_t ts_offset;           /* 0, or REALTIME-MONOTONIC when our clock was refused */
	int (*device_attr)(int *value, int attrib, int device);
	const char *dump_dir;        /* CBN_CUDA_DUMP_DIR: raw buffers saved there */
	_Atomic uint64_t dropped;
	_Atomic uint64_t zero_ts;
	_Atomic uint64_t buffers;
	_Atomic uint64_t records;
	_Atomic uint64_t emit_failed;
};

extern struct layer_agent layer_agent;
extern struct layer_state layer;

/* layer.c */
uint32_t layer_tid(void);
void layer_write(const void *rec, size_t size);
/* FlushAll(0) from a callback (cudaDeviceReset, context destroy). */
void layer_flush_soft(void);
void layer_fatal(const char *why);

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

#endif
