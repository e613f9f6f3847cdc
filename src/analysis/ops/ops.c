/*
 * ops.c — the operator table (ops.h): which operator each function enters
 * (the rules of ops_rules.c), the operators on each stack (innermost and
 * all, once each), and their sampled CPU and exact GPU time, launches and
 * nesting.  Launcher side only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "util.h"

#define OPS_LABEL_MAX 512
#define STACK_TODO (UINT32_MAX - 1)   /* stack_inner: not worked out yet */

struct ops_priv {
	struct op_analysis pub;       /* first: the public pointer is this one */
	char **strs;
	size_t nstrs, capstrs;
};

/* Working state of one ops_analyze(). */
struct ops_ctx {
	const struct profile *p;
	struct ops_priv *pv;
	struct op_row *rows;
	size_t nrows, caprows;
	unsigned char *merge;         /* per row: its rule merges helpers (R_MERGE) */
	struct util_map names;        /* label -> row */
	uint32_t *stack_inner;        /* per stack: innermost row, OPS_NONE, STACK_TODO */
	uint32_t *stack_off;          /* per stack: its distinct rows in set[off .. off + n) */
	uint8_t *stack_n;
	uint32_t *set;
	size_t nset, capset;
	uint64_t *edges;              /* parent << 32 | child, as seen */
	size_t nedges, capedges;
};

static char *keep(struct ops_priv *pv, const char *s)
{
	char *c = strdup(s);

	if (!c || util_grow((void **)&pv->strs, &pv->capstrs, pv->nstrs, sizeof(char *))) {
		free(c);
		return NULL;
	}
	pv->strs[pv->nstrs++] = c;
	return c;
}

static int name_eq(const void *ctx, uint32_t v)
{
	const void *const *c = ctx;
	const struct ops_ctx *x = c[0];

	return strcmp(x->rows[v].name, (const char *)c[1]) == 0;
}

/* The row of label, made when new.  OPS_NONE when memory is short. */
static uint32_t row_of(struct ops_ctx *x, const char *label, const char *framework,
		       const char *entry, int merge)
{
	const void *ctx[2] = { x, label };
	uint64_t h = util_fnv1a_str(label, UTIL_FNV_INIT);
	uint32_t v = util_map_find(&x->names, h, name_eq, ctx);
	size_t cap = x->caprows;
	struct op_row *r;

	if (v != UINT32_MAX)
		return v;
	if (util_grow((void **)&x->rows, &x->caprows, x->nrows, sizeof(*x->rows)) ||
	    (x->caprows != cap &&
	     !(x->merge = util_reallocarray(x->merge, x->caprows, sizeof(*x->merge)))))
		return OPS_NONE;
	r = &x->rows[x->nrows];
	memset(r, 0, sizeof(*r));
	if (!(r->name = keep(x->pv, label)))
		return OPS_NONE;
	r->framework = framework;
	r->entry = entry;
	x->merge[x->nrows] = (unsigned char)merge;
	if (util_map_put(&x->names, h, (uint32_t)x->nrows))
		return OPS_NONE;
	return (uint32_t)x->nrows++;
}

/* The path of a module of p by its basename, NULL when unknown. */
static const char *module_path(const struct profile *p, const char *name)
{
	size_t i;

	if (!name || !*name)
		return NULL;
	for (i = 0; i < p->nmodules; i++)
		if (p->modules[i].name && strcmp(p->modules[i].name, name) == 0)
			return p->modules[i].path;
	return NULL;
}

/* func_op for every function.  Returns the number of functions that enter
 * an operator, or -errno. */
static long match_funcs(struct ops_ctx *x, const struct op_pattern *pats, size_t npats)
{
	const struct profile *p = x->p;
	struct op_analysis *o = &x->pv->pub;
	struct ops_rules *rules;
	char label[OPS_LABEL_MAX], err[256];
	long hits = 0;
	size_t i;
	int ret;

	if ((ret = ops_rules_new(pats, npats, &rules, err, sizeof(err))) < 0)
		return ret;
	for (i = 0; i < p->nfuncs; i++) {
		const struct prof_func *f = &p->funcs[i];
		const char *fw, *mp = NULL;
		int merge;

		o->func_op[i] = OPS_NONE;
		if (f->name && strstr(f->name, "at::_ops::"))
			mp = module_path(p, f->module);
		if (!ops_rules_match(rules, f->name, mp, label, sizeof(label), &fw, &merge))
			continue;
		o->func_op[i] = row_of(x, label, fw, f->name, merge);
		if (o->func_op[i] == OPS_NONE) {
			hits = -ENOMEM;
			break;
		}
		hits++;
	}
	ops_rules_free(rules);
	return hits;
}

