/*
 * html_data.c — the aggregates the HTML page draws that the JSON report does
 * not hold: the merged call tree (flame graph, callers/callees), binned
 * timeline slices per thread and per GPU stream, and the hottest source files
 * with per-line self and total.  Every part is bounded (HTML_* below) so the
 * page's size follows the program's shape, never its number of samples.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "analysis.h"
#include "calltree.h"
#include "cpu.h"
#include "html.h"
#include "names.h"
#include "ops_report.h"
#include "stackw.h"
#include "util.h"

#define HTML_TREE_NODES 4000     /* call tree nodes kept; the rest is "(other)" */
#define HTML_CPU_LANES 32        /* threads with most samples get a lane */
#define HTML_GPU_LANES 32        /* (device, stream) lanes */
#define HTML_RANGE_LANES 16      /* (thread, depth) lanes of annotation/NVTX ranges */
#define HTML_BINS 4000           /* time bins per lane: slices per lane at most */
#define HTML_GAP_BINS 4          /* a CPU lane's gap shorter than this many bins is drawn
				  * as running (the thread was preempted, or sampled late) */
#define HTML_SOURCES 6           /* hottest files read */
#define HTML_SRC_BYTES (256 << 10)
#define HTML_SRC_LINES 8000

/* Pseudo functions of the tree, above any real index. */
#define HT_TRUNC CT_TRUNC
#define HT_UNKNOWN CT_UNKNOWN
#define HT_OTHER (UINT32_MAX - 3)    /* the nodes left out, per parent */

/* The "names" table: functions (by profile index) and plain strings (GPU
 * operations), each once; the tree and the timeline index it. */
struct names {
	cJSON *arr;
	uint32_t *of_func;               /* profile func -> names index, UINT32_MAX */
	uint32_t n;
	struct util_map strs;            /* string content -> names index */
	const char **str;                /* names index -> string (strings only) */
	size_t nstr, capstr;
	const struct profile *p;
	const struct op_analysis *ops;   /* NULL: no operators */
};

/* [name, file, line] or, with a label (what a box shows when it is not the
 * whole name), [name, file, line, label]. */
static uint32_t names_add_label(struct names *nm, const char *name, const char *file,
				uint32_t line, const char *label)
{
	cJSON *e = cJSON_CreateArray();

	if (!e)
		return UINT32_MAX;
	cJSON_AddItemToArray(nm->arr, e);
	cJSON_AddItemToArray(e, cJSON_CreateString(name ? name : ""));
	cJSON_AddItemToArray(e, cJSON_CreateString(file ? file : ""));
	cJSON_AddItemToArray(e, cJSON_CreateNumber(line));
	if (label)
		cJSON_AddItemToArray(e, cJSON_CreateString(label));
	return nm->n++;
}

static uint32_t names_add(struct names *nm, const char *name, const char *file, uint32_t line)
{
	return names_add_label(nm, name, file, line, NULL);
}

static uint32_t names_func(struct names *nm, uint32_t func)
{
	const struct profile *p = nm->p;
	uint32_t *slot;

	switch (func) {
	case HT_TRUNC:
		return names_add(nm, "[truncated]", "", 0);
	case HT_UNKNOWN:
		return names_add(nm, "[unknown]", "", 0);
	case HT_OTHER:
		return names_add(nm, "(other)", "", 0);
	}
	if (func >= p->nfuncs)
		return names_add(nm, "[unknown]", "", 0);
	slot = &nm->of_func[func];
	if (*slot == UINT32_MAX) {
		const char *name = p->funcs[func].name && *p->funcs[func].name
			? p->funcs[func].name : "[unknown]";
		const char *label = report_frame_name(nm->ops, func, NULL);
		char bare[1024];

		/* what a box shows, when not the whole name: the operator it
		 * enters, or the function without its parameters; the page
		 * shows the whole signature on hover */
		if (!label && strcmp(names_bare_copy(bare, sizeof(bare), name), name))
			label = bare;
		*slot = names_add_label(nm, name, p->funcs[func].file, p->funcs[func].line, label);
	}
	return *slot;
}

struct str_probe {
	const struct names *nm;
	const char *s;
};

static int str_eq(const void *ctx, uint32_t v)
{
	const struct str_probe *k = ctx;

	return v < k->nm->nstr && k->nm->str[v] && !strcmp(k->nm->str[v], k->s);
}

