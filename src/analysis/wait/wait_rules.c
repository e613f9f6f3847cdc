/*
 * wait_rules.c — the CPU verdict and the CPU recommendations: one test per
 * rule over the wait analysis (wait.h) and the table wait_rules[] (at the
 * end) that gives each its id, advice and order in the report.  Every
 * threshold is here, named, and in docs/waiting.md ("Formulas: overview,
 * efficiency, shares, verdict").  Findings land in wait_analysis.findings.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#include "wait_int.h"

/* The verdict: a waiting category wins when it takes this share of the busy
 * threads' time (the largest that does), else an overhead category when it
 * takes this share of their CPU, else compute-bound. */
#define V_SYNC 0.15      /* spin + futex: a sixth of the threads' time lost to waiting on each other */
#define V_IO 0.25        /* io + poll */
#define V_SLEEP 0.50     /* sleep: waiting on purpose, so only when it is most; waiting
			  * for a child process is the child's work, in the child's rows */
#define V_ALLOC 0.30     /* of CPU in the allocator */
#define V_STARTUP 0.50   /* of CPU in the loader / before main */
#define V_KERNEL 0.50    /* of CPU in the kernel */
#define V_SERIAL 0.50    /* serial: the others waited this share of their lifetime while the
			  * critical thread alone computed */

/* The rules (shares of the same denominators). */
#define R_SERIAL V_SERIAL /* with the verdict: less is an imbalance that the
				  * spin and lock rules name better */
#define R_LOCK_RUN 0.10  /* a lock contended this share of the wall ... */
#define R_LOCK_WAIT 0.10 /* ... or waited for this share of the busy threads' time */
#define R_OMP_SPIN 0.10
#define R_SPIN 0.10
#define R_IO 0.20
#define R_SLEEP 0.25
#define R_RUNQ 0.10
#define R_ALLOC 0.10
#define R_MEMCPY 0.15
#define R_KERNEL 0.30
#define R_STARTUP 0.20
#define R_STARTUP_NS 50000000ull /* ... and at least 50 ms: every program has some */
#define R_UNKNOWN 0.25   /* without --off-cpu: off the CPU, cause unknown */


static double share(uint64_t part, uint64_t whole)
{
	return whole ? (double)part / (double)whole : 0.0;
}

static const char *func_name(const struct profile *p, uint32_t f)
{
	return f < p->nfuncs && p->funcs[f].name ? p->funcs[f].name : "?";
}

/* "worker (tid 1234)", "tid 1234" */
static char *thread_str(char *buf, size_t len, const struct profile *p, uint32_t t)
{
	if (t >= p->nthreads)
		snprintf(buf, len, "[unknown thread]");
	else if (p->threads[t].name && *p->threads[t].name)
		snprintf(buf, len, "%s (tid %u)", p->threads[t].name, p->threads[t].tid);
	else
		snprintf(buf, len, "tid %u", p->threads[t].tid);
	return buf;
}

/* "file:line (func)", "func", "[no stack]" */
static char *site_str(char *buf, size_t len, const struct profile *p, uint32_t func,
		      const char *file, uint32_t line)
{
	if (func >= p->nfuncs)
		snprintf(buf, len, "[no stack]");
	else if (file && *file && line && !(p->funcs[func].flags & PROF_FUNC_NOSYM))
		snprintf(buf, len, "%s:%u (%s)", file, line, func_name(p, func));
	else
		snprintf(buf, len, "%s", func_name(p, func));
	return buf;
}

/* Shares of the verdict's population. */
static double v_sync(const struct wait_ctx *c)
{
	return share(c->v_act_ns[WAIT_ACT_SPIN] + c->v_kind_ns[CBN_OFF_FUTEX], c->v_thread_ns);
}

static double v_io(const struct wait_ctx *c)
{
	return share(c->v_kind_ns[CBN_OFF_IO] + c->v_kind_ns[CBN_OFF_POLL], c->v_thread_ns);
}

