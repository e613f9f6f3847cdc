/*
 * test_dist_gpu.c — dist_gpu_split() and dist_is_comm_kernel() on hand-built
 * profiles: the exact four-way split for disjoint, nested, overlapping,
 * multi-stream and multi-device ops, ops clipped to the window, a process
 * mask, no GPU ops, NCCL's NVTX ranges, and a brute-force check on random ops
 * (one window at a time and many at once).
 *
 * `test_dist_gpu load DIR` is the end-to-end half (tests/e2e/dist_nccl_sim.sh):
 * it loads a session of `cuda_workload nccl` and checks every step's split
 * against the simulation's truth (tests/cuda/workload.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist.h"
#include "load.h"
#include "profile.h"
#include "cuda/workload.h"
#include "test_profile_builder.h"
#include "testlib.h"

#define COMP "_Z4gemmPKfS0_Pf"
#define NCCL "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"

static void pb_init(struct profile *p, int nproc)
{
	memset(p, 0, sizeof(*p));
	for (int i = 0; i < nproc; i++) {
		struct prof_process pr = { .pid = 100 + (uint32_t)i, .exe = "/usr/bin/app" };
		struct prof_thread th = { .tid = 100 + (uint32_t)i, .process = (uint32_t)i };

		PB_ADD(p->processes, p->nprocesses, pr);
		PB_ADD(p->threads, p->nthreads, th);
	}
}

static uint32_t pb_op(struct profile *p, uint32_t kind, const char *name, uint32_t proc,
		      uint32_t device, uint32_t stream, uint64_t start, uint64_t end, uint32_t api)
{
	struct prof_gpu_op g = { .kind = kind, .name = name, .process = proc, .device = device,
				 .stream = stream, .start = start, .end = end, .api = api };

	PB_ADD(p->gpu_ops, p->ngpu_ops, g);
	return (uint32_t)p->ngpu_ops - 1;
}

static uint32_t pb_kernel(struct profile *p, const char *name, uint32_t stream, uint64_t start,
			  uint64_t end)
{
	return pb_op(p, PROF_GPU_KERNEL, name, 0, 0, stream, start, end, PROF_NONE);
}

static uint32_t pb_api(struct profile *p, uint32_t proc, uint32_t thread, uint64_t start)
{
	struct prof_cuda_api a = { .start = start, .end = start + 1, .thread = thread,
				   .process = proc, .name = "cudaLaunchKernel",
				   .correlation = (uint32_t)p->ncuda_api + 1, .stack = PROF_NONE };

	PB_ADD(p->cuda_api, p->ncuda_api, a);
	return (uint32_t)p->ncuda_api - 1;
}

static void pb_range(struct profile *p, uint32_t proc, uint32_t thread, uint32_t kind,
		     const char *domain, const char *name, uint64_t start, uint64_t end)
{
	struct prof_range r = { .start = start, .end = end, .thread = thread, .process = proc,
				.kind = kind, .source = CBN_SRC_NVTX, .domain = domain, .name = name };

	PB_ADD(p->ranges, p->nranges, r);
}

/* Checks one split: its four parts, and that they sum to the wall. */
#define CHECK_SPLIT(s, comp, ov, comm, other)                                              \
	do {                                                                               \
		CHECK_EQ_INT((s).computation_ns, (comp));                                  \
		CHECK_EQ_INT((s).overlap_ns, (ov));                                        \
		CHECK_EQ_INT((s).communication_ns, (comm));                                \
		CHECK_EQ_INT((s).other_ns, (other));                                       \
		CHECK_EQ_INT((s).computation_ns + (s).overlap_ns + (s).communication_ns +  \
				     (s).other_ns,                                         \
			     (s).wall_ns);                                                 \
	} while (0)

