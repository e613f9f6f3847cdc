/*
 * test_cuda_tables.c — the CUDA tables from hand-built profiles with known
 * numbers: kernel / API / memop statistics, autograd-style attribution through
 * correlation and ranges, launch sites, sort keys, --limit and the text shape.
 */
#include <stdio.h>

#include "report/cuda_report.h"
#include "test_cuda_build.h"
#include "analysed.h"
#include "testlib.h"

static const struct cuda_kernel_row *kernel(const struct cuda_analysis *a, const char *name)
{
	size_t i;

	for (i = 0; i < a->nkernels; i++)
		if (!strcmp(a->kernels[i].name, name))
			return &a->kernels[i];
	return NULL;
}

static const struct cuda_memop_row *memop(const struct cuda_analysis *a, const char *name)
{
	size_t i;

	for (i = 0; i < a->nmemops; i++)
		if (!strcmp(a->memops[i].name, name))
			return &a->memops[i];
	return NULL;
}

static void test_kernel_stats(void)
{
	struct profile p;
	struct cuda_analysis *a;
	const struct cuda_kernel_row *k, *s;
	uint64_t t = 0;
	int i;

	cb_init(&p);
	cb_h100(&p, 0);
	for (i = 0; i < 100; i++, t += 100 * US)
		cb_kernel(&p, "gemm", t, t + 50 * US, PROF_NONE, 264, 256, 32);
	for (i = 0; i < 10; i++, t += 3 * MS)
		cb_kernel(&p, "gemm", t, t + 2 * MS, PROF_NONE, 264, 256, 32);
	for (i = 0; i < 10; i++, t += 20 * US)
		cb_kernel(&p, "small", t, t + 10 * US, PROF_NONE, 66, 128, 16);
	REQUIRE(cuda_analyze(&p, &a) == 0 && a);
	CHECK_EQ_INT(a->nkernels, 2);
	k = kernel(a, "gemm");
	s = kernel(a, "small");
	REQUIRE(k && s);
	CHECK(a->kernels == k);  /* sorted by total, descending */
	CHECK_EQ_INT(k->t.count, 110);
	CHECK_EQ_INT(k->t.total, 25 * MS);
	CHECK_NEAR(k->t.avg, 227272.727, 0.01);
	CHECK_NEAR(k->t.med, 50000, 0.001);
	CHECK_EQ_INT(k->t.min, 50 * US);
	CHECK_EQ_INT(k->t.max, 2 * MS);
	CHECK_NEAR(k->t.stddev, 563151.2077, 0.01);   /* sample stddev, n - 1 */
	CHECK_NEAR(k->time_pct, 100.0 * 25000 / 25100, 1e-9);
	CHECK_NEAR(s->time_pct, 100.0 * 100 / 25100, 1e-9);
	CHECK_EQ_INT(s->t.count, 10);
	CHECK_NEAR(s->t.stddev, 0, 1e-9);
	CHECK_EQ_INT(k->grid[0], 264);
	CHECK_EQ_INT(k->block[0], 256);
	CHECK_EQ_INT(k->registers, 32);
	CHECK(!k->config_varies);
	CHECK_NEAR(k->blocks_per_sm, 2.0, 1e-12);     /* 264 blocks / 132 SMs */
	CHECK_NEAR(s->blocks_per_sm, 0.5, 1e-12);
	CHECK_EQ_INT(k->first_ns, 50 * US);
	CHECK_NEAR(k->rest_med_ns, 50000, 0.001);
	CHECK_EQ_INT(a->totals.kernels, 120);
	CHECK_EQ_INT(a->totals.kernel_ns, 25100 * US);
	/* the kernel rows of the autograd table carry the same GPU time */
	CHECK(cb_op(a, "gemm", CUDA_ROW_KERNEL) && cb_op(a, "gemm", CUDA_ROW_KERNEL)->self_cuda_ns == 25 * MS);
	CHECK(cb_op(a, "gemm", CUDA_ROW_KERNEL)->calls == 110);
	cuda_analysis_free(a);

	/* a config change is flagged; the first instance's config is shown */
	cb_kernel(&p, "gemm", t, t + 50 * US, PROF_NONE, 528, 256, 32);
	REQUIRE(cuda_analyze(&p, &a) == 0 && a);
	CHECK(kernel(a, "gemm")->config_varies);
	CHECK_EQ_INT(kernel(a, "gemm")->grid[0], 264);
	cuda_analysis_free(a);
	pb_profile_free(&p);
}

