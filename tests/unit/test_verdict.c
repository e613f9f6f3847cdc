/*
 * test_verdict.c — the run's one verdict (analysis/verdict.c) from hand-made
 * views: a GPU idle while one thread launches is launch-bound on that thread
 * (not "compute-bound" beside "overhead-bound"); a busy GPU is GPU-bound with
 * its heaviest kernel; an idle GPU behind a waiting host says so; without a
 * GPU the CPU side names where the CPU went (a function, the kernel, the
 * allocator) and adds the memory rules that matter, each once with its
 * count; "waiting" only when the busy threads were off the CPU more than on
 * it; a run of several programs (a build) names the program first and the
 * machine's CPUs; too little data gives no verdict.
 */
#include <stdlib.h>
#include <string.h>

#include "testlib.h"
#include "analysis.h"
#include "cpu.h"
#include "cuda_analysis.h"
#include "memory.h"
#include "programs.h"
#include "wait.h"

#define MS 1000000ull

static struct prof_func funcs[2] = {
	{.name = "heavy", .file = "a.c", .line = 3, .module = "a.out"},
	{.name = "[kernel] vfs_read", .file = "", .module = "kernel"},
};
static struct prof_thread threads[2] = {
	{.tid = 100, .name = "main"},
	{.tid = 101, .name = "loader"},
};
static struct prof_cuda_api api[8];
static struct prof_gpu_op ops[1];
static struct cpu_func cfuncs[2];
static struct cpu_profile cpu;
static struct wait_analysis wait;
static struct cuda_analysis cuda;
static struct cuda_kernel_row kernels[1];
static struct mem_analysis mem;
static struct rule_finding recos[4];

static void setup(struct profile *p, struct analysis *a)
{
	memset(p, 0, sizeof(*p));
	memset(a, 0, sizeof(*a));
	memset(&cpu, 0, sizeof(cpu));
	memset(&wait, 0, sizeof(wait));
	memset(&cuda, 0, sizeof(cuda));
	p->funcs = funcs;
	p->nfuncs = 2;
	p->threads = threads;
	p->nthreads = 2;
	p->wall_ns = 1000 * MS;
	/* the CPU: heavy has 75 % of it, the kernel's row the rest */
	cfuncs[0] = (struct cpu_func){.func = 1, .self_ns = 250 * MS};
	cfuncs[1] = (struct cpu_func){.func = 0, .self_ns = 750 * MS};
	cpu.funcs = cfuncs;
	cpu.nfuncs = 2;
	cpu.cpu_ns = 1000 * MS;
	cpu.samples = 1000;
	wait.verdict = WAIT_V_COMPUTE;
	wait.efficiency = 0.9;
	wait.busy_threads = 1;
	wait.busy_at_once = 1;
	wait.usable = 1;
	wait.of_cpu[WAIT_ACT_KERNEL] = 0.25;
	wait.of_cpu[WAIT_ACT_COMPUTE] = 0.75;
	a->profile = p;
	a->cpu = &cpu;
	a->wait = &wait;
}

/* The GPU: one kernel op, utilization u over a 1 s window; thread t made
 * launch calls covering launch_ms of it (two overlapping calls per launch:
 * the runtime's and the driver's, counted once), and a sync call. */
static void with_gpu(struct profile *p, struct analysis *a, double u, uint32_t t, int launch_ms)
{
	int i, n = 0;

	ops[0] = (struct prof_gpu_op){.kind = PROF_GPU_KERNEL, .start = 0, .end = 1000 * MS};
	p->gpu_ops = ops;
	p->ngpu_ops = 1;
	for (i = 0; i < 3; i++) {
		uint64_t s = (uint64_t)i * 300 * MS, e = s + (uint64_t)launch_ms / 3 * MS;

		api[n++] = (struct prof_cuda_api){.start = s, .end = e, .thread = t,
						  .name = "cudaLaunchKernel"};
		api[n++] = (struct prof_cuda_api){.start = s + MS, .end = e - MS, .thread = t,
						  .name = "cuLaunchKernel"};
	}
	/* the other thread waits a long time: no launch */
	api[n++] = (struct prof_cuda_api){.start = 0, .end = 900 * MS, .thread = 1 - t,
					  .name = "cudaDeviceSynchronize"};
	p->cuda_api = api;
	p->ncuda_api = (size_t)n;
	cuda.ov.gpu_utilization = u;
	cuda.ov.window_ns = 1000 * MS;
	cuda.ov.verdict = u >= 0.8 ? "compute-bound" : "mixed";
	kernels[0] = (struct cuda_kernel_row){.name = "gemm_kernel", .display = "gemm",
					      .time_pct = 80.0};
	cuda.kernels = kernels;
	cuda.nkernels = 1;
	a->cuda = &cuda;
}

