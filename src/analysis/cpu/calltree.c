/*
 * calltree.c — the merged call tree of the CPU samples (calltree.h): each
 * sample's ns on its (stack, truncated) slot, then every weighed slot's
 * stack walked from the root down, merging the same frames.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "calltree.h"

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

static void ct_weigh(const struct profile *p, uint64_t *w)
{
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];
		size_t k = s->stack < p->nstacks ? s->stack : p->nstacks;
		uint64_t ns = (uint64_t)(s->weight ? s->weight : 1) *
			      prof_period_of_thread(p, s->thread);

		w[2 * k + ((s->flags & CBN_SAMPLE_TRUNCATED) ? 1 : 0)] += ns;
	}
}

/* Slot i's stack into the tree, its weight on every node of it. */
static int ct_add_slot(const struct profile *p, struct ct_tree *t, size_t i)
{
	const struct prof_stack *sk = i / 2 < p->nstacks ? &p->stacks[i / 2] : NULL;
	uint64_t w = t->weight[i];
	uint32_t cur = 0;

	/* a stack the loader gave frames beyond the array has none here */
	if (sk && (sk->first > p->nframes || sk->nframes > p->nframes - sk->first))
		sk = NULL;
	t->n[0].total += w;
	if (i % 2 && sk && sk->nframes) {
		if (!(cur = ct_child(t, 0, CT_TRUNC, 0)))
			return -ENOMEM;
		t->n[cur].total += w;
	}
	for (size_t d = sk ? sk->nframes : 0; d-- > 0;) {
		const struct prof_frame *f = &p->frames[sk->first + d];

		cur = ct_child(t, cur, f->func < p->nfuncs ? f->func : CT_UNKNOWN, f->inlined != 0);
		if (!cur)
			return -ENOMEM;
		t->n[cur].total += w;
	}
	t->n[cur].self += w;
	t->leaf[i] = cur;
	return 0;
}

int ct_analyze(const struct profile *p, struct ct_tree *t)
{
	memset(t, 0, sizeof(*t));
	t->nslots = 2 * (p->nstacks + 1);
	t->weight = calloc(t->nslots, sizeof(*t->weight));
	t->leaf = calloc(t->nslots, sizeof(*t->leaf));
	t->cap = 1024;
	t->n = calloc(t->cap, sizeof(*t->n));
	if (!t->weight || !t->leaf || !t->n)
		goto oom;
	ct_weigh(p, t->weight);
	t->len = 1;
	t->n[0].func = UINT32_MAX;
	t->n[0].parent = UINT32_MAX;
	for (size_t i = 0; i < t->nslots; i++)
		if (t->weight[i] && ct_add_slot(p, t, i) < 0)
			goto oom;
	return 0;
oom:
	ct_free(t);
	return -ENOMEM;
}

void ct_free(struct ct_tree *t)
{
	if (!t)
		return;
	free(t->n);
	free(t->weight);
	free(t->leaf);
	util_map_free(&t->index);
	memset(t, 0, sizeof(*t));
}
