/*
 * names.c — readable names (names.h): signatures without parameter lists,
 * the readable prefix of a mangled name the demangler refused, and short
 * display names for long template names that stay distinct.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"

#define ELLIPSIS "\xe2\x80\xa6"   /* "…", one column */

static int ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '$';
}

static int ends_with(const char *s, size_t n, const char *suf)
{
	size_t k = strlen(suf);

	return n >= k && memcmp(s + n - k, suf, k) == 0;
}

/* Length of "operator..." at s (the keyword and its symbol or type name), 0
 * when s does not start an operator name.  Keeps "operator()" and
 * "operator<" from being read as a parameter list or a template. */
static size_t operator_len(const char *s, size_t n, size_t i)
{
	size_t j;

	if (n - i < 8 || memcmp(s + i, "operator", 8) != 0 || (i > 0 && ident_char(s[i - 1])))
		return 0;
	j = i + 8;
	if (j < n && ident_char(s[j]))
		return 0;   /* "operatorX": an identifier */
	if (j < n && s[j] == ' ') {
		/* operator new, operator delete[], operator unsigned int */
		j++;
		while (j < n && (ident_char(s[j]) || s[j] == ' ' || s[j] == '*' || s[j] == '&'))
			j++;
		if (j + 1 < n && s[j] == '[' && s[j + 1] == ']')
			j += 2;
		return j - i;
	}
	if (j + 1 < n && ((s[j] == '(' && s[j + 1] == ')') || (s[j] == '[' && s[j + 1] == ']')))
		return j + 2 - i;
	while (j < n && strchr("<>=!+-*/%^&|~,", s[j]))
		j++;
	if (j + 1 < n && s[j] == ' ' && s[j + 1] == '<')
		j++;   /* "operator< <int>": the space keeps "<<" apart */
	return j - i;
}

const char *names_bare(const char *name, size_t *len)
{
	static const char *const quals[] = { " const", " volatile", " &&", " &", " noexcept" };
	size_t n, i, b = 0, k;
	const char *clone;
	int depth = 0, stripped = 0;

	if (!name) {
		*len = 0;
		return "";
	}
	n = strlen(name);
	if (name[0] == '[') {   /* "[kernel] vfs_read", "[libfoo.so+0x10]": not C++ */
		*len = n;
		return name;
	}
	clone = strstr(name, " [clone ");
	if (clone)
		n = (size_t)(clone - name);   /* "f(int) [clone .cold]": a part of f */
	for (;;) {
		while (n && name[n - 1] == ' ')
			n--;
		for (k = 0; k < sizeof(quals) / sizeof(quals[0]); k++)
			if (ends_with(name, n, quals[k]) && n > strlen(quals[k]) &&
			    name[n - strlen(quals[k]) - 1] == ')')
				break;
		if (k == sizeof(quals) / sizeof(quals[0]))
			break;
		n -= strlen(quals[k]);
	}
	if (n && name[n - 1] == ')') {
		for (i = n; i-- > 0;) {
			if (name[i] == ')') {
				depth++;
			} else if (name[i] == '(' && --depth == 0) {
				/* "f(int)", "g<int>(int)", "A::operator()(int)", "h[abi:cxx11](int)";
				 * not "(anonymous namespace)" alone */
				if (i > 0 && (ident_char(name[i - 1]) || name[i - 1] == '>' ||
					      name[i - 1] == ')' || name[i - 1] == ']')) {
					n = i;
					stripped = 1;
				}
				break;
			}
		}
	}
	/* A return type comes only with a signature: the last space outside any
	 * brackets ("void ns::k<int>", "unsigned long f"). */
	if (stripped) {
		depth = 0;
		for (i = 0; i < n; i++) {
			size_t op = operator_len(name, n, i);

			if (op) {
				i += op - 1;
				continue;
			}
			if (name[i] == '<' || name[i] == '(' || name[i] == '{' || name[i] == '[')
				depth++;
			else if ((name[i] == '>' || name[i] == ')' || name[i] == '}' ||
				  name[i] == ']') && depth)
				depth--;
			else if (name[i] == ' ' && !depth)
				b = i + 1;
		}
	}
	*len = n - b;
	return name + b;
}

