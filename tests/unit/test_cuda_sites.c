/*
 * test_cuda_sites.c — launch-site frame selection on the call chains real
 * launches produce: nvcc's host wrapper and __device_stub__ (names and files as
 * nvcc 13 emits them), dynamic and static cudart, driver-API launches, and
 * each skip rule of cuda_frame_is_launch_glue() on its own.
 */
#include <stdio.h>

#include "test_cuda_build.h"
#include "testlib.h"

/* One frame of a hand-made chain, leaf first. */
struct fr {
	const char *name, *file;
	uint32_t line;
	const char *module;
};

#define STUB_FILE "/tmp/tmpxft_00003aad_00000000-6_k.cudafe1.stub.c"
#define TK_INC "/usr/local/cuda/bin/../targets/x86_64-linux/include/"
#define RT_TEMPLATE                                                                     \
	"cudaError cudaLaunchKernel<char>(char const*, dim3, dim3, void**, unsigned long, " \
	"CUstream_st*)"

/* The site one launch of `kernel` from the stack `frames` (n frames) gets:
 * *fn, *line.  The launch is a runtime call carrying the stack, with a driver
 * call nested in it that launched the kernel (the shape CUPTI gives). */
static void site_of(const struct fr *frames, int n, const char *kernel, char *fn, size_t fnsz,
		    uint32_t *line, char *file, size_t filesz)
{
	struct profile p;
	struct cuda_analysis *a = NULL;
	uint32_t funcs[32], lines[32], c, s;
	int i;

	REQUIRE(n <= 32);
	cb_init(&p);
	for (i = 0; i < n; i++) {
		funcs[i] = cb_func(&p, frames[i].name, frames[i].file, 1, frames[i].module);
		lines[i] = frames[i].line;
	}
	s = cb_stack(&p, n, funcs, lines);
	c = cb_api(&p, "cudaLaunchKernel", 0, 0, 10 * US);
	p.cuda_api[c].stack = s;
	c = cb_api(&p, "cuLaunchKernel", 0, 2 * US, 8 * US);
	cb_kernel(&p, kernel, 20 * US, 120 * US, c, 132, 256, 32);
	REQUIRE(cuda_analyze(&p, &a) == 0 && a);
	REQUIRE(a->nsites == 1);
	CHECK_EQ_INT(a->sites[0].launches, 1);
	CHECK_EQ_INT(a->sites[0].gpu_ns, 100 * US);
	snprintf(fn, fnsz, "%s", a->sites[0].function);
	snprintf(file, filesz, "%s", a->sites[0].file);
	*line = a->sites[0].line;
	cuda_analysis_free(a);
	pb_profile_free(&p);
}

#define EXPECT_SITE(frames, kernel, want_fn, want_line)                                       \
	do {                                                                                  \
		char fn_[256], file_[256];                                                    \
		uint32_t line_ = 0;                                                           \
		site_of((frames), (int)(sizeof(frames) / sizeof((frames)[0])), (kernel), fn_, \
			sizeof(fn_), &line_, file_, sizeof(file_));                           \
		CHECK_STR(fn_, (want_fn));                                                    \
		CHECK_EQ_INT(line_, (want_line));                                             \
	} while (0)

/* kernelE<<<1, 32>>>(p) in run() at k.cu:6, dynamic cudart: the runtime's
 * cudaLaunchKernel<char> template from cuda_runtime.h is inlined into the stub,
 * and the host wrapper kernelE(float*) is inlined into run(). */
