/*
 * rx.c — cbn_rx.h's matcher.  The pattern is parsed into a tree (fixed
 * array, no allocation), the tree compiled into a small program (Pike's
 * instruction set without captures: a counted repeat is its operand copied),
 * and a name is searched by running every thread of the program in step
 * (Thompson's simulation): each instruction is visited at most once a byte,
 * so a search is linear in the name whatever the pattern.  Nothing here
 * allocates, locks or touches errno: the agent calls it inside the program.
 */
#include <stdio.h>
#include <string.h>

#include "cbn_rx.h"

enum { RX_CHAR = 1, RX_ANY, RX_SET, RX_BOL, RX_EOL, RX_SPLIT, RX_JMP, RX_MATCH };

enum { N_EMPTY, N_LIT, N_ANY, N_SET, N_BOL, N_EOL, N_CAT, N_ALT, N_REP };

#define RX_NODES CBN_RX_INSNS
#define RX_INF 256                       /* a repeat's unbounded maximum */
#define RX_MAX_DEPTH 32                  /* nested groups */

struct rx_node {
	uint8_t type, ch;
	int16_t a, b;
	int16_t min, max;
};

struct rx_parse {
	struct cbn_rx *rx;
	const char *p;
	struct rx_node n[RX_NODES];
	int nn, depth;
	const char *why;
};

static int rx_node(struct rx_parse *P, int type, int a, int b)
{
	struct rx_node *n;

	if (P->nn >= RX_NODES) {
		P->why = "the pattern is too long";
		return -1;
	}
	n = &P->n[P->nn];
	memset(n, 0, sizeof(*n));
	n->type = (uint8_t)type;
	n->a = (int16_t)a;
	n->b = (int16_t)b;
	return P->nn++;
}

/* --- bracket expressions --------------------------------------------------- */

static void rx_bit(uint8_t *set, unsigned c)
{
	set[c >> 3] |= (uint8_t)(1u << (c & 7));
}

/* ASCII classes, the same in every locale (the agent's and the launcher's
 * locales need not agree). */
static int rx_in_class(const char *name, size_t len, unsigned c)
{
#define IS(s) (len == sizeof(s) - 1 && memcmp(name, s, len) == 0)
	int upper = c >= 'A' && c <= 'Z', lower = c >= 'a' && c <= 'z', digit = c >= '0' && c <= '9';
	int alpha = upper || lower, print = c >= 0x20 && c < 0x7f;

	if (IS("alpha"))
		return alpha;
	if (IS("digit"))
		return digit;
	if (IS("alnum"))
		return alpha || digit;
	if (IS("upper"))
		return upper;
	if (IS("lower"))
		return lower;
	if (IS("space"))
		return c == ' ' || (c >= '\t' && c <= '\r');
	if (IS("blank"))
		return c == ' ' || c == '\t';
	if (IS("punct"))
		return print && c != ' ' && !alpha && !digit;
	if (IS("print"))
		return print;
	if (IS("graph"))
		return print && c != ' ';
	if (IS("cntrl"))
		return c < 0x20 || c == 0x7f;
	if (IS("xdigit"))
		return digit || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
	return -1;
#undef IS
}

static int rx_new_set(struct rx_parse *P)
{
	if (P->rx->nset >= CBN_RX_SETS) {
		P->why = "the pattern has too many bracket expressions";
		return -1;
	}
	memset(P->rx->set[P->rx->nset], 0, 32);
	return P->rx->nset++;
}

/* A class as a set: \w \W \s \S, or after "[:" (name, len). */
static int rx_class_set(struct rx_parse *P, const char *name, size_t len, int neg)
{
	int s = rx_new_set(P), k;
	unsigned c;

	if (s < 0)
		return -1;
	for (c = 0; c < 256; c++) {
		k = rx_in_class(name, len, c);
		if (k < 0) {
			P->why = "unknown character class";
			return -1;
		}
		if (k != neg)
			rx_bit(P->rx->set[s], c);
	}
	return s;
}

