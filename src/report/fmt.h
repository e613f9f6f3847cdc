/*
 * fmt.h — number and table formatting shared by the text reports (CPU and
 * CUDA): percentages, byte sizes, UTF-8-aware truncation with "…", and a
 * small column-table printer; times are util.h's (util_fmt_time).  Launcher
 * side only.
 * Every function is locale-independent as long as nobody calls setlocale()
 * (cbottleneck never does): numbers use '.' and no thousands grouping.
 */
#ifndef CBN_FMT_H
#define CBN_FMT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* "12.34%" of part/whole; "0.00%" when whole is 0. */
char *fmt_pct(char *buf, size_t len, double part, double whole);
/* "512 B", "1.50 KiB", "3.20 MiB", "1.02 GiB": util_fmt_bytes (1024-based, IEC
 * names, the same in every output). */
char *fmt_bytes(char *buf, size_t len, uint64_t bytes);
/* Rate in Hz: "997 Hz", "10 kHz", "1.5 kHz". */
/* "SIGPROF", "SIGRTMAX-3", "SIGRTMIN+2", or the number when unnamed. */
const char *fmt_signal(char *buf, size_t len, int sig);
char *fmt_hz(char *buf, size_t len, double hz);

/* Display width of a UTF-8 string, in columns (one per code point). */
size_t fmt_width(const char *s);
/* Copy s into buf, cut to at most width columns; a cut string ends in "…"
 * (or starts with it when from_left, useful for long paths).  Returns buf. */
char *fmt_trunc(char *buf, size_t len, const char *s, size_t width, int from_left);

/* Print s padded with spaces to width columns (left or right aligned), cutting
 * it with "…" when it is wider.  Never prints a partial UTF-8 sequence. */
void fmt_pad(FILE *out, const char *s, size_t width, int right);

/*
 * A column table.  Rows are buffered so widths fit the content: each column is
 * max(title, cells) wide, clamped to [min_width, max_width] (0 = no bound);
 * cells wider than the column are cut with "…" (from the left for columns
 * with FMT_CUT_LEFT, e.g. paths).  Columns are separated by two spaces.
 *
 *	struct fmt_table *t = fmt_table_new();
 *	fmt_table_col(t, "Name", FMT_LEFT, 0, 55);
 *	fmt_table_col(t, "Calls", FMT_RIGHT, 6, 0);
 *	fmt_table_row(t);
 *	fmt_table_cell(t, "%s", name);
 *	fmt_table_cell(t, "%" PRIu64, calls);
 *	fmt_table_print(t, stdout, FMT_RULES);
 *	fmt_table_free(t);
 *
 * Allocation failures make the table print what it holds and nothing more;
 * these helpers never abort.
 */
enum fmt_align { FMT_LEFT = 0, FMT_RIGHT = 1, FMT_CUT_LEFT = 2 /* or'ed with an alignment */ };
enum fmt_table_style {
	FMT_PLAIN = 0,   /* header line, then rows */
	FMT_RULES = 1,   /* dashed rules above and below the header and below the rows (torch) */
};

struct fmt_table;
struct fmt_table *fmt_table_new(void);
void fmt_table_free(struct fmt_table *t);
/* Add a column; call before the first row.  flags: enum fmt_align bits. */
int fmt_table_col(struct fmt_table *t, const char *title, int flags, int min_width,
		  int max_width);
/* Start a new row; cells are then filled left to right. */
int fmt_table_row(struct fmt_table *t);
__attribute__((format(printf, 2, 3))) int fmt_table_cell(struct fmt_table *t, const char *fmt,
							  ...);
size_t fmt_table_nrows(const struct fmt_table *t);
/* Print with indent spaces before every line. */
void fmt_table_print(const struct fmt_table *t, FILE *out, int style, int indent);

/* path relative to the current directory when it lies under it, as the
 * CPU tables print paths (the JSON keeps them whole); "" for NULL. */
const char *fmt_rel_path(const char *path);

/* s with the current directory's "CWD/" taken out of every path in it (a
 * verdict, a rule's evidence); nothing for NULL. */
void fmt_rel_puts(FILE *out, const char *s);

/* The line under a table that left rows out, the one place that prints it:
 * "   (3575 more functions: DETAIL; use --limit)", without ": DETAIL" when
 * detail is NULL.  Nothing when nmore is 0. */
void fmt_more_line(FILE *out, size_t nmore, const char *what, const char *detail);

/* fmt_more_line() with the share the rows left out hold:
 * "   (3575 more functions: 12.34% of the self time; use --limit)"; what
 * "of" names the whole (NULL or whole <= 0: no share).  Nothing when
 * shown == n. */
void fmt_more(FILE *out, size_t shown, size_t n, const char *what, double part, double whole,
	      const char *of);

/* The name pstats prints for a function: "file:line(name)", "~:0(name)" when
 * the file is unknown and there is no module, "[module]:0(name)" when only the
 * module is known.  Used by the CPU table, and by anyone who prints a function
 * the same way (launch sites).  Returns buf. */
char *fmt_func(char *buf, size_t len, const char *name, const char *file, uint32_t line,
	       const char *module);

/* Recommendations as every view prints them: title on a line of its own,
 * then "  [id] message" and "      evidence: ..." per finding; findings of
 * one rule with the same advice (alloc-churn at three sites) share one
 * "[id] message" line, an evidence line each, in the first one's place.  Nothing at
 * all when n is 0, so callers print their own blank lines around it.  One
 * function for the CUDA, memory, steps and CPU views so they read alike. */
struct rule_finding;
void fmt_recos(FILE *out, const char *title, const struct rule_finding *f, size_t n);

/* Print lines[0..n) after prefix, one per line, folding repeats: lines that
 * differ only in a process id ("CUDA: pid 4242 (python3): forked ...",
 * "4242.0.cbp: ...") print once, the first as it reads, then "(the same in
 * pid 4243, pid 4244 ...: 17 processes in all)".  The JSON keeps them all. */
void fmt_lines_folded(FILE *out, const char *prefix, char *const *lines, size_t n);

#endif
