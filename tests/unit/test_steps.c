/*
 * test_steps.c — steps_analyze() on hand-built profiles: cbn_step() markers
 * (durations, distribution, slowest step and what grew, cold start), capture
 * windows (steps outside dropped, numbered from the window's first step, the
 * opening marker just before the window kept), ranges matching --step (nested
 * ones folded), --step-func on the samples, GPU and memory figures, and the
 * text view's section.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "steps.h"
#include "report/steps_report.h"
#include "test_cpu_builder.h"
#include "testlib.h"

#define MS 1000000ull

struct fixture {
	struct pb b;
	uint32_t proc, thread, f_main, f_work, f_cold, f_idle;
	uint32_t st_work, st_cold, st_idle;
};

static void fx_init(struct fixture *x)
{
	uint32_t fr[2];

	memset(x, 0, sizeof(*x));
	pb_init(&x->b, MS, "./loop");
	x->proc = pb_process(&x->b, 100, 1, "./loop", "./loop", MS);
	x->b.p.processes[x->proc].start = 0;
	x->b.p.processes[x->proc].end = 100 * MS;
	x->thread = pb_thread(&x->b, 100, x->proc, "loop");
	x->f_main = pb_func(&x->b, "main", "loop.c", 1, "loop");
	x->f_work = pb_func(&x->b, "work", "loop.c", 10, "loop");
	x->f_cold = pb_func(&x->b, "cold_fn", "loop.c", 20, "loop");
	x->f_idle = pb_func(&x->b, "idle_fn", "loop.c", 30, "loop");
	fr[1] = x->f_main;
	fr[0] = x->f_work;
	x->st_work = pb_stack(&x->b, 2, fr);
	fr[0] = x->f_cold;
	x->st_cold = pb_stack(&x->b, 2, fr);
	fr[0] = x->f_idle;
	x->st_idle = pb_stack(&x->b, 2, fr);
}

static void fx_sample(struct fixture *x, uint64_t ts, uint32_t stack)
{
	struct prof_sample *s = PB_PUSH(&x->b, samples, nsamples);

	s->ts = ts;
	s->stack = stack;
	s->thread = x->thread;
	s->weight = 1;
	s->flags = 0;
	x->b.p.threads[x->thread].weight++;
	x->b.p.processes[x->proc].samples++;
	x->b.p.processes[x->proc].weight++;
}

static void fx_range(struct fixture *x, uint32_t kind, const char *name, uint64_t s, uint64_t e)
{
	struct prof_range *r;

	x->b.p.ranges = pb_grow(x->b.p.ranges, x->b.p.nranges, sizeof(*r));
	r = &x->b.p.ranges[x->b.p.nranges++];
	memset(r, 0, sizeof(*r));
	r->start = s;
	r->end = e;
	r->thread = x->thread;
	r->process = x->proc;
	r->kind = kind;
	r->source = CBN_SRC_ANNOTATION;
	r->domain = "";
	r->name = name;
}

static void fx_window(struct fixture *x, uint64_t s, uint64_t e, uint64_t first)
{
	struct prof_window *w;

	x->b.p.windows = pb_grow(x->b.p.windows, x->b.p.nwindows, sizeof(*w));
	w = &x->b.p.windows[x->b.p.nwindows++];
	memset(w, 0, sizeof(*w));
	w->start = s;
	w->end = e;
	w->process = x->proc;
	w->open_cause = CBN_CAUSE_SCHEDULE;
	w->close_cause = CBN_CAUSE_SCHEDULE;
	w->first_step = first;
}

static void fx_free(struct fixture *x)
{
	pb_drop(x->b.p.ranges);
	pb_drop(x->b.p.windows);
	pb_drop(x->b.p.gpu_ops);
	pb_drop(x->b.p.mem_counters);
	pb_drop(x->b.p.cuda_api);
	pb_drop(x->b.p.syncs);
	pb_free(&x->b);
}

/* Markers at 0, 50, 60, 70, 80, 90 ms; a sample every ms up to 99.5 ms: cold_fn
 * for the first 40 ms, work for the rest. */
