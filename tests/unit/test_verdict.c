/*
 * test_verdict.c — the run's one verdict (analysis/verdict.c) from hand-made
 * views: a GPU idle while one thread launches is launch-bound on that thread
 * (not "compute-bound" beside "overhead-bound"); a busy GPU is GPU-bound with
 * its heaviest kernel; an idle GPU behind a waiting host says so; without a
 * GPU the CPU side names where the CPU went (a function, the kernel, the
 * allocator) and adds the memory rules that matter; too little data gives no
 * verdict.
 */
#include <stdlib.h>
#include <string.h>

#include "testlib.h"
#include "analysis/analysis.h"
#include "analysis/cpu.h"
#include "analysis/cuda_analysis.h"
#include "analysis/memory.h"
#include "analysis/wait.h"

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
static struct rule_finding recos[1];

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
	CHECK_EQ_INT(verdict_run(&a), 0);
	CHECK_STR(a.verdict.kind, "waiting");
	CHECK(a.verdict.text && strstr(a.verdict.text, "waiting: the GPU was idle 70 % of the time; "
						       "the host: the threads are off the CPU") &&
	      strstr(a.verdict.text, "blocked in I/O"));
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
	CHECK(a.verdict.text && strstr(a.verdict.text, "; 20 % of the CPU in the allocator, "
						       "alloc-churn"));
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

int main(void)
{
	test_launch_bound();
	test_gpu_bound();
	test_gpu_waits_for_host();
	test_cpu();
	return test_result();
}
