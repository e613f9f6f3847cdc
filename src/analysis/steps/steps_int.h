/*
 * steps_int.h — internals of the steps view (steps*.c): its thresholds, the
 * list of steps being built, the index of samples by (process, time), the
 * intervals each step looks up, and the parts steps.c runs in turn.
 * Launcher side only.
 */
#ifndef CBN_STEPS_INT_H
#define CBN_STEPS_INT_H

#include "cbn_rx.h"
#include <stddef.h>
#include <stdint.h>

#include "steps.h"

#define STEP_SLOW_RATIO 1.5      /* a slow step: duration above this x the median */
#define STEP_SLOW_MAX 5          /* slow steps kept */
#define STEP_COLD_RATIO 2.0      /* cold start: first step above this x the others' median */
#define STEP_GROW_MIN_PERIODS 3  /* a function's growth shown: at least 3 sampling periods */
#define STEP_GROW_MIN_SHARE 0.1  /* ... and a tenth of the largest growth in the step */
#define STEP_CAND_MAX 16         /* functions/kernels of a slow step compared with the median */
/* A marker that opens a window (--schedule) is taken a little before the
 * window's OPEN record is written (the agent reads the clock, then decides):
 * it still belongs to that window. */
#define STEP_EDGE_SLACK_NS 1000000ull

/* --step-func without off-CPU looks, or with looks that fell behind (came
 * over a period late on average): a stretch off the CPU longer than this
 * between two samples inside the function ends a call (a sleep between
 * calls; a call that blocks inside for longer counts as two) */
#define STEP_FUNC_GAP_NS 10000000ull
/* ... unless its stretches off the CPU cannot be told from waits for a CPU
 * (gap_rule): this share of the thread's time off the CPU was runnable
 * (schedstat, with looks), the machine's load at start was at least its
 * CPUs, or the thread stopped this often for 1 ms to STEP_FUNC_GAP_NS
 * between samples (of its pairs of consecutive samples, STEP_FUNC_PAIRS_MIN
 * at least) */
#define STEP_FUNC_RUNQ_MAX 0.5
#define STEP_FUNC_SHORT_NS 1000000ull
#define STEP_FUNC_SHORT_SHARE 0.10
#define STEP_FUNC_PAIRS_MIN 20

enum step_gaps_unused {
	STEP_GAPS_USED = 0,
	STEP_GAPS_RUNQ,          /* runq_share >= STEP_FUNC_RUNQ_MAX */
	STEP_GAPS_LOAD,          /* the machine's load at start >= its CPUs */
	STEP_GAPS_SHORT,         /* short_stops over STEP_FUNC_SHORT_SHARE of pairs */
};

/* How --step-func found the ends of the calls (steps_from_func). */
struct step_edges {
	uint32_t thread;         /* the thread it read, UINT32_MAX none */
	int looked;              /* the off-CPU sampler looked at it (--off-cpu) */
	uint64_t look_ns;        /* its period between looks, 0 unknown */
	uint32_t by_sample;      /* ends seen by a sample outside the function */
	uint32_t by_look;        /* ... by a look that found it blocked outside */
	uint32_t by_gap;         /* ... by a stretch off the CPU (no look to say) */
	uint64_t late_ns;        /* the looks' mean lateness (the sampler's delay) */
	int behind;              /* looked, but over a period late on average */
	uint32_t pairs, short_stops; /* consecutive samples; after a 1-10 ms stop */
	double runq_share;       /* with looks: of its time off the CPU, runnable */
	int gaps_unused;         /* enum step_gaps_unused: why no stretch ends a call */
};

struct step_list {
	struct step *v;
	size_t n, cap;
};

/* Samples by (process, ts), as indices into p->samples: every per-step sum
 * is a binary search and a short walk. */
struct sample_index {
	const struct profile *p;
	uint32_t *idx;
	size_t n;
};

/* Intervals of one kind (GPU ops, syncs, counters) by (process, start), so a
 * step finds its own with a binary search: those starting up to the longest
 * interval before it. */
struct tindex {
	struct tent {
		uint32_t process;
		uint32_t i;              /* index into the profile's array */
		uint64_t s, e;
	} *v;
	size_t n, cap;
	uint64_t maxlen;
};

struct step_ix {
	struct tindex gpu;       /* gpu_ops */
	struct tindex sync;      /* syncs, or the *Synchronize API calls of processes without */
	struct tindex mem;       /* mem_counters, s = e = ts */
};

/* steps_find.c: the steps of markers (cbn_step(), or marks matching re
 * when not NULL), of ranges matching re, of function name (one call each,
 * on the samples of one thread: how their ends were found in *e); the
 * sample index built; the first position in it
 * with (process, ts) >= (proc, ts); the process of sample si. */
int steps_from_markers(const struct profile *p, const struct cbn_rx *re, const struct sample_index *x,
		       struct step_list *l);
int steps_from_ranges(const struct profile *p, const struct cbn_rx *re, struct step_list *l);
int steps_from_func(const struct profile *p, const char *name, struct step_list *l,
		    struct step_edges *e);
int steps_sidx_build(const struct profile *p, struct sample_index *x);
size_t steps_sidx_lower(const struct sample_index *x, uint32_t proc, uint64_t ts);
uint32_t steps_sample_proc(const struct profile *p, uint32_t si);

/* steps_figures.c: the intervals each step looks up, built and freed; the
 * first entry of process proc in t that may overlap [start, ...); every
 * step's figures. */
int steps_ix_build(const struct profile *p, struct step_ix *ix);
void steps_ix_free(struct step_ix *ix);
size_t steps_tindex_first(const struct tindex *t, uint32_t proc, uint64_t start);
int steps_figures(const struct profile *p, const struct sample_index *x,
		  const struct step_ix *ix, struct step *v, size_t n);

/* for each entry e of t overlapping step s (or starting in it): */
#define TINDEX_EACH(t, st, k)                                                      \
	for (size_t k = steps_tindex_first((t), (st)->process, (st)->start);                \
	     k < (t)->n && (t)->v[k].process == (st)->process && (t)->v[k].s < (st)->end; \
	     k++)

/* steps_slow.c: the distribution of durations, the slowest steps, the
 * cold-start rule. */
int steps_distribution(struct step_analysis *a);
int steps_slow(const struct profile *p, const struct sample_index *x, const struct step_ix *ix,
	       struct step_analysis *a);
int steps_cold_start(struct step_analysis *a);

#endif
