/*
 * test_cuda_overview.c — overview metrics on hand-built timelines: GPU
 * utilization and Est. SM efficiency with overlapping kernels on one and two
 * devices, idle gaps, time blocked in synchronizing calls (nested calls and
 * sync records counted once), and each verdict.
 */
#include "report/cuda_report.h"
#include "test_cuda_build.h"
#include "analysed.h"
#include "testlib.h"

static void add_kernel_dev(struct profile *p, const char *name, uint64_t s, uint64_t e, int grid,
			   uint32_t dev)
{
	uint32_t k = cb_kernel(p, name, s, e, PROF_NONE, grid, 256, 32);

	p->gpu_ops[k].device = dev;
}

static void test_utilization(void)
{
	struct profile p;
	struct cuda_analysis *a;

	cb_init(&p);
	cb_h100(&p, 0);
	add_kernel_dev(&p, "k1", 0, 4 * MS, 66, 0);          /* 0.5 blocks/SM */
	add_kernel_dev(&p, "k2", 2 * MS, 6 * MS, 132, 0);    /* 1 */
	add_kernel_dev(&p, "k3", 8 * MS, 10 * MS, 264, 0);   /* 2, capped at 1 */
	cb_copy(&p, CBN_COPY_HTOD, CBN_MEM_PINNED, CBN_MEM_DEVICE, 1 << 20, 6 * MS, 7 * MS, PROF_NONE);
	REQUIRE(cuda_analyze(&p, &a) == 0 && a);
	CHECK_EQ_INT(a->ov.window_ns, 10 * MS);
	CHECK_EQ_INT(a->ov.gpu_busy_ns, 8 * MS);
	CHECK_NEAR(a->ov.gpu_utilization, 0.8, 1e-12);
	/* 2 ms at 0.5, 4 ms at 1 (overlap capped), 2 ms at 1: 7 ms of 10 */
	CHECK_NEAR(a->ov.est_sm_efficiency, 0.7, 1e-12);
	CHECK_EQ_INT(a->ov.idle_gaps_ns, 1 * MS);
	CHECK_EQ_INT(a->ov.largest_gap_ns, 1 * MS);
	CHECK_EQ_INT(a->ov.ngaps, 1);
	CHECK_EQ_INT(a->ov.gpu_ns, 4 * MS + 4 * MS + 2 * MS + 1 * MS);
	CHECK_STR(a->ov.verdict, "compute-bound");
	CHECK_EQ_INT(a->totals.gpu_busy_ns, 8 * MS);
	cuda_analysis_free(a);

	/* a second device, busy 1 ms at 1 block/SM: means over two devices */
	cb_h100(&p, 1);
	add_kernel_dev(&p, "k4", 0, 1 * MS, 132, 1);
	REQUIRE(cuda_analyze(&p, &a) == 0 && a);
	CHECK_EQ_INT(a->ov.ndevices, 2);
	CHECK_NEAR(a->ov.gpu_utilization, 9.0 / 20, 1e-12);
	CHECK_NEAR(a->ov.est_sm_efficiency, 8.0 / 20, 1e-12);
	CHECK_EQ_INT(a->ov.gpu_busy_ns, 9 * MS);
	CHECK_STR(a->ov.verdict, "mixed");   /* < 80 %, but no launch pressure */
	REQUIRE(a->ndevices == 2);
	CHECK_EQ_INT(a->devices[0].device, 0);
	CHECK_NEAR(a->devices[0].utilization, 0.8, 1e-12);
	CHECK_NEAR(a->devices[0].est_sm_efficiency, 0.7, 1e-12);
	CHECK_EQ_INT(a->devices[1].device, 1);
	CHECK_NEAR(a->devices[1].utilization, 0.1, 1e-12);
	CHECK_NEAR(a->devices[1].est_sm_efficiency, 0.1, 1e-12);
	cuda_analysis_free(a);

	/* no SM count: SM efficiency unknown, utilization still known */
	p.ndevices = 0;
	REQUIRE(cuda_analyze(&p, &a) == 0 && a);
	CHECK(a->ov.est_sm_efficiency < 0);
	CHECK(a->ov.est_achieved_occupancy < 0);
	CHECK_NEAR(a->ov.gpu_utilization, 9.0 / 20, 1e-12);
	CHECK(a->kernels[0].blocks_per_sm < 0);
	cuda_analysis_free(a);
	pb_profile_free(&p);
}

