/*
 * test_wait_fixture.h — a hand-built CPU waiting view (analysis/wait/wait.h) for
 * the writers' unit tests (text, JSON, trace, flame, gate): a profile of one
 * process (pid WF_PID) with three threads, where two workers wait on one
 * mutex the main thread holds and one reads a file, with the off-CPU
 * stretches that say so, and a struct wait_analysis filled by hand with the
 * figures such a run would give.  Static storage: one fixture at a time.
 */
#ifndef CBN_TEST_WAIT_FIXTURE_H
#define CBN_TEST_WAIT_FIXTURE_H

#include "wait.h"
#include "analysed.h"
#include "test_export_fixture.h"

#define WF_PID 4242
#define WF_LOCK 0x7ffd1000ull

static struct wait_thread wf_threads[3];
static struct wait_site wf_sites[2];
static struct wait_lock wf_locks[1];
static struct wait_func wf_funcs[2];
static struct wait_analysis wf_w;
static struct rule_finding wf_finding;
static uint32_t wf_th[3], wf_f_worker, wf_f_lock, wf_f_read, wf_f_item, wf_f_main;

static inline void wf_offcpu(struct profile *p, uint32_t th, uint64_t start, uint64_t end,
			     uint32_t stack, uint32_t kind, int32_t sc, uint64_t addr,
			     uint32_t owner)
{
	struct prof_offcpu o = {.start = start, .end = end, .weight_ns = end - start,
				.addr = addr, .process = 0, .thread = th, .stack = stack,
				.kind = kind, .syscall = sc, .owner_thread = owner};

	PB_ADD(p->offcpu, p->noffcpu, o);
}

/* main (tid WF_PID) computes; worker-1 and worker-2 wait 40 ms each in
 * pthread_mutex_lock at app.c:55 while main holds it; worker-2 also reads
 * 30 ms at app.c:80. */
static inline void wf_profile(struct profile *p)
{
	uint32_t s_main, s_lock, s_read;

	ex_init(p, "./app");
	ex_process(p, WF_PID, 0, "/usr/bin/app");
	p->processes[0].offcpu.state = CBN_OFFCPU_ON;
	p->processes[0].offcpu.rate_hz = 100;
	p->processes[0].offcpu.ticks = 10;
	p->processes[0].offcpu.looks = 30;
	p->processes[0].offcpu.records = 3;
	p->processes[0].offcpu.unconfirmed = 2;
	p->processes[0].offcpu.reason = "";
	wf_th[0] = ex_thread(p, WF_PID, 0, "app");
	wf_th[1] = ex_thread(p, WF_PID + 1, 0, "worker-1");
	wf_th[2] = ex_thread(p, WF_PID + 2, 0, "worker-2");
	for (int i = 0; i < 3; i++) {
		p->threads[wf_th[i]].start = EX_T0;
		p->threads[wf_th[i]].end = EX_T0 + 100 * EX_MS;
	}
	wf_f_main = ex_func(p, "main", "/src/app.c", 3, "app");
	wf_f_worker = ex_func(p, "worker", "/src/app.c", 50, "app");
	wf_f_item = ex_func(p, "load_item", "/src/app.c", 75, "app");
	wf_f_lock = ex_func(p, "pthread_mutex_lock", "", 0, "/usr/lib/libc.so.6");
	wf_f_read = ex_func(p, "read", "", 0, "/usr/lib/libc.so.6");
	s_main = ex_stack(p, 1, (uint32_t[]){wf_f_main});
	s_lock = ex_stack(p, 2, (uint32_t[]){wf_f_worker, wf_f_lock});
	s_read = ex_stack(p, 3, (uint32_t[]){wf_f_worker, wf_f_item, wf_f_read});
	for (int k = 0; k < 50; k++)
		ex_sample(p, wf_th[0], EX_T0 + (uint64_t)k * 2 * EX_MS, s_main, 1);
	wf_offcpu(p, wf_th[1], EX_T0 + 10 * EX_MS, EX_T0 + 50 * EX_MS, s_lock, CBN_OFF_FUTEX, 202,
		  WF_LOCK, wf_th[0]);
	wf_offcpu(p, wf_th[2], EX_T0 + 10 * EX_MS, EX_T0 + 50 * EX_MS, s_lock, CBN_OFF_FUTEX, 202,
		  WF_LOCK, wf_th[0]);
	wf_offcpu(p, wf_th[2], EX_T0 + 60 * EX_MS, EX_T0 + 90 * EX_MS, s_read, CBN_OFF_IO, 0, 3,
		  PROF_NONE);
}

static inline void wf_free(struct profile *p)
{
	pb_drop(p->offcpu);
	p->offcpu = NULL;
	p->noffcpu = 0;
	pb_profile_free(p);
}

/* The analysis of p with the hand-filled waiting view (offcpu: with the
 * off-CPU part; without it only the overview, as a run without --off-cpu). */