/* After '[': up to and over the closing ']'. */
static int rx_bracket(struct rx_parse *P)
{
	int s = rx_new_set(P), neg = 0, first = 1;
	uint8_t *set;
	unsigned c, d, i;

	if (s < 0)
		return -1;
	set = P->rx->set[s];
	if (*P->p == '^') {
		neg = 1;
		P->p++;
	}
	for (;; first = 0) {
		c = (unsigned char)*P->p;
		if (!c) {
			P->why = "unmatched [";
			return -1;
		}
		if (c == ']' && !first) {
			P->p++;
			break;
		}
		if (c == '[' && (P->p[1] == '=' || P->p[1] == '.')) {
			P->why = "[= =] and [. .] are not supported";
			return -1;
		}
		if (c == '[' && P->p[1] == ':') {
			const char *name = P->p + 2, *end = strstr(name, ":]");

			if (!end) {
				P->why = "unmatched [:";
				return -1;
			}
			for (d = 0; d < 256; d++) {
				int k = rx_in_class(name, (size_t)(end - name), d);

				if (k < 0) {
					P->why = "unknown character class";
					return -1;
				}
				if (k)
					rx_bit(set, d);
			}
			P->p = end + 2;
			continue;
		}
		P->p++;
		if (*P->p == '-' && P->p[1] && P->p[1] != ']') {
			d = (unsigned char)P->p[1];
			if (d < c) {
				P->why = "invalid range end";
				return -1;
			}
			for (i = c; i <= d; i++)
				rx_bit(set, i);
			P->p += 2;
			continue;
		}
		rx_bit(set, c);
	}
	if (neg)
		for (i = 0; i < 32; i++)
			set[i] = (uint8_t)~set[i];
	set[0] &= (uint8_t)~1u;          /* never the terminating NUL */
	return s;
}

/* --- the tree -------------------------------------------------------------- */

static int rx_alt(struct rx_parse *P);

static int rx_leaf(struct rx_parse *P, int type, unsigned ch)
{
	int n = rx_node(P, type, -1, -1);

	if (n >= 0)
		P->n[n].ch = (uint8_t)ch;
	return n;
}

static int rx_atom(struct rx_parse *P)
{
	unsigned c = (unsigned char)*P->p;
	int n, s;

	switch (c) {
	case '(':
		P->p++;
		if (++P->depth > RX_MAX_DEPTH) {
			P->why = "groups nested too deep";
			return -1;
		}
		n = rx_alt(P);
		if (n < 0)
			return -1;
		if (*P->p != ')') {
			P->why = "unmatched (";
			return -1;
		}
		P->p++;
		P->depth--;
		return n;
	case '[':
		P->p++;
		s = rx_bracket(P);
		return s < 0 ? -1 : rx_leaf(P, N_SET, (unsigned)s);
	case '.':
		P->p++;
		return rx_leaf(P, N_ANY, 0);
	case '^':
		P->p++;
		return rx_leaf(P, N_BOL, 0);
	case '$':
		P->p++;
		return rx_leaf(P, N_EOL, 0);
	case '\\':
		c = (unsigned char)P->p[1];
		if (!c) {
			P->why = "trailing backslash";
			return -1;
		}
		P->p += 2;
		if (c >= '1' && c <= '9') {
			P->why = "back-references are not supported";
			return -1;
		}
		if (c == 'w' || c == 'W' || c == 's' || c == 'S') {
			s = (c == 'w' || c == 'W') ? rx_class_set(P, "alnum", 5, c == 'W')
						   : rx_class_set(P, "space", 5, c == 'S');
			/* \w is alnum and '_' */
			if (s >= 0 && (c == 'w' || c == 'W')) {
				if (c == 'w')
					rx_bit(P->rx->set[s], '_');
				else
					P->rx->set[s]['_' >> 3] &= (uint8_t)~(1u << ('_' & 7));
			}
			return s < 0 ? -1 : rx_leaf(P, N_SET, (unsigned)s);
		}
		return rx_leaf(P, N_LIT, c);
	default:
		/* '*', '+', '?' and '{' with nothing to repeat are literals */
		P->p++;
		return rx_leaf(P, N_LIT, c);
	}
}

/* "{m}", "{m,}", "{m,n}" at P->p ('{' and a digit): 1, 0 when not a bound
 * (a literal '{'), -1 on error. */
static int rx_bound(struct rx_parse *P, int *min, int *max)
{
	const char *q = P->p + 1;
	int m = 0, n;

	if (*q < '0' || *q > '9')
		return 0;
	while (*q >= '0' && *q <= '9' && m <= 255)
		m = m * 10 + (*q++ - '0');
	n = m;
	if (*q == ',') {
		q++;
		if (*q == '}') {
			n = RX_INF;
		} else {
			n = 0;
			if (*q < '0' || *q > '9') {
				P->why = "invalid {m,n} bound";
				return -1;
			}
			while (*q >= '0' && *q <= '9' && n <= 255)
				n = n * 10 + (*q++ - '0');
		}
	}
	if (*q != '}' || m > 255 || (n != RX_INF && (n > 255 || n < m))) {
		P->why = "invalid {m,n} bound (at most 255)";
		return -1;
	}
	P->p = q + 1;
	*min = m;
	*max = n;
	return 1;
}

