/*
 * test_wait.c — the wait analysis (analysis/wait/wait.c, wait_rules.c) on
 * hand-built profiles with known numbers: activities of on-CPU time, OpenMP
 * barrier spin, a contended lock with its holder, a serial run and its
 * critical thread (with and without off-CPU data), an I/O-bound run, the
 * efficiency formula, the wall-clock view, too little data, and what a
 * function is by its name.
 */
#include <math.h>

#include "wait.h"
#include "wait_int.h"
#include "test_cpu_builder.h"
#include "testlib.h"

#define MS 1000000ull
#define T0 1000000000ull   /* the run starts at 1 s (CLOCK_MONOTONIC) */

/* A one-process run of wall_ms at a 1 ms period, the process from T0. */
static void run_init(struct pb *b, uint64_t wall_ms)
{
	uint32_t pr;

	pb_init(b, MS, "./prog");
	b->p.wall_ns = wall_ms * MS;
	b->p.start_ns = T0;
	pr = pb_process(b, 100, 1, "/bin/prog", "./prog", MS);
	b->p.processes[pr].start = T0;
	b->p.processes[pr].end = T0 + wall_ms * MS;
}

/* One 1 ms sample each ms of [from_ms, to_ms) on thread t. */
static void samples_at(struct pb *b, uint32_t t, uint32_t st, uint64_t from_ms, uint64_t to_ms,
		       uint32_t flags)
{
	uint64_t ms;

	for (ms = from_ms; ms < to_ms; ms++) {
		struct prof_sample *s = PB_PUSH(b, samples, nsamples);

		s->ts = T0 + ms * MS + MS / 2;
		s->stack = st;
		s->thread = t;
		s->weight = 1;
		s->flags = flags;
		b->p.threads[t].weight++;
		b->p.processes[b->p.threads[t].process].samples++;
	}
}

/* An off-CPU stretch of thread t over [from_ms, to_ms). */
static void off_at(struct pb *b, uint32_t t, uint32_t st, uint32_t kind, uint64_t from_ms,
		   uint64_t to_ms, uint64_t addr, uint32_t owner)
{
	struct prof_offcpu *r;

	r = PB_SLOT(b->p.offcpu, b->p.noffcpu);
	REQUIRE(r);
	memset(r, 0, sizeof(*r));
	r->start = T0 + from_ms * MS;
	r->end = T0 + to_ms * MS;
	r->weight_ns = (to_ms - from_ms) * MS;
	r->addr = addr;
	r->process = b->p.threads[t].process;
	r->thread = t;
	r->stack = st;
	r->kind = kind;
	r->syscall = kind == CBN_OFF_FUTEX ? 202 : 0;
	r->owner_thread = owner;
}

static void run_free(struct pb *b)
{
	pb_drop(b->p.offcpu);
	pb_free(b);
}

static struct wait_analysis *analyze(const struct pb *b)
{
	struct wait_analysis *w = NULL;

	REQUIRE(wait_analyze(&b->p, &w) == 0);
	REQUIRE(w);
	return w;
}

static const struct rule_finding *finding(const struct wait_analysis *w, const char *id)
{
	size_t i;

	for (i = 0; i < w->nfindings; i++)
		if (strcmp(w->findings[i].id, id) == 0)
			return &w->findings[i];
	return NULL;
}

static const struct wait_thread *thread_of(const struct wait_analysis *w, uint32_t t)
{
	size_t i;

	for (i = 0; i < w->nthreads_v; i++)
		if (w->threads_v[i].thread == t)
			return &w->threads_v[i];
	return NULL;
}

static int near(double a, double b, double tol)
{
	return fabs(a - b) <= tol;
}

/* Thread A computes the whole second; thread B computes 60 % and spins in
 * libgomp's barrier for the last 40 %, under the loop at trainer.c:219. */
