/*
 * torch_sim.h — the slice of libtorch the simulated training loop uses
 * (ops_sim.h): one struct per operator in namespace at::_ops with a static
 * call() (and, for addmm, the redispatch() torch.profiler does not record),
 * autograd nodes in torch::autograd::generated, and run_backward(), which
 * has the library's own engine thread run them.  Names and signatures as
 * PyTorch 2.x spells them, so the frames demangle to what libtorch's do.
 */
#ifndef CBN_TORCH_SIM_H
#define CBN_TORCH_SIM_H

#include <vector>

namespace at {
struct Tensor {
	int id;
};

namespace _ops {
#define TORCH_SIM_OP(name) \
	struct name { static at::Tensor call(const at::Tensor &self); }
TORCH_SIM_OP(linear);
TORCH_SIM_OP(conv2d);
TORCH_SIM_OP(convolution);
TORCH_SIM_OP(_convolution);
TORCH_SIM_OP(cudnn_convolution);
TORCH_SIM_OP(mm);
TORCH_SIM_OP(convolution_backward);
#undef TORCH_SIM_OP
struct addmm {
	static at::Tensor call(const at::Tensor &self);
	static at::Tensor redispatch(const at::Tensor &self);
};
struct relu_ {
	static at::Tensor &call(at::Tensor &self);
};
struct add__Tensor {
	static at::Tensor &call(at::Tensor &self, const at::Tensor &other);
};
struct copy_ {
	static at::Tensor &call(at::Tensor &self, const at::Tensor &src, bool non_blocking);
};
} // namespace _ops
} // namespace at

namespace torch {
namespace autograd {
/* Runs the step's backward on the engine thread (pt_autograd_0) and waits. */
void run_backward(int step);
} // namespace autograd
} // namespace torch

#endif
