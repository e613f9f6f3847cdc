/*
 * ksym.c — kernel symbol tables: parse /proc/kallsyms and the session's
 * kernel-symbols file, look an address up, write the subset a session needs;
 * keep this boot's table in the symbol cache directory.
 * Both parsers take any bytes (a session file is user input): every line is
 * bounded, every number checked, bad lines skipped.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "ksym.h"
#include "sym_int.h"
#include "util.h"

static int ksym_push(struct ksym_table *t, uint64_t start, uint64_t end, const char *name,
		     size_t len)
{
	struct ksym *k;
	size_t off = t->names_len;

	if (util_grow((void **)&t->v, &t->cap, t->n, sizeof(*t->v)) < 0 ||
	    util_grow((void **)&t->names, &t->names_cap, t->names_len + len, 1) < 0)
		return -ENOMEM;
	memcpy(t->names + off, name, len);
	t->names[off + len] = '\0';
	t->names_len += len + 1;
	k = &t->v[t->n++];
	k->start = start;
	k->end = end;
	k->name = (const char *)(uintptr_t)off; /* an offset until ksym_finish */
	return 0;
}

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	/* Aliases at one address: keep a stable order, the longer range first. */
	if (x->end != y->end)
		return x->end > y->end ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

/* Sort, turn name offsets into pointers, drop aliases (the first name at an
 * address wins), and with open_ends end each symbol where the next begins. */
static void ksym_finish(struct ksym_table *t, int open_ends)
{
	size_t i, o = 0;

	if (t->n == 0)
		return;
	qsort(t->v, t->n, sizeof(*t->v), ksym_cmp);
	for (i = 0; i < t->n; i++) {
		if (o && t->v[o - 1].start == t->v[i].start)
			continue;
		t->v[o++] = t->v[i];
	}
	t->n = o;
	for (i = 0; i < t->n; i++) {
		t->v[i].name = t->names + (size_t)(uintptr_t)t->v[i].name;
		if (open_ends)
			t->v[i].end = i + 1 < t->n ? t->v[i + 1].start : t->v[i].start + 0x1000;
		else if (i + 1 < t->n && t->v[i].end > t->v[i + 1].start)
			t->v[i].end = t->v[i + 1].start; /* overlapping: the later one wins */
	}
}

/* Next line of f into buf (cut at size-1, the rest skipped); 0 at EOF. */
static int ksym_line(FILE *f, char *buf, size_t size)
{
	size_t len;

	if (!fgets(buf, (int)size, f))
		return 0;
	len = strlen(buf);
	if (len && buf[len - 1] == '\n') {
		buf[len - 1] = '\0';
	} else {
		int c;

		while ((c = getc(f)) != EOF && c != '\n')
			;
	}
	return 1;
}

static int ksym_hex(const char *s, uint64_t *v, const char **end)
{
	char *e;

	errno = 0;
	*v = strtoull(s, &e, 16);
	if (e == s || errno)
		return -1;
	*end = e;
	return 0;
}

static size_t ksym_token(const char *s, const char **start)
{
	size_t n = 0;

	while (*s == ' ' || *s == '\t')
		s++;
	*start = s;
	while (s[n] && s[n] != ' ' && s[n] != '\t')
		n++;
	return n;
}

int ksym_read_kallsyms(FILE *f, struct ksym_table *t)
{
	char line[512];
	int nonzero = 0, any = 0;

	memset(t, 0, sizeof(*t));
	while (ksym_line(f, line, sizeof(line))) {
		const char *p, *type, *name;
		uint64_t addr;
		size_t n;

		if (ksym_hex(line, &addr, &p) < 0)
			continue;
		if (ksym_token(p, &type) != 1)
			continue;
		n = ksym_token(type + 1, &name);
		if (n == 0)
			continue;
		any = 1;
		if (addr == 0)
			continue;
		nonzero = 1;
		if (*type != 't' && *type != 'T' && *type != 'w' && *type != 'W')
			continue;
		if (ksym_push(t, addr, 0, name, n) < 0)
			return -ENOMEM;
	}
	t->hidden = any && !nonzero;
	ksym_finish(t, 1);
	return 0;
}