static void test_names(void)
{
	static const char *const comm[] = {
		NCCL,
		"ncclDevKernel_Generic",
		"ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)",
		"ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)",
		"ncclAllReduceRingLLKernel_sum_f32(ncclColl)",        /* NCCL 2.4 */
		"void ncclKernel_SendRecv<1>(ncclWorkElem)",
		"nccl",
		"rccl::ncclDevKernel_AllGather_RING_LL(int)",
		"_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE",
		"_ZN4comm13ncclAllGatherEv",
	};
	static const char *const comp[] = {
		"",
		"ncc",
		"_Z7kernelAPfi",
		"my_nccl_kernel",
		"gemm(ncclComm*)",
		"void foo<ncclX>(int)",
		"[CUDA memcpy DtoD]",
		"[CUDA memset]",
		"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float> >(int)",
		"_Z12my_nccl_funcv",
		"_Z99ncclTruncated",
		"_ZN4comm4gemmEP8ncclComm",
	};
	size_t i;

	for (i = 0; i < sizeof(comm) / sizeof(comm[0]); i++)
		if (dist_is_comm_kernel(comm[i]) != 1) {
			fprintf(stderr, "not communication: %s\n", comm[i]);
			CHECK(0);
		}
	for (i = 0; i < sizeof(comp) / sizeof(comp[0]); i++)
		if (dist_is_comm_kernel(comp[i]) != 0) {
			fprintf(stderr, "communication: %s\n", comp[i]);
			CHECK(0);
		}
	CHECK_EQ_INT(dist_is_comm_kernel(NULL), 0);
}

static void test_empty(void)
{
	struct profile p;
	struct dist_split s;

	pb_init(&p, 1);
	CHECK_EQ_INT(dist_gpu_split(&p, NULL, 0, 100, &s), 0);
	CHECK_EQ_INT(s.wall_ns, 100);
	CHECK_EQ_INT(s.gpu, 0);
	CHECK_EQ_INT(s.computation_ns + s.overlap_ns + s.communication_ns + s.other_ns, 0);
	/* zero-timestamp ops (unfinished at a forced flush) are not GPU time */
	pb_kernel(&p, COMP, 1, 0, 0);
	pb_kernel(&p, NCCL, 2, 50, 50);
	CHECK_EQ_INT(dist_gpu_split(&p, NULL, 0, 100, &s), 0);
	/* an empty or reversed window */
	pb_kernel(&p, COMP, 1, 10, 20);
	CHECK_EQ_INT(dist_gpu_split(&p, NULL, 50, 50, &s), 0);
	CHECK_EQ_INT(s.wall_ns, 0);
	CHECK_EQ_INT(dist_gpu_split(&p, NULL, 60, 50, &s), 0);
	CHECK_EQ_INT(s.wall_ns, 0);
	pb_profile_free(&p);
}

