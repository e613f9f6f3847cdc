/*
 * memory.h — the memory view of a profile: per host process and per GPU
 * device, live bytes over time, the peak (how high, when, during which range,
 * and which allocation sites held it), allocation sites and what was never
 * freed.  Computed once by analysis_run (memory.c: host, mem_gpu.c: devices)
 * into struct analysis.memory; writers only format it.  Launcher side only.
 *
 * Host figures come from sampled records (cbn_rec_mem_alloc): each stands for
 * s / (1 - exp(-s/rate)) bytes and 1 / (1 - exp(-s/rate)) allocations (its own
 * size s: unbiased when sizes vary; src/format/cbn_weight.h), so site figures are estimates, doubles.
 * A host space's peak and timeline come from the exact counters when the
 * allocator gave usable sizes (peak_exact), else from the sampled records.
 * GPU figures come from every CUPTI MEMORY2 record: exact.
 */
#ifndef CBN_MEMORY_H
#define CBN_MEMORY_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"
#include "rules.h"

#define MEM_TIMELINE_MAX 2000    /* points kept per space (max-preserving buckets) */
#define MEM_PEAK_SITES_MAX 20    /* sites kept per space at its peak */

enum mem_space_kind { MEM_SPACE_HOST = 1, MEM_SPACE_GPU = 2 };

/* mem_space.device / mem_site.device of the GPU-side space "pinned host":
 * page-locked host memory from cudaMallocHost / cudaHostAlloc (MEMORY2 kinds
 * PINNED and PAGEABLE), kept apart from the devices' memory. */
#define MEM_DEVICE_PINNED UINT32_MAX

/* One point of a space's curve. */
struct mem_point {
	uint64_t ts;             /* CLOCK_MONOTONIC ns */
	int64_t live;            /* bytes allocated and not freed (GPU: MEMORY2 live) */
	uint64_t rss;            /* host: resident bytes then (0 unknown); GPU: reserved
	                          * bytes (pool sizes + non-pool allocations) */
};

/* A site's share of a space's peak. */
struct mem_peak_site {
	uint32_t site;           /* index into mem_analysis.sites */
	double bytes;            /* live at the peak (estimate on the host) */
};

struct mem_space {
	uint32_t kind;           /* enum mem_space_kind */
	uint32_t process;        /* host: index into profile.processes; GPU: PROF_NONE */
	uint32_t device;         /* GPU: device id; host: 0 */
	const char *name;        /* "host" (pid N when several), "GPU 0" ... (profile's arena
	                          * or a static string) */
	uint64_t peak;           /* highest live bytes */
	uint64_t peak_ts;        /* when (CLOCK_MONOTONIC ns; 0 unknown) */
	int peak_exact;          /* 1: from exact counters / every record; 0: estimate */
	int windowed;            /* host: the process recorded capture windows only: the
	                          * peak is the highest counter read inside them */
	uint32_t peak_range;     /* profile.ranges index of the innermost range open at
	                          * the peak on any thread of the process, PROF_NONE */
	uint64_t rss_peak;       /* host: highest RSS read (agent overhead included) */
	uint64_t reserved_peak;  /* GPU: highest reserved (pool sizes + non-pool), 0 */
	uint64_t cached_end;     /* GPU: bytes caching allocators still held at the end
	                          * (their sites' live_end_bytes): a cache, not a leak */
	uint64_t address_peak;   /* host: address space reserved and not memory (PROT_NONE
	                          * mappings, libcuda's), the most at once; 0 none */
	int64_t live_end;        /* live bytes at the end of the process / run */
	uint64_t total;          /* GPU: device memory (global_mem), 0 unknown */
	uint64_t allocs, frees;  /* calls (host: exact counters; GPU: records) */
	uint64_t alloc_bytes;    /* bytes allocated over the run */
	struct mem_point *timeline; size_t ntimeline;       /* by ts */
	struct mem_peak_site *at_peak; size_t nat_peak;     /* by bytes desc: sites whose
							     * share is a measurement
							     * (certain blocks, or at least
							     * MEM_EST_MIN_RECORDS records) */
	double at_peak_other;    /* host: what the sites of a sample or two held at the peak
				  * (each one sample's weight: no figure per site) */
	uint32_t nat_peak_other;
	double at_peak_rest;     /* ... and the sites past MEM_PEAK_SITES_MAX */
	uint32_t nat_peak_rest;
};

/* An allocation site: the first frame of an allocation's stack outside the
 * allocator (malloc & co, operator new, the standard library's allocator
 * templates, the CUDA runtime for GPU sites) and, on the host, outside the
 * program's allocation wrappers (mem_wrap.c); allocations with the same
 * function, file and line are one site. */
