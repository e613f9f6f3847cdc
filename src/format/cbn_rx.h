/*
 * cbn_rx.h — the --step matcher: POSIX extended regular expressions without
 * allocation.  A range or mark whose name matches --step is a step; the agent
 * decides that inside the program, where glibc's regcomp and regexec would
 * allocate with the program's malloc (issue 31), and the launcher's step
 * finder uses the same code, so both sides agree on every name.
 *
 * Supported: literals and \-escapes, ., bracket expressions with ranges,
 * negation and the [:alpha:]-style classes, ^ and $, groups, alternation,
 * *, +, ? and {m}, {m,}, {m,n} (m, n at most 255), and GNU's \w \W \s \S.
 * Refused with a sentence: back-references, [= =] and [. .], an unclosed
 * group or bracket (a lone ')' is a literal, as in glibc), a program larger than CBN_RX_INSNS instructions.
 * Matching is a Thompson simulation: linear in the name, no recursion, a few
 * KiB of stack; 1 when the pattern matches anywhere in the string (an
 * unanchored search, as regexec's).  rx.c.
 */
#ifndef CBN_RX_H
#define CBN_RX_H

#include <stddef.h>
#include <stdint.h>

#define CBN_RX_INSNS 512
#define CBN_RX_SETS 48

struct cbn_rx_insn {
	uint8_t op;                      /* rx.c's RX_* */
	uint8_t arg;                     /* a literal byte, or a set's index */
	int16_t x, y;                    /* jump targets */
};

struct cbn_rx {
	struct cbn_rx_insn insn[CBN_RX_INSNS];
	uint8_t set[CBN_RX_SETS][32];    /* bracket expressions, one bit a byte */
	int ninsn, nset;
};

/* Compile pattern: 0, or -1 with why (a sentence) in why[len]. */
int cbn_rx_compile(struct cbn_rx *rx, const char *pattern, char *why, size_t len);
/* 1 when s (NUL-terminated) holds a match of rx, else 0. */
int cbn_rx_search(const struct cbn_rx *rx, const char *s);

#endif