static inline struct analysis wf_analysis(const struct profile *p, int offcpu)
{
	struct analysis a = *analysed(p);
	struct wait_analysis *w = &wf_w;

	memset(w, 0, sizeof(*w));
	memset(wf_threads, 0, sizeof(wf_threads));
	w->offcpu = offcpu;
	w->rate_hz = offcpu ? 100 : 0;
	w->wall_ns = 100 * EX_MS;
	w->thread_ns = 300 * EX_MS;
	w->cpu_ns = 150 * EX_MS;
	w->act_ns[WAIT_ACT_COMPUTE] = 100 * EX_MS;
	w->act_ns[WAIT_ACT_SPIN] = 30 * EX_MS;
	w->act_ns[WAIT_ACT_KERNEL] = 10 * EX_MS;
	w->act_ns[WAIT_ACT_ALLOC] = 5 * EX_MS;
	w->act_ns[WAIT_ACT_MEMCPY] = 5 * EX_MS;
	if (offcpu) {
		w->off_ns = 110 * EX_MS;
		w->kind_ns[CBN_OFF_FUTEX] = 80 * EX_MS;
		w->kind_ns[CBN_OFF_IO] = 30 * EX_MS;
		w->kind_ns[CBN_OFF_RUNQ] = 5 * EX_MS;
		w->blocked_est_ns = 110 * EX_MS;
	} else {
		w->blocked_est_ns = 150 * EX_MS;
	}
	w->threads = 3;
	w->busy_threads = 2;
	w->busy_at_once = 2;
	w->usable = 2;
	w->efficiency = 0.6;
	/* as wait.c: shares of thread time adding up to 1, and of the CPU */
	w->span_ns = w->wall_ns;
	w->runq_ns = offcpu ? w->kind_ns[CBN_OFF_RUNQ] : 0;
	w->other_ns = offcpu ? w->thread_ns - w->cpu_ns - w->off_ns - w->runq_ns : 0;
	w->share_ns = w->thread_ns;
	for (int i = 0; i < WAIT_ACT_N; i++) {
		w->cpu_share[i] = (double)w->act_ns[i] / (double)w->share_ns;
		w->of_cpu[i] = (double)w->act_ns[i] / (double)w->cpu_ns;
	}
	w->blocked_share = (double)w->blocked_est_ns / (double)w->share_ns;
	w->runq_share = (double)w->runq_ns / (double)w->share_ns;
	w->other_share = (double)w->other_ns / (double)w->share_ns;

	wf_threads[0] = (struct wait_thread){.thread = wf_th[0], .wall_ns = 100 * EX_MS,
					     .cpu_ns = 100 * EX_MS, .held_for_ns = 72 * EX_MS,
					     .busy = 1.0};
	wf_threads[0].act_ns[WAIT_ACT_COMPUTE] = 100 * EX_MS;
	wf_threads[1] = (struct wait_thread){.thread = wf_th[1], .wall_ns = 100 * EX_MS,
					     .cpu_ns = 30 * EX_MS, .off_ns = 40 * EX_MS,
					     .lock_wait_ns = 40 * EX_MS, .busy = 0.1};
	wf_threads[1].act_ns[WAIT_ACT_SPIN] = 20 * EX_MS;
	wf_threads[1].kind_ns[CBN_OFF_FUTEX] = 40 * EX_MS;
	wf_threads[2] = (struct wait_thread){.thread = wf_th[2], .wall_ns = 100 * EX_MS,
					     .cpu_ns = 20 * EX_MS, .off_ns = 70 * EX_MS,
					     .lock_wait_ns = 40 * EX_MS, .busy = 0.1};
	wf_threads[2].act_ns[WAIT_ACT_SPIN] = 10 * EX_MS;
	wf_threads[2].kind_ns[CBN_OFF_FUTEX] = 40 * EX_MS;
	wf_threads[2].kind_ns[CBN_OFF_IO] = 30 * EX_MS;
	wf_threads[2].kind_ns[CBN_OFF_RUNQ] = 5 * EX_MS;
	w->threads_v = wf_threads;
	w->nthreads_v = 3;
	w->critical = wf_th[0];
	w->critical_share = 0.61;
	w->critical_waiters = 2;
	w->verdict = WAIT_V_SYNC;
	w->verdict_text = (char *)"synchronization-bound: 37 % of thread time waiting on one lock";
	wf_finding = (struct rule_finding){"cpu-lock", (char *)"shorten the critical section",
					   (char *)"one lock held 61 % of the run"};
	w->findings = &wf_finding;
	w->nfindings = 1;
	if (offcpu) {
		wf_sites[0] = (struct wait_site){.func = wf_f_worker, .file = "/src/app.c",
						 .line = 55, .call = wf_f_lock,
						 .kind = CBN_OFF_FUTEX, .ns = 80 * EX_MS,
						 .nthreads = 2, .stack = 1};
		wf_sites[0].kind_ns[CBN_OFF_FUTEX] = 80 * EX_MS;
		wf_sites[1] = (struct wait_site){.func = wf_f_item, .file = "/src/app.c",
						 .line = 80, .call = wf_f_read, .kind = CBN_OFF_IO,
						 .ns = 30 * EX_MS, .nthreads = 1, .stack = 2};
		wf_sites[1].kind_ns[CBN_OFF_IO] = 30 * EX_MS;
		wf_locks[0] = (struct wait_lock){.addr = WF_LOCK, .process = 0,
						 .func = wf_f_worker, .file = "/src/app.c",
						 .line = 55, .wait_ns = 80 * EX_MS,
						 .contended_ns = 40 * EX_MS, .waiters = 2,
						 .holder = wf_th[0], .holder_share = 0.9,
						 .stack = 1};
		wf_funcs[0] = (struct wait_func){.func = wf_f_worker, .total_on = 50 * EX_MS,
						 .total_off = 110 * EX_MS};
		wf_funcs[1] = (struct wait_func){.func = wf_f_lock, .self_off = 80 * EX_MS,
						 .total_off = 80 * EX_MS};
		w->sites = wf_sites;
		w->nsites = 2;
		w->locks = wf_locks;
		w->nlocks = 1;
		w->funcs = wf_funcs;
		w->nfuncs = 2;
		/* the stretches as the analysis made them: what a trace draws */
		if (a.wait) {
			w->stretches = a.wait->stretches;
			w->nstretches = a.wait->nstretches;
		}
	}
	a.wait = w;
	return a;
}

#endif