static void test_shapes(void)
{
	struct profile p;
	struct dist_split s;

	/* disjoint */
	pb_init(&p, 1);
	pb_kernel(&p, COMP, 1, 10, 20);
	pb_kernel(&p, NCCL, 2, 30, 50);
	CHECK_EQ_INT(dist_gpu_split(&p, NULL, 0, 100, &s), 1);
	CHECK_EQ_INT(s.gpu, 1);
	CHECK_SPLIT(s, 10, 0, 20, 70);
	pb_profile_free(&p);

	/* nested: a kernel inside another of its class, communication inside both */
	pb_init(&p, 1);
	pb_kernel(&p, COMP, 1, 10, 50);
	pb_kernel(&p, COMP, 3, 20, 30);
	pb_kernel(&p, NCCL, 2, 15, 25);
	CHECK_EQ_INT(dist_gpu_split(&p, NULL, 0, 100, &s), 1);
	CHECK_SPLIT(s, 30, 10, 0, 60);
	pb_profile_free(&p);

	/* partly overlapping, with a copy and a set counted as computation */
	pb_init(&p, 1);
	pb_kernel(&p, COMP, 1, 10, 40);
	pb_kernel(&p, NCCL, 2, 30, 60);
	pb_op(&p, PROF_GPU_MEMCPY, "[CUDA memcpy DtoD]", 0, 0, 1, 70, 75, PROF_NONE);
	pb_op(&p, PROF_GPU_MEMSET, "[CUDA memset]", 0, 0, 3, 55, 65, PROF_NONE);
	CHECK_EQ_INT(dist_gpu_split(&p, NULL, 0, 100, &s), 1);
	/* computation [10,40) [55,65) [70,75); communication [30,60) */
	CHECK_SPLIT(s, 20 + 10, 10 + 5, 15, 100 - 60);
	pb_profile_free(&p);

	/* multi-stream: computation on two streams overlapping each other,
	 * communication on two streams, the ops in no order */
	pb_init(&p, 1);
	pb_kernel(&p, NCCL, 5, 40, 45);
	pb_kernel(&p, COMP, 2, 20, 40);
	pb_kernel(&p, NCCL, 4, 35, 42);
	pb_kernel(&p, COMP, 1, 10, 30);
	CHECK_EQ_INT(dist_gpu_split(&p, NULL, 0, 100, &s), 1);
	/* computation [10,40), communication [35,45) */
	CHECK_SPLIT(s, 25, 5, 5, 65);
	pb_profile_free(&p);

	/* multi-device: the split is of the rank's time, not per device */
	pb_init(&p, 1);
	pb_op(&p, PROF_GPU_KERNEL, COMP, 0, 0, 7, 0, 10, PROF_NONE);
	pb_op(&p, PROF_GPU_KERNEL, NCCL, 0, 1, 7, 5, 15, PROF_NONE);
	pb_op(&p, PROF_GPU_KERNEL, COMP, 0, 1, 8, 12, 20, PROF_NONE);
	CHECK_EQ_INT(dist_gpu_split(&p, NULL, 0, 40, &s), 1);
	/* computation [0,10) [12,20), communication [5,15) */
	CHECK_SPLIT(s, 5 + 5, 5 + 3, 2, 20);
	pb_profile_free(&p);

	/* clipped to the window; touching its edges from outside is not in it */
	pb_init(&p, 1);
	pb_kernel(&p, COMP, 1, 0, 30);
	pb_kernel(&p, NCCL, 2, 50, 80);
	pb_kernel(&p, COMP, 1, 10, 20);
	pb_kernel(&p, NCCL, 2, 60, 90);
	pb_kernel(&p, COMP, 3, 70, 90);
	CHECK_EQ_INT(dist_gpu_split(&p, NULL, 20, 60, &s), 1);
	CHECK_EQ_INT(s.wall_ns, 40);
	CHECK_SPLIT(s, 10, 0, 10, 20);
	/* an op covering the whole window */
	CHECK_EQ_INT(dist_gpu_split(&p, NULL, 5, 25, &s), 1);
	CHECK_SPLIT(s, 20, 0, 0, 0);
	/* between ops */
	CHECK_EQ_INT(dist_gpu_split(&p, NULL, 30, 50, &s), 0);
	CHECK_EQ_INT(s.wall_ns, 20);
	pb_profile_free(&p);
}

static void test_mask(void)
{
	struct profile p;
	struct dist_split s;
	const uint8_t only0[2] = { 1, 0 }, only1[2] = { 0, 1 }, none[2] = { 0, 0 };

	pb_init(&p, 2);
	pb_op(&p, PROF_GPU_KERNEL, COMP, 0, 0, 1, 10, 30, PROF_NONE);
	pb_op(&p, PROF_GPU_KERNEL, NCCL, 0, 0, 2, 20, 40, PROF_NONE);
	pb_op(&p, PROF_GPU_KERNEL, NCCL, 1, 0, 2, 50, 90, PROF_NONE);
	pb_op(&p, PROF_GPU_KERNEL, COMP, 1, 0, 1, 0, 60, PROF_NONE);
	pb_op(&p, PROF_GPU_KERNEL, COMP, 7, 0, 1, 0, 100, PROF_NONE);  /* no such process */
	CHECK_EQ_INT(dist_gpu_split(&p, only0, 0, 100, &s), 1);
	CHECK_SPLIT(s, 10, 10, 10, 70);
	CHECK_EQ_INT(dist_gpu_split(&p, only1, 0, 100, &s), 1);
	CHECK_SPLIT(s, 50, 10, 30, 10);
	CHECK_EQ_INT(dist_gpu_split(&p, none, 0, 100, &s), 0);
	/* NULL: every process */
	CHECK_EQ_INT(dist_gpu_split(&p, NULL, 0, 100, &s), 1);
	/* computation [0,60), communication [20,40) [50,90) */
	CHECK_SPLIT(s, 30, 30, 30, 10);
	pb_profile_free(&p);
}

