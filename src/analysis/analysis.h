/*
 * analysis.h — the one analysis result of a profile: what every writer
 * (report/) and the regression gate (gate/) read.  The CLI runs it once after
 * loading the session; writers only format it and never change it (a writer
 * that needs another order sorts a copy).  Launcher side only.
 */
#ifndef CBN_ANALYSIS_H
#define CBN_ANALYSIS_H

#include <stddef.h>

#include "profile.h"

struct cpu_profile;
struct ct_tree;
struct cuda_analysis;
struct dist_analysis;
struct mem_sample;
struct mem_analysis;
struct op_analysis;
struct op_pattern;
struct prog_analysis;
struct stackw;
struct step_analysis;
struct wait_analysis;

struct analysis_opts {
	int cpu_only;            /* skip the CUDA analysis (cuda stays NULL) */
	const char *step_regex;  /* --step: ranges/marks so named are steps (POSIX ERE) */
	const char *step_func;   /* --step-func: a function entered once per step */
	const struct op_pattern *op_patterns;   /* --op-pattern rules (ops.h), before the
						 * built-in ones */
	size_t nop_patterns;
	const char *const *alloc_fns;   /* --alloc-fn: allocation wrappers a memory site
					 * looks past, as massif's --alloc-fn */
	size_t nalloc_fns;
};

struct analysis {
	const struct profile *profile;   /* not owned: outlives the analysis */
	struct cpu_profile *cpu;         /* cpu.h: functions, lines, threads, processes */
	struct ct_tree *calltree;        /* calltree.h: the CPU samples' merged call tree */
	struct prog_analysis *programs;  /* programs.h: CPU by program image and module;
					  * NULL without samples */
	struct op_analysis *ops;         /* ops.h: framework operators; NULL when no frame
					  * entered one */
	struct cuda_analysis *cuda;      /* cuda_analysis.h; NULL when the run has no CUDA part */
	struct mem_analysis *memory;     /* memory.h; NULL when the run has no memory data */
	struct mem_sample *mem_samples;  /* mem_samples.h: one per host allocation record,
					  * weighed and paired with its free; NULL when none */
	size_t nmem_samples;
	struct stackw *stackw;           /* stackw.h: each stack's weight under every sample
					  * type, the source lines' totals */
	struct step_analysis *steps;     /* steps.h; NULL when the run has no steps */
	struct wait_analysis *wait;      /* wait.h: on-CPU activities, off-CPU waits, locks,
					  * efficiency, the CPU verdict; NULL when the run
					  * has neither samples nor off-CPU stretches */
	struct dist_analysis *dist;      /* dist.h: ranks of a distributed job; NULL when no
					  * process is a rank */
	char **warnings;                 /* data-quality lines (cpu_warnings), one each */
	size_t nwarnings;
	/* The run's one verdict (verdict.c): CPU-bound or GPU-bound, and where,
	 * from every view's evidence; the views' own verdicts detail it. */
	struct run_verdict {
		char kind[32];           /* "CPU-bound", "GPU-bound", "launch-bound", "waiting",
					  * "start-up-bound", "mixed"; "" without one */
		char *text;              /* "CPU-bound: 75 % of the CPU in heavy (split.c:15); ..."
					  * (owned), NULL with too little data */
	} verdict;
};

/* verdict.c: fill a->verdict once every view is analysed.  0 or -ENOMEM. */
int verdict_run(struct analysis *a);
void verdict_free(struct analysis *a);

/* Analyse p into *a.  opts may be NULL.  Returns 0, or -ENOMEM with *a empty. */
int analysis_run(const struct profile *p, const struct analysis_opts *opts, struct analysis *a);
void analysis_free(struct analysis *a);

#endif
