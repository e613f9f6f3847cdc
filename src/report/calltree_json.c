/*
 * calltree_json.c — the --json report's bounded form of the analysis' call
 * tree (analysis/cpu/calltree.h), "call_tree": a flat array of nodes,
 * parents first, each naming its parent by index.  Flat, not nested: a
 * 1 000-deep recursion would nest past what JSON readers accept (cJSON and
 * Python stop near 1 000 levels), and `compare` reads these files back.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "analysis.h"
#include "calltree.h"
#include "calltree_json.h"
#include "cpu.h"

static int ct_by_total_desc(const void *a, const void *b, void *ctx)
{
	const struct ct_node *n = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (n[x].total != n[y].total)
		return n[x].total < n[y].total ? 1 : -1;
	return x < y ? -1 : x > y;
}

static cJSON *ct_node_json(const struct profile *p, const struct ct_node *n, double parent)
{
	const char *name = "all", *file = "";
	uint32_t line = 0;
	cJSON *o = cJSON_CreateObject();

	if (!o)
		return NULL;
	if (parent >= 0) {
		if (n->func == CT_TRUNC)
			name = "[truncated]";
		else if (n->func >= p->nfuncs)
			name = "[unknown]";
		else {
			const struct prof_func *f = &p->funcs[n->func];

			name = f->name && *f->name ? f->name : "[unknown]";
			file = f->file ? f->file : "";
			line = f->line;
		}
	}
	if (!cJSON_AddNumberToObject(o, "parent", parent) ||
	    !cJSON_AddStringToObject(o, "function", name) ||
	    !cJSON_AddStringToObject(o, "file", file) ||
	    !cJSON_AddNumberToObject(o, "line", line) ||
	    !cJSON_AddNumberToObject(o, "self_ns", (double)n->self) ||
	    !cJSON_AddNumberToObject(o, "total_ns", (double)n->total) ||
	    !cJSON_AddBoolToObject(o, "inlined", n->inlined != 0)) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/*
 * "call_tree": {"min_share", "max_nodes", "nodes_total", "nodes": [...]}.
 * Kept: the heaviest nodes of at least min_share of the root's total, at
 * most max_nodes.  A child never outweighs its parent and ties go to the
 * older (lower) index, so the kept set is closed under parents; what a kept
 * node's dropped children weighed is its total minus its self minus its
 * kept children's totals (no pseudo node: two reports' trees match by
 * function names only).
 */
cJSON *report_calltree_json(const struct analysis *a)
{
	const struct profile *p = a->profile;
	const struct ct_tree *t = a->calltree;
	uint64_t min;
	uint32_t *order = NULL, *newid = NULL, next = 0;
	cJSON *o = NULL, *arr;
	size_t nkeep = 0, i;

	order = malloc(t->len * sizeof(*order));
	newid = malloc(t->len * sizeof(*newid));
	if (!order || !newid)
		goto fail;
	for (i = 0; i < t->len; i++) {
		order[i] = (uint32_t)i;
		newid[i] = UINT32_MAX;
	}
	qsort_r(order, t->len, sizeof(*order), ct_by_total_desc, t->n);
	min = (uint64_t)((double)t->n[0].total * CT_MIN_SHARE);
	/* the root always, even of an empty run */
	for (i = 0; i < t->len && nkeep < CT_MAX_NODES; i++) {
		if (order[i] && t->n[order[i]].total < min)
			break;
		newid[order[i]] = 0;
		nkeep++;
	}
	o = cJSON_CreateObject();
	if (!o || !cJSON_AddNumberToObject(o, "min_share", CT_MIN_SHARE) ||
	    !cJSON_AddNumberToObject(o, "max_nodes", CT_MAX_NODES) ||
	    !cJSON_AddNumberToObject(o, "nodes_total", (double)t->len) ||
	    !(arr = cJSON_AddArrayToObject(o, "nodes")))
		goto fail;
	for (i = 0; i < t->len; i++) {
		cJSON *e;

		if (newid[i] == UINT32_MAX)
			continue;
		newid[i] = next++;
		e = ct_node_json(p, &t->n[i], i ? (double)newid[t->n[i].parent] : -1);
		if (!e)
			goto fail;
		cJSON_AddItemToArray(arr, e);
	}
	free(order);
	free(newid);
	return o;
fail:
	cJSON_Delete(o);
	free(order);
	free(newid);
	return NULL;
}
