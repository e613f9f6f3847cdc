/*
 * fmt.c — formatting helpers shared by the text reports: how many rows a
 * table shows (report_limit), percentages, sizes, UTF-8-aware truncation and
 * the buffered column table.  Below text.c and every view's text writer.
 */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fmt.h"
#include "report.h"
#include "rules.h"
#include "util.h"

size_t report_limit(const struct report_opts *o, size_t n)
{
	int l = o ? o->limit : 0;

	if (l == 0)
		l = REPORT_DEFAULT_LIMIT;
	return l > 0 && (size_t)l < n ? (size_t)l : n;
}

char *fmt_pct(char *buf, size_t len, double part, double whole)
{
	snprintf(buf, len, "%.2f%%", whole > 0 ? 100.0 * part / whole : 0.0);
	return buf;
}

char *fmt_bytes(char *buf, size_t len, uint64_t bytes)
{
	return util_fmt_bytes(buf, len, (double)bytes);
}

char *fmt_hz(char *buf, size_t len, double hz)
{
	/* one decimal at most: 1e9 / period rarely lands on an integer */
	double r = (double)(long long)(hz * 10.0 + 0.5) / 10.0;
	long long i = (long long)r;

	if (r >= 1e3 && (double)i == r && i % 1000 == 0)
		snprintf(buf, len, "%lld kHz", i / 1000);
	else if (r >= 1e4)
		snprintf(buf, len, "%.1f kHz", r / 1e3);
	else if ((double)i == r)
		snprintf(buf, len, "%lld Hz", i);
	else
		snprintf(buf, len, "%.1f Hz", r);
	return buf;
}

/* Continuation bytes (10xxxxxx) do not start a column. */
static int fmt_is_cont(unsigned char c)
{
	return (c & 0xc0) == 0x80;
}

size_t fmt_width(const char *s)
{
	size_t w = 0;

	for (; s && *s; s++)
		if (!fmt_is_cont((unsigned char)*s))
			w++;
	return w;
}

/* Byte offset just past the first n columns of s. */
static size_t fmt_cols_to_bytes(const char *s, size_t n)
{
	size_t i = 0, w = 0;

	while (s[i]) {
		if (!fmt_is_cont((unsigned char)s[i])) {
			if (w == n)
				break;
			w++;
		}
		i++;
	}
	return i;
}

/* snprintf into a short buffer may cut inside a UTF-8 sequence: drop the
 * partial sequence at the end. */
static void fmt_fix_tail(char *buf)
{
	size_t nb = strlen(buf), k = nb, need;
	unsigned char c;

	while (k && fmt_is_cont((unsigned char)buf[k - 1]))
		k--;
	if (!k)
		return;
	c = (unsigned char)buf[k - 1];
	if (c < 0x80)
		return;
	need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
	if (k - 1 + need > nb)
		buf[k - 1] = '\0';
}

static const char fmt_ellipsis[] = "\xe2\x80\xa6"; /* U+2026, one column */

char *fmt_trunc(char *buf, size_t len, const char *s, size_t width, int from_left)
{
	size_t w, nb, off;

	if (!len)
		return buf;
	if (!s)
		s = "";
	w = fmt_width(s);
	if (w <= width) {
		snprintf(buf, len, "%s", s);
		return buf;
	}
	if (width == 0) {
		buf[0] = '\0';
		return buf;
	}
	if (from_left) {
		/* keep the last width-1 columns */
		off = fmt_cols_to_bytes(s, w - (width - 1));
		snprintf(buf, len, "%s%s", fmt_ellipsis, s + off);
	} else {
		nb = fmt_cols_to_bytes(s, width - 1);
		snprintf(buf, len, "%.*s%s", (int)nb, s, fmt_ellipsis);
	}
	fmt_fix_tail(buf);
	return buf;
}

static void fmt_spaces(FILE *out, size_t n)
{
	while (n--)
		fputc(' ', out);
}

