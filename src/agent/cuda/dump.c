/*
 * dump.c — saving raw CUPTI activity buffers with their strings, and loading
 * them back with the pointer fields rebuilt (format in dump.h).  Which fields
 * are pointers comes from the CUDA 13.0 layouts convert.c also pins.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cupti.h>

#include "dump.h"

#define DUMP_MAX_VALID (256u << 20)
#define DUMP_MAX_STRINGS (1u << 24)
#define DUMP_MAX_STRING (1u << 20)

/* Offsets of the pointer-to-string fields of a record, from its start. */
static int dump_fields(const CUpti_Activity *r, size_t off[2])
{
	switch (r->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		off[0] = offsetof(CUpti_ActivityKernel10, name);
		return 1;
	case CUPTI_ACTIVITY_KIND_DEVICE:
		off[0] = offsetof(CUpti_ActivityDevice5, name);
		return 1;
	case CUPTI_ACTIVITY_KIND_MEMORY2:
		off[0] = offsetof(CUpti_ActivityMemory4, name);
		off[1] = offsetof(CUpti_ActivityMemory4, source);
		return 2;
	default:
		return 0;
	}
}

static int dump_put(int fd, const void *p, size_t n)
{
	static const char zero[8];
	size_t pad = (8 - n % 8) % 8;

	if (write(fd, p, n) != (ssize_t)n)
		return -EIO;
	if (pad && write(fd, zero, pad) != (ssize_t)pad)
		return -EIO;
	return 0;
}

int dump_write(const char *dir, uint32_t cupti_version, uint8_t *buf, size_t valid)
{
	static atomic_uint seq;
	struct dump_header h;
	CUpti_Activity *r = NULL;
	char path[4096];
	int fd, rc = 0, i, n;
	size_t off[2];

	if (!dir || !buf)
		return -EINVAL;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, DUMP_MAGIC, 8);
	h.version = DUMP_VERSION;
	h.cupti_version = cupti_version;
	h.valid = valid;
	while (cuptiActivityGetNextRecord(buf, valid, &r) == CUPTI_SUCCESS)
		h.nstrings += (uint32_t)dump_fields(r, off);
	snprintf(path, sizeof(path), "%s/cupti.%d.%u.bin", dir, (int)getpid(),
		 atomic_fetch_add(&seq, 1));
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	rc = dump_put(fd, &h, sizeof(h));
	if (!rc)
		rc = dump_put(fd, buf, valid);
	r = NULL;
	while (!rc && cuptiActivityGetNextRecord(buf, valid, &r) == CUPTI_SUCCESS) {
		n = dump_fields(r, off);
		for (i = 0; i < n && !rc; i++) {
			const char *s;
			struct dump_string ds;

			memcpy(&s, (const uint8_t *)r + off[i], sizeof(s));
			memset(&ds, 0, sizeof(ds));
			ds.offset = (uint64_t)((const uint8_t *)r - buf) + off[i];
			ds.len = s ? (uint32_t)strnlen(s, DUMP_MAX_STRING - 1) : DUMP_NULL_STRING;
			rc = dump_put(fd, &ds, sizeof(ds));
			if (!rc && s)
				rc = dump_put(fd, s, ds.len + 1);
			else if (!rc)
				rc = dump_put(fd, "", 0);
		}
	}
	if (close(fd) != 0 && !rc)
		rc = -errno;
	return rc;
}

void dump_free(struct dump *d)
{
	uint32_t i;

	for (i = 0; i < d->nstrings; i++)
		free(d->strings[i]);
	free(d->strings);
	free(d->buf);
	memset(d, 0, sizeof(*d));
}

static int dump_read(FILE *f, void *p, size_t n)
{
	char pad[8];
	size_t k = (8 - n % 8) % 8;

	if (n && fread(p, 1, n, f) != n)
		return -EINVAL;
	if (k && fread(pad, 1, k, f) != k)
		return -EINVAL;
	return 0;
}

int dump_load(const char *path, struct dump *d)
{
	struct dump_header h;
	FILE *f;
	uint32_t i;
	int rc = 0;

	memset(d, 0, sizeof(*d));
	f = fopen(path, "rb");
	if (!f)
		return -errno;
	if (dump_read(f, &h, sizeof(h)) || memcmp(h.magic, DUMP_MAGIC, 8) != 0 ||
	    h.version != DUMP_VERSION || h.valid > DUMP_MAX_VALID || h.nstrings > DUMP_MAX_STRINGS) {
		rc = -EINVAL;
		goto out;
	}
	d->valid = (size_t)h.valid;
	d->cupti_version = h.cupti_version;
	if (posix_memalign((void **)&d->buf, 8, d->valid + 8) != 0) {
		d->buf = NULL;
		rc = -ENOMEM;
		goto out;
	}
	d->strings = calloc(h.nstrings ? h.nstrings : 1, sizeof(char *));
	if (!d->strings) {
		rc = -ENOMEM;
		goto out;
	}
	if (dump_read(f, d->buf, d->valid)) {
		rc = -EINVAL;
		goto out;
	}
	for (i = 0; i < h.nstrings; i++) {
		struct dump_string ds;
		char *s = NULL;

		if (dump_read(f, &ds, sizeof(ds)) || ds.offset > d->valid ||
		    d->valid - ds.offset < sizeof(char *) || ds.offset % 8 != 0 ||
		    (ds.len != DUMP_NULL_STRING && ds.len >= DUMP_MAX_STRING)) {
			rc = -EINVAL;
			goto out;
		}
		if (ds.len != DUMP_NULL_STRING) {
			s = malloc((size_t)ds.len + 1);
			if (!s) {
				rc = -ENOMEM;
				goto out;
			}
			d->strings[d->nstrings++] = s;
			if (dump_read(f, s, (size_t)ds.len + 1)) {
				rc = -EINVAL;
				goto out;
			}
			s[ds.len] = '\0';
		} else if (dump_read(f, NULL, 0)) {
			rc = -EINVAL;
			goto out;
		}
		memcpy(d->buf + ds.offset, &s, sizeof(s));
	}
out:
	fclose(f);
	if (rc)
		dump_free(d);
	return rc;
}