static double v_sleep(const struct wait_ctx *c)
{
	return share(c->v_kind_ns[CBN_OFF_SLEEP], c->v_thread_ns);
}

static double v_cpu(const struct wait_ctx *c, int act)
{
	return share(c->v_act_ns[act], c->v_cpu_ns);
}

/* Lock waits of every thread, busy or not, over all thread time: threads
 * that spend their life queued on a lock are not busy, so the busy-only
 * shares would miss exactly them (examples/wait_lock: two of three workers
 * queued behind one holder read "compute-bound"). */
static double lock_share(const struct wait_ctx *c)
{
	uint64_t ns = 0;
	size_t i;

	for (i = 0; i < c->w->nthreads_v; i++)
		ns += c->w->threads_v[i].lock_wait_ns;
	return share(ns, c->w->thread_ns);
}

static double serial_share(const struct wait_ctx *c)
{
	if (c->w->critical == PROF_NONE || c->w->busy_threads < 2)
		return 0.0;
	return share(c->critical_credit, c->critical_others_wall);
}

static int decide(const struct wait_ctx *c)
{
	const struct { int v; double s, min; } wait[] = {
		{ WAIT_V_SYNC, v_sync(c), V_SYNC },
		{ WAIT_V_IO, v_io(c), V_IO },
		{ WAIT_V_SLEEP, v_sleep(c), V_SLEEP },
	}, cpu[] = {
		{ WAIT_V_ALLOC, v_cpu(c, WAIT_ACT_ALLOC), V_ALLOC },
		{ WAIT_V_STARTUP, v_cpu(c, WAIT_ACT_STARTUP), V_STARTUP },
		{ WAIT_V_KERNEL, v_cpu(c, WAIT_ACT_KERNEL), V_KERNEL },
	};
	int v = WAIT_V_NONE;
	double best = 0;
	size_t i;

	if (c->samples < 10 && !c->p->noffcpu)
		return WAIT_V_NONE;
	if (serial_share(c) >= V_SERIAL)
		return WAIT_V_SERIAL;
	if (c->w->nlocks && lock_share(c) >= V_SYNC)
		return WAIT_V_SYNC;
	for (i = 0; i < sizeof(wait) / sizeof(wait[0]); i++)
		if (wait[i].s >= wait[i].min && wait[i].s > best) {
			best = wait[i].s;
			v = wait[i].v;
		}
	if (v != WAIT_V_NONE)
		return v;
	for (i = 0; i < sizeof(cpu) / sizeof(cpu[0]); i++)
		if (cpu[i].s >= cpu[i].min && cpu[i].s > best) {
			best = cpu[i].s;
			v = cpu[i].v;
		}
	return v != WAIT_V_NONE ? v : WAIT_V_COMPUTE;
}