static void test_dynamic_cudart(void)
{
	static const struct fr chain[] = {
		{ "cbn_cuda_api_enter", "cuda_layer.c", 80, "libcbottleneck_cuda.so" },
		{ "cudaLaunchKernel", "", 0, "libcudart.so.13" },
		{ RT_TEMPLATE, TK_INC "cuda_runtime.h", 216, "k" },
		{ "__device_stub__Z7kernelEPf(float*)", STUB_FILE, 13, "k" },
		{ "kernelE(float*)", "/tmp/cudafix/k.cu", 3, "k" },
		{ "run(float*)", "/tmp/cudafix/k.cu", 6, "k" },
		{ "main", "/tmp/cudafix/k.cu", 9, "k" },
	};
	char fn[256], file[256];
	uint32_t line;

	site_of(chain, 7, "kernelE(float*)", fn, sizeof(fn), &line, file, sizeof(file));
	CHECK_STR(fn, "run(float*)");
	CHECK_STR(file, "/tmp/cudafix/k.cu");
	CHECK_EQ_INT(line, 6);
}

/* The chain exactly as the symbolizer resolves it in an nvcc 13 -O2 -g build
 * with shared cudart (the layer has cut libcudart and itself): cudaLaunchKernel's
 * helper from crt/device_functions.h inlined into the stub, the wrapper
 * inlined into run(). */
static void test_nvcc13_chain(void)
{
	static const struct fr chain[] = {
		{ "cuLaunchKernel", "", 0, "libcuda.so.1" },
		{ "__cudaLaunchKernel_helper", TK_INC "crt/device_functions.h", 2963, "k" },
		{ "__device_stub__Z7kernelEPf(float*)", STUB_FILE, 14, "k" },
		{ "kernelE(float*)", "/tmp/cudafix/k.cu", 3, "k" },
		{ "run(float*)", "/tmp/cudafix/k.cu", 6, "k" },
		{ "main", "/tmp/cudafix/k.cu", 9, "k" },
	};

	EXPECT_SITE(chain, "kernelE(float*)", "run(float*)", 6);
}

/* nvcc's default --cudart static: the runtime is in the executable, its
 * functions unnamed by any source file (libcudart_static_<hash>, cudaLaunchKernel,
 * __cudaLaunchKernel), and host_runtime.h code between them and the stub. */
static void test_static_cudart(void)
{
	static const struct fr chain[] = {
		{ "libcudart_static_0053c1d33059ebe986009dc8a76c61eb6412a2c3", "", 0, "k" },
		{ "cudart::cudaApiLaunchKernel(void const*, dim3, dim3, void**, unsigned long, "
		  "CUstream_st*)", "", 0, "k" },
		{ "cudaLaunchKernel", "", 0, "k" },
		{ "__cudaLaunchKernel", "", 0, "k" },
		{ "__cudaLaunch", TK_INC "crt/host_runtime.h", 40, "k" },
		{ "__device_stub__Z7kernelEPf(float*)", STUB_FILE, 13, "k" },
		{ "kernelE(float*)", "/tmp/cudafix/k.cu", 3, "k" },
		{ "run(float*)", "/tmp/cudafix/k.cu", 6, "k" },
		{ "main", "/tmp/cudafix/k.cu", 9, "k" },
	};

	EXPECT_SITE(chain, "kernelE(float*)", "run(float*)", 6);
}

/* A template kernel in a namespace: the wrapper's demangled name carries the
 * return type, as does the kernel's; the stub is a .cold clone. */
static void test_template_kernel(void)
{
	static const struct fr chain[] = {
		{ "cudaLaunchKernel", "", 0, "libcudart.so.13" },
		{ "__device_stub__ZN2ns4kernIiEEvPT_(int*) [clone .cold]", STUB_FILE, 20, "k" },
		{ "void ns::kern<int>(int*)", "/tmp/cudafix/k.cu", 2, "k" },
		{ "run(float*)", "/tmp/cudafix/k.cu", 7, "k" },
		{ "main", "/tmp/cudafix/k.cu", 9, "k" },
	};

	EXPECT_SITE(chain, "void ns::kern<int>(int*)", "run(float*)", 7);
}

/* What the simulated workload produces: C symbols, so the wrapper keeps its
 * mangled name and the stub its plain one; the kernel is demangled.  The stub
 * names the wrapper's mangled symbol. */
