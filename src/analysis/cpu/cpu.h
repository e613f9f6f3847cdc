/*
 * cpu.h — CPU aggregation of a profile: per-function self and total time, per
 * source line self time, per thread and per process totals, run totals, and
 * pstats-style sorting.  Pure functions of a struct profile; launcher side only.
 *
 * Weights are sums of prof_sample.weight (timer periods).  Nanoseconds are
 * weight × period_ns of the process the sample came from (processes may run
 * at different periods), so ns totals are computed per sample, not as
 * weight × one period.
 */
#ifndef CBN_CPU_H
#define CBN_CPU_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"

struct cpu_func {
	uint32_t func;           /* index into profile.funcs */
	uint32_t inlined_into;   /* the function it was inlined into in its heaviest
	                          * inlined stack, PROF_NONE when never inlined */
	uint64_t self_w;         /* weight of samples whose leaf frame is this function */
	uint64_t total_w;        /* weight of samples with it anywhere on the stack, once each */
	uint64_t self_ns, total_ns;
	/* exact counts (a Python function under --calls, counted != 0): calls,
	 * and primitive calls (those not nested in one of its own) */
	int counted;
	uint64_t calls, primitive;
};

struct cpu_line {
	const char *file;        /* the profile's string: path of the leaf frame's line */
	uint32_t line;
	uint32_t func;           /* index into profile.funcs of the leaf frame */
	uint64_t self_w, self_ns;
};

struct cpu_thread {
	uint32_t thread;         /* index into profile.threads */
	uint64_t samples;        /* sample records */
	uint64_t weight, ns;
	uint64_t measured_ns;    /* exact CPU from THREAD_END (prof_thread.cpu_ns), 0 unknown */
};

struct cpu_process {
	uint32_t process;        /* index into profile.processes */
	uint64_t samples, weight, ns;
	uint64_t lost;           /* all reasons together */
	uint64_t measured_ns;    /* sum of its threads' measured_ns; 0 unknown: some thread
				  * (or all: none seen) has no exact CPU time */
};

