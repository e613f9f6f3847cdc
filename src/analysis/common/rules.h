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

/* A finding as the analyses keep it (cuda_analysis.recos, mem_analysis.recos)
 * and every writer prints it. */
struct rule_finding {
	const char *id;          /* the rule's stable id (static) */
	char *message;           /* what to do (owned) */
	char *evidence;          /* the numbers that fired it (owned) */
};

/* Append the findings of a rules_run() to *arr (*n of them; grown, so a
 * domain may append to findings it already has), taking over each evidence
 * and freeing hits.  Returns 0, or -ENOMEM with *arr and *n unchanged and
 * everything of hits freed. */
int rules_keep(struct rule_hit *hits, size_t nhits, struct rule_finding **arr, size_t *n);

/* Free n findings and the array. */
void rules_findings_free(struct rule_finding *arr, size_t n);

/* Run rules[0 .. n) in order over ctx.  Returns 0 with the findings in *hits
 * (*nhits of them, NULL when none; the caller frees each evidence and the
 * array), or the first negative result of a test, with nothing kept. */
int rules_run(const struct rule *rules, size_t n, const void *ctx, struct rule_hit **hits,
	      size_t *nhits);

#endif