int ksym_read_file(const char *path, struct ksym_table *t)
{
	FILE *f = fopen(path, "re");
	char line[512];
	int ret = 0;

	memset(t, 0, sizeof(*t));
	if (!f)
		return -errno;
	while (ksym_line(f, line, sizeof(line))) {
		const char *p, *name;
		uint64_t start, end;
		size_t n;

		if (line[0] == '#' || ksym_hex(line, &start, &p) < 0 || ksym_hex(p, &end, &p) < 0 ||
		    end <= start)
			continue;
		n = ksym_token(p, &name);
		if (n == 0)
			continue;
		if (ksym_push(t, start, end, name, n) < 0) {
			ret = -ENOMEM;
			break;
		}
	}
	fclose(f);
	ksym_finish(t, 0);
	return ret;
}

/* --- the per-boot cache ------------------------------------------------------ */

#define KSYM_MAGIC "CBNKSYM1"

struct ksym_cache_hdr {
	char magic[8];
	uint64_t key;
	uint64_t n;              /* entries */
	uint64_t names_len;      /* bytes of names, each NUL-terminated */
};

struct ksym_cache_ent {
	uint64_t start, end;
	uint64_t name;           /* offset into the names */
};

/* FNV-1a of a small file's bytes (boot_id, /proc/modules), into h. */
static uint64_t ksym_hash_file(uint64_t h, const char *path)
{
	char buf[4096];
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return util_fnv1a(path, strlen(path), h);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		h = util_fnv1a(buf, n, h);
	fclose(f);
	return h;
}

static uint64_t ksym_key(void)
{
	struct utsname u;
	uint64_t h = UTIL_FNV_INIT;

	if (uname(&u) == 0) {
		h = util_fnv1a(u.release, strlen(u.release), h);
		h = util_fnv1a(u.version, strlen(u.version), h);
	}
	h = ksym_hash_file(h, "/proc/sys/kernel/random/boot_id");
	return ksym_hash_file(h, "/proc/modules");
}

static int ksym_cache_read(const char *path, uint64_t key, struct ksym_table *t)
{
	struct ksym_cache_hdr h;
	struct ksym_cache_ent *e = NULL;
	FILE *f = fopen(path, "rb");
	size_t i;

	memset(t, 0, sizeof(*t));
	if (!f)
		return -1;
	if (fread(&h, sizeof(h), 1, f) != 1 || memcmp(h.magic, KSYM_MAGIC, 8) != 0 ||
	    h.key != key || h.n == 0 || h.n > (1u << 24) || h.names_len > (1u << 28) ||
	    !(e = util_reallocarray(NULL, h.n, sizeof(*e))) ||
	    !(t->v = util_reallocarray(NULL, h.n, sizeof(*t->v))) ||
	    !(t->names = malloc(h.names_len + 1)) || fread(e, sizeof(*e), h.n, f) != h.n ||
	    fread(t->names, 1, h.names_len, f) != h.names_len)
		goto bad;
	t->names[h.names_len] = '\0';
	for (i = 0; i < h.n; i++) {
		if (e[i].name >= h.names_len || e[i].end <= e[i].start ||
		    (i && e[i].start < e[i - 1].end))
			goto bad;
		t->v[i].start = e[i].start;
		t->v[i].end = e[i].end;
		t->v[i].name = t->names + e[i].name;
	}
	t->n = t->cap = h.n;
	t->names_len = t->names_cap = h.names_len;
	free(e);
	fclose(f);
	return 0;
bad:
	free(e);
	fclose(f);
	ksym_free(t);
	return -1;
}

/* Written to a temporary name and renamed: a concurrent reader sees the old
 * file or the new one.  Other boots' files are removed (useless now). */
