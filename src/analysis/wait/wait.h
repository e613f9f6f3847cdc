/*
 * wait.h — the CPU side's "what is this run waiting for?" (docs/waiting.md):
 * what the threads' on-CPU time was spent on (computing, spinning, in the
 * kernel, the allocator, memcpy/memset, the loader), where they were off the
 * CPU and why (--off-cpu), lock contention per lock, the critical thread, the
 * run's parallel efficiency, a verdict and recommendations.  Filled by
 * wait_analyze() from analysis_run for every run with CPU samples or off-CPU
 * stretches; NULL in struct analysis otherwise.  Launcher side only.
 *
 * Every figure is in ns of thread time unless said otherwise; every share is
 * a fraction (0..1) of the denominator its comment names; docs/waiting.md
 * gives each formula.
 */
#ifndef CBN_WAIT_H
#define CBN_WAIT_H

#include <stddef.h>
#include <stdint.h>

#include "cbn_format.h"
#include "profile.h"
#include "rules.h"

/* What on-CPU time was spent on, from each sample's stack (first match wins,
 * in this order: KERNEL, SPIN, STARTUP, ALLOC, MEMCPY, else COMPUTE). */
enum wait_activity {
	WAIT_ACT_COMPUTE = 0,            /* everything else: the program's work */
	WAIT_ACT_SPIN = 1,               /* busy-waiting: PROF_SAMPLE_SPIN leaves, OpenMP
					  * runtimes (libgomp, libiomp5, libomp) at the leaf,
					  * pthread_spin_*, sched_yield loops */
	WAIT_ACT_KERNEL = 2,             /* the kernel's share (PROF_SAMPLE_KERNEL samples) */
	WAIT_ACT_ALLOC = 3,              /* malloc family, operator new/delete, allocator
					  * internals (_int_malloc, tcache, jemalloc, tcmalloc) */
	WAIT_ACT_MEMCPY = 4,             /* memcpy/memmove/memset/bzero and their variants */
	WAIT_ACT_STARTUP = 5,            /* the dynamic loader (ld-linux*), relocation, before
					  * main: stacks with no main frame in the first process
					  * image's start-up */
	WAIT_ACT_N = 6
};

enum wait_verdict {
	WAIT_V_NONE = 0,                 /* too little data for one (under 10 samples) */
	WAIT_V_COMPUTE = 1,              /* compute-bound */
	WAIT_V_SYNC = 2,                 /* synchronization-bound (spin + futex waits) */
	WAIT_V_IO = 3,                   /* I/O-bound (IO + POLL off-CPU) */
	WAIT_V_ALLOC = 4,                /* allocator-bound */
	WAIT_V_STARTUP = 5,              /* start-up-bound (loader, before main) */
	WAIT_V_SERIAL = 6,               /* serial: one thread busy while the others wait */
	WAIT_V_SLEEP = 7,                /* idle: sleeping (waiting for a child process is
					  * the child's work, not idling) */
	WAIT_V_KERNEL = 8,               /* system-bound: most CPU in the kernel */
};

/* One thread. */
struct wait_thread {
	uint32_t thread;                 /* index into prof.threads */
	uint64_t wall_ns;                /* its lifetime, clipped to its process's */
	uint64_t cpu_ns;                 /* sampled on-CPU time (weights x period) */
	uint64_t profiler_ns;            /* sampled on the CPU in the profiler's code (in
					  * no table); 0 in capture windows */
	uint64_t act_ns[WAIT_ACT_N];     /* cpu_ns by activity */
	uint64_t off_ns;                 /* off-CPU time seen (all kinds but RUNQ) */
	uint64_t kind_ns[CBN_OFF_NKINDS]; /* off_ns by kind; [CBN_OFF_RUNQ]: runnable,
					  * not running (not in off_ns) */
	uint64_t lock_wait_ns;           /* of kind_ns[FUTEX]: waiting in a mutex lock */
	uint64_t held_for_ns;            /* others' lock waits while this thread was the
					  * owner read at the futex */
	double busy;                     /* (cpu_ns - act_ns[SPIN]) / wall_ns */
};

/*
 * A place where threads were off the CPU: the call site (the innermost frame
 * outside the system libraries — libc, libpthread, ld-linux, libgomp, libstdc++,
 * libgcc_s, the vDSO, ...: wait_class.c's one list; the innermost frame when all
 * are) and the blocking call made from it (the outermost system-library frame
 * below the site).
 */