static void fx_loop(struct fixture *x)
{
	static const uint64_t at[] = {0, 50, 60, 70, 80, 90};
	size_t i;

	for (i = 0; i < 6; i++)
		fx_range(x, CBN_RANGE_STEP, "step", at[i] * MS, at[i] * MS);
	for (i = 0; i < 100; i++)
		fx_sample(x, i * MS + MS / 2, i < 40 ? x->st_cold : x->st_work);
}

static void test_markers(void)
{
	struct fixture x;
	struct step_analysis *s = NULL;
	size_t i;

	fx_init(&x);
	fx_loop(&x);
	REQUIRE(steps_analyze(&x.b.p, NULL, NULL, &s) == 0);
	REQUIRE(s != NULL);
	CHECK_EQ_INT(s->source, STEP_SRC_MARKER);
	CHECK_STR(s->what, "cbn_step()");
	CHECK(s->precision == NULL);
	/* the last marker runs to the process's end: it has samples */
	REQUIRE(s->nsteps == 6);
	/* the n-th marker starts step n (ProfilerStep#n) */
	for (i = 0; i < 6; i++)
		CHECK_EQ_INT(s->steps[i].number, i + 1);
	CHECK_EQ_INT(s->steps[0].end - s->steps[0].start, 50 * MS);
	CHECK_EQ_INT(s->steps[5].end, 100 * MS);
	CHECK_EQ_INT(s->steps[0].cpu_ns, 50 * MS);
	CHECK_EQ_INT(s->steps[1].cpu_ns, 10 * MS);
	CHECK_EQ_INT(s->steps[0].gpu_busy_ns, 0);
	CHECK_EQ_INT(s->steps[0].mem_peak, 0);
	/* durations 50, 10 x 5 */
	CHECK_EQ_INT(s->min_ns, 10 * MS);
	CHECK_EQ_INT(s->median_ns, 10 * MS);
	CHECK_EQ_INT(s->p90_ns, 50 * MS); /* nearest rank: the 6th of 6 */
	CHECK_EQ_INT(s->max_ns, 50 * MS);
	CHECK_EQ_INT(s->total_ns, 100 * MS);
	CHECK_EQ_INT(s->mean_ns, 100 * MS / 6);
	/* the slow one and what grew */
	REQUIRE(s->nslow == 1);
	CHECK_EQ_INT(s->slow[0].step, 0);
	CHECK(s->slow[0].ratio > 4.9 && s->slow[0].ratio < 5.1);
	REQUIRE(s->slow[0].ngrew >= 1);
	CHECK_STR(s->slow[0].grew[0].name, "cold_fn");
	CHECK_EQ_INT(s->slow[0].grew[0].gpu, 0);
	CHECK_EQ_INT(s->slow[0].grew[0].step_ns, 40 * MS);
	CHECK_EQ_INT(s->slow[0].grew[0].median_ns, 0);
	/* cold start, through the rules */
	CHECK_EQ_INT(s->cold, 1);
	CHECK(s->cold_ratio > 4.9 && s->cold_ratio < 5.1);
	REQUIRE(s->nfindings == 1);
	CHECK_STR(s->findings[0].id, "cold-start");
	CHECK(strstr(s->findings[0].evidence, "step 1 took 50.000 ms") != NULL);
	CHECK_EQ_INT(s->controlled, 0);
	steps_free(s);

	/* one marker is not two steps' worth */
	x.b.p.nranges = 1;
	x.b.p.nsamples = 0;
	REQUIRE(steps_analyze(&x.b.p, NULL, NULL, &s) == 0);
	CHECK(s == NULL);
	fx_free(&x);
}

