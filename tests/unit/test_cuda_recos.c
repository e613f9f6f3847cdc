/*
 * test_cuda_recos.c — every recommendation rule fires on a profile built to
 * show its problem, carries the numbers that fired it, and none fires on a
 * clean, compute-bound profile.
 */
#include "ops.h"
#include "test_cuda_build.h"
#include "testlib.h"

/* 20 back-to-back 1 ms kernels filling the GPU, pinned copies, short launches. */
static void clean(struct profile *p)
{
	uint64_t t = 0;
	uint32_t c;
	int i;

	cb_init(p);
	cb_h100(p, 0);
	for (i = 0; i < 20; i++, t += 1 * MS) {
		c = cb_api(p, "cudaLaunchKernel", 0, t, t + 5 * US);
		cb_kernel(p, "gemm", t + 10 * US, t + 1010 * US, c, 264, 256, 32);
	}
	c = cb_api(p, "cudaMemcpyAsync", 0, t, t + 5 * US);
	cb_copy(p, CBN_COPY_HTOD, CBN_MEM_PINNED, CBN_MEM_DEVICE, 1 << 20, t + 10 * US, t + 100 * US, c);
	c = cb_api(p, "cudaMemcpyAsync", 0, t, t + 5 * US);
	cb_copy(p, CBN_COPY_DTOD, CBN_MEM_DEVICE, CBN_MEM_DEVICE, 1 << 20, t + 100 * US, t + 110 * US, c);
	cb_range(p, "iter", 0, 0, 10 * MS);
	cb_range(p, "iter", 0, 10 * MS, 20 * MS);
	cb_range(p, "iter", 0, 20 * MS, 30 * MS);
	p->wall_ns = 30 * MS;
}

static struct cuda_analysis *analyze(struct profile *p)
{
	struct cuda_analysis *a;

	REQUIRE(cuda_analyze(p, &a) == 0 && a);
	return a;
}

static const char *evidence(const struct cuda_analysis *a, const char *id)
{
	const struct rule_finding *r = cb_reco(a, id);

	return r ? r->evidence : "";
}

static void test_clean(void)
{
	struct profile p;
	struct cuda_analysis *a;
	size_t i;

	clean(&p);
	a = analyze(&p);
	CHECK_STR(a->ov.verdict, "compute-bound");
	for (i = 0; i < a->nrecos; i++)
		fprintf(stderr, "unexpected: [%s] %s\n", a->recos[i].id, a->recos[i].evidence);
	CHECK_EQ_INT(a->nrecos, 0);
	cuda_analysis_free(a);
	pb_profile_free(&p);
}

static void test_overhead_and_tiny(void)
{
	struct profile p;
	struct cuda_analysis *a;
	uint64_t t = 0;
	uint32_t c;
	int i;

	cb_init(&p);
	cb_h100(&p, 0);
	for (i = 0; i < 1200; i++, t += 20 * US) {
		c = cb_api(&p, "cudaLaunchKernel", 0, t, t + 15 * US);
		cb_kernel(&p, "tiny", t + 16 * US, t + 20 * US, c, 264, 256, 32);
	}
	a = analyze(&p);
	CHECK(cb_reco(a, "overhead-bound") != NULL);
	CHECK(strstr(evidence(a, "overhead-bound"), "GPU utilization 20.0%") != NULL);
	CHECK(cb_reco(a, "tiny-kernels") != NULL);
	CHECK(strstr(evidence(a, "tiny-kernels"), "1200 kernel launches") != NULL);
	CHECK(strstr(evidence(a, "tiny-kernels"), "4.000 us") != NULL);
	CHECK(cb_reco(a, "low-utilization") != NULL);
	cuda_analysis_free(a);
	pb_profile_free(&p);
}