/* "<verdict>: <the evidence>" */
static char *verdict_text(const struct wait_ctx *c, int v)
{
	const struct wait_analysis *w = c->w;
	const struct profile *p = c->p;
	char ev[1200], b1[160], tail[160] = "";
	char *s = NULL;

	switch (v) {
	case WAIT_V_SERIAL:
		snprintf(ev, sizeof(ev),
			 "thread %s ran alone while up to %u others waited: %.0f %% of their "
			 "lifetime (parallel efficiency %.0f %% on %u busy threads)",
			 thread_str(b1, sizeof(b1), p, w->critical), w->critical_waiters,
			 100 * serial_share(c), 100 * w->efficiency, w->busy_threads);
		break;
	case WAIT_V_SYNC: {
		char b2[512], lock[600] = "";

		if (w->nlocks)
			snprintf(lock, sizeof(lock), "; most contended lock at %s",
				 site_str(b2, sizeof(b2), p, w->locks[0].func, w->locks[0].file,
					  w->locks[0].line));
		/* the figure that decided it first: queued on locks (threads
		 * too blocked to be busy), or the busy threads' waiting */
		if (w->nlocks && lock_share(c) >= V_SYNC && v_sync(c) < V_SYNC) {
			snprintf(ev, sizeof(ev), "%.0f %% of all threads' time queued on locks%s",
				 100 * lock_share(c), lock);
			break;
		}
		{
			double spin = share(c->v_act_ns[WAIT_ACT_SPIN], c->v_thread_ns);
			double fut = share(c->v_kind_ns[CBN_OFF_FUTEX], c->v_thread_ns);
			size_t n = (size_t)snprintf(ev, sizeof(ev), "%.0f %% of the busy threads' time "
						    "waiting on each other", 100 * v_sync(c));

			if (spin >= 0.005 && fut >= 0.005)
				n += (size_t)snprintf(ev + n, sizeof(ev) - n, ", %.0f %% spinning and "
						      "%.0f %% in futex waits", 100 * spin, 100 * fut);
			else
				n += (size_t)snprintf(ev + n, sizeof(ev) - n, ", %s",
						      spin >= 0.005 ? "spinning" : "in futex waits");
			if (c->omp_spin_ns && n < sizeof(ev))
				n += (size_t)snprintf(ev + n, sizeof(ev) - n, " (spinning in %s)",
						      c->omp_module ? c->omp_module
								    : "the OpenMP runtime");
			if (lock_share(c) >= 0.01 && n < sizeof(ev))
				n += (size_t)snprintf(ev + n, sizeof(ev) - n, "; %.0f %% of all "
						      "threads' time queued on locks",
						      100 * lock_share(c));
			if (n < sizeof(ev))
				snprintf(ev + n, sizeof(ev) - n, "%s", lock);
		}
		break;
	}
	case WAIT_V_IO:
		snprintf(ev, sizeof(ev),
			 "%.0f %% of the busy threads' time blocked in I/O (read/write %.0f %%, "
			 "poll/select %.0f %%)",
			 100 * v_io(c), 100 * share(c->v_kind_ns[CBN_OFF_IO], c->v_thread_ns),
			 100 * share(c->v_kind_ns[CBN_OFF_POLL], c->v_thread_ns));
		break;
	case WAIT_V_SLEEP:
		snprintf(ev, sizeof(ev), "%.0f %% of the busy threads' time sleeping",
			 100 * v_sleep(c));
		break;
	case WAIT_V_ALLOC:
		snprintf(ev, sizeof(ev), "%.0f %% of CPU in the allocator",
			 100 * v_cpu(c, WAIT_ACT_ALLOC));
		break;
	case WAIT_V_STARTUP:
		snprintf(ev, sizeof(ev), "%.0f %% of CPU in the dynamic loader and before main",
			 100 * v_cpu(c, WAIT_ACT_STARTUP));
		break;
	case WAIT_V_KERNEL:
		snprintf(ev, sizeof(ev), "%.0f %% of CPU in the kernel",
			 100 * v_cpu(c, WAIT_ACT_KERNEL));
		break;
	default:
		snprintf(ev, sizeof(ev), "%.0f %% of the busy threads' time computing, %s",
			 100 * share(c->v_act_ns[WAIT_ACT_COMPUTE], c->v_thread_ns),
			 wait_efficiency_words(w, b1, sizeof(b1)));
		break;
	}
	if (!w->offcpu && share(c->v_blocked_ns, c->v_thread_ns) >= R_UNKNOWN)
		snprintf(tail, sizeof(tail),
			 "; the threads were off the CPU %.0f %% of their time, for reasons only "
			 "--off-cpu records",
			 100 * share(c->v_blocked_ns, c->v_thread_ns));
	if (asprintf(&s, "%s: %s%s", wait_verdict_name(v), ev, tail) < 0)
		return NULL;
	return s;
}