static int rx_repeat(struct rx_parse *P)
{
	int a = rx_atom(P), min, max, k, r;

	while (a >= 0) {
		switch (*P->p) {
		case '*': min = 0; max = RX_INF; P->p++; break;
		case '+': min = 1; max = RX_INF; P->p++; break;
		case '?': min = 0; max = 1; P->p++; break;
		case '{':
			k = rx_bound(P, &min, &max);
			if (k < 0)
				return -1;
			if (k == 0)
				return a;
			break;
		default:
			return a;
		}
		r = rx_node(P, N_REP, a, -1);
		if (r < 0)
			return -1;
		P->n[r].min = (int16_t)min;
		P->n[r].max = (int16_t)max;
		a = r;
	}
	return a;
}

static int rx_cat(struct rx_parse *P)
{
	int left = -1, r;

	/* an unmatched ')' is a literal, as glibc's */
	while (*P->p && *P->p != '|' && !(*P->p == ')' && P->depth > 0)) {
		r = rx_repeat(P);
		if (r < 0)
			return -1;
		left = left < 0 ? r : rx_node(P, N_CAT, left, r);
		if (left < 0)
			return -1;
	}
	return left < 0 ? rx_node(P, N_EMPTY, -1, -1) : left;
}

static int rx_alt(struct rx_parse *P)
{
	int left = rx_cat(P), r;

	while (left >= 0 && *P->p == '|') {
		P->p++;
		r = rx_cat(P);
		if (r < 0)
			return -1;
		left = rx_node(P, N_ALT, left, r);
	}
	return left;
}

/* --- the program ----------------------------------------------------------- */

static int rx_emit1(struct rx_parse *P, int op, int arg, int x, int y)
{
	struct cbn_rx *rx = P->rx;

	if (rx->ninsn >= CBN_RX_INSNS) {
		P->why = "the pattern is too large once its repeats are expanded";
		return -1;
	}
	rx->insn[rx->ninsn] = (struct cbn_rx_insn){(uint8_t)op, (uint8_t)arg, (int16_t)x, (int16_t)y};
	return rx->ninsn++;
}

static int rx_gen(struct rx_parse *P, int ni)
{
	const struct rx_node *n = &P->n[ni];
	struct cbn_rx *rx = P->rx;
	int i, k, chain = -1, l1, l2;

	switch (n->type) {
	case N_EMPTY:
		return 0;
	case N_LIT:
		return rx_emit1(P, RX_CHAR, n->ch, 0, 0) < 0 ? -1 : 0;
	case N_ANY:
		return rx_emit1(P, RX_ANY, 0, 0, 0) < 0 ? -1 : 0;
	case N_SET:
		return rx_emit1(P, RX_SET, n->ch, 0, 0) < 0 ? -1 : 0;
	case N_BOL:
		return rx_emit1(P, RX_BOL, 0, 0, 0) < 0 ? -1 : 0;
	case N_EOL:
		return rx_emit1(P, RX_EOL, 0, 0, 0) < 0 ? -1 : 0;
	case N_CAT:
		return rx_gen(P, n->a) < 0 || rx_gen(P, n->b) < 0 ? -1 : 0;
	case N_ALT:
		/* SPLIT L1, L2; L1: a; JMP end; L2: b; end: */
		if ((l1 = rx_emit1(P, RX_SPLIT, 0, 0, 0)) < 0)
			return -1;
		rx->insn[l1].x = (int16_t)rx->ninsn;
		if (rx_gen(P, n->a) < 0 || (l2 = rx_emit1(P, RX_JMP, 0, 0, 0)) < 0)
			return -1;
		rx->insn[l1].y = (int16_t)rx->ninsn;
		if (rx_gen(P, n->b) < 0)
			return -1;
		rx->insn[l2].x = (int16_t)rx->ninsn;
		return 0;
	case N_REP:
		for (i = 0; i < n->min; i++)
			if (rx_gen(P, n->a) < 0)
				return -1;
		if (n->max == RX_INF) {
			/* L1: SPLIT L2, end; L2: a; JMP L1; end: */
			if ((l1 = rx_emit1(P, RX_SPLIT, 0, 0, 0)) < 0)
				return -1;
			rx->insn[l1].x = (int16_t)rx->ninsn;
			if (rx_gen(P, n->a) < 0 || rx_emit1(P, RX_JMP, 0, l1, 0) < 0)
				return -1;
			rx->insn[l1].y = (int16_t)rx->ninsn;
			return 0;
		}
		/* each optional copy: SPLIT next, end; a (the SPLITs chained
		 * through y until end is known) */
		for (i = n->min; i < n->max; i++) {
			if ((k = rx_emit1(P, RX_SPLIT, 0, 0, chain)) < 0)
				return -1;
			rx->insn[k].x = (int16_t)rx->ninsn;
			chain = k;
			if (rx_gen(P, n->a) < 0)
				return -1;
		}
		while (chain >= 0) {
			k = rx->insn[chain].y;
			rx->insn[chain].y = (int16_t)rx->ninsn;
			chain = k;
		}
		return 0;
	}
	return -1;
}

