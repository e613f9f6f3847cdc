/*
 * test_ops.c — operators from native frames (ops.c, ops_rules.c): the rules
 * table on the names PyTorch, ggml, ONNX Runtime and TensorFlow use, user
 * patterns, aten names from headers and without them, and the operator
 * table (sampled CPU self/total, exact CUDA self/total, launches, nesting,
 * recursion, driver calls inside runtime calls) on a hand-made profile with
 * known truth; and launch sites naming the operator.
 */
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "analysis.h"
#include "ops.h"
#include "report/ops_report.h"
#include "test_cuda_build.h"
#include "testlib.h"

static const char *label_of(struct ops_rules *r, const char *name, const char *module_path)
{
	static char buf[512];
	const char *fw;
	int merge;

	if (!ops_rules_match(r, name, module_path, buf, sizeof(buf), &fw, &merge))
		return "";
	return buf;
}

static void test_rules(void)
{
	struct op_pattern pat;
	struct ops_rules *r;
	char err[256], base[128];

	REQUIRE(ops_pattern_parse("^myops::([a-z_]+)::run$=my::\\u1", &pat, err, sizeof(err)) == 0);
	REQUIRE(ops_rules_new(&pat, 1, &r, err, sizeof(err)) == 0);

	/* PyTorch: call is an operator, redispatch is not; overloads fold */
	CHECK_STR(label_of(r, "at::_ops::addmm::call(at::Tensor const&, at::Tensor const&, "
			      "at::Tensor const&, c10::Scalar const&, c10::Scalar const&)", NULL),
		  "aten::addmm");
	CHECK_STR(label_of(r, "at::Tensor at::_ops::add_Tensor::call(at::Tensor const&, at::Tensor "
			      "const&, c10::Scalar const&)", NULL), "aten::add");
	CHECK_STR(label_of(r, "at::_ops::add__Tensor::call(at::Tensor&, at::Tensor const&, "
			      "c10::Scalar const&)", NULL), "aten::add_");
	CHECK_STR(label_of(r, "at::_ops::sum_dim_IntList::call(at::Tensor const&, "
			      "c10::OptionalArrayRef<long>, bool, std::optional<c10::ScalarType>)",
			   NULL), "aten::sum");
	CHECK_STR(label_of(r, "at::_ops::addmm::redispatch(c10::DispatchKeySet, at::Tensor const&)",
			   NULL), "");
	CHECK_STR(label_of(r, "torch::autograd::generated::AddmmBackward0::apply(std::vector<"
			      "at::Tensor, std::allocator<at::Tensor> >&&)", NULL), "AddmmBackward0");
	CHECK_STR(label_of(r, "torch::autograd::AccumulateGrad::apply(std::vector<at::Tensor, "
			      "std::allocator<at::Tensor> >&&)", NULL),
		  "torch::autograd::AccumulateGrad");
	CHECK_STR(label_of(r, "torch::autograd::Engine::evaluate_function(std::shared_ptr<"
			      "torch::autograd::GraphTask>&, torch::autograd::Node*)", NULL), "");
	/* ggml */
	CHECK_STR(label_of(r, "ggml_compute_forward_mul_mat", NULL), "GGML MUL_MAT");
	CHECK_STR(label_of(r, "ggml_compute_forward_soft_max", NULL), "GGML SOFT_MAX");
	CHECK_STR(label_of(r, "ggml_compute_forward", NULL), "");
	CHECK_STR(label_of(r, "ggml_cuda_op_rms_norm(ggml_backend_cuda_context&, ggml_tensor*)",
			   NULL), "GGML RMS_NORM");
	CHECK_STR(label_of(r, "ggml_cuda_mul_mat(ggml_backend_cuda_context&, ggml_tensor const*, "
			      "ggml_tensor const*, ggml_tensor*)", NULL), "GGML MUL_MAT");
	/* ONNX Runtime: the kernel class, not the base that dispatches */
	CHECK_STR(label_of(r, "onnxruntime::cuda::Conv<float, false>::ComputeInternal("
			      "onnxruntime::OpKernelContext*) const", NULL), "ORT Conv");
	CHECK_STR(label_of(r, "onnxruntime::Add<float>::Compute(onnxruntime::OpKernelContext*) "
			      "const", NULL), "ORT Add");
	CHECK_STR(label_of(r, "onnxruntime::cuda::CudaKernel::Compute(onnxruntime::OpKernelContext*) "
			      "const", NULL), "");
	/* TensorFlow: the kernel class, not the device */
	CHECK_STR(label_of(r, "tensorflow::MatMulOp<Eigen::ThreadPoolDevice, float>::Compute("
			      "tensorflow::OpKernelContext*)", NULL), "TF MatMulOp");
	CHECK_STR(label_of(r, "tensorflow::ThreadPoolDevice::Compute(tensorflow::OpKernel*, "
			      "tensorflow::OpKernelContext*)", NULL), "");
	/* the user's pattern, upper-cased group */
	CHECK_STR(label_of(r, "myops::gemm_nt::run(int)", NULL), "my::GEMM_NT");
	/* plain functions and pseudo frames are none */
	CHECK_STR(label_of(r, "main", NULL), "");
	CHECK_STR(label_of(r, "[kernel] vfs_read", NULL), "");
	ops_rules_free(r);

	/* aten names without headers: struct name -> operator */
	{
		static const char *const cases[][2] = {
			{ "addmm", "addmm" },
			{ "_foreach_add__List", "_foreach_add_" },
			{ "threshold_backward_grad_input", "threshold_backward" },
			{ "max_pool2d_with_indices_out", "max_pool2d_with_indices" },
			{ "clamp_min", "clamp_min" },
			{ "_values", "_values" },
			{ "log_softmax_int", "log_softmax" },
		};

		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			ops_aten_base(cases[i][0], base, sizeof(base));
			CHECK_STR(base, cases[i][1]);
		}
	}

	/* bad patterns */
	CHECK(ops_pattern_parse("noequals", &pat, err, sizeof(err)) < 0);
	CHECK(ops_pattern_parse("=name", &pat, err, sizeof(err)) < 0);
	CHECK(ops_pattern_parse("regex=", &pat, err, sizeof(err)) < 0);
	CHECK(ops_pattern_parse("a(b=name", &pat, err, sizeof(err)) < 0);
	CHECK(strstr(err, "not a valid regular expression") != NULL);
	/* the last '=' splits: a regex may hold one */
	REQUIRE(ops_pattern_parse("^a=b$=x", &pat, err, sizeof(err)) == 0);
	CHECK_EQ_INT(pat.regex_len, 5);
	CHECK_STR(pat.name, "x");
}