static void test_api_and_memops(void)
{
	struct profile p;
	struct cuda_analysis *a;
	const struct cuda_memop_row *h, *d, *m;
	const struct cuda_api_row *r = NULL;
	size_t i;
	uint32_t c;

	cb_init(&p);
	cb_api(&p, "cudaLaunchKernel", 0, 0, 10 * US);
	cb_api(&p, "cudaLaunchKernel", 0, 100 * US, 120 * US);
	cb_api(&p, "cudaLaunchKernel", 0, 200 * US, 230 * US);
	c = cb_api(&p, "cudaMemcpy", 0, 1 * MS, 5 * MS);
	cb_copy(&p, CBN_COPY_HTOD, CBN_MEM_PAGEABLE, CBN_MEM_DEVICE, 1 << 20, 1 * MS, 2 * MS, c);
	cb_copy(&p, CBN_COPY_HTOD, CBN_MEM_PAGEABLE, CBN_MEM_DEVICE, 1 << 20, 2 * MS, 3 * MS, c);
	cb_copy(&p, CBN_COPY_HTOD, CBN_MEM_PINNED, CBN_MEM_DEVICE, 1 << 20, 3 * MS, 3500 * US, c);
	cb_copy(&p, CBN_COPY_DTOH, CBN_MEM_DEVICE, CBN_MEM_PINNED, 1 << 19, 4 * MS, 4250 * US, c);
	cb_memset(&p, 4096, 6 * MS, 6 * MS + 5 * US, PROF_NONE);
	REQUIRE(cuda_analyze(&p, &a) == 0 && a);

	CHECK_EQ_INT(a->napi, 2);
	for (i = 0; i < a->napi; i++)
		if (!strcmp(a->api[i].name, "cudaLaunchKernel"))
			r = &a->api[i];
	REQUIRE(r);
	CHECK_STR(a->api[0].name, "cudaMemcpy");  /* 4 ms > 60 us */
	CHECK_EQ_INT(r->t.count, 3);
	CHECK_EQ_INT(r->t.total, 60 * US);
	CHECK_NEAR(r->t.avg, 20000, 1e-9);
	CHECK_NEAR(r->t.med, 20000, 1e-9);
	CHECK_NEAR(r->t.stddev, 10000, 1e-6);
	CHECK_EQ_INT(r->t.min, 10 * US);
	CHECK_EQ_INT(r->t.max, 30 * US);
	CHECK_NEAR(r->time_pct, 100.0 * 60 / 4060, 1e-9);
	CHECK_EQ_INT(a->totals.api_calls, 4);
	CHECK_EQ_INT(a->totals.api_ns, 4060 * US);

	h = memop(a, "[CUDA memcpy HtoD]");
	d = memop(a, "[CUDA memcpy DtoH]");
	m = memop(a, "[CUDA memset]");
	REQUIRE(h && d && m);
	CHECK_EQ_INT(h->t.count, 3);
	CHECK_EQ_INT(h->t.total, 2500 * US);
	CHECK_EQ_INT(h->bytes, 3 << 20);
	CHECK_EQ_INT(h->pageable, 2);
	CHECK_EQ_INT(h->pageable_ns, 2 * MS);
	CHECK_EQ_INT(h->pageable_bytes, 2 << 20);
	CHECK_EQ_INT(h->pinned, 1);
	CHECK_EQ_INT(h->pinned_ns, 500 * US);
	CHECK_EQ_INT(d->pinned, 1);
	CHECK_EQ_INT(d->pageable, 0);
	CHECK_EQ_INT(m->kind, CUDA_ROW_MEMSET);
	CHECK_EQ_INT(m->t.total, 5 * US);
	CHECK_NEAR(h->time_pct, 100.0 * 2500 / 2755, 1e-9);
	CHECK_EQ_INT(a->totals.memcpy, 4);
	CHECK_EQ_INT(a->totals.memcpy_ns, 2750 * US);
	CHECK_EQ_INT(a->totals.memcpy_bytes, (3 << 20) + (1 << 19));
	CHECK_EQ_INT(a->totals.memset, 1);
	CHECK_EQ_INT(a->totals.memset_ns, 5 * US);
	/* the API row gets the GPU time of the copies it launched */
	CHECK_EQ_INT(cb_op(a, "cudaMemcpy", CUDA_ROW_API)->cuda_total_ns, 2750 * US);
	CHECK_EQ_INT(cb_op(a, "cudaLaunchKernel", CUDA_ROW_API)->cuda_total_ns, 0);
	cuda_analysis_free(a);
	pb_profile_free(&p);
}

