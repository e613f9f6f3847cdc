/*
 * wait_int.h — internals of the wait analysis (wait*.c): what a function
 * and a sample are (wait_class.c), the parts wait.c builds the result from,
 * and what it hands the CPU verdict and rules (wait_rules.c): the figures
 * of wait_analysis restricted to the threads that did the work, and the
 * evidence the rules quote that wait_analysis does not keep.  Launcher side
 * only.
 */
#ifndef CBN_WAIT_INT_H
#define CBN_WAIT_INT_H

#include <stdint.h>
#include <string.h>

#include "stackw.h"
#include "wait.h"

/* What a function is (wait_class.c, wait_classify): flags. */
#define FC_SYS 0x01      /* a system library: not a call site of the program */
#define FC_OMP 0x02      /* an OpenMP runtime */
#define FC_LDSO 0x04     /* the dynamic loader */
#define FC_ALLOC 0x08    /* the allocator */
#define FC_MEMCPY 0x10   /* memcpy, memset and friends */
#define FC_SPIN 0x20     /* spins by design: pthread_spin_lock, sched_yield */
#define FC_MAIN 0x40     /* main */
#define FC_MUTEX 0x80    /* taking a mutex: a futex wait under it is lock contention */

/*
 * What a stack's on-CPU time is, without the sample's flags and time
 * (wait_stack_act):
 * SPIN (OpenMP runtime or spinning function at the leaf), STARTUP (the loader
 * at the leaf), ALLOC / MEMCPY (the leaf, or a frame of the system-library
 * run at the leaf, is the allocator / a copy: memcpy inside realloc is the
 * allocator's), else COMPUTE.  Bit 0x80: the stack has a main frame.
 */
#define ACT_HAS_MAIN 0x80

static inline uint16_t wait_cls_of(const uint16_t *cls, const struct profile *p, uint32_t func)
{
	return func < p->nfuncs ? cls[func] : 0;
}

static inline int wait_cmp_u64_desc(uint64_t a, uint64_t b)
{
	return a > b ? -1 : a < b;
}

static inline int wait_cmp_str(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

struct wait_ctx {
	const struct profile *p;
	const struct wait_analysis *w;
	uint64_t samples;                /* sample records (split kernel shares not counted) */

	/*
	 * The verdict's population: the busy threads (wait.h's busy_threads
	 * rule), or every thread when none is busy.  A helper thread asleep
	 * for the whole run (a watchdog, a logger, an idle pool) would
	 * otherwise make any program look idle or serial.
	 */
	uint32_t v_threads;
	uint64_t v_thread_ns, v_cpu_ns, v_act_ns[WAIT_ACT_N], v_kind_ns[CBN_OFF_NKINDS];
	uint64_t v_blocked_ns;           /* off-CPU seen, or without --off-cpu thread - cpu */

	/* spin in an OpenMP runtime (leaf frame in libgomp/libiomp5/libomp), and
	 * the user frame under those frames that spun most (PROF_NONE: none) */
	uint64_t omp_spin_ns;
	const char *omp_module;
	uint32_t omp_func, omp_line;
	const char *omp_file;
	/* other spin (PAUSE loops, pthread spinlocks, sched_yield): its heaviest
	 * leaf function, PROF_NONE */
	uint32_t spin_leaf;

	/* the critical thread's credit and what it is measured against */
	uint64_t critical_credit;        /* others' waiting while it alone computed */
	uint64_t critical_others_wall;   /* the other threads of its process: lifetime */
};

/* wait_class.c: the FC_* flags of function f; [*s, *e) of process pi (its start
 * and end, else the run's) and of thread t (its lifetime clipped to its
 * process's); the call site of a waiting stack (wait.h: the innermost frame
 * outside the system libraries, the leaf when all are) and in *call the
 * outermost system frame below it (the blocking call, PROF_NONE when none);
 * whether stack st takes a mutex; a stack's activity (ACT_HAS_MAIN added)
 * and a sample's (wait.h's order; first_main: per process, when main first
 * ran). */
uint16_t wait_classify(const struct prof_func *f);
void wait_proc_span(const struct profile *p, uint32_t pi, uint64_t *s, uint64_t *e);
void wait_thread_span(const struct profile *p, uint32_t t, uint64_t *s, uint64_t *e);
const struct prof_frame *wait_site_of(const struct profile *p, const uint16_t *cls,
				      const struct prof_frame *fr, uint32_t n, uint32_t *call);
int wait_in_mutex(const struct profile *p, const uint16_t *cls, uint32_t st);
uint8_t wait_stack_act(const struct profile *p, const uint16_t *cls, uint32_t st);
int wait_sample_act(const struct profile *p, const struct prof_sample *s, const uint8_t *sact,
		    const uint64_t *first_main);

/* wait_sites.c: w's call sites of the waits, its contended locks (is_lock:
 * per off-CPU record, a futex wait under a mutex), its wall-clock view per
 * function (on, off: ns per stack).  0, or -ENOMEM. */
int wait_build_sites(const struct profile *p, const uint16_t *cls, struct wait_analysis *w);
int wait_build_locks(const struct profile *p, const uint16_t *cls, const uint8_t *is_lock,
		     struct wait_analysis *w);
int wait_build_funcs(const struct profile *p, const uint64_t *on, const uint64_t *off,
		     struct wait_analysis *w);
/* wait_stretch.c: w's stretches, one per off-CPU record.  0 or -ENOMEM. */
int wait_build_stretches(const struct profile *p, const uint16_t *cls, struct wait_analysis *w);

/* wait_crit.c: the critical thread (act: each sample's activity) into w and
 * its credit into ctx.  0, or -ENOMEM. */
int wait_critical_thread(const struct profile *p, struct wait_analysis *w, const uint8_t *act,
			 struct wait_ctx *ctx);

/* Decide w->verdict and w->verdict_text, and run the CPU rules into
 * w->findings.  0, or -ENOMEM. */
int wait_rules_run(const struct wait_ctx *c, struct wait_analysis *w);

#endif
