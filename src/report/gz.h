/*
 * gz.h — buffered output files for the exporters, plain or gzip-compressed.
 * Uses zlib when the build found it (CBN_HAVE_ZLIB); without it, gzip output is
 * still valid gzip, made of stored (uncompressed) deflate blocks.
 * A handle is used by one thread; errors are sticky and reported by gz_close().
 */
#ifndef CBN_GZ_H
#define CBN_GZ_H

#include <stddef.h>
#include <stdint.h>

struct gz_file;

/* 1 if path ends in ".gz" (the exporters compress exactly then). */
int gz_path_wants_gzip(const char *path);

/* Create (truncate) path; "-" means stdout, which is never closed.  gzip
 * selects compression.  Returns 0 or a negative errno. */
int gz_open(struct gz_file **out, const char *path, int gzip);

int gz_write(struct gz_file *f, const void *buf, size_t len);
int gz_puts(struct gz_file *f, const char *s);
int gz_printf(struct gz_file *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Uncompressed bytes accepted so far (what the size caps count). */
uint64_t gz_count(const struct gz_file *f);

/* Flush, finish the gzip stream, close, free.  Returns 0 or the first
 * negative errno seen on this handle (the file may then be incomplete). */
int gz_close(struct gz_file *f);

#endif