struct cpu_profile {
	struct cpu_func *funcs;        size_t nfuncs;    /* only functions seen in a sample */
	struct cpu_line *lines;        size_t nlines;    /* by self weight, descending */
	uint64_t line_ns;              /* self time of the lines with a line number: the
				        * rest of cpu_ns has none (no debug info) */
	struct cpu_thread *threads;    size_t nthreads;  /* one per profile thread, same order */
	struct cpu_process *procs;     size_t nprocs;    /* one per profile process, same order */
	uint64_t samples;              /* sample records */
	uint64_t weight;               /* sum of weights (> samples when timers overran) */
	uint64_t cpu_ns;               /* sum over processes of weight × period */
	uint64_t measured_ns;          /* sum of procs[].measured_ns, 0 unless all are known */
	uint64_t lost[CBN_LOST_NREASONS];
	uint64_t lost_total;
	uint64_t truncated, pc_only;   /* sample records with those flags */
	uint64_t truncated_py_whole;   /* of truncated: their Python frames all there */
	size_t nthreads_seen;          /* threads with at least one sample */
	/* The profiler's own CPU, never in the tables (the program's cpu_ns
	 * excludes it; measured_ns, the kernel's count, includes it). */
	struct cpu_overhead {
		uint64_t total_ns;         /* the sum of the five below */
		uint64_t sampled_ns;       /* samples in its code on the program's threads
		                            * (allocation hooks, CUDA callbacks, thread
		                            * start, its own pthreads) */
		uint64_t samples;
		uint64_t threads_ns;       /* the CUDA layer's flusher thread (its CPU clock) */
		uint64_t launcher_ns;      /* the launcher's monitor, outside the program */
		uint64_t handler_ns;       /* inside the sampling handler (measured) */
		uint64_t startup_ns;       /* the agent's start-up in each image */
	} overhead;
	struct cpu_sampler {           /* how the agent sampled, all processes together */
		uint64_t threads_perf;     /* threads sampled with perf events */
		uint64_t threads_timer;    /* threads sampled with POSIX CPU timers */
		const char *timer_reason;  /* why (first process that gave one), or NULL */
		uint32_t signo;            /* the root process's sampling signal at the end */
		uint32_t signo_first;      /* ... and at its start */
		uint32_t notes;            /* CBN_NOTE_* of all processes */
		uint64_t pc_only_why[CBN_PCONLY_NREASONS];
		uint64_t unsampled_why[CBN_UNSAMPLED_NREASONS];
		uint32_t kstack_state;     /* CBN_KSTACK_TAKEN if any process took kernel
		                            * stacks, else OFF if one said why, else 0 */
		uint64_t kstack_threads;   /* threads that had the kernel event */
		uint64_t kstack_samples;   /* kernel samples attached to samples */
		uint64_t kstack_lost;      /* kernel samples whose stack was not kept */
		uint64_t kstack_placed;    /* on the user stack that entered the kernel */
		uint64_t kstack_unplaced;  /* on the next sample's stack (caller chain gone) */
		uint64_t kstack_parks;     /* events closed while threads ran in user mode */
		uint64_t kstack_unparks;   /* ... opened again when system time grew */
		const char *kstack_reason; /* why none (first process that gave one), or NULL */
		struct prof_unwind_check ucheck; /* summed; first_*: the first
						  * process's that has one */
	} sampler;
	struct cpu_python {            /* the Python interpreter, all processes together
				        * (cpu_python.c) */
		uint32_t state;            /* CBN_PY_ON if any process's was read, else the
		                            * first other state a process gave, else NONE */
		uint32_t version;          /* PY_VERSION_HEX of that process */
		int mixed;                 /* processes read different versions */
		const char *reason;        /* why not read (state OFF, REFUSED), or NULL */
		uint64_t samples;          /* sample records whose stack has a Python frame */
		uint64_t samples_of;       /* sample records of processes whose interpreter
		                            * was read */
		uint64_t truncated;        /* stacks whose Python chain was cut */
		uint64_t unread[CBN_PYU_NREASONS]; /* stacks kept native, by reason */
		uint64_t codes, codes_gone, codes_missing, table_full;
		/* the handler's walks of Python frames, one in eight timed
		 * (CBN_OVH_PYWALK): their time, how many, their frames */
		uint64_t walk_ns, walks, walk_frames;
	} python;
	struct cpu_unwind {            /* unwinding past code without unwind information,
				        * all processes together (cpu_unwind.c) */
		int present;               /* some stack held the agent's markers, or its
					    * leaf was JIT code */
		uint64_t fp_samples, fp_ns;     /* went on by frame pointer only */
		uint64_t scan_samples, scan_ns; /* with a caller found by scanning the stack */
		uint64_t stop_samples, stop_ns; /* stopped early */
		uint64_t jit_samples, jit_ns;   /* the leaf in JIT code (PROF_FUNC_JIT) */
		uint64_t jit_anon_samples, jit_anon_ns; /* of those, in regions named nowhere */
		struct cpu_unwind_stop {
			const char *place;     /* prof_unwind_stop.place */
			uint32_t cause;        /* enum prof_unwind_cause */
			uint64_t samples, ns;
		} *stops;                  /* by place and cause, ns descending */
		size_t nstops;
	} unwind;
};

/* pstats sort keys (cProfile table), plus "self"/"total" aliases. */
enum cpu_sort {
	CPU_SORT_TOTTIME = 0,    /* "tottime", "time" (default) */
	CPU_SORT_CUMTIME,        /* "cumtime", "cumulative" */
	CPU_SORT_NCALLS,         /* "ncalls", "calls", "pcalls": exact calls of the counted
				  * functions first, then sample counts */
	CPU_SORT_NAME,           /* "name" */
	CPU_SORT_FILENAME,       /* "filename", "file", "module" */
	CPU_SORT_LINE,           /* "line" */
	CPU_SORT_NFL,            /* "nfl": name, file, line */
	CPU_SORT_STDNAME,        /* "stdname": the printed file:line(name) string */
};