static void test_sync_and_pageable(void)
{
	struct profile p;
	struct cuda_analysis *a;
	uint32_t c;

	clean(&p);
	cb_api(&p, "cudaDeviceSynchronize", 0, 20 * MS, 29 * MS);   /* 9 of 30 ms */
	c = cb_api(&p, "cudaMemcpy", 0, 29 * MS, 29500 * US);
	cb_copy(&p, CBN_COPY_HTOD, CBN_MEM_PAGEABLE, CBN_MEM_DEVICE, 4096, 29 * MS, 29 * MS + 100 * US, c);
	a = analyze(&p);
	CHECK(cb_reco(a, "sync-dominated") != NULL);
	CHECK(strstr(evidence(a, "sync-dominated"), "cudaDeviceSynchronize") != NULL);
	CHECK(strstr(evidence(a, "sync-dominated"), "9.500 ms") != NULL);
	CHECK(cb_reco(a, "pageable-copies") != NULL);
	CHECK(strstr(evidence(a, "pageable-copies"), "HtoD 1, DtoH 0") != NULL);
	CHECK(strstr(evidence(a, "pageable-copies"), "4.00 KiB") != NULL);
	CHECK(strstr(cb_reco(a, "pageable-copies")->message, "cudaHostAlloc") != NULL);
	cuda_analysis_free(a);
	pb_profile_free(&p);
}

static void test_kernel_rules(void)
{
	struct profile p;
	struct cuda_analysis *a;
	uint64_t t = 100 * MS;
	int i;

	clean(&p);
	/* small grid: 66 blocks on 132 SMs, a large share of kernel time */
	for (i = 0; i < 10; i++, t += 2 * MS)
		cb_kernel(&p, "reduce", t, t + 1 * MS, PROF_NONE, 66, 256, 32);
	/* cold start: first 20 ms, then 1 ms */
	cb_kernel(&p, "warm", t, t + 20 * MS, PROF_NONE, 264, 256, 32);
	t += 21 * MS;
	for (i = 0; i < 9; i++, t += 2 * MS)
		cb_kernel(&p, "warm", t, t + 1 * MS, PROF_NONE, 264, 256, 32);
	/* variable: alternating 1 ms and 4 ms */
	for (i = 0; i < 20; i++, t += 5 * MS)
		cb_kernel(&p, "jitter", t, t + (i % 2 ? 4 : 1) * MS, PROF_NONE, 264, 256, 32);
	/* a cold first iteration */
	cb_range(&p, "iter", 0, 0, 10 * MS);
	p.ranges[0].end = 90 * MS;
	/* step markers (instants): iterations of 60, 10, 10, 10 ms */
	for (i = 0; i < 5; i++) {
		cb_range(&p, "step", 0, 0, 0);
		p.ranges[p.nranges - 1].kind = CBN_RANGE_STEP;
		p.ranges[p.nranges - 1].start = p.ranges[p.nranges - 1].end =
			(i ? 50 + 10 * (uint64_t)i : 0) * MS + 200 * MS;
	}
	a = analyze(&p);
	CHECK(cb_reco(a, "small-grid") != NULL);
	CHECK(strstr(evidence(a, "small-grid"), "reduce: 0.50 blocks per SM") != NULL);
	CHECK(cb_reco(a, "cold-start") != NULL);
	CHECK(strstr(evidence(a, "cold-start"), "warm: first instance 20.000 ms vs median 1.000 ms") != NULL);
	{
		size_t i2;
		int range_fired = 0;

		for (i2 = 0; i2 < a->nrecos; i2++)
			if (!strcmp(a->recos[i2].id, "cold-start") &&
			    strstr(a->recos[i2].evidence, "range \"iter\": first instance 90.000 ms"))
				range_fired = 1;
		CHECK(range_fired);
	}
	{
		size_t i2;
		int step_fired = 0;

		for (i2 = 0; i2 < a->nrecos; i2++)
			if (!strcmp(a->recos[i2].id, "cold-start") &&
			    strstr(a->recos[i2].evidence, "step markers on thread 100: first 60.000 ms vs "
							  "median 10.000 ms of the other 3"))
				step_fired = 1;
		CHECK(step_fired);
	}
	CHECK(cb_reco(a, "variable-kernel") != NULL);
	CHECK(strstr(evidence(a, "variable-kernel"), "jitter: 20 instances") != NULL);
	CHECK(strstr(evidence(a, "variable-kernel"), "warm") == NULL);
	cuda_analysis_free(a);
	pb_profile_free(&p);
}