static void test_mangled_wrapper(void)
{
	static const struct fr chain[] = {
		{ "fakecuda_launch", "fakedrv.c", 215, "libcupti.so.13" },
		{ "__device_stub__Z7kernelEPf", "workload.c", 94, "cuda_workload" },
		{ "_Z7kernelEPf", "workload.c", 102, "cuda_workload" },
		{ "launch_e_like_nvcc", "workload.c", 108, "cuda_workload" },
		{ "wl_nvcc", "workload.c", 172, "cuda_workload" },
	};

	EXPECT_SITE(chain, "kernelE(float*)", "launch_e_like_nvcc", 108);
}

/* The wrapper is skipped only when a frame lies outside it: a stack cut right
 * after it keeps it, as it is the best there is. */
static void test_wrapper_needs_outer_frame(void)
{
	static const struct fr chain[] = {
		{ "cudaLaunchKernel", "", 0, "libcudart.so.13" },
		{ "__device_stub__Z7kernelEPf(float*)", STUB_FILE, 13, "k" },
		{ "kernelE(float*)", "/tmp/cudafix/k.cu", 3, "k" },
	};

	EXPECT_SITE(chain, "kernelE(float*)", "kernelE(float*)", 3);
}

/* Only one wrapper: a host overload scale(float*, int) that launches the
 * kernel scale(float*) is the user's code and stays the site. */
static void test_one_wrapper_only(void)
{
	static const struct fr chain[] = {
		{ "cudaLaunchKernel", "", 0, "libcudart.so.13" },
		{ "__device_stub__Z5scalePf(float*)", STUB_FILE, 13, "k" },
		{ "scale(float*)", "/src/s.cu", 3, "k" },
		{ "scale(float*, int)", "/src/s.cu", 12, "k" },
		{ "main", "/src/s.cu", 20, "k" },
	};

	EXPECT_SITE(chain, "scale(float*)", "scale(float*, int)", 12);
}

/* Driver-API launches have no stub: a host function named like the kernel
 * it launches through cuLaunchKernel is the site. */
static void test_driver_launch_keeps_namesake(void)
{
	static const struct fr chain[] = {
		{ "cuLaunchKernel", "", 0, "libcuda.so.1" },
		{ "gemm(float*)", "/src/jit.c", 44, "app" },
		{ "main", "/src/jit.c", 90, "app" },
	};

	EXPECT_SITE(chain, "gemm(float*)", "gemm(float*)", 44);
}

/* A user's own cuda-named helper in the user's file is not the runtime. */
static void test_user_cuda_named_helper(void)
{
	static const struct fr chain[] = {
		{ "cudaLaunchKernel", "", 0, "libcudart.so.13" },
		{ "cudaRunAll(float*)", "/src/helpers.cu", 31, "app" },
		{ "main", "/src/main.cu", 5, "app" },
	};

	EXPECT_SITE(chain, "k(float*)", "cudaRunAll(float*)", 31);
}

/* Generated code (any .cudafe1.* temporary) whatever its function's name. */
static void test_cudafe_cpp_frame(void)
{
	static const struct fr chain[] = {
		{ "cudaLaunchKernel", "", 0, "libcudart.so.13" },
		{ "__nv_launch_helper", "/tmp/tmpxft_0001_00000000-6_a.cudafe1.cpp", 77, "app" },
		{ "step", "/src/a.cu", 15, "app" },
	};

	EXPECT_SITE(chain, "k(float*)", "step", 15);
}

/* Nothing but runtime and generated frames: the outermost generated frame of
 * the user's module (here the stub) rather than nothing. */
static void test_only_generated(void)
{
	static const struct fr chain[] = {
		{ "cudaLaunchKernel", "", 0, "libcudart.so.13" },
		{ "__device_stub__Z7kernelEPf(float*)", STUB_FILE, 13, "k" },
	};
	static const struct fr runtime_only[] = {
		{ "cudaLaunchKernel", "", 0, "libcudart.so.13" },
		{ "cudaLaunchKernel", "", 0, "k" },
	};

	EXPECT_SITE(chain, "kernelE(float*)", "__device_stub__Z7kernelEPf(float*)", 13);
	EXPECT_SITE(runtime_only, "kernelE(float*)", "[inside the CUDA runtime]", 0);
}