static void test_nvtx(void)
{
	struct profile p;
	struct dist_split s;
	uint32_t t1;

	pb_init(&p, 2);
	t1 = 2;
	PB_ADD(p.threads, p.nthreads, ((struct prof_thread){ .tid = 101, .process = 0 }));
	/* NCCL's push/pop range on thread 0 around [100, 200) of host time */
	pb_range(&p, 0, 0, CBN_RANGE_PUSHPOP, "NCCL", "ncclAllReduce", 100, 200);
	/* launched inside it on its thread: communication, whatever its name */
	pb_op(&p, PROF_GPU_KERNEL, "_Z6reducePf", 0, 0, 2, 1000, 1010, pb_api(&p, 0, 0, 150));
	/* a copy launched inside it too */
	pb_op(&p, PROF_GPU_MEMCPY, "[CUDA memcpy DtoD]", 0, 0, 2, 1010, 1020, pb_api(&p, 0, 0, 160));
	/* same time, another thread: computation */
	pb_op(&p, PROF_GPU_KERNEL, "_Z6reducePf", 0, 0, 1, 1030, 1040, pb_api(&p, 0, t1, 150));
	/* its thread, after the range: computation */
	pb_op(&p, PROF_GPU_KERNEL, "_Z6reducePf", 0, 0, 1, 1040, 1050, pb_api(&p, 0, 0, 200));
	/* a range named like NCCL in the default domain does not count */
	pb_range(&p, 0, 0, CBN_RANGE_PUSHPOP, "", "ncclAllGather", 300, 400);
	pb_op(&p, PROF_GPU_KERNEL, "_Z6gatherPf", 0, 0, 2, 1050, 1060, pb_api(&p, 0, 0, 350));
	/* a start/end range (may end on another thread) counts for the process */
	pb_range(&p, 0, t1, CBN_RANGE_STARTEND, "NCCL", "ncclGroup", 500, 600);
	pb_op(&p, PROF_GPU_KERNEL, "_Z4sendPf", 0, 0, 2, 1060, 1070, pb_api(&p, 0, 0, 550));
	/* nested NCCL ranges on one thread merge */
	pb_range(&p, 0, 0, CBN_RANGE_PUSHPOP, "NCCL", "ncclGroupEnd", 700, 800);
	pb_range(&p, 0, 0, CBN_RANGE_PUSHPOP, "NCCL", "ncclSend", 710, 720);
	pb_op(&p, PROF_GPU_KERNEL, "_Z4sendPf", 0, 0, 2, 1070, 1080, pb_api(&p, 0, 0, 790));
	/* process 1's NCCL range does not reach process 0's launches */
	pb_range(&p, 1, 1, CBN_RANGE_PUSHPOP, "NCCL", "ncclAllReduce", 0, 2000);
	pb_op(&p, PROF_GPU_KERNEL, "_Z6reducePf", 0, 0, 1, 1080, 1090, pb_api(&p, 0, 0, 900));

	CHECK_EQ_INT(dist_gpu_split(&p, NULL, 1000, 1100, &s), 1);
	/* communication [1000,1020) [1060,1080); computation [1030,1060) [1080,1090) */
	CHECK_SPLIT(s, 40, 0, 40, 20);
	pb_profile_free(&p);
}

/* dist_gpu_split_many over windows that overlap, nest, touch, lie outside
 * the ops or are empty, each against the count and against dist_gpu_split. */