/* A frame of the merging kind whose label extends its parent's with "_":
 * the parent's helper (ggml_compute_forward_mul_mat_one_chunk). */
static int is_helper(const struct ops_ctx *x, uint32_t parent, uint32_t child)
{
	const char *pn = x->rows[parent].name, *cn = x->rows[child].name;
	size_t n = strlen(pn);

	return x->merge[parent] && x->merge[child] &&
	       strcmp(x->rows[parent].framework, x->rows[child].framework) == 0 &&
	       strncmp(cn, pn, n) == 0 && cn[n] == '_';
}

/* Work out the operators of stack s once: innermost, the distinct set, and
 * the nesting edges.  Returns 0 or -ENOMEM. */
static int stack_ops(struct ops_ctx *x, uint32_t s)
{
	const struct profile *p = x->p;
	const struct prof_stack *st = &p->stacks[s];
	const uint32_t *func_op = x->pv->pub.func_op;
	uint32_t path[256];
	size_t n = 0, i, j, off = x->nset;

	/* root first, so nesting reads outer -> inner */
	for (i = st->nframes; i-- > 0;) {
		uint32_t f = st->first + (uint32_t)i, r;

		if (f >= p->nframes || p->frames[f].func >= p->nfuncs)
			continue;
		r = func_op[p->frames[f].func];
		if (r == OPS_NONE)
			continue;
		/* the same operator entered again directly (overload chains), or a
		 * helper of the enclosing one: still that operator */
		if (n && (path[n - 1] == r || is_helper(x, path[n - 1], r)))
			continue;
		if (n == sizeof(path) / sizeof(path[0]))
			break;
		if (n) {
			if (util_grow((void **)&x->edges, &x->capedges, x->nedges, sizeof(*x->edges)))
				return -ENOMEM;
			x->edges[x->nedges++] = (uint64_t)path[n - 1] << 32 | r;
		}
		path[n++] = r;
	}
	x->stack_inner[s] = n ? path[n - 1] : OPS_NONE;
	x->stack_off[s] = (uint32_t)off;
	x->stack_n[s] = 0;
	for (i = 0; i < n; i++) {
		for (j = off; j < x->nset && x->set[j] != path[i]; j++)
			;
		if (j < x->nset)
			continue;   /* recursion: once per stack */
		if (x->stack_n[s] == UINT8_MAX)
			break;
		if (util_grow((void **)&x->set, &x->capset, x->nset, sizeof(*x->set)))
			return -ENOMEM;
		x->set[x->nset++] = path[i];
		x->stack_n[s]++;
	}
	return 0;
}

/* Charge v to the operators of stack s: self to the innermost, total to each. */
static int charge(struct ops_ctx *x, uint32_t s, void (*add)(struct op_row *, int self,
							       const void *), const void *v)
{
	size_t i;

	if (s >= x->p->nstacks)
		return 0;
	if (x->stack_inner[s] == STACK_TODO && stack_ops(x, s) < 0)
		return -ENOMEM;
	if (x->stack_inner[s] == OPS_NONE)
		return 0;
	add(&x->rows[x->stack_inner[s]], 1, v);
	for (i = 0; i < x->stack_n[s]; i++)
		add(&x->rows[x->set[x->stack_off[s] + i]], 0, v);
	return 0;
}

struct cpu_charge {
	uint64_t ns, weight;
};

static void add_cpu(struct op_row *r, int self, const void *v)
{
	const struct cpu_charge *c = v;

	if (self) {
		r->self_cpu_ns += c->ns;
		r->self_weight += c->weight;
	} else {
		r->cpu_total_ns += c->ns;
		r->total_weight += c->weight;
	}
}

struct gpu_charge {
	uint64_t ns, ops;
};