/* Each rule of the predicates on its own. */
static void test_predicates(void)
{
	/* generated files */
	CHECK(cuda_file_is_generated(STUB_FILE));
	CHECK(cuda_file_is_generated("/tmp/tmpxft_0001_00000000-6_a.cudafe1.cpp"));
	CHECK(cuda_file_is_generated("a.cudafe1.c"));
	CHECK(cuda_file_is_generated(TK_INC "crt/host_runtime.h"));
	CHECK(cuda_file_is_generated("crt/host_runtime.h"));
	CHECK(cuda_file_is_generated("/usr/include/cuda_runtime.h"));
	CHECK(!cuda_file_is_generated("/src/host_runtime.h"));
	CHECK(!cuda_file_is_generated("/src/a.cu"));
	CHECK(!cuda_file_is_generated("/src/cudafe1.c"));
	CHECK(!cuda_file_is_generated(""));
	CHECK(!cuda_file_is_generated(NULL));
	/* toolkit include dirs */
	CHECK(cuda_file_in_toolkit(TK_INC "cuda_runtime_api.h"));
	CHECK(cuda_file_in_toolkit("/usr/local/cuda-13.0/include/cuda/std/atomic"));
	CHECK(cuda_file_in_toolkit("/opt/nvidia/hpc_sdk/Linux_x86_64/24.1/cuda/12.3/include/x.h"));
	CHECK(!cuda_file_in_toolkit("/usr/include/stdio.h"));
	CHECK(!cuda_file_in_toolkit("/src/cudakit/src/x.c"));
	CHECK(!cuda_file_in_toolkit(""));
	/* names, whatever the file */
	CHECK(cuda_frame_is_launch_glue("__device_stub__Z7kernelEPf", "/src/a.cu"));
	CHECK(cuda_frame_is_launch_glue("__device_stub__Z7kernelEPf(float*)", ""));
	CHECK(cuda_frame_is_launch_glue("ns::__device_stub__ZN2ns1kEPf(float*)", ""));
	CHECK(cuda_frame_is_launch_glue("__cudaLaunchKernel", "/src/a.cu"));
	CHECK(cuda_frame_is_launch_glue("__cudaLaunch", "/src/a.cu"));
	CHECK(cuda_frame_is_launch_glue("cudaLaunchKernel", "/src/a.cu"));
	CHECK(cuda_frame_is_launch_glue("cudaLaunchCooperativeKernel", "/src/a.cu"));
	CHECK(cuda_frame_is_launch_glue(RT_TEMPLATE, TK_INC "cuda_runtime.h"));
	CHECK(cuda_frame_is_launch_glue(RT_TEMPLATE, "/src/a.cu"));
	CHECK(cuda_frame_is_launch_glue("__cudaPushCallConfiguration", "/src/a.cu"));
	CHECK(cuda_frame_is_launch_glue("__cudaPopCallConfiguration", "/src/a.cu"));
	CHECK(cuda_frame_is_launch_glue("__cudaLaunchKernel_helper", TK_INC "crt/device_functions.h"));
	/* files, whatever the name */
	CHECK(cuda_frame_is_launch_glue("anything", STUB_FILE));
	CHECK(cuda_frame_is_launch_glue("anything", TK_INC "crt/host_runtime.h"));
	/* static cudart: cuda*, __cuda*, cudart::*, libcudart_static_* with no file
	 * or a toolkit file; the same names in the user's file stay */
	CHECK(cuda_frame_is_launch_glue("cudaMemcpyAsync", ""));
	CHECK(cuda_frame_is_launch_glue("cudaMemcpyAsync", NULL));
	CHECK(cuda_frame_is_launch_glue("__cudaRegisterFatBinary", ""));
	CHECK(cuda_frame_is_launch_glue("cudart::globalState::initializeDriver()", ""));
	CHECK(cuda_frame_is_launch_glue("libcudart_static_0053c1d33059ebe986009dc8a76c61eb6412a2c3", ""));
	CHECK(cuda_frame_is_launch_glue("cudaGetLastError", TK_INC "cuda_runtime_api.h"));
	CHECK(!cuda_frame_is_launch_glue("cudaCheck(cudaError)", "/src/util.cu"));
	CHECK(!cuda_frame_is_launch_glue("libcudart_static_x", "/src/util.c"));
	CHECK(!cuda_frame_is_launch_glue("run(float*)", ""));
	CHECK(!cuda_frame_is_launch_glue("device_stub_helper", ""));
	CHECK(!cuda_frame_is_launch_glue("my_cudaLaunch", "/src/a.cu"));
	CHECK(!cuda_frame_is_launch_glue("", ""));
	CHECK(!cuda_frame_is_launch_glue(NULL, NULL));
	/* stubs */
	CHECK(cuda_frame_is_device_stub("__device_stub__Z7kernelEPf(float*) [clone .cold]"));
	CHECK(!cuda_frame_is_device_stub("kernelE(float*)"));
	CHECK(!cuda_frame_is_device_stub(NULL));
	/* host wrapper */
	CHECK(cuda_frame_is_host_wrapper("kernelE(float*)", "kernelE(float*)", NULL));
	CHECK(cuda_frame_is_host_wrapper("kernelE", "kernelE(float*)", NULL));
	CHECK(cuda_frame_is_host_wrapper("kernelE(float *)", "kernelE(float*)", NULL));
	CHECK(cuda_frame_is_host_wrapper("void ns::kern<int>(int*)", "void ns::kern<int>(int*)", NULL));
	CHECK(cuda_frame_is_host_wrapper("ns::kern<int>", "void ns::kern<int>(int*)", NULL));
	CHECK(cuda_frame_is_host_wrapper("(anonymous namespace)::k(int)",
					 "(anonymous namespace)::k(int)", NULL));
	CHECK(cuda_frame_is_host_wrapper("_Z7kernelEPf", "_Z7kernelEPf", NULL));
	CHECK(cuda_frame_is_host_wrapper("_Z7kernelEPf", "kernelE(float*)", "__device_stub__Z7kernelEPf"));
	CHECK(cuda_frame_is_host_wrapper("_Z7kernelEPf", NULL, "__device_stub__Z7kernelEPf(float*)"));
	CHECK(!cuda_frame_is_host_wrapper("_Z7kernelEPf", "kernelE(float*)", NULL));
	CHECK(!cuda_frame_is_host_wrapper("_Z7kernelFPf", NULL, "__device_stub__Z7kernelEPf"));
	CHECK(!cuda_frame_is_host_wrapper("kernelE2(float*)", "kernelE(float*)", NULL));
	CHECK(!cuda_frame_is_host_wrapper("ns::kern<long>", "void ns::kern<int>(int*)", NULL));
	CHECK(!cuda_frame_is_host_wrapper("other::kernelE(float*)", "kernelE(float*)", NULL));
	CHECK(!cuda_frame_is_host_wrapper("A::f() const", "B::g() const", NULL));
	CHECK(!cuda_frame_is_host_wrapper("", "", NULL));
	CHECK(!cuda_frame_is_host_wrapper(NULL, "kernelE(float*)", NULL));
}