/*
 * Thread 0: range step [0,10ms) holding range fwd [1,6ms) holding launch L1
 * (10 us, kernel kA 1 ms); launch L2 (20 us, kA 0.5 ms) in step only; L3 after
 * both (kB 0.1 ms); runtime launch L4 holding a driver launch (6 us) whose
 * kernel kC takes 1 ms.  Thread 1: cudaMemcpy [2,5ms) inside the time of fwd
 * but on another thread, with a 1.5 ms copy: no range gets it.
 */
static void build_attribution(struct profile *p)
{
	uint32_t t1, l1, l2, l3, l4d, m;

	cb_init(p);
	t1 = cb_thread(p, 101);
	cb_range(p, "step", 0, 0, 10 * MS);
	cb_range(p, "fwd", 0, 1 * MS, 6 * MS);
	l1 = cb_api(p, "cudaLaunchKernel", 0, 2 * MS, 2 * MS + 10 * US);
	l2 = cb_api(p, "cudaLaunchKernel", 0, 7 * MS, 7 * MS + 20 * US);
	l3 = cb_api(p, "cudaLaunchKernel", 0, 20 * MS, 20 * MS + 5 * US);
	cb_api(p, "cudaLaunchKernel", 0, 30 * MS, 30 * MS + 10 * US);
	l4d = cb_api(p, "cuLaunchKernel", 0, 30 * MS + 2 * US, 30 * MS + 8 * US);
	m = cb_api(p, "cudaMemcpy", t1, 2 * MS, 5 * MS);
	cb_kernel(p, "kA", 3 * MS, 4 * MS, l1, 132, 256, 32);
	cb_kernel(p, "kA", 8 * MS, 8500 * US, l2, 132, 256, 32);
	cb_kernel(p, "kB", 21 * MS, 21100 * US, l3, 132, 256, 32);
	cb_kernel(p, "kC", 31 * MS, 32 * MS, l4d, 132, 256, 32);
	cb_copy(p, CBN_COPY_HTOD, CBN_MEM_PINNED, CBN_MEM_DEVICE, 1000, 3 * MS, 4500 * US, m);
}