static void test_omp_spin(void)
{
	struct pb b;
	struct wait_analysis *w;
	const struct rule_finding *f;
	uint32_t work, mainf, omp_fn, gstart, bar, start_thread, a, t2, s_a, s_b, s_spin;

	run_init(&b, 1000);
	work = pb_func(&b, "train_step", "trainer.c", 150, "/bin/prog");
	mainf = pb_func(&b, "main", "trainer.c", 300, "/bin/prog");
	omp_fn = pb_func(&b, "train._omp_fn.0", "trainer.c", 200, "/bin/prog");
	gstart = pb_func(&b, "gomp_thread_start", "", 0, "/usr/lib/libgomp.so.1.0.0");
	bar = pb_func(&b, "gomp_barrier_wait_end", "", 0, "/usr/lib/libgomp.so.1.0.0");
	start_thread = pb_func(&b, "start_thread", "", 0, "/lib/libc.so.6");
	a = pb_thread(&b, 100, 0, "prog");
	t2 = pb_thread(&b, 101, 0, "prog");
	s_a = pb_stack(&b, 2, (uint32_t[]){ work, mainf });
	s_b = pb_stack(&b, 3, (uint32_t[]){ omp_fn, gstart, start_thread });
	s_spin = pb_stack_inl(&b, 4, (uint32_t[]){ bar, omp_fn, gstart, start_thread },
			      (uint32_t[]){ 0, 219, 0, 0 }, 0);
	samples_at(&b, a, s_a, 0, 1000, 0);
	samples_at(&b, t2, s_b, 0, 600, 0);
	samples_at(&b, t2, s_spin, 600, 1000, 0);
	w = analyze(&b);

	CHECK_EQ_INT(w->offcpu, 0);
	CHECK_EQ_INT(w->threads, 2);
	CHECK_EQ_INT(w->cpu_ns, 2000 * MS);
	CHECK_EQ_INT(w->act_ns[WAIT_ACT_SPIN], 400 * MS);
	CHECK_EQ_INT(w->act_ns[WAIT_ACT_COMPUTE], 1600 * MS);
	CHECK(near(w->cpu_share[WAIT_ACT_SPIN], 0.2, 1e-9));
	CHECK_EQ_INT(w->busy_threads, 2);
	CHECK(near(w->efficiency, 0.8, 1e-9));
	CHECK(thread_of(w, t2) && near(thread_of(w, t2)->busy, 0.6, 1e-9));
	CHECK_EQ_INT(w->verdict, WAIT_V_SYNC);
	CHECK(w->verdict_text && strstr(w->verdict_text, "synchronization-bound: 20 %"));
	CHECK(w->verdict_text && strstr(w->verdict_text, "libgomp.so.1"));
	f = finding(w, "omp-spin");
	CHECK(f && strstr(f->evidence, "20 % of CPU") && strstr(f->evidence, "trainer.c:219") &&
	      strstr(f->evidence, "train._omp_fn.0") && strstr(f->message, "OMP_WAIT_POLICY"));
	/* A ran alone while B spun: A is critical, but 40 % is an imbalance, not serial */
	CHECK_EQ_INT(w->critical, a);
	CHECK(near(w->critical_share, 1.0, 1e-6));
	CHECK(!finding(w, "serial"));
	CHECK(!finding(w, "spin-wait"));
	/* the same spin seen by the loader's PAUSE test, outside any runtime */
	wait_free(w);
	b.p.funcs[bar].module = "/bin/prog";
	b.p.funcs[bar].name = "spin_until";
	for (size_t i = 0; i < b.p.nsamples; i++)
		if (b.p.samples[i].stack == s_spin)
			b.p.samples[i].flags |= PROF_SAMPLE_SPIN;
	w = analyze(&b);
	CHECK_EQ_INT(w->act_ns[WAIT_ACT_SPIN], 400 * MS);
	CHECK(!finding(w, "omp-spin"));
	f = finding(w, "spin-wait");
	CHECK(f && strstr(f->evidence, "spin_until"));
	wait_free(w);
	run_free(&b);
}

/* Three threads, one mutex at 0x1000 taken at app.c:42: T2 waits 300 ms and
 * T3 200 ms while T1 owns it, T3 100 ms more while T2 does. */