static void fmt_pad_cut(FILE *out, const char *s, size_t width, int right, int cut_left)
{
	size_t w = fmt_width(s);

	if (w > width) {
		size_t len = strlen(s) + sizeof(fmt_ellipsis);
		char *tmp = malloc(len);

		if (!tmp) {
			fputs(s, out);
			return;
		}
		fmt_trunc(tmp, len, s, width, cut_left);
		fputs(tmp, out);
		free(tmp);
		return;
	}
	if (right)
		fmt_spaces(out, width - w);
	fputs(s, out);
	if (!right)
		fmt_spaces(out, width - w);
}

void fmt_pad(FILE *out, const char *s, size_t width, int right)
{
	fmt_pad_cut(out, s ? s : "", width, right, 0);
}

/* The current directory, read once ("" when unknown); its length in *n. */
static const char *fmt_cwd(size_t *n)
{
	static char cwd[4096];
	static size_t len;
	static int done;

	if (!done) {
		done = 1;
		if (getcwd(cwd, sizeof(cwd)))
			len = strlen(cwd);
	}
	*n = len;
	return cwd;
}

const char *fmt_rel_path(const char *path)
{
	size_t n;
	const char *cwd = fmt_cwd(&n);

	if (!path)
		return "";
	if (n > 1 && !strncmp(path, cwd, n) && path[n] == '/')
		return path + n + 1;
	return path;
}

void fmt_rel_puts(FILE *out, const char *s)
{
	size_t n;
	const char *cwd = fmt_cwd(&n), *hit;

	if (!s)
		return;
	while (n > 1 && (hit = strstr(s, cwd)) && hit[n] == '/') {
		fwrite(s, 1, (size_t)(hit - s), out);
		s = hit + n + 1;
	}
	fputs(s, out);
}

void fmt_more_line(FILE *out, size_t nmore, const char *what, const char *detail)
{
	if (!nmore)
		return;
	fprintf(out, "   (%zu more %s%s%s; use --limit)\n", nmore, what, detail ? ": " : "",
		detail ? detail : "");
}

void fmt_more(FILE *out, size_t shown, size_t n, const char *what, double part, double whole,
	      const char *of)
{
	char b[32], detail[160];

	if (shown >= n)
		return;
	if (of && whole > 0) {
		snprintf(detail, sizeof(detail), "%s of %s", fmt_pct(b, sizeof(b), part, whole), of);
		fmt_more_line(out, n - shown, what, detail);
	} else {
		fmt_more_line(out, n - shown, what, NULL);
	}
}

char *fmt_func(char *buf, size_t len, const char *name, const char *file, uint32_t line,
	       const char *module)
{
	if (!name)
		name = "?";
	if (file && *file)
		snprintf(buf, len, "%s:%u(%s)", file, line, name);
	else if (module && *module)
		snprintf(buf, len, "[%s]:0(%s)", module, name);
	else
		snprintf(buf, len, "~:0(%s)", name);
	return buf;
}

/* --- the column table ----------------------------------------------------- */

struct fmt_col {
	char *title;
	int flags, min_width, max_width;
};

struct fmt_table {
	struct fmt_col *cols;
	size_t ncols;
	char **cells;            /* nrows * ncols, NULL = empty cell */
	size_t nrows, cap_rows;
	size_t cur;              /* next cell in the current row */
	int broken;              /* an allocation failed: stop accepting data */
};

struct fmt_table *fmt_table_new(void)
{
	return calloc(1, sizeof(struct fmt_table));
}

void fmt_table_free(struct fmt_table *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->ncols; i++)
		free(t->cols[i].title);
	for (i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cols);
	free(t->cells);
	free(t);
}

int fmt_table_col(struct fmt_table *t, const char *title, int flags, int min_width,
		  int max_width)
{
	struct fmt_col *c;

	if (!t || t->broken || t->nrows)
		return -1;
	c = realloc(t->cols, (t->ncols + 1) * sizeof(*c));
	if (!c) {
		t->broken = 1;
		return -1;
	}
	t->cols = c;
	c = &t->cols[t->ncols];
	c->title = strdup(title ? title : "");
	if (!c->title) {
		t->broken = 1;
		return -1;
	}
	c->flags = flags;
	c->min_width = min_width;
	c->max_width = max_width;
	t->ncols++;
	return 0;
}