static void test_attribution(void)
{
	struct profile p;
	struct cuda_analysis *a;
	const struct cuda_op_row *r;

	build_attribution(&p);
	REQUIRE(cuda_analyze(&p, &a) == 0 && a);

	r = cb_op(a, "step", CUDA_ROW_RANGE);
	REQUIRE(r);
	CHECK_EQ_INT(r->calls, 1);
	CHECK_EQ_INT(r->cpu_total_ns, 10 * MS);
	CHECK_EQ_INT(r->self_cpu_ns, 10 * MS - 5 * MS - 20 * US);
	CHECK_EQ_INT(r->cuda_total_ns, 1500 * US);   /* kA twice; not thread 1's copy */
	CHECK_EQ_INT(r->self_cuda_ns, 0);

	r = cb_op(a, "fwd", CUDA_ROW_RANGE);
	REQUIRE(r);
	CHECK_EQ_INT(r->cpu_total_ns, 5 * MS);
	CHECK_EQ_INT(r->self_cpu_ns, 5 * MS - 10 * US);
	CHECK_EQ_INT(r->cuda_total_ns, 1 * MS);

	r = cb_op(a, "cudaLaunchKernel", CUDA_ROW_API);
	REQUIRE(r);
	CHECK_EQ_INT(r->calls, 4);
	CHECK_EQ_INT(r->cpu_total_ns, 45 * US);
	CHECK_EQ_INT(r->self_cpu_ns, 39 * US);        /* minus the nested driver call */
	CHECK_EQ_INT(r->cuda_total_ns, 2600 * US);    /* kA + kB + kC via the driver call */

	r = cb_op(a, "cuLaunchKernel", CUDA_ROW_API);
	REQUIRE(r);
	CHECK_EQ_INT(r->cuda_total_ns, 1 * MS);
	CHECK_EQ_INT(r->self_cpu_ns, 6 * US);

	r = cb_op(a, "cudaMemcpy", CUDA_ROW_API);
	REQUIRE(r);
	CHECK_EQ_INT(r->self_cpu_ns, 3 * MS);
	CHECK_EQ_INT(r->cuda_total_ns, 1500 * US);

	r = cb_op(a, "kA", CUDA_ROW_KERNEL);
	REQUIRE(r);
	CHECK_EQ_INT(r->calls, 2);
	CHECK_EQ_INT(r->self_cuda_ns, 1500 * US);
	CHECK_EQ_INT(r->cuda_total_ns, 1500 * US);
	CHECK_EQ_INT(r->self_cpu_ns, 0);
	CHECK(cb_op(a, "[CUDA memcpy HtoD]", CUDA_ROW_MEMCPY) != NULL);

	CHECK_EQ_INT(a->self_cuda_total_ns, 1500 * US + 100 * US + 1 * MS + 1500 * US);
	CHECK_EQ_INT(a->self_cpu_total_ns, (10 * MS - 5 * MS - 20 * US) + (5 * MS - 10 * US) + 39 * US +
						   6 * US + 3 * MS);

	/* default sort: cuda_time_total; ties keep a stable name order */
	CHECK_STR(cuda_sort_ops(a, NULL), "cuda_time_total");
	CHECK_STR(a->ops[0].name, "cudaLaunchKernel");
	CHECK_STR(cuda_sort_ops(a, "cpu_time_total"), "cpu_time_total");
	CHECK_STR(a->ops[0].name, "step");
	CHECK_STR(cuda_sort_ops(a, "self_cpu_time_total"), "self_cpu_time_total");
	CHECK_STR(a->ops[0].name, "fwd");
	CHECK_STR(cuda_sort_ops(a, "self_cuda_time_total"), "self_cuda_time_total");
	CHECK(a->ops[0].kind == CUDA_ROW_KERNEL || a->ops[0].kind == CUDA_ROW_MEMCPY);
	CHECK_EQ_INT(a->ops[0].self_cuda_ns, 1500 * US);
	CHECK_STR(cuda_sort_ops(a, "count"), "count");
	CHECK_STR(a->ops[0].name, "cudaLaunchKernel");
	CHECK_STR(cuda_sort_ops(a, "cuda_time"), "cuda_time");
	CHECK_STR(a->ops[0].name, "[CUDA memcpy HtoD]");   /* 1.5 ms per call */
	CHECK_STR(cuda_sort_ops(a, "cpu_time"), "cpu_time");
	CHECK_STR(a->ops[0].name, "step");
	/* a pstats key leaves the table at its default */
	CHECK_STR(cuda_sort_ops(a, "tottime"), "cuda_time_total");
	CHECK(cuda_sort_key_valid("self_cuda_time_total"));
	CHECK(!cuda_sort_key_valid("cumtime"));
	cuda_analysis_free(a);
	pb_profile_free(&p);
}