const char *wait_efficiency_words(const struct wait_analysis *w, char *buf, size_t len)
{
	if (w->usable < w->busy_at_once)
		/* more busy threads at once than CPUs: the CPUs are the limit */
		snprintf(buf, len, "parallel efficiency %.0f %% of %u CPU%s (%u busy thread%s, up "
			 "to %u at once)", 100 * w->efficiency, w->usable, w->usable == 1 ? "" : "s",
			 w->busy_threads, w->busy_threads == 1 ? "" : "s", w->busy_at_once);
	else if (w->busy_at_once < w->busy_threads)
		/* threads that ran one after another (a build's compilers):
		 * what they could use is what ran at once */
		snprintf(buf, len, "parallel efficiency %.0f %% on %u busy thread%s at once (%u in "
			 "all)", 100 * w->efficiency, w->usable, w->usable == 1 ? "" : "s",
			 w->busy_threads);
	else
		snprintf(buf, len, "parallel efficiency %.0f %% on %u busy thread%s",
			 100 * w->efficiency, w->busy_threads, w->busy_threads == 1 ? "" : "s");
	return buf;
}

/* --- the rules ------------------------------------------------------------------ */

static int serial(const void *ctx, struct rules_pass *pass)
{
	const struct wait_ctx *c = ctx;
	char b1[64], b2[32];

	if (serial_share(c) < R_SERIAL)
		return 0;
	return rules_fire(pass,
			  "one thread busy while %u wait: %s ran alone while the other threads of "
			  "its process waited %s, %.0f %% of their lifetime (%.0f %% of all their "
			  "waiting); parallel efficiency %.0f %% on %u busy threads",
			  c->w->critical_waiters, thread_str(b1, sizeof(b1), c->p, c->w->critical),
			  util_fmt_dur(b2, sizeof(b2), (double)c->critical_credit), 100 * serial_share(c),
			  100 * c->w->critical_share, 100 * c->w->efficiency, c->w->busy_threads);
}

static int lock_contention(const void *ctx, struct rules_pass *pass)
{
	const struct wait_ctx *c = ctx;
	const struct wait_analysis *w = c->w;
	size_t i;
	int ret = 0;

	for (i = 0; i < w->nlocks && ret == 0; i++) {
		const struct wait_lock *l = &w->locks[i];
		char b1[64], b2[64], b3[64], b4[512], holder[160] = "";

		if (share(l->contended_ns, w->span_ns) < R_LOCK_RUN &&
		    share(l->wait_ns, c->v_thread_ns) < R_LOCK_WAIT)
			continue;
		if (l->holder != PROF_NONE)
			snprintf(holder, sizeof(holder), "; holder thread %s (owned it during %.0f %% "
				 "of the waits)", thread_str(b3, sizeof(b3), c->p, l->holder),
				 100 * l->holder_share);
		ret = rules_fire(pass,
				 "one lock (0x%llx, site %s) contended %.0f %% of the run (%s); %u "
				 "thread%s waited %s for it in all%s",
				 (unsigned long long)l->addr,
				 site_str(b4, sizeof(b4), c->p, l->func, l->file, l->line),
				 100 * share(l->contended_ns, w->span_ns),
				 util_fmt_dur(b1, sizeof(b1), (double)l->contended_ns), l->waiters,
				 l->waiters == 1 ? "" : "s", util_fmt_dur(b2, sizeof(b2), (double)l->wait_ns),
				 holder);
	}
	return ret;
}

static int omp_spin(const void *ctx, struct rules_pass *pass)
{
	const struct wait_ctx *c = ctx;
	const struct wait_analysis *w = c->w;
	char b1[64], b2[64], b3[512], at[560] = "";

	if (share(c->omp_spin_ns, w->cpu_ns) < R_OMP_SPIN)
		return 0;
	if (c->omp_func != PROF_NONE)
		snprintf(at, sizeof(at), "; the loop whose threads wait most: %s",
			 site_str(b3, sizeof(b3), c->p, c->omp_func, c->omp_file, c->omp_line));
	return rules_fire(pass, "%.0f %% of CPU (%s of %s) in %s barrier spin%s",
			  100 * share(c->omp_spin_ns, w->cpu_ns),
			  util_fmt_dur(b1, sizeof(b1), (double)c->omp_spin_ns),
			  util_fmt_dur(b2, sizeof(b2), (double)w->cpu_ns),
			  c->omp_module ? c->omp_module : "the OpenMP runtime's", at);
}