/* Headers beside libtorch name operators the overload list cannot:
 * is_set_to is one operator, not is_set with overload "to". */
static void test_headers(void)
{
	char dir[] = "/tmp/cbn-test-ops.XXXXXX", path[512], lib[512];
	struct ops_rules *r;
	char err[128];
	FILE *f;

	static const char *const dirs[] = { "torch", "torch/lib", "torch/include",
					    "torch/include/ATen", "torch/include/ATen/ops" };

	REQUIRE(mkdtemp(dir));
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, dirs[i]);
		REQUIRE(mkdir(path, 0700) == 0);
	}
	snprintf(path, sizeof(path), "%s/torch/include/ATen/ops/is_set_to_ops.h", dir);
	f = fopen(path, "w");
	REQUIRE(f);
	fputs("namespace at {\nnamespace _ops {\n\nstruct TORCH_API is_set_to {\n"
	      "  using schema = bool (const at::Tensor &, const at::Tensor &);\n"
	      "  static constexpr const char* name = \"aten::is_set_to\";\n"
	      "  static constexpr const char* overload_name = \"\";\n"
	      "  static constexpr const char* schema_str = \"is_set_to(Tensor self, Tensor tensor) -> bool\";\n"
	      "  static bool call(const at::Tensor & self, const at::Tensor & tensor);\n};\n}}\n", f);
	fclose(f);
	snprintf(lib, sizeof(lib), "%s/torch/lib/libtorch_cpu.so", dir);
	REQUIRE(ops_rules_new(NULL, 0, &r, err, sizeof(err)) == 0);
	CHECK_STR(label_of(r, "at::_ops::is_set_to::call(at::Tensor const&, at::Tensor const&)", lib),
		  "aten::is_set_to");
	ops_rules_free(r);
	/* without the headers, the overload list's guess */
	REQUIRE(ops_rules_new(NULL, 0, &r, err, sizeof(err)) == 0);
	CHECK_STR(label_of(r, "at::_ops::is_set_to::call(at::Tensor const&, at::Tensor const&)",
			   "/nonexistent/torch/lib/libtorch_cpu.so"), "aten::is_set");
	ops_rules_free(r);
	unlink(path);
	snprintf(path, sizeof(path), "rm -r '%s'", dir);
	CHECK(system(path) == 0);
}

