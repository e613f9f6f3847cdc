/*
 * rules.c — runs a table of recommendation rules (rules.h): each entry's test
 * in turn, keeping at most max_hits findings per entry, in order.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int rules_keep(struct rule_hit *hits, size_t nhits, struct rule_finding **arr, size_t *n)
{
	struct rule_finding *v = NULL;
	size_t i, k = 0;
	int ret = 0;

	if (nhits && !(v = util_reallocarray(*arr, *n + nhits, sizeof(*v))))
		ret = -ENOMEM;
	if (v)
		*arr = v;
	for (i = 0; i < nhits; i++) {
		char *msg = ret ? NULL : strdup(hits[i].rule->message);

		if (!msg) {
			free(hits[i].evidence);
			ret = -ENOMEM;
			continue;
		}
		(*arr)[*n + k++] = (struct rule_finding){ .id = hits[i].rule->id, .message = msg,
							  .evidence = hits[i].evidence };
	}
	free(hits);
	if (ret) {
		/* keep nothing of this run: free what was copied */
		while (k--) {
			free((*arr)[*n + k].message);
			free((*arr)[*n + k].evidence);
		}
		return ret;
	}
	*n += nhits;
	return 0;
}

void rules_findings_free(struct rule_finding *arr, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(arr[i].message);
		free(arr[i].evidence);
	}
	free(arr);
}