static void test_no_cold(void)
{
	struct fixture x;
	struct step_analysis *s = NULL;
	size_t i;

	fx_init(&x);
	for (i = 0; i < 5; i++)
		fx_range(&x, CBN_RANGE_STEP, "step", i * 10 * MS, i * 10 * MS);
	for (i = 0; i < 40; i++)
		fx_sample(&x, i * MS + MS / 2, x.st_work);
	REQUIRE(steps_analyze(&x.b.p, NULL, NULL, &s) == 0);
	REQUIRE(s != NULL);
	/* 4 steps of 10 ms; the last marker has no samples after it */
	CHECK_EQ_INT(s->nsteps, 4);
	CHECK_EQ_INT(s->cold, 0);
	CHECK_EQ_INT(s->nfindings, 0);
	CHECK_EQ_INT(s->nslow, 0);
	steps_free(s);
	fx_free(&x);
}

static void test_windows(void)
{
	struct fixture x;
	struct step_analysis *s = NULL;

	fx_init(&x);
	fx_loop(&x);
	x.b.p.processes[x.proc].capture.mode = CBN_CAPTURE_CONTROLLED;
	x.b.p.processes[x.proc].capture.spec = "schedule=wait=1,warmup=1,active=3";
	x.b.p.processes[x.proc].capture.steps = 6;
	/* the schedule opened at the marker of 60 ms (a little after it) and
	 * closed at the one of 90 ms */
	fx_window(&x, 60 * MS + MS / 5, 90 * MS + MS / 100, 2);
	REQUIRE(steps_analyze(&x.b.p, NULL, NULL, &s) == 0);
	REQUIRE(s != NULL);
	REQUIRE(s->nsteps == 3);
	CHECK_EQ_INT(s->steps[0].number, 2);
	CHECK_EQ_INT(s->steps[1].number, 3);
	CHECK_EQ_INT(s->steps[2].number, 4);
	CHECK_EQ_INT(s->steps[0].start, 60 * MS);
	CHECK_EQ_INT(s->steps[2].end, 90 * MS);
	CHECK_EQ_INT(s->controlled, 1);
	CHECK_EQ_INT(s->window_ns, 30 * MS - MS / 5 + MS / 100);
	CHECK_EQ_INT(s->cold, 0);
	steps_free(s);

	/* a sample between the closing marker and the window's end is no step
	 * when the schedule closed it; it is one when something else did */
	x.b.p.windows[0].end = 91 * MS;
	REQUIRE(steps_analyze(&x.b.p, NULL, NULL, &s) == 0);
	REQUIRE(s != NULL);
	CHECK_EQ_INT(s->nsteps, 3);
	steps_free(s);
	x.b.p.windows[0].close_cause = CBN_CAUSE_API;
	REQUIRE(steps_analyze(&x.b.p, NULL, NULL, &s) == 0);
	REQUIRE(s != NULL);
	CHECK_EQ_INT(s->nsteps, 4);
	CHECK_EQ_INT(s->steps[3].number, 5);
	CHECK_EQ_INT(s->steps[3].end, 91 * MS);
	steps_free(s);

	/* a controlled run without a window recorded nothing */
	x.b.p.nwindows = 0;
	REQUIRE(steps_analyze(&x.b.p, NULL, NULL, &s) == 0);
	CHECK(s == NULL);
	fx_free(&x);
}