/* Aggregate p.  Returns 0 and *out (free with cpu_free), or -ENOMEM.
 * Functions come sorted by CPU_SORT_TOTTIME, lines by self weight. */
int cpu_aggregate(const struct profile *p, struct cpu_profile **out);
void cpu_free(struct cpu_profile *c);

/* Parse a --sort key: returns the enum cpu_sort value, or -1 when key is not
 * a CPU key (it may still be a CUDA table key). */
/* Functions of c with exact call counts (--calls). */
size_t cpu_counted_rows(const struct cpu_profile *c);
int cpu_sort_parse(const char *key);
/* pstats' words for the "Ordered by:" line, e.g. "internal time (tottime)". */
const char *cpu_sort_desc(int key);
/* Reorder c->funcs by key; ties are broken by tottime, then name, so the
 * order is deterministic. */
void cpu_sort(struct cpu_profile *c, const struct profile *p, int key);

/* Below this many samples the report says the numbers cannot be trusted. */
#define CPU_FEW_SAMPLES 50

/* Data-quality lines for the report footer and the JSON "warnings": the
 * loader's warnings, then derived ones (agent disabled, modules without debug
 * info, too few samples, truncated and pc-only stacks, lost samples).  Each is
 * one line saying what happened and what to do.  Returns 0 and a malloc'd
 * array of malloc'd strings (free with cpu_warnings_free), or -ENOMEM. */
int cpu_warnings(const struct profile *p, const struct cpu_profile *c, char ***out, size_t *n);
void cpu_warnings_free(char **w, size_t n);
/* cpu_debuginfo.c: the line about modules without debug info (what to
 * install, the share of samples there), malloc'd into *line; NULL when every
 * module had it.  0, or -ENOMEM. */
int cpu_debuginfo_line(const struct profile *p, const struct cpu_profile *c, char **line);

/* Name of a lost-sample reason as used in reports and JSON keys
 * ("reentrant", "buffer_full", ...); NULL for unused slots. */
const char *cpu_lost_name(unsigned reason);
/* The same for why samples are pc-only and why threads went unsampled. */
const char *cpu_pc_only_name(unsigned reason);
const char *cpu_unsampled_name(unsigned reason);
/* Optimization level in a GCC DW_AT_producer string: 0..3, 10 for -Os/-Og/-Oz,
 * -1 when it records no flags. */
int cpu_producer_opt(const char *producer);
/* The compiler and its version in a DW_AT_producer string, what comes before
 * its first flag (" -"), into buf (trailing blanks dropped, cut to size). */
void cpu_producer_name(const char *producer, char *buf, size_t size);
/* cpu_python.c: c->python from p (0, or -1 out of memory); the JSON key of a
 * reason a Python stack stayed native, NULL for unused slots. */
int cpu_python(const struct profile *p, struct cpu_python *py);
const char *cpu_python_unread_name(unsigned reason);
/* The k-th data-quality line about Python into buf (k from 0): returns the k
 * of the next one, 0 when there is none left. */
int cpu_python_warning(const struct cpu_python *py, int k, char *buf, size_t len);
/* cpu_unwind.c: c->unwind from p (0, or -1 out of memory); the words for a
 * cause ("JIT code", "no CFI", "scan limit") and its JSON value ("jit",
 * "no_cfi", "scan_limit"); the k-th data-quality line about it into buf (k
 * from 0): returns the k of the next one, 0 when there is none left. */
int cpu_unwind(const struct profile *p, struct cpu_unwind *u);
const char *cpu_unwind_cause_words(uint32_t cause);
const char *cpu_unwind_cause_key(uint32_t cause);
int cpu_unwind_warning(const struct cpu_profile *c, int k, char *buf, size_t len);
/* "perf events", "POSIX CPU timers", "perf events and POSIX CPU timers" or "". */
const char *cpu_sampler_mode(const struct cpu_profile *c);

#endif