static void add_gpu(struct op_row *r, int self, const void *v)
{
	const struct gpu_charge *c = v;

	if (self) {
		r->self_cuda_ns += c->ns;
		r->self_gpu_ops += c->ops;
		r->self_launches++;
	} else {
		r->cuda_total_ns += c->ns;
		r->gpu_ops += c->ops;
		r->launches++;
	}
}

static int cmp_api(const void *a, const void *b, void *ctx)
{
	const struct prof_cuda_api *api = ctx;
	const struct prof_cuda_api *x = &api[*(const uint32_t *)a];
	const struct prof_cuda_api *y = &api[*(const uint32_t *)b];

	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end > y->end ? -1 : 1;   /* the enclosing call first */
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* The stack each API call launched from: its own, else that of the
 * innermost call around it on its thread that has one (a driver call
 * inside a runtime call has none of its own).  PROF_NONE when none. */
static int launch_stacks(const struct profile *p, uint32_t *out)
{
	uint32_t *ord = util_reallocarray(NULL, p->ncuda_api + 1, sizeof(*ord));
	uint32_t *open = util_reallocarray(NULL, p->ncuda_api + 1, sizeof(*open));
	size_t i, nopen = 0;

	if (!ord || !open) {
		free(ord);
		free(open);
		return -ENOMEM;
	}
	for (i = 0; i < p->ncuda_api; i++)
		ord[i] = (uint32_t)i;
	if (p->ncuda_api)
		qsort_r(ord, p->ncuda_api, sizeof(*ord), cmp_api, (void *)p->cuda_api);
	for (i = 0; i < p->ncuda_api; i++) {
		const struct prof_cuda_api *a = &p->cuda_api[ord[i]];
		uint32_t s = a->stack < p->nstacks ? a->stack : PROF_NONE;

		while (nopen && (p->cuda_api[open[nopen - 1]].thread != a->thread ||
				 p->cuda_api[open[nopen - 1]].end < a->end ||
				 a->thread == PROF_NONE))
			nopen--;
		if (s == PROF_NONE && nopen)
			s = out[open[nopen - 1]];
		out[ord[i]] = s;
		open[nopen++] = ord[i];
	}
	free(ord);
	free(open);
	return 0;
}

static int gpu_side(struct ops_ctx *x)
{
	const struct profile *p = x->p;
	struct op_analysis *o = &x->pv->pub;
	uint64_t *ns = calloc(p->ncuda_api + 1, sizeof(*ns)), *nops = calloc(p->ncuda_api + 1,
									    sizeof(*nops));
	uint32_t *ls = util_reallocarray(NULL, p->ncuda_api + 1, sizeof(*ls));
	size_t i;
	int ret = -ENOMEM;

	if (!ns || !nops || !ls || launch_stacks(p, ls) < 0)
		goto out;
	for (i = 0; i < p->ngpu_ops; i++) {
		const struct prof_gpu_op *g = &p->gpu_ops[i];
		uint64_t d = g->end > g->start ? g->end - g->start : 0;

		o->gpu_ns += d;
		if (g->api < p->ncuda_api) {
			ns[g->api] += d;
			nops[g->api]++;
		}
	}
	for (i = 0; i < p->ncuda_api; i++) {
		struct gpu_charge c = { ns[i], nops[i] };
		uint32_t s = ls[i];

		o->api_op[i] = OPS_NONE;
		if (s == PROF_NONE)
			continue;
		if (x->stack_inner[s] == STACK_TODO && stack_ops(x, s) < 0)
			goto out;
		o->api_op[i] = x->stack_inner[s];
		if (!nops[i])
			continue;
		o->launches++;
		if (charge(x, s, add_gpu, &c) < 0)
			goto out;
	}
	ret = 0;
out:
	free(ns);
	free(nops);
	free(ls);
	return ret;
}

/* Each row's direct parents, once each. */
static int parents(struct ops_ctx *x)
{
	size_t i;

	if (x->nedges)
		qsort(x->edges, x->nedges, sizeof(*x->edges), util_u64_cmp);
	for (i = 0; i < x->nedges; i++) {
		uint32_t par = (uint32_t)(x->edges[i] >> 32), ch = (uint32_t)x->edges[i];
		struct op_row *r = &x->rows[ch];

		if (i && x->edges[i] == x->edges[i - 1])
			continue;
		if (!(r->nparents & (r->nparents - 1))) {   /* 0, 1, 2, 4, ...: grow */
			uint32_t *np = util_reallocarray(r->parents, r->nparents ? 2 * r->nparents : 1,
							 sizeof(*np));

			if (!np)
				return -ENOMEM;
			r->parents = np;
		}
		r->parents[r->nparents++] = par;
	}
	return 0;
}

/* --- sorting ------------------------------------------------------------------- */

enum ops_key { K_CUDA_TOTAL, K_SELF_CUDA, K_CPU_TOTAL, K_SELF_CPU, K_LAUNCHES };

static const struct {
	const char *name;
	enum ops_key key;
} ops_keys[] = {
	{ "cuda_time_total", K_CUDA_TOTAL },       { "device_time_total", K_CUDA_TOTAL },
	{ "self_cuda_time_total", K_SELF_CUDA },   { "self_device_time_total", K_SELF_CUDA },
	{ "cpu_time_total", K_CPU_TOTAL },         { "self_cpu_time_total", K_SELF_CPU },
	{ "count", K_LAUNCHES },
};

int ops_sort_key_valid(const char *key)
{
	size_t i;

	for (i = 0; key && i < sizeof(ops_keys) / sizeof(ops_keys[0]); i++)
		if (strcmp(key, ops_keys[i].name) == 0)
			return 1;
	return 0;
}

static uint64_t key_value(const struct op_row *r, enum ops_key k)
{
	switch (k) {
	case K_CUDA_TOTAL: return r->cuda_total_ns;
	case K_SELF_CUDA: return r->self_cuda_ns;
	case K_CPU_TOTAL: return r->cpu_total_ns;
	case K_SELF_CPU: return r->self_cpu_ns;
	case K_LAUNCHES: return r->launches;
	}
	return 0;
}

static int cmp_row(const void *a, const void *b, void *key)
{
	const struct op_row *x = a, *y = b;
	enum ops_key k = *(const enum ops_key *)key;
	uint64_t vx = key_value(x, k), vy = key_value(y, k);

	if (vx != vy)
		return vx > vy ? -1 : 1;
	return strcmp(x->name, y->name);
}

static enum ops_key key_of(const char *key, int has_gpu, const char **used)
{
	size_t i;

	for (i = 0; key && i < sizeof(ops_keys) / sizeof(ops_keys[0]); i++)
		if (strcmp(key, ops_keys[i].name) == 0) {
			*used = ops_keys[i].name;
			return ops_keys[i].key;
		}
	*used = has_gpu ? "cuda_time_total" : "cpu_time_total";
	return has_gpu ? K_CUDA_TOTAL : K_CPU_TOTAL;
}

const char *ops_sort(struct op_row *rows, size_t n, const char *key, int has_gpu)
{
	const char *used;
	enum ops_key k = key_of(key, has_gpu, &used);

	if (n)
		qsort_r(rows, n, sizeof(*rows), cmp_row, &k);
	return used;
}

static int row_empty(const struct op_row *r)
{
	return !r->cpu_total_ns && !r->total_weight && !r->cuda_total_ns && !r->launches;
}

/* Sort the rows by the default key and renumber every reference to them.
 * Rows with nothing in them go (a helper only ever seen inside its parent,
 * an operator that only allocated): references to them become OPS_NONE. */
static int sort_rows(struct ops_ctx *x)
{
	struct op_analysis *o = &x->pv->pub;
	uint32_t *to = util_reallocarray(NULL, x->nrows + 1, sizeof(*to));
	struct op_row *sorted = util_reallocarray(NULL, x->nrows + 1, sizeof(*sorted));
	int has_gpu = 0;
	size_t i, k, n = 0, np;

	if (!to || !sorted) {
		free(to);
		free(sorted);
		return -ENOMEM;
	}
	for (i = 0; i < x->nrows; i++) {
		has_gpu |= x->rows[i].cuda_total_ns > 0;
		to[i] = OPS_NONE;
		if (row_empty(&x->rows[i]))
			free(x->rows[i].parents);
		else
			sorted[n++] = x->rows[i];
	}
	o->sort_key = ops_sort(sorted, n, NULL, has_gpu);
	/* where each row went: names are unique, and the map still knows the
	 * old index of each */
	for (i = 0; i < n; i++) {
		const void *ctx[2] = { x, sorted[i].name };

		to[util_map_find(&x->names, util_fnv1a_str(sorted[i].name, UTIL_FNV_INIT), name_eq,
				 ctx)] = (uint32_t)i;
	}
	for (i = 0; i < n; i++) {
		for (k = np = 0; k < sorted[i].nparents; k++)
			if (to[sorted[i].parents[k]] != OPS_NONE)
				sorted[i].parents[np++] = to[sorted[i].parents[k]];
		sorted[i].nparents = np;
	}
	for (i = 0; i < x->p->nfuncs; i++)
		if (o->func_op[i] != OPS_NONE)
			o->func_op[i] = to[o->func_op[i]];
	for (i = 0; i < x->p->ncuda_api; i++)
		if (o->api_op[i] != OPS_NONE)
			o->api_op[i] = to[o->api_op[i]];
	free(x->rows);
	x->rows = sorted;
	x->nrows = n;
	free(to);
	return 0;
}

void ops_free(struct op_analysis *o)
{
	struct ops_priv *pv = (struct ops_priv *)o;
	size_t i;

	if (!o)
		return;
	for (i = 0; i < o->nrows; i++)
		free(o->rows[i].parents);
	for (i = 0; i < pv->nstrs; i++)
		free(pv->strs[i]);
	free(pv->strs);
	free(o->rows);
	free(o->func_op);
	free(o->api_op);
	free(pv);
}

int ops_analyze(const struct profile *p, const struct op_pattern *patterns, size_t npatterns,
		struct op_analysis **out)
{
	struct ops_priv *pv = calloc(1, sizeof(*pv));
	struct ops_ctx x = { .p = p, .pv = pv };
	struct op_analysis *o;
	size_t i;
	long hits;
	int ret = -ENOMEM;

	*out = NULL;
	if (!pv)
		return -ENOMEM;
	o = &pv->pub;
	o->func_op = util_reallocarray(NULL, p->nfuncs + 1, sizeof(*o->func_op));
	o->api_op = util_reallocarray(NULL, p->ncuda_api + 1, sizeof(*o->api_op));
	x.stack_inner = util_reallocarray(NULL, p->nstacks + 1, sizeof(*x.stack_inner));
	x.stack_off = util_reallocarray(NULL, p->nstacks + 1, sizeof(*x.stack_off));
	x.stack_n = calloc(p->nstacks + 1, sizeof(*x.stack_n));
	if (!o->func_op || !o->api_op || !x.stack_inner || !x.stack_off || !x.stack_n)
		goto out;
	hits = match_funcs(&x, patterns, npatterns);
	if (hits <= 0) {
		ret = (int)hits;   /* 0: no operator at all */
		goto out;
	}
	for (i = 0; i < p->nstacks; i++)
		x.stack_inner[i] = STACK_TODO;
	for (i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];
		struct cpu_charge c = { (uint64_t)s->weight * prof_period_of_thread(p, s->thread),
					s->weight };

		o->cpu_ns += c.ns;
		if (charge(&x, s->stack, add_cpu, &c) < 0)
			goto out;
	}
	if (gpu_side(&x) < 0 || parents(&x) < 0)
		goto out;
	for (i = 0; i < x.nrows; i++) {
		o->self_cpu_total_ns += x.rows[i].self_cpu_ns;
		o->self_cuda_total_ns += x.rows[i].self_cuda_ns;
	}
	if (sort_rows(&x) < 0)
		goto out;
	o->rows = x.rows;
	o->nrows = x.nrows;
	x.rows = NULL;
	*out = o;
	ret = 0;
out:
	if (x.rows) {
		for (i = 0; i < x.nrows; i++)
			free(x.rows[i].parents);
		free(x.rows);
	}
	free(x.merge);
	util_map_free(&x.names);
	free(x.stack_inner);
	free(x.stack_off);
	free(x.stack_n);
	free(x.set);
	free(x.edges);
	if (!*out)
		ops_free(o);
	return ret;
}