struct wait_site {
	uint32_t func;                   /* prof.funcs index of the call site, PROF_NONE */
	const char *file;                /* its source file, "" */
	uint32_t line;                   /* its line, 0 */
	uint32_t call;                   /* prof.funcs index of the blocking call, PROF_NONE */
	uint32_t kind;                   /* enum cbn_offcpu_kind holding most of ns */
	uint64_t ns;                     /* off-CPU time there */
	uint64_t kind_ns[CBN_OFF_NKINDS];
	uint32_t nthreads;               /* distinct threads that waited there */
	uint32_t stack;                  /* the heaviest stack there (prof.stacks), PROF_NONE */
};

/* A contended mutex: futex waits whose stack is in a mutex lock
 * (pthread_mutex_lock, __lll_lock_wait, std::mutex::lock, ...), by futex word. */
struct wait_lock {
	uint64_t addr;                   /* the mutex's address in its process */
	uint32_t process;
	uint32_t func;                   /* call site taking it (the heaviest), PROF_NONE */
	const char *file;
	uint32_t line;
	uint64_t wait_ns;                /* time threads waited for it, summed */
	uint64_t contended_ns;           /* union of those waits over time: a lower bound
					  * of the time it was held */
	uint32_t waiters;                /* distinct waiting threads */
	uint32_t holder;                 /* prof.threads index of the owner read most often
					  * (by wait time), PROF_NONE when unknown */
	double holder_share;             /* of wait_ns, while holder owned it */
	uint32_t stack;                  /* the heaviest waiting stack, PROF_NONE */
};

/* A function in the wall-clock view: on- and off-CPU time of the stacks it is
 * in (total) and of those where it is the leaf (self). */
struct wait_func {
	uint32_t func;                   /* prof.funcs index */
	uint64_t self_on, self_off, total_on, total_off;
};

/* One off-CPU stretch (prof_offcpu) as a writer draws it: a trace slice
 * "off-CPU futex: pthread_mutex_lock", a pprof sample. */
struct wait_stretch {
	uint64_t start, end;             /* CLOCK_MONOTONIC ns of its process */
	uint64_t weight_ns;              /* the time it stands for */
	uint64_t addr;                   /* futex word / fd argument, 0 */
	uint32_t process, thread;        /* prof.processes, prof.threads indexes */
	uint32_t stack;                  /* prof.stacks index, PROF_NONE */
	uint32_t kind;                   /* enum cbn_offcpu_kind, as recorded */
	int32_t syscall;                 /* number, -1 outside one, -2 RUNQ */
	uint32_t site;                   /* prof.funcs index of its call site (as
					  * struct wait_site's), PROF_NONE without a stack */
	uint32_t call;                   /* prof.funcs index of the call it is named
					  * after: the blocking call, or the leaf when the
					  * leaf is the program's; PROF_NONE */
	uint32_t holder;                 /* a futex wait in a call named "...lock...":
					  * the prof.threads index of the other thread of
					  * the process that owned the lock, else PROF_NONE */
};

struct wait_analysis {
	int offcpu;                      /* 1: off-CPU stretches were recorded (--off-cpu) */
	uint32_t rate_hz;                /* the wall sampler's rate (the root process's) */