static void test_ranges(void)
{
	struct fixture x;
	struct step_analysis *s = NULL;

	fx_init(&x);
	fx_loop(&x);
	fx_range(&x, CBN_RANGE_PUSHPOP, "train_step", 0, 40 * MS);
	fx_range(&x, CBN_RANGE_PUSHPOP, "train_step", 1 * MS, 2 * MS); /* nested */
	fx_range(&x, CBN_RANGE_PUSHPOP, "load", 41 * MS, 49 * MS);
	fx_range(&x, CBN_RANGE_PUSHPOP, "train_step", 60 * MS, 68 * MS);
	fx_range(&x, CBN_RANGE_PUSHPOP, "train_step", 50 * MS, 58 * MS);
	/* --step names them: they win over the cbn_step() markers */
	REQUIRE(steps_analyze(&x.b.p, "^train", NULL, &s) == 0);
	REQUIRE(s != NULL);
	CHECK_EQ_INT(s->source, STEP_SRC_RANGE);
	CHECK_STR(s->what, "ranges matching '^train'");
	REQUIRE(s->nsteps == 3);
	CHECK_EQ_INT(s->steps[0].number, 0);
	CHECK_EQ_INT(s->steps[1].start, 50 * MS);
	CHECK_EQ_INT(s->steps[2].number, 2);
	CHECK_EQ_INT(s->steps[0].cpu_ns, 40 * MS);
	CHECK_EQ_INT(s->cold, 1);
	steps_free(s);

	/* a regex nothing matches: back to the markers */
	REQUIRE(steps_analyze(&x.b.p, "^nothing$", NULL, &s) == 0);
	REQUIRE(s != NULL);
	CHECK_EQ_INT(s->source, STEP_SRC_MARKER);
	CHECK_STR(s->what, "cbn_step() (--step ^nothing$ gave fewer than two steps)");
	CHECK_EQ_INT(s->nsteps, 6);
	steps_free(s);

	/* marks matching --step are markers */
	fx_range(&x, CBN_RANGE_MARK, "iter", 10 * MS, 10 * MS);
	fx_range(&x, CBN_RANGE_MARK, "iter", 30 * MS, 30 * MS);
	fx_range(&x, CBN_RANGE_MARK, "iter", 40 * MS, 40 * MS);
	REQUIRE(steps_analyze(&x.b.p, "iter", NULL, &s) == 0);
	REQUIRE(s != NULL);
	CHECK_EQ_INT(s->source, STEP_SRC_MARKER);
	CHECK_STR(s->what, "marks matching 'iter'");
	CHECK_EQ_INT(s->nsteps, 3); /* 10-30, 30-40, 40-end */
	steps_free(s);
	fx_free(&x);
}

static void test_func(void)
{
	struct fixture x;
	struct step_analysis *s = NULL;
	size_t i, k, t = 0;

	fx_init(&x);
	/* 3 runs in work: 5, 15, 5 samples, 2 samples of idle_fn between */
	for (k = 0; k < 3; k++) {
		for (i = 0; i < (k == 1 ? 15u : 5u); i++)
			fx_sample(&x, (t++) * MS, x.st_work);
		if (k < 2)
			for (i = 0; i < 2; i++)
				fx_sample(&x, (t++) * MS, x.st_idle);
	}
	REQUIRE(steps_analyze(&x.b.p, NULL, "work", &s) == 0);
	REQUIRE(s != NULL);
	CHECK_EQ_INT(s->source, STEP_SRC_FUNC);
	CHECK_STR(s->what, "function work");
	CHECK(s->precision != NULL && strstr(s->precision, "one sampling period") != NULL);
	REQUIRE(s->nsteps == 3);
	CHECK_EQ_INT(s->steps[0].start, 0);
	CHECK_EQ_INT(s->steps[0].end, 5 * MS);
	CHECK_EQ_INT(s->steps[1].start, 7 * MS);
	CHECK_EQ_INT(s->steps[1].end, 22 * MS);
	CHECK_EQ_INT(s->steps[2].start, 24 * MS);
	CHECK_EQ_INT(s->steps[2].end, 28 * MS); /* the thread's last sample */
	CHECK_EQ_INT(s->steps[1].cpu_ns, 15 * MS);
	REQUIRE(s->nslow == 1);
	CHECK_EQ_INT(s->slow[0].step, 1);
	steps_free(s);

	/* a function nobody runs: no steps */
	REQUIRE(steps_analyze(&x.b.p, NULL, "nowhere", &s) == 0);
	CHECK(s == NULL);
	fx_free(&x);
}

/* 4 calls of work, 10 samples 1 ms apart each, 25 ms off the CPU between
 * them (a sleep outside the function, nothing sampled); with stop_ms, a
 * stop of that many ms after every other sample inside the calls too. */
static void fx_sleepy(struct fixture *x, uint64_t stop_ms)
{
	uint64_t t = 0;
	size_t k, i;

	for (k = 0; k < 4; k++) {
		for (i = 0; i < 10; i++) {
			t += MS + (i && i % 2 == 0 ? stop_ms * MS : 0);
			fx_sample(x, t, x->st_work);
		}
		t += 25 * MS;
	}
	x->b.p.env.found = 1;
	x->b.p.env.cpus = 2;
	x->b.p.env.load[0] = 0.5;
}