char *names_bare_copy(char *buf, size_t len, const char *name)
{
	size_t n;
	const char *b = names_bare(name, &n);

	if (!len)
		return buf;
	if (n >= len)
		n = len - 1;
	memcpy(buf, b, n);
	buf[n] = '\0';
	return buf;
}

size_t names_width(const char *s)
{
	size_t w = 0;

	for (; s && *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			w++;
	return w;
}

/* --- the readable prefix of a mangled name ----------------------------------- */

#define UM_SUBS 16
#define UM_MAX 512

struct um {
	const char *s;           /* next unread character */
	char out[UM_MAX];
	size_t pos;
	char subs[UM_SUBS][UM_MAX];   /* substitution candidates: prefixes read so far */
	size_t nsubs;
	int full;                /* out ran out of room */
};

static void um_put(struct um *u, const char *s, size_t n)
{
	if (u->pos + n + 1 > sizeof(u->out)) {
		u->full = 1;
		n = sizeof(u->out) - 1 - u->pos;
	}
	memcpy(u->out + u->pos, s, n);
	u->pos += n;
	u->out[u->pos] = '\0';
}

static void um_puts(struct um *u, const char *s)
{
	um_put(u, s, strlen(s));
}

static int um_digits(struct um *u, unsigned long *v)
{
	char *end;

	if (*u->s < '0' || *u->s > '9')
		return -1;
	*v = strtoul(u->s, &end, 10);
	u->s = end;
	return 0;
}

/* <source-name> ::= <length> <identifier> */
static int um_source(struct um *u)
{
	unsigned long n;

	if (um_digits(u, &n) < 0 || n == 0 || strnlen(u->s, n) < n)
		return -1;
	if (n >= 10 && strncmp(u->s, "_GLOBAL__N", 10) == 0)
		um_puts(u, "(anonymous namespace)");
	else
		um_put(u, u->s, n);
	u->s += n;
	return 0;
}

static void um_sub_add(struct um *u, size_t from)
{
	if (u->nsubs < UM_SUBS) {
		snprintf(u->subs[u->nsubs], UM_MAX, "%s", u->out + from);
		u->nsubs++;
	}
}

/* S_, S0_, S1_, ..., St: a prefix read before (or std::).  -1 when not one. */
static int um_subst(struct um *u)
{
	const char *p = u->s;
	unsigned long idx = 0;

	if (p[0] != 'S')
		return -1;
	if (p[1] == 't') {
		um_puts(u, "std");
		u->s += 2;
		return 0;
	}
	if (p[1] == '_') {
		idx = 0;
		u->s += 2;
	} else {
		p++;
		while ((*p >= '0' && *p <= '9') || (*p >= 'A' && *p <= 'Z')) {
			idx = idx * 36 + (unsigned long)(*p <= '9' ? *p - '0' : *p - 'A' + 10);
			p++;
		}
		if (*p != '_' || p == u->s + 1)
			return -1;
		idx++;
		u->s = p + 1;
	}
	if (idx >= u->nsubs)
		return -1;
	um_puts(u, u->subs[idx]);
	return 0;
}

static const char *um_builtin(char c)
{
	switch (c) {
	case 'v': return "void";
	case 'b': return "bool";
	case 'c': return "char";
	case 'a': return "signed char";
	case 'h': return "unsigned char";
	case 's': return "short";
	case 't': return "unsigned short";
	case 'i': return "int";
	case 'j': return "unsigned int";
	case 'l': return "long";
	case 'm': return "unsigned long";
	case 'x': return "long long";
	case 'y': return "unsigned long long";
	case 'f': return "float";
	case 'd': return "double";
	}
	return NULL;
}

static int um_nested(struct um *u, int targs);

/* The first template argument, then "<…>" for anything it cannot follow. */
static void um_first_arg(struct um *u)
{
	const char *t;

	if (*u->s == 'L' && um_builtin(u->s[1])) {   /* a literal: Li4E */
		const char *p = u->s + 2;

		if (*p == 'n') {
			um_puts(u, "-");
			p++;
		}
		while (*p >= '0' && *p <= '9')
			um_put(u, p++, 1);
		u->s = p;
		return;
	}
	if ((t = um_builtin(*u->s))) {
		um_puts(u, t);
		u->s++;
		return;
	}
	if (*u->s == 'N' || (*u->s >= '0' && *u->s <= '9') || *u->s == 'S') {
		um_nested(u, 0);
		return;
	}
	um_puts(u, ELLIPSIS);
}

/* A (nested) name: components joined by "::"; targs: read the first
 * template argument of a template component.  Returns 0 when the name ended
 * where expected, -1 when it stopped on something it does not read. */
static int um_nested(struct um *u, int targs)
{
	int nested = *u->s == 'N', first = 1;
	size_t from = u->pos;

	if (nested) {
		u->s++;
		while (strchr("rVKRO", *u->s) && *u->s)
			u->s++;
	}
	for (;;) {
		if (*u->s == 'I') {
			u->s++;
			um_puts(u, "<");
			if (targs)
				um_first_arg(u);
			else
				um_puts(u, ELLIPSIS);
			um_puts(u, ">");
			return 1;   /* the rest is not read */
		}
		if (!nested && !first)
			return 0;
		if (nested && *u->s == 'E') {
			u->s++;
			return 0;
		}
		if (!first)
			um_puts(u, "::");
		if (*u->s == 'S') {
			if (!first || um_subst(u) < 0)
				return -1;
		} else if (um_source(u) < 0) {
			return -1;
		} else {
			um_sub_add(u, from);
		}
		first = 0;
	}
}

int names_unmangle_prefix(const char *name, char *buf, size_t len)
{
	struct um *u;
	int ret = -1;

	if (!name || strncmp(name, "_Z", 2) != 0 || !len)
		return -1;
	u = calloc(1, sizeof(*u));
	if (!u)
		return -1;
	u->s = name + 2;
	if (*u->s == 'L')
		u->s++;
	/* only a name this can read at least one component of */
	if ((*u->s == 'N' || (*u->s >= '0' && *u->s <= '9')) && um_nested(u, 1) >= 0 && u->pos) {
		snprintf(buf, len, "%s", u->out);
		ret = 0;
	}
	free(u);
	return ret;
}

/* --- short display names ------------------------------------------------------- */

/* Append c to the growing buffer of rewrite(). */
struct sbuf {
	char *s;
	size_t n, cap;
	int nomem;
};

static void sb_putn(struct sbuf *b, const char *s, size_t n)
{
	if (b->nomem)
		return;
	if (b->n + n + 1 > b->cap) {
		size_t cap = (b->n + n + 1) * 2;
		char *p = realloc(b->s, cap);

		if (!p) {
			b->nomem = 1;
			return;
		}
		b->s = p;
		b->cap = cap;
	}
	memcpy(b->s + b->n, s, n);
	b->n += n;
	b->s[b->n] = '\0';
}

/*
 * The bare name s[0..n) at a level:
 *   1  namespaces inside template arguments dropped ("at::native::Foo<float>" -> "Foo<float>")
 *   2  and the name's own namespaces ("at::native::kernel<...>" -> "kernel<...>")
 * (a class template's arguments stay: "vector<int>::size").  Folding
 * template arguments into "<…>" was tried and dropped: it hides what tells
 * look-alike kernels apart (CUDAFunctor_add vs CUDAFunctor_mul).
 * Returns a malloc'd string or NULL.
 */
static char *rewrite(const char *s, size_t n, int level)
{
	struct sbuf b = { 0 };
	size_t tok[64] = { 0 };   /* output offset where the current name began, per depth */
	size_t i;
	int depth = 0;

	sb_putn(&b, "", 0);
	for (i = 0; i < n && !b.nomem; i++) {
		char c = s[i];
		int d = depth < 63 ? depth : 63;
		size_t op = operator_len(s, n, i);

		if (op) {
			sb_putn(&b, s + i, op);
			i += op - 1;
			continue;
		}
		if (c == '(' && n - i >= 21 && memcmp(s + i, "(anonymous namespace)", 21) == 0) {
			sb_putn(&b, s + i, 21);   /* a name, dropped with its "::" below */
			i += 20;
			continue;
		}
		if (c == ':' && i + 1 < n && s[i + 1] == ':') {
			/* a namespace or class name; not "A<int>::" (its template
			 * arguments say which class) */
			if (((depth >= 1 && level >= 1) || (depth == 0 && level >= 2)) &&
			    !(b.n && b.s[b.n - 1] == '>')) {
				b.n = tok[d];     /* drop "ns::" */
				b.s[b.n] = '\0';
			} else {
				sb_putn(&b, "::", 2);
			}
			i++;
			continue;
		}
		if (c == '<') {
			depth++;
			sb_putn(&b, "<", 1);
			tok[depth < 63 ? depth : 63] = b.n;
			continue;
		}
		if (c == '>' && depth > 0)
			depth--;
		sb_putn(&b, &c, 1);
		if (!ident_char(c))
			tok[depth < 63 ? depth : 63] = b.n;
	}
	if (b.nomem) {
		free(b.s);
		return NULL;
	}
	return b.s;
}

/* s cut to width columns, ending in "…" when cut.  malloc'd or NULL. */
static char *cut(const char *s, size_t width)
{
	size_t i = 0, w = 0, n = strlen(s);
	char *r;

	if (names_width(s) <= width)
		return strdup(s);
	/* keep width - 1 code points, then the ellipsis */
	while (i < n && w < width - 1) {
		i++;
		while (i < n && ((unsigned char)s[i] & 0xc0) == 0x80)
			i++;
		w++;
	}
	r = malloc(i + strlen(ELLIPSIS) + 1);
	if (!r)
		return NULL;
	memcpy(r, s, i);
	strcpy(r + i, ELLIPSIS);
	return r;
}

/* The least shortened form of name (levels 0-2) that fits width, else that
 * of level 2 cut; *l2 gets the level-2 form (malloc'd). */
static char *short_of(const char *name, size_t width, char **l2)
{
	size_t blen;
	const char *bare = names_bare(name, &blen);
	char *r = NULL;
	int level;

	*l2 = NULL;
	for (level = 0; level <= 2; level++) {
		free(r);
		r = level ? rewrite(bare, blen, level) : strndup(bare, blen);
		if (!r)
			return NULL;
		if (level == 2)
			break;
	}
	*l2 = r;
	if (names_width(name) <= width)
		return strdup(name);
	for (level = 0; level <= 2; level++) {
		char *t = level == 2 ? strdup(r) : level ? rewrite(bare, blen, level)
							 : strndup(bare, blen);

		if (!t || names_width(t) <= width)
			return t;
		free(t);
	}
	return cut(r, width);
}

/* Byte offset of code point k of s (its length when s is shorter). */
static size_t cp_off(const char *s, size_t k)
{
	size_t i = 0, n = strlen(s);

	while (i < n && k) {
		i++;
		while (i < n && ((unsigned char)s[i] & 0xc0) == 0x80)
			i++;
		k--;
	}
	return i;
}

/* s (wider than width) as its head, "…", and the part from code point d on
 * (where it differs from a look-alike), ending in "…" when that is cut too.
 * malloc'd or NULL. */
static char *window(const char *s, size_t d, size_t width)
{
	size_t w = names_width(s), head = width / 3, rest = width - head - 1, start;
	struct sbuf b = { 0 };

	start = d > 4 ? d - 4 : 0;
	if (start < head) /* the difference is in the head: a plain cut shows it */
		return cut(s, width);
	sb_putn(&b, s, cp_off(s, head));
	sb_putn(&b, ELLIPSIS, strlen(ELLIPSIS));
	if (w - start <= rest) {
		sb_putn(&b, s + cp_off(s, w - rest), strlen(s) - cp_off(s, w - rest));
	} else {
		size_t from = cp_off(s, start);

		sb_putn(&b, s + from, cp_off(s, start + rest - 1) - from);
		sb_putn(&b, ELLIPSIS, strlen(ELLIPSIS));
	}
	if (b.nomem) {
		free(b.s);
		return NULL;
	}
	return b.s;
}

/* Code points a and b have in common at their start. */
static size_t common_cps(const char *a, const char *b)
{
	size_t i = 0, k = 0;

	while (a[i] && a[i] == b[i]) {
		i++;
		if (((unsigned char)a[i] & 0xc0) != 0x80)
			k++;
	}
	return k;
}

struct sh_ent {
	const char *name;
	const char *shown;       /* what the text is made from */
	char *text;
	char *l2;                /* the level-2 form, whole */
};

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct sh_ent *)a)->name, ((const struct sh_ent *)b)->name);
}