static void ksym_cache_write(const char *dir, const char *path, uint64_t key,
			     const struct ksym_table *t)
{
	struct ksym_cache_hdr h;
	char tmp[PATH_MAX + 200];
	struct dirent *de;
	size_t i, off = 0;
	FILE *f;
	DIR *d;
	int ok, fd;

	if (sym_mkdir_p(dir) != 0)
		return;
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (!(f = fdopen(fd, "wb"))) {
		close(fd);
		unlink(tmp);
		return;
	}
	memcpy(h.magic, KSYM_MAGIC, 8);
	h.key = key;
	h.n = t->n;
	h.names_len = 0;
	for (i = 0; i < t->n; i++)
		h.names_len += strlen(t->v[i].name) + 1;
	ok = fwrite(&h, sizeof(h), 1, f) == 1;
	for (i = 0; ok && i < t->n; i++) {
		struct ksym_cache_ent e = {t->v[i].start, t->v[i].end, off};

		off += strlen(t->v[i].name) + 1;
		ok = fwrite(&e, sizeof(e), 1, f) == 1;
	}
	for (i = 0; ok && i < t->n; i++)
		ok = fwrite(t->v[i].name, 1, strlen(t->v[i].name) + 1, f) > 0;
	if (fclose(f) != 0 || !ok || rename(tmp, path) != 0) {
		unlink(tmp);
		return;
	}
	if (!(d = opendir(dir)))
		return;
	while ((de = readdir(d)) != NULL) {
		char old[PATH_MAX + 300];

		if (strncmp(de->d_name, "kallsyms-", 9) != 0 ||
		    strcmp(de->d_name, strrchr(path, '/') + 1) == 0)
			continue;
		snprintf(old, sizeof(old), "%s/%s", dir, de->d_name);
		unlink(old);
	}
	closedir(d);
}

int ksym_read_kernel(struct ksym_table *t)
{
	char dir[PATH_MAX], path[PATH_MAX + 64];
	uint64_t key = ksym_key();
	int cached = sym_cache_dir(dir, sizeof(dir)) == 0, ret;
	FILE *f;

	if (cached) {
		snprintf(path, sizeof(path), "%s/kallsyms-%016" PRIx64 ".bin", dir, key);
		if (ksym_cache_read(path, key, t) == 0)
			return 0;
	}
	if (!(f = fopen("/proc/kallsyms", "re")))
		return -errno;
	ret = ksym_read_kallsyms(f, t);
	fclose(f);
	if (ret == 0 && cached && !t->hidden && t->n)
		ksym_cache_write(dir, path, key, t);
	return ret;
}

const struct ksym *ksym_find(const struct ksym_table *t, uint64_t pc)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->v[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || pc >= t->v[lo - 1].end)
		return NULL;
	return &t->v[lo - 1];
}

int ksym_write_file(const struct ksym_table *t, const uint64_t *pcs, size_t n, const char *path,
		    const char *note)
{
	unsigned char *used = t->n ? calloc(t->n, 1) : NULL;
	FILE *f;
	size_t i;
	int written = 0;

	if (t->n && !used)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const struct ksym *k = ksym_find(t, pcs[i]);
		const struct ksym *k1 = ksym_find(t, pcs[i] - 1);

		if (k)
			used[k - t->v] = 1;
		if (k1)
			used[k1 - t->v] = 1;
	}
	f = fopen(path, "we");
	if (!f) {
		int e = -errno;

		free(used);
		return e;
	}
	fprintf(f, "# %s\n", note ? note : "cbottleneck kernel symbols");
	for (i = 0; i < t->n; i++) {
		if (!used[i])
			continue;
		fprintf(f, "%" PRIx64 " %" PRIx64 " %s\n", t->v[i].start, t->v[i].end, t->v[i].name);
		written++;
	}
	free(used);
	if (fclose(f) != 0)
		return -errno;
	return written;
}

void ksym_free(struct ksym_table *t)
{
	free(t->v);
	free(t->names);
	memset(t, 0, sizeof(*t));
}