static void sample(struct profile *p, uint32_t stack, uint32_t thread, uint32_t weight)
{
	struct prof_sample s = { .ts = 1000 + p->nsamples, .stack = stack, .thread = thread,
				 .weight = weight };

	PB_ADD(p->samples, p->nsamples, s);
}

static const struct op_row *row(const struct op_analysis *o, const char *name)
{
	size_t i;

	for (i = 0; o && i < o->nrows; i++)
		if (strcmp(o->rows[i].name, name) == 0)
			return &o->rows[i];
	return NULL;
}

static const struct cuda_site *site(const struct cuda_analysis *a, const char *fn, const char *op)
{
	size_t i;

	for (i = 0; a && i < a->nsites; i++)
		if (strcmp(a->sites[i].function, fn) == 0 && strcmp(a->sites[i].op, op) == 0)
			return &a->sites[i];
	return NULL;
}

/* A launch from stack s: a runtime call, and when driver is set a driver
 * call nested in it without a stack of its own that the kernel correlates
 * with (as CUPTI gives a cudart launch). */
static void launch(struct profile *p, uint32_t s, uint32_t thread, uint64_t t, const char *kernel,
		   uint64_t gpu_ns, int driver)
{
	uint32_t c = cb_api(p, "cudaLaunchKernel", thread, t, t + 10 * US);

	p->cuda_api[c].stack = s;
	if (driver)
		c = cb_api(p, "cuLaunchKernel", thread, t + 2 * US, t + 8 * US);
	cb_kernel(p, kernel, t + 20 * US, t + 20 * US + gpu_ns, c, 132, 256, 32);
}

/* The writers: the text table (torch's columns, honest CPU labels, rows by
 * --sort) and the JSON object (every row, the signature, the parents). */