/* --step-func where no look says where the thread was: a stretch off the CPU
 * ends a call, unless the stretches may be waits for a CPU (a loaded
 * machine, many 1-10 ms stops, mostly runnable off the CPU): then no steps,
 * and a data-quality line says why. */
static void test_func_gaps(void)
{
	struct fixture x;
	struct step_analysis *s = NULL;
	struct prof_offcpu *r;
	char *note = NULL;

	/* an idle machine, no looks: 4 calls */
	fx_init(&x);
	fx_sleepy(&x, 0);
	REQUIRE(steps_analyze(&x.b.p, NULL, "work", &s) == 0);
	REQUIRE(s != NULL);
	CHECK_EQ_INT(s->source, STEP_SRC_FUNC);
	CHECK_EQ_INT(s->nsteps, 4);
	CHECK(strstr(s->precision, "3 by a stretch of over 10 ms off the CPU") != NULL);
	CHECK(strstr(s->precision, "no stretch off the CPU ends a call") == NULL);
	CHECK(s->between_ns >= 3 * 25 * MS);
	steps_free(s);
	REQUIRE(steps_func_note(&x.b.p, "work", &note) == 0);
	CHECK(note == NULL);

	/* the machine's load at start at least its CPUs: no stretch ends a
	 * call, so one call and no steps, and the note says why */
	x.b.p.env.load[0] = 2.5;
	REQUIRE(steps_analyze(&x.b.p, NULL, "work", &s) == 0);
	CHECK(s == NULL);
	REQUIRE(steps_func_note(&x.b.p, "work", &note) == 0);
	REQUIRE(note != NULL);
	CHECK(strstr(note, "--step-func work: its samples on thread 100 make one call, so no "
			   "steps; no stretch off the CPU ends a call: the machine was loaded "
			   "(load 2.50 on 2 CPUs at start)") != NULL);
	free(note);
	REQUIRE(steps_func_note(&x.b.p, "nowhere", &note) == 0);
	CHECK(note != NULL && strstr(note, "no sample was in a function of that name") != NULL);
	free(note);
	fx_free(&x);

	/* an idle machine at start, but the thread stopped 3 ms after every
	 * other sample: waits for a CPU, no stretch ends a call */
	fx_init(&x);
	fx_sleepy(&x, 3);
	REQUIRE(steps_analyze(&x.b.p, NULL, "work", &s) == 0);
	CHECK(s == NULL);
	REQUIRE(steps_func_note(&x.b.p, "work", &note) == 0);
	CHECK(note != NULL && strstr(note, "the thread stopped for 1-10 ms after 16 of its 40 "
					   "samples") != NULL);
	free(note);
	fx_free(&x);

	/* looks that kept up and saw nothing between the calls: no stretch
	 * ends a call (they would have seen a wait outside it) */
	fx_init(&x);
	fx_sleepy(&x, 0);
	x.b.p.processes[x.proc].offcpu.state = CBN_OFFCPU_ON;
	x.b.p.processes[x.proc].offcpu.rate_hz = 100;
	x.b.p.processes[x.proc].offcpu.ticks = 100;
	x.b.p.processes[x.proc].offcpu.late_ns = 100 * MS; /* 1 ms late on average */
	REQUIRE(steps_analyze(&x.b.p, NULL, "work", &s) == 0);
	CHECK(s == NULL);
	/* looks that fell behind (30 ms late on average): the stretches
	 * decide, when the thread was not mostly waiting for a CPU */
	x.b.p.processes[x.proc].offcpu.late_ns = 3000 * MS;
	REQUIRE(steps_analyze(&x.b.p, NULL, "work", &s) == 0);
	REQUIRE(s != NULL);
	CHECK_EQ_INT(s->nsteps, 4);
	CHECK(strstr(s->precision, "the off-CPU sampler fell behind, its looks 30.0 ms late on "
				   "average (a loaded machine): where none said, a stretch of over "
				   "10 ms off the CPU ended a call") != NULL);
	steps_free(s);
	/* ... and when it was (schedstat's run delay: 60 of its 75 ms off
	 * the CPU), they do not */
	r = PB_SLOT(x.b.p.offcpu, x.b.p.noffcpu);
	REQUIRE(r);
	memset(r, 0, sizeof(*r));
	r->start = 0;
	r->end = 200 * MS;
	r->weight_ns = 60 * MS;
	r->process = x.proc;
	r->thread = x.thread;
	r->stack = UINT32_MAX;
	r->kind = CBN_OFF_RUNQ;
	r->flags = CBN_OFFCPU_NO_STACK;
	REQUIRE(steps_analyze(&x.b.p, NULL, "work", &s) == 0);
	CHECK(s == NULL);
	REQUIRE(steps_func_note(&x.b.p, "work", &note) == 0);
	CHECK(note != NULL && strstr(note, "80 % of the thread's time off the CPU was spent "
					   "waiting for a CPU") != NULL);
	free(note);
	pb_drop(x.b.p.offcpu);
	fx_free(&x);
}