static int spin_wait(const void *ctx, struct rules_pass *pass)
{
	const struct wait_ctx *c = ctx;
	const struct wait_analysis *w = c->w;
	uint64_t spin = w->act_ns[WAIT_ACT_SPIN];
	uint64_t other = spin > c->omp_spin_ns ? spin - c->omp_spin_ns : 0;
	char b1[64];

	if (share(other, w->cpu_ns) < R_SPIN)
		return 0;
	return rules_fire(pass, "%.0f %% of CPU (%s) busy-waiting outside an OpenMP runtime%s%s",
			  100 * share(other, w->cpu_ns), util_fmt_dur(b1, sizeof(b1), (double)other),
			  c->spin_leaf != PROF_NONE ? ", most in " : "",
			  c->spin_leaf != PROF_NONE ? func_name(c->p, c->spin_leaf) : "");
}

/* The heaviest site whose main kind is one of k1, k2. */
static const struct wait_site *top_site(const struct wait_analysis *w, uint32_t k1, uint32_t k2)
{
	size_t i;

	for (i = 0; i < w->nsites; i++)
		if (w->sites[i].kind == k1 || w->sites[i].kind == k2)
			return &w->sites[i];
	return NULL;
}

static int io_wait(const void *ctx, struct rules_pass *pass)
{
	const struct wait_ctx *c = ctx;
	const struct wait_site *s = top_site(c->w, CBN_OFF_IO, CBN_OFF_POLL);
	char b1[64], b2[512], at[600] = "";

	if (v_io(c) < R_IO)
		return 0;
	if (s)
		snprintf(at, sizeof(at), "; most at %s%s%s (%s)",
			 site_str(b2, sizeof(b2), c->p, s->func, s->file, s->line),
			 s->call != PROF_NONE ? " in " : "",
			 s->call != PROF_NONE ? func_name(c->p, s->call) : "",
			 util_fmt_dur(b1, sizeof(b1), (double)s->ns));
	return rules_fire(pass,
			  "%.0f %% of the busy threads' time blocked in I/O (read/write %.0f %%, "
			  "poll/select %.0f %%)%s",
			  100 * v_io(c), 100 * share(c->v_kind_ns[CBN_OFF_IO], c->v_thread_ns),
			  100 * share(c->v_kind_ns[CBN_OFF_POLL], c->v_thread_ns), at);
}

static int sleep_rule(const void *ctx, struct rules_pass *pass)
{
	const struct wait_ctx *c = ctx;
	const struct wait_site *s = top_site(c->w, CBN_OFF_SLEEP, CBN_OFF_SLEEP);
	char b2[512], at[600] = "";

	if (v_sleep(c) < R_SLEEP)
		return 0;
	if (s)
		snprintf(at, sizeof(at), "; most at %s",
			 site_str(b2, sizeof(b2), c->p, s->func, s->file, s->line));
	return rules_fire(pass, "%.0f %% of the busy threads' time sleeping%s", 100 * v_sleep(c),
			  at);
}

/* Runnable time is the program's doing only when it ran more busy threads
 * at once than the machine has CPUs; else other programs took the cores. */
static int runq_own(const struct wait_ctx *c)
{
	return c->w->cpus && c->w->busy_at_once > c->w->cpus;
}

static int runnable(const void *ctx, struct rules_pass *pass)
{
	const struct wait_ctx *c = ctx;
	char b1[64], cpus[48] = "";

	if (share(c->v_kind_ns[CBN_OFF_RUNQ], c->v_thread_ns) < R_RUNQ || !runq_own(c))
		return 0;
	if (c->p->env.found && c->p->env.cpus > 0)
		snprintf(cpus, sizeof(cpus), " on %d CPU%s", c->p->env.cpus,
			 c->p->env.cpus == 1 ? "" : "s");
	return rules_fire(pass,
			  "threads were runnable but not running %.0f %% of their time (%s): up to "
			  "%u busy threads at once%s",
			  100 * share(c->v_kind_ns[CBN_OFF_RUNQ], c->v_thread_ns),
			  util_fmt_dur(b1, sizeof(b1), (double)c->v_kind_ns[CBN_OFF_RUNQ]),
			  c->w->busy_at_once, cpus);
}