static void test_implicit_dtod(void)
{
	struct profile p;
	struct cuda_analysis *a;
	uint64_t t = 30 * MS;
	uint32_t c;

	/* explicit copies: DtoD from cudaMemcpyAsync (in clean), PtoP from a Peer call */
	clean(&p);
	c = cb_api(&p, "cudaMemcpyPeerAsync", 0, t, t + 5 * US);
	cb_copy(&p, CBN_COPY_PTOP, CBN_MEM_DEVICE, CBN_MEM_DEVICE, 1 << 20, t, t + 10 * US, c);
	a = analyze(&p);
	CHECK(cb_reco(a, "implicit-dtod") == NULL);
	cuda_analysis_free(a);

	/* a DtoD from a graph launch and a PtoP from a plain cudaMemcpy */
	c = cb_api(&p, "cudaGraphLaunch", 0, t, t + 5 * US);
	cb_copy(&p, CBN_COPY_DTOD, CBN_MEM_DEVICE, CBN_MEM_DEVICE, 1000, t, t + 10 * US, c);
	c = cb_api(&p, "cudaMemcpy", 0, t + 1 * MS, t + 2 * MS);
	cb_copy(&p, CBN_COPY_PTOP, CBN_MEM_DEVICE, CBN_MEM_DEVICE, 24, t + 1 * MS, t + 1 * MS + 10 * US, c);
	a = analyze(&p);
	CHECK(cb_reco(a, "implicit-dtod") != NULL);
	CHECK(strstr(evidence(a, "implicit-dtod"), "2 device-to-device/peer copies") != NULL);
	CHECK(strstr(evidence(a, "implicit-dtod"), "1.00 KiB") != NULL);
	CHECK(strstr(evidence(a, "implicit-dtod"), "cudaGraphLaunch") != NULL);
	cuda_analysis_free(a);
	pb_profile_free(&p);
}

/* A run that keeps the GPU busy with copies has no kernels (utilization 0 %)
 * but no idle time either: low-utilization must not fire (seen on a real H100
 * with examples/cuda/copies.cu). */
static void test_copy_bound(void)
{
	struct profile p;
	struct cuda_analysis *a;
	uint64_t t = 0;
	uint32_t c;
	int i;

	cb_init(&p);
	cb_h100(&p, 0);
	for (i = 0; i < 8; i++, t += 10 * MS) {
		c = cb_api(&p, "cudaMemcpy", 0, t, t + 10 * MS);
		cb_copy(&p, CBN_COPY_HTOD, CBN_MEM_PINNED, CBN_MEM_DEVICE, 64 << 20, t + 100 * US,
			t + 9900 * US, c);
	}
	a = analyze(&p);
	CHECK(cb_reco(a, "low-utilization") == NULL);
	cuda_analysis_free(a);
	/* and a stray 4-byte pageable result copy (2 us of 80 ms of GPU time) is
	 * below the pageable-copies floor, as tiny_kernels showed on a real GPU */
	c = cb_api(&p, "cudaMemcpy", 0, t, t + 10 * US);
	cb_copy(&p, CBN_COPY_DTOH, CBN_MEM_DEVICE, CBN_MEM_PAGEABLE, 4, t + 1 * US, t + 3 * US, c);
	a = analyze(&p);
	CHECK(cb_reco(a, "pageable-copies") == NULL);
	cuda_analysis_free(a);
	pb_profile_free(&p);
}

#define NCHW2NHWC                                                                      \
	"void cudnn::ops::nchwToNhwcKernel<float, float, float, false, true, "           \
	"(cudnnKernelDataType_t)2>(cudnn::ops::nchw2nhwc_params_t<float>, float const*, " \
	"float*)"
#define NHWC2NCHW                                                                      \
	"void cudnn::ops::nhwcToNchwKernel<float, float, float, true, false, "           \
	"(cudnnKernelDataType_t)0>(cudnn::ops::nhwc2nchw_params_t<float>, float const*, " \
	"float*)"
