/*
 * rules.c — runs a table of recommendation rules (rules.h): each entry's test
 * in turn, keeping at most max_hits findings per entry, in order.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "rules.h"
#include "util.h"

struct rules_pass {
	const struct rule *rule;  /* the entry under test */
	unsigned fired;           /* its findings so far */
	struct rule_hit *hits;
	size_t nhits, cap;
};

int rules_fire(struct rules_pass *pass, const char *fmt, ...)
{
	va_list ap;
	char *evidence;
	int n;

	if (pass->fired >= pass->rule->max_hits)
		return 1;
	if (util_grow((void **)&pass->hits, &pass->cap, pass->nhits, sizeof(*pass->hits)))
		return -ENOMEM;
	va_start(ap, fmt);
	n = vasprintf(&evidence, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	pass->hits[pass->nhits++] = (struct rule_hit){ .rule = pass->rule, .evidence = evidence };
	return ++pass->fired >= pass->rule->max_hits;
}

int rules_run(const struct rule *rules, size_t n, const void *ctx, struct rule_hit **hits,
	      size_t *nhits)
{
	struct rules_pass pass = { 0 };
	size_t i;
	int ret = 0;

	for (i = 0; i < n && ret >= 0; i++) {
		pass.rule = &rules[i];
		pass.fired = 0;
		ret = rules[i].test(ctx, &pass);
	}
	if (ret < 0) {
		for (i = 0; i < pass.nhits; i++)
			free(pass.hits[i].evidence);
		free(pass.hits);
		*hits = NULL;
		*nhits = 0;
		return ret;
	}
	*hits = pass.hits;
	*nhits = pass.nhits;
	return 0;
}
