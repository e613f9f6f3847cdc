/*
 * test_names.c — names.c: signatures without parameter lists, the readable
 * prefix of mangled names the demangler refused, and short display names that
 * fit a column and never print alike for two different names.
 */
#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "testlib.h"

static void check_bare(const char *in, const char *want)
{
	char buf[512];

	names_bare_copy(buf, sizeof(buf), in);
	if (strcmp(buf, want) != 0)
		fprintf(stderr, "bare(\"%s\") = \"%s\"\n", in, buf);
	CHECK_STR(buf, want);
}

static void test_bare(void)
{
	check_bare("matmul_forward(float*, float const*, float const*, int, int)", "matmul_forward");
	check_bare("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
		   "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
		   "at::detail::Array<char*, 3>)",
		   "at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
		   "at::detail::Array<char*, 3> >");
	check_bare("at::_ops::addmm::call(at::Tensor const&, at::Tensor const&, at::Tensor const&, "
		   "c10::Scalar const&, c10::Scalar const&)", "at::_ops::addmm::call");
	check_bare("ns::A::operator()(int) const", "ns::A::operator()");
	check_bare("ns::A::operator()()", "ns::A::operator()");
	check_bare("bool ns::operator< <int>(ns::X<int> const&, ns::X<int> const&)",
		   "ns::operator< <int>");
	check_bare("ns::A::operator new(unsigned long)", "ns::A::operator new");
	check_bare("std::vector<int, std::allocator<int> >::size() const",
		   "std::vector<int, std::allocator<int> >::size");
	check_bare("(anonymous namespace)::helper(int)", "(anonymous namespace)::helper");
	check_bare("f(int) [clone .cold]", "f");
	check_bare("torch::autograd::generated::AddmmBackward0::apply(std::vector<at::Tensor, "
		   "std::allocator<at::Tensor> >&&)", "torch::autograd::generated::AddmmBackward0::apply");
	check_bare("foo()::{lambda(int)#1}::operator()(int) const", "foo()::{lambda(int)#1}::operator()");
	/* not signatures: untouched */
	check_bare("main", "main");
	check_bare("[kernel] vfs_read", "[kernel] vfs_read");
	check_bare("libfoo.so.1+0x1a00", "libfoo.so.1+0x1a00");
	check_bare("unsigned long f", "unsigned long f");
	check_bare("", "");
}

static void check_unmangle(const char *in, const char *want)
{
	char buf[512];
	int r = names_unmangle_prefix(in, buf, sizeof(buf));

	if (!want) {
		CHECK(r < 0);
		return;
	}
	CHECK(r == 0);
	if (r == 0 && strcmp(buf, want) != 0)
		fprintf(stderr, "unmangle(\"%s\") = \"%s\"\n", in, buf);
	if (r == 0)
		CHECK_STR(buf, want);
}

static void test_unmangle(void)
{
	/* cuDNN's CUTLASS kernels, cut at the agent's name limit (not demanglable) */
	check_unmangle("_ZN17cutlass__5x_cudnn6KernelINS_4gemm6kernel13GemmUniversalINS1_10threadblock",
		       "cutlass__5x_cudnn::Kernel<cutlass__5x_cudnn::gemm::kernel::GemmUniversal<…>>");
	check_unmangle("_Z7kernelAPfi", "kernelA");
	check_unmangle("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIfEE",
		       "at::native::vectorized_elementwise_kernel<4>");
	check_unmangle("_ZN12_GLOBAL__N_16helperEv", "(anonymous namespace)::helper");
	check_unmangle("_ZNSt6vectorIiSaIiEE4sizeEv", "std::vector<int>");
	check_unmangle("_Z5scaleIfEvPT_", "scale<float>");
	check_unmangle("kernelD_driver", NULL);
	check_unmangle("_Z", NULL);
	check_unmangle("_ZZ", NULL);
	check_unmangle("_Z999abc", NULL);   /* a length past the end */
}

static int distinct(char **t, size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			if (strcmp(t[i], t[j]) == 0)
				return 0;
	return 1;
}