#define ADD_KERNEL                                                                     \
	"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, " \
	"at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "         \
	"at::detail::Array<char*, 3>)"

/* Layout transposes: 2 x 2 ms of the 20 ms + 4 ms of kernel time (16.7 %)
 * fire channels-last, with their names and the operator that launched them;
 * 2 x 100 us (1 %) do not. */
static void test_channels_last(void)
{
	struct profile p;
	struct cuda_analysis *a;
	struct op_analysis *o;
	uint32_t f[3], l[3] = { 0 }, s, c;
	uint64_t t = 40 * MS;

	clean(&p);
	f[0] = cb_func(&p, "cudaLaunchKernel", "", 0, "libcudart.so.13");
	f[1] = cb_func(&p, "at::_ops::cudnn_convolution::call(at::Tensor const&)", "", 0,
		       "libtorch_cpu.so");
	f[2] = cb_func(&p, "main", "m.cc", 1, "prog");
	s = cb_stack(&p, 3, f, l);
	c = cb_api(&p, "cudaLaunchKernel", 0, t, t + 5 * US);
	p.cuda_api[c].stack = s;
	cb_kernel(&p, NCHW2NHWC, t, t + 2 * MS, c, 264, 256, 32);
	c = cb_api(&p, "cudaLaunchKernel", 0, t + 2 * MS, t + 2 * MS + 5 * US);
	p.cuda_api[c].stack = s;
	cb_kernel(&p, NHWC2NCHW, t + 2 * MS, t + 4 * MS, c, 264, 256, 32);
	REQUIRE(ops_analyze(&p, NULL, 0, &o) == 0 && o);
	REQUIRE(cuda_analyze_ops(&p, o, NULL, &a) == 0 && a);
	CHECK(cb_reco(a, "channels-last") != NULL);
	CHECK(strstr(evidence(a, "channels-last"), "2 NCHW<->NHWC layout transposes took 4.000 ms = "
						   "16.7% of kernel time") != NULL);
	CHECK(strstr(evidence(a, "channels-last"), "nchwToNhwcKernel<float, float, float") != NULL);
	CHECK(strstr(evidence(a, "channels-last"), "launched from aten::cudnn_convolution (100%)") !=
	      NULL);
	CHECK(strstr(cb_reco(a, "channels-last")->message, "channels_last") != NULL);
	cuda_analysis_free(a);
	ops_free(o);
	pb_profile_free(&p);

	clean(&p);
	c = cb_api(&p, "cudaLaunchKernel", 0, t, t + 5 * US);
	cb_kernel(&p, NCHW2NHWC, t, t + 100 * US, c, 264, 256, 32);
	c = cb_api(&p, "cudaLaunchKernel", 0, t, t + 5 * US);
	cb_kernel(&p, NHWC2NCHW, t + 100 * US, t + 200 * US, c, 264, 256, 32);
	a = analyze(&p);
	CHECK(cb_reco(a, "channels-last") == NULL);
	cuda_analysis_free(a);
	pb_profile_free(&p);
}

/* fp32 GEMMs on CUDA cores: fire on a GPU with tensor cores, not on one
 * without (compute capability 6.1), not for TF32 tensor-core kernels, not
 * when they are a small share. */
