/*
 * gz.c — buffered plain or gzip output for the exporters (see gz.h).
 * With zlib: a deflate stream with a gzip wrapper.  Without: a hand-built gzip
 * member of stored blocks (RFC 1951 §3.2.4, RFC 1952) so --pprof still works.
 */
#include "gz.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef CBN_HAVE_ZLIB
#include <zlib.h>
#endif

#define GZ_BUF (256 * 1024)

struct gz_file {
	int fd;
	int own_fd; /* 0 for stdout */
	int gzip;
	int err;        /* first negative errno, sticky */
	uint64_t count; /* uncompressed bytes accepted */
	size_t len;     /* bytes waiting in buf */
	unsigned char *buf;
#ifdef CBN_HAVE_ZLIB
	z_stream zs;
	unsigned char *zbuf;
#else
	uint32_t crc;
#endif
};

int gz_path_wants_gzip(const char *path)
{
	size_t n = path ? strlen(path) : 0;

	return n > 3 && strcmp(path + n - 3, ".gz") == 0;
}

static int gz_write_all(struct gz_file *f, const void *p, size_t len)
{
	const char *c = p;

	while (len) {
		ssize_t w = write(f->fd, c, len);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		c += w;
		len -= (size_t)w;
	}
	return 0;
}

#ifdef CBN_HAVE_ZLIB
/* Feed the buffer to deflate; finish ends the gzip member. */
static int gz_deflate(struct gz_file *f, int finish)
{
	int zr, rc;

	f->zs.next_in = f->buf;
	f->zs.avail_in = (uInt)f->len;
	do {
		f->zs.next_out = f->zbuf;
		f->zs.avail_out = GZ_BUF;
		zr = deflate(&f->zs, finish ? Z_FINISH : Z_NO_FLUSH);
		if (zr == Z_STREAM_ERROR)
			return -EIO;
		rc = gz_write_all(f, f->zbuf, GZ_BUF - f->zs.avail_out);
		if (rc)
			return rc;
	} while (f->zs.avail_out == 0 || (finish && zr != Z_STREAM_END));
	f->len = 0;
	return 0;
}
#else
static uint32_t gz_crc_table[256];

static void gz_crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
		gz_crc_table[i] = c;
	}
}

static uint32_t gz_crc(uint32_t crc, const unsigned char *p, size_t n)
{
	crc = ~crc;
	while (n--)
		crc = gz_crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

/* One stored block per buffer (GZ_BUF > 65535, so split). */
static int gz_stored(struct gz_file *f, int final)
{
	size_t off = 0;
	int rc;

	f->crc = gz_crc(f->crc, f->buf, f->len);
	do {
		size_t n = f->len - off > 65535 ? 65535 : f->len - off;
		int last = final && off + n == f->len;
		unsigned char h[5] = {(unsigned char)last, (unsigned char)(n & 0xff),
		                      (unsigned char)(n >> 8), (unsigned char)(~n & 0xff),
		                      (unsigned char)((~n >> 8) & 0xff)};

		rc = gz_write_all(f, h, sizeof(h));
		if (!rc)
			rc = gz_write_all(f, f->buf + off, n);
		if (rc)
			return rc;
		off += n;
	} while (off < f->len);
	f->len = 0;
	return 0;
}
#endif

static int gz_flush(struct gz_file *f, int finish)
{
	int rc;

	if (!f->gzip) {
		rc = gz_write_all(f, f->buf, f->len);
		f->len = 0;
		return rc;
	}
#ifdef CBN_HAVE_ZLIB
	return gz_deflate(f, finish);
#else
	if (!finish && f->len == 0)
		return 0;
	return gz_stored(f, finish);
#endif
}

int gz_open(struct gz_file **out, const char *path, int gzip)
{
	struct gz_file *f;
	int rc = 0;

	*out = NULL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->gzip = gzip;
	f->fd = -1;
	f->buf = malloc(GZ_BUF);
	if (!f->buf) {
		rc = -ENOMEM;
		goto out;
	}
#ifdef CBN_HAVE_ZLIB
	if (gzip) {
		f->zbuf = malloc(GZ_BUF);
		if (!f->zbuf) {
			rc = -ENOMEM;
			goto out;
		}
		/* windowBits 15 + 16: zlib writes the gzip header and trailer.
		 * Level 1: traces are hundreds of MB of repetitive JSON, where
		 * speed matters more than the last few percent of size. */
		if (deflateInit2(&f->zs, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
			free(f->zbuf);
			f->zbuf = NULL;
			rc = -ENOMEM;
			goto out;
		}
	}
#endif
	if (strcmp(path, "-") == 0) {
		f->fd = STDOUT_FILENO;
	} else {
		f->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (f->fd < 0) {
			rc = -errno;
			goto out;
		}
		f->own_fd = 1;
	}
#ifndef CBN_HAVE_ZLIB
	if (gzip) {
		/* magic, CM=deflate, no flags, mtime 0, XFL 0, OS=unix */
		static const unsigned char hdr[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};

		if (!gz_crc_table[1])
			gz_crc_init();
		rc = gz_write_all(f, hdr, sizeof(hdr));
		if (rc)
			goto out;
	}
#endif
out:
	if (rc) {
		if (f->own_fd && f->fd >= 0)
			close(f->fd);
#ifdef CBN_HAVE_ZLIB
		if (f->zbuf) {
			deflateEnd(&f->zs);
			free(f->zbuf);
		}
#endif
		free(f->buf);
		free(f);
		return rc;
	}
	*out = f;
	return 0;
}

int gz_write(struct gz_file *f, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	if (f->err)
		return f->err;
	f->count += len;
	while (len) {
		size_t n = GZ_BUF - f->len;

		if (n > len)
			n = len;
		memcpy(f->buf + f->len, p, n);
		f->len += n;
		p += n;
		len -= n;
		if (f->len == GZ_BUF) {
			f->err = gz_flush(f, 0);
			if (f->err)
				return f->err;
		}
	}
	return 0;
}

int gz_puts(struct gz_file *f, const char *s)
{
	return gz_write(f, s, strlen(s));
}

int gz_printf(struct gz_file *f, const char *fmt, ...)
{
	char small[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return f->err ? f->err : (f->err = -EINVAL);
	if ((size_t)n < sizeof(small))
		return gz_write(f, small, (size_t)n);

	char *big = malloc((size_t)n + 1);
	int rc;

	if (!big)
		return f->err ? f->err : (f->err = -ENOMEM);
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	rc = gz_write(f, big, (size_t)n);
	free(big);
	return rc;
}

uint64_t gz_count(const struct gz_file *f)
{
	return f->count;
}

int gz_close(struct gz_file *f)
{
	int rc;

	if (!f)
		return 0;
	rc = f->err;
	if (!rc)
		rc = gz_flush(f, 1);
#ifndef CBN_HAVE_ZLIB
	if (!rc && f->gzip) {
		unsigned char t[8];
		uint32_t isize = (uint32_t)f->count;

		for (int i = 0; i < 4; i++) {
			t[i] = (unsigned char)(f->crc >> (8 * i));
			t[4 + i] = (unsigned char)(isize >> (8 * i));
		}
		rc = gz_write_all(f, t, sizeof(t));
	}
#else
	if (f->zbuf) {
		deflateEnd(&f->zs);
		free(f->zbuf);
	}
#endif
	if (f->own_fd) {
		if (close(f->fd) < 0 && !rc)
			rc = -errno;
	}
	free(f->buf);
	free(f);
	return rc;
}