static void test_lock(void)
{
	struct pb b;
	struct wait_analysis *w;
	const struct rule_finding *f;
	const struct wait_lock *l;
	uint32_t lll, lock, upd, worker, condw, t1, t2, t3, s_lock, s_cond, s_cpu;

	run_init(&b, 1000);
	lll = pb_func(&b, "__lll_lock_wait", "", 0, "/lib/x86_64-linux-gnu/libc.so.6");
	lock = pb_func(&b, "pthread_mutex_lock@@GLIBC_2.2.5", "", 0, "/lib/libc.so.6");
	upd = pb_func(&b, "update", "app.c", 40, "/bin/prog");
	worker = pb_func(&b, "worker", "app.c", 60, "/bin/prog");
	condw = pb_func(&b, "pthread_cond_wait", "", 0, "/lib/libc.so.6");
	t1 = pb_thread(&b, 100, 0, "main");
	t2 = pb_thread(&b, 101, 0, "w1");
	t3 = pb_thread(&b, 102, 0, "w2");
	s_lock = pb_stack_inl(&b, 4, (uint32_t[]){ lll, lock, upd, worker },
			      (uint32_t[]){ 0, 0, 42, 70 }, 0);
	s_cond = pb_stack(&b, 3, (uint32_t[]){ condw, worker, worker });
	s_cpu = pb_stack(&b, 2, (uint32_t[]){ upd, worker });
	samples_at(&b, t1, s_cpu, 0, 1000, 0);
	samples_at(&b, t2, s_cpu, 0, 100, 0);
	samples_at(&b, t3, s_cpu, 0, 300, 0);
	off_at(&b, t2, s_lock, CBN_OFF_FUTEX, 100, 400, 0x1000, t1);
	off_at(&b, t3, s_lock, CBN_OFF_FUTEX, 300, 500, 0x1000, t1);
	off_at(&b, t3, s_lock, CBN_OFF_FUTEX, 500, 600, 0x1000, t2);
	/* a mutex known by its versioned name alone (no __lll_lock_wait frame) */
	off_at(&b, t1, pb_stack(&b, 3, (uint32_t[]){ lock, upd, worker }), CBN_OFF_FUTEX, 990,
	       1000, 0x5000, PROF_NONE);
	/* a condition variable: a futex wait, not a lock */
	off_at(&b, t2, s_cond, CBN_OFF_FUTEX, 450, 1000, 0x2000, t1);
	w = analyze(&b);

	CHECK_EQ_INT(w->offcpu, 1);
	REQUIRE(w->nlocks == 2);
	CHECK_EQ_INT(w->locks[1].addr, 0x5000);
	CHECK_EQ_INT(w->locks[1].holder, PROF_NONE);
	CHECK(thread_of(w, t1) && thread_of(w, t1)->lock_wait_ns == 10 * MS);
	l = &w->locks[0];
	CHECK_EQ_INT(l->addr, 0x1000);
	CHECK_EQ_INT(l->wait_ns, 600 * MS);
	CHECK_EQ_INT(l->contended_ns, 500 * MS);   /* [100, 600) */
	CHECK_EQ_INT(l->waiters, 2);
	CHECK_EQ_INT(l->holder, t1);
	CHECK(near(l->holder_share, 500.0 / 600.0, 1e-9));
	CHECK_EQ_INT(l->func, upd);
	CHECK_EQ_INT(l->line, 42);
	CHECK_STR(l->file, "app.c");
	CHECK_EQ_INT(l->stack, s_lock);
	CHECK(thread_of(w, t1) && thread_of(w, t1)->held_for_ns == 500 * MS);
	CHECK(thread_of(w, t2) && thread_of(w, t2)->held_for_ns == 100 * MS);
	CHECK(thread_of(w, t2) && thread_of(w, t2)->lock_wait_ns == 300 * MS);
	CHECK(thread_of(w, t2) && thread_of(w, t2)->off_ns == 850 * MS);
	CHECK(thread_of(w, t3) && thread_of(w, t3)->lock_wait_ns == 300 * MS);
	CHECK_EQ_INT(w->kind_ns[CBN_OFF_FUTEX], 1160 * MS);
	CHECK_EQ_INT(w->off_ns, 1160 * MS);
	CHECK_EQ_INT(w->blocked_est_ns, 1160 * MS);
	/* sites: the lock site (call pthread_mutex_lock), the condition variable,
	 * the other lock's site (another line) */
	REQUIRE(w->nsites == 3);
	CHECK_EQ_INT(w->sites[2].ns, 10 * MS);
	CHECK_EQ_INT(w->sites[2].call, lock);
	CHECK_EQ_INT(w->sites[0].func, upd);
	CHECK_EQ_INT(w->sites[0].line, 42);
	CHECK_EQ_INT(w->sites[0].ns, 600 * MS);
	CHECK_EQ_INT(w->sites[0].call, lock);
	CHECK_EQ_INT(w->sites[0].nthreads, 2);
	CHECK_EQ_INT(w->sites[0].kind, CBN_OFF_FUTEX);
	CHECK_EQ_INT(w->sites[1].func, worker);
	CHECK_EQ_INT(w->sites[1].ns, 550 * MS);
	CHECK_EQ_INT(w->sites[1].call, condw);
	CHECK_EQ_INT(w->sites[1].nthreads, 1);
	CHECK_EQ_INT(w->verdict, WAIT_V_SYNC);   /* 1160 ms of futex waits in 3000 */
	CHECK(w->verdict_text && strstr(w->verdict_text, "most contended lock at app.c:42"));
	f = finding(w, "lock-contention");
	CHECK(f && strstr(f->evidence, "app.c:42") && strstr(f->evidence, "contended 50 %") &&
	      strstr(f->evidence, "holder thread main (tid 100)") && strstr(f->evidence, "83 %"));
	wait_free(w);
	run_free(&b);
}

/* main computes the whole second; three workers compute the first 200 ms and
 * then wait on a condition variable: serial, main critical. */