static uint32_t names_str(struct names *nm, const char *s)
{
	struct str_probe k = {nm, s ? s : ""};
	uint64_t h = util_fnv1a_str(k.s, UTIL_FNV_INIT);
	uint32_t v = util_map_find(&nm->strs, h, str_eq, &k);

	if (v != UINT32_MAX)
		return v;
	v = names_add(nm, k.s, "", 0);
	if (v == UINT32_MAX)
		return v;
	while (nm->nstr <= v) {
		if (util_grow((void **)&nm->str, &nm->capstr, nm->nstr, sizeof(*nm->str)) < 0)
			return UINT32_MAX;
		nm->str[nm->nstr++] = NULL;
	}
	nm->str[v] = k.s;
	if (util_map_put(&nm->strs, h, v) < 0)
		return UINT32_MAX;
	return v;
}

/* ---- call tree (analysis/cpu/calltree.c builds it) ------------------------------- */

static int by_total_desc(const void *a, const void *b, void *ctx)
{
	const struct ct_node *n = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (n[x].total != n[y].total)
		return n[x].total < n[y].total ? 1 : -1;
	return x < y ? -1 : x > y;
}

/* Where each weight slot's samples are in the page's tree, for the
 * timeline's CPU lanes (which stack a bin was in). */
struct tree_map {
	uint32_t *slot_node;             /* per weight slot (2 * stack + truncated): the kept
					  * node it ends at, or the "(other)" child standing
					  * for it */
	uint32_t *node_func;             /* per kept node: its function (HT_* pseudo ones) */
	size_t nnodes;
};

static void tree_map_free(struct tree_map *m)
{
	free(m->slot_node);
	free(m->node_func);
	memset(m, 0, sizeof(*m));
}

/*
 * "tree": {"nodes": [parent, name, total_ns, self_ns, inlined, ...]} in
 * parent-before-child order, root first (parent -1).  The heaviest
 * HTML_TREE_NODES nodes: a child never outweighs its parent and ties go to
 * the older (lower) index, so the set is closed under parents.  What a kept
 * node's dropped children weighed becomes one "(other)" child.  map gets
 * where each weight slot's samples are in it.
 */
static cJSON *tree_json(const struct ct_tree *t, struct names *nm, struct tree_map *map)
{
	size_t nslots = t->nslots, nkeep, i;
	uint32_t *order = NULL, *newid = NULL, *other = NULL, *leaf = malloc(nslots * sizeof(*leaf));
	uint64_t *kept_children = NULL;
	cJSON *o = NULL, *arr;

	memset(map, 0, sizeof(*map));
	if (!leaf)
		goto fail;
	memcpy(leaf, t->leaf, nslots * sizeof(*leaf));
	order = malloc(t->len * sizeof(*order));
	newid = malloc(t->len * sizeof(*newid));
	other = malloc(t->len * sizeof(*other));
	kept_children = calloc(t->len, sizeof(*kept_children));
	map->node_func = malloc(2 * t->len * sizeof(*map->node_func));
	if (!order || !newid || !other || !kept_children || !map->node_func)
		goto fail;
	for (i = 0; i < t->len; i++) {
		order[i] = (uint32_t)i;
		newid[i] = other[i] = UINT32_MAX;
	}
	qsort_r(order, t->len, sizeof(*order), by_total_desc, t->n);
	nkeep = t->len < HTML_TREE_NODES ? t->len : HTML_TREE_NODES;
	for (i = 0; i < nkeep; i++)
		newid[order[i]] = 0;
	o = cJSON_CreateObject();
	arr = o ? cJSON_AddArrayToObject(o, "nodes") : NULL;
	if (!arr)
		goto fail;
	cJSON_AddNumberToObject(o, "total_nodes", (double)t->len);
	{
		uint32_t next = 0, other_name = UINT32_MAX;

		for (i = 0; i < t->len; i++) {
			const struct ct_node *n = &t->n[i];
			double par;

			if (newid[i] == UINT32_MAX)
				continue;
			map->node_func[next] = i ? n->func : HT_UNKNOWN;
			newid[i] = next++;
			par = i ? (double)newid[n->parent] : -1;
			if (i)
				kept_children[n->parent] += n->total;
			cJSON_AddItemToArray(arr, cJSON_CreateNumber(par));
			cJSON_AddItemToArray(arr, cJSON_CreateNumber(i ? names_func(nm, n->func)
								      : names_str(nm, "all")));
			cJSON_AddItemToArray(arr, cJSON_CreateNumber((double)n->total));
			cJSON_AddItemToArray(arr, cJSON_CreateNumber((double)n->self));
			cJSON_AddItemToArray(arr, cJSON_CreateNumber(n->inlined));
		}
		/* nodes are in parent-first order, so all kept children of a
		 * node are counted once the loop is done: add the remainders */
		for (i = 0; i < t->len; i++) {
			const struct ct_node *n = &t->n[i];
			uint64_t rest;

			if (newid[i] == UINT32_MAX || n->total < n->self + kept_children[i])
				continue;
			rest = n->total - n->self - kept_children[i];
			if (!rest)
				continue;
			if (other_name == UINT32_MAX)
				other_name = names_func(nm, HT_OTHER);
			map->node_func[next] = HT_OTHER;
			other[i] = next++;
			cJSON_AddItemToArray(arr, cJSON_CreateNumber(newid[i]));
			cJSON_AddItemToArray(arr, cJSON_CreateNumber(other_name));
			cJSON_AddItemToArray(arr, cJSON_CreateNumber((double)rest));
			cJSON_AddItemToArray(arr, cJSON_CreateNumber((double)rest));
			cJSON_AddItemToArray(arr, cJSON_CreateNumber(0));
		}
		map->nnodes = next;
	}
	/* a slot whose stack ends in a dropped node: the "(other)" child of its
	 * nearest kept ancestor, which holds its time */
	for (i = 0; i < nslots; i++) {
		uint32_t n = leaf[i], up = n;

		while (up && newid[up] == UINT32_MAX)
			up = t->n[up].parent;
		leaf[i] = up == n ? newid[n] : other[up] != UINT32_MAX ? other[up] : newid[up];
	}
	map->slot_node = leaf;
	leaf = NULL;
	free(order);
	free(newid);
	free(other);
	free(kept_children);
	return o;
fail:
	cJSON_Delete(o);
	free(leaf);
	free(order);
	free(newid);
	free(other);
	free(kept_children);
	tree_map_free(map);
	return NULL;
}

