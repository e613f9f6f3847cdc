/*
 * reader.h — the validating reader of session files (<pid>.<seq>.cbp).  It reads a
 * file into memory, checks the header, every chunk header and every record
 * against cbn_format.h, and hands only validated, typed records to a callback.
 * Damage (truncation, garbage, zeroed regions) is counted and described, never
 * fatal: whatever was intact is still delivered.  Launcher side only; not
 * thread-safe per reader_file, reentrant otherwise.
 */
#ifndef CBN_READER_H
#define CBN_READER_H

#include <stddef.h>
#include <stdint.h>

#include "cbn_format.h"

/* What happened while reading one file. */
struct reader_result {
	uint64_t chunks;          /* chunk slots walked */
	uint64_t chunks_damaged;  /* skipped whole: bad chunk header */
	uint64_t chunks_cut;      /* stopped early at an invalid record */
	uint64_t chunks_unused;   /* allocated but never written (all-zero header) */
	uint64_t records;         /* validated records delivered to the callback */
	uint64_t samples;         /* of which SAMPLE records */
	uint64_t unknown;         /* valid-sized records of a type a newer writer knows
				   * (hdr.rec_type_max above CBN_REC_TYPE_MAX), skipped */
	uint64_t corrupt;         /* valid-sized records of a type no writer of this file
				   * knows, skipped: the file is corrupted (damaged) */
	uint64_t file_bytes;      /* actual size of the file */
	int header_ok;            /* header passed validation */
	int truncated;            /* the file is shorter than the header says */
	int damaged;              /* anything above went wrong (header, chunk, record) */
	char reason[224];         /* the first problem, one line, "" when none */
};

/* A file read into memory.  hdr is a copy of the on-disk header with every
 * string forced NUL-terminated and every length clamped to its array. */
struct reader_file {
	unsigned char *data;      /* [0, size): the file up to the last used chunk */
	size_t size;
	int mapped, guard;        /* data is a guarded mapping of the file (reader_open) */
	uint64_t end;             /* chunks are walked in [hdr.data_offset, end) */
	struct cbn_file_header hdr;
};

/* One validated record, as seen by the callback.  Every variable part has been
 * checked to lie inside the record.  str/str2 are NUL-terminated at
 * str[str_len] (thread names, module paths, range names, CUDA names and
 * messages); pcs points at nframes entries (samples, CUDA and allocation
 * stacks, off-CPU stretches). */
struct reader_rec {
	uint16_t type;            /* enum cbn_rec_type */
	uint16_t flags;
	uint32_t size;
	uint16_t chunk_kind;      /* enum cbn_chunk_kind */
	uint32_t chunk_tid;       /* owner thread of a SAMPLES or MEMORY chunk */
	uint32_t chunk_index;     /* 0-based slot of the chunk in the file */
	uint64_t offset;          /* file offset of the record */
	const struct cbn_rec *raw;     /* cast to the struct of `type` */
	const char *str;          /* thread name, module path, range/API/kernel/device name, message */
	uint32_t str_len;
	const char *str2;         /* range domain ("" when none) */
	uint64_t stack_key;       /* CUDA_STACK with CBN_CSTACK_KEYED: its key, else 0 */
	uint32_t str2_len;
	const uint64_t *pcs;      /* SAMPLE, CUDA_STACK, MEM_ALLOC, OFFCPU */
	uint32_t nframes;
	const struct cbn_kstacks *kstacks; /* SAMPLE with CBN_SAMPLE_KSTACKS, else NULL:
	                          * its nstacks stacks have been checked to fit */
	const struct cbn_kplace *kplace; /* with CBN_KSTACKS_PLACED, the first of
	                          * nstacks (checked: inside the record, nuser in
	                          * range, drop <= stack_n), else NULL */
	/* SAMPLE: its whole stack's words (stack_n), which with
	 * CBN_SAMPLE_SHARED are more than its own (pcs, nframes): then share
	 * says how many of its base's (base_pcs: base_n words, base_nn
	 * native) follow them, checked (cbn_share_expand puts them back). */
	uint32_t stack_n;
	const struct cbn_sample_share *share;
	const uint64_t *base_pcs;
	uint16_t base_n, base_nn;
};

/* The kernel stacks of a sample: reader_kstack_first(r->kstacks), then
 * reader_kstack_next(k) nstacks - 1 times. */
static inline const struct cbn_kstack *reader_kstack_first(const struct cbn_kstacks *ks)
{
	return (const struct cbn_kstack *)(ks + 1);
}

static inline const struct cbn_kstack *reader_kstack_next(const struct cbn_kstack *k)
{
	return (const struct cbn_kstack *)(k->pc + k->nframes);
}

static inline const struct cbn_kplace *reader_kplace_next(const struct cbn_kplace *k)
{
	return (const struct cbn_kplace *)(k->pc + k->nuser);
}

/* Return 0 to go on, nonzero to stop the walk (reader_walk returns that value). */
typedef int (*reader_cb)(void *ctx, const struct reader_rec *rec);

/* Read path into f and validate its header.  Returns 0; -1 when the header is
 * unusable (res->reason says why, f holds nothing); or a negative errno when
 * the file cannot be read (res->reason says so too).  res is reset first. */
int reader_open(const char *path, struct reader_file *f, struct reader_result *res);
/* Nonzero if the file mapped by reader_open was cut while being read: pages
 * past the cut read as zeros (see reader.c), so the walk may have lost data. */
int reader_changed(const struct reader_file *f);

/* Same on a copy of an in-memory image (tests, fuzzing). */
int reader_open_mem(const void *data, size_t size, struct reader_file *f,
		    struct reader_result *res);

/* Walk every chunk in order and call cb for each validated record.  Updates
 * res (counters, damage).  Returns 0, or the callback's nonzero value. */
int reader_walk(const struct reader_file *f, reader_cb cb, void *ctx, struct reader_result *res);

void reader_close(struct reader_file *f);

/* The record type's name ("sample", "module_load", ...), "unknown" otherwise. */
const char *reader_type_name(unsigned type);

#endif