static void build_serial(struct pb *b, int offcpu)
{
	uint32_t mainf, work, worker, condw, t, s_main, s_work, s_cond, i;

	run_init(b, 1000);
	mainf = pb_func(b, "main", "s.c", 1, "/bin/prog");
	work = pb_func(b, "crunch", "s.c", 20, "/bin/prog");
	worker = pb_func(b, "worker", "s.c", 40, "/bin/prog");
	condw = pb_func(b, "pthread_cond_wait", "", 0, "/lib/libc.so.6");
	s_main = pb_stack(b, 2, (uint32_t[]){ work, mainf });
	s_work = pb_stack(b, 2, (uint32_t[]){ work, worker });
	s_cond = pb_stack(b, 2, (uint32_t[]){ condw, worker });
	t = pb_thread(b, 100, 0, "main");
	samples_at(b, t, s_main, 0, 1000, 0);
	for (i = 0; i < 3; i++) {
		t = pb_thread(b, 101 + i, 0, "worker");
		samples_at(b, t, s_work, 0, 200, 0);
		if (offcpu)
			off_at(b, t, s_cond, CBN_OFF_FUTEX, 200, 1000, 0x3000, PROF_NONE);
	}
}

static void test_serial(void)
{
	struct pb b;
	struct wait_analysis *w;
	const struct rule_finding *f;
	int offcpu;

	for (offcpu = 1; offcpu >= 0; offcpu--) {
		build_serial(&b, offcpu);
		w = analyze(&b);
		CHECK_EQ_INT(w->offcpu, offcpu);
		CHECK_EQ_INT(w->busy_threads, 4);
		CHECK(near(w->efficiency, 1.6 / 4, 1e-9));
		CHECK_EQ_INT(w->blocked_est_ns, 2400 * MS);
		CHECK_EQ_INT(w->critical, 0);
		CHECK(near(w->critical_share, 1.0, 1e-6));
		CHECK_EQ_INT(w->critical_waiters, 3);
		CHECK_EQ_INT(w->verdict, WAIT_V_SERIAL);
		CHECK(w->verdict_text && strstr(w->verdict_text, "serial: thread main (tid 100)"));
		f = finding(w, "serial");
		CHECK(f && strstr(f->evidence, "one thread busy while 3 wait") &&
		      strstr(f->evidence, "80 % of their lifetime"));
		CHECK(offcpu == !finding(w, "blocked-unknown"));
		CHECK(!finding(w, "lock-contention"));   /* a condition variable is no lock */
		wait_free(w);
		run_free(&b);
	}

	/* one thread computes, a helper sleeps the whole run: not serial */
	{
		uint32_t f1, s1, t;

		run_init(&b, 1000);
		f1 = pb_func(&b, "main", "s.c", 1, "/bin/prog");
		s1 = pb_stack(&b, 1, &f1);
		t = pb_thread(&b, 100, 0, "main");
		samples_at(&b, t, s1, 0, 1000, 0);
		t = pb_thread(&b, 101, 0, "helper");
		w = analyze(&b);
		CHECK_EQ_INT(w->busy_threads, 1);
		CHECK_EQ_INT(w->verdict, WAIT_V_COMPUTE);
		CHECK(!finding(w, "serial") && !finding(w, "blocked-unknown"));
		CHECK(near(w->efficiency, 1.0, 1e-9));
		CHECK(near(w->blocked_share, 0.5, 1e-9));
		wait_free(w);
		run_free(&b);
	}
}