static void test_gpu_mem(void)
{
	struct fixture x;
	struct step_analysis *s = NULL;
	struct prof_gpu_op *g;
	struct prof_mem_counter *c;
	size_t i;

	fx_init(&x);
	fx_loop(&x);
	/* two overlapping kernels and a copy in step 1 (50-60 ms), one kernel
	 * straddling steps 2 and 3 */
	x.b.p.gpu_ops = calloc(4, sizeof(*g));
	x.b.p.ngpu_ops = 4;
	g = x.b.p.gpu_ops;
	g[0] = (struct prof_gpu_op){.kind = PROF_GPU_KERNEL, .process = x.proc, .start = 51 * MS,
				    .end = 54 * MS, .name = "k1"};
	g[1] = (struct prof_gpu_op){.kind = PROF_GPU_KERNEL, .process = x.proc, .start = 53 * MS,
				    .end = 55 * MS, .name = "k2"};
	g[2] = (struct prof_gpu_op){.kind = PROF_GPU_MEMCPY, .process = x.proc, .start = 56 * MS,
				    .end = 57 * MS, .name = "[CUDA memcpy HtoD]"};
	g[3] = (struct prof_gpu_op){.kind = PROF_GPU_KERNEL, .process = x.proc, .start = 68 * MS,
				    .end = 72 * MS, .name = "k1"};
	x.b.p.mem_counters = calloc(3, sizeof(*c));
	x.b.p.nmem_counters = 3;
	for (i = 0; i < 3; i++)
		x.b.p.mem_counters[i] = (struct prof_mem_counter){.ts = (52 + 2 * i) * MS,
								  .host_live = (int64_t)(i + 1) << 20,
								  .process = x.proc};
	/* without CUPTI sync records: the API calls that synchronize */
	x.b.p.cuda_api = calloc(2, sizeof(*x.b.p.cuda_api));
	x.b.p.ncuda_api = 2;
	x.b.p.cuda_api[0] = (struct prof_cuda_api){.start = 52 * MS, .end = 58 * MS,
						   .process = x.proc, .name = "cudaDeviceSynchronize"};
	x.b.p.cuda_api[1] = (struct prof_cuda_api){.start = 51 * MS, .end = 52 * MS,
						   .process = x.proc, .name = "cudaLaunchKernel"};
	REQUIRE(steps_analyze(&x.b.p, NULL, NULL, &s) == 0);
	REQUIRE(s != NULL && s->nsteps == 6);
	CHECK_EQ_INT(s->steps[1].sync_ns, 6 * MS);
	CHECK_EQ_INT(s->steps[2].sync_ns, 0);
	steps_free(s);
	/* with them, they are the sync wait */
	x.b.p.syncs = calloc(1, sizeof(*x.b.p.syncs));
	x.b.p.nsyncs = 1;
	x.b.p.syncs[0] = (struct prof_cuda_sync){.start = 59 * MS, .end = 62 * MS, .process = x.proc};
	REQUIRE(steps_analyze(&x.b.p, NULL, NULL, &s) == 0);
	REQUIRE(s != NULL && s->nsteps == 6);
	CHECK_EQ_INT(s->steps[1].sync_ns, 1 * MS);
	CHECK_EQ_INT(s->steps[2].sync_ns, 2 * MS);
	CHECK_EQ_INT(s->steps[1].gpu_busy_ns, 5 * MS);
	CHECK_EQ_INT(s->steps[1].kernels, 2);
	CHECK_EQ_INT(s->steps[1].copies, 1);
	CHECK_EQ_INT(s->steps[1].mem_peak, 3u << 20);
	CHECK_EQ_INT(s->steps[2].gpu_busy_ns, 2 * MS);
	CHECK_EQ_INT(s->steps[2].kernels, 1);
	CHECK_EQ_INT(s->steps[3].gpu_busy_ns, 2 * MS);
	CHECK_EQ_INT(s->steps[3].kernels, 0);
	CHECK_EQ_INT(s->steps[0].mem_peak, 0);
	steps_free(s);
	fx_free(&x);
}