static void test_report(const struct analysis *an)
{
	struct report_opts o = { .limit = 3 };
	char *buf = NULL, *out;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	cJSON *root, *ops, *rows, *r;
	int i, n;

	REQUIRE(f);
	CHECK_EQ_INT(report_ops_text(f, an, &o), 0);
	fclose(f);
	CHECK(strstr(buf, "Operators, autograd-style (sorted by cuda_time_total; CPU: sampled "
			  "on-CPU time, CUDA: exact GPU time)\n"));
	CHECK(strstr(buf, "Self CPU %  Sampled self CPU   CPU total %  Sampled CPU total     "
			  "Self CUDA   Self CUDA %    CUDA total      Launches\n"));
	CHECK(strstr(buf, "aten::addmm        52.63%          10.000ms        52.63%"));
	CHECK(strstr(buf, "   (4 more operators; use --limit)\n"));
	CHECK(strstr(buf, "Self CPU time total: 19.000ms (sampled; 100.00% of the run's "
			  "19.000ms of sampled CPU)\n"));
	free(buf);
	/* --sort self_cpu_time_total: addmm, linear, then GGML MUL_MAT */
	o.sort = "self_cpu_time_total";
	buf = NULL;
	f = open_memstream(&buf, &len);
	REQUIRE(f);
	CHECK_EQ_INT(report_ops_text(f, an, &o), 0);
	fclose(f);
	out = strstr(buf, "aten::addmm");
	CHECK(out && strstr(out, "aten::linear") && strstr(strstr(out, "aten::linear"),
							     "GGML MUL_MAT"));
	free(buf);

	root = cJSON_CreateObject();
	REQUIRE(root);
	CHECK_EQ_INT(report_ops_json(an, NULL, root), 0);
	ops = cJSON_GetObjectItem(root, "operators");
	REQUIRE(ops);
	CHECK_STR(cJSON_GetObjectItem(ops, "sort")->valuestring, "cuda_time_total");
	CHECK_EQ_INT(cJSON_GetObjectItem(ops, "gpu_ns")->valuedouble, 396 * US);
	rows = cJSON_GetObjectItem(ops, "rows");
	n = cJSON_GetArraySize(rows);
	CHECK_EQ_INT(n, (int)an->ops->nrows);
	for (i = 0; i < n; i++) {
		r = cJSON_GetArrayItem(rows, i);
		if (strcmp(cJSON_GetObjectItem(r, "name")->valuestring, "aten::addmm"))
			continue;
		CHECK_STR(cJSON_GetObjectItem(r, "framework")->valuestring, "pytorch");
		CHECK(strstr(cJSON_GetObjectItem(r, "entry")->valuestring,
			     "at::_ops::addmm::call(at::Tensor const&"));
		CHECK_EQ_INT(cJSON_GetObjectItem(r, "self_cuda_ns")->valuedouble, 316 * US);
		CHECK_EQ_INT(cJSON_GetObjectItem(r, "self_samples")->valuedouble, 10);
		CHECK_STR(cJSON_GetArrayItem(cJSON_GetObjectItem(r, "parents"), 0)->valuestring,
			  "aten::linear");
	}
	cJSON_Delete(root);
}