/* One thread: 300 ms computing, 700 ms blocked in read() at app.c:10. */
static void test_io(void)
{
	struct pb b;
	struct wait_analysis *w;
	const struct rule_finding *f;
	const struct wait_func *wf = NULL;
	uint32_t rd, load, mainf, start, t, s_cpu, s_rd;
	size_t i;

	run_init(&b, 1000);
	rd = pb_func(&b, "read", "", 0, "/lib/libc.so.6");
	load = pb_func(&b, "load_file", "app.c", 5, "/bin/prog");
	mainf = pb_func(&b, "main", "app.c", 1, "/bin/prog");
	start = pb_func(&b, "__libc_start_main", "", 0, "/lib/libc.so.6");
	t = pb_thread(&b, 100, 0, "main");
	s_cpu = pb_stack(&b, 3, (uint32_t[]){ load, mainf, start });
	s_rd = pb_stack_inl(&b, 4, (uint32_t[]){ rd, load, mainf, start },
			    (uint32_t[]){ 0, 10, 3, 0 }, 0);
	samples_at(&b, t, s_cpu, 0, 300, 0);
	off_at(&b, t, s_rd, CBN_OFF_IO, 300, 1000, 3, PROF_NONE);
	w = analyze(&b);

	CHECK_EQ_INT(w->off_ns, 700 * MS);
	CHECK_EQ_INT(w->kind_ns[CBN_OFF_IO], 700 * MS);
	CHECK_EQ_INT(w->nlocks, 0);
	CHECK_EQ_INT(w->verdict, WAIT_V_IO);
	CHECK(w->verdict_text && strstr(w->verdict_text, "I/O-bound: 70 %"));
	REQUIRE(w->nsites == 1);
	CHECK_EQ_INT(w->sites[0].func, load);
	CHECK_EQ_INT(w->sites[0].line, 10);
	CHECK_EQ_INT(w->sites[0].call, rd);
	CHECK_EQ_INT(w->sites[0].kind, CBN_OFF_IO);
	CHECK_EQ_INT(w->sites[0].stack, s_rd);
	f = finding(w, "io-wait");
	CHECK(f && strstr(f->evidence, "app.c:10 (load_file) in read"));
	/* the wall-clock view: main is everything, read is off-CPU self time;
	 * the entry frame every stack starts with is left out, and counted */
	REQUIRE(w->nfuncs == 3);
	CHECK_EQ_INT(w->nentry_funcs, 1);
	for (i = 0; i < w->nfuncs; i++)
		CHECK(w->funcs[i].func != start);
	CHECK_EQ_INT(w->funcs[0].total_on + w->funcs[0].total_off, 1000 * MS);
	for (i = 0; i < w->nfuncs; i++)
		if (w->funcs[i].func == rd)
			wf = &w->funcs[i];
	CHECK(wf && wf->self_off == 700 * MS && wf->self_on == 0 && wf->total_off == 700 * MS);
	wait_free(w);
	run_free(&b);
}

/* Activities and the efficiency formula: 4 threads over 1 s. */
static void test_activities(void)
{
	struct pb b;
	struct wait_analysis *w;
	uint32_t mainf, work, thr, mal, intm, mv, ldso, init, yield, th[4], s;
	uint32_t st_work, st_thr, st_alloc, st_mv, st_ld, st_init, st_yield;

	run_init(&b, 1000);
	mainf = pb_func(&b, "main", "a.c", 1, "/bin/prog");
	work = pb_func(&b, "work", "a.c", 10, "/bin/prog");
	mal = pb_func(&b, "malloc", "", 0, "/lib/libc.so.6");
	intm = pb_func(&b, "_int_malloc", "", 0, "/lib/libc.so.6");
	mv = pb_func(&b, "__memmove_avx_unaligned_erms", "", 0, "/lib/libc.so.6");
	ldso = pb_func(&b, "_dl_relocate_object", "", 0, "/lib64/ld-linux-x86-64.so.2");
	init = pb_func(&b, "static_init", "a.c", 90, "/bin/prog");
	thr = pb_func(&b, "thread_main", "a.c", 50, "/bin/prog");
	yield = pb_func(&b, "sched_yield", "", 0, "/lib/libc.so.6");
	for (s = 0; s < 4; s++)
		th[s] = pb_thread(&b, 100 + s, 0, "t");
	st_work = pb_stack(&b, 2, (uint32_t[]){ work, mainf });
	st_alloc = pb_stack(&b, 4, (uint32_t[]){ intm, mal, work, mainf });
	st_mv = pb_stack(&b, 3, (uint32_t[]){ mv, work, mainf });
	st_ld = pb_stack(&b, 1, &ldso);
	st_init = pb_stack(&b, 1, &init);
	st_thr = pb_stack(&b, 2, (uint32_t[]){ work, thr });
	st_yield = pb_stack(&b, 3, (uint32_t[]){ yield, work, thr });
	/* t0: 10 ms loader, 10 ms constructors before main, 980 ms in main of
	 * which 100 allocating, 50 copying and 30 in the kernel (kernel share) */
	samples_at(&b, th[0], st_ld, 0, 10, 0);
	samples_at(&b, th[0], st_init, 10, 20, 0);
	samples_at(&b, th[0], st_alloc, 20, 120, 0);
	samples_at(&b, th[0], st_mv, 120, 170, 0);
	samples_at(&b, th[0], st_work, 170, 1000, 0);
	samples_at(&b, th[0], st_work, 500, 530, PROF_SAMPLE_KERNEL);
	/* t1: 800 ms computing; t2: 500 ms computing, 100 ms sched_yield; t3: 20 ms */
	samples_at(&b, th[1], st_thr, 0, 800, 0);
	samples_at(&b, th[2], st_thr, 0, 500, 0);
	samples_at(&b, th[2], st_yield, 500, 600, 0);
	samples_at(&b, th[3], st_thr, 0, 20, 0);
	/* a static initializer after main ran is no start-up */
	samples_at(&b, th[1], st_init, 900, 905, 0);
	w = analyze(&b);

	CHECK_EQ_INT(w->act_ns[WAIT_ACT_STARTUP], 20 * MS);
	CHECK_EQ_INT(w->act_ns[WAIT_ACT_ALLOC], 100 * MS);
	CHECK_EQ_INT(w->act_ns[WAIT_ACT_MEMCPY], 50 * MS);
	CHECK_EQ_INT(w->act_ns[WAIT_ACT_KERNEL], 30 * MS);
	CHECK_EQ_INT(w->act_ns[WAIT_ACT_SPIN], 100 * MS);
	CHECK_EQ_INT(w->cpu_ns, (1030 + 805 + 600 + 20) * MS);
	CHECK_EQ_INT(w->act_ns[WAIT_ACT_COMPUTE], w->cpu_ns - 300 * MS);
	CHECK_EQ_INT(w->thread_ns, 4000 * MS);
	CHECK_EQ_INT(w->busy_threads, 3);   /* t3's 20 ms is under 5 % of the wall */
	/* (cpu - spin) / (wall x busy threads) */
	CHECK(near(w->efficiency, (2455.0 - 100.0) / 3000.0, 1e-9));
	CHECK(near(w->cpu_share[WAIT_ACT_ALLOC], 100.0 / 4000.0, 1e-9));
	CHECK_EQ_INT(w->blocked_est_ns, (4000 - 2455) * MS);
	CHECK(near(w->blocked_share, 1545.0 / 4000.0, 1e-9));
	CHECK(finding(w, "alloc-heavy") == NULL);   /* 4 % of CPU */
	CHECK(thread_of(w, th[0]) == &w->threads_v[0]);   /* by cpu_ns */
	CHECK_EQ_INT(w->verdict, WAIT_V_COMPUTE);
	CHECK_STR(wait_verdict_name(w->verdict), "compute-bound");
	CHECK(w->verdict_text && strncmp(w->verdict_text, "compute-bound: ", 15) == 0);
	wait_free(w);
	/* a fork child's main ran in its parent: a stack without main before
	 * its first main is no start-up (the loader's own frames still are) */
	b.p.processes[0].forked = 1;
	w = analyze(&b);
	CHECK_EQ_INT(w->act_ns[WAIT_ACT_STARTUP], 10 * MS);
	wait_free(w);
	run_free(&b);
}