static void test_launch_sites(void)
{
	struct profile p;
	struct cuda_analysis *a;
	uint32_t fagent, fdrv, frt, fstep, fmain, s42, s50, c;
	uint64_t t = 0;
	int i;

	cb_init(&p);
	fagent = cb_func(&p, "cbn_cuda_enter", "agent.c", 10, "libcbottleneck_cuda.so");
	fdrv = cb_func(&p, "cuLaunchKernel_internal", "", 0, "libcuda.so.1");
	frt = cb_func(&p, "cudaLaunchKernel", "", 0, "libcudart.so.13");
	fstep = cb_func(&p, "run_step", "main.c", 30, "app");
	fmain = cb_func(&p, "main", "main.c", 5, "app");
	s42 = cb_stack(&p, 5, (uint32_t[]){ fagent, fdrv, frt, fstep, fmain },
		       (uint32_t[]){ 12, 0, 0, 42, 9 });
	s50 = cb_stack(&p, 3, (uint32_t[]){ frt, fstep, fmain }, (uint32_t[]){ 0, 50, 9 });
	for (i = 0; i < 2; i++, t += 1 * MS) {
		c = cb_api(&p, "cudaLaunchKernel", 0, t, t + 10 * US);
		p.cuda_api[c].stack = s42;
		cb_kernel(&p, "k42", t + 20 * US, t + 220 * US, c, 132, 256, 32);
	}
	/* runtime call with the stack, nested driver call without: one launch */
	c = cb_api(&p, "cudaLaunchKernel", 0, t, t + 10 * US);
	p.cuda_api[c].stack = s50;
	c = cb_api(&p, "cuLaunchKernel", 0, t + 2 * US, t + 8 * US);
	cb_kernel(&p, "k50", t + 20 * US, t + 1020 * US, c, 132, 256, 32);
	/* a launch with no stack at all */
	c = cb_api(&p, "cudaLaunchKernel", 0, t + 2 * MS, t + 2 * MS + 10 * US);
	cb_kernel(&p, "knostack", t + 2 * MS + 20 * US, t + 2 * MS + 30 * US, c, 132, 256, 32);
	REQUIRE(cuda_analyze(&p, &a) == 0 && a);
	REQUIRE(a->nsites == 3);
	CHECK_STR(a->sites[0].function, "run_step");
	CHECK_STR(a->sites[0].file, "main.c");
	CHECK_EQ_INT(a->sites[0].line, 50);
	CHECK_EQ_INT(a->sites[0].launches, 1);
	CHECK_EQ_INT(a->sites[0].gpu_ns, 1 * MS);
	CHECK_STR(a->sites[1].function, "run_step");
	CHECK_EQ_INT(a->sites[1].line, 42);
	CHECK_EQ_INT(a->sites[1].launches, 2);
	CHECK_EQ_INT(a->sites[1].gpu_ns, 400 * US);
	CHECK_STR(a->sites[2].function, "[no stack captured]");
	CHECK_EQ_INT(a->sites[2].gpu_ns, 10 * US);
	CHECK(cuda_module_is_runtime("libcudart.so.13") && cuda_module_is_runtime("libcuda.so.1") &&
	      cuda_module_is_runtime("libcupti.so.13") && cuda_module_is_runtime("libcbottleneck.so"));
	CHECK(!cuda_module_is_runtime("libcublas.so.13") && !cuda_module_is_runtime("app"));
	cuda_analysis_free(a);
	pb_profile_free(&p);
}

static int quiet_flag;

static char *render(const struct profile *p, const char *sort, int limit)
{
	struct report_opts o = { .sort = sort, .limit = limit, .quiet = quiet_flag };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	REQUIRE(f);
	CHECK_EQ_INT(report_cuda_text(f, analysed(p), &o), 0);
	fclose(f);
	return buf;
}

static void test_text(void)
{
	struct profile p;
	char *s, *hdr;

	build_attribution(&p);
	s = render(&p, NULL, 15);
	REQUIRE(s);
	hdr = strstr(s, "Name    Self CPU %");
	CHECK(hdr != NULL);
	CHECK(strstr(s, "Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg     Self CUDA  "
			" Self CUDA %    CUDA total  CUDA time avg    # of Calls") != NULL);
	CHECK(strstr(s, "sorted by cuda_time_total") != NULL);
	CHECK(strstr(s, "Self CPU time total: 13.015ms\n") != NULL);
	CHECK(strstr(s, "Self CUDA time total: 4.100ms\n") != NULL);
	/* torch's formats: 2.600ms CUDA total, 650.000us avg over 4 calls */
	CHECK(strstr(s, "2.600ms") && strstr(s, "650.000us"));
	CHECK(strstr(s, "-----------") != NULL);
	CHECK(strstr(s, "cuda_gpu_kern_sum") && strstr(s, "cuda_api_sum") && strstr(s, "CUDA launch sites") == NULL);
	CHECK(strstr(s, "GPU utilization") && strstr(s, "Est. SM efficiency") && strstr(s, "Verdict"));
	CHECK(strstr(s, "more rows") == NULL);
	free(s);
	s = render(&p, NULL, -1);   /* < 0: no limit */
	CHECK(strstr(s, "more rows") == NULL);
	CHECK(strstr(s, "                kB") != NULL);
	free(s);

	s = render(&p, "count", 2);
	CHECK(strstr(s, "sorted by count") != NULL);
	CHECK(strstr(s, "(7 more rows; use --limit)") != NULL);
	free(s);
	s = render(&p, "tottime", 2);
	CHECK(strstr(s, "sorted by cuda_time_total") != NULL);
	CHECK(strstr(s, "= |union of kernel intervals| / window") != NULL);   /* formulas shown */
	free(s);
	/* -q: tables and values, no formula legends */
	quiet_flag = 1;
	s = render(&p, NULL, 15);
	quiet_flag = 0;
	CHECK(strstr(s, "GPU utilization") != NULL);
	CHECK(strstr(s, "= |union of kernel intervals|") == NULL);
	CHECK(strstr(s, "Throughput = bytes") == NULL);
	CHECK(strstr(s, "(idle = no GPU work") == NULL);
	CHECK(strstr(s, "Self CUDA time total: 4.100ms") != NULL);
	free(s);
	pb_profile_free(&p);
}

