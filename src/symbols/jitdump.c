/*
 * jitdump.c — JIT_CODE_LOAD and JIT_CODE_MOVE records of a jitdump file
 * (jitdump.h), read through a window of the file so that the code bytes,
 * most of a large dump, are never read.  Nothing in the file is trusted:
 * every size is checked against the file's end, a record that does not fit
 * ends the walk with what came before it delivered.
 */
#include <byteswap.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "jitdump.h"
#include "util.h"

#define JD_MAGIC 0x4A695444u     /* "JiTD" in the writer's byte order */
#define JD_HEADER_SIZE 40        /* magic .. flags, version 1 */
#define JD_PREFIX 16             /* id, total_size, timestamp */
#define JD_LOAD_FIXED 56         /* prefix, pid, tid, vma, code_addr, code_size, code_index */
#define JD_MOVE_FIXED 64         /* prefix, pid, tid, vma, old, new, code_size, code_index */
#define JD_CODE_LOAD 0
#define JD_CODE_MOVE 1
#define JD_CODE_CLOSE 3
#define JD_WINDOW (1u << 20)

struct jd_file {
	int fd, swap;
	int cbret;               /* what the callback returned when it stopped the walk */
	uint64_t size;           /* the file's size when the walk began */
	unsigned char *buf;
	uint64_t base;           /* file offset of buf[0] */
	size_t len;              /* bytes of buf valid */
	int eof;                 /* a read came back short: the file ends at base + len */
};

/* Make [off, off + n) of the file readable at the returned pointer (n <=
 * JD_WINDOW); NULL when the file ends before (or it cannot be read). */
static const unsigned char *jd_get(struct jd_file *f, uint64_t off, size_t n)
{
	size_t got = 0;

	if (off >= f->base && off + n <= f->base + f->len)
		return f->buf + (off - f->base);
	if (f->eof && off + n > f->base + f->len && off >= f->base)
		return NULL;
	while (got < JD_WINDOW) {
		ssize_t r = pread(f->fd, f->buf + got, JD_WINDOW - got, (off_t)(off + got));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	f->base = off;
	f->len = got;
	f->eof = got < JD_WINDOW;
	return got >= n ? f->buf : NULL;
}

static uint32_t jd_u32(const struct jd_file *f, const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return f->swap ? bswap_32(v) : v;
}

static uint64_t jd_u64(const struct jd_file *f, const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return f->swap ? bswap_64(v) : v;
}

__attribute__((format(printf, 2, 3))) static void jd_damage(struct jitdump_stats *st,
							      const char *fmt, ...)
{
	va_list ap;

	st->damaged = 1;
	if (st->why[0])
		return;
	va_start(ap, fmt);
	vsnprintf(st->why, sizeof(st->why), fmt, ap);
	va_end(ap);
}

/* Loads by code_index, for the moves that name them later. */
struct jd_load {
	uint64_t index, size;
	char *name;
};

struct jd_loads {
	struct jd_load *v;
	size_t n, cap;
	struct util_map map;
};

struct jd_probe {
	const struct jd_loads *t;
	uint64_t index;
};

static int jd_load_eq(const void *ctx, uint32_t v)
{
	const struct jd_probe *p = ctx;

	return p->t->v[v].index == p->index;
}

static struct jd_load *jd_load_find(struct jd_loads *t, uint64_t index)
{
	struct jd_probe probe = {t, index};
	uint32_t v = util_map_find(&t->map, util_mix64(index), jd_load_eq, &probe);

	return v == UINT32_MAX ? NULL : &t->v[v];
}

/* Remember load index as (size, name): the latest load of an index wins. */
static int jd_load_put(struct jd_loads *t, uint64_t index, uint64_t size, const char *name)
{
	struct jd_load *l = jd_load_find(t, index);
	char *copy = strdup(name);

	if (!copy)
		return -ENOMEM;
	if (!l) {
		if (util_grow((void **)&t->v, &t->cap, t->n, sizeof(*t->v)) < 0 ||
		    util_map_put(&t->map, util_mix64(index), (uint32_t)t->n) < 0) {
			free(copy);
			return -ENOMEM;
		}
		l = &t->v[t->n++];
		l->name = NULL;
	}
	free(l->name);
	l->index = index;
	l->size = size;
	l->name = copy;
	return 0;
}

static void jd_loads_free(struct jd_loads *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->v[i].name);
	free(t->v);
	util_map_free(&t->map);
}

/* One JIT_CODE_LOAD at off (size bytes): its name is NUL-terminated inside
 * the record (cut at JITDUMP_NAME_MAX); the code bytes after it are not
 * read.  Returns 0, 1 when damaged (said in st), 2 when cb stopped the walk
 * (f->cbret), -ENOMEM. */