static void test_sync(void)
{
	struct profile p;
	struct cuda_analysis *a;
	struct prof_cuda_sync s1 = { .start = 10 * MS, .end = 12 * MS, .type = 4 };
	struct prof_cuda_sync s2 = { .start = 20 * MS, .end = 21 * MS, .type = 3, .correlation = 999 };
	uint32_t c;

	cb_init(&p);
	c = cb_api(&p, "cudaDeviceSynchronize", 0, 10 * MS, 12 * MS);
	s1.correlation = p.cuda_api[c].correlation;
	cb_api(&p, "cudaMemcpy", 0, 13 * MS, 14 * MS);
	cb_api(&p, "cuMemcpyHtoD_v2", 0, 13100 * US, 13900 * US);   /* nested: counted once */
	cb_api(&p, "cudaStreamSynchronize_ptsz", 0, 15 * MS, 15500 * US);
	cb_api(&p, "cudaMemcpyAsync", 0, 16 * MS, 16100 * US);
	PB_ADD(p.syncs, p.nsyncs, s1);   /* the record of the API call above */
	PB_ADD(p.syncs, p.nsyncs, s2);   /* a wait no API call accounts for */
	cb_kernel(&p, "k", 0, 1 * MS, PROF_NONE, 1, 1, 1);
	REQUIRE(cuda_analyze(&p, &a) == 0 && a);
	CHECK_EQ_INT(a->ov.sync_blocked_ns, 2 * MS + 1 * MS + 500 * US + 1 * MS);
	CHECK_EQ_INT(a->totals.sync_ns, a->ov.sync_blocked_ns);
	CHECK(cuda_api_is_sync("cudaDeviceSynchronize"));
	CHECK(cuda_api_is_sync("cuCtxSynchronize_v2"));
	CHECK(cuda_api_is_sync("cudaEventSynchronize"));
	CHECK(cuda_api_is_sync("cudaMemcpy_v3020"));
	CHECK(!cuda_api_is_sync("cudaMemcpyAsync"));
	CHECK(!cuda_api_is_sync("cudaLaunchKernel"));
	CHECK(!cuda_api_is_sync("cudaStreamWaitEvent"));
	cuda_analysis_free(a);
	pb_profile_free(&p);
}

static void test_verdicts(void)
{
	struct profile p;
	struct cuda_analysis *a;
	uint64_t t = 0;
	uint32_t c;
	int i;

	/* API calls only: no GPU work */
	cb_init(&p);
	cb_api(&p, "cudaMalloc", 0, 0, 1 * MS);
	REQUIRE(cuda_analyze(&p, &a) == 0 && a);
	CHECK_STR(a->ov.verdict, "idle");
	CHECK(a->ov.gpu_utilization < 0);
	CHECK_EQ_INT(a->nrecos, 0);
	cuda_analysis_free(a);
	{
		struct report_opts o = { 0 };
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);

		REQUIRE(f);
		CHECK_EQ_INT(report_cuda_text(f, analysed(&p), &o), 0);
		fclose(f);
		CHECK(strstr(buf, "idle (no kernel, copy or set was recorded)") != NULL);
		CHECK(strstr(buf, "GPU utilization") == NULL);
		CHECK(strstr(buf, "cuda_api_sum") != NULL);
		free(buf);
	}
	pb_profile_free(&p);

	/* 200 launches of 40 us, each running a 5 us kernel: launch-bound */
	cb_init(&p);
	cb_h100(&p, 0);
	for (i = 0; i < 200; i++, t += 50 * US) {
		c = cb_api(&p, "cudaLaunchKernel", 0, t, t + 40 * US);
		cb_kernel(&p, "tiny", t + 42 * US, t + 47 * US, c, 264, 256, 32);
	}
	REQUIRE(cuda_analyze(&p, &a) == 0 && a);
	CHECK_NEAR(a->ov.gpu_utilization, 5.0 / 50 * 200 / (199 * 50 + 5) * 50, 1e-9);
	CHECK(a->ov.launch_api_ns >= a->ov.window_ns / 2);
	CHECK_STR(a->ov.verdict, "overhead-bound");
	cuda_analysis_free(a);
	pb_profile_free(&p);

	/* 60 % busy with long kernels and short launches: mixed */
	cb_init(&p);
	for (i = 0, t = 0; i < 10; i++, t += 10 * MS) {
		c = cb_api(&p, "cudaLaunchKernel", 0, t, t + 10 * US);
		cb_kernel(&p, "long", t + 20 * US, t + 20 * US + 6 * MS, c, 264, 256, 32);
	}
	REQUIRE(cuda_analyze(&p, &a) == 0 && a);
	CHECK(a->ov.gpu_utilization > 0.5 && a->ov.gpu_utilization < 0.8);
	CHECK_STR(a->ov.verdict, "mixed");
	cuda_analysis_free(a);
	pb_profile_free(&p);
}

int main(void)
{
	test_utilization();
	test_sync();
	test_verdicts();
	return test_result();
}
