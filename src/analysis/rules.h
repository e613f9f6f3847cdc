/*
 * rules.h — recommendation rules as a table: each entry is a stable id, a test
 * over a domain's analysis (an opaque context here) and the advice printed with
 * every finding.  rules_run() runs a table in order and collects what fired,
 * with the evidence.  Shared by every domain (the CUDA rules are the table in
 * cuda_rules.c).  Launcher side only.
 */
#ifndef CBN_RULES_H
#define CBN_RULES_H

#include <stddef.h>

/* One run over a table; a test sees it only through rules_fire(). */
struct rules_pass;

struct rule {
	const char *id;          /* stable, public (JSON "id"); entries may share one */
	/* Looks at the domain's context and calls rules_fire() once per finding.
	 * Returns >= 0 (rules_fire()'s result may be passed on), or a negative
	 * errno, which stops the run. */
	int (*test)(const void *ctx, struct rules_pass *pass);
	const char *message;     /* what to do; the same for every finding */
	unsigned max_hits;       /* findings kept for this entry, >= 1 (1: a whole-run rule) */
};

/* A finding, in table order, then in the order its test reported it. */
struct rule_hit {
	const struct rule *rule;
	char *evidence;          /* the numbers that fired it; the caller frees it */
};

/* Report a finding of the entry under test, with evidence formatted from fmt.
 * Returns 0 when the entry may fire again, 1 when it has reached max_hits (stop
 * looking: later calls add nothing), or -ENOMEM. */
__attribute__((format(printf, 2, 3))) int rules_fire(struct rules_pass *pass, const char *fmt,
						       ...);

/* Run rules[0 .. n) in order over ctx.  Returns 0 with the findings in *hits
 * (*nhits of them, NULL when none; the caller frees each evidence and the
 * array), or the first negative result of a test, with nothing kept. */
int rules_run(const struct rule *rules, size_t n, const void *ctx, struct rule_hit **hits,
	      size_t *nhits);

#endif