static void test_shorten(void)
{
	const char *names[] = {
		/* 0: fits: unchanged */
		"kernelA(float*, int)",
		/* 1, 2: differ only deep inside their template arguments */
		"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
		"at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
		"at::detail::Array<char*, 3>)",
		"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<double>, "
		"at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<double>, "
		"at::detail::Array<char*, 3>)",
		/* 3: a CUTLASS kernel: its one template argument says what it is */
		"void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_16x4_nn_align4>("
		"cutlass_80_tensorop_s1688gemm_128x128_16x4_nn_align4::Params)",
		/* 4, 5: the same text up to far past any column */
		"void very_long_kernel_name_that_goes_on_and_on_and_on_and_on_and_on_variant_one_x(int)",
		"void very_long_kernel_name_that_goes_on_and_on_and_on_and_on_and_on_variant_two_x(int)",
		/* 6: a duplicate of 1: the same text */
		NULL,
		/* 7: the anonymous namespace inside template arguments */
		"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
		"namespace)::TensorListMetadata<3>, at::native::(anonymous namespace)::"
		"BinaryOpListAlphaFunctor<float, 3, 2, 0>, std::plus<float>, float>(...)",
	};
	size_t n = sizeof(names) / sizeof(names[0]), i;
	char *t[sizeof(names) / sizeof(names[0])];

	names[6] = names[1];
	REQUIRE(names_shorten(names, NULL, n, 55, t) == 0);
	for (i = 0; i < n; i++) {
		fprintf(stderr, "# %2zu %s\n", i, t[i]);
		CHECK(names_width(t[i]) <= 55);
	}
	CHECK_STR(t[0], "kernelA(float*, int)");
	/* the template argument that says what it is stays, cut */
	CHECK(strncmp(t[3], "Kernel2<cutlass_80_tensorop_s1688gemm_128x128_16x4_", 51) == 0);
	/* add<float> and add<double> both show what they add */
	CHECK(strstr(t[1], "CUDAFunctor_add<float") != NULL);
	CHECK(strstr(t[2], "CUDAFunctor_add<doub") != NULL);
	/* one and two: where they differ shows */
	CHECK(strstr(t[4], "one") != NULL);
	CHECK(strstr(t[5], "two") != NULL);
	CHECK_STR(t[1], t[6]);
	CHECK(strcmp(t[1], t[2]) != 0);
	CHECK(strcmp(t[4], t[5]) != 0);
	CHECK(strstr(t[1], "vectorized_elementwise_kernel<") == t[1]);
	CHECK(strstr(t[7], "multi_tensor_apply_kernel<") == t[7]);
	CHECK(!strstr(t[7], "anonymous"));
	CHECK(strstr(t[7], "TensorListMetadata<3>") != NULL);
	/* every pair of different names prints differently */
	{
		char *u[7];
		size_t k = 0;

		for (i = 0; i < n; i++)
			if (i != 6)
				u[k++] = t[i];
		CHECK(distinct(u, k));
	}
	for (i = 0; i < n; i++)
		free(t[i]);

	/* many names alike: 200 kernels that differ in one template argument
	 * at the very end, at a narrow width */
	{
		enum { N = 200 };
		const char *nn[N];
		char *buf[N], *tt[N];

		for (i = 0; i < N; i++) {
			buf[i] = malloc(256);
			snprintf(buf[i], 256, "void ns::kernel<ns::Config<128, 64, 3>, ns::Epilogue<"
				 "ns::Bias<float>, %zu> >(ns::Params)", i);
			nn[i] = buf[i];
		}
		REQUIRE(names_shorten(nn, NULL, N, 24, tt) == 0);
		CHECK(distinct(tt, N));
		for (i = 0; i < N; i++) {
			CHECK(names_width(tt[i]) <= 24);
			free(tt[i]);
			free(buf[i]);
		}
	}
}

int main(void)
{
	test_bare();
	test_unmangle();
	test_shorten();
	return test_result();
}
