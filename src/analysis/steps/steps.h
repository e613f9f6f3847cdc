/*
 * steps.h — the steps view (docs/steps.md): the run cut into the iterations
 * of its main loop, each with what it cost, their distribution, the slowest
 * ones and what grew in them.  Filled by steps_analyze() from analysis_run;
 * NULL in struct analysis when the run has no steps.  Launcher side only.
 *
 * Where steps come from: what the user named first, in this order, then
 * cbn_step() (the first source that gives at least two steps; the source
 * line says when a named one gave fewer):
 *   1. NVTX/annotation marks matching --step: step k runs from mark k to
 *      mark k+1;
 *   2. NVTX/annotation ranges whose name matches --step: each range is a step;
 *   3. --step-func NAME: each call of NAME on the thread that runs it most,
 *      from its first sample to the first sign it ended: a sample outside it,
 *      a look of the off-CPU sampler finding the thread blocked outside it,
 *      or (without --off-cpu) a stretch of over 10 ms off the CPU; the time
 *      between calls is in no step;
 *   4. cbn_step() markers: a step runs from one marker to the next (the last
 *      one to its window's end or the process's end when it has work), and
 *      the n-th marker starts step n, as torch's n-th prof.step() starts
 *      ProfilerStep#n (the time before the first marker is step 0, not
 *      listed: it holds the program's start-up).
 * With capture windows (--schedule ...), only steps inside a window are kept,
 * numbered absolutely (from window.first_step).
 */
#ifndef CBN_STEPS_H
#define CBN_STEPS_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"
#include "rules.h"
#include "step_split.h"

enum step_source {
	STEP_SRC_MARKER = 1,             /* cbn_step() / marks matching --step */
	STEP_SRC_RANGE = 2,              /* ranges matching --step */
	STEP_SRC_FUNC = 3,               /* --step-func, from the samples */
};

struct step {
	uint64_t number;                 /* absolute step number (ProfilerStep#N) */
	uint32_t process;                /* index into prof.processes */
	uint64_t start, end;             /* CLOCK_MONOTONIC ns */
	uint64_t cpu_ns;                 /* sampled CPU of the process's threads in the step */
	uint64_t gpu_busy_ns;            /* union of its kernels, copies and sets (clipped) */
	uint64_t sync_ns;                /* host time in CUDA synchronizing calls */
	uint32_t kernels, copies;        /* GPU ops starting in the step */
	uint64_t mem_peak;               /* highest host live bytes (MEM_COUNTERS) in the step,
					  * 0 when memory was not recorded */
};

/* What grew in a slow step, against the median step. */
struct step_growth {
	const char *name;                /* function (cpu) or kernel name */
	int gpu;                         /* 1: a kernel */
	uint64_t step_ns;                /* its time in the slow step */
	uint64_t median_ns;              /* its median time over all steps */
};

#define STEP_GROWTH_MAX 5

struct step_slow {
	size_t step;                     /* index into steps[] */
	double ratio;                    /* duration / median duration */
	struct step_growth grew[STEP_GROWTH_MAX];
	size_t ngrew;
};

struct step_analysis {
	int source;                      /* enum step_source */
	const char *what;                /* "cbn_step()", "ranges matching 'train'",
					  * "function train_step" (owned) */
	const char *precision;           /* STEP_SRC_FUNC: how exact the edges are, only the
					  * claims that hold for the run; else NULL (markers
					  * and ranges are timed exactly) */
	const char *counts;              /* what a step holds: "one call of f on thread 42,
					  * from its first sample to its end" (owned) */
	uint64_t between_ns;             /* time between consecutive steps of a process that
					  * is in none (a --step-func loop's sleep) */
	struct step *steps;              /* by (process, start) */
	size_t nsteps;
	/* each step's wall time by what went on (step_split.h), parallel to
	 * steps[]; NULL when not measured */
	uint64_t (*split)[STEP_SPLIT_N];
	/* durations */
	uint64_t min_ns, median_ns, p90_ns, max_ns, mean_ns, total_ns;
	/* the slowest steps (duration > 1.5 x median), slowest first, at most 5 */
	struct step_slow *slow;
	size_t nslow;
	/* cold start: the first step against the median of the others */
	int cold;                        /* 1 when the first step took > 2 x that median */
	double cold_ratio;
	/* capture windows (prof.windows) summed, and whether controls were used */
	int controlled;
	uint64_t window_ns;
	struct rule_finding *findings;   /* step rules (rules.h), for the recommendations */
	size_t nfindings;
};

/* Analyse p's steps.  *out NULL (and 0) when the run has none.  0 or -ENOMEM. */
int steps_analyze(const struct profile *p, const char *step_regex, const char *step_func,
		  struct step_analysis **out);
void steps_free(struct step_analysis *s);

/* Why --step-func step_func gave no steps (no sample in it; one call, and
 * why two calls could not be told apart), for the data-quality lines; NULL
 * when it gave steps or none was asked for.  0 or -ENOMEM. */
int steps_func_note(const struct profile *p, const char *step_func, char **note);

#endif
