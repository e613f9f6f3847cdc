/*
 * cudnn_sim.c — libcudnn_sim.so: stands for cuDNN in the simulated PyTorch
 * loop (ops_sim.h): convolutions on NCHW tensors transpose them to NHWC and
 * back around the convolution kernel, as cuDNN does.
 */
#include "fakecuda.h"
#include "ops_sim.h"

static volatile int sink;

static const struct fakecuda_kernel to_nhwc = { .name = OPS_NCHW2NHWC, .gpu_ns = OPS_XPOSE_NS,
						 .grid = { 512, 1, 1 }, .block = { 256, 1, 1 },
						 .registers = 32 };
static const struct fakecuda_kernel to_nchw = { .name = OPS_NHWC2NCHW, .gpu_ns = OPS_XPOSE_NS,
						 .grid = { 512, 1, 1 }, .block = { 256, 1, 1 },
						 .registers = 32 };

__attribute__((noinline, visibility("default"))) void cudnnConvolutionForward_sim(unsigned stream)
{
	static const struct fakecuda_kernel conv = { .name = OPS_CONV, .gpu_ns = OPS_CONV_NS,
						     .grid = { 264, 1, 1 }, .block = { 128, 1, 1 },
						     .registers = 128 };

	fakecuda_launch(&to_nhwc, stream);
	fakecuda_launch(&conv, stream);
	fakecuda_launch(&to_nchw, stream);
	sink++;
}

__attribute__((noinline, visibility("default"))) void cudnnConvolutionBackwardData_sim(unsigned stream)
{
	static const struct fakecuda_kernel dgrad = { .name = OPS_DGRAD, .gpu_ns = OPS_DGRAD_NS,
						      .grid = { 264, 1, 1 }, .block = { 128, 1, 1 },
						      .registers = 128 };

	fakecuda_launch(&to_nhwc, stream);
	fakecuda_launch(&dgrad, stream);
	fakecuda_launch(&to_nchw, stream);
	sink++;
}
