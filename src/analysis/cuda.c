/*
 * cuda.c — CUDA analysis of a profile: nesting of ranges and API calls per
 * thread, attribution of GPU time through correlation, per-name statistics,
 * launch sites, overview metrics, verdict, recommendations and status lines.
 * Formulas and thresholds are documented in docs/cuda.md; keep them in step.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cuda_analysis.h"
#include "occupancy.h"

#define NO_IDX UINT32_MAX

/* Generated strings owned by the analysis (range "domain:name" keys,
 * recommendation text, status lines are kept in their own arrays). */
struct cuda_priv {
	struct cuda_analysis pub;   /* first: the public pointer is this one */
	char **strs;
	size_t nstrs, capstrs;
};

static uint64_t dur(uint64_t start, uint64_t end)
{
	return end > start ? end - start : 0;
}

static int grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap;
	void *n;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 16;
	while (ncap < need)
		ncap *= 2;
	n = realloc(*arr, ncap * elem);
	if (!n)
		return -ENOMEM;
	*arr = n;
	*cap = ncap;
	return 0;
}

static char *keep_str(struct cuda_priv *pv, char *s)
{
	if (!s)
		return NULL;
	if (grow((void **)&pv->strs, &pv->capstrs, pv->nstrs + 1, sizeof(char *))) {
		free(s);
		return NULL;
	}
	pv->strs[pv->nstrs++] = s;
	return s;
}

__attribute__((format(printf, 1, 2))) static char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	return n < 0 ? NULL : s;
}

static const char *nz(const char *s)
{
	return s ? s : "";
}

static const char *or_unnamed(const char *s, const char *unnamed)
{
	return s && *s ? s : unnamed;
}

static const char *api_name(const struct prof_cuda_api *c)
{
	return or_unnamed(c->name, "[unknown API]");
}

/* --- a small string → index map (names are few, ops many) --------------- */

struct smap {
	const char **keys;
	uint32_t *vals;
	size_t cap, n;
};

