/*
 * dump.h — raw CUPTI activity buffers saved to disk and loaded back, so records
 * from a real GPU can be replayed through convert.c (and the whole report) on
 * machines without one.  The layer writes a dump per completed buffer when
 * CBN_CUDA_DUMP_DIR names a directory; tests load them with dump_load().
 *
 * File "<dir>/cupti.<pid>.<seq>.bin", host-endian:
 *   struct dump_header
 *   the buffer's valid bytes, padded to 8
 *   nstrings x { struct dump_string, then len bytes + NUL, padded to 8 }
 * The strings are what the records' pointer fields pointed to (kernel names,
 * device names, MEMORY2 name/source): pointers mean nothing in another process,
 * so dump_load() rebuilds them.
 *
 * Not for signal context.  dump_write is thread-safe (one file per call).
 */
#ifndef CBN_CUDA_DUMP_H
#define CBN_CUDA_DUMP_H

#include <stddef.h>
#include <stdint.h>

#define DUMP_MAGIC "CBNCUPTI"
#define DUMP_VERSION 1u
#define DUMP_NULL_STRING 0xffffffffu  /* dump_string.len of a NULL pointer */

struct dump_header {
	char magic[8];
	uint32_t version;
	uint32_t cupti_version;          /* cuptiGetVersion of the recording process */
	uint64_t valid;                  /* bytes of records */
	uint32_t nstrings;
	uint32_t reserved;
};

struct dump_string {
	uint64_t offset;                 /* of the pointer field, from the buffer start */
	uint32_t len;                    /* strlen, or DUMP_NULL_STRING */
	uint32_t reserved;
};

/* Write one buffer to dir/cupti.<pid>.<seq>.bin.  0 or -errno. */
int dump_write(const char *dir, uint32_t cupti_version, uint8_t *buf, size_t valid);

/* A loaded dump: buf is 8-aligned with its pointer fields rebuilt to point
 * into strings owned by the dump.  Release with dump_free. */
struct dump {
	uint8_t *buf;
	size_t valid;
	uint32_t cupti_version;
	char **strings;
	uint32_t nstrings;
};

/* 0, -errno, or -EINVAL for a malformed file (every length is checked). */
int dump_load(const char *path, struct dump *d);
void dump_free(struct dump *d);

#endif
