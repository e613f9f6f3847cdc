/*
 * calltree.c — the merged call tree of the CPU samples (calltree.h) and its
 * bounded form in the --json report, "call_tree": a flat array of nodes,
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
#include "cpu.h"

struct ct_probe {
	const struct ct_tree *t;
	uint32_t parent, func, inlined;
};

static int ct_eq(const void *ctx, uint32_t v)
{
	const struct ct_probe *k = ctx;
	const struct ct_node *c = &k->t->n[v];

	return c->parent == k->parent && c->func == k->func && c->inlined == k->inlined;
}

/* The child of parent for func, created when missing; 0 on OOM. */
static uint32_t ct_child(struct ct_tree *t, uint32_t parent, uint32_t func, uint32_t inlined)
{
	struct ct_probe k = {t, parent, func, inlined};
	uint64_t h = util_mix64(((uint64_t)parent << 32 | func) ^ ((uint64_t)inlined << 63));
	uint32_t v = util_map_find(&t->index, h, ct_eq, &k);
	struct ct_node *c;

	if (v != UINT32_MAX)
		return v;
	if (t->len >= UINT32_MAX - 1 || util_grow((void **)&t->n, &t->cap, t->len, sizeof(*t->n)) < 0 ||
	    util_map_put(&t->index, h, (uint32_t)t->len) < 0)
		return 0;
	c = &t->n[t->len];
	memset(c, 0, sizeof(*c));
	c->func = func;
	c->parent = parent;
	c->inlined = inlined;
	return (uint32_t)t->len++;
}

uint64_t *ct_stack_weights(const struct profile *p)
{
	uint64_t *w = calloc(2 * (p->nstacks + 1), sizeof(*w));

	for (size_t i = 0; w && i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];
		size_t k = s->stack < p->nstacks ? s->stack : p->nstacks;
		uint64_t ns = (uint64_t)(s->weight ? s->weight : 1) *
			      prof_period_of_thread(p, s->thread);

		w[2 * k + ((s->flags & CBN_SAMPLE_TRUNCATED) ? 1 : 0)] += ns;
	}
	return w;
}

int ct_build(const struct profile *p, const uint64_t *w, struct ct_tree *t, uint32_t *leaf)
{
	t->cap = 1024;
	t->n = calloc(t->cap, sizeof(*t->n));
	if (!t->n)
		return -ENOMEM;
	t->len = 1;
	t->n[0].func = UINT32_MAX;
	t->n[0].parent = UINT32_MAX;
	for (size_t i = 0; i < 2 * (p->nstacks + 1); i++) {
		const struct prof_stack *sk = i / 2 < p->nstacks ? &p->stacks[i / 2] : NULL;
		uint32_t cur = 0;

		if (!w[i])
			continue;
		/* a stack the loader gave frames beyond the array has none here */
		if (sk && (sk->first > p->nframes || sk->nframes > p->nframes - sk->first))
			sk = NULL;
		t->n[0].total += w[i];
		if (i % 2 && sk && sk->nframes) {
			if (!(cur = ct_child(t, 0, CT_TRUNC, 0)))
				return -ENOMEM;
			t->n[cur].total += w[i];
		}
		for (size_t d = sk ? sk->nframes : 0; d-- > 0;) {
			const struct prof_frame *f = &p->frames[sk->first + d];

			cur = ct_child(t, cur, f->func < p->nfuncs ? f->func : CT_UNKNOWN,
				       f->inlined != 0);
			if (!cur)
				return -ENOMEM;
			t->n[cur].total += w[i];
		}
		t->n[cur].self += w[i];
		if (leaf)
			leaf[i] = cur;
	}
	return 0;
}

void ct_free(struct ct_tree *t)
{
	free(t->n);
	util_map_free(&t->index);
	memset(t, 0, sizeof(*t));
}

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
	struct ct_tree t = {0};
	uint64_t *w = ct_stack_weights(p), min;
	uint32_t *order = NULL, *newid = NULL, next = 0;
	cJSON *o = NULL, *arr;
	size_t nkeep = 0, i;

	if (!w || ct_build(p, w, &t, NULL) < 0)
		goto fail;
	order = malloc(t.len * sizeof(*order));
	newid = malloc(t.len * sizeof(*newid));
	if (!order || !newid)
		goto fail;
	for (i = 0; i < t.len; i++) {
		order[i] = (uint32_t)i;
		newid[i] = UINT32_MAX;
	}
	qsort_r(order, t.len, sizeof(*order), ct_by_total_desc, t.n);
	min = (uint64_t)((double)t.n[0].total * CT_MIN_SHARE);
	/* the root always, even of an empty run */
	for (i = 0; i < t.len && nkeep < CT_MAX_NODES; i++) {
		if (order[i] && t.n[order[i]].total < min)
			break;
		newid[order[i]] = 0;
		nkeep++;
	}
	o = cJSON_CreateObject();
	if (!o || !cJSON_AddNumberToObject(o, "min_share", CT_MIN_SHARE) ||
	    !cJSON_AddNumberToObject(o, "max_nodes", CT_MAX_NODES) ||
	    !cJSON_AddNumberToObject(o, "nodes_total", (double)t.len) ||
	    !(arr = cJSON_AddArrayToObject(o, "nodes")))
		goto fail;
	for (i = 0; i < t.len; i++) {
		cJSON *e;

		if (newid[i] == UINT32_MAX)
			continue;
		newid[i] = next++;
		e = ct_node_json(p, &t.n[i], i ? (double)newid[t.n[i].parent] : -1);
		if (!e)
			goto fail;
		cJSON_AddItemToArray(arr, e);
	}
	free(order);
	free(newid);
	free(w);
	ct_free(&t);
	return o;
fail:
	cJSON_Delete(o);
	free(order);
	free(newid);
	free(w);
	ct_free(&t);
	return NULL;
}