static void check_many(const struct profile *p, const uint8_t *comp, const uint8_t *comm,
		       uint64_t span)
{
	static const uint64_t t0[] = { 0, 0, 100, 150, 400, 400, 999, 500, 1000, 2000, 300 };
	static const uint64_t t1[] = { 1000, 1, 200, 160, 600, 400, 1000, 300, 1500, 3000, 900 };
	enum { NW = sizeof(t0) / sizeof(t0[0]) };
	struct dist_split s[NW], one;
	int gpu = 0;

	CHECK(dist_gpu_split_many(p, NULL, t0, t1, NW, s) >= 0);
	for (size_t w = 0; w < NW; w++) {
		uint64_t c = 0, o = 0, m = 0, x = 0;
		int any = 0;

		for (uint64_t t = t0[w]; t < t1[w]; t++) {
			int a = t < span && comp[t], b = t < span && comm[t];

			o += a && b;
			c += a && !b;
			m += b && !a;
			x += !a && !b;
			any |= a || b;
		}
		CHECK_EQ_INT(s[w].wall_ns, t1[w] > t0[w] ? t1[w] - t0[w] : 0);
		CHECK_EQ_INT(s[w].gpu, any);
		if (any)
			CHECK_SPLIT(s[w], c, o, m, x);
		CHECK_EQ_INT(dist_gpu_split(p, NULL, t0[w], t1[w], &one), any);
		CHECK(memcmp(&one, &s[w], sizeof(one)) == 0);
		gpu += any;
	}
	CHECK_EQ_INT(dist_gpu_split_many(p, NULL, t0, t1, NW, s), gpu);
}

/* Random ops against a nanosecond-by-nanosecond count. */
static void test_random(void)
{
	enum { SPAN = 1000, NOPS = 300 };
	static uint8_t comp[SPAN], comm[SPAN];
	const char *const names[] = { COMP, NCCL, "[CUDA memcpy HtoD]", "ncclKernel_Broadcast" };
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	int round;

	for (round = 0; round < 20; round++) {
		struct profile p;
		struct dist_split s;
		uint64_t t0 = 100 + (uint64_t)round * 7, t1 = 900 - (uint64_t)round * 11;
		uint64_t c = 0, o = 0, m = 0, x = 0, t;

		memset(comp, 0, sizeof(comp));
		memset(comm, 0, sizeof(comm));
		pb_init(&p, 1);
		for (int i = 0; i < NOPS; i++) {
			uint64_t a, len;
			int k;

			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			a = (seed >> 33) % SPAN;
			len = 1 + (seed >> 20) % (round < 10 ? 8 : 60);
			k = (int)((seed >> 11) % 4);
			if (a + len > SPAN)
				len = SPAN - a;
			pb_op(&p, k == 2 ? PROF_GPU_MEMCPY : PROF_GPU_KERNEL, names[k], 0, 0,
			      (uint32_t)k, a, a + len, PROF_NONE);
			for (t = a; t < a + len; t++) {
				if (k == 1 || k == 3)
					comm[t] = 1;
				else
					comp[t] = 1;
			}
		}
		for (t = t0; t < t1; t++) {
			if (comp[t] && comm[t])
				o++;
			else if (comp[t])
				c++;
			else if (comm[t])
				m++;
			else
				x++;
		}
		CHECK_EQ_INT(dist_gpu_split(&p, NULL, t0, t1, &s), 1);
		CHECK_SPLIT(s, c, o, m, x);
		check_many(&p, comp, comm, SPAN);
		pb_profile_free(&p);
	}
}