int cbn_rx_compile(struct cbn_rx *rx, const char *pattern, char *why, size_t len)
{
	/* The tree is ~5 KiB: static would not be reentrant, and the launcher
	 * and the agent both call this from normal code. */
	struct rx_parse P;
	int root;

	memset(rx, 0, sizeof(*rx));
	memset(&P, 0, sizeof(P));
	P.rx = rx;
	P.p = pattern ? pattern : "";
	root = rx_alt(&P);
	if (root < 0 || rx_gen(&P, root) < 0 || rx_emit1(&P, RX_MATCH, 0, 0, 0) < 0) {
		if (why && len)
			snprintf(why, len, "%s", P.why ? P.why : "invalid pattern");
		rx->ninsn = 0;
		return -1;
	}
	return 0;
}

/* --- the search ------------------------------------------------------------ */

struct rx_run {
	const struct cbn_rx *rx;
	const char *s;
	uint32_t gen;
	uint32_t mark[CBN_RX_INSNS];
	int16_t stack[2 * CBN_RX_INSNS + 2];
};

/* Follow pc's jumps and assertions at position i; the consuming instructions
 * reached go to list.  1 when MATCH is reached. */
static int rx_add(struct rx_run *R, int16_t *list, int *n, int pc, size_t i)
{
	const struct cbn_rx_insn *in;
	int sp = 0;

	R->stack[sp++] = (int16_t)pc;
	while (sp) {
		pc = R->stack[--sp];
		if (R->mark[pc] == R->gen)
			continue;
		R->mark[pc] = R->gen;
		in = &R->rx->insn[pc];
		switch (in->op) {
		case RX_JMP:
			R->stack[sp++] = in->x;
			break;
		case RX_SPLIT:
			R->stack[sp++] = in->y;
			R->stack[sp++] = in->x;
			break;
		case RX_BOL:
			if (i == 0)
				R->stack[sp++] = (int16_t)(pc + 1);
			break;
		case RX_EOL:
			if (!R->s[i])
				R->stack[sp++] = (int16_t)(pc + 1);
			break;
		case RX_MATCH:
			return 1;
		default:
			list[(*n)++] = (int16_t)pc;
		}
	}
	return 0;
}

int cbn_rx_search(const struct cbn_rx *rx, const char *s)
{
	struct rx_run R;
	int16_t a[CBN_RX_INSNS], b[CBN_RX_INSNS], *cl = a, *nl = b, *t;
	int nc = 0, nn, k;
	size_t i;

	if (!rx || !rx->ninsn || !s)
		return 0;
	R.rx = rx;
	R.s = s;
	R.gen = 1;
	memset(R.mark, 0, sizeof(R.mark));
	if (rx_add(&R, cl, &nc, 0, 0))
		return 1;
	for (i = 0; s[i]; i++) {
		unsigned c = (unsigned char)s[i];

		R.gen++;
		nn = 0;
		for (k = 0; k < nc; k++) {
			const struct cbn_rx_insn *in = &rx->insn[cl[k]];
			int ok = in->op == RX_ANY || (in->op == RX_CHAR && in->arg == c) ||
				 (in->op == RX_SET && (rx->set[in->arg][c >> 3] >> (c & 7) & 1));

			if (ok && rx_add(&R, nl, &nn, cl[k] + 1, i + 1))
				return 1;
		}
		/* unanchored: a match may also start at the next byte */
		if (rx_add(&R, nl, &nn, 0, i + 1))
			return 1;
		t = cl;
		cl = nl;
		nl = t;
		nc = nn;
	}
	return 0;
}
