/*
 * trace_buf.c — the trace writer's buffers: the event vector, and the string
 * builder one event is formatted in (with its JSON string escaper and its
 * number and microsecond formatting), so the size cap sees its real length.
 */
#include "util.h"
#include "trace_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tvec_push(struct tvec *t, const struct tev *e)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1024;
		struct tev *v = util_reallocarray(t->v, cap, sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->v = v;
		t->cap = cap;
	}
	t->v[t->n++] = *e;
	return 0;
}

static void sb_grow(struct sbuf *b, size_t more)
{
	if (b->oom || b->n + more + 1 <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 256;

	while (cap < b->n + more + 1)
		cap *= 2;
	char *p = realloc(b->p, cap);

	if (!p) {
		b->oom = 1;
		return;
	}
	b->p = p;
	b->cap = cap;
}

static void sb_put(struct sbuf *b, const char *s, size_t n)
{
	sb_grow(b, n);
	if (b->oom)
		return;
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = '\0';
}

void sb_puts(struct sbuf *b, const char *s)
{
	sb_put(b, s, strlen(s));
}

__attribute__((format(printf, 2, 3))) void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	sb_grow(b, (size_t)n);
	if (b->oom)
		return;
	va_start(ap, fmt);
	vsnprintf(b->p + b->n, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->n += (size_t)n;
}

/* Length of the valid UTF-8 sequence at s, or 0 when it is not one
 * (overlong forms, surrogates and code points above U+10FFFF are invalid). */
static size_t utf8_seq(const unsigned char *s)
{
	unsigned c = s[0];
	size_t n;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n;
}

void sb_json_str(struct sbuf *b, const char *s)
{
	const unsigned char *u = (const unsigned char *)(s ? s : "");

	sb_put(b, "\"", 1);
	while (*u) {
		size_t run = 0;

		/* copy the longest run that needs no escaping in one go */
		while (u[run] >= 0x20 && u[run] < 0x80 && u[run] != '"' && u[run] != '\\')
			run++;
		if (run) {
			sb_put(b, (const char *)u, run);
			u += run;
			continue;
		}
		if (*u == '"' || *u == '\\') {
			char e[2] = {'\\', (char)*u};

			sb_put(b, e, 2);
			u++;
		} else if (*u < 0x20) {
			switch (*u) {
			case '\n':
				sb_put(b, "\\n", 2);
				break;
			case '\t':
				sb_put(b, "\\t", 2);
				break;
			case '\r':
				sb_put(b, "\\r", 2);
				break;
			default:
				sb_printf(b, "\\u%04x", *u);
				break;
			}
			u++;
		} else {
			size_t n = utf8_seq(u);

			if (n) {
				sb_put(b, (const char *)u, n);
				u += n;
			} else {
				sb_put(b, "\\ufffd", 6);
				u++;
			}
		}
	}
	sb_put(b, "\"", 1);
}

void sb_u64(struct sbuf *b, uint64_t v)
{
	char d[24];
	size_t n = sizeof(d);

	do {
		d[--n] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	sb_put(b, d + n, sizeof(d) - n);
}

void sb_us(struct sbuf *b, int64_t ns)
{
	uint64_t u = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	char frac[4] = {'.', (char)('0' + u / 100 % 10), (char)('0' + u / 10 % 10),
	                (char)('0' + u % 10)};

	if (ns < 0)
		sb_put(b, "-", 1);
	sb_u64(b, u / 1000);
	sb_put(b, frac, 4);
}