static void test_text(void)
{
	struct fixture x;
	struct analysis an;
	struct analysis_opts ao = {0};
	struct report_opts ro = {NULL, 3, 0, 0};
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	fx_init(&x);
	fx_loop(&x);
	REQUIRE(analysis_run(&x.b.p, &ao, &an) == 0);
	REQUIRE(an.steps != NULL);
	f = open_memstream(&buf, &len);
	REQUIRE(f != NULL);
	CHECK(report_steps_text(f, &an, &ro) == 0);
	fclose(f);
	CHECK(strstr(buf, "Steps: 6 from cbn_step()") != NULL);
	CHECK(strstr(buf, "(3 more steps: ") != NULL && strstr(buf, " of the steps' time; use --limit)"));
	CHECK(strstr(buf, "Step time: min 10.000ms, median 10.000ms, p90 50.000ms, max 50.000ms") !=
	      NULL);
	CHECK(strstr(buf, "step 1: 50.000ms, 5.0x the median") != NULL);
	CHECK(strstr(buf, "cold_fn") != NULL);
	CHECK(strstr(buf, "[cold-start]") != NULL);
	CHECK(strstr(buf, "GPU busy") == NULL);
	CHECK(strstr(buf, "Captured:") == NULL);
	if (test_failures)
		fputs(buf, stderr);
	free(buf);
	analysis_free(&an);

	/* with controls: what was captured */
	x.b.p.processes[x.proc].capture.mode = CBN_CAPTURE_CONTROLLED;
	x.b.p.processes[x.proc].capture.spec = "schedule=wait=1,warmup=1,active=3";
	x.b.p.processes[x.proc].capture.steps = 8;
	x.b.p.wall_ns = 100 * MS;
	fx_window(&x, 60 * MS, 90 * MS + 1000, 2);
	REQUIRE(analysis_run(&x.b.p, &ao, &an) == 0);
	ro.quiet = 1; /* no header: the section says it */
	buf = NULL;
	f = open_memstream(&buf, &len);
	REQUIRE(f != NULL);
	CHECK(report_steps_text(f, &an, &ro) == 0);
	fclose(f);
	CHECK(strstr(buf, "Captured: 1 window, 30.001ms of the 100.000ms run (schedule "
			  "wait=1,warmup=1,active=3)") != NULL);
	CHECK(strstr(buf, "Steps: 8 from cbn_step(), 3 recorded (schedule wait=1,warmup=1,active=3)") !=
	      NULL);
	if (test_failures)
		fputs(buf, stderr);
	free(buf);
	analysis_free(&an);
	fx_free(&x);
}

int main(void)
{
	test_markers();
	test_no_cold();
	test_windows();
	test_ranges();
	test_func();
	test_func_gaps();
	test_gpu_mem();
	test_text();
	return test_result();
}