/* --- end to end: a session of `cuda_workload nccl` --------------------------- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int check_session(const char *dir)
{
	const uint64_t idle = WL_NCCL_LEAD_NS + WL_NCCL_IDLE_MS * 1000000ull;
	/* other holds the lead and the sleep, and the host's wake-up from the
	 * sync and the sleep: generous, for a loaded 2-core CI machine */
	const uint64_t slack = 50 * 1000000ull;
	struct profile *p = NULL;
	struct dist_split s;
	uint64_t *marks = NULL;
	uint8_t *mask;
	size_t i, n = 0;
	uint32_t proc = PROF_NONE;
	int rc, nccl_ranges = 0, by_name = 0;
	char err[512];

	rc = prof_load(dir, &p, err, sizeof(err));
	if (rc < 0 || !p) {
		fprintf(stderr, "cannot load %s: %s\n", dir, err);
		return 1;
	}
	for (i = 0; i < p->ngpu_ops; i++) {
		if (proc == PROF_NONE)
			proc = p->gpu_ops[i].process;
		if (p->gpu_ops[i].kind == PROF_GPU_KERNEL && dist_is_comm_kernel(p->gpu_ops[i].name))
			by_name++;
	}
	REQUIRE(proc != PROF_NONE);
	printf("process %u (pid %u): %zu GPU ops, %d NCCL kernels by name\n", proc,
	       p->processes[proc].pid, p->ngpu_ops, by_name);
	CHECK_EQ_INT(by_name, WL_NCCL_STEPS);
	for (i = 0; i < p->nranges; i++) {
		const struct prof_range *r = &p->ranges[i];

		if (r->process != proc)
			continue;
		if (r->kind == CBN_RANGE_STEP)
			PB_ADD(marks, n, r->start);
		else if (r->domain && strcmp(r->domain, "NCCL") == 0)
			nccl_ranges++;
	}
	printf("%zu cbn_step() markers, %d ranges in NVTX domain NCCL\n", n, nccl_ranges);
	CHECK_EQ_INT(nccl_ranges, WL_NCCL_STEPS);
	REQUIRE(n == WL_NCCL_STEPS + 1);
	qsort(marks, n, sizeof(*marks), cmp_u64);
	mask = calloc(p->nprocesses, 1);
	REQUIRE(mask);
	mask[proc] = 1;
	printf("truth per step: computation %" PRIu64 " overlap %" PRIu64 " communication %" PRIu64
	       " other >= %" PRIu64 " ns\n",
	       (uint64_t)WL_NCCL_COMP_ONLY_NS, (uint64_t)WL_NCCL_OVERLAP_NS,
	       (uint64_t)WL_NCCL_COMM_ONLY_NS, idle);
	for (i = 0; i + 1 < n; i++) {
		rc = dist_gpu_split(p, mask, marks[i], marks[i + 1], &s);
		printf("step %zu: wall %" PRIu64 " computation %" PRIu64 " overlap %" PRIu64
		       " communication %" PRIu64 " other %" PRIu64 " ns\n",
		       i, s.wall_ns, s.computation_ns, s.overlap_ns, s.communication_ns, s.other_ns);
		CHECK_EQ_INT(rc, 1);
		CHECK_EQ_INT(s.computation_ns, WL_NCCL_COMP_ONLY_NS);
		CHECK_EQ_INT(s.overlap_ns, WL_NCCL_OVERLAP_NS);
		CHECK_EQ_INT(s.communication_ns, WL_NCCL_COMM_ONLY_NS);
		CHECK_EQ_INT(s.computation_ns + s.overlap_ns + s.communication_ns + s.other_ns,
			     s.wall_ns);
		CHECK(s.other_ns >= idle);
		CHECK(s.other_ns <= idle + slack);
	}
	/* all steps at once: the same splits */
	{
		struct dist_split *many = calloc(n - 1, sizeof(*many));

		REQUIRE(many);
		CHECK_EQ_INT(dist_gpu_split_many(p, mask, marks, marks + 1, n - 1, many), n - 1);
		for (i = 0; i + 1 < n; i++) {
			rc = dist_gpu_split(p, mask, marks[i], marks[i + 1], &s);
			CHECK(memcmp(&s, &many[i], sizeof(s)) == 0);
		}
		free(many);
	}
	/* the whole run: every step's GPU time and nothing else */
	rc = dist_gpu_split(p, mask, marks[0], marks[n - 1], &s);
	CHECK_EQ_INT(rc, 1);
	CHECK_EQ_INT(s.computation_ns, WL_NCCL_STEPS * WL_NCCL_COMP_ONLY_NS);
	CHECK_EQ_INT(s.overlap_ns, WL_NCCL_STEPS * WL_NCCL_OVERLAP_NS);
	CHECK_EQ_INT(s.communication_ns, WL_NCCL_STEPS * WL_NCCL_COMM_ONLY_NS);
	free(mask);
	pb_drop(marks);
	prof_free(p);
	return test_result();
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "load") == 0)
		return check_session(argv[2]);
	test_names();
	test_empty();
	test_shapes();
	test_mask();
	test_nvtx();
	test_random();
	return test_result();
}
