/*
 * cuda_int.h — what the files of the CUDA analysis share and nothing outside
 * them may use: the analysis object with the strings it owns, the nesting of
 * ranges and API calls, a string → index map, small helpers, and one entry
 * point per pass.  cuda_analyze() (cuda_analysis.c) runs the passes in order.
 * Launcher side only.
 */
#ifndef CBN_CUDA_INT_H
#define CBN_CUDA_INT_H

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "cuda_analysis.h"
#include "util.h"

#define CUDA_NO_IDX UINT32_MAX

/* --- cuda_smap.c: a small string → index map (names are few, ops many) ---- */

struct cuda_smap_ent {
	const char *key;
	uint32_t val;
};

struct cuda_smap {
	struct util_map map;         /* FNV-1a of the key -> index into ent */
	struct cuda_smap_ent *ent;   /* in insertion order */
	size_t n, cap;
};

/* Look key up; when absent insert it with value val.  Returns the value
 * stored, or CUDA_NO_IDX on allocation failure.  *added tells which happened.
 * The map keeps the key pointer, not a copy. */
uint32_t cuda_smap_get(struct cuda_smap *m, const char *key, uint32_t val, int *added);
/* The value stored for key, CUDA_NO_IDX when absent. */
uint32_t cuda_smap_find(const struct cuda_smap *m, const char *key);
void cuda_smap_free(struct cuda_smap *m);

/* Generated strings owned by the analysis (range "domain:name" keys,
 * launch-site keys; recommendation text and status lines are kept in their
 * own arrays). */
struct cuda_priv {
	struct cuda_analysis pub;   /* first: the public pointer is this one */
	char **strs;
	size_t nstrs, capstrs;
	struct cuda_smap kdisp;     /* kernel name -> kernel row (cuda_display.c) */
};

static inline uint64_t dur(uint64_t start, uint64_t end)
{
	return end > start ? end - start : 0;
}

static inline const char *nz(const char *s)
{
	return s ? s : "";
}

/* A string the caller owns, or NULL when out of memory. */
__attribute__((format(printf, 1, 2))) static inline char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	return n < 0 ? NULL : s;
}

static inline int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* A range with a duration: neither a mark nor a step marker (instants). */
static inline int range_is_span(const struct prof_range *r)
{
	return r->kind != CBN_RANGE_MARK && r->kind != CBN_RANGE_STEP && r->end > r->start;
}

/* cuda_names.c: keep s (from xasprintf, may be NULL) until the analysis is
 * freed.  Returns s, or NULL (s freed) when out of memory. */
char *cuda_keep_str(struct cuda_priv *pv, char *s);


/* --- cuda_names.c: display names of records --------------------------------- */

/* A GPU op's name: the kernel's, else "[unknown kernel]" or cuda_memop_name(). */
const char *cuda_op_name(const struct prof_gpu_op *op);
/* An API call's name, "[unknown API]" when it has none. */
const char *cuda_api_name(const struct prof_cuda_api *c);
/* A range's row name: "domain:name" (kept by the analysis) or its name alone;
 * NULL when out of memory. */
const char *cuda_range_key(struct cuda_priv *pv, const struct prof_range *r);

/* --- cuda_nest.c: nesting of ranges and API calls per thread ---------------- */

enum { CUDA_NODE_RANGE = 0, CUDA_NODE_API = 1 };

struct cuda_node {
	uint64_t start, end;
	uint32_t thread, type, idx;   /* type CUDA_NODE_*; idx into p->ranges or p->cuda_api */
	uint32_t parent;         /* node index, CUDA_NO_IDX at top level */
	int64_t self;            /* duration minus the parts covered by children */
	uint64_t cuda_total;     /* GPU time launched from inside (itself and descendants) */
	uint64_t direct_gpu;     /* API nodes: GPU time of ops naming this call */
	uint64_t direct_ops;
};

struct cuda_nest {
	struct cuda_node *n;
	size_t nn;
	uint32_t *api_node;      /* cuda_api index → node index */
	uint32_t *range_node;    /* range index → node index, CUDA_NO_IDX for instants */
};

/* 0, or -ENOMEM; free with cuda_nest_free() either way. */
int cuda_nest_build(const struct profile *p, struct cuda_nest *ns);
void cuda_nest_free(struct cuda_nest *ns);

/* --- cuda_occupancy.c: Blocks/SM and occupancy of every kernel instance ----- */

/* 1 if two kernel ops have the same launch configuration. */
int cuda_same_launch(const struct prof_gpu_op *x, const struct prof_gpu_op *y);
/* bps[i], occ[i]: blocks per SM and occupancy of kernel op i, -1 unknown. */
void cuda_kernel_occupancy(const struct profile *p, double *bps, double *occ);

/* --- the passes, in the order cuda_analyze() runs them ---------------------
 * Each fills its part of the analysis and returns 0 or -ENOMEM.  scratch holds
 * ngpu_ops + ncuda_api + nranges durations; range_names[i] is the row name of
 * range i (NULL for instants); bps and occ come from cuda_kernel_occupancy(). */

/* cuda_status.c: status rows and "CUDA: ..." lines. */
int cuda_status_build(struct cuda_analysis *a, const struct profile *p);
/* cuda_tables.c: op rows, kernel / memop / API summaries and totals. */
int cuda_tables_build(struct cuda_priv *pv, const struct profile *p, const struct cuda_nest *ns,
		      const char **range_names, const double *bps, const double *occ,
		      uint64_t *scratch);
/* cuda_display.c: display names of kernel rows and op rows (before the
 * sites and the rules, which print them). */
int cuda_display_build(struct cuda_priv *pv);
/* The display name of a GPU op's name (a kernel row's), or name itself. */
const char *cuda_display_of(const struct cuda_analysis *a, const char *name);
/* cuda_sites.c: launch sites; ops may be NULL. */
int cuda_sites_build(struct cuda_priv *pv, const struct profile *p, const struct cuda_nest *ns,
		     const struct op_analysis *ops);
/* The frame (profile.frames index) of stack s that stands for the user's call:
 * past the CUDA runtime/driver, cbottleneck, a static cudart and nvcc's glue,
 * vendor libraries, frameworks, the interpreter and system libraries (the
 * first frame of the user's code); kernel names the launched kernel (NULL for
 * other calls).  Without one: the framework function the interpreter called,
 * else the outermost frame that enters an operator (func_op: ops.h's, may be
 * NULL), else the first frame past the runtime.  CUDA_NO_IDX when none. */
uint32_t cuda_site_frame_ops(const struct profile *p, uint32_t s, const char *kernel,
			     const uint32_t *func_op);
/* cuda_site_frame_ops() without operators. */
uint32_t cuda_site_frame(const struct profile *p, uint32_t s, const char *kernel);
/* cuda_tables.c: 1 when the run recorded memory (host hooks on, host
 * allocation records or CUDA MEMORY2 records). */
int cuda_has_mem(const struct profile *p);
/* cuda_timeline.c: the overview, per-device rows and the verdict. */
int cuda_timeline_build(struct cuda_analysis *a, const struct profile *p,
			const struct cuda_nest *ns, const double *bps, const double *occ);
/* cuda_rules.c: recommendations, from the tables and the overview; ops
 * (may be NULL) names the operators that launched what a rule found, mem
 * (may be NULL) is the memory view the memory rules read. */
int cuda_rules_build(struct cuda_analysis *a, const struct profile *p, const char **range_names,
		     uint64_t *scratch, const struct op_analysis *ops,
		     const struct mem_analysis *mem);

#endif