/* One thread of a 1 s run; leaf function leaf (module mod) for leaf_ms of it,
 * work for the rest of work_ms; kernel_ms more of kernel share. */
static struct wait_analysis *one_thread(struct pb *b, uint64_t wall_ms, const char *leaf,
					const char *mod, uint64_t leaf_ms, uint64_t work_ms,
					uint64_t kernel_ms)
{
	uint32_t mainf, work, lf, t, s_work, s_leaf;

	run_init(b, wall_ms);
	mainf = pb_func(b, "main", "o.c", 1, "/bin/prog");
	work = pb_func(b, "work", "o.c", 10, "/bin/prog");
	lf = pb_func(b, leaf, "", 0, mod);
	t = pb_thread(b, 100, 0, "main");
	b->p.processes[0].pid = 100;
	s_work = pb_stack(b, 2, (uint32_t[]){ work, mainf });
	s_leaf = pb_stack(b, 3, (uint32_t[]){ lf, work, mainf });
	if (!strncmp(mod, "/lib64/ld", 9))
		s_leaf = pb_stack(b, 1, &lf);
	samples_at(b, t, s_leaf, 0, leaf_ms, 0);
	samples_at(b, t, s_work, leaf_ms, work_ms, 0);
	samples_at(b, t, s_work, 0, kernel_ms, PROF_SAMPLE_KERNEL);
	return analyze(b);
}