/* llm.c's matmul_forward calls cuBLAS, which calls cuBLASLt, which
 * launches: the site is the user's line, past both libraries. */
static void test_past_cublas(void)
{
	static const struct fr chain[] = {
		{ "cudaLaunchKernel", "", 0, "libcudart.so.13" },
		{ "libcublasLt.so.13.1.0.3+0x30a4405", "", 0, "libcublasLt.so.13.1.0.3" },
		{ "cublasLtMatmul", "", 0, "libcublasLt.so.13.1.0.3" },
		{ "cublasSgemm_v2", "", 0, "libcublas.so.13.1.0.3" },
		{ "matmul_forward(float*, float const*, float const*, float const*, int, int, int, "
		  "int)", "/src/llm.c/train_gpt2_fp32.cu", 734, "train_gpt2fp32cu" },
		{ "main", "/src/llm.c/train_gpt2_fp32.cu", 1600, "train_gpt2fp32cu" },
	};

	EXPECT_SITE(chain, "sm90_xmma_gemm_f32f32_f32f32_f32_nn_n",
		    "matmul_forward(float*, float const*, float const*, float const*, int, int, "
		    "int, int)", 734);
}

/* cuDNN, NCCL, CUTLASS compiled into the user's binary, and the C++
 * library's thread start: none is the user's code. */