static int by_text(const void *a, const void *b)
{
	const struct sh_ent *x = a, *y = b;
	int c = strcmp(x->text, y->text);

	return c ? c : strcmp(x->name, y->name);
}

/* Replace e->text by its first width - len(" #k") columns and " #k". */
static int suffix(struct sh_ent *e, size_t k, size_t width)
{
	char sfx[32], *base, *t;

	snprintf(sfx, sizeof(sfx), " #%zu", k);
	base = cut(e->text, width - strlen(sfx));
	if (!base)
		return -ENOMEM;
	t = malloc(strlen(base) + strlen(sfx) + 1);
	if (!t) {
		free(base);
		return -ENOMEM;
	}
	strcpy(t, base);
	strcat(t, sfx);
	free(base);
	free(e->text);
	e->text = t;
	return 0;
}

/* Entries with the same text but different names (sorted by text): how
 * they are told apart.  mode 0: each shows where its level-2 form differs
 * from the others'; 1: numbered within the group; 2: numbered over the
 * whole set.  Returns 1 when there was such a group, 0 when none, -ENOMEM. */
static int separate(struct sh_ent *e, size_t n, size_t width, int mode)
{
	size_t i, j, k, x;
	int clash = 0;

	qsort(e, n, sizeof(*e), by_text);
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && strcmp(e[j].text, e[i].text) == 0; j++)
			;
		if (j - i < 2)
			continue;
		clash = 1;
		for (k = i; k < j; k++) {
			if (mode == 0) {
				size_t d = 0;
				char *t;

				for (x = i; x < j; x++)
					if (x != k && common_cps(e[k].l2, e[x].l2) > d)
						d = common_cps(e[k].l2, e[x].l2);
				/* only a cut text hides a difference; two that
				 * read the same whole are numbered below */
				if (names_width(e[k].l2) <= width || d >= names_width(e[k].l2))
					continue;
				if (!(t = window(e[k].l2, d, width)))
					return -ENOMEM;
				free(e[k].text);
				e[k].text = t;
			} else if (suffix(&e[k], mode == 2 ? k + 1 : k - i + 1, width) < 0) {
				return -ENOMEM;
			}
		}
	}
	return clash;
}

