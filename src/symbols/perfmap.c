/*
 * perfmap.c — perf maps read into a sorted table of disjoint named ranges
 * (perfmap.h).  Lines are parsed as perf does (tools/perf/util/symbol.c,
 * dso__load_perf_map: START and SIZE in hex, then the name to the end of the
 * line), a little more leniently (a 0x prefix, several blanks, a CR);
 * overlapping entries are resolved by a sweep over their bounds, the entry
 * read last winning where they overlap.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfmap.h"
#include "util.h"

struct pm_raw {
	uint64_t start, end;
	const char *name;
};

/* Hex digits at *s (an optional 0x first) into *v; 0 when there are none or
 * more than 64 bits' worth. */
static int pm_hex(const char **s, const char *end, uint64_t *v)
{
	const char *p = *s;
	int digits = 0;

	*v = 0;
	if (end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	for (; p < end; p++, digits++) {
		unsigned d;

		if (*p >= '0' && *p <= '9')
			d = (unsigned)(*p - '0');
		else if (*p >= 'a' && *p <= 'f')
			d = (unsigned)(*p - 'a' + 10);
		else if (*p >= 'A' && *p <= 'F')
			d = (unsigned)(*p - 'A' + 10);
		else
			break;
		if (digits == 16)
			return 0;
		*v = *v << 4 | d;
	}
	*s = p;
	return digits > 0;
}

static int pm_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* One line [s, end) (its NUL already at end): 1 and *e when it parses. */
static int pm_line(char *s, char *end, struct pm_raw *e)
{
	const char *p = s;
	uint64_t start, size;

	while (end > s && (end[-1] == '\r' || pm_blank(end[-1])))
		*--end = '\0';
	if (!pm_hex(&p, end, &start) || p == end || !pm_blank(*p))
		return 0;
	while (p < end && pm_blank(*p))
		p++;
	if (!pm_hex(&p, end, &size) || p == end || !pm_blank(*p))
		return 0;
	while (p < end && pm_blank(*p))
		p++;
	if (p == end || size == 0 || start + size < start)
		return 0;
	e->start = start;
	e->end = start + size;
	e->name = p;
	return 1;
}

/* A max-heap of entry indices: the entry read last on top. */
static void pm_heap_push(uint32_t *h, size_t *n, uint32_t v)
{
	size_t i = (*n)++;

	while (i > 0 && h[(i - 1) / 2] < v) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = v;
}

static void pm_heap_pop(uint32_t *h, size_t *n)
{
	uint32_t v = h[--*n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= *n)
			break;
		if (c + 1 < *n && h[c + 1] > h[c])
			c++;
		if (h[c] <= v)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = v;
}

static int pm_start_cmp(const void *a, const void *b, void *arg)
{
	const struct pm_raw *base = arg;
	const struct pm_raw *x = &base[*(const uint32_t *)a];
	const struct pm_raw *y = &base[*(const uint32_t *)b];

	return x->start < y->start ? -1 : x->start > y->start;
}

/* The raw entries (in the order read) into m->v: every elementary range
 * between two bounds gets the latest entry covering it; neighbours with the
 * same name merge. */
static int pm_sweep(const struct pm_raw *e, size_t n, struct perfmap *m)
{
	uint64_t *b = util_reallocarray(NULL, 2 * n, sizeof(*b));
	uint32_t *ord = util_reallocarray(NULL, n, sizeof(*ord));
	uint32_t *heap = util_reallocarray(NULL, n, sizeof(*heap));
	size_t nb = 0, i, j, nh = 0, cap = 0;
	int ret = -ENOMEM;

	if (!b || !ord || !heap)
		goto out;
	for (i = 0; i < n; i++) {
		ord[i] = (uint32_t)i;
		b[nb++] = e[i].start;
		b[nb++] = e[i].end;
	}
	qsort_r(ord, n, sizeof(*ord), pm_start_cmp, (void *)e);
	qsort(b, nb, sizeof(*b), util_u64_cmp);
	for (i = 0, j = 0; i < nb; i++)
		if (j == 0 || b[j - 1] != b[i])
			b[j++] = b[i];
	nb = j;
	for (i = 0, j = 0; i + 1 < nb; i++) {
		const struct pm_raw *w;
		struct perfmap_entry *last = m->n ? &m->v[m->n - 1] : NULL;

		while (j < n && e[ord[j]].start <= b[i])
			pm_heap_push(heap, &nh, ord[j++]);
		while (nh && e[heap[0]].end <= b[i])
			pm_heap_pop(heap, &nh);
		if (!nh)
			continue;
		w = &e[heap[0]];
		if (last && last->end == b[i] && strcmp(last->name, w->name) == 0) {
			last->end = b[i + 1];
			continue;
		}
		if (util_grow((void **)&m->v, &cap, m->n, sizeof(*m->v)) < 0)
			goto out;
		m->v[m->n].start = b[i];
		m->v[m->n].end = b[i + 1];
		m->v[m->n].name = w->name;
		m->n++;
	}
	ret = 0;
out:
	free(b);
	free(ord);
	free(heap);
	return ret;
}

int perfmap_parse(const char *text, size_t len, struct perfmap *m)
{
	struct pm_raw *raw = NULL;
	size_t nraw = 0, cap = 0;
	char *s, *end, *nl;
	int ret = -ENOMEM;

	memset(m, 0, sizeof(*m));
	m->text = malloc(len + 1);
	if (!m->text)
		return -ENOMEM;
	if (len)
		memcpy(m->text, text, len);
	m->text[len] = '\0';
	end = m->text + len;
	for (s = m->text; s < end; s = nl + 1) {
		struct pm_raw e;

		nl = memchr(s, '\n', (size_t)(end - s));
		if (!nl)
			nl = end;
		*nl = '\0';
		/* a NUL inside the line ends it there (binary junk) */
		if (!pm_line(s, s + strlen(s), &e)) {
			m->skipped += nl > s;
			continue;
		}
		if (util_grow((void **)&raw, &cap, nraw, sizeof(*raw)) < 0)
			goto out;
		raw[nraw++] = e;
	}
	m->lines = nraw;
	ret = nraw ? pm_sweep(raw, nraw, m) : 0;
out:
	free(raw);
	if (ret < 0)
		perfmap_free(m);
	return ret;
}

int perfmap_read(const char *path, size_t max_bytes, struct perfmap *m)
{
	struct stat st;
	char *buf = NULL;
	size_t len = 0, want;
	int fd, ret;

	memset(m, 0, sizeof(*m));
	/* O_NONBLOCK: a FIFO in its place must not hang the report */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	want = (uint64_t)st.st_size < max_bytes ? (size_t)st.st_size : max_bytes;
	buf = malloc(want + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (len < want) {
		ssize_t r = read(fd, buf + len, want - len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	if (len == max_bytes && (uint64_t)st.st_size > max_bytes)
		while (len > 0 && buf[len - 1] != '\n')
			len--; /* cut: keep whole lines only */
	ret = perfmap_parse(buf, len, m);
	free(buf);
	return ret;
}

const struct perfmap_entry *perfmap_find(const struct perfmap *m, uint64_t addr)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || addr >= m->v[lo - 1].end)
		return NULL;
	return &m->v[lo - 1];
}

void perfmap_free(struct perfmap *m)
{
	free(m->v);
	free(m->text);
	memset(m, 0, sizeof(*m));
}