static void test_past_vendors(void)
{
	static const struct fr cudnn[] = {
		{ "cudaLaunchKernel", "", 0, "libcudart.so.13" },
		{ "libcudnn_engines_precompiled.so.9+0x363a72c", "", 0,
		  "libcudnn_engines_precompiled.so.9.10.2" },
		{ "cudnnConvolutionForward", "", 0, "libcudnn_cnn.so.9" },
		{ "conv_layer(Tensor&)", "/src/net.cc", 88, "net" },
	};
	static const struct fr nccl[] = {
		{ "cudaLaunchKernelExC", "", 0, "libcudart.so.13" },
		{ "ncclLaunchKernel", "", 0, "libnccl.so.2" },
		{ "ncclAllReduce", "", 0, "libnccl.so.2" },
		{ "allreduce_grads()", "/src/dist.cc", 41, "net" },
	};
	static const struct fr cutlass[] = {
		{ "cudaLaunchKernel", "", 0, "libcudart.so.13" },
		{ "cutlass::device_kernel_launch<GemmKernel>(GemmKernel::Params)",
		  "/opt/cutlass/include/cutlass/device_kernel.h", 100, "gemm" },
		{ "cutlass::gemm::device::GemmUniversalAdapter<GemmKernel>::run(CUstream_st*)",
		  "/opt/cutlass/include/cutlass/gemm/device/gemm_universal_adapter.h", 300, "gemm" },
		{ "run_gemm(int)", "/src/gemm.cu", 52, "gemm" },
		{ "main", "/src/gemm.cu", 80, "gemm" },
	};
	static const struct fr thread[] = {
		{ "cudaLaunchKernel", "", 0, "libcudart.so.13" },
		{ "worker(int)", "/src/pool.cc", 17, "pool" },
		{ "std::thread::_State_impl<...>::_M_run()", "", 0, "libstdc++.so.6.0.30" },
		{ "start_thread", "", 0, "libc.so.6" },
	};

	EXPECT_SITE(cudnn, "cudnn_kernel", "conv_layer(Tensor&)", 88);
	EXPECT_SITE(nccl, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "allreduce_grads()", 41);
	EXPECT_SITE(cutlass, "cutlass_kernel", "run_gemm(int)", 52);
	EXPECT_SITE(thread, "k", "worker(int)", 17);
}

/* Nothing of the user's: without an interpreter, the first frame past the
 * runtime (the library that launched); under Python, the framework
 * function the interpreter called; a Python line in the user's file wins. */
