/*
 * stackw.h — what each call stack weighs, for the writers that draw stacks
 * (folded stacks, flame graphs, pprof, the HTML page): a stack's frames, its
 * weight under every --sample-type, the CPU samples merged per (stack,
 * thread) or bucketed per thread, and each source line's CPU counted once per
 * stack.  The weights and line totals are built once by analysis_run (struct
 * analysis' stackw); writers read them and never walk the profile's samples,
 * stacks or frames.  Launcher side only.
 */
#ifndef CBN_STACKW_H
#define CBN_STACKW_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"
#include "util.h"

struct analysis;
struct ct_tree;
struct mem_sample;

/* What a stack weighs (--sample-type; report/export.h names them). */
enum stackw_type {
	STACKW_CPU = 0,           /* timer periods (sum of sample weights) */
	STACKW_ALLOC_SPACE,       /* bytes allocated (estimates) */
	STACKW_ALLOC_OBJECTS,     /* allocations */
	STACKW_INUSE_SPACE,       /* bytes never freed */
	STACKW_INUSE_OBJECTS,     /* blocks never freed */
	STACKW_WALL,              /* ns on and off the CPU (--off-cpu) */
	STACKW_OFFCPU,            /* ns off the CPU (--off-cpu) */
};

/* Slots per stack of the wall types: 0 on-CPU, 1 on-CPU truncated, 2 + kind
 * the off-CPU stretches of that kind (enum cbn_offcpu_kind). */
#define STACKW_WALL_SLOTS (2 + CBN_OFF_NKINDS)

/* One source line's CPU: every stack with a frame on it, counted once per
 * stack (recursion does not inflate it). */
struct stackw_line {
	const char *file;         /* the profile's string */
	uint32_t line;
	uint64_t total_ns;
};

struct stackw {
	size_t nstacks;           /* the profile's; slot index nstacks: no valid stack */
	int memory;               /* host allocations were recorded */
	int offcpu;               /* the off-CPU sampler recorded */
	double *cpu;              /* 2 per stack: periods of the samples, [2k + 1] those
				   * of truncated ones */
	double *mem[4];           /* with memory: one per stack, by type - ALLOC_SPACE */
	double *wall;             /* with offcpu: STACKW_WALL_SLOTS per stack, ns */
	uint64_t last_ts;         /* the latest CPU sample's, 0 without samples */
	struct stackw_line *lines; size_t nlines;  /* by first appearance */
	struct util_map line_index;                /* (file, line) -> lines[] */
};

/* Build w from p, its call tree (the CPU ns per slot) and its memory
 * samples.  0, or -ENOMEM with *w empty. */
int stackw_build(const struct profile *p, const struct ct_tree *ct,
		 const struct mem_sample *ms, size_t nms, struct stackw *w);
void stackw_free(struct stackw *w);

/* Slots per stack under t: 2, or STACKW_WALL_SLOTS for the wall types.  A
 * writer walks slots i in [0, per * (nstacks + 1)): stack i / per, and
 * i % per: 0 whole, 1 truncated (its root frames missing), 2 + kind an
 * off-CPU kind. */
size_t stackw_per(enum stackw_type t);
/* The slots of w under t: per * (nstacks + 1). */
size_t stackw_nslots(const struct stackw *w, enum stackw_type t);
/* Slot i's weight under t (0 for a type without data). */
double stackw_get(const struct stackw *w, enum stackw_type t, size_t i);
/* The value of a sampled allocation under memory type t; 0 for the others. */
double stackw_mem_value(const struct mem_sample *s, enum stackw_type t);

/* Stack st's frames, leaf first (*n of them); NULL with *n 0 when st is no
 * valid stack or has none. */
const struct prof_frame *stackw_frames(const struct profile *p, uint32_t st, uint32_t *n);

/* The CPU time of (file, line) counted once per stack, 0 when none. */
uint64_t stackw_line_total(const struct stackw *w, const char *file, uint32_t line);

/* The CPU samples of a->profile merged per (stack, thread), by stack then
 * thread: weight the periods, ns those times the thread's period. */
struct stackw_thread {
	uint32_t stack, thread;
	uint64_t weight, ns;
};
/* Malloc'd into *out (*n of them, NULL when none).  0 or -ENOMEM. */
int stackw_by_thread(const struct analysis *a, struct stackw_thread **out, size_t *n);

/* The CPU samples of a->profile bucketed per thread, in the profile's order
 * within each: thread t's are v[off[t] .. off[t + 1]).  Samples of no valid
 * thread are left out. */
struct stackw_tick {
	uint64_t ts;              /* CLOCK_MONOTONIC ns */
	uint64_t cpu_ns;          /* weight x the thread's period */
	uint32_t slot;            /* 2 * stack (+1 truncated); 2 * nstacks: no valid stack */
};
struct stackw_ticks {
	struct stackw_tick *v;
	size_t *off;              /* nthreads + 1 */
	size_t nthreads;
};
/* 0 or -ENOMEM (t empty); stackw_ticks_free releases it. */
int stackw_ticks(const struct analysis *a, struct stackw_ticks *t);
void stackw_ticks_free(struct stackw_ticks *t);

#endif