/* ---- timeline ------------------------------------------------------------ */

static uint64_t rel(uint64_t t, uint64_t t0)
{
	return t > t0 ? t - t0 : 0;
}

struct tl_sample {
	uint64_t ts;
	uint64_t cpu;                    /* the CPU it stands for (weight x period): it ran
					  * that long before ts */
	uint32_t node;                   /* the node of the page's tree its stack ends at */
};

static int by_ts(const void *a, const void *b)
{
	const struct tl_sample *x = a, *y = b;

	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* A slice [start_rel, dur, name] of a CPU lane, and its node in "nodes". */
static void tl_cpu_slice(cJSON *sl, cJSON *nodes, uint64_t start, uint64_t end, uint32_t node,
			 const struct tree_map *map, struct names *nm)
{
	cJSON_AddItemToArray(sl, cJSON_CreateNumber((double)start));
	cJSON_AddItemToArray(sl, cJSON_CreateNumber((double)(end - start)));
	cJSON_AddItemToArray(sl, cJSON_CreateNumber(names_func(nm, map->node_func[node])));
	cJSON_AddItemToArray(nodes, cJSON_CreateNumber(node));
}

/* Slices of one CPU lane: bins of binw ns, each given the stack (node of the
 * page's tree) most of its samples ended at (Boyer-Moore vote: exact when
 * one has more than half) and named by that stack's leaf function, runs of
 * adjacent bins of one stack merged.  A bin without a sample that the next
 * sample's CPU covers (it ran then: a sample every period of CPU lands a
 * little early or late), or a stretch of HTML_GAP_BINS bins at most (a
 * preemption on a busy machine), is no gap: a thread 95 % on the CPU is
 * one slice, not a barcode; a gap is time the thread was off the CPU. */
static void tl_cpu_lane(cJSON *sl, cJSON *nodes, struct tl_sample *s, size_t n, uint64_t t0,
			uint64_t binw, const struct tree_map *map, struct names *nm)
{
	uint64_t cur_bin = UINT64_MAX, run_start = 0, run_end = 0, from = 0, cover;
	uint32_t cand = 0, votes = 0, run_node = UINT32_MAX;
	size_t i = 0;

	qsort(s, n, sizeof(*s), by_ts);
	for (;;) {
		uint64_t bin = i < n ? rel(s[i].ts, t0) / binw : UINT64_MAX;

		if (bin != cur_bin && cur_bin != UINT64_MAX) {
			/* close cur_bin: extend the run or start another, from where
			 * its first sample's CPU began when the run reaches there */
			if (run_node == cand && run_end + HTML_GAP_BINS * binw >= from) {
				run_end = (cur_bin + 1) * binw;
			} else {
				if (run_node != UINT32_MAX)
					tl_cpu_slice(sl, nodes, run_start, run_end, run_node, map, nm);
				run_start = run_node != UINT32_MAX &&
						    run_end + HTML_GAP_BINS * binw >= from ? run_end
											 : cur_bin * binw;
				run_node = cand;
				run_end = (cur_bin + 1) * binw;
			}
			votes = 0;
		}
		if (i >= n)
			break;
		if (bin != cur_bin) {
			cover = rel(s[i].ts, t0) > s[i].cpu ? rel(s[i].ts, t0) - s[i].cpu : 0;
			/* the bin it began in, at the latest this one's start */
			from = cover / binw * binw;
		}
		cur_bin = bin;
		if (!votes) {
			cand = s[i].node;
			votes = 1;
		} else {
			votes += cand == s[i].node ? 1 : -1;
		}
		i++;
	}
	if (run_node != UINT32_MAX)
		tl_cpu_slice(sl, nodes, run_start, run_end, run_node, map, nm);
}

static cJSON *tl_lane(cJSON *lanes, const char *kind, const char *name)
{
	cJSON *l = cJSON_CreateObject();

	if (!l)
		return NULL;
	cJSON_AddItemToArray(lanes, l);
	cJSON_AddStringToObject(l, "kind", kind);
	cJSON_AddStringToObject(l, "name", name);
	return cJSON_AddArrayToObject(l, "slices");
}

static int by_samples_desc(const void *a, const void *b, void *ctx)
{
	const uint64_t *cnt = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (cnt[x] != cnt[y])
		return cnt[x] < cnt[y] ? 1 : -1;
	return x < y ? -1 : x > y;
}

/* An interval for the interval lanes: GPU operations and CUDA API calls. */
struct tl_op {
	uint64_t key;                    /* the lane: (process, device, stream) or thread */
	uint64_t start, end;             /* relative to the timeline's start */
	const char *name;
};

static int by_key_start(const void *a, const void *b)
{
	const struct tl_op *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * Lanes of intervals, one per key (at most maxlanes, the lowest keys), ops
 * sorted here.  A lane of at most 2 * HTML_BINS intervals keeps each (only
 * overlapping ones of one name merge); in a busier one intervals of one
 * name that follow within a bin merge too (with strict, never: ranges one
 * after the other, such as steps, stay apart), and the lane stops at
 * 2 * HTML_BINS slices.  keys[] gets each lane's key; returns the number of
 * lanes, or -ENOMEM.
 */
static int tl_intervals(cJSON *lanes, struct tl_op *ops, size_t n, const char *kind,
			size_t maxlanes, uint64_t binw, int strict, struct names *nm,
			void (*lane_name)(const struct profile *, uint64_t, char *, size_t),
			const struct profile *p, uint64_t *keys)
{
	cJSON *sl = NULL;
	uint64_t s0 = 0, e0 = 0;
	uint32_t name = UINT32_MAX, nsl = 0;
	size_t i, k, nl = 0;
	int newlane, exact = 0;

	qsort(ops, n, sizeof(*ops), by_key_start);
#define FLUSH()                                                                     \
	do {                                                                        \
		if (sl && name != UINT32_MAX) {                                     \
			cJSON_AddItemToArray(sl, cJSON_CreateNumber((double)s0));   \
			cJSON_AddItemToArray(sl, cJSON_CreateNumber((double)(e0 - s0))); \
			cJSON_AddItemToArray(sl, cJSON_CreateNumber(name));         \
			nsl++;                                                      \
		}                                                                   \
		name = UINT32_MAX;                                                  \
	} while (0)
	for (i = 0; i < n; i++) {
		const struct tl_op *o = &ops[i];
		uint32_t nmi;

		newlane = !i || o->key != ops[i - 1].key;
		if (newlane) {
			char lname[128];

			FLUSH();
			if (nl >= maxlanes)
				break;
			lane_name(p, o->key, lname, sizeof(lname));
			sl = tl_lane(lanes, kind, lname);
			if (!sl)
				return -ENOMEM;
			keys[nl++] = o->key;
			nsl = 0;
			for (k = i; k < n && ops[k].key == o->key; k++)
				;
			exact = strict || k - i <= 2 * HTML_BINS;
		}
		/* a full lane: the rest of its intervals are left out */
		if (nsl >= 2 * HTML_BINS)
			continue;
		nmi = names_str(nm, o->name);
		if (nmi == UINT32_MAX)
			return -ENOMEM;
		if (name == nmi && (exact ? o->start < e0 : o->start <= e0 + binw)) {
			if (o->end > e0)
				e0 = o->end;
			continue;
		}
		FLUSH();
		name = nmi;
		s0 = o->start;
		e0 = o->end;
	}
	FLUSH();
#undef FLUSH
	return (int)nl;
}

static uint64_t gpu_key(const struct prof_gpu_op *g)
{
	return (uint64_t)(g->process & 0xffffff) << 40 | (uint64_t)(g->device & 0xfff) << 28 |
	       (g->stream & 0xfffffff);
}

static void gpu_lane_name(const struct profile *p, uint64_t key, char *buf, size_t len)
{
	(void)p;
	snprintf(buf, len, "GPU %u stream %u", (unsigned)(key >> 28 & 0xfff),
		 (unsigned)(key & 0xfffffff));
}

static void api_lane_name(const struct profile *p, uint64_t key, char *buf, size_t len)
{
	const struct prof_thread *th = key < p->nthreads ? &p->threads[key] : NULL;

	if (th)
		snprintf(buf, len, "CUDA API (tid %u)", th->tid);
	else
		snprintf(buf, len, "CUDA API");
}

static void range_lane_name(const struct profile *p, uint64_t key, char *buf, size_t len)
{
	uint64_t t = key >> 3;

	snprintf(buf, len, "ranges, tid %u%s", t < p->nthreads ? p->threads[t].tid : 0,
		 (key & 7) ? ", nested" : "");
}


static int lane_of(const uint64_t *keys, int n, uint64_t key)
{
	for (int i = 0; i < n; i++)
		if (keys[i] == key)
			return i;
	return -1;
}

/*
 * GPU lanes, one per (process, device, stream), then CUDA API lanes, one per
 * calling thread, then range lanes, one per (thread, depth), then "flows":
 * [api_start, api_lane, gpu_start, gpu_lane] from a launch to its kernel
 * (lanes as indices into "lanes"), for the first HTML_FLOWS kernels.
 */
#define HTML_FLOWS 2000
static int tl_cuda(cJSON *tl, cJSON *lanes, const struct profile *p, uint64_t t0, uint64_t binw,
		   struct names *nm)
{
	size_t n = p->ngpu_ops > p->ncuda_api ? p->ngpu_ops : p->ncuda_api, i, k, nflows = 0;
	uint64_t rkeys[HTML_RANGE_LANES];
	struct tl_op *ops = NULL;
	uint64_t gkeys[HTML_GPU_LANES], akeys[HTML_CPU_LANES];
	int base = cJSON_GetArraySize(lanes), ng = 0, na = 0;
	cJSON *flows;

	if (p->nranges > n)
		n = p->nranges;
	if (!n)
		return 0;
	ops = malloc(n * sizeof(*ops));
	if (!ops)
		return -ENOMEM;
	for (i = k = 0; i < p->ngpu_ops; i++) {
		const struct prof_gpu_op *g = &p->gpu_ops[i];

		ops[k++] = (struct tl_op){gpu_key(g), rel(g->start, t0),
					  rel(g->end > g->start ? g->end : g->start, t0), g->name};
	}
	if (k && (ng = tl_intervals(lanes, ops, k, "gpu", HTML_GPU_LANES, binw, 0, nm,
				    gpu_lane_name, p, gkeys)) < 0)
		goto oom;
	for (i = k = 0; i < p->ncuda_api; i++) {
		const struct prof_cuda_api *c = &p->cuda_api[i];

		if (c->thread >= p->nthreads)
			continue;
		ops[k++] = (struct tl_op){c->thread, rel(c->start, t0),
					  rel(c->end > c->start ? c->end : c->start, t0), c->name};
	}
	if (k && (na = tl_intervals(lanes, ops, k, "api", HTML_CPU_LANES, binw, 0, nm,
				    api_lane_name, p, akeys)) < 0)
		goto oom;
	/* annotation and NVTX ranges: a lane per (thread, nesting depth), so
	 * that nested ranges stack instead of hiding each other */
	for (i = k = 0; i < p->nranges; i++) {
		const struct prof_range *r = &p->ranges[i];

		if (r->thread >= p->nthreads)
			continue;
		ops[k++] = (struct tl_op){(uint64_t)r->thread << 3 | (r->depth < 7 ? r->depth : 7),
					  rel(r->start, t0),
					  rel(r->end > r->start ? r->end : r->start, t0), r->name};
	}
	if (k && tl_intervals(lanes, ops, k, "range", HTML_RANGE_LANES, binw, 1, nm,
			      range_lane_name, p, rkeys) < 0)
		goto oom;
	free(ops);
	ops = NULL;
	flows = cJSON_AddArrayToObject(tl, "flows");
	if (!flows)
		return -ENOMEM;
	for (i = 0; i < p->ngpu_ops && nflows < HTML_FLOWS && ng && na; i++) {
		const struct prof_gpu_op *g = &p->gpu_ops[i];
		const struct prof_cuda_api *c;
		int gl, al;

		if (g->kind != PROF_GPU_KERNEL || g->api >= p->ncuda_api)
			continue;
		c = &p->cuda_api[g->api];
		gl = lane_of(gkeys, ng, gpu_key(g));
		al = lane_of(akeys, na, c->thread);
		if (gl < 0 || al < 0)
			continue;
		cJSON_AddItemToArray(flows, cJSON_CreateNumber((double)rel(c->start, t0)));
		cJSON_AddItemToArray(flows, cJSON_CreateNumber(base + ng + al));
		cJSON_AddItemToArray(flows, cJSON_CreateNumber((double)rel(g->start, t0)));
		cJSON_AddItemToArray(flows, cJSON_CreateNumber(base + gl));
		nflows++;
	}
	return 0;
oom:
	free(ops);
	return -ENOMEM;
}

static cJSON *timeline_json(const struct analysis *a, const struct tree_map *map,
			    struct names *nm)
{
	const struct profile *p = a->profile;
	cJSON *o = cJSON_CreateObject(), *lanes;
	uint64_t t0, t1, binw, *cnt = NULL;
	uint32_t *ord = NULL;
	size_t i, nl;
	struct tl_sample *s = NULL;
	struct stackw_ticks ticks = {0};

	if (!o)
		return NULL;
	html_span(a, &t0, &t1);
	/* a bin no narrower than a sampling period, so that a thread that ran
	 * throughout draws as one slice and not as a comb */
	binw = (t1 - t0) / HTML_BINS + 1;
	for (i = 0; i < p->nprocesses; i++)
		if (p->processes[i].period_ns > binw && p->processes[i].period_ns < (uint64_t)1e9)
			binw = p->processes[i].period_ns;
	cJSON_AddNumberToObject(o, "span_ns", (double)(t1 - t0));
	cJSON_AddNumberToObject(o, "bin_ns", (double)binw);
	lanes = cJSON_AddArrayToObject(o, "lanes");
	if (!lanes)
		goto fail;

	/* samples bucketed by thread (analysis/cpu/stackw.h), the busiest threads first */
	cnt = calloc(p->nthreads + 1, sizeof(*cnt));
	ord = malloc((p->nthreads + 1) * sizeof(*ord));
	if (!cnt || !ord || stackw_ticks(a, &ticks) < 0)
		goto fail;
	s = malloc((ticks.off[p->nthreads] + 1) * sizeof(*s));
	if (!s)
		goto fail;
	for (i = 0; i < ticks.off[p->nthreads]; i++)
		s[i] = (struct tl_sample){ticks.v[i].ts, ticks.v[i].cpu_ns,
					  map->slot_node[ticks.v[i].slot]};
	for (i = 0; i < p->nthreads; i++) {
		cnt[i] = ticks.off[i + 1] - ticks.off[i];
		ord[i] = (uint32_t)i;
	}
	qsort_r(ord, p->nthreads, sizeof(*ord), by_samples_desc, cnt);
	for (nl = 0; nl < p->nthreads && nl < HTML_CPU_LANES && cnt[ord[nl]]; nl++) {
		const struct prof_thread *th = &p->threads[ord[nl]];
		char name[160];
		cJSON *sl, *nodes;

		snprintf(name, sizeof(name), "%s (tid %u)", th->name && *th->name ? th->name
										  : "thread", th->tid);
		sl = tl_lane(lanes, "cpu", name);
		nodes = sl ? cJSON_AddArrayToObject(cJSON_GetArrayItem(lanes, (int)nl), "nodes") : NULL;
		if (!nodes)
			goto fail;
		tl_cpu_lane(sl, nodes, s + ticks.off[ord[nl]], cnt[ord[nl]], t0, binw, map, nm);
	}
	cJSON_AddNumberToObject(o, "threads_left_out",
				(double)(p->nthreads > nl ? p->nthreads - nl : 0));
	if (tl_cuda(o, lanes, p, t0, binw, nm) < 0)
		goto fail;
	free(cnt);
	stackw_ticks_free(&ticks);
	free(ord);
	free(s);
	return o;
fail:
	free(cnt);
	stackw_ticks_free(&ticks);
	free(ord);
	free(s);
	cJSON_Delete(o);
	return NULL;
}

/* ---- sources ------------------------------------------------------------ */

/* Open file as recorded, or under root: root/file for a relative one, then
 * root/ + each tail of the path (/build/x/src/a.c -> root/x/src/a.c,
 * root/src/a.c, root/a.c), the first that opens. */
static FILE *src_open(const char *file, const char *root, char *used, size_t ulen)
{
	const char *tail = file;
	FILE *f;

	if (!root || !*root) {
		snprintf(used, ulen, "%s", file);
		return fopen(file, "r");
	}
	for (;;) {
		while (*tail == '/')
			tail++;
		if (!*tail)
			break;
		snprintf(used, ulen, "%s/%s", root, tail);
		if ((f = fopen(used, "r")))
			return f;
		tail = strchr(tail, '/');
		if (!tail)
			break;
	}
	snprintf(used, ulen, "%s", file);
	return fopen(file, "r");
}

struct src_file {
	const char *file;
	cJSON *obj;                      /* its entry in "sources" */
	uint64_t *self, *total;          /* per line, [0..nlines] */
	size_t nlines;
};

#define HTML_SRC_TRIES 64        /* distinct hot files tried for HTML_SOURCES readable ones */
#define HTML_SRC_UNREAD 4        /* files that could not be read, named at most */

/* Code of cbottleneck's own libraries, loaded into the program (the agent's
 * allocation hooks under --memory): never the program's source. */
static int src_ours(const struct profile *p, uint32_t func)
{
	const char *m = func < p->nfuncs ? p->funcs[func].module : NULL, *b;

	if (!m)
		return 0;
	b = strrchr(m, '/');
	b = b ? b + 1 : m;
	return !strncmp(b, "libcbottleneck", 14) || !strncmp(b, "libcbn_", 7);
}

/* The text of f into o ("path", "lines", "cut") and sf's per-line arrays.
 * Closes f.  0 or -ENOMEM. */
static int src_read(FILE *f, const char *used, cJSON *o, struct src_file *sf)
{
	char *buf = malloc(HTML_SRC_BYTES + 1);
	size_t n = 0, nl = 0, pos;
	cJSON *lines;

	if (buf)
		n = fread(buf, 1, HTML_SRC_BYTES, f);
	fclose(f);
	if (!buf)
		return -ENOMEM;
	buf[n] = '\0';
	cJSON_AddStringToObject(o, "path", used);
	if (n == HTML_SRC_BYTES)
		cJSON_AddTrueToObject(o, "cut");
	lines = cJSON_AddArrayToObject(o, "lines");
	for (pos = 0; lines && pos < n && nl < HTML_SRC_LINES; nl++) {
		char *e = memchr(buf + pos, '\n', n - pos);
		size_t len = e ? (size_t)(e - (buf + pos)) : n - pos;
		cJSON *s;

		buf[pos + len] = '\0';
		/* cJSON escapes control bytes; invalid UTF-8 stays the browser's
		 * problem, shown as replacement characters */
		s = cJSON_CreateString(buf + pos);
		if (!s) {
			free(buf);
			return -ENOMEM;
		}
		cJSON_AddItemToArray(lines, s);
		pos += len + 1;
	}
	free(buf);
	sf->nlines = nl;
	sf->self = calloc(nl + 1, sizeof(uint64_t));
	sf->total = calloc(nl + 1, sizeof(uint64_t));
	return sf->self && sf->total ? 0 : -ENOMEM;
}

/*
 * "sources": [{"file", "path", "lines": [text...], "heat": [line, self_ns,
 * total_ns, ...]} or {"file", "error"}]: the HTML_SOURCES readable files of
 * the program with most self time, and the first HTML_SRC_UNREAD that could
 * not be read.  Never cbottleneck's own code, nor a library's source given by
 * a path relative to where it was built (a distribution's: ./malloc/malloc.c),
 * unless --source-root says where such paths lie.  Total counts a line once
 * per stack (recursion).
 */
static cJSON *sources_json(const struct analysis *a, const struct html_opts *ho)
{
	const struct profile *p = a->profile;
	const struct cpu_profile *c = a->cpu;
	const char *root = ho ? ho->source_root : NULL, *tried[HTML_SRC_TRIES];
	struct src_file sf[HTML_SOURCES];
	size_t nf = 0, ntried = 0, nunread = 0, i, k;
	cJSON *arr = cJSON_CreateArray();

	if (!arr)
		return NULL;
	memset(sf, 0, sizeof(sf));
	for (i = 0; c && i < c->nlines && nf < HTML_SOURCES && ntried < HTML_SRC_TRIES; i++) {
		const char *fn = c->lines[i].file;
		char used[4096];
		cJSON *o;
		FILE *f;

		if (!fn || !*fn || src_ours(p, c->lines[i].func) || (*fn != '/' && !(root && *root)))
			continue;
		for (k = 0; k < ntried && strcmp(tried[k], fn); k++)
			;
		if (k < ntried)
			continue;
		tried[ntried++] = fn;
		f = src_open(fn, root, used, sizeof(used));
		if (!f && nunread >= HTML_SRC_UNREAD)
			continue;
		if (!(o = cJSON_CreateObject()))
			goto fail;
		cJSON_AddItemToArray(arr, o);
		cJSON_AddStringToObject(o, "file", fn);
		if (!f) {
			cJSON_AddStringToObject(o, "error", strerror(errno));
			nunread++;
			continue;
		}
		sf[nf].file = fn;
		sf[nf].obj = o;
		if (src_read(f, used, o, &sf[nf++]) < 0)
			goto fail;
	}
	/* self from the hot lines, total from the analysis (analysis/cpu/stackw.h) */
	for (i = 0; c && i < c->nlines; i++)
		for (k = 0; k < nf; k++)
			if (sf[k].self && c->lines[i].file && !strcmp(c->lines[i].file, sf[k].file) &&
			    c->lines[i].line <= sf[k].nlines)
				sf[k].self[c->lines[i].line] += c->lines[i].self_ns;
	for (k = 0; k < nf; k++)
		for (size_t l = 1; sf[k].total && l <= sf[k].nlines; l++)
			sf[k].total[l] = stackw_line_total(a->stackw, sf[k].file, (uint32_t)l);
	for (k = 0; k < nf; k++) {
		cJSON *h;

		if (!sf[k].total)
			continue;
		h = cJSON_AddArrayToObject(sf[k].obj, "heat");
		for (size_t l = 1; h && l <= sf[k].nlines; l++) {
			if (!sf[k].self[l] && !sf[k].total[l])
				continue;
			cJSON_AddItemToArray(h, cJSON_CreateNumber((double)l));
			cJSON_AddItemToArray(h, cJSON_CreateNumber((double)sf[k].self[l]));
			cJSON_AddItemToArray(h, cJSON_CreateNumber((double)sf[k].total[l]));
		}
	}
	for (k = 0; k < nf; k++) {
		free(sf[k].self);
		free(sf[k].total);
	}
	return arr;
fail:
	for (k = 0; k < nf; k++) {
		free(sf[k].self);
		free(sf[k].total);
	}
	cJSON_Delete(arr);
	return NULL;
}

cJSON *html_data_build(const struct analysis *a, const struct html_opts *ho)
{
	const struct profile *p = a->profile;
	struct names nm = {0};
	struct tree_map map = {0};
	cJSON *o = cJSON_CreateObject(), *item;

	if (!o)
		return NULL;
	nm.p = p;
	nm.ops = a->ops;
	nm.arr = cJSON_AddArrayToObject(o, "names");
	nm.of_func = malloc((p->nfuncs + 1) * sizeof(*nm.of_func));
	if (!nm.arr || !nm.of_func)
		goto fail;
	memset(nm.of_func, 0xff, (p->nfuncs + 1) * sizeof(*nm.of_func));
	if (!(item = tree_json(a->calltree, &nm, &map)))
		goto fail;
	cJSON_AddItemToObject(o, "tree", item);
	item = timeline_json(a, &map, &nm);
	tree_map_free(&map);
	if (!item)
		goto fail;
	cJSON_AddItemToObject(o, "timeline", item);
	if (!(item = html_breakdown_json(a)))
		goto fail;
	cJSON_AddItemToObject(o, "breakdown", item);
	if (!(item = html_cores_json(a)))
		goto fail;
	cJSON_AddItemToObject(o, "cores", item);
	if (!(item = sources_json(a, ho)))
		goto fail;
	cJSON_AddItemToObject(o, "sources", item);
	if (ho && ho->source_root)
		cJSON_AddStringToObject(o, "source_root", ho->source_root);
	free(nm.of_func);
	free(nm.str);
	util_map_free(&nm.strs);
	return o;
fail:
	free(nm.of_func);
	free(nm.str);
	util_map_free(&nm.strs);
	cJSON_Delete(o);
	return NULL;
}