static void test_table(void)
{
	struct profile p;
	struct analysis an;
	const struct op_analysis *o;
	const struct op_row *r;
	const struct cuda_site *st;
	uint32_t th_bw, f[32], l[32] = { 0 }, s;
	uint64_t t = 0;
	int i;
	enum {
		MAIN, STEP, LINEAR, ADDMM, ADDMM_RD, ADD_, SUM, BW, MM, ENGINE, START, LAUNCH,
		CUBLAS, GGML, GGML_H, BIND, EVAL, PYSTEP, NF
	};
	uint32_t fn[NF];

	cb_init(&p);
	th_bw = cb_thread(&p, 101);
	fn[MAIN] = cb_func(&p, "main", "/src/train.cc", 40, "train");
	fn[STEP] = cb_func(&p, "train_step(int)", "/src/train.cc", 10, "train");
	fn[LINEAR] = cb_func(&p, "at::_ops::linear::call(at::Tensor const&, at::Tensor const&, "
				 "std::optional<at::Tensor> const&)", "", 0, "libtorch_cpu.so");
	fn[ADDMM] = cb_func(&p, "at::_ops::addmm::call(at::Tensor const&, at::Tensor const&, "
				"at::Tensor const&, c10::Scalar const&, c10::Scalar const&)", "", 0,
			    "libtorch_cpu.so");
	fn[ADDMM_RD] = cb_func(&p, "at::_ops::addmm::redispatch(c10::DispatchKeySet, at::Tensor "
				   "const&)", "", 0, "libtorch_cpu.so");
	fn[ADD_] = cb_func(&p, "at::_ops::add__Tensor::call(at::Tensor&, at::Tensor const&, "
			       "c10::Scalar const&)", "", 0, "libtorch_cpu.so");
	fn[SUM] = cb_func(&p, "at::_ops::sum_dim_IntList::call(at::Tensor const&)", "", 0,
			  "libtorch_cpu.so");
	fn[BW] = cb_func(&p, "torch::autograd::generated::AddmmBackward0::apply(std::vector<"
			     "at::Tensor, std::allocator<at::Tensor> >&&)", "", 0, "libtorch_cpu.so");
	fn[MM] = cb_func(&p, "at::_ops::mm::call(at::Tensor const&, at::Tensor const&)", "", 0,
			 "libtorch_cpu.so");
	fn[ENGINE] = cb_func(&p, "torch::autograd::Engine::thread_main(std::shared_ptr<"
				 "torch::autograd::GraphTask> const&)", "", 0, "libtorch_cpu.so");
	fn[START] = cb_func(&p, "start_thread", "", 0, "libc.so.6");
	fn[LAUNCH] = cb_func(&p, "cudaLaunchKernel", "", 0, "libcudart.so.13");
	fn[CUBLAS] = cb_func(&p, "cublasLtMatmul", "", 0, "libcublasLt.so.13");
	fn[GGML] = cb_func(&p, "ggml_compute_forward_mul_mat", "ggml-cpu.c", 1200, "libggml-cpu.so");
	fn[GGML_H] = cb_func(&p, "ggml_compute_forward_mul_mat_one_chunk", "ggml-cpu.c", 1100,
			     "libggml-cpu.so");
	fn[BIND] = cb_func(&p, "torch::autograd::THPVariable_addmm(_object*, _object*, _object*)",
			   "", 0, "libtorch_python.so");
	fn[EVAL] = cb_func(&p, "_PyEval_EvalFrameDefault", "", 0, "libpython3.12.so.1.0");
	fn[PYSTEP] = cb_func(&p, "step", "/home/u/train.py", 12, "");

	/* CPU: 10 periods in addmm (under linear), 5 in linear itself, 4 in a
	 * ggml helper of mul_mat */
	f[0] = fn[ADDMM_RD], f[1] = fn[ADDMM], f[2] = fn[LINEAR], f[3] = fn[STEP], f[4] = fn[MAIN];
	s = cb_stack(&p, 5, f, l);
	sample(&p, s, 0, 10);
	f[0] = fn[LINEAR], f[1] = fn[STEP], f[2] = fn[MAIN];
	sample(&p, cb_stack(&p, 3, f, l), 0, 5);
	f[0] = fn[GGML_H], f[1] = fn[GGML], f[2] = fn[MAIN];
	sample(&p, cb_stack(&p, 3, f, l), 0, 4);

	/* GPU: linear -> addmm -> cuBLAS: 3 x 100 us, from train_step line 17 */
	f[0] = fn[LAUNCH], f[1] = fn[CUBLAS], f[2] = fn[ADDMM_RD], f[3] = fn[ADDMM];
	f[4] = fn[LINEAR], f[5] = fn[STEP], f[6] = fn[MAIN];
	l[5] = 17;
	s = cb_stack(&p, 7, f, l);
	for (i = 0; i < 3; i++, t += MS)
		launch(&p, s, 0, t, "sgemm_kernel", 100 * US, 1);
	/* add_ inside linear inside add_ (recursion): 2 x 5 us, counted once */
	f[0] = fn[LAUNCH], f[1] = fn[ADD_], f[2] = fn[LINEAR], f[3] = fn[ADD_], f[4] = fn[STEP];
	l[4] = 18;
	s = cb_stack(&p, 5, f, l);
	for (i = 0; i < 2; i++, t += MS)
		launch(&p, s, 0, t, "elementwise_kernel", 5 * US, 0);
	/* sum, through a driver call without a stack of its own */
	f[0] = fn[LAUNCH], f[1] = fn[SUM], f[2] = fn[STEP];
	l[2] = 19;
	launch(&p, cb_stack(&p, 3, f, l), 0, t, "reduce_kernel", 20 * US, 1);
	t += MS;
	/* the autograd thread: mm under AddmmBackward0, no user frame */
	memset(l, 0, sizeof(l));
	f[0] = fn[LAUNCH], f[1] = fn[MM], f[2] = fn[BW], f[3] = fn[ENGINE], f[4] = fn[START];
	launch(&p, cb_stack(&p, 5, f, l), th_bw, t, "sgemm_kernel", 50 * US, 0);
	t += MS;
	/* Python without Python frames: the binding Python called is the site */
	f[0] = fn[LAUNCH], f[1] = fn[CUBLAS], f[2] = fn[ADDMM], f[3] = fn[BIND], f[4] = fn[EVAL];
	launch(&p, cb_stack(&p, 5, f, l), 0, t, "sgemm_kernel", 7 * US, 0);
	t += MS;
	/* ... and with them: the Python line */
	f[0] = fn[LAUNCH], f[1] = fn[CUBLAS], f[2] = fn[ADDMM], f[3] = fn[BIND], f[4] = fn[EVAL];
	f[5] = fn[PYSTEP], f[6] = fn[EVAL];
	l[5] = 33;
	launch(&p, cb_stack(&p, 7, f, l), 0, t, "sgemm_kernel", 9 * US, 0);
	cb_h100(&p, 0);

	REQUIRE(analysis_run(&p, NULL, &an) == 0);
	o = an.ops;
	REQUIRE(o);
	for (size_t k = 0; k < o->nrows; k++)
		fprintf(stderr, "# %-32s self_cpu %8llu total_cpu %8llu self_cuda %8llu cuda %8llu "
			"launches %llu/%llu\n", o->rows[k].name,
			(unsigned long long)o->rows[k].self_cpu_ns,
			(unsigned long long)o->rows[k].cpu_total_ns,
			(unsigned long long)o->rows[k].self_cuda_ns,
			(unsigned long long)o->rows[k].cuda_total_ns,
			(unsigned long long)o->rows[k].self_launches,
			(unsigned long long)o->rows[k].launches);
	/* the default order: CUDA total */
	CHECK_STR(o->sort_key, "cuda_time_total");
	CHECK_STR(o->rows[0].name, "aten::addmm");
	r = row(o, "aten::addmm");
	REQUIRE(r);
	CHECK_EQ_INT(r->self_cpu_ns, 10 * MS);
	CHECK_EQ_INT(r->cpu_total_ns, 10 * MS);
	CHECK_EQ_INT(r->self_cuda_ns, 316 * US);
	CHECK_EQ_INT(r->cuda_total_ns, 316 * US);
	CHECK_EQ_INT(r->launches, 5);
	CHECK_EQ_INT(r->self_launches, 5);
	CHECK_STR(r->framework, "pytorch");
	REQUIRE(r->nparents == 1);
	CHECK_STR(o->rows[r->parents[0]].name, "aten::linear");
	r = row(o, "aten::linear");
	REQUIRE(r);
	CHECK_EQ_INT(r->self_cpu_ns, 5 * MS);
	CHECK_EQ_INT(r->cpu_total_ns, 15 * MS);
	CHECK_EQ_INT(r->self_cuda_ns, 0);
	CHECK_EQ_INT(r->cuda_total_ns, 310 * US);   /* 3 sgemm + 2 add_ */
	CHECK_EQ_INT(r->launches, 5);
	CHECK_EQ_INT(r->self_launches, 0);
	r = row(o, "aten::add_");
	REQUIRE(r);
	CHECK_EQ_INT(r->self_cuda_ns, 10 * US);
	CHECK_EQ_INT(r->cuda_total_ns, 10 * US);    /* recursion: once per kernel */
	CHECK_EQ_INT(r->launches, 2);
	r = row(o, "aten::sum");
	REQUIRE(r);
	CHECK_EQ_INT(r->self_cuda_ns, 20 * US);
	CHECK_EQ_INT(r->self_launches, 1);
	r = row(o, "AddmmBackward0");
	REQUIRE(r);
	CHECK_EQ_INT(r->self_cuda_ns, 0);
	CHECK_EQ_INT(r->cuda_total_ns, 50 * US);
	r = row(o, "aten::mm");
	REQUIRE(r);
	CHECK_EQ_INT(r->self_cuda_ns, 50 * US);
	REQUIRE(r->nparents == 1);
	CHECK_STR(o->rows[r->parents[0]].name, "AddmmBackward0");
	/* ggml: the helper is part of mul_mat */
	r = row(o, "GGML MUL_MAT");
	REQUIRE(r);
	CHECK_EQ_INT(r->self_cpu_ns, 4 * MS);
	CHECK(!row(o, "GGML MUL_MAT_ONE_CHUNK"));
	CHECK(o->func_op[fn[GGML_H]] == OPS_NONE);
	CHECK_EQ_INT(o->cpu_ns, 19 * MS);
	CHECK_EQ_INT(o->self_cpu_total_ns, 19 * MS);
	CHECK_EQ_INT(o->gpu_ns, 396 * US);
	CHECK_EQ_INT(o->self_cuda_total_ns, 396 * US);
	CHECK_EQ_INT(o->launches, 9);
	/* every function that enters an operator maps to its row */
	CHECK_STR(o->rows[o->func_op[fn[ADDMM]]].name, "aten::addmm");
	CHECK(o->func_op[fn[ADDMM_RD]] == OPS_NONE);
	CHECK(o->func_op[fn[MAIN]] == OPS_NONE);

	/* launch sites: user line -> operator -> kernel */
	REQUIRE(an.cuda);
	st = site(an.cuda, "train_step(int)", "aten::addmm");
	REQUIRE(st);
	CHECK_EQ_INT(st->line, 17);
	CHECK_EQ_INT(st->launches, 3);
	CHECK_STR(st->kernel, "sgemm_kernel");
	CHECK_EQ_INT(st->kernels, 1);
	st = site(an.cuda, "train_step(int)", "aten::add_");
	CHECK(st && st->line == 18 && st->gpu_ns == 10 * US);
	st = site(an.cuda, "train_step(int)", "aten::sum");
	CHECK(st && st->line == 19);
	/* no user frame on the autograd thread: the outermost operator frame */
	CHECK(site(an.cuda, "torch::autograd::generated::AddmmBackward0::apply(std::vector<"
			    "at::Tensor, std::allocator<at::Tensor> >&&)", "aten::mm") != NULL);
	/* Python: the binding without Python frames, the line with them */
	CHECK(site(an.cuda, "torch::autograd::THPVariable_addmm(_object*, _object*, _object*)",
		   "aten::addmm") != NULL);
	st = site(an.cuda, "step", "aten::addmm");
	CHECK(st && st->line == 33 && st->gpu_ns == 9 * US);
	test_report(&an);
	analysis_free(&an);

	/* --sort keys */
	{
		struct op_row rows[3] = { { .name = "a", .self_cpu_ns = 1, .cpu_total_ns = 9 },
					  { .name = "b", .self_cpu_ns = 5, .cpu_total_ns = 5,
					    .launches = 3 },
					  { .name = "c", .self_cpu_ns = 3, .cpu_total_ns = 3 } };

		CHECK_STR(ops_sort(rows, 3, "self_cpu_time_total", 0), "self_cpu_time_total");
		CHECK_STR(rows[0].name, "b");
		CHECK_STR(ops_sort(rows, 3, NULL, 0), "cpu_time_total");
		CHECK_STR(rows[0].name, "a");
		CHECK_STR(ops_sort(rows, 3, "count", 0), "count");
		CHECK_STR(rows[0].name, "b");
		CHECK_STR(ops_sort(rows, 3, "tottime", 1), "cuda_time_total");
		CHECK(ops_sort_key_valid("self_device_time_total"));
		CHECK(!ops_sort_key_valid("tottime"));
	}
	pb_profile_free(&p);
}

/* A profile without operator frames has no operator analysis. */
static void test_none(void)
{
	struct profile p;
	struct op_analysis *o = (struct op_analysis *)1;
	uint32_t f[2], l[2] = { 0 };

	cb_init(&p);
	f[0] = cb_func(&p, "work", "w.c", 1, "prog");
	f[1] = cb_func(&p, "main", "w.c", 9, "prog");
	sample(&p, cb_stack(&p, 2, f, l), 0, 3);
	CHECK_EQ_INT(ops_analyze(&p, NULL, 0, &o), 0);
	CHECK(o == NULL);
	pb_profile_free(&p);
}

int main(void)
{
	test_rules();
	test_headers();
	test_table();
	test_none();
	return test_result();
}