struct mem_site {
	uint32_t kind;           /* enum mem_space_kind */
	uint32_t device;         /* GPU sites: device id */
	uint32_t func;           /* profile.funcs index of the site frame, PROF_NONE unknown */
	const char *file;        /* its file ("" unknown) */
	uint32_t line;           /* its line (0 unknown) */
	int inlined;             /* the site frame was inlined into its caller */
	uint32_t stack;          /* profile.stacks index of its heaviest stack, PROF_NONE */
	double bytes;            /* allocated over the run */
	double allocs;           /* allocations */
	uint64_t records;        /* sampled records behind the estimate */
	double live_end_bytes;   /* still allocated at the end (a leak, for host) */
	double live_end_blocks;
	double max_live;         /* its own highest live bytes */
	int max_live_known;      /* 1: max_live was a measurement (certain blocks, or at
				  * least MEM_EST_MIN_RECORDS uncertain records live); 0:
				  * one sample's weight, to be shown as unknown */
	double short_lived;      /* allocations freed within MEM_SHORT_NS of their birth */
	uint64_t median_life_ns; /* median lifetime of its freed sampled blocks, 0 none */
	/* host leaks that grow (mem_rules.c): births of its blocks still live at
	 * the end, and the repeated steps of its process(es) in which one was born */
	uint64_t leak_first_ts, leak_last_ts;   /* 0 when it leaked nothing */
	uint64_t leak_span_ns;   /* of the run of its process(es): last - first process time */
	uint32_t leak_steps;     /* steps with a leaked birth */
	uint32_t steps;          /* steps in those processes (0: none repeat) */
	/* host: the allocation wrapper (xmalloc, sqlite3Malloc: found from the
	 * samples or named with --alloc-fn, mem_wrap.c) it was found past, the
	 * outermost of its first stack; PROF_NONE when it called the allocator
	 * itself */
	uint32_t via;
	/* host: the arena or GC allocator (ggc_internal_alloc, _obstack_newchunk,
	 * pymalloc's) that holds most of its blocks at the end: kept until exit
	 * on purpose, not a leak (not in leaks[]); NULL otherwise */
	const char *arena;
	double arena_end_bytes;  /* of live_end_bytes, the blocks an arena allocator holds */
	/* GPU: allocated by a caching allocator (PyTorch's CUDACachingAllocator,
	 * cub's, RMM's pools): what it holds at the end is its cache, kept for
	 * reuse until the process exits, not a leak (not in leaks[]) */
	int caching;
};

#define MEM_SHORT_NS 1000000ull  /* "short-lived": freed within 1 ms */

struct mem_analysis {
	uint64_t rate;           /* host sampling rate (the root process's); 1 exact; 0 no host data */
	int exact;               /* every host allocation recorded */
	struct mem_space *spaces; size_t nspaces;  /* hosts by process, then GPUs by device */
	struct mem_site *sites;   size_t nsites;   /* by bytes desc */
	uint32_t *leaks;          size_t nleaks;   /* site indices with live_end_bytes > 0,
	                                            * by live_end_bytes desc */
	uint64_t sampled, lost, untracked, no_stack; /* all processes */
	const char *refused;     /* why host memory was asked for but not recorded, NULL */
	/* host blocks that arena and GC allocators held at exit on purpose (the
	 * sites with an arena, mem_site.arena), not leaks; the arena holding
	 * most of them (a function name), NULL when none */
	double arena_end_bytes;
	const char *arena_top;
	/* appended after the contract's first version */
	struct rule_finding *recos; size_t nrecos;    /* findings of the memory rules
	                                            * (mem_rules.c), in table order */
	char **strs;              size_t nstrs;    /* names made by mem_strdup (owned) */
};

/* Sort keys of the allocation-sites table (--sort): "mem" (bytes allocated,
 * the default), "allocs", "leaked" (live at exit), "peak" (its peak live),
 * "avg_size".  1 when key is one of them. */
int mem_sort_key_valid(const char *key);
/* Indices of m's sites of kind in the key's order (bytes allocated when key is
 * not a memory key); *idx is malloc'ed, NULL when there are none.  Returns the
 * count, or -ENOMEM. */
long mem_sorted_sites(const struct mem_analysis *m, uint32_t kind, const char *key,
		      uint32_t **idx);
/* A string owned by m (freed by mem_free), for space names; NULL when memory
 * is short. */
__attribute__((format(printf, 2, 3))) const char *mem_strdup(struct mem_analysis *m,
							  const char *fmt, ...);
/* 1 when frame belongs to the allocator (malloc & co, operator new, the
 * standard library's allocator templates even inlined, libc, libstdc++, the
 * dynamic loader, cbottleneck's own libraries): skipped when finding a site. */
int mem_frame_is_allocator(const struct profile *p, const struct prof_frame *fr);
/* The memory rules (mem_rules.c) over m: fills m->recos.  0 or -ENOMEM. */
int mem_rules_build(struct mem_analysis *m, const struct profile *p);

struct analysis;

/* Fill a->memory from a->profile; a->memory stays NULL when the run has no
 * memory data.  alloc_fns: --alloc-fn names (wrappers a site looks past).
 * 0 or -ENOMEM. */
int mem_analyze(struct analysis *a, const char *const *alloc_fns, size_t nalloc_fns);
/* GPU part (mem_gpu.c): append GPU spaces and sites to m. 0 or -ENOMEM. */
int mem_gpu_analyze(const struct profile *p, struct mem_analysis *m);
void mem_free(struct mem_analysis *m);

#endif
