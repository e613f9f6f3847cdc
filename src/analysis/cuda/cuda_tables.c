/*
 * cuda_tables.c — the per-name tables of the CUDA analysis: autograd-style op
 * rows (ranges, API functions, kernels, copies, sets, with the self and total
 * times the nesting gives, and the net memory they allocated), the kernel / memop / API summaries with their
 * statistics and totals, and the key_averages sort keys of the op rows.
 */
#include <math.h>
#include <string.h>

#include "cbn_weight.h"
#include "cuda_int.h"

/* --- statistics ---------------------------------------------------------- */

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

/* --- sort keys --------------------------------------------------------------- */

enum op_key {
	K_CUDA_TOTAL, K_CPU_TOTAL, K_SELF_CUDA, K_SELF_CPU, K_CUDA_AVG, K_CPU_AVG, K_COUNT,
	K_CPU_MEM, K_SELF_CPU_MEM, K_CUDA_MEM, K_SELF_CUDA_MEM,
};

static const struct {
	const char *name;
	enum op_key key;
} op_keys[] = {
	{ "cuda_time_total", K_CUDA_TOTAL },      { "device_time_total", K_CUDA_TOTAL },
	{ "cpu_time_total", K_CPU_TOTAL },        { "self_cuda_time_total", K_SELF_CUDA },
	{ "self_device_time_total", K_SELF_CUDA }, { "self_cpu_time_total", K_SELF_CPU },
	{ "cuda_time", K_CUDA_AVG },              { "device_time", K_CUDA_AVG },
	{ "cpu_time", K_CPU_AVG },                { "count", K_COUNT },
	/* torch's key_averages().table(sort_by=...) memory keys */
	{ "cpu_memory_usage", K_CPU_MEM },        { "self_cpu_memory_usage", K_SELF_CPU_MEM },
	{ "cuda_memory_usage", K_CUDA_MEM },      { "self_cuda_memory_usage", K_SELF_CUDA_MEM },
	{ "device_memory_usage", K_CUDA_MEM },    { "self_device_memory_usage", K_SELF_CUDA_MEM },
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
	case K_CPU_MEM: return r->cpu_mem;
	case K_SELF_CPU_MEM: return r->self_cpu_mem;
	case K_CUDA_MEM: return (double)r->cuda_mem;
	case K_SELF_CUDA_MEM: return (double)r->self_cuda_mem;
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

/* --- the autograd-style rows --------------------------------------------------- */

static int add_op(struct cuda_analysis *a, size_t *cap, struct cuda_smap *m, const char *name,
		  uint32_t kind, uint32_t *row)
{
	int added;
	uint32_t v = cuda_smap_get(m, name, (uint32_t)a->nops, &added);

	if (v == CUDA_NO_IDX)
		return -ENOMEM;
	if (added) {
		if (util_grow((void **)&a->ops, cap, a->nops, sizeof(*a->ops)))
			return -ENOMEM;
		memset(&a->ops[a->nops], 0, sizeof(*a->ops));
		a->ops[a->nops].name = name;
		a->ops[a->nops].display = name;   /* kernels: cuda_display.c */
		a->ops[a->nops].kind = kind;
		a->nops++;
	}
	*row = v;
	return 0;
}

/* --- memory columns ---------------------------------------------------------- */

/* Net bytes per node: direct (innermost node enclosing the event) and total
 * (the node and everything nested in it). */
struct mem_acc {
	double cpu_direct, cpu_total;
	int64_t cuda_direct, cuda_total;
};

static const struct cuda_nest *sort_nest; /* qsort has no context argument */

static int cmp_thread_start(const void *a, const void *b)
{
	const struct cuda_node *x = &sort_nest->n[*(const uint32_t *)a];
	const struct cuda_node *y = &sort_nest->n[*(const uint32_t *)b];

	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end > y->end ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* The innermost node of thread th enclosing ts: of the nodes sorted by
 * (thread, start), the last one that started by ts, or the nearest of its
 * enclosing nodes that is still open (the nesting is a tree per thread). */
static uint32_t node_at(const struct cuda_nest *ns, const uint32_t *order, uint32_t th, uint64_t ts)
{
	size_t lo = 0, hi = ns->nn;
	uint32_t x;

	if (th == PROF_NONE)
		return CUDA_NO_IDX;
	while (lo < hi) { /* first position after (th, ts) */
		size_t mid = (lo + hi) / 2;
		const struct cuda_node *n = &ns->n[order[mid]];

		if (n->thread < th || (n->thread == th && n->start <= ts))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || ns->n[order[lo - 1]].thread != th)
		return CUDA_NO_IDX;
	for (x = order[lo - 1]; x != CUDA_NO_IDX; x = ns->n[x].parent)
		if (ns->n[x].start <= ts && ts <= ns->n[x].end)
			return x;
	return CUDA_NO_IDX;
}

/* The bytes a sampled host record of size s stands for (cbn_format.h). */
static double host_weight(const struct profile *p, uint32_t proc, uint64_t s)
{
	uint64_t rate = proc < p->nprocesses ? p->processes[proc].mem.rate : 1;

	return cbn_mem_weight_bytes(s, rate);
}

static int is_device_kind(uint32_t k)
{
	return k != CBN_MEM_PINNED && k != CBN_MEM_PAGEABLE;
}

static int cmp_mem_addr(const void *a, const void *b, void *ctx)
{
	const struct prof_cuda_memory *m = ctx;
	const struct prof_cuda_memory *x = &m[*(const uint32_t *)a], *y = &m[*(const uint32_t *)b];

	if (x->process != y->process)
		return x->process < y->process ? -1 : 1;
	if (x->address != y->address)
		return x->address < y->address ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

int cuda_has_mem(const struct profile *p)
{
	size_t i;

	if (p->nmemory || p->nmem_allocs)
		return 1;
	for (i = 0; i < p->nprocesses; i++)
		if (p->processes[i].mem.state == CBN_MEM_ON)
			return 1;
	return 0;
}

/* Fill acc[node] from the host allocation records and the MEMORY2 records. */
static int mem_columns(const struct profile *p, const struct cuda_nest *ns, struct mem_acc *acc)
{
	uint32_t *order = util_reallocarray(NULL, ns->nn + 1, sizeof(*order));
	uint32_t *by_addr = util_reallocarray(NULL, p->nmemory + 1, sizeof(*by_addr));
	size_t i;
	uint32_t x;

	if (!order || !by_addr) {
		free(order);
		free(by_addr);
		return -ENOMEM;
	}
	for (i = 0; i < ns->nn; i++)
		order[i] = (uint32_t)i;
	sort_nest = ns;
	qsort(order, ns->nn, sizeof(*order), cmp_thread_start);
	for (i = 0; i < p->nmem_allocs; i++) {
		const struct prof_mem_alloc *m = &p->mem_allocs[i];

		if ((x = node_at(ns, order, m->thread, m->ts)) != CUDA_NO_IDX)
			acc[x].cpu_direct += host_weight(p, m->process, m->size);
	}
	for (i = 0; i < p->nmem_frees; i++) {
		const struct prof_mem_free *m = &p->mem_frees[i];

		if ((x = node_at(ns, order, m->thread, m->ts)) != CUDA_NO_IDX)
			acc[x].cpu_direct -= host_weight(p, m->process, m->size);
	}
	/* CUDA: a call's own records; a release that says 0 bytes frees what
	 * the last allocation at its address had */
	for (i = 0; i < p->nmemory; i++)
		by_addr[i] = (uint32_t)i;
	if (p->nmemory)
		qsort_r(by_addr, p->nmemory, sizeof(*by_addr), cmp_mem_addr, p->memory);
	for (i = 0; i < p->nmemory; i++) {
		const struct prof_cuda_memory *m = &p->memory[by_addr[i]];
		uint64_t bytes = m->bytes;

		if (!m->alloc && !bytes && i > 0) {
			const struct prof_cuda_memory *prev = &p->memory[by_addr[i - 1]];

			if (prev->alloc && prev->process == m->process && prev->address == m->address)
				bytes = prev->bytes;
		}
		if (!is_device_kind(m->mem_kind) || m->api >= p->ncuda_api)
			continue;
		x = ns->api_node[m->api];
		acc[x].cuda_direct += m->alloc ? (int64_t)bytes : -(int64_t)bytes;
	}
	/* totals climb to every enclosing node */
	for (i = 0; i < ns->nn; i++) {
		for (x = (uint32_t)i; x != CUDA_NO_IDX; x = ns->n[x].parent) {
			acc[x].cpu_total += acc[i].cpu_direct;
			acc[x].cuda_total += acc[i].cuda_direct;
		}
	}
	free(order);
	free(by_addr);
	return 0;
}

static void add_mem(struct cuda_op_row *r, const struct mem_acc *m)
{
	r->cpu_mem += m->cpu_total;
	r->self_cpu_mem += m->cpu_direct;
	r->cuda_mem += m->cuda_total;
	r->self_cuda_mem += m->cuda_direct;
}

static int build_ops(struct cuda_priv *pv, const struct profile *p, const struct cuda_nest *ns,
		     const char **range_names)
{
	struct mem_acc *acc = NULL;
	struct cuda_analysis *a = &pv->pub;
	struct cuda_smap m[5] = { 0 };
	size_t cap = 0, i;
	uint32_t row;
	int ret = -ENOMEM;

	a->has_mem = cuda_has_mem(p);
	if (a->has_mem &&
	    (!(acc = calloc(ns->nn + 1, sizeof(*acc))) || mem_columns(p, ns, acc)))
		goto out;
	for (i = 0; i < p->nranges; i++) {
		const struct cuda_node *x;
		struct cuda_op_row *r;

		if (ns->range_node[i] == CUDA_NO_IDX || !range_names[i])
			continue;
		x = &ns->n[ns->range_node[i]];
		if (add_op(a, &cap, &m[CUDA_ROW_RANGE], range_names[i], CUDA_ROW_RANGE, &row))
			goto out;
		r = &a->ops[row];
		r->calls++;
		r->cpu_total_ns += dur(x->start, x->end);
		r->self_cpu_ns += (uint64_t)x->self;
		r->cuda_total_ns += x->cuda_total;
		if (acc)
			add_mem(r, &acc[ns->range_node[i]]);
	}
	for (i = 0; i < p->ncuda_api; i++) {
		const struct cuda_node *x = &ns->n[ns->api_node[i]];
		struct cuda_op_row *r;

		if (add_op(a, &cap, &m[CUDA_ROW_API], cuda_api_name(&p->cuda_api[i]), CUDA_ROW_API,
			   &row))
			goto out;
		r = &a->ops[row];
		r->calls++;
		r->cpu_total_ns += dur(x->start, x->end);
		r->self_cpu_ns += (uint64_t)x->self;
		r->cuda_total_ns += x->cuda_total;
		if (acc)
			add_mem(r, &acc[ns->api_node[i]]);
	}
	for (i = 0; i < p->ngpu_ops; i++) {
		const struct prof_gpu_op *op = &p->gpu_ops[i];
		uint32_t kind = op->kind == PROF_GPU_KERNEL ? CUDA_ROW_KERNEL :
				op->kind == PROF_GPU_MEMSET ? CUDA_ROW_MEMSET : CUDA_ROW_MEMCPY;
		uint64_t d = dur(op->start, op->end);
		struct cuda_op_row *r;

		if (add_op(a, &cap, &m[kind], cuda_op_name(op), kind, &row))
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
		cuda_smap_free(&m[i]);
	free(acc);
	return ret;
}

/* --- kernel, memop and API summaries ------------------------------------------- */

/* Group the GPU ops of kinds (mask of 1 << PROF_GPU_*) by name: gid[i] is the
 * group of op i (CUDA_NO_IDX if not selected), first[g] the group's first op.
 * Returns the number of groups, or -ENOMEM. */
static long group_ops(const struct profile *p, unsigned mask, uint32_t *gid, uint32_t **first_out)
{
	struct cuda_smap m = { 0 };
	uint32_t *first = NULL;
	size_t cap = 0, n = 0, i;
	int added;

	for (i = 0; i < p->ngpu_ops; i++) {
		const struct prof_gpu_op *op = &p->gpu_ops[i];
		uint32_t g;

		gid[i] = CUDA_NO_IDX;
		if (op->kind >= 32 || !(mask & (1u << op->kind)))
			continue;
		g = cuda_smap_get(&m, cuda_op_name(op), (uint32_t)n, &added);
		if (g == CUDA_NO_IDX)
			goto fail;
		if (added) {
			if (util_grow((void **)&first, &cap, n, sizeof(*first)))
				goto fail;
			first[n++] = (uint32_t)i;
		}
		gid[i] = g;
	}
	cuda_smap_free(&m);
	*first_out = first;
	return (long)n;
fail:
	cuda_smap_free(&m);
	free(first);
	return -ENOMEM;
}

/* Members of every group, contiguous: members[off[g] .. off[g+1]), in op order. */
static int group_members(const struct profile *p, const uint32_t *gid, size_t ng, uint32_t **mem,
			 size_t **off)
{
	size_t *o = calloc(ng + 2, sizeof(*o)), *fill = NULL, i;
	uint32_t *m = util_reallocarray(NULL, p->ngpu_ops + 1, sizeof(*m));

	if (!o || !m)
		goto fail;
	for (i = 0; i < p->ngpu_ops; i++)
		if (gid[i] != CUDA_NO_IDX)
			o[gid[i] + 1]++;
	for (i = 0; i < ng; i++)
		o[i + 1] += o[i];
	fill = util_reallocarray(NULL, ng + 1, sizeof(*fill));
	if (!fill)
		goto fail;
	memcpy(fill, o, (ng + 1) * sizeof(*fill));
	for (i = 0; i < p->ngpu_ops; i++)
		if (gid[i] != CUDA_NO_IDX)
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
	uint32_t *gid = util_reallocarray(NULL, p->ngpu_ops + 1, sizeof(*gid));
	uint32_t *first = NULL, *mem = NULL;
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

		k->name = k->display = cuda_op_name(f);
		memcpy(k->grid, f->grid, sizeof(k->grid));
		memcpy(k->block, f->block, sizeof(k->block));
		k->registers = f->registers;
		k->static_smem = f->static_smem;
		k->dynamic_smem = f->dynamic_smem;
		for (j = off[g]; j < off[g + 1]; j++) {
			const struct prof_gpu_op *op = &p->gpu_ops[mem[j]];
			double d = (double)dur(op->start, op->end);

			scratch[j - off[g]] = dur(op->start, op->end);
			if (!cuda_same_launch(op, f))
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
	uint32_t *gid = util_reallocarray(NULL, p->ngpu_ops + 1, sizeof(*gid));
	uint32_t *first = NULL, *mem = NULL;
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

		r->name = cuda_op_name(f);
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
	struct cuda_smap m = { 0 };
	uint32_t *gid = util_reallocarray(NULL, p->ncuda_api + 1, sizeof(*gid)), *cnt = NULL;
	size_t n = 0, cap = 0, i, g, *off = NULL, *fill = NULL;
	int added, ret = -ENOMEM;

	if (!gid)
		goto out;
	for (i = 0; i < p->ncuda_api; i++) {
		const char *name = cuda_api_name(&p->cuda_api[i]);
		uint32_t v = cuda_smap_get(&m, name, (uint32_t)n, &added);

		if (v == CUDA_NO_IDX)
			goto out;
		if (added) {
			if (util_grow((void **)&a->api, &cap, n, sizeof(*a->api)))
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
	cuda_smap_free(&m);
	free(gid);
	free(cnt);
	free(off);
	free(fill);
	return ret;
}

int cuda_tables_build(struct cuda_priv *pv, const struct profile *p, const struct cuda_nest *ns,
		      const char **range_names, const double *bps, const double *occ,
		      uint64_t *scratch)
{
	struct cuda_analysis *a = &pv->pub;

	if (build_ops(pv, p, ns, range_names) || build_kernels(a, p, bps, occ, scratch) ||
	    build_memops(a, p, scratch) || build_api(a, p, scratch))
		return -ENOMEM;
	return 0;
}
