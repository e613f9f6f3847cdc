/*
 * wait_int.h — what wait.c hands the CPU verdict and rules (wait_rules.c):
 * the figures of wait_analysis restricted to the threads that did the work,
 * and the evidence the rules quote that wait_analysis does not keep.
 * Private to the wait analysis.  Launcher side only.
 */
#ifndef CBN_WAIT_INT_H
#define CBN_WAIT_INT_H

#include "wait.h"

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

/* Decide w->verdict and w->verdict_text, and run the CPU rules into
 * w->findings.  0, or -ENOMEM. */
int wait_rules_run(const struct wait_ctx *c, struct wait_analysis *w);

#endif
