/*
 * ops_train.cc — the user's side of the simulated PyTorch training loop
 * (ops_sim.h): OPS_STEPS steps, each marked with cbn_annotate_step(), calling
 * operators from train_step() and running the backward on libtorch_sim's
 * engine thread.  The "site:" comments mark the lines the launch sites must
 * name (tests/e2e/cuda_ops.sh finds them by these comments).
 */
#include <stdio.h>

extern "C" {
#include "cbottleneck.h"
#include "fakecuda.h"
}
#include "ops_sim.h"
#include "torch_sim.h"

static volatile int sink;

__attribute__((noinline)) static void train_step(int step)
{
	at::Tensor x{ step }, host{ step };

	at::_ops::copy_::call(x, host, false); /* site:copy */
	for (int l = 0; l < OPS_LINEAR_PER_STEP; l++)
		x = at::_ops::linear::call(x); /* site:linear */
	x = at::_ops::conv2d::call(x); /* site:conv2d */
	at::_ops::relu_::call(x); /* site:relu */
	for (int i = 0; i < OPS_ADDS_PER_STEP; i++)
		at::_ops::add__Tensor::call(x, x); /* site:add */
	torch::autograd::run_backward(step);
	fakecuda_device_sync();
	sink++;
}

int main(void)
{
	if (fakecuda_init() != 0)
		return 99;
	for (int s = 0; s < OPS_STEPS; s++) {
		cbn_annotate_step();
		train_step(s);
	}
	cbn_annotate_step();   /* closes the last step */
	return 0;
}