static void test_launch_bound(void)
{
	struct profile p;
	struct analysis a;

	setup(&p, &a);
	with_gpu(&p, &a, 0.3, 0, 630);
	CHECK_EQ_INT(verdict_run(&a), 0);
	REQUIRE(a.verdict.text != NULL);
	CHECK_STR(a.verdict.kind, "launch-bound");
	CHECK(strstr(a.verdict.text, "launch-bound on thread main (tid 100): the GPU was idle 70 % "
				     "of the time while that thread spent 63 % of it") != NULL);
	verdict_free(&a);
	/* the CUDA overview's own verdict says so too: it is enough */
	setup(&p, &a);
	with_gpu(&p, &a, 0.3, 1, 90);
	cuda.ov.verdict = "overhead-bound";
	CHECK_EQ_INT(verdict_run(&a), 0);
	CHECK(a.verdict.text && strstr(a.verdict.text, "on thread loader (tid 101)") != NULL);
	verdict_free(&a);
}

static void test_gpu_bound(void)
{
	struct profile p;
	struct analysis a;

	setup(&p, &a);
	with_gpu(&p, &a, 0.92, 0, 90);
	CHECK_EQ_INT(verdict_run(&a), 0);
	CHECK_STR(a.verdict.kind, "GPU-bound");
	CHECK(a.verdict.text && strstr(a.verdict.text, "GPU-bound: the GPU was busy 92 % of the "
						       "time; most in gemm (80 % of kernel time)"));
	verdict_free(&a);
}

static void test_gpu_waits_for_host(void)
{
	struct profile p;
	struct analysis a;

	setup(&p, &a);
	with_gpu(&p, &a, 0.3, 0, 90); /* launches: 9 % of the window */
	wait.verdict = WAIT_V_IO;
	wait.verdict_text = "I/O-bound: 60 % of the busy threads' time blocked in I/O";
	wait.busy_off_share = 0.6;
	wait.busy_on_share = 0.3;
	CHECK_EQ_INT(verdict_run(&a), 0);
	CHECK_STR(a.verdict.kind, "waiting");
	CHECK(a.verdict.text && strstr(a.verdict.text, "waiting: the GPU was idle 70 % of the time; "
						       "the host: the busy threads were off the CPU 60 "
						       "% of their time, on it 30 %") &&
	      strstr(a.verdict.text, "blocked in I/O"));
	verdict_free(&a);
	/* waiting that is less than the time on the CPU is a clause of the
	 * CPU's answer, not the answer: "waiting" would not be true */
	setup(&p, &a);
	wait.verdict = WAIT_V_SYNC;
	wait.verdict_text = "synchronization-bound: 20 % of the busy threads' time waiting";
	wait.busy_off_share = 0.2;
	wait.busy_on_share = 0.75;
	CHECK_EQ_INT(verdict_run(&a), 0);
	CHECK_STR(a.verdict.kind, "CPU-bound");
	CHECK(a.verdict.text && !strcmp(a.verdict.text, "CPU-bound: 75 % of the CPU in heavy (a.c:3); "
							"parallel efficiency 90 % on 1 busy thread; the "
							"threads also waited: synchronization-bound: 20 "
							"% of the busy threads' time waiting"));
	verdict_free(&a);
	/* the host computing instead: CPU-bound, with where */
	setup(&p, &a);
	with_gpu(&p, &a, 0.3, 0, 90);
	CHECK_EQ_INT(verdict_run(&a), 0);
	CHECK(a.verdict.text && strstr(a.verdict.text, "CPU-bound: the GPU was idle 70 % of the "
						       "time; the host: 75 % of the CPU in heavy "
						       "(a.c:3)"));
	verdict_free(&a);
}

static void test_cpu(void)
{
	struct profile p;
	struct analysis a;

	setup(&p, &a);
	CHECK_EQ_INT(verdict_run(&a), 0);
	CHECK_STR(a.verdict.kind, "CPU-bound");
	/* the kernel's row is not "the program's" hottest function */
	CHECK(a.verdict.text && !strcmp(a.verdict.text, "CPU-bound: 75 % of the CPU in heavy "
						       "(a.c:3); parallel efficiency 90 % on 1 busy "
						       "thread"));
	verdict_free(&a);

	setup(&p, &a);
	wait.verdict = WAIT_V_KERNEL;
	wait.of_cpu[WAIT_ACT_KERNEL] = 0.78;
	CHECK_EQ_INT(verdict_run(&a), 0);
	CHECK(a.verdict.text && !strcmp(a.verdict.text, "CPU-bound in the kernel: 78 % of the CPU "
						       "in system calls and page faults"));
	verdict_free(&a);

	/* memory evidence joins in: the allocator's share, the memory rules */
	setup(&p, &a);
	wait.of_cpu[WAIT_ACT_ALLOC] = 0.2;
	recos[0] = (struct rule_finding){.id = "alloc-churn"};
	mem.recos = recos;
	mem.nrecos = 1;
	a.memory = &mem;
	CHECK_EQ_INT(verdict_run(&a), 0);
	CHECK(a.verdict.text && strstr(a.verdict.text, "; 20 % of the CPU in the allocator; "
						       "memory: alloc-churn"));
	verdict_free(&a);
	/* a rule that fired for three sites is named once, with its count */
	setup(&p, &a);
	recos[0] = (struct rule_finding){.id = "alloc-churn"};
	recos[1] = (struct rule_finding){.id = "leak-growing"};
	recos[2] = (struct rule_finding){.id = "alloc-churn"};
	recos[3] = (struct rule_finding){.id = "alloc-churn"};
	mem.nrecos = 4;
	a.memory = &mem;
	CHECK_EQ_INT(verdict_run(&a), 0);
	CHECK(a.verdict.text && strstr(a.verdict.text, "; memory: alloc-churn \xc3\x97" "3, "
						       "leak-growing") &&
	      !strstr(a.verdict.text, "leak-growing \xc3\x97"));
	verdict_free(&a);

	/* too little data */
	setup(&p, &a);
	cpu.samples = 5;
	CHECK_EQ_INT(verdict_run(&a), 0);
	CHECK(a.verdict.text == NULL);
	CHECK_STR(a.verdict.kind, "");
	setup(&p, &a);
	wait.verdict = WAIT_V_NONE;
	CHECK_EQ_INT(verdict_run(&a), 0);
	CHECK(a.verdict.text == NULL);
}