static void test_fp32_math(void)
{
	static const char *const k[] = {
		"ampere_sgemm_128x64_nn",                                   /* fp32 SIMT: fires */
		"sm80_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x16", /* TF32: no */
		"void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_16x4_nn_align4>("
		"cutlass_80_tensorop_s1688gemm_128x128_16x4_nn_align4::Params)",   /* TF32: no */
	};
	struct profile p;
	struct cuda_analysis *a;
	uint64_t t = 40 * MS;
	uint32_t c;
	int i;

	for (i = 0; i < 3; i++) {
		clean(&p);
		c = cb_api(&p, "cudaLaunchKernel", 0, t, t + 5 * US);
		cb_kernel(&p, k[i], t, t + 10 * MS, c, 264, 256, 32);
		a = analyze(&p);
		if (i == 0) {
			CHECK(cb_reco(a, "fp32-math") != NULL);
			CHECK(strstr(evidence(a, "fp32-math"), "took 10.000 ms = 33.3% of kernel time "
							       "on H100 (compute capability 9.0: "
							       "tensor cores, TF32): "
							       "ampere_sgemm_128x64_nn") != NULL);
			CHECK(strstr(cb_reco(a, "fp32-math")->message, "allow_tf32") != NULL);
		} else {
			CHECK(cb_reco(a, "fp32-math") == NULL);
		}
		cuda_analysis_free(a);
		/* a Pascal part has no tensor cores */
		if (i == 0) {
			p.devices[0].cc_major = 6;
			p.devices[0].cc_minor = 1;
			a = analyze(&p);
			CHECK(cb_reco(a, "fp32-math") == NULL);
			cuda_analysis_free(a);
		}
		pb_profile_free(&p);
	}
	/* 1 ms of 21 ms: under 10 % */
	clean(&p);
	c = cb_api(&p, "cudaLaunchKernel", 0, t, t + 5 * US);
	cb_kernel(&p, k[0], t, t + 1 * MS, c, 264, 256, 32);
	a = analyze(&p);
	CHECK(cb_reco(a, "fp32-math") == NULL);
	cuda_analysis_free(a);
	pb_profile_free(&p);
}

/* 300 elementwise kernels of 3 us in one run fire fuse-elementwise; spread
 * over 10 steps (30 per step) they do not; nor do long ones. */
static void test_fuse_elementwise(void)
{
	struct profile p;
	struct cuda_analysis *a;
	uint64_t t;
	uint32_t c;
	int i, steps;

	for (steps = 0; steps <= 10; steps += 10) {
		clean(&p);
		t = 40 * MS;
		for (i = 0; i < 300; i++, t += 10 * US) {
			c = cb_api(&p, "cudaLaunchKernel", 0, t, t + 5 * US);
			cb_kernel(&p, ADD_KERNEL, t + 5 * US, t + 8 * US, c, 264, 256, 32);
		}
		for (i = 0; i <= steps && steps; i++) {
			cb_range(&p, "step", 0, 0, 0);
			p.ranges[p.nranges - 1].kind = CBN_RANGE_STEP;
			p.ranges[p.nranges - 1].start = p.ranges[p.nranges - 1].end =
				40 * MS + (uint64_t)i * 300 * US;
		}
		a = analyze(&p);
		if (!steps) {
			CHECK(cb_reco(a, "fuse-elementwise") != NULL);
			CHECK(strstr(evidence(a, "fuse-elementwise"),
				     "300 elementwise kernels under 10.000 us (300 per step over 1 "
				     "step, the whole run) took 900.000 us of GPU time "
				     "(vectorized_elementwise_kernel<4, CUDAFunctor_add<float") != NULL);
			CHECK(strstr(cb_reco(a, "fuse-elementwise")->message, "torch.compile") != NULL);
		} else {
			CHECK(cb_reco(a, "fuse-elementwise") == NULL);
		}
		cuda_analysis_free(a);
		pb_profile_free(&p);
	}
	/* 300 long ones */
	clean(&p);
	t = 40 * MS;
	for (i = 0; i < 300; i++, t += 100 * US) {
		c = cb_api(&p, "cudaLaunchKernel", 0, t, t + 5 * US);
		cb_kernel(&p, ADD_KERNEL, t + 5 * US, t + 50 * US, c, 264, 256, 32);
	}
	a = analyze(&p);
	CHECK(cb_reco(a, "fuse-elementwise") == NULL);
	cuda_analysis_free(a);
	pb_profile_free(&p);
}

int main(void)
{
	test_clean();
	test_overhead_and_tiny();
	test_copy_bound();
	test_sync_and_pageable();
	test_kernel_rules();
	test_implicit_dtod();
	test_channels_last();
	test_fp32_math();
	test_fuse_elementwise();
	return test_result();
}