static void test_no_user_frame(void)
{
	static const struct fr lib_only[] = {
		{ "cudaLaunchKernel", "", 0, "libcudart.so.13" },
		{ "cublasSgemm_v2", "", 0, "libcublas.so.13" },
		{ "start_thread", "", 0, "libc.so.6" },
	};
	static const struct fr python[] = {
		{ "cudaLaunchKernel", "", 0, "libcudart.so.13" },
		{ "at::native::gemm", "", 0, "libtorch_cuda.so" },
		{ "at::_ops::mm::call(at::Tensor const&, at::Tensor const&)", "", 0, "libtorch_cpu.so" },
		{ "torch::autograd::THPVariable_mm(_object*, _object*, _object*)", "", 0,
		  "libtorch_python.so" },
		{ "cfunction_call", "", 0, "python3.12" },
		{ "_PyEval_EvalFrameDefault", "", 0, "python3.12" },
		{ "Py_RunMain", "", 0, "python3.12" },
	};
	static const struct fr python_frames[] = {
		{ "cudaLaunchKernel", "", 0, "libcudart.so.13" },
		{ "at::_ops::mm::call(at::Tensor const&, at::Tensor const&)", "", 0, "libtorch_cpu.so" },
		{ "torch::autograd::THPVariable_mm(_object*, _object*, _object*)", "", 0,
		  "libtorch_python.so" },
		{ "cfunction_call", "", 0, "libpython3.12.so.1.0" },
		{ "forward", "/usr/lib/python3/dist-packages/torch/nn/modules/linear.py", 125, "" },
		{ "_PyEval_EvalFrameDefault", "", 0, "libpython3.12.so.1.0" },
		{ "step", "/home/u/train.py", 17, "" },
		{ "_PyEval_EvalFrameDefault", "", 0, "libpython3.12.so.1.0" },
	};

	EXPECT_SITE(lib_only, "k", "cublasSgemm_v2", 0);
	EXPECT_SITE(python, "k", "torch::autograd::THPVariable_mm(_object*, _object*, _object*)", 0);
	EXPECT_SITE(python_frames, "k", "step", 17);
}

static void test_frame_class(void)
{
	CHECK_EQ_INT(cuda_frame_class("libcublasLt.so.13", "x", ""), CUDA_FRAME_VENDOR);
	CHECK_EQ_INT(cuda_frame_class("libtorch_cuda.so", "x", ""), CUDA_FRAME_VENDOR);
	CHECK_EQ_INT(cuda_frame_class("libggml-cuda.so", "x", ""), CUDA_FRAME_VENDOR);
	CHECK_EQ_INT(cuda_frame_class("libonnxruntime_providers_cuda.so", "x", ""),
		     CUDA_FRAME_VENDOR);
	CHECK_EQ_INT(cuda_frame_class("python3.12", "x", ""), CUDA_FRAME_INTERP);
	CHECK_EQ_INT(cuda_frame_class("python3", "x", ""), CUDA_FRAME_INTERP);
	CHECK_EQ_INT(cuda_frame_class("libpython3.11.so.1.0", "x", ""), CUDA_FRAME_INTERP);
	CHECK_EQ_INT(cuda_frame_class("python_tool", "x", ""), CUDA_FRAME_USER);
	CHECK_EQ_INT(cuda_frame_class("libc.so.6", "x", ""), CUDA_FRAME_SYSTEM);
	CHECK_EQ_INT(cuda_frame_class("prog", "cutlass::gemm::device::Gemm<float>::run()", ""),
		     CUDA_FRAME_VENDOR);
	/* the name without its qualifiers (names_bare()), not the last word */
	CHECK_EQ_INT(cuda_frame_class("prog", "cutlass::gemm::device::Gemm<float>::run() const", ""),
		     CUDA_FRAME_VENDOR);
	CHECK_EQ_INT(cuda_frame_class("prog", "cutlassish_helper()", ""), CUDA_FRAME_USER);
	CHECK_EQ_INT(cuda_frame_class("", "step", "/home/u/train.py"), CUDA_FRAME_USER);
	CHECK_EQ_INT(cuda_frame_class("python3.12", "step", "/home/u/train.py"), CUDA_FRAME_USER);
	CHECK_EQ_INT(cuda_frame_class("", "forward",
				      "/venv/lib/python3.12/site-packages/torch/nn/modules/conv.py"),
		     CUDA_FRAME_VENDOR);
}

int main(void)
{
	test_dynamic_cudart();
	test_nvcc13_chain();
	test_static_cudart();
	test_template_kernel();
	test_mangled_wrapper();
	test_wrapper_needs_outer_frame();
	test_one_wrapper_only();
	test_driver_launch_keeps_namesake();
	test_user_cuda_named_helper();
	test_cudafe_cpp_frame();
	test_only_generated();
	test_predicates();
	test_past_cublas();
	test_past_vendors();
	test_no_user_frame();
	test_frame_class();
	return test_result();
}