/* Kernel names as tables print them: at most CUDA_NAME_WIDTH columns, two
 * different kernels never alike, the kernel rows of the autograd-style table
 * the same text as the kernel summary, and a mangled name the demangler
 * refused (cut at the agent's limit) shown by its readable prefix. */
static void test_display_names(void)
{
	static const char *const k[] = {
		"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
		"at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
		"at::detail::Array<char*, 3>)",
		"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::Half>, "
		"at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<c10::Half>, "
		"at::detail::Array<char*, 3>)",
		"_ZN17cutlass__5x_cudnn6KernelINS_4gemm6kernel13GemmUniversalINS1_10threadblock",
		"_ZN17cutlass__5x_cudnn6KernelINS_4gemm6kernel13GemmUniversalINS1_10threadblock2",
		"kernelA(float*, int)",
	};
	struct profile p;
	struct cuda_analysis *a;
	size_t i, j, n = sizeof(k) / sizeof(k[0]);
	uint32_t c;

	cb_init(&p);
	cb_h100(&p, 0);
	for (i = 0; i < n; i++) {
		c = cb_api(&p, "cudaLaunchKernel", 0, i * MS, i * MS + 5 * US);
		cb_kernel(&p, k[i], i * MS + 10 * US, i * MS + 110 * US, c, 132, 256, 32);
	}
	REQUIRE(cuda_analyze(&p, &a) == 0 && a);
	REQUIRE(a->nkernels == n);
	for (i = 0; i < a->nkernels; i++) {
		const struct cuda_op_row *r = cb_op(a, a->kernels[i].name, CUDA_ROW_KERNEL);

		fprintf(stderr, "# %s\n", a->kernels[i].display);
		CHECK(strlen(a->kernels[i].display) <= CUDA_NAME_WIDTH + 2);   /* "…" is 3 bytes */
		CHECK(r && r->display == a->kernels[i].display);
		for (j = 0; j < i; j++)
			CHECK(strcmp(a->kernels[i].display, a->kernels[j].display) != 0);
		if (!strcmp(a->kernels[i].name, "kernelA(float*, int)"))
			CHECK_STR(a->kernels[i].display, "kernelA(float*, int)");
		if (!strncmp(a->kernels[i].name, "_ZN17", 5))
			CHECK(!strncmp(a->kernels[i].display, "Kernel<GemmUniversal<", 21) ||
			      !strncmp(a->kernels[i].display, "cutlass__5x_cudnn::Kernel<", 26));
	}
	/* other rows keep their names */
	CHECK(cb_op(a, "cudaLaunchKernel", CUDA_ROW_API) &&
	      !strcmp(cb_op(a, "cudaLaunchKernel", CUDA_ROW_API)->display, "cudaLaunchKernel"));
	cuda_analysis_free(a);
	/* the text prints the display names, never a name cut at the front */
	{
		char *t = render(&p, NULL, 15);

		REQUIRE(t);
		CHECK(strstr(t, "vectorized_elementwise_kernel<4, CUDAFunctor_add<Half>") != NULL);
		CHECK(strstr(t, "vectorized_elementwise_kernel<4, CUDAFunctor_add<float") != NULL);
		CHECK(strstr(t, "cutlass__5x_cudnn::Kernel<GemmUniversal<…>> #2") != NULL);
		CHECK(strstr(t, "at::native::vectorized") == NULL);
		CHECK(strstr(t, "…ous namespace") == NULL);
		free(t);
	}
	pb_profile_free(&p);
}

int main(int argc, char **argv)
{
	if (argc > 1) {
		struct profile p;
		char *s;

		build_attribution(&p);
		s = render(&p, argv[1], 15);
		fputs(s, stdout);
		free(s);
		pb_profile_free(&p);
		return 0;
	}
	test_kernel_stats();
	test_api_and_memops();
	test_attribution();
	test_launch_sites();
	test_text();
	test_display_names();
	return test_result();
}