int fmt_table_row(struct fmt_table *t)
{
	if (!t || t->broken || !t->ncols)
		return -1;
	if (t->nrows == t->cap_rows) {
		size_t cap = t->cap_rows ? 2 * t->cap_rows : 16;
		size_t ncells;
		char **cells = util_mul(cap, t->ncols, &ncells) ? NULL :
			       util_reallocarray(t->cells, ncells, sizeof(*cells));

		if (!cells) {
			t->broken = 1;
			return -1;
		}
		t->cells = cells;
		t->cap_rows = cap;
	}
	memset(&t->cells[t->nrows * t->ncols], 0, t->ncols * sizeof(char *));
	t->nrows++;
	t->cur = 0;
	return 0;
}

int fmt_table_cell(struct fmt_table *t, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	int n;

	if (!t || t->broken || !t->nrows || t->cur >= t->ncols)
		return -1;
	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0) {
		t->broken = 1;
		return -1;
	}
	t->cells[(t->nrows - 1) * t->ncols + t->cur++] = s;
	return 0;
}

size_t fmt_table_nrows(const struct fmt_table *t)
{
	return t ? t->nrows : 0;
}

static void fmt_rule(FILE *out, const size_t *w, size_t ncols, int indent)
{
	size_t i, total = 0;

	for (i = 0; i < ncols; i++)
		total += w[i] + (i ? 2 : 0);
	fmt_spaces(out, (size_t)indent);
	while (total--)
		fputc('-', out);
	fputc('\n', out);
}

static void fmt_line(FILE *out, const struct fmt_table *t, const size_t *w, char *const *cells,
		     int header, int indent)
{
	size_t i;

	fmt_spaces(out, (size_t)indent);
	for (i = 0; i < t->ncols; i++) {
		const char *s = header ? t->cols[i].title : cells[i];
		int right = t->cols[i].flags & FMT_RIGHT;
		int last = i + 1 == t->ncols;

		if (i)
			fputs("  ", out);
		if (last && !right && fmt_width(s ? s : "") <= w[i]) {
			fputs(s ? s : "", out); /* no trailing blanks */
			continue;
		}
		fmt_pad_cut(out, s ? s : "", w[i], right, t->cols[i].flags & FMT_CUT_LEFT);
	}
	fputc('\n', out);
}

void fmt_table_print(const struct fmt_table *t, FILE *out, int style, int indent)
{
	size_t *w, i, r;

	if (!t || !t->ncols)
		return;
	w = calloc(t->ncols, sizeof(*w));
	if (!w)
		return;
	for (i = 0; i < t->ncols; i++) {
		const struct fmt_col *c = &t->cols[i];

		w[i] = fmt_width(c->title);
		for (r = 0; r < t->nrows; r++) {
			const char *s = t->cells[r * t->ncols + i];
			size_t cw = fmt_width(s ? s : "");

			if (cw > w[i])
				w[i] = cw;
		}
		if (c->min_width > 0 && w[i] < (size_t)c->min_width)
			w[i] = (size_t)c->min_width;
		if (c->max_width > 0 && w[i] > (size_t)c->max_width)
			w[i] = (size_t)c->max_width;
	}
	if (style == FMT_RULES)
		fmt_rule(out, w, t->ncols, indent);
	fmt_line(out, t, w, NULL, 1, indent);
	if (style == FMT_RULES)
		fmt_rule(out, w, t->ncols, indent);
	for (r = 0; r < t->nrows; r++)
		fmt_line(out, t, w, &t->cells[r * t->ncols], 0, indent);
	if (style == FMT_RULES)
		fmt_rule(out, w, t->ncols, indent);
	free(w);
}

const char *fmt_signal(char *buf, size_t len, int sig)
{
	const char *abbr = sig > 0 && sig < SIGRTMIN ? sigabbrev_np(sig) : NULL;

	if (abbr)
		snprintf(buf, len, "SIG%s", abbr);
	else if (sig >= SIGRTMIN && sig <= SIGRTMAX && SIGRTMAX - sig <= sig - SIGRTMIN)
		snprintf(buf, len, sig == SIGRTMAX ? "SIGRTMAX" : "SIGRTMAX-%d", SIGRTMAX - sig);
	else if (sig >= SIGRTMIN && sig <= SIGRTMAX)
		snprintf(buf, len, sig == SIGRTMIN ? "SIGRTMIN" : "SIGRTMIN+%d", sig - SIGRTMIN);
	else
		snprintf(buf, len, "%d", sig);
	return buf;
}