/* The other verdicts and rules, each at a share past its threshold. */
static void test_verdicts(void)
{
	struct pb b;
	struct wait_analysis *w;
	const struct rule_finding *f;
	uint32_t mainf, nano, t, t2, s_cpu, s_sleep;

	/* allocator-bound: 400 of 1000 ms in malloc */
	w = one_thread(&b, 1000, "malloc", "/lib/libc.so.6", 400, 1000, 0);
	CHECK_EQ_INT(w->verdict, WAIT_V_ALLOC);
	CHECK((f = finding(w, "alloc-heavy")) && strstr(f->evidence, "40 % of CPU"));
	wait_free(w);
	run_free(&b);
	/* memcpy-heavy at 20 %, still compute-bound */
	w = one_thread(&b, 1000, "__memset_avx2_unaligned", "/lib/libc.so.6", 200, 1000, 0);
	CHECK_EQ_INT(w->verdict, WAIT_V_COMPUTE);
	CHECK((f = finding(w, "memcpy-heavy")) && strstr(f->evidence, "20 % of CPU"));
	CHECK(!finding(w, "alloc-heavy"));
	wait_free(w);
	run_free(&b);
	/* system-bound: 600 ms of kernel share over 400 ms of user time */
	w = one_thread(&b, 1000, "work2", "/bin/prog", 0, 400, 600);
	CHECK_EQ_INT(w->verdict, WAIT_V_KERNEL);
	CHECK((f = finding(w, "kernel-heavy")) && strstr(f->evidence, "60 % of CPU"));
	wait_free(w);
	run_free(&b);
	/* start-up-bound: 60 of 100 ms in the loader */
	w = one_thread(&b, 100, "_dl_lookup_symbol_x", "/lib64/ld-linux-x86-64.so.2", 60, 100, 0);
	CHECK_EQ_INT(w->verdict, WAIT_V_STARTUP);
	CHECK((f = finding(w, "startup-heavy")) && strstr(f->evidence, "60 % of CPU"));
	wait_free(w);
	run_free(&b);
	/* ... but 40 ms of loader time is no finding, whatever its share */
	w = one_thread(&b, 100, "_dl_lookup_symbol_x", "/lib64/ld-linux-x86-64.so.2", 40, 100, 0);
	CHECK(!finding(w, "startup-heavy"));
	wait_free(w);
	run_free(&b);

	/* idle: 200 ms computing, 800 ms in nanosleep; a second thread waits
	 * 300 ms for a core (runnable) while computing the whole second */
	run_init(&b, 1000);
	mainf = pb_func(&b, "main", "i.c", 1, "/bin/prog");
	nano = pb_func(&b, "clock_nanosleep", "", 0, "/lib/libc.so.6");
	t = pb_thread(&b, 100, 0, "main");
	t2 = pb_thread(&b, 101, 0, "busy");
	s_cpu = pb_stack(&b, 1, &mainf);
	s_sleep = pb_stack(&b, 2, (uint32_t[]){ nano, mainf });
	samples_at(&b, t, s_cpu, 0, 200, 0);
	off_at(&b, t, s_sleep, CBN_OFF_SLEEP, 200, 1000, 0, PROF_NONE);
	samples_at(&b, t2, s_cpu, 0, 1000, 0);
	off_at(&b, t2, PROF_NONE, CBN_OFF_RUNQ, 0, 300, 0, PROF_NONE);
	/* one CPU: the program's own two busy threads queue for it */
	b.p.env.found = 1;
	b.p.env.cpus = 1;
	b.p.env.load[0] = -1;
	w = analyze(&b);
	CHECK_EQ_INT(w->off_ns, 800 * MS);   /* runnable is not off-CPU */
	CHECK_EQ_INT(w->kind_ns[CBN_OFF_RUNQ], 300 * MS);
	CHECK_EQ_INT(w->verdict, WAIT_V_COMPUTE);   /* sleep is 40 % of the busy threads' time */
	CHECK((f = finding(w, "sleep")) && strstr(f->evidence, "40 %") &&
	      strstr(f->evidence, "i.c:2 (main)"));
	CHECK_EQ_INT(w->busy_at_once, 2);
	CHECK((f = finding(w, "runnable")) && strstr(f->evidence, "15 %") &&
	      strstr(f->evidence, "up to 2 busy threads at once on 1 CPU"));
	CHECK(w->load_note == NULL);
	CHECK(!finding(w, "blocked-unknown"));
	wait_free(w);
	/* two CPUs: two busy threads fit, so the waits for a core were other
	 * programs' doing: a note on the measurement, not advice */
	b.p.env.cpus = 2;
	b.p.env.load[0] = 3.5;
	w = analyze(&b);
	CHECK(!finding(w, "runnable"));
	CHECK(w->load_note && strstr(w->load_note, "waited for a free CPU 15 % of their time") &&
	      strstr(w->load_note, "at most 2 busy threads at once on 2 CPUs: other programs") &&
	      strstr(w->load_note, "(load 3.50 at start)"));
	wait_free(w);
	b.p.env.found = 0;
	/* the busy thread gone: the sleeper alone is idle */
	b.p.nthreads = 1;
	b.p.nsamples = 200;
	b.p.noffcpu = 1;
	w = analyze(&b);
	CHECK_EQ_INT(w->verdict, WAIT_V_SLEEP);
	CHECK(w->verdict_text && strstr(w->verdict_text, "idle: 80 %"));
	wait_free(w);
	run_free(&b);
}

