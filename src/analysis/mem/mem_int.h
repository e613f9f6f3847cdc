/*
 * mem_int.h — internals of the host memory analysis (memory.c, mem_sites.c,
 * mem_replay.c, mem_host.c): the state of one analysis of the host spaces,
 * and one process's replay.  Launcher side only; single-threaded.
 */
#ifndef CBN_MEM_INT_H
#define CBN_MEM_INT_H

#include <stddef.h>
#include <stdint.h>

#include "memory.h"
#include "util.h"

/* [first, end) of a (process, ts)-sorted array for process proc. */
#define PROC_RANGE(arr, n, proc, first, end)                                         \
	do {                                                                         \
		size_t lo_ = 0, hi_ = (n);                                           \
		while (lo_ < hi_) {                                                  \
			size_t mid_ = lo_ + (hi_ - lo_) / 2;                         \
			if ((arr)[mid_].process < (proc)) lo_ = mid_ + 1;            \
			else hi_ = mid_;                                             \
		}                                                                    \
		(first) = lo_;                                                       \
		for ((end) = lo_; (end) < (n) && (arr)[(end)].process == (proc); (end)++) \
			;                                                            \
	} while (0)

/* A sampled record whose weight is under this stands for itself alone (a
 * block of 5 x the sampling rate or more is recorded with 99 % odds): its
 * bytes are a measurement, not an estimate. */
#define MEM_SURE_WEIGHT 1.01
/* An estimate of one site's live bytes made of fewer uncertain records
 * than this is one sample's weight (±100 %), not a figure to show. */
#define MEM_EST_MIN_RECORDS 3
/* The exact counters' precision: each thread batches 64 KiB (agent.md,
 * section 15); a peak is first reached when the live heap comes within
 * that, or MEM_PEAK_SAME of it (mem_host.c). */
#define MEM_COUNTER_SLACK 65536ull
#define MEM_PEAK_SAME 0.001

struct host_ctx {
	const struct profile *p;
	struct mem_analysis *m;
	struct util_map sitemap;           /* site_key -> host site */
	uint32_t *asite;                   /* per mem_allocs record: its site */
	double *aw;                        /* per record: allocations it stands for */
	uint8_t *dead;                     /* per record: freed (or replaced) in a replay */
	uint32_t *stack_site;              /* per profile stack: its site, UINT32_MAX unknown
	                                    * (the allocator test runs once per stack) */
	uint8_t *wrap;                     /* per function: MW_* (mem_wrap.c) */
	size_t first_site;                 /* host sites begin here in m->sites */
	size_t capsites;                   /* m->sites' capacity while host sites are added */
	double *live;                      /* per site: live bytes during a replay */
	double *sure;                      /* ... of them, blocks whose record is certain
	                                    * (MEM_SURE_WEIGHT: a large block's) */
	uint32_t *nunsure;                 /* ... and the live records that are not */
	/* lifetimes of freed sampled blocks: (site, ns) */
	struct life { uint32_t site; uint64_t ns; } *lives;
	size_t nlives, caplives;
};


/* The end of a sampled block: its free, or a later allocation at the same
 * address whose free was not seen (the agent's live table was full). */
struct death {
	uint64_t ts;
	uint32_t alloc;          /* index into mem_allocs */
	uint32_t freed;          /* 1: a free (a lifetime), 0: replaced */
};

struct replay {
	size_t a0, a1, f0, f1, c0, c1;     /* the process's records */
	struct death *deaths; size_t ndeaths;   /* by ts */
	uint64_t snap_ts;                  /* copy site lives here at this time, 0 never */
	double *snap;                      /* per site, when snap_ts */
	double *snap_sure;                 /* ... of it, certain */
	uint32_t *snap_n;                  /* ... and the uncertain records behind the rest */
	int stats;                         /* first pass: lifetimes, timeline, site maxima */
	/* out (stats pass) */
	double peak; uint64_t peak_ts;     /* highest estimated live */
	double live_end;
	struct mem_point *pts; size_t npts, cappts;
	size_t per, inpool;                /* points pooled into one (mem_push_point) */
	uint8_t *dead;                     /* per mem_allocs record: it has a death */
};


/* mem_wrap.c: per function, MW_* flags: what a site looks past (the
 * allocator's wrappers, found or named with --alloc-fn) and the arena and
 * GC allocators whose blocks at exit are no leak.  MEM_WRAP_DEPTH: the
 * longest one-caller chain of helpers under a wrapper; MEM_WRAP_LAYERS:
 * wrappers over wrappers found. */
#define MW_WRAPPER 0x1           /* forwards to the allocator, found from the samples */
#define MW_USER 0x2              /* named with --alloc-fn */
#define MW_ARENA 0x4             /* keeps its memory until exit on purpose */
#define MW_SKIP (MW_WRAPPER | MW_USER | MW_ARENA) /* a site looks past them all */
#define MEM_WRAP_DEPTH 3
#define MEM_WRAP_LAYERS 4

int mem_wrap_find(const struct profile *p, const char *const *fns, size_t nfns, uint8_t **out);
/* The name of the arena or GC allocator stack passes through, NULL none. */
const char *mem_wrap_arena(const struct profile *p, const uint8_t *w, uint32_t stack);

/* mem_sites.c: the host site of an allocation's stack (made at first
 * sight; -ENOMEM), and every site's order and the leaks once both host and
 * GPU spaces are in. */
long mem_site_of(struct host_ctx *h, uint32_t stack);
int mem_sites_finish(struct mem_analysis *m);

/* mem_replay.c: pair the process's frees with their allocations (deaths,
 * by time); replay them, keeping the live bytes per site (and, in the stats
 * pass, the peak, the curve and the lifetimes); add one point to the curve
 * (pooled by r->per); thin the curve to MEM_TIMELINE_MAX points. */
int mem_replay_pair(const struct profile *p, struct replay *r);
int mem_replay_run(struct host_ctx *h, struct replay *r);
int mem_push_point(struct replay *r, uint64_t ts, double live, uint64_t rss);
void mem_timeline_reduce(struct mem_point *pts, size_t *n);

/* mem_host.c: the host spaces, one per process that recorded host memory;
 * fns: --alloc-fn names. */
int mem_host_analyze(const struct profile *p, struct mem_analysis *m, const char *const *fns,
		     size_t nfns);

#endif