/* A build: the compilers hold the CPU, 25 processes of them, two at a time
 * on the machine's 2 CPUs. */
static void test_programs(void)
{
	static struct program progs[3] = {
		{.name = "cc1", .images = 25, .cpu_ns = 820 * MS, .top_func = 0,
		 .top_func_ns = 150 * MS},
		{.name = "as", .images = 25, .cpu_ns = 60 * MS, .top_func = PROF_NONE},
		{.name = "make", .images = 1, .cpu_ns = 20 * MS, .top_func = PROF_NONE},
	};
	static struct prog_analysis g = {.v = progs, .n = 3, .cpu_ns = 1000 * MS, .with_cpu = 3};
	struct profile p;
	struct analysis a;

	setup(&p, &a);
	a.programs = &g;
	wait.cpus = 2;
	wait.cores_used = 1.74;
	CHECK_EQ_INT(verdict_run(&a), 0);
	CHECK_STR(a.verdict.kind, "CPU-bound");
	CHECK(a.verdict.text && !strcmp(a.verdict.text, "CPU-bound: 82 % of the CPU in cc1 (25 "
							"processes), hottest function heavy (a.c:3) "
							"with 15 %; 6 % in as (25 processes); the run "
							"kept its 2 CPUs 87 % busy"));
	verdict_free(&a);
	/* its kernel share is said when it is much of the program's */
	progs[0].kernel_ns = 410 * MS;
	CHECK_EQ_INT(verdict_run(&a), 0);
	CHECK(a.verdict.text && strstr(a.verdict.text, "cc1 (25 processes), 50 % of it in the "
						       "kernel, hottest"));
	verdict_free(&a);
	progs[0].kernel_ns = 0;
	/* one program of one process that holds the run: the function first */
	progs[0].images = 1;
	progs[0].cpu_ns = 970 * MS;
	CHECK_EQ_INT(verdict_run(&a), 0);
	CHECK(a.verdict.text && !strncmp(a.verdict.text, "CPU-bound: 75 % of the CPU in heavy", 35));
	verdict_free(&a);
	/* ... when it is the command or what the command exec'd (a shim's
	 * interpreter in the same pid) */
	{
		static struct prof_process procs[3] = {
			{.pid = 10, .exe = "/usr/bin/gcc"},
			{.pid = 10, .exe = "/usr/lib/gcc/x86_64-linux-gnu/12/cc1", .exec_seq = 1},
			{.pid = 11, .exe = "/usr/bin/as"},
		};

		p.processes = procs;
		p.nprocesses = 3;
		CHECK_EQ_INT(verdict_run(&a), 0);
		CHECK(a.verdict.text &&
		      !strncmp(a.verdict.text, "CPU-bound: 75 % of the CPU in heavy", 35));
		verdict_free(&a);
		/* gcc -c: the driver's child cc1 holds the run, and is named
		 * first: the command's name is not the answer */
		procs[1].pid = 12;
		CHECK_EQ_INT(verdict_run(&a), 0);
		CHECK(a.verdict.text && !strcmp(a.verdict.text, "CPU-bound: 97 % of the CPU in cc1, "
								"hottest function heavy (a.c:3) "
								"with 15 %; 6 % in as (25 "
								"processes); the run kept its 2 "
								"CPUs 87 % busy"));
		verdict_free(&a);
	}
}

/* The hottest function is named as the CPU table names it (names_bare()),
 * its scope whole: once "namespace)::heavy", which no table shows. */
static void test_cpu_name(void)
{
	struct profile p;
	struct analysis a;

	setup(&p, &a);
	funcs[0].name = "(anonymous namespace)::heavy(int)";
	CHECK_EQ_INT(verdict_run(&a), 0);
	CHECK(a.verdict.text && !strcmp(a.verdict.text, "CPU-bound: 75 % of the CPU in (anonymous "
						       "namespace)::heavy (a.c:3); parallel efficiency "
						       "90 % on 1 busy thread"));
	funcs[0].name = "heavy";
	verdict_free(&a);
}

int main(void)
{
	test_programs();
	test_launch_bound();
	test_gpu_bound();
	test_gpu_waits_for_host();
	test_cpu();
	test_cpu_name();
	return test_result();
}