int names_shorten(const char *const *names, const char *const *shown, size_t n, size_t width,
		  char **out)
{
	struct sh_ent *e = calloc(n + 1, sizeof(*e));
	size_t i, m = 0;
	int ret = -ENOMEM, r, mode;

	for (i = 0; i < n; i++)
		out[i] = NULL;
	if (!e)
		return -ENOMEM;
	if (width < 16)
		width = 16;
	for (i = 0; i < n; i++)
		e[i] = (struct sh_ent){ .name = names[i] ? names[i] : "",
					.shown = shown && shown[i] ? shown[i] : names[i] ? names[i] : "" };
	/* one entry per distinct name */
	qsort(e, n, sizeof(*e), by_name);
	for (i = 0; i < n; i++)
		if (!m || strcmp(e[m - 1].name, e[i].name) != 0)
			e[m++] = e[i];
	for (i = 0; i < m; i++)
		if (!(e[i].text = short_of(e[i].shown, width, &e[i].l2)) || !e[i].l2)
			goto out;
	/* look-alikes show where they differ; those that still read the same
	 * are numbered, and should a number meet a name that reads the same,
	 * every clash is numbered over the whole set */
	for (mode = 0; mode < 3; mode++) {
		r = separate(e, m, width, mode);
		if (r < 0)
			goto out;
		if (!r)
			break;
	}
	qsort(e, m, sizeof(*e), by_name);
	for (i = 0; i < n; i++) {
		struct sh_ent key = { .name = names[i] ? names[i] : "" };
		const struct sh_ent *f = bsearch(&key, e, m, sizeof(*e), by_name);

		if (!f || !(out[i] = strdup(f->text)))
			goto out;
	}
	ret = 0;
out:
	for (i = 0; i < m; i++) {
		free(e[i].text);
		free(e[i].l2);
	}
	free(e);
	if (ret)
		for (i = 0; i < n; i++) {
			free(out[i]);
			out[i] = NULL;
		}
	return ret;
}