/* Two findings of one rule with the same advice. */
static int fmt_same_reco(const struct rule_finding *a, const struct rule_finding *b)
{
	return !strcmp(a->id ? a->id : "?", b->id ? b->id : "?") &&
	       !strcmp(a->message ? a->message : "", b->message ? b->message : "");
}

void fmt_recos(FILE *out, const char *title, const struct rule_finding *f, size_t n)
{
	size_t i, j;

	if (!n)
		return;
	fprintf(out, "%s\n", title);
	for (i = 0; i < n; i++) {
		for (j = 0; j < i && !fmt_same_reco(&f[j], &f[i]); j++)
			;
		if (j < i)
			continue; /* said with the first of its rule */
		fprintf(out, "  [%s] ", f[i].id ? f[i].id : "?");
		fmt_rel_puts(out, f[i].message);
		fputc('\n', out);
		for (j = i; j < n; j++) {
			if (j > i && !fmt_same_reco(&f[j], &f[i]))
				continue;
			fputs("      evidence: ", out);
			fmt_rel_puts(out, f[j].evidence);
			fputc('\n', out);
		}
	}
}

/* --- repeated lines ---------------------------------------------------------- */

/* The line with its process ids taken out ("pid 4242" -> "pid #", a leading
 * "4242.0.cbp" -> "#.cbp"), into key; the first pid in *pid (0 none). */
static void fmt_fold_key(const char *line, char *key, size_t len, unsigned long *pid)
{
	const char *s = line;
	size_t k = 0;

	*pid = 0;
	if (*s >= '0' && *s <= '9') {
		const char *e = s;

		/* PID.SEQ.cbp, a session file's name */
		while (*e >= '0' && *e <= '9')
			e++;
		if (*e == '.' && e[1] >= '0' && e[1] <= '9') {
			const char *f = e + 1;

			while (*f >= '0' && *f <= '9')
				f++;
			if (!strncmp(f, ".cbp", 4)) {
				*pid = strtoul(s, NULL, 10);
				s = f + 4;
				k = (size_t)snprintf(key, len, "#.cbp");
			}
		}
	}
	for (; *s && k + 1 < len; s++) {
		key[k++] = *s;
		if (k >= 4 && !strncmp(&key[k - 4], "pid ", 4) && s[1] >= '0' && s[1] <= '9') {
			if (!*pid)
				*pid = strtoul(s + 1, NULL, 10);
			while (s[1] >= '0' && s[1] <= '9')
				s++;
			if (k + 1 < len)
				key[k++] = '#';
		}
	}
	key[k < len ? k : len - 1] = '\0';
}

void fmt_lines_folded(FILE *out, const char *prefix, char *const *lines, size_t n)
{
	unsigned char *done = calloc(n ? n : 1, 1);
	char key[1024], other[1024];
	size_t i, j;

	for (i = 0; i < n; i++) {
		unsigned long pid, opid;
		size_t more = 0, listed = 0;

		if (done && done[i])
			continue;
		fprintf(out, "%s%s", prefix, lines[i]);
		if (!done) { /* out of memory: every line, as it is */
			fputc('\n', out);
			continue;
		}
		fmt_fold_key(lines[i], key, sizeof(key), &pid);
		for (j = i + 1; j < n; j++) {
			if (done[j])
				continue;
			fmt_fold_key(lines[j], other, sizeof(other), &opid);
			if (strcmp(key, other) != 0 || !pid || !opid)
				continue;
			done[j] = 1;
			if (!more++)
				fprintf(out, " (the same in");
			if (listed < 8) {
				fprintf(out, "%s pid %lu", listed ? "," : "", opid);
				listed++;
			}
		}
		if (more > listed)
			fprintf(out, " and %zu more", more - listed);
		if (more)
			fprintf(out, ": %zu process%s in all)", more + 1, "es");
		fputc('\n', out);
	}
	free(done);
}