/* Runnable time the machine's other load caused: a fact about the
 * measurement (a data-quality line), not advice to the program. */
static int load_note(const struct wait_ctx *c, struct wait_analysis *w)
{
	double sh = share(c->v_kind_ns[CBN_OFF_RUNQ], c->v_thread_ns);
	char b1[64], load[64] = "";

	if (sh < R_RUNQ || runq_own(c))
		return 0;
	if (c->p->env.found && c->p->env.load[0] >= 0)
		snprintf(load, sizeof(load), " (load %.2f at start)", c->p->env.load[0]);
	if (asprintf(&w->load_note,
		     "the busy threads waited for a free CPU %.0f %% of their time (%s) although "
		     "the run had at most %u busy thread%s at once on %u CPU%s: other programs "
		     "kept the CPUs busy%s, so wall times are longer than on a quiet machine",
		     100 * sh, util_fmt_dur(b1, sizeof(b1), (double)c->v_kind_ns[CBN_OFF_RUNQ]),
		     w->busy_at_once, w->busy_at_once == 1 ? "" : "s", w->cpus,
		     w->cpus == 1 ? "" : "s", load) < 0) {
		w->load_note = NULL;
		return -ENOMEM;
	}
	return 0;
}

static int cpu_share_rule(const struct wait_ctx *c, struct rules_pass *pass, int act, double min,
			  const char *what)
{
	char b1[64], b2[64];

	if (share(c->w->act_ns[act], c->w->cpu_ns) < min)
		return 0;
	return rules_fire(pass, "%.0f %% of CPU (%s of %s) %s",
			  100 * share(c->w->act_ns[act], c->w->cpu_ns),
			  util_fmt_dur(b1, sizeof(b1), (double)c->w->act_ns[act]),
			  util_fmt_dur(b2, sizeof(b2), (double)c->w->cpu_ns), what);
}

static int alloc_heavy(const void *ctx, struct rules_pass *pass)
{
	return cpu_share_rule(ctx, pass, WAIT_ACT_ALLOC, R_ALLOC,
			      "in the allocator (malloc/free, operator new/delete)");
}

static int memcpy_heavy(const void *ctx, struct rules_pass *pass)
{
	return cpu_share_rule(ctx, pass, WAIT_ACT_MEMCPY, R_MEMCPY, "copying or setting memory");
}

static int kernel_heavy(const void *ctx, struct rules_pass *pass)
{
	return cpu_share_rule(ctx, pass, WAIT_ACT_KERNEL, R_KERNEL, "in the kernel");
}

static int startup_heavy(const void *ctx, struct rules_pass *pass)
{
	const struct wait_ctx *c = ctx;

	if (c->w->act_ns[WAIT_ACT_STARTUP] < R_STARTUP_NS)
		return 0;
	return cpu_share_rule(c, pass, WAIT_ACT_STARTUP, R_STARTUP,
			      "in the dynamic loader and before main");
}

static int blocked_unknown(const void *ctx, struct rules_pass *pass)
{
	const struct wait_ctx *c = ctx;
	char b1[64];

	if (c->w->offcpu || share(c->v_blocked_ns, c->v_thread_ns) < R_UNKNOWN)
		return 0;
	return rules_fire(pass,
			  "the busy threads were off the CPU %.0f %% of their lifetime (%s), and "
			  "without --off-cpu nothing says where",
			  100 * share(c->v_blocked_ns, c->v_thread_ns),
			  util_fmt_dur(b1, sizeof(b1), (double)c->v_blocked_ns));
}

