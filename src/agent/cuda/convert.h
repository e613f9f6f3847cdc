/*
 * convert.h — turning CUPTI 13.0 activity records and callback-API events into
 * the cbn_rec_cuda_* records of src/format/cbn_format.h.  Pure functions with no
 * global state, so unit tests drive them with hand-built records; the only CUPTI
 * call is cuptiActivityGetNextRecord (which works without a driver).
 *
 * Thread safety: a struct convert_ctx belongs to one caller at a time (the layer
 * builds one per completed buffer); the functions themselves are reentrant.
 * Never call any of this from a signal handler.
 */
#ifndef CBN_CUDA_CONVERT_H
#define CBN_CUDA_CONVERT_H

#include <stddef.h>
#include <stdint.h>

#include <cupti.h>

#include "format/cbn_format.h"

/* Longest kernel/API/status name we copy; longer names are cut (mangled C++
 * template names can be very long, the record must stay well under 60 KiB). */
#define CONVERT_NAME_MAX 4000
/* Large enough for any record convert builds, name included. */
#define CONVERT_REC_MAX 8192

struct convert_stats {
	uint64_t records;   /* cbn records emitted */
	uint64_t walked;    /* CUPTI records seen in buffers */
	uint64_t zero_ts;   /* records with start == end == 0 (or end < start): excluded */
	uint64_t skipped;   /* kinds we do not convert */
	uint64_t emit_failed;
};

struct convert_ctx {
	/* Where records go: the layer passes cbn_agent_write, tests a collector.
	 * A nonzero return is counted in stats.emit_failed, nothing else. */
	int (*emit)(void *arg, const void *rec, size_t size);
	void *arg;
	/* CUPTI's clock to ours (CLOCK_MONOTONIC), for every nonzero timestamp:
	 * with ts_scale 0, ts - ts_offset (CUPTI's default CLOCK_REALTIME:
	 * REALTIME - MONOTONIC); else ts_dst + (ts - ts_src) * ts_scale (a
	 * program's own timestamp callback, in whatever units it ticks). */
	int64_t ts_offset;
	double ts_scale;
	uint64_t ts_src, ts_dst;
	/* Optional cuDeviceGetAttribute(value, attrib, device) for what Device5
	 * lacks (opt-in and reserved shared memory per block); NULL: report 0. */
	int (*device_attr)(int *value, int attrib, int device);
	struct convert_stats stats;
};

/* Convert one activity record (any kind).  Returns 1 when a cbn record was
 * emitted, 0 when the record was skipped (unknown kind, zero timestamps). */
int convert_record(struct convert_ctx *c, const CUpti_Activity *r);

/* Walk a completed buffer with the real cuptiActivityGetNextRecord and convert
 * each record; stops at MAX_LIMIT_REACHED or INVALID_KIND (zero tail).  Returns
 * the number of records walked, or -EINVAL on a bad buffer. */
int convert_buffer(struct convert_ctx *c, uint8_t *buf, size_t valid);

/* Strip CUPTI's "_vNNNNN" version suffix, and the leading "__" of nvcc 13's
 * __cudaLaunchKernel entry points, into out (size outsz).  Returns strlen(out). */
size_t convert_api_name(char *out, size_t outsz, const char *cupti_name);

/* Build records of the callback side into buf (CONVERT_REC_MAX bytes).  Each
 * returns the record size (multiple of 8). */
size_t convert_api(void *buf, uint64_t start, uint64_t end, uint32_t tid, uint32_t correlation,
		   uint32_t cbid, uint16_t domain, int32_t ret, const char *name);
/* key != 0: a keyed stack (CBN_CSTACK_KEYED): with pcs it defines key, with
 * npcs 0 it stands for the stack defined earlier with key. */
size_t convert_stack(void *buf, uint32_t correlation, uint32_t tid, const uint64_t *pcs,
		     int npcs, uint64_t key);
/* The message is cut to fit. */
size_t convert_status(void *buf, uint64_t ts, uint32_t state, int32_t cupti_error,
		      uint32_t cupti_version, uint32_t flush_timed_out, uint64_t dropped,
		      uint64_t zero_ts, uint64_t buffers, uint64_t records, const char *message);

/* Frames a stack record may hold in CONVERT_REC_MAX. */
#define CONVERT_STACK_MAX                                                                          \
	((int)((CONVERT_REC_MAX - sizeof(struct cbn_rec_cuda_stack)) / sizeof(uint64_t)))

#endif