static int jd_code_load(struct jd_file *f, uint64_t off, uint64_t size, struct jd_loads *t,
			jitdump_cb cb, void *ctx, struct jitdump_stats *st)
{
	char name[JITDUMP_NAME_MAX];
	const unsigned char *p = NULL, *nul;
	uint64_t addr, csize, index, look = 0;
	int ret;

	if (size >= JD_LOAD_FIXED && off + JD_LOAD_FIXED <= f->size) {
		/* the name: inside the record, the file and the buffer */
		look = size - JD_LOAD_FIXED;
		if (look > f->size - off - JD_LOAD_FIXED)
			look = f->size - off - JD_LOAD_FIXED;
		if (look > sizeof(name))
			look = sizeof(name);
		p = jd_get(f, off, JD_LOAD_FIXED + (size_t)look);
	}
	if (!p) {
		jd_damage(st, "code load record at offset %llu cut short",
			  (unsigned long long)off);
		return 1;
	}
	addr = jd_u64(f, p + 32);  /* code_addr (vma at 24 is the same or 0) */
	csize = jd_u64(f, p + 40);
	index = jd_u64(f, p + 48);
	nul = memchr(p + JD_LOAD_FIXED, '\0', (size_t)look);
	if (!nul && look < sizeof(name)) {
		jd_damage(st, "code load record at offset %llu has no name inside it (or is cut)",
			  (unsigned long long)off);
		return 1;
	}
	if (nul) {
		memcpy(name, p + JD_LOAD_FIXED, (size_t)(nul - (p + JD_LOAD_FIXED)) + 1);
	} else {
		memcpy(name, p + JD_LOAD_FIXED, sizeof(name) - 1);
		name[sizeof(name) - 1] = '\0';
	}
	if (jd_load_put(t, index, csize, name) < 0)
		return -ENOMEM;
	st->loads++;
	if (csize == 0 || addr + csize < addr)
		return 0;
	ret = cb(ctx, addr, csize, name);
	f->cbret = ret;
	return ret ? 2 : 0;
}

/* One JIT_CODE_MOVE: the code of an earlier load, now at new_code_addr. */
static int jd_code_move(struct jd_file *f, uint64_t off, uint64_t size, struct jd_loads *t,
			jitdump_cb cb, void *ctx, struct jitdump_stats *st)
{
	const unsigned char *p = size >= JD_MOVE_FIXED ? jd_get(f, off, JD_MOVE_FIXED) : NULL;
	struct jd_load *l;
	uint64_t to, csize;
	int ret;

	if (!p) {
		jd_damage(st, "code move record at offset %llu cut short",
			  (unsigned long long)off);
		return 1;
	}
	to = jd_u64(f, p + 40);
	csize = jd_u64(f, p + 48);
	l = jd_load_find(t, jd_u64(f, p + 56));
	st->moves++;
	if (!l)
		return 0; /* the load came before the file was (re)opened: nameless */
	if (!csize)
		csize = l->size;
	if (csize == 0 || to + csize < to)
		return 0;
	ret = cb(ctx, to, csize, l->name);
	f->cbret = ret;
	return ret ? 2 : 0;
}

static int jd_walk(struct jd_file *f, jitdump_cb cb, void *ctx, struct jitdump_stats *st)
{
	const unsigned char *p = jd_get(f, 0, JD_HEADER_SIZE);
	struct jd_loads t;
	uint64_t off;
	uint32_t magic;
	int ret = 0;

	if (!p) {
		snprintf(st->why, sizeof(st->why), "shorter than a jitdump header");
		return -EINVAL;
	}
	memcpy(&magic, p, sizeof(magic));
	if (magic == bswap_32(JD_MAGIC))
		f->swap = 1;
	else if (magic != JD_MAGIC) {
		snprintf(st->why, sizeof(st->why), "not a jitdump file (magic 0x%08x)", magic);
		return -EINVAL;
	}
	off = jd_u32(f, p + 8);
	if (off < JD_HEADER_SIZE || off > JD_WINDOW) {
		snprintf(st->why, sizeof(st->why), "bad header size %llu", (unsigned long long)off);
		return -EINVAL;
	}
	memset(&t, 0, sizeof(t));
	while (off < f->size) {
		uint32_t id;
		uint64_t size;

		p = off + JD_PREFIX <= f->size ? jd_get(f, off, JD_PREFIX) : NULL;
		if (!p) {
			jd_damage(st, "truncated inside the record at offset %llu",
				  (unsigned long long)off);
			break;
		}
		id = jd_u32(f, p);
		size = jd_u32(f, p + 4);
		if (size < JD_PREFIX) {
			jd_damage(st, "record at offset %llu has size %llu",
				  (unsigned long long)off, (unsigned long long)size);
			break;
		}
		st->records++;
		if (id == JD_CODE_CLOSE)
			break;
		/* a record cut by the file's end still gives what it holds
		 * (a load's name comes before its code) */
		if (id == JD_CODE_LOAD)
			ret = jd_code_load(f, off, size, &t, cb, ctx, st);
		else if (id == JD_CODE_MOVE)
			ret = jd_code_move(f, off, size, &t, cb, ctx, st);
		if (ret)
			break;
		if (off + size > f->size) {
			jd_damage(st, "truncated inside the record at offset %llu",
				  (unsigned long long)off);
			break;
		}
		off += size;
	}
	jd_loads_free(&t);
	if (ret == 2)
		return f->cbret;
	return ret < 0 ? ret : 0;
}

int jitdump_read_fd(int fd, jitdump_cb cb, void *ctx, struct jitdump_stats *st)
{
	struct jd_file f;
	struct stat sb;
	int ret;

	memset(st, 0, sizeof(*st));
	memset(&f, 0, sizeof(f));
	f.fd = fd;
	if (fstat(fd, &sb) < 0)
		return -errno;
	f.size = (uint64_t)sb.st_size;
	f.buf = malloc(JD_WINDOW);
	if (!f.buf)
		return -ENOMEM;
	ret = jd_walk(&f, cb, ctx, st);
	free(f.buf);
	return ret;
}