static void test_little(void)
{
	struct pb b;
	struct wait_analysis *w = (struct wait_analysis *)&b;
	uint32_t f, s, t;

	run_init(&b, 100);
	CHECK(wait_analyze(&b.p, &w) == 0 && w == NULL);   /* neither samples nor stretches */
	f = pb_func(&b, "main", "m.c", 1, "/bin/prog");
	s = pb_stack(&b, 1, &f);
	t = pb_thread(&b, 100, 0, "m");
	samples_at(&b, t, s, 0, 9, 0);
	w = analyze(&b);
	CHECK_EQ_INT(w->verdict, WAIT_V_NONE);
	CHECK(w->verdict_text == NULL);
	CHECK_STR(wait_verdict_name(WAIT_V_NONE), "");
	wait_free(w);
	run_free(&b);
}

static void test_names(void)
{
	CHECK_STR(wait_activity_name(WAIT_ACT_MEMCPY), "memcpy/memset");
	CHECK_STR(wait_activity_name(WAIT_ACT_STARTUP), "start-up");
	CHECK_STR(wait_activity_name(99), "");
	CHECK_STR(wait_kind_name(CBN_OFF_RUNQ), "runnable");
	CHECK_STR(wait_kind_name(CBN_OFF_FUTEX), "futex");
	CHECK_STR(wait_kind_name(-1), "");
	CHECK_STR(wait_verdict_name(WAIT_V_SYNC), "synchronization-bound");
	CHECK_STR(wait_verdict_name(WAIT_V_IO), "I/O-bound");
	CHECK_STR(wait_verdict_name(WAIT_V_SLEEP), "idle");
	CHECK_STR(wait_verdict_name(WAIT_V_KERNEL), "system-bound");
	CHECK_STR(wait_verdict_name(42), "");
}

/* What a function is, by its name as names_bare() reads it, less a symbol
 * version, glibc's __GI_ prefix and a kernel frame's "[kernel] ". */
static void test_classify(void)
{
	static const struct {
		const char *name;
		uint16_t want;
	} c[] = {
		{ "pthread_mutex_lock@@GLIBC_2.2.5", FC_MUTEX },
		{ "__GI___pthread_mutex_lock", FC_MUTEX },
		{ "void std::mutex::lock()", FC_MUTEX },
		{ "std::mutex::lock() [clone .cold]", FC_MUTEX },
		{ "operator new(unsigned long)", FC_ALLOC },
		{ "[kernel] __memmove", FC_SYS | FC_MEMCPY },
		{ "main", FC_MAIN },
		{ "(anonymous namespace)::main(int)", 0 },
		{ "std::vector<int, std::allocator<int> >::size() const", 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct prof_func f = { .name = c[i].name, .module = "a.out" };

		if (wait_classify(&f) != c[i].want)
			fprintf(stderr, "classify(\"%s\") = %#x\n", c[i].name, wait_classify(&f));
		CHECK(wait_classify(&f) == c[i].want);
	}
}

/* A thread on the CPU for its whole second, 600 ms of it in the profiler's
 * own code (samples in no table: a loop of annotation marks, the hooks of
 * --memory): "In the profiler", not waiting.  Before, the 600 ms were
 * counted as blocked. */
static void test_profiler(void)
{
	struct pb b;
	struct wait_analysis *w;
	uint32_t f1, s1, t;
	int offcpu;

	for (offcpu = 0; offcpu <= 1; offcpu++) {
		run_init(&b, 1000);
		f1 = pb_func(&b, "main", "s.c", 1, "/bin/prog");
		s1 = pb_stack(&b, 1, &f1);
		t = pb_thread(&b, 100, 0, "main");
		samples_at(&b, t, s1, 0, 400, 0);
		b.p.processes[0].overhead_weight = 600;
		b.p.threads[t].overhead_weight = 600;
		if (offcpu)
			off_at(&b, t, s1, CBN_OFF_SLEEP, 999, 1000, 0, PROF_NONE);
		w = analyze(&b);
		CHECK_EQ_INT(w->profiler_ns, 600 * MS);
		CHECK_EQ_INT(w->cpu_ns, 400 * MS);
		CHECK_EQ_INT(w->blocked_est_ns, offcpu ? 1 * MS : 0);
		CHECK(near(w->profiler_share, offcpu ? 600.0 / 1001.0 : 0.6, 1e-9));
		CHECK(near(w->cpu_share[WAIT_ACT_COMPUTE] + w->profiler_share + w->blocked_share +
				   w->runq_share + w->other_share + w->child_share,
			   1.0, 1e-9));
		CHECK(!finding(w, "blocked-unknown"));
		wait_free(w);
		run_free(&b);
	}
}

int main(void)
{
	test_omp_spin();
	test_lock();
	test_serial();
	test_io();
	test_verdicts();
	test_activities();
	test_little();
	test_names();
	test_classify();
	test_profiler();
	return test_result();
}