static const struct rule wait_rules[] = {
	{ "serial", serial,
	  "Most of the time one thread works while the others wait for it: parallelize the "
	  "part it runs alone (the critical thread's heaviest functions in the wall-clock "
	  "view), or overlap it with the others' work; adding threads will not help.", 1 },
	{ "lock-contention", lock_contention,
	  "Threads queue for this lock: hold it for less (move work out of the critical "
	  "section), split it (one lock per shard or per object), or replace it (atomics, "
	  "per-thread data merged at the end, a reader-writer lock for read-mostly data).", 3 },
	{ "omp-spin", omp_spin,
	  "OpenMP threads busy-wait at barriers instead of working: balance the loop named in "
	  "the evidence (schedule(dynamic) or schedule(guided), or split the work more "
	  "evenly), and set OMP_WAIT_POLICY=passive so that waiting threads sleep and free "
	  "their cores.", 1 },
	{ "spin-wait", spin_wait,
	  "Threads busy-wait (spin locks, sched_yield loops, PAUSE loops): the CPU they burn "
	  "does no work and takes cores from the threads that do; block instead (a mutex or a "
	  "condition variable), or spin briefly before blocking.", 1 },
	{ "io-wait", io_wait,
	  "Threads wait for I/O: read and write in larger blocks, overlap I/O with compute "
	  "(a reader thread, asynchronous I/O, io_uring), or prefetch/cache the data.", 1 },
	{ "sleep", sleep_rule,
	  "Threads spend much of the run sleeping: check that the sleeps and polling "
	  "intervals are needed, and wait on an event instead of sleeping in a loop.", 1 },
	{ "runnable", runnable,
	  "The program runs more busy threads at once than the machine has cores, so they "
	  "queue for them: run at most one busy thread per core (OMP_NUM_THREADS, the "
	  "thread-pool size, make -j).", 1 },
	{ "alloc-heavy", alloc_heavy,
	  "Much CPU goes to allocating and freeing: reuse buffers, allocate once outside the "
	  "loops, use arenas or pools for small objects, or a faster allocator (jemalloc, "
	  "tcmalloc, mimalloc).", 1 },
	{ "memcpy-heavy", memcpy_heavy,
	  "Much CPU goes to copying or clearing memory: pass pointers or views instead of "
	  "copies, move instead of copy (C++), and avoid clearing buffers that are fully "
	  "overwritten.", 1 },
	{ "kernel-heavy", kernel_heavy,
	  "Much CPU is spent in the kernel: make fewer, larger system calls (batch reads and "
	  "writes, avoid tiny syscalls in loops), and look at page faults (pre-touch or reuse "
	  "memory, huge pages).", 1 },
	{ "startup-heavy", startup_heavy,
	  "Much CPU is spent before main: load fewer or smaller shared libraries, bind "
	  "lazily (no LD_BIND_NOW or -Wl,-z,now when most symbols go unused), do less work in "
	  "static constructors; for a short run, profile a longer workload.", 1 },
	{ "blocked-unknown", blocked_unknown,
	  "The threads were often off the CPU and this run did not record why: rerun with "
	  "--off-cpu to see where they blocked (locks, I/O, sleeps) and for how long.", 1 },
};

int wait_rules_run(const struct wait_ctx *c, struct wait_analysis *w)
{
	struct rule_hit *hits = NULL;
	size_t nhits = 0;
	int ret;

	w->busy_on_share = share(c->v_cpu_ns, c->v_thread_ns);
	w->busy_off_share = share(c->v_blocked_ns > c->v_kind_ns[CBN_OFF_CHILD]
					  ? c->v_blocked_ns - c->v_kind_ns[CBN_OFF_CHILD] : 0,
				  c->v_thread_ns);
	w->verdict = decide(c);
	if (w->verdict != WAIT_V_NONE && !(w->verdict_text = verdict_text(c, w->verdict)))
		return -ENOMEM;
	if (load_note(c, w) < 0)
		return -ENOMEM;
	if ((ret = rules_run(wait_rules, sizeof(wait_rules) / sizeof(wait_rules[0]), c, &hits,
			     &nhits)) < 0)
		return ret;
	return rules_keep(hits, nhits, &w->findings, &w->nfindings);
}