static uint64_t smap_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static int smap_rehash(struct smap *m, size_t ncap)
{
	const char **keys = calloc(ncap, sizeof(*keys));
	uint32_t *vals = calloc(ncap, sizeof(*vals));
	size_t i, j;

	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -ENOMEM;
	}
	for (i = 0; i < m->cap; i++) {
		if (!m->keys[i])
			continue;
		for (j = smap_hash(m->keys[i]) & (ncap - 1); keys[j]; j = (j + 1) & (ncap - 1))
			;
		keys[j] = m->keys[i];
		vals[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = keys;
	m->vals = vals;
	m->cap = ncap;
	return 0;
}

/* Look key up; when absent insert it with value val.  Returns the value
 * stored, or NO_IDX on allocation failure.  *added tells which happened. */
static uint32_t smap_get(struct smap *m, const char *key, uint32_t val, int *added)
{
	size_t j;

	*added = 0;
	if ((m->n + 1) * 2 > m->cap && smap_rehash(m, m->cap ? m->cap * 2 : 64))
		return NO_IDX;
	for (j = smap_hash(key) & (m->cap - 1); m->keys[j]; j = (j + 1) & (m->cap - 1))
		if (m->keys[j] == key || strcmp(m->keys[j], key) == 0)
			return m->vals[j];
	m->keys[j] = key;
	m->vals[j] = val;
	m->n++;
	*added = 1;
	return val;
}

static void smap_free(struct smap *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

/* --- statistics ---------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Fill s from n durations; sorts d in place. */
static void stats_of(uint64_t *d, size_t n, struct cuda_stats *s)
{
	double mean, acc = 0;
	size_t i;

	memset(s, 0, sizeof(*s));
	if (!n)
		return;
	qsort(d, n, sizeof(*d), cmp_u64);
	s->count = n;
	for (i = 0; i < n; i++)
		s->total += d[i];
	s->min = d[0];
	s->max = d[n - 1];
	mean = (double)s->total / n;
	s->avg = mean;
	s->med = n % 2 ? (double)d[n / 2] : ((double)d[n / 2 - 1] + (double)d[n / 2]) / 2.0;
	if (n > 1) {
		for (i = 0; i < n; i++)
			acc += ((double)d[i] - mean) * ((double)d[i] - mean);
		s->stddev = sqrt(acc / (n - 1));
	}
}

/* --- names ----------------------------------------------------------------- */

const char *cuda_memop_name(uint32_t gpu_kind, uint32_t copy_kind)
{
	static const char *const copy[] = {
		[CBN_COPY_UNKNOWN] = "[CUDA memcpy]",
		[CBN_COPY_HTOD] = "[CUDA memcpy HtoD]",
		[CBN_COPY_DTOH] = "[CUDA memcpy DtoH]",
		[CBN_COPY_HTOA] = "[CUDA memcpy HtoA]",
		[CBN_COPY_ATOH] = "[CUDA memcpy AtoH]",
		[CBN_COPY_ATOA] = "[CUDA memcpy AtoA]",
		[CBN_COPY_ATOD] = "[CUDA memcpy AtoD]",
		[CBN_COPY_DTOA] = "[CUDA memcpy DtoA]",
		[CBN_COPY_DTOD] = "[CUDA memcpy DtoD]",
		[CBN_COPY_HTOH] = "[CUDA memcpy HtoH]",
		[CBN_COPY_PTOP] = "[CUDA memcpy PtoP]",
	};

	if (gpu_kind == PROF_GPU_MEMSET)
		return "[CUDA memset]";
	if (copy_kind < sizeof(copy) / sizeof(copy[0]))
		return copy[copy_kind];
	return copy[CBN_COPY_UNKNOWN];
}

static const char *op_name(const struct prof_gpu_op *op)
{
	if (op->name && *op->name)
		return op->name;
	if (op->kind == PROF_GPU_KERNEL)
		return "[unknown kernel]";
	return cuda_memop_name(op->kind, op->copy_kind);
}

/* Length of name without a "_vNNNN" version suffix and "_ptsz"/"_ptds". */
static size_t api_base_len(const char *name)
{
	size_t n = strlen(name), i;

	for (;;) {
		if (n > 5 && (strncmp(name + n - 5, "_ptsz", 5) == 0 ||
			      strncmp(name + n - 5, "_ptds", 5) == 0)) {
			n -= 5;
			continue;
		}
		i = n;
		while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9')
			i--;
		if (i < n && i >= 2 && name[i - 1] == 'v' && name[i - 2] == '_') {
			n = i - 2;
			continue;
		}
		return n;
	}
}

int cuda_api_is_sync(const char *name)
{
	static const char *const sync[] = {
		"cudaDeviceSynchronize", "cudaThreadSynchronize", "cudaStreamSynchronize",
		"cudaEventSynchronize", "cudaMemcpy", "cudaMemcpy2D", "cudaMemcpy3D",
		"cudaMemcpyPeer", "cudaMemcpy3DPeer", "cudaMemcpyToSymbol", "cudaMemcpyFromSymbol",
		"cudaMemcpyToArray", "cudaMemcpyFromArray", "cudaMemcpy2DToArray",
		"cudaMemcpy2DFromArray", "cuCtxSynchronize", "cuStreamSynchronize",
		"cuEventSynchronize", "cuMemcpy", "cuMemcpyHtoD", "cuMemcpyDtoH", "cuMemcpyPeer",
		"cuMemcpy2D", "cuMemcpy2DUnaligned", "cuMemcpy3D", "cuMemcpy3DPeer",
		"cuMemcpyHtoA", "cuMemcpyAtoH",
	};
	size_t n, i;

	if (!name)
		return 0;
	n = api_base_len(name);
	for (i = 0; i < sizeof(sync) / sizeof(sync[0]); i++)
		if (strlen(sync[i]) == n && strncmp(sync[i], name, n) == 0)
			return 1;
	return 0;
}

int cuda_module_is_runtime(const char *m)
{
	if (!m)
		return 0;
	return strncmp(m, "libcudart", 9) == 0 || strncmp(m, "libcuda.", 8) == 0 ||
	       strcmp(m, "libcuda") == 0 || strncmp(m, "libcupti", 8) == 0 ||
	       strncmp(m, "libcbottleneck", 14) == 0;
}

/* The name without return type and parameter list: "void ns::k<int>(int*)"
 * gives "ns::k<int>" (length in *len).  Demangled templates carry their return
 * type; a name that is not demangled comes back whole. */
static const char *fn_bare(const char *name, size_t *len)
{
	size_t n = strlen(name), b = 0, i;
	const char *clone = strstr(name, " [clone ");
	int depth = 0;

	if (clone)
		n = (size_t)(clone - name);   /* "f(int) [clone .cold]": a part of f */
	while (n && name[n - 1] == ' ')
		n--;
	if (n && name[n - 1] == ')') {
		for (i = n; i-- > 0;) {
			if (name[i] == ')') {
				depth++;
			} else if (name[i] == '(' && --depth == 0) {
				n = i;
				break;
			}
		}
	}
	depth = 0;
	for (i = 0; i < n; i++) {
		if (name[i] == '<' || name[i] == '(')
			depth++;
		else if ((name[i] == '>' || name[i] == ')') && depth)
			depth--;
		else if (name[i] == ' ' && !depth)
			b = i + 1;
	}
	*len = n - b;
	return name + b;
}

/* The last component of a qualified bare name: "ns::k<int>" gives "k<int>". */
static const char *fn_last(const char *bare, size_t len, size_t *out_len)
{
	size_t i, b = 0;
	int depth = 0;

	for (i = 0; i + 1 < len; i++) {
		if (bare[i] == '<' || bare[i] == '(')
			depth++;
		else if ((bare[i] == '>' || bare[i] == ')') && depth)
			depth--;
		else if (!depth && bare[i] == ':' && bare[i + 1] == ':')
			b = i + 2;
	}
	*out_len = len - b;
	return bare + b;
}

static int has_prefix(const char *s, size_t len, const char *pre)
{
	size_t n = strlen(pre);

	return len >= n && strncmp(s, pre, n) == 0;
}

int cuda_file_is_generated(const char *file)
{
	const char *base;

	if (!file || !*file)
		return 0;
	base = strrchr(file, '/');
	base = base ? base + 1 : file;
	if (strstr(base, ".cudafe1."))
		return 1;   /* *.cudafe1.stub.c, *.cudafe1.cpp, ...: nvcc's temporaries */
	if (strcmp(base, "cuda_runtime.h") == 0)
		return 1;
	return strcmp(base, "host_runtime.h") == 0 && base - file >= 4 &&
	       strncmp(base - 4, "crt/", 4) == 0;
}

int cuda_file_in_toolkit(const char *file)
{
	const char *inc, *q;

	if (!file || !(inc = strstr(file, "/include/")))
		return 0;
	/* /usr/local/cuda/include, /usr/local/cuda-13.0/targets/x86_64-linux/include,
	 * /opt/nvidia/hpc_sdk/.../cuda/12.3/include: a "cuda*" directory above include/ */
	for (q = file; q < inc; q++)
		if (*q == '/' && strncmp(q + 1, "cuda", 4) == 0)
			return 1;
	return 0;
}

int cuda_frame_is_launch_glue(const char *function, const char *file)
{
	const char *bare, *last;
	size_t blen, llen;

	if (cuda_file_is_generated(file))
		return 1;
	if (!function || !*function)
		return 0;
	bare = fn_bare(function, &blen);
	last = fn_last(bare, blen, &llen);
	if (has_prefix(last, llen, "__device_stub__") || has_prefix(last, llen, "__cudaLaunch") ||
	    has_prefix(last, llen, "cudaLaunch") ||
	    has_prefix(last, llen, "__cudaPushCallConfiguration") ||
	    has_prefix(last, llen, "__cudaPopCallConfiguration"))
		return 1;
	/* A static cudart lives in the executable: its functions (cuda*, __cuda*,
	 * cudart::*, and the internal libcudart_static_<hash>) have no source
	 * file, or one in the toolkit's headers.  A user's own cudaCheck() in the
	 * user's file stays. */
	if (has_prefix(bare, blen, "cuda") || has_prefix(bare, blen, "__cuda") ||
	    has_prefix(bare, blen, "libcudart_static"))
		return !file || !*file || cuda_file_in_toolkit(file);
	return 0;
}

int cuda_frame_is_device_stub(const char *function)
{
	const char *bare, *last;
	size_t blen, llen;

	if (!function)
		return 0;
	bare = fn_bare(function, &blen);
	last = fn_last(bare, blen, &llen);
	return has_prefix(last, llen, "__device_stub__");
}

int cuda_frame_is_host_wrapper(const char *function, const char *kernel, const char *stub)
{
	const char *a, *b;
	size_t alen, blen;

	if (!function || !*function)
		return 0;
	a = fn_bare(function, &alen);
	if (kernel && *kernel) {
		b = fn_bare(kernel, &blen);
		if (alen == blen && strncmp(a, b, alen) == 0)
			return 1;
	}
	/* "__device_stub__Z7kernelEPf" names the kernel "_Z7kernelEPf": a wrapper
	 * whose symbol was not demangled (extern "C" view, no C++ demangler). */
	if (stub && *stub) {
		b = fn_bare(stub, &blen);
		b = fn_last(b, blen, &blen);
		if (has_prefix(b, blen, "__device_stub__")) {
			b += strlen("__device_stub_");
			blen -= strlen("__device_stub_");
			if (alen == blen && strncmp(a, b, alen) == 0)
				return 1;
		}
	}
	return 0;
}

/* --- sort keys --------------------------------------------------------------- */

enum op_key { K_CUDA_TOTAL, K_CPU_TOTAL, K_SELF_CUDA, K_SELF_CPU, K_CUDA_AVG, K_CPU_AVG, K_COUNT };

static const struct {
	const char *name;
	enum op_key key;
} op_keys[] = {
	{ "cuda_time_total", K_CUDA_TOTAL },      { "device_time_total", K_CUDA_TOTAL },
	{ "cpu_time_total", K_CPU_TOTAL },        { "self_cuda_time_total", K_SELF_CUDA },
	{ "self_device_time_total", K_SELF_CUDA }, { "self_cpu_time_total", K_SELF_CPU },
	{ "cuda_time", K_CUDA_AVG },              { "device_time", K_CUDA_AVG },
	{ "cpu_time", K_CPU_AVG },                { "count", K_COUNT },
};

int cuda_sort_key_valid(const char *key)
{
	size_t i;

	for (i = 0; key && i < sizeof(op_keys) / sizeof(op_keys[0]); i++)
		if (strcmp(op_keys[i].name, key) == 0)
			return 1;
	return 0;
}

static double op_value(const struct cuda_op_row *r, enum op_key key)
{
	switch (key) {
	case K_CUDA_TOTAL: return (double)r->cuda_total_ns;
	case K_CPU_TOTAL: return (double)r->cpu_total_ns;
	case K_SELF_CUDA: return (double)r->self_cuda_ns;
	case K_SELF_CPU: return (double)r->self_cpu_ns;
	case K_CUDA_AVG: return r->calls ? (double)r->cuda_total_ns / r->calls : 0;
	case K_CPU_AVG: return r->calls ? (double)r->cpu_total_ns / r->calls : 0;
	case K_COUNT: return (double)r->calls;
	}
	return 0;
}

static int cmp_op(const void *a, const void *b, void *key)
{
	const struct cuda_op_row *x = a, *y = b;
	double vx = op_value(x, *(enum op_key *)key), vy = op_value(y, *(enum op_key *)key);
	int c;

	if (vx != vy)
		return vx > vy ? -1 : 1;
	c = strcmp(x->name, y->name);
	if (c)
		return c;
	return x->kind < y->kind ? -1 : x->kind > y->kind;
}

const char *cuda_sort_ops(struct cuda_analysis *a, const char *key)
{
	enum op_key sort_key = K_CUDA_TOTAL;
	const char *used = NULL;
	size_t i;

	for (i = 0; key && i < sizeof(op_keys) / sizeof(op_keys[0]); i++)
		if (strcmp(op_keys[i].name, key) == 0) {
			used = op_keys[i].name;
			sort_key = op_keys[i].key;
		}
	if (!used) {
		used = a->self_cuda_total_ns ? "cuda_time_total" : "cpu_time_total";
		sort_key = a->self_cuda_total_ns ? K_CUDA_TOTAL : K_CPU_TOTAL;
	}
	if (a->nops)
		qsort_r(a->ops, a->nops, sizeof(*a->ops), cmp_op, &sort_key);
	return used;
}

/* --- nesting of ranges and API calls per thread ------------------------------ */

enum { N_RANGE = 0, N_API = 1 };

struct node {
	uint64_t start, end;
	uint32_t thread, type, idx;
	uint32_t parent;         /* node index, NO_IDX at top level */
	int64_t self;            /* duration minus the parts covered by children */
	uint64_t cuda_total;     /* GPU time launched from inside (itself and descendants) */
	uint64_t direct_gpu;     /* API nodes: GPU time of ops naming this call */
	uint64_t direct_ops;
};

struct nest {
	struct node *n;
	size_t nn;
	uint32_t *api_node;      /* cuda_api index → node index */
	uint32_t *range_node;    /* range index → node index, NO_IDX for instants */
};

static int cmp_node(const void *a, const void *b, void *nodes)
{
	const struct node *x = &((const struct node *)nodes)[*(const uint32_t *)a];
	const struct node *y = &((const struct node *)nodes)[*(const uint32_t *)b];

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

static int range_is_span(const struct prof_range *r)
{
	return r->kind != CBN_RANGE_MARK && r->kind != CBN_RANGE_STEP && r->end > r->start;
}

static int nest_build(const struct profile *p, struct nest *ns)
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

		ns->range_node[i] = NO_IDX;
		if (!range_is_span(r))
			continue;
		ns->range_node[i] = (uint32_t)ns->nn;
		ns->n[ns->nn++] = (struct node){ .start = r->start, .end = r->end, .thread = r->thread,
						 .type = N_RANGE, .idx = (uint32_t)i, .parent = NO_IDX };
	}
	for (i = 0; i < p->ncuda_api; i++) {
		const struct prof_cuda_api *c = &p->cuda_api[i];

		ns->api_node[i] = (uint32_t)ns->nn;
		ns->n[ns->nn++] = (struct node){ .start = c->start, .end = c->end > c->start ? c->end : c->start,
						 .thread = c->thread, .type = N_API, .idx = (uint32_t)i,
						 .parent = NO_IDX };
	}
	for (i = 0; i < ns->nn; i++)
		ns->n[i].self = (int64_t)dur(ns->n[i].start, ns->n[i].end);
	order = malloc((ns->nn + 1) * sizeof(*order));
	stack = malloc((ns->nn + 1) * sizeof(*stack));
	if (!order || !stack)
		goto out;
	for (i = 0; i < ns->nn; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, ns->nn, sizeof(*order), cmp_node, ns->n);
	for (k = 0; k < ns->nn; k++) {
		struct node *x = &ns->n[order[k]];

		if (x->thread == PROF_NONE)
			continue;   /* no thread: cannot nest, stays top level */
		if (top && ns->n[stack[top - 1]].thread != x->thread)
			top = 0;
		while (top && ns->n[stack[top - 1]].end <= x->start)
			top--;
		if (top) {
			struct node *par = &ns->n[stack[top - 1]];
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
		for (; x != NO_IDX; x = ns->n[x].parent)
			ns->n[x].cuda_total += d;
	}
	ret = 0;
out:
	free(order);
	free(stack);
	return ret;
}

static void nest_free(struct nest *ns)
{
	free(ns->n);
	free(ns->api_node);
	free(ns->range_node);
}

/* --- the autograd-style rows --------------------------------------------------- */

static int add_op(struct cuda_analysis *a, size_t *cap, struct smap *m, const char *name,
		  uint32_t kind, uint32_t *row)
{
	int added;
	uint32_t v = smap_get(m, name, (uint32_t)a->nops, &added);

	if (v == NO_IDX)
		return -ENOMEM;
	if (added) {
		if (grow((void **)&a->ops, cap, a->nops + 1, sizeof(*a->ops)))
			return -ENOMEM;
		memset(&a->ops[a->nops], 0, sizeof(*a->ops));
		a->ops[a->nops].name = name;
		a->ops[a->nops].kind = kind;
		a->nops++;
	}
	*row = v;
	return 0;
}

static const char *range_key(struct cuda_priv *pv, const struct prof_range *r)
{
	const char *name = or_unnamed(r->name, "[unnamed range]");

	if (r->domain && *r->domain)
		return keep_str(pv, xasprintf("%s:%s", r->domain, name));
	return name;
}

static int build_ops(struct cuda_priv *pv, const struct profile *p, const struct nest *ns,
		     const char **range_names)
{
	struct cuda_analysis *a = &pv->pub;
	struct smap m[5] = { { 0 } };
	size_t cap = 0, i;
	uint32_t row;
	int ret = -ENOMEM;

	for (i = 0; i < p->nranges; i++) {
		const struct node *x;
		struct cuda_op_row *r;

		if (ns->range_node[i] == NO_IDX || !range_names[i])
			continue;
		x = &ns->n[ns->range_node[i]];
		if (add_op(a, &cap, &m[CUDA_ROW_RANGE], range_names[i], CUDA_ROW_RANGE, &row))
			goto out;
		r = &a->ops[row];
		r->calls++;
		r->cpu_total_ns += dur(x->start, x->end);
		r->self_cpu_ns += (uint64_t)x->self;
		r->cuda_total_ns += x->cuda_total;
	}
	for (i = 0; i < p->ncuda_api; i++) {
		const struct node *x = &ns->n[ns->api_node[i]];
		struct cuda_op_row *r;

		if (add_op(a, &cap, &m[CUDA_ROW_API], api_name(&p->cuda_api[i]), CUDA_ROW_API, &row))
			goto out;
		r = &a->ops[row];
		r->calls++;
		r->cpu_total_ns += dur(x->start, x->end);
		r->self_cpu_ns += (uint64_t)x->self;
		r->cuda_total_ns += x->cuda_total;
	}
	for (i = 0; i < p->ngpu_ops; i++) {
		const struct prof_gpu_op *op = &p->gpu_ops[i];
		uint32_t kind = op->kind == PROF_GPU_KERNEL ? CUDA_ROW_KERNEL :
				op->kind == PROF_GPU_MEMSET ? CUDA_ROW_MEMSET : CUDA_ROW_MEMCPY;
		uint64_t d = dur(op->start, op->end);
		struct cuda_op_row *r;

		if (add_op(a, &cap, &m[kind], op_name(op), kind, &row))
			goto out;
		r = &a->ops[row];
		r->calls++;
		r->self_cuda_ns += d;
		r->cuda_total_ns += d;
	}
	for (i = 0; i < a->nops; i++) {
		a->self_cpu_total_ns += a->ops[i].self_cpu_ns;
		a->self_cuda_total_ns += a->ops[i].self_cuda_ns;
	}
	ret = 0;
out:
	for (i = 0; i < 5; i++)
		smap_free(&m[i]);
	return ret;
}

/* --- per-kernel occupancy ------------------------------------------------------ */

static const struct prof_cuda_device *find_device(const struct profile *p, uint32_t process,
						  uint32_t id)
{
	const struct prof_cuda_device *any = NULL;
	size_t i;

	for (i = 0; i < p->ndevices; i++) {
		if (p->devices[i].id != id)
			continue;
		if (p->devices[i].process == process)
			return &p->devices[i];
		if (!any)
			any = &p->devices[i];
	}
	return any;
}

static const struct prof_cuda_context *find_context(const struct profile *p, uint32_t process,
						    uint32_t id)
{
	size_t i;

	for (i = 0; i < p->ncontexts; i++)
		if (p->contexts[i].context == id && p->contexts[i].process == process)
			return &p->contexts[i];
	return NULL;
}

static int same_launch(const struct prof_gpu_op *x, const struct prof_gpu_op *y)
{
	return memcmp(x->grid, y->grid, sizeof(x->grid)) == 0 &&
	       memcmp(x->block, y->block, sizeof(x->block)) == 0 && x->registers == y->registers &&
	       x->static_smem == y->static_smem && x->dynamic_smem == y->dynamic_smem &&
	       x->shmem_limit_optin == y->shmem_limit_optin;
}

/* bps[i], occ[i]: blocks per SM and occupancy of kernel op i, -1 unknown. */
static void kernel_occupancy(const struct profile *p, double *bps, double *occ)
{
	const struct prof_gpu_op *last = NULL;
	const struct prof_cuda_device *last_dev = NULL;
	uint32_t last_sm = 0;
	double last_bps = -1, last_occ = -1;
	size_t i;

	for (i = 0; i < p->ngpu_ops; i++) {
		const struct prof_gpu_op *op = &p->gpu_ops[i];
		const struct prof_cuda_device *dev;
		struct occ_result r;
		uint32_t sm;
		int ret;

		bps[i] = occ[i] = -1;
		if (op->kind != PROF_GPU_KERNEL)
			continue;
		dev = find_device(p, op->process, op->device);
		sm = occ_sm_count(dev, find_context(p, op->process, op->context));
		if (last && dev == last_dev && sm == last_sm && same_launch(op, last)) {
			bps[i] = last_bps;
			occ[i] = last_occ;
			continue;
		}
		ret = occ_compute(dev, sm, op, &r);
		if (ret == 0) {
			bps[i] = r.blocks_per_sm;
			occ[i] = r.occupancy;
		} else if (ret == -ENOTSUP) {
			bps[i] = r.blocks_per_sm;
		}
		last = op;
		last_dev = dev;
		last_sm = sm;
		last_bps = bps[i];
		last_occ = occ[i];
	}
}

/* --- kernel and memop summaries --------------------------------------------------- */

/* Group the GPU ops of kinds (mask of 1 << PROF_GPU_*) by name: gid[i] is the
 * group of op i (NO_IDX if not selected), first[g] the group's first op.
 * Returns the number of groups, or -ENOMEM. */
static long group_ops(const struct profile *p, unsigned mask, uint32_t *gid, uint32_t **first_out)
{
	struct smap m = { 0 };
	uint32_t *first = NULL;
	size_t cap = 0, n = 0, i;
	int added;

	for (i = 0; i < p->ngpu_ops; i++) {
		const struct prof_gpu_op *op = &p->gpu_ops[i];
		uint32_t g;

		gid[i] = NO_IDX;
		if (op->kind >= 32 || !(mask & (1u << op->kind)))
			continue;
		g = smap_get(&m, op_name(op), (uint32_t)n, &added);
		if (g == NO_IDX)
			goto fail;
		if (added) {
			if (grow((void **)&first, &cap, n + 1, sizeof(*first)))
				goto fail;
			first[n++] = (uint32_t)i;
		}
		gid[i] = g;
	}
	smap_free(&m);
	*first_out = first;
	return (long)n;
fail:
	smap_free(&m);
	free(first);
	return -ENOMEM;
}

/* Members of every group, contiguous: members[off[g] .. off[g+1]), in op order. */
static int group_members(const struct profile *p, const uint32_t *gid, size_t ng, uint32_t **mem,
			 size_t **off)
{
	size_t *o = calloc(ng + 2, sizeof(*o)), *fill = NULL, i;
	uint32_t *m = malloc((p->ngpu_ops + 1) * sizeof(*m));

	if (!o || !m)
		goto fail;
	for (i = 0; i < p->ngpu_ops; i++)
		if (gid[i] != NO_IDX)
			o[gid[i] + 1]++;
	for (i = 0; i < ng; i++)
		o[i + 1] += o[i];
	fill = malloc((ng + 1) * sizeof(*fill));
	if (!fill)
		goto fail;
	memcpy(fill, o, (ng + 1) * sizeof(*fill));
	for (i = 0; i < p->ngpu_ops; i++)
		if (gid[i] != NO_IDX)
			m[fill[gid[i]]++] = (uint32_t)i;
	free(fill);
	*mem = m;
	*off = o;
	return 0;
fail:
	free(o);
	free(m);
	return -ENOMEM;
}

static int cmp_kernel(const void *a, const void *b)
{
	const struct cuda_kernel_row *x = a, *y = b;

	if (x->t.total != y->t.total)
		return x->t.total > y->t.total ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int cmp_memop(const void *a, const void *b)
{
	const struct cuda_memop_row *x = a, *y = b;

	if (x->t.total != y->t.total)
		return x->t.total > y->t.total ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int cmp_api(const void *a, const void *b)
{
	const struct cuda_api_row *x = a, *y = b;

	if (x->t.total != y->t.total)
		return x->t.total > y->t.total ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int build_kernels(struct cuda_analysis *a, const struct profile *p, const double *bps,
			 const double *occ, uint64_t *scratch)
{
	uint32_t *gid = malloc((p->ngpu_ops + 1) * sizeof(*gid)), *first = NULL, *mem = NULL;
	size_t *off = NULL, g, j;
	long ng;
	int ret = -ENOMEM;

	if (!gid)
		goto out;
	ng = group_ops(p, 1u << PROF_GPU_KERNEL, gid, &first);
	if (ng < 0)
		goto out;
	if (group_members(p, gid, (size_t)ng, &mem, &off))
		goto out;
	a->kernels = calloc((size_t)ng + 1, sizeof(*a->kernels));
	if (!a->kernels)
		goto out;
	a->nkernels = (size_t)ng;
	for (g = 0; g < (size_t)ng; g++) {
		struct cuda_kernel_row *k = &a->kernels[g];
		const struct prof_gpu_op *f = &p->gpu_ops[first[g]];
		const struct prof_gpu_op *earliest = f;
		double wb = 0, wbd = 0, wo = 0, wod = 0;
		size_t n = off[g + 1] - off[g], ne = 0;

		k->name = op_name(f);
		memcpy(k->grid, f->grid, sizeof(k->grid));
		memcpy(k->block, f->block, sizeof(k->block));
		k->registers = f->registers;
		k->static_smem = f->static_smem;
		k->dynamic_smem = f->dynamic_smem;
		for (j = off[g]; j < off[g + 1]; j++) {
			const struct prof_gpu_op *op = &p->gpu_ops[mem[j]];
			double d = (double)dur(op->start, op->end);

			scratch[j - off[g]] = dur(op->start, op->end);
			if (!same_launch(op, f))
				k->config_varies = 1;
			if (op->start < earliest->start)
				earliest = op;
			if (bps[mem[j]] >= 0) {
				wb += bps[mem[j]] * d;
				wbd += d;
			}
			if (occ[mem[j]] >= 0) {
				wo += occ[mem[j]] * d;
				wod += d;
			}
		}
		/* A zero-duration kernel still has a configuration: fall back to
		 * the plain mean when every known instance lasted 0 ns. */
		k->blocks_per_sm = wbd > 0 ? wb / wbd : -1;
		k->est_occupancy = wod > 0 ? wo / wod : -1;
		if (wbd == 0 || wod == 0) {
			double sb = 0, so = 0;
			size_t nb = 0, no = 0;

			for (j = off[g]; j < off[g + 1]; j++) {
				if (bps[mem[j]] >= 0)
					sb += bps[mem[j]], nb++;
				if (occ[mem[j]] >= 0)
					so += occ[mem[j]], no++;
			}
			if (wbd == 0 && nb)
				k->blocks_per_sm = sb / nb;
			if (wod == 0 && no)
				k->est_occupancy = so / no;
		}
		k->first_ns = dur(earliest->start, earliest->end);
		if (n > 1) {
			/* median of the others: drop one copy of the first's duration */
			for (j = 0; j < n; j++)
				if (scratch[j] == k->first_ns) {
					scratch[j] = scratch[n - 1];
					break;
				}
			qsort(scratch, n - 1, sizeof(*scratch), cmp_u64);
			ne = n - 1;
			k->rest_med_ns = ne % 2 ? (double)scratch[ne / 2] :
				(double)(scratch[ne / 2 - 1] + scratch[ne / 2]) / 2.0;
			scratch[n - 1] = k->first_ns;
		}
		stats_of(scratch, n, &k->t);
		a->totals.kernels += n;
		a->totals.kernel_ns += k->t.total;
	}
	for (g = 0; g < a->nkernels; g++)
		a->kernels[g].time_pct = a->totals.kernel_ns ?
			100.0 * a->kernels[g].t.total / a->totals.kernel_ns : 0;
	if (a->nkernels)
		qsort(a->kernels, a->nkernels, sizeof(*a->kernels), cmp_kernel);
	ret = 0;
out:
	free(gid);
	free(first);
	free(mem);
	free(off);
	return ret;
}

/* Memory kind of the host side of a copy, CBN_MEM_UNKNOWN if none. */
static uint32_t host_kind(const struct prof_gpu_op *op)
{
	switch (op->copy_kind) {
	case CBN_COPY_HTOD:
	case CBN_COPY_HTOA:
	case CBN_COPY_HTOH:
		return op->src_kind;
	case CBN_COPY_DTOH:
	case CBN_COPY_ATOH:
		return op->dst_kind;
	}
	return CBN_MEM_UNKNOWN;
}

static int build_memops(struct cuda_analysis *a, const struct profile *p, uint64_t *scratch)
{
	uint32_t *gid = malloc((p->ngpu_ops + 1) * sizeof(*gid)), *first = NULL, *mem = NULL;
	size_t *off = NULL, g, j;
	uint64_t all = 0;
	long ng;
	int ret = -ENOMEM;

	if (!gid)
		goto out;
	ng = group_ops(p, (1u << PROF_GPU_MEMCPY) | (1u << PROF_GPU_MEMSET), gid, &first);
	if (ng < 0)
		goto out;
	if (group_members(p, gid, (size_t)ng, &mem, &off))
		goto out;
	a->memops = calloc((size_t)ng + 1, sizeof(*a->memops));
	if (!a->memops)
		goto out;
	a->nmemops = (size_t)ng;
	for (g = 0; g < (size_t)ng; g++) {
		struct cuda_memop_row *r = &a->memops[g];
		const struct prof_gpu_op *f = &p->gpu_ops[first[g]];

		r->name = op_name(f);
		r->kind = f->kind == PROF_GPU_MEMSET ? CUDA_ROW_MEMSET : CUDA_ROW_MEMCPY;
		r->copy_kind = f->copy_kind;
		for (j = off[g]; j < off[g + 1]; j++) {
			const struct prof_gpu_op *op = &p->gpu_ops[mem[j]];
			uint64_t d = dur(op->start, op->end);
			uint32_t hk = op->kind == PROF_GPU_MEMCPY ? host_kind(op) : CBN_MEM_UNKNOWN;

			scratch[j - off[g]] = d;
			r->bytes += op->bytes;
			if (hk == CBN_MEM_PAGEABLE) {
				r->pageable++;
				r->pageable_ns += d;
				r->pageable_bytes += op->bytes;
			} else if (hk == CBN_MEM_PINNED) {
				r->pinned++;
				r->pinned_ns += d;
				r->pinned_bytes += op->bytes;
			}
			if (op->kind == PROF_GPU_MEMSET) {
				a->totals.memset++;
				a->totals.memset_ns += d;
			} else {
				a->totals.memcpy++;
				a->totals.memcpy_ns += d;
				a->totals.memcpy_bytes += op->bytes;
			}
		}
		stats_of(scratch, off[g + 1] - off[g], &r->t);
		all += r->t.total;
	}
	for (g = 0; g < a->nmemops; g++)
		a->memops[g].time_pct = all ? 100.0 * a->memops[g].t.total / all : 0;
	if (a->nmemops)
		qsort(a->memops, a->nmemops, sizeof(*a->memops), cmp_memop);
	ret = 0;
out:
	free(gid);
	free(first);
	free(mem);
	free(off);
	return ret;
}

static int build_api(struct cuda_analysis *a, const struct profile *p, uint64_t *scratch)
{
	struct smap m = { 0 };
	uint32_t *gid = malloc((p->ncuda_api + 1) * sizeof(*gid)), *cnt = NULL;
	size_t n = 0, cap = 0, i, g, *off = NULL, *fill = NULL;
	int added, ret = -ENOMEM;

	if (!gid)
		goto out;
	for (i = 0; i < p->ncuda_api; i++) {
		const char *name = api_name(&p->cuda_api[i]);
		uint32_t v = smap_get(&m, name, (uint32_t)n, &added);

		if (v == NO_IDX)
			goto out;
		if (added) {
			if (grow((void **)&a->api, &cap, n + 1, sizeof(*a->api)))
				goto out;
			memset(&a->api[n], 0, sizeof(*a->api));
			a->api[n++].name = name;
			a->napi = n;
		}
		gid[i] = v;
	}
	off = calloc(n + 2, sizeof(*off));
	fill = calloc(n + 2, sizeof(*fill));
	if (!off || !fill)
		goto out;
	for (i = 0; i < p->ncuda_api; i++)
		off[gid[i] + 1]++;
	for (g = 0; g < n; g++)
		off[g + 1] += off[g];
	memcpy(fill, off, (n + 1) * sizeof(*fill));
	for (i = 0; i < p->ncuda_api; i++)
		scratch[fill[gid[i]]++] = dur(p->cuda_api[i].start, p->cuda_api[i].end);
	for (g = 0; g < n; g++) {
		stats_of(scratch + off[g], off[g + 1] - off[g], &a->api[g].t);
		a->totals.api_calls += a->api[g].t.count;
		a->totals.api_ns += a->api[g].t.total;
	}
	for (g = 0; g < n; g++)
		a->api[g].time_pct = a->totals.api_ns ? 100.0 * a->api[g].t.total / a->totals.api_ns : 0;
	if (n)
		qsort(a->api, n, sizeof(*a->api), cmp_api);
	ret = 0;
out:
	smap_free(&m);
	free(gid);
	free(cnt);
	free(off);
	free(fill);
	return ret;
}

/* --- launch sites ------------------------------------------------------------------- */

/*
 * The frame of stack s (leaf first) that stands for the user's launch: past
 * frames in the CUDA runtime, driver, CUPTI and us (by module); past what nvcc
 * generates in the user's executable and a static cudart
 * (cuda_frame_is_launch_glue()); and, once a __device_stub__ was passed, past
 * one host wrapper named like the kernel (the function `kernel<<<>>>()` calls,
 * often inlined into the caller) when there is a frame outside it.  Only one:
 * a host function overloading the kernel's name that calls it stays the site.
 * When nothing is left, the outermost generated frame of the user's module
 * (stub, .cudafe1.* code), else NO_IDX.
 */
static uint32_t site_frame(const struct profile *p, uint32_t s, const char *kernel)
{
	const struct prof_stack *st;
	uint32_t i, fallback = NO_IDX;
	const char *stub = NULL;
	int wrapper = 0;

	if (s >= p->nstacks)
		return NO_IDX;
	st = &p->stacks[s];
	for (i = 0; i < st->nframes; i++) {
		uint32_t f = st->first + i;
		const struct prof_frame *fr;
		const struct prof_func *fn;
		const char *file;

		if (f >= p->nframes)
			break;
		fr = &p->frames[f];
		if (fr->func >= p->nfuncs)
			return f;
		fn = &p->funcs[fr->func];
		if (cuda_module_is_runtime(fn->module))
			continue;
		/* the executing line's file, else the definition's */
		file = fr->file && *fr->file ? fr->file : fn->file;
		if (cuda_frame_is_launch_glue(fn->name, file) || cuda_file_is_generated(fn->file)) {
			if (cuda_frame_is_device_stub(fn->name)) {
				stub = fn->name;
				fallback = f;
			} else if (cuda_file_is_generated(file) || cuda_file_is_generated(fn->file)) {
				fallback = f;
			}
			continue;
		}
		if (stub && !wrapper && i + 1 < st->nframes && f + 1 < p->nframes &&
		    cuda_frame_is_host_wrapper(fn->name, kernel, stub)) {
			wrapper = 1;
			continue;
		}
		return f;
	}
	return fallback;
}

static int cmp_site(const void *a, const void *b)
{
	const struct cuda_site *x = a, *y = b;
	int c;

	if (x->gpu_ns != y->gpu_ns)
		return x->gpu_ns > y->gpu_ns ? -1 : 1;
	if (x->launches != y->launches)
		return x->launches > y->launches ? -1 : 1;
	c = strcmp(x->function, y->function);
	return c ? c : strcmp(x->file, y->file);
}

static int build_sites(struct cuda_priv *pv, const struct profile *p, const struct nest *ns)
{
	struct cuda_analysis *a = &pv->pub;
	struct smap m = { 0 };
	const char **kname;   /* cuda_api index → name of the first kernel it launched */
	size_t cap = 0, i;
	int added, ret = -ENOMEM;

	kname = calloc(p->ncuda_api + 1, sizeof(*kname));
	if (!kname)
		return -ENOMEM;
	for (i = 0; i < p->ngpu_ops; i++) {
		const struct prof_gpu_op *op = &p->gpu_ops[i];

		if (op->kind == PROF_GPU_KERNEL && op->api < p->ncuda_api && !kname[op->api])
			kname[op->api] = op->name;
	}
	for (i = 0; i < p->ncuda_api; i++) {
		const struct node *x = &ns->n[ns->api_node[i]];
		uint32_t s = p->cuda_api[i].stack, f, v;
		const char *fn = "[no stack captured]", *file = "", *module = "";
		uint32_t line = 0;
		char *key;

		if (!x->direct_ops)
			continue;
		/* A driver call inside a runtime call may have no stack of
		 * its own: the enclosing API call's stack is the same site. */
		if (s >= p->nstacks)
			s = PROF_NONE;   /* PROF_NONE, or an index the loader could not resolve */
		for (uint32_t up = x->parent; s == PROF_NONE && up != NO_IDX; up = ns->n[up].parent)
			if (ns->n[up].type == N_API && p->cuda_api[ns->n[up].idx].stack < p->nstacks)
				s = p->cuda_api[ns->n[up].idx].stack;
		if (s != PROF_NONE) {
			f = site_frame(p, s, kname[i]);
			if (f == NO_IDX) {
				fn = "[inside the CUDA runtime]";
			} else {
				const struct prof_frame *fr = &p->frames[f];

				if (fr->func < p->nfuncs) {
					fn = nz(p->funcs[fr->func].name);
					module = nz(p->funcs[fr->func].module);
				} else {
					fn = "[unknown]";
				}
				file = nz(fr->file);
				line = fr->line;
			}
		}
		key = keep_str(pv, xasprintf("%s\x1f%s\x1f%u\x1f%s", fn, file, line, module));
		if (!key)
			goto out;
		v = smap_get(&m, key, (uint32_t)a->nsites, &added);
		if (v == NO_IDX)
			goto out;
		if (added) {
			if (grow((void **)&a->sites, &cap, a->nsites + 1, sizeof(*a->sites)))
				goto out;
			a->sites[a->nsites++] = (struct cuda_site){ .function = fn, .file = file,
								    .module = module, .line = line };
		} else {
			/* the key is not needed twice */
			free(pv->strs[--pv->nstrs]);
		}
		a->sites[v].launches++;
		a->sites[v].gpu_ns += x->direct_gpu;
	}
	if (a->nsites)
		qsort(a->sites, a->nsites, sizeof(*a->sites), cmp_site);
	ret = 0;
out:
	smap_free(&m);
	free(kname);
	return ret;
}

/* --- overview ----------------------------------------------------------------------- */

struct span {
	uint64_t start, end;
	double value;
};

static int cmp_span(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

/* Length of the union of sorted spans; with gaps, the holes between them. */
static uint64_t union_len(const struct span *s, size_t n, uint64_t *gaps, uint64_t *largest,
			  uint64_t *ngaps)
{
	uint64_t total = 0, cs, ce;
	size_t i;

	if (!n)
		return 0;
	cs = s[0].start;
	ce = s[0].end;
	for (i = 1; i < n; i++) {
		if (s[i].start > ce) {
			total += ce - cs;
			if (gaps) {
				uint64_t g = s[i].start - ce;

				*gaps += g;
				(*ngaps)++;
				if (g > *largest)
					*largest = g;
			}
			cs = s[i].start;
			ce = s[i].end;
		} else if (s[i].end > ce) {
			ce = s[i].end;
		}
	}
	return total + (ce - cs);
}

struct edge {
	uint64_t t;
	double dv;
};

static int cmp_edge(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;

	return x->t < y->t ? -1 : x->t > y->t;
}

/* ∫ min(Σ blocks/SM of running kernels, 1) dt over the spans. */
static double sm_efficiency_integral(const struct span *s, size_t n, struct edge *e)
{
	double level = 0, acc = 0;
	size_t i, ne = 0;

	for (i = 0; i < n; i++) {
		if (s[i].value < 0 || s[i].end <= s[i].start)
			continue;
		e[ne++] = (struct edge){ s[i].start, s[i].value };
		e[ne++] = (struct edge){ s[i].end, -s[i].value };
	}
	qsort(e, ne, sizeof(*e), cmp_edge);
	for (i = 0; i + 1 < ne; i++) {
		level += e[i].dv;
		if (level > 1e-12)
			acc += (level < 1.0 ? level : 1.0) * (double)(e[i + 1].t - e[i].t);
	}
	return acc;
}

static int cmp_corr(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int build_overview(struct cuda_analysis *a, const struct profile *p, const struct nest *ns,
			  const double *bps, const double *occ)
{
	struct cuda_overview *ov = &a->ov;
	struct span *ks = NULL, *as = NULL;
	struct edge *edges = NULL;
	uint64_t *devs = NULL, *corr = NULL, *kd = NULL;
	size_t nd = 0, nk = 0, ncorr = 0, i, d;
	double busy_sum = 0, eff_sum = 0, wo = 0, wod = 0;
	int eff_known = 0, ret = -ENOMEM;

	memset(ov, 0, sizeof(*ov));
	ov->gpu_utilization = ov->est_sm_efficiency = ov->est_achieved_occupancy = -1;
	ov->window_start = UINT64_MAX;
	for (i = 0; i < p->ngpu_ops; i++) {
		const struct prof_gpu_op *op = &p->gpu_ops[i];

		if (op->start < ov->window_start)
			ov->window_start = op->start;
		if (op->end > ov->window_end)
			ov->window_end = op->end;
		ov->gpu_ns += dur(op->start, op->end);
	}
	if (!p->ngpu_ops)
		ov->window_start = 0;
	ov->window_ns = dur(ov->window_start, ov->window_end);

	/* CPU time: sampled, per process at its own period. */
	for (i = 0; i < p->nprocesses; i++)
		ov->cpu_ns += p->processes[i].weight * p->processes[i].period_ns;
	if (!ov->cpu_ns)
		for (i = 0; i < p->nthreads; i++)
			ov->cpu_ns += p->threads[i].cpu_ns;

	/* Per device: kernel union (utilization), all-activity gaps, SM sweep. */
	devs = malloc((p->ngpu_ops + 1) * sizeof(*devs));
	ks = malloc((p->ngpu_ops + 1) * sizeof(*ks));
	as = malloc((p->ngpu_ops + 1) * sizeof(*as));
	edges = malloc((2 * p->ngpu_ops + 2) * sizeof(*edges));
	kd = malloc((p->ngpu_ops + 1) * sizeof(*kd));
	if (!devs || !ks || !as || !edges || !kd)
		goto out;
	for (i = 0; i < p->ngpu_ops; i++)
		devs[i] = p->gpu_ops[i].device;
	qsort(devs, p->ngpu_ops, sizeof(*devs), cmp_u64);
	for (i = 0; i < p->ngpu_ops; i++)
		if (!nd || devs[nd - 1] != devs[i])
			devs[nd++] = devs[i];
	ov->ndevices = (uint32_t)nd;
	a->devices = calloc(nd + 1, sizeof(*a->devices));
	if (!a->devices)
		goto out;
	a->ndevices = nd;
	for (d = 0; d < nd; d++) {
		struct cuda_device_ov *dv;
		size_t nks = 0, nas = 0;
		uint64_t busy;
		double eff;
		int dev_known = 0;

		for (i = 0; i < p->ngpu_ops; i++) {
			const struct prof_gpu_op *op = &p->gpu_ops[i];
			struct span sp = { op->start, op->end > op->start ? op->end : op->start,
					   op->kind == PROF_GPU_KERNEL ? bps[i] : -1 };

			if (op->device != devs[d])
				continue;
			as[nas++] = sp;
			if (op->kind == PROF_GPU_KERNEL)
				ks[nks++] = sp;
		}
		qsort(ks, nks, sizeof(*ks), cmp_span);
		qsort(as, nas, sizeof(*as), cmp_span);
		busy = union_len(ks, nks, NULL, NULL, NULL);
		ov->gpu_busy_ns += busy;
		busy_sum += (double)busy;
		union_len(as, nas, &ov->idle_gaps_ns, &ov->largest_gap_ns, &ov->ngaps);
		dv = &a->devices[d];
		dv->device = (uint32_t)devs[d];
		dv->busy_ns = busy;
		dv->utilization = ov->window_ns ? (double)busy / ov->window_ns : 0;
		dv->est_sm_efficiency = -1;
		for (i = 0; i < nks; i++)
			if (ks[i].value >= 0)
				eff_known = dev_known = 1;
		eff = sm_efficiency_integral(ks, nks, edges);
		eff_sum += eff;
		if (dev_known && ov->window_ns)
			dv->est_sm_efficiency = eff / ov->window_ns;
	}
	if (nd && ov->window_ns) {
		ov->gpu_utilization = busy_sum / ((double)ov->window_ns * nd);
		if (eff_known)
			ov->est_sm_efficiency = eff_sum / ((double)ov->window_ns * nd);
	} else if (nd) {
		ov->gpu_utilization = 0;
	}
	for (i = 0; i < p->ngpu_ops; i++) {
		const struct prof_gpu_op *op = &p->gpu_ops[i];

		if (op->kind != PROF_GPU_KERNEL)
			continue;
		kd[nk++] = dur(op->start, op->end);
		if (occ[i] >= 0) {
			wo += occ[i] * (double)dur(op->start, op->end);
			wod += (double)dur(op->start, op->end);
		}
	}
	if (wod > 0)
		ov->est_achieved_occupancy = wo / wod;
	if (nk) {
		qsort(kd, nk, sizeof(*kd), cmp_u64);
		ov->median_kernel_ns = nk % 2 ? (double)kd[nk / 2] :
			((double)kd[nk / 2 - 1] + (double)kd[nk / 2]) / 2.0;
	}

	/* Time blocked in synchronizing calls: outermost sync-family API calls,
	 * plus synchronization records no such call accounts for. */
	corr = malloc((p->ncuda_api + 1) * sizeof(*corr));
	if (!corr)
		goto out;
	for (i = 0; i < p->ncuda_api; i++) {
		const struct prof_cuda_api *c = &p->cuda_api[i];
		const struct node *x = &ns->n[ns->api_node[i]];
		uint32_t up;
		int sync = cuda_api_is_sync(c->name), outer_api = 1, under_sync = 0;

		for (up = x->parent; up != NO_IDX; up = ns->n[up].parent) {
			if (ns->n[up].type != N_API)
				continue;
			outer_api = 0;
			if (cuda_api_is_sync(p->cuda_api[ns->n[up].idx].name))
				under_sync = 1;
		}
		if (sync) {
			corr[ncorr++] = ((uint64_t)c->process << 32) | c->correlation;
			if (!under_sync)
				ov->sync_blocked_ns += dur(c->start, c->end);
		} else if (outer_api) {
			uint64_t s = c->start > ov->window_start ? c->start : ov->window_start;
			uint64_t e = c->end < ov->window_end ? c->end : ov->window_end;

			ov->launch_api_ns += dur(s, e);
		}
	}
	qsort(corr, ncorr, sizeof(*corr), cmp_corr);
	for (i = 0; i < p->nsyncs; i++) {
		uint64_t key = ((uint64_t)p->syncs[i].process << 32) | p->syncs[i].correlation;

		if (!ncorr || !bsearch(&key, corr, ncorr, sizeof(*corr), cmp_corr))
			ov->sync_blocked_ns += dur(p->syncs[i].start, p->syncs[i].end);
	}
	a->totals.sync_ns = ov->sync_blocked_ns;
	a->totals.gpu_busy_ns = ov->gpu_busy_ns;

	/* Verdict (docs/cuda.md, "Verdict"). */
	if (!p->ngpu_ops || ov->gpu_utilization < 0) {
		ov->verdict = "idle";
	} else if (ov->gpu_utilization >= CUDA_VERDICT_COMPUTE_UTIL) {
		ov->verdict = "compute-bound";
	} else if (ov->gpu_utilization < CUDA_VERDICT_OVERHEAD_UTIL &&
		   ((ov->window_ns &&
		     (double)ov->launch_api_ns >= CUDA_OVERHEAD_API_FRACTION * (double)ov->window_ns) ||
		    (a->totals.kernels >= CUDA_OVERHEAD_MIN_KERNELS &&
		     ov->median_kernel_ns < CUDA_OVERHEAD_SHORT_KERNEL_NS))) {
		ov->verdict = "overhead-bound";
	} else {
		ov->verdict = "mixed";
	}
	ret = 0;
out:
	free(ks);
	free(as);
	free(edges);
	free(devs);
	free(corr);
	free(kd);
	return ret;
}

/* --- recommendations ------------------------------------------------------------------- */

static int add_reco(struct cuda_analysis *a, size_t *cap, const char *id, char *evidence,
		    const char *message)
{
	char *msg = strdup(message);

	if (!evidence || !msg || grow((void **)&a->recos, cap, a->nrecos + 1, sizeof(*a->recos))) {
		free(evidence);
		free(msg);
		return -ENOMEM;
	}
	a->recos[a->nrecos++] = (struct cuda_reco){ .id = id, .message = msg, .evidence = evidence };
	return 0;
}

static char *tstr(char *buf, size_t len, double ns)
{
	if (ns >= 1e9)
		snprintf(buf, len, "%.3f s", ns / 1e9);
	else if (ns >= 1e6)
		snprintf(buf, len, "%.3f ms", ns / 1e6);
	else if (ns >= 1e3)
		snprintf(buf, len, "%.3f us", ns / 1e3);
	else
		snprintf(buf, len, "%.0f ns", ns);
	return buf;
}

/* Cold start among repeated ranges: the earliest instance of a name against
 * the median of the others.  Ranges are grouped by name first (one pass),
 * so many distinct names cost nothing extra. */
static int reco_cold_ranges(struct cuda_analysis *a, size_t *cap, const struct profile *p,
			    const char **range_names, uint64_t *scratch)
{
	struct smap m = { 0 };
	uint32_t *gid = malloc((p->nranges + 1) * sizeof(*gid)), *first = NULL, *members = NULL;
	size_t *off = NULL, *fill = NULL, ng = 0, gcap = 0, i, j, fired = 0;
	int added, ret = -ENOMEM;

	if (!gid)
		goto out;
	for (i = 0; i < p->nranges; i++) {
		uint32_t g;

		gid[i] = NO_IDX;
		if (!range_names[i] || !range_is_span(&p->ranges[i]))
			continue;
		g = smap_get(&m, range_names[i], (uint32_t)ng, &added);
		if (g == NO_IDX)
			goto out;
		if (added) {
			if (grow((void **)&first, &gcap, ng + 1, sizeof(*first)))
				goto out;
			first[ng++] = (uint32_t)i;
		} else if (p->ranges[i].start < p->ranges[first[g]].start) {
			first[g] = (uint32_t)i;
		}
		gid[i] = g;
	}
	off = calloc(ng + 2, sizeof(*off));
	fill = calloc(ng + 2, sizeof(*fill));
	members = malloc((p->nranges + 1) * sizeof(*members));
	if (!off || !fill || !members)
		goto out;
	for (i = 0; i < p->nranges; i++)
		if (gid[i] != NO_IDX)
			off[gid[i] + 1]++;
	for (j = 0; j < ng; j++)
		off[j + 1] += off[j];
	memcpy(fill, off, (ng + 1) * sizeof(*fill));
	for (i = 0; i < p->nranges; i++)
		if (gid[i] != NO_IDX)
			members[fill[gid[i]]++] = (uint32_t)i;
	ret = 0;
	for (j = 0; j < ng && fired < 3; j++) {
		const struct prof_range *f = &p->ranges[first[j]];
		uint64_t d0 = dur(f->start, f->end), n = 0;
		double med;
		char b1[32], b2[32];

		for (i = off[j]; i < off[j + 1]; i++)
			if (members[i] != first[j])
				scratch[n++] = dur(p->ranges[members[i]].start, p->ranges[members[i]].end);
		if (n < 2)
			continue;
		qsort(scratch, n, sizeof(*scratch), cmp_u64);
		med = n % 2 ? (double)scratch[n / 2] : (scratch[n / 2 - 1] + scratch[n / 2]) / 2.0;
		if ((double)d0 <= CUDA_COLD_RATIO * med || (double)d0 - med <= CUDA_COLD_MIN_NS)
			continue;
		ret = add_reco(a, cap, "cold-start",
			       xasprintf("range \"%s\": first instance %s vs median %s of the other %llu (%.1fx)",
					 range_names[first[j]], tstr(b1, sizeof(b1), (double)d0),
					 tstr(b2, sizeof(b2), med), (unsigned long long)n,
					 med > 0 ? d0 / med : 0.0),
			       "The first iteration pays one-time costs (context creation, module loading, "
			       "allocator growth, cuDNN/cuBLAS autotuning): warm up before timing, or "
			       "exclude the first iteration from measurements; CUDA_MODULE_LOADING=EAGER "
			       "moves lazy kernel loading to start-up.");
		if (ret)
			break;
		fired++;
	}
out:
	smap_free(&m);
	free(gid);
	free(first);
	free(members);
	free(off);
	free(fill);
	return ret;
}

static int cmp_step(const void *a, const void *b, void *ranges)
{
	const struct prof_range *x = &((const struct prof_range *)ranges)[*(const uint32_t *)a];
	const struct prof_range *y = &((const struct prof_range *)ranges)[*(const uint32_t *)b];

	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* Cold start over iterations: cbn_step() markers are instants, and an
 * iteration is the time from one marker to the next on the same thread. */
static int reco_cold_steps(struct cuda_analysis *a, size_t *cap, const struct profile *p,
			   uint64_t *scratch)
{
	uint32_t *st = malloc((p->nranges + 1) * sizeof(*st));
	size_t n = 0, i, j, k, fired = 0;
	int ret = 0;

	if (!st)
		return -ENOMEM;
	for (i = 0; i < p->nranges; i++)
		if (p->ranges[i].kind == CBN_RANGE_STEP && p->ranges[i].thread != PROF_NONE)
			st[n++] = (uint32_t)i;
	qsort_r(st, n, sizeof(*st), cmp_step, p->ranges);
	for (i = 0; i < n && fired < 3 && !ret; i = j) {
		uint32_t th = p->ranges[st[i]].thread;
		uint64_t first, m = 0;
		double med;
		char b1[32], b2[32];

		for (j = i; j < n && p->ranges[st[j]].thread == th; j++)
			;
		if (j - i < 4)   /* at least three iterations: one first, two to compare */
			continue;
		first = dur(p->ranges[st[i]].start, p->ranges[st[i + 1]].start);
		for (k = i + 1; k + 1 < j; k++)
			scratch[m++] = dur(p->ranges[st[k]].start, p->ranges[st[k + 1]].start);
		qsort(scratch, m, sizeof(*scratch), cmp_u64);
		med = m % 2 ? (double)scratch[m / 2] : (scratch[m / 2 - 1] + scratch[m / 2]) / 2.0;
		if ((double)first <= CUDA_COLD_RATIO * med || (double)first - med <= CUDA_COLD_MIN_NS)
			continue;
		ret = add_reco(a, cap, "cold-start",
			       xasprintf("iterations between step markers on thread %u: first %s vs median %s of "
					 "the other %llu (%.1fx)",
					 th < p->nthreads ? p->threads[th].tid : 0,
					 tstr(b1, sizeof(b1), (double)first), tstr(b2, sizeof(b2), med),
					 (unsigned long long)m, med > 0 ? first / med : 0.0),
			       "The first iteration pays one-time costs (context creation, module loading, "
			       "allocator growth, cuDNN/cuBLAS autotuning): warm up before timing, or "
			       "exclude the first iteration from measurements; CUDA_MODULE_LOADING=EAGER "
			       "moves lazy kernel loading to start-up.");
		fired++;
	}
	free(st);
	return ret;
}

static int build_recos(struct cuda_analysis *a, const struct profile *p, const char **range_names,
		       uint64_t *scratch)
{
	const struct cuda_overview *ov = &a->ov;
	char b1[32], b2[32], b3[32];
	size_t cap = 0, i, fired;
	uint64_t wall = p->wall_ns ? p->wall_ns : ov->window_ns;

	if (!strcmp(ov->verdict, "overhead-bound") &&
	    add_reco(a, &cap, "overhead-bound",
		     xasprintf("GPU utilization %.1f%% over a %s window; non-synchronizing CUDA API time %s "
			       "(%.1f%% of the window); %llu kernels, median %s",
			       100 * ov->gpu_utilization, tstr(b1, sizeof(b1), (double)ov->window_ns),
			       tstr(b2, sizeof(b2), (double)ov->launch_api_ns),
			       ov->window_ns ? 100.0 * ov->launch_api_ns / ov->window_ns : 0.0,
			       (unsigned long long)a->totals.kernels,
			       tstr(b3, sizeof(b3), ov->median_kernel_ns)),
		     "The GPU mostly waits for the CPU to launch work: fuse small kernels, batch work "
		     "into fewer, larger launches, or capture the launch sequence in a CUDA graph "
		     "(cudaStreamBeginCapture/cudaGraphLaunch)."))
		return -ENOMEM;

	if (wall && (double)ov->sync_blocked_ns > CUDA_SYNC_FRACTION * (double)wall) {
		const struct cuda_api_row *top = NULL;

		for (i = 0; i < a->napi; i++)
			if (cuda_api_is_sync(a->api[i].name)) {
				top = &a->api[i];
				break;
			}
		if (add_reco(a, &cap, "sync-dominated",
			     xasprintf("CPU blocked %s in synchronizing calls = %.1f%% of the %s run%s%s%s",
				       tstr(b1, sizeof(b1), (double)ov->sync_blocked_ns),
				       100.0 * ov->sync_blocked_ns / wall, tstr(b2, sizeof(b2), (double)wall),
				       top ? "; largest: " : "", top ? top->name : "",
				       top ? tstr(b3, sizeof(b3), (double)top->t.total) : ""),
			     "The host spends much of the run waiting for the GPU: synchronize less often "
			     "(no cudaDeviceSynchronize per step), use events and cudaStreamWaitEvent to order "
			     "streams, and cudaMemcpyAsync from pinned memory so copies do not block."))
			return -ENOMEM;
	}

	{
		uint64_t n = 0, ns = 0, bytes = 0, htod = 0, dtoh = 0;

		for (i = 0; i < a->nmemops; i++) {
			const struct cuda_memop_row *r = &a->memops[i];

			if (r->kind != CUDA_ROW_MEMCPY ||
			    (r->copy_kind != CBN_COPY_HTOD && r->copy_kind != CBN_COPY_DTOH))
				continue;
			n += r->pageable;
			ns += r->pageable_ns;
			bytes += r->pageable_bytes;
			if (r->copy_kind == CBN_COPY_HTOD)
				htod += r->pageable;
			else
				dtoh += r->pageable;
		}
		/* A stray 4-byte result copy is not worth a recommendation. */
		if (n && (ns >= CUDA_PAGEABLE_MIN_NS ||
			  (double)ns >= CUDA_PAGEABLE_MIN_SHARE * (double)ov->gpu_ns) &&
		    add_reco(a, &cap, "pageable-copies",
				  xasprintf("%llu copies from/to pageable host memory (HtoD %llu, DtoH %llu): "
					    "%s of GPU time, %llu bytes",
					    (unsigned long long)n, (unsigned long long)htod,
					    (unsigned long long)dtoh, tstr(b1, sizeof(b1), (double)ns),
					    (unsigned long long)bytes),
				  "Pageable copies are staged through a driver buffer, run slower and cannot "
				  "overlap with kernels: allocate the host buffers with cudaHostAlloc or "
				  "cudaMallocHost (or pin them with cudaHostRegister) and use cudaMemcpyAsync."))
			return -ENOMEM;
	}

	if (a->totals.kernels > CUDA_TINY_KERNELS_MIN && ov->median_kernel_ns < CUDA_TINY_KERNEL_NS &&
	    add_reco(a, &cap, "tiny-kernels",
		     xasprintf("%llu kernel launches with a median duration of %s",
			       (unsigned long long)a->totals.kernels,
			       tstr(b1, sizeof(b1), ov->median_kernel_ns)),
		     "Each launch costs a few microseconds of CPU and GPU time: fuse small kernels "
		     "(or let a compiler such as torch.compile/XLA fuse them) and replay repeated "
		     "launch sequences as CUDA graphs."))
		return -ENOMEM;

	for (i = 0, fired = 0; i < a->nkernels && fired < 3; i++) {
		const struct cuda_kernel_row *k = &a->kernels[i];

		if (k->blocks_per_sm < 0 || k->blocks_per_sm >= CUDA_SMALL_GRID_BLOCKS ||
		    k->time_pct < 100 * CUDA_SIGNIFICANT_SHARE)
			continue;
		if (add_reco(a, &cap, "small-grid",
			     xasprintf("%s: %.2f blocks per SM (grid %dx%dx%d) and %.1f%% of kernel time",
				       k->name, k->blocks_per_sm, k->grid[0], k->grid[1], k->grid[2],
				       k->time_pct),
			     "The grid has fewer blocks than the GPU has SMs, so some SMs stay idle: "
			     "launch more, smaller blocks, split the work further, or run independent "
			     "kernels concurrently on several streams."))
			return -ENOMEM;
		fired++;
	}

	for (i = 0, fired = 0; i < a->nkernels && fired < 3; i++) {
		const struct cuda_kernel_row *k = &a->kernels[i];

		if (k->t.count < 2 || (double)k->first_ns <= CUDA_COLD_RATIO * k->rest_med_ns ||
		    (double)k->first_ns - k->rest_med_ns <= CUDA_COLD_MIN_NS)
			continue;
		if (add_reco(a, &cap, "cold-start",
			     xasprintf("%s: first instance %s vs median %s of the other %llu (%.1fx)",
				       k->name, tstr(b1, sizeof(b1), (double)k->first_ns),
				       tstr(b2, sizeof(b2), k->rest_med_ns),
				       (unsigned long long)(k->t.count - 1),
				       k->rest_med_ns > 0 ? k->first_ns / k->rest_med_ns : 0.0),
			     "The first launch of this kernel pays one-time costs (lazy module loading, JIT, "
			     "cache warm-up): warm up before timing, or set CUDA_MODULE_LOADING=EAGER to load "
			     "kernels at start-up."))
			return -ENOMEM;
		fired++;
	}
	if (reco_cold_ranges(a, &cap, p, range_names, scratch) || reco_cold_steps(a, &cap, p, scratch))
		return -ENOMEM;

	for (i = 0, fired = 0; i < a->nkernels && fired < 3; i++) {
		const struct cuda_kernel_row *k = &a->kernels[i];
		double cv = k->t.avg > 0 ? k->t.stddev / k->t.avg : 0;

		if (k->t.count < CUDA_VARIABLE_MIN_INSTANCES || cv <= CUDA_VARIABLE_CV ||
		    k->time_pct < 100 * CUDA_SIGNIFICANT_SHARE)
			continue;
		if (add_reco(a, &cap, "variable-kernel",
			     xasprintf("%s: %llu instances, mean %s, stddev %s (CV %.2f), min %s, max %s",
				       k->name, (unsigned long long)k->t.count,
				       tstr(b1, sizeof(b1), k->t.avg), tstr(b2, sizeof(b2), k->t.stddev),
				       cv, tstr(b3, sizeof(b3), (double)k->t.min),
				       tstr((char[32]){ 0 }, 32, (double)k->t.max)),
			     "Durations of this kernel vary widely: it may run with different input sizes "
			     "(compare launch configurations), contend with concurrent kernels or copies, or "
			     "hit data-dependent paths; look at its instances in a trace (--trace)."))
			return -ENOMEM;
		fired++;
	}

	{
		/* DtoD/PtoP copies the code did not ask for: launched by an API
		 * call that is not a memcpy, or peer copies made by a plain
		 * memcpy (UVA cudaMemcpy between devices) rather than a Peer call. */
		uint64_t n = 0, ns = 0, bytes = 0;
		const char *via = NULL;

		for (i = 0; i < p->ngpu_ops; i++) {
			const struct prof_gpu_op *op = &p->gpu_ops[i];
			const char *an;

			if (op->kind != PROF_GPU_MEMCPY ||
			    (op->copy_kind != CBN_COPY_DTOD && op->copy_kind != CBN_COPY_PTOP) ||
			    op->api == PROF_NONE || op->api >= p->ncuda_api)
				continue;
			an = nz(p->cuda_api[op->api].name);
			if (strcasestr(an, "memcpy") &&
			    (op->copy_kind == CBN_COPY_DTOD || strstr(an, "Peer")))
				continue;
			n++;
			ns += dur(op->start, op->end);
			bytes += op->bytes;
			if (!via)
				via = an;
		}
		if (n && add_reco(a, &cap, "implicit-dtod",
				  xasprintf("%llu device-to-device/peer copies (%s, %llu bytes) launched by "
					    "calls that are not explicit device copies, e.g. %s",
					    (unsigned long long)n, tstr(b1, sizeof(b1), (double)ns),
					    (unsigned long long)bytes, via),
				  "Something copies device memory the code may not mean to copy (a library "
				  "call, a graph node, or a cudaMemcpy between devices without peer access): "
				  "check the launch sites, keep data on one device, and enable peer access "
				  "(cudaDeviceEnablePeerAccess) for intended cross-device copies."))
			return -ENOMEM;
	}

	/* Utilization counts kernels only; a run that keeps the GPU busy with copies
	 * (few idle gaps) is not idle, so the gaps must agree. */
	if (ov->gpu_utilization >= 0 && ov->gpu_utilization < CUDA_LOW_UTIL &&
	    (double)ov->idle_gaps_ns >= (1.0 - CUDA_LOW_UTIL) * (double)ov->window_ns &&
	    add_reco(a, &cap, "low-utilization",
		     xasprintf("GPU utilization %.1f%%: kernels ran %s of a %s window; %llu idle gaps "
			       "totalling %s, largest %s",
			       100 * ov->gpu_utilization, tstr(b1, sizeof(b1), (double)ov->gpu_busy_ns),
			       tstr(b2, sizeof(b2), (double)ov->window_ns), (unsigned long long)ov->ngaps,
			       tstr(b3, sizeof(b3), (double)ov->idle_gaps_ns),
			       tstr((char[32]){ 0 }, 32, (double)ov->largest_gap_ns)),
		     "The GPU is idle more than half of the time between its first and last activity: "
		     "look at the largest gaps in a trace (--trace) and at the CPU table for what the "
		     "host did meanwhile, and overlap host work, copies and kernels with streams."))
		return -ENOMEM;
	return 0;
}

/* --- status ------------------------------------------------------------------------------ */

static const char *base(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : nz(path);
}

static int stack_has_cuda(const struct profile *p, uint32_t s)
{
	uint32_t i;

	if (s >= p->nstacks)
		return 0;
	for (i = 0; i < p->stacks[s].nframes; i++) {
		uint32_t f = p->stacks[s].first + i;
		const char *m;

		if (f >= p->nframes || p->frames[f].func >= p->nfuncs)
			break;
		m = p->funcs[p->frames[f].func].module;
		if (m && (!strncmp(m, "libcudart", 9) || !strncmp(m, "libcuda.", 8)))
			return 1;
	}
	return 0;
}

/* A module that says the process meant to use CUDA: the runtime (libcudart*)
 * whenever it was mapped, the driver (libcuda.so*) only when it was dlopened
 * during the run (cudart and frameworks load it that way to initialize CUDA).
 * A driver mapped from the start is often just a dependency (of libcupti, of
 * a plugin) that the program never calls; a frame in it still counts
 * (stack_has_cuda).  Start-up modules carry the process's start as load time. */
static int module_has_cuda(const struct profile *p, const struct prof_module *m)
{
	const char *n = m->name ? m->name : base(m->path);

	if (!strncmp(n, "libcudart", 9))
		return 1;
	return !strncmp(n, "libcuda.so", 10) && m->process < p->nprocesses &&
	       m->load_ts > p->processes[m->process].start;
}

static int add_line(struct cuda_analysis *a, size_t *cap, char *line)
{
	if (!line || grow((void **)&a->status_lines, cap, a->nstatus_lines + 1, sizeof(char *))) {
		free(line);
		return -ENOMEM;
	}
	a->status_lines[a->nstatus_lines++] = line;
	return 0;
}

static int build_status(struct cuda_analysis *a, const struct profile *p)
{
	static const char *const states[] = { "unavailable", "started", "unavailable", "finished",
					      "fork_child" };
	int8_t *seen = calloc(p->nstacks + 1, 1);
	char *has_status = calloc(p->nprocesses + 1, 1), *loaded = calloc(p->nprocesses + 1, 1);
	size_t cap = 0, i, n = 0;
	int ret = -ENOMEM;

	if (!seen || !has_status || !loaded)
		goto out;
	for (i = 0; i < p->ncuda_status; i++)
		if (p->cuda_status[i].process < p->nprocesses)
			has_status[p->cuda_status[i].process] = 1;
	for (i = 0; i < p->nmodules; i++) {
		const struct prof_module *m = &p->modules[i];

		if (m->process < p->nprocesses && !has_status[m->process] && module_has_cuda(p, m))
			loaded[m->process] = 1;
	}
	for (i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];
		uint32_t pr;

		if (s->thread >= p->nthreads || s->stack >= p->nstacks)
			continue;
		pr = p->threads[s->thread].process;
		if (pr >= p->nprocesses || has_status[pr] || loaded[pr])
			continue;
		if (!seen[s->stack])
			seen[s->stack] = stack_has_cuda(p, s->stack) ? 1 : -1;
		if (seen[s->stack] > 0)
			loaded[pr] = 1;
	}
	for (i = 0; i < p->nprocesses; i++)
		n += loaded[i];
	a->status = calloc(p->ncuda_status + n + 1, sizeof(*a->status));
	if (!a->status)
		goto out;
	for (i = 0; i < p->ncuda_status; i++) {
		const struct prof_cuda_status *s = &p->cuda_status[i];
		const struct prof_process *pr = s->process < p->nprocesses ? &p->processes[s->process] : NULL;
		struct cuda_status_row *r = &a->status[a->nstatus++];
		char ver[32] = "", who[160];
		char *line;

		*r = (struct cuda_status_row){
			.pid = pr ? pr->pid : 0, .exe = pr ? base(pr->exe) : "?",
			.state = s->state < 5 ? states[s->state] : "unavailable", .message = nz(s->message),
			.cupti_error = s->cupti_error, .cupti_version = s->cupti_version,
			.flush_timed_out = s->flush_timed_out, .dropped = s->dropped, .zero_ts = s->zero_ts,
			.buffers = s->buffers, .records = s->records,
		};
		if (s->cupti_version)
			snprintf(ver, sizeof(ver), " with CUPTI %u.%u", s->cupti_version / 10000,
				 s->cupti_version / 100 % 100);
		snprintf(who, sizeof(who), "CUDA: pid %u (%s)", r->pid, r->exe);
		switch (s->state) {
		case CBN_CUDA_FINISHED:
			line = xasprintf("%s: traced%s, %llu activity records in %llu buffers", who, ver,
					 (unsigned long long)r->records, (unsigned long long)r->buffers);
			break;
		case CBN_CUDA_STARTED:
			line = xasprintf("%s: tracing started%s but the final flush never ran (crash, kill "
					 "or _exit?): GPU activity of its last moments may be missing",
					 who, ver);
			break;
		case CBN_CUDA_FORK_CHILD:
			line = xasprintf("%s: forked from a CUDA process without exec: GPU tracing is off "
					 "in it (CUDA cannot be used across fork)",
					 who);
			break;
		default:
			line = xasprintf("%s: CUDA tracing unavailable: %s (CUPTI error %d); CPU profile only",
					 who, *r->message ? r->message : "no reason given", r->cupti_error);
			break;
		}
		if (add_line(a, &cap, line))
			goto out;
		if (s->dropped &&
		    add_line(a, &cap, xasprintf("%s: CUPTI dropped %llu activity records (buffers full): "
						"GPU tables undercount",
						who, (unsigned long long)s->dropped)))
			goto out;
		if (s->zero_ts &&
		    add_line(a, &cap, xasprintf("%s: %llu GPU records had no timestamps and were excluded",
						who, (unsigned long long)s->zero_ts)))
			goto out;
		if (s->flush_timed_out &&
		    add_line(a, &cap, xasprintf("%s: the final CUPTI flush timed out: the last GPU records "
						"may be missing",
						who)))
			goto out;
	}
	for (i = 0; i < p->nprocesses; i++) {
		struct cuda_status_row *r;

		if (!loaded[i])
			continue;
		r = &a->status[a->nstatus++];
		*r = (struct cuda_status_row){
			.pid = p->processes[i].pid, .exe = base(p->processes[i].exe), .state = "unavailable",
			.message = "loaded the CUDA runtime but CUDA was never initialized for tracing",
			.inferred = 1,
		};
		if (add_line(a, &cap, xasprintf("CUDA: %s (pid %u) loaded the CUDA runtime but CUDA was "
						"never initialized for tracing (no driver or no GPU?)",
						r->exe, r->pid)))
			goto out;
		r->text = a->status_lines[a->nstatus_lines - 1];
	}
	ret = 0;
out:
	free(seen);
	free(has_status);
	free(loaded);
	return ret;
}

/* --- entry points ---------------------------------------------------------------------------- */

void cuda_analysis_free(struct cuda_analysis *a)
{
	struct cuda_priv *pv = (struct cuda_priv *)a;
	size_t i;

	if (!a)
		return;
	for (i = 0; i < a->nrecos; i++) {
		free(a->recos[i].message);
		free(a->recos[i].evidence);
	}
	for (i = 0; i < a->nstatus_lines; i++)
		free(a->status_lines[i]);
	for (i = 0; i < pv->nstrs; i++)
		free(pv->strs[i]);
	free(pv->strs);
	free(a->ops);
	free(a->kernels);
	free(a->memops);
	free(a->api);
	free(a->sites);
	free(a->recos);
	free(a->status);
	free(a->status_lines);
	free(a->devices);
	free(pv);
}

int cuda_analyze(const struct profile *p, struct cuda_analysis **out)
{
	struct cuda_priv *pv = calloc(1, sizeof(*pv));
	struct cuda_analysis *a = &pv->pub;
	struct nest ns = { 0 };
	const char **range_names = NULL;
	double *bps = NULL, *occ = NULL;
	uint64_t *scratch = NULL;
	size_t i, nscratch;
	int ret = -ENOMEM;

	*out = NULL;
	if (!pv)
		return -ENOMEM;
	/* Ranges alone (a CPU-only program with annotations) are not CUDA data. */
	a->has_data = p->ncuda_api || p->ngpu_ops;
	if (build_status(a, p))
		goto out;
	if (!a->has_data && !a->nstatus) {
		ret = 0;
		goto out;
	}
	nscratch = p->ngpu_ops + p->ncuda_api + p->nranges + 1;
	scratch = malloc(nscratch * sizeof(*scratch));
	bps = malloc((p->ngpu_ops + 1) * sizeof(*bps));
	occ = malloc((p->ngpu_ops + 1) * sizeof(*occ));
	range_names = calloc(p->nranges + 1, sizeof(*range_names));
	if (!scratch || !bps || !occ || !range_names)
		goto out;
	for (i = 0; i < p->nranges; i++)
		if (range_is_span(&p->ranges[i]) && !(range_names[i] = range_key(pv, &p->ranges[i])))
			goto out;
	if (nest_build(p, &ns))
		goto out;
	kernel_occupancy(p, bps, occ);
	if (build_ops(pv, p, &ns, range_names) || build_kernels(a, p, bps, occ, scratch) ||
	    build_memops(a, p, scratch) || build_api(a, p, scratch) || build_sites(pv, p, &ns) ||
	    build_overview(a, p, &ns, bps, occ))
		goto out;
	if (a->has_data && build_recos(a, p, range_names, scratch))
		goto out;
	cuda_sort_ops(a, NULL);
	ret = 0;
out:
	nest_free(&ns);
	free(scratch);
	free(bps);
	free(occ);
	free(range_names);
	if (ret == 0 && (a->has_data || a->nstatus)) {
		*out = a;
	} else {
		cuda_analysis_free(a);
	}
	return ret;
}
