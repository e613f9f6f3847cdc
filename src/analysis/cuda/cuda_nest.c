/*
 * cuda_nest.c — the nesting of ranges and API calls per thread: which call or
 * range encloses which, the self time each keeps, and the GPU time climbing
 * from the launching call to every enclosing one (docs/cuda.md, "Autograd-style
 * table").
 */
#include <string.h>

#include "cuda_int.h"

static int cmp_node(const void *a, const void *b, void *nodes)
{
	const struct cuda_node *x = &((const struct cuda_node *)nodes)[*(const uint32_t *)a];
	const struct cuda_node *y = &((const struct cuda_node *)nodes)[*(const uint32_t *)b];

	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end > y->end ? -1 : 1;    /* the longer one encloses */
	if (x->type != y->type)
		return x->type < y->type ? -1 : 1;  /* a range encloses an equal API call */
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

int cuda_nest_build(const struct profile *p, struct cuda_nest *ns)
{
	uint32_t *order = NULL, *stack = NULL;
	size_t i, k, top = 0;
	int ret = -ENOMEM;

	memset(ns, 0, sizeof(*ns));
	ns->n = calloc(p->nranges + p->ncuda_api + 1, sizeof(*ns->n));
	ns->api_node = calloc(p->ncuda_api + 1, sizeof(uint32_t));
	ns->range_node = calloc(p->nranges + 1, sizeof(uint32_t));
	if (!ns->n || !ns->api_node || !ns->range_node)
		goto out;
	for (i = 0; i < p->nranges; i++) {
		const struct prof_range *r = &p->ranges[i];

		ns->range_node[i] = CUDA_NO_IDX;
		if (!range_is_span(r))
			continue;
		ns->range_node[i] = (uint32_t)ns->nn;
		ns->n[ns->nn++] = (struct cuda_node){ .start = r->start, .end = r->end,
						      .thread = r->thread, .type = CUDA_NODE_RANGE,
						      .idx = (uint32_t)i, .parent = CUDA_NO_IDX };
	}
	for (i = 0; i < p->ncuda_api; i++) {
		const struct prof_cuda_api *c = &p->cuda_api[i];

		ns->api_node[i] = (uint32_t)ns->nn;
		ns->n[ns->nn++] = (struct cuda_node){ .start = c->start,
						      .end = c->end > c->start ? c->end : c->start,
						      .thread = c->thread, .type = CUDA_NODE_API,
						      .idx = (uint32_t)i, .parent = CUDA_NO_IDX };
	}
	for (i = 0; i < ns->nn; i++)
		ns->n[i].self = (int64_t)dur(ns->n[i].start, ns->n[i].end);
	order = util_reallocarray(NULL, ns->nn + 1, sizeof(*order));
	stack = util_reallocarray(NULL, ns->nn + 1, sizeof(*stack));
	if (!order || !stack)
		goto out;
	for (i = 0; i < ns->nn; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, ns->nn, sizeof(*order), cmp_node, ns->n);
	for (k = 0; k < ns->nn; k++) {
		struct cuda_node *x = &ns->n[order[k]];

		if (x->thread == PROF_NONE)
			continue;   /* no thread: cannot nest, stays top level */
		if (top && ns->n[stack[top - 1]].thread != x->thread)
			top = 0;
		while (top && ns->n[stack[top - 1]].end <= x->start)
			top--;
		if (top) {
			struct cuda_node *par = &ns->n[stack[top - 1]];
			uint64_t e = x->end < par->end ? x->end : par->end;

			x->parent = stack[top - 1];
			par->self -= (int64_t)dur(x->start, e);
		}
		stack[top++] = order[k];
	}
	for (i = 0; i < ns->nn; i++)
		if (ns->n[i].self < 0)
			ns->n[i].self = 0;
	/* GPU time climbs from the launching call to every enclosing node. */
	for (i = 0; i < p->ngpu_ops; i++) {
		const struct prof_gpu_op *op = &p->gpu_ops[i];
		uint64_t d = dur(op->start, op->end);
		uint32_t x;

		if (op->api == PROF_NONE || op->api >= p->ncuda_api)
			continue;
		x = ns->api_node[op->api];
		ns->n[x].direct_gpu += d;
		ns->n[x].direct_ops++;
		for (; x != CUDA_NO_IDX; x = ns->n[x].parent)
			ns->n[x].cuda_total += d;
	}
	ret = 0;
out:
	free(order);
	free(stack);
	return ret;
}

void cuda_nest_free(struct cuda_nest *ns)
{
	free(ns->n);
	free(ns->api_node);
	free(ns->range_node);
}