	/* overview: every figure covers the span (span.h): the capture windows
	 * when there were any, else the run */
	uint64_t wall_ns;                /* the run's wall (prof.wall_ns) */
	uint64_t span_ns;                /* what the figures cover: the capture windows'
					  * union, else wall_ns */
	int windowed;                    /* 1: only capture windows were recorded */
	uint64_t thread_ns;              /* sum of wait_thread.wall_ns */
	uint64_t cpu_ns;                 /* sum of wait_thread.cpu_ns */
	uint64_t act_ns[WAIT_ACT_N];     /* cpu_ns by activity */
	uint64_t off_ns;                 /* off-CPU seen, all threads (RUNQ excluded) */
	uint64_t kind_ns[CBN_OFF_NKINDS];
	uint64_t profiler_ns;            /* on the CPU in the profiler's code on the
					  * program's threads (samples in no table: the
					  * allocation hooks, annotation writes, CUDA
					  * callbacks); 0 in capture windows */
	uint64_t blocked_est_ns;         /* without --off-cpu: thread_ns - cpu_ns -
					  * profiler_ns, clipped at 0 (waiting of unknown
					  * cause, runnable time included); else off_ns */
	uint64_t runq_ns;                /* with --off-cpu: runnable, waiting for a core
					  * (kind_ns[CBN_OFF_RUNQ]); 0 without */
	uint64_t child_ns;               /* with --off-cpu: of off_ns, waiting for child
					  * processes (kind CHILD): their work, not idling */
	uint64_t other_ns;               /* with --off-cpu: thread time that neither the
					  * samples nor the wall sampler saw (between its
					  * looks), so that the shares add up */
	uint32_t threads;                /* threads seen */
	uint32_t busy_threads;           /* threads on the CPU (spin included) for at least
					  * 5 % of the span, or for half their own life and
					  * 20 ms at least (a build's compilers); at least 1 */
	uint32_t busy_at_once;           /* the most busy threads alive at one time, at
					  * least 1: a build's 25 compilers ran 2 at a time */
	uint32_t cpus;                   /* the machine's CPUs (session.json), 0 unknown */
	uint32_t usable;                 /* what the run could keep busy: busy_at_once,
					  * at most cpus */
	double cores_used;               /* cpu_ns / span_ns: CPUs in use on average */
	double efficiency;               /* parallel efficiency:
					  * (cpu_ns - act_ns[SPIN]) / (span_ns x usable) */
	/* Shares of thread time; they add up to 1: the activities, the
	 * profiler, blocked, runnable and other, over share_ns = the larger of
	 * thread_ns and their sum (samples and looks may see a little more
	 * than the clocks). */
	uint64_t share_ns;
	double cpu_share[WAIT_ACT_N];    /* act_ns / share_ns */
	double blocked_share;            /* (blocked_est_ns - child_ns) / share_ns */
	double child_share;              /* child_ns / share_ns */
	double runq_share;               /* runq_ns / share_ns */
	double other_share;              /* other_ns / share_ns */
	double profiler_share;           /* profiler_ns / share_ns */
	double of_cpu[WAIT_ACT_N];       /* act_ns / cpu_ns: the same figure as the
					  * header's kernel share (of CPU) */

	struct wait_stretch *stretches;  /* one per off-CPU record, in the profile's order */
	size_t nstretches;
	struct wait_thread *threads_v;   /* by cpu_ns, most first */
	size_t nthreads_v;
	struct wait_site *sites;         /* by ns, most first; off-CPU only */
	size_t nsites;
	struct wait_lock *locks;         /* by wait_ns, most first; off-CPU only */
	size_t nlocks;
	struct wait_func *funcs;         /* wall view: by total_on + total_off, most first;
					  * the process and thread entry frames every stack
					  * starts with (_start, __libc_start_main,
					  * start_thread, clone3) left out */
	size_t nfuncs;
	uint32_t nentry_funcs;           /* those left out */

	/* the critical thread: the one that most often ran alone while others
	 * waited (off-CPU, or spinning); PROF_NONE when none stands out */
	uint32_t critical;
	double critical_share;           /* of the others' waiting time, the part spent
					  * while it alone was busy */
	uint32_t critical_waiters;       /* threads that waited on it (most at once) */

	/* runnable time that other programs on the machine caused: the run never
	 * had more busy threads at once than CPUs (the runnable rule fires only
	 * when it had); NULL when runnable time was under R_RUNQ or not recorded */
	char *load_note;                 /* a data-quality line (owned) */

	/* the verdict's population (the busy threads): shares of their time on
	 * the CPU and blocked off it (waiting for children left out) */
	double busy_on_share, busy_off_share;

	int verdict;                     /* enum wait_verdict */
	char *verdict_text;              /* "synchronization-bound: 38 % of thread time
					  * spinning in libgomp" (owned), NULL with WAIT_V_NONE */
	struct rule_finding *findings;   /* the CPU rules (rules.h) that fired */
	size_t nfindings;
};

/* Analyse p's CPU waiting.  *out NULL when p has neither samples nor off-CPU
 * stretches.  0, or -ENOMEM with *out NULL. */
int wait_analyze(const struct profile *p, struct wait_analysis **out);
void wait_free(struct wait_analysis *w);

/* "parallel efficiency 92 % on 2 busy threads at once (25 in all)": the
 * efficiency and what it divides by, in the words of every verdict. */
const char *wait_efficiency_words(const struct wait_analysis *w, char *buf, size_t len);

/* wait_names.c: names used by every writer (static strings). */
const char *wait_activity_name(int act);   /* "compute", "spin", "kernel", "allocator",
					    * "memcpy/memset", "start-up" */
const char *wait_kind_name(int kind);      /* "other", "futex", "io", "poll", "sleep",
					    * "child", "fault", "runnable" */
const char *wait_verdict_name(int verdict); /* "compute-bound", "synchronization-bound",
					     * "I/O-bound", "allocator-bound",
					     * "start-up-bound", "serial", "idle",
					     * "system-bound", "" */

#endif
