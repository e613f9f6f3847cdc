/*
 * torch_sim.cc — libtorch_sim.so, the slice of libtorch of the simulated
 * training loop (ops_sim.h, torch_sim.h): operators whose call() burns CPU in
 * their own code and launches through the vendor libraries or its own launch
 * glue, and an autograd engine with its own thread, as libtorch has.  Its
 * module name starts with libtorch: the launch-site search passes over it.
 */
#include <pthread.h>
#include <time.h>

#include <vector>

extern "C" {
#include "fakecuda.h"
}
#include "ops_sim.h"
#include "torch_sim.h"

#define SIM_NOINLINE __attribute__((noinline))

static volatile unsigned long sink;

/* The forward runs on stream 1, the engine thread on stream 2. */
enum { FWD = 1, BWD = 2 };

SIM_NOINLINE static void burn_ms(int ms)
{
	struct timespec t0, t;
	unsigned long x = 1;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do {
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005ul + 1442695040888963407ul;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
	sink = x;
}

/* The library's own launch glue (at::native::gpu_kernel and friends). */
SIM_NOINLINE static void launch_elementwise(const char *name, unsigned long ns, unsigned stream)
{
	struct fakecuda_kernel k = {};

	k.name = name;
	k.gpu_ns = ns;
	k.grid[0] = 64, k.grid[1] = 1, k.grid[2] = 1;
	k.block[0] = 128, k.block[1] = 1, k.block[2] = 1;
	k.registers = 16;
	fakecuda_launch(&k, stream);
	sink++;
}

static unsigned stream_of_thread(void);

namespace at {
namespace _ops {

SIM_NOINLINE at::Tensor addmm::redispatch(const at::Tensor &self)
{
	cublasSgemm_sim(stream_of_thread());
	sink++;
	return self;
}

SIM_NOINLINE at::Tensor addmm::call(const at::Tensor &self)
{
	burn_ms(OPS_ADDMM_BURN_MS);
	at::Tensor r = addmm::redispatch(self);
	sink++;
	return r;
}

SIM_NOINLINE at::Tensor linear::call(const at::Tensor &self)
{
	burn_ms(OPS_LINEAR_BURN_MS);
	at::Tensor r = addmm::call(self);
	sink++;
	return r;
}

SIM_NOINLINE at::Tensor cudnn_convolution::call(const at::Tensor &self)
{
	cudnnConvolutionForward_sim(FWD);
	sink++;
	return self;
}

SIM_NOINLINE at::Tensor _convolution::call(const at::Tensor &self)
{
	at::Tensor r = cudnn_convolution::call(self);
	sink++;
	return r;
}

SIM_NOINLINE at::Tensor convolution::call(const at::Tensor &self)
{
	at::Tensor r = _convolution::call(self);
	sink++;
	return r;
}

SIM_NOINLINE at::Tensor conv2d::call(const at::Tensor &self)
{
	at::Tensor r = convolution::call(self);
	sink++;
	return r;
}

SIM_NOINLINE at::Tensor mm::call(const at::Tensor &self)
{
	cublasSgemm_sim(BWD);
	sink++;
	return self;
}

SIM_NOINLINE at::Tensor convolution_backward::call(const at::Tensor &self)
{
	cudnnConvolutionBackwardData_sim(BWD);
	sink++;
	return self;
}

SIM_NOINLINE at::Tensor &relu_::call(at::Tensor &self)
{
	launch_elementwise(OPS_RELU, OPS_RELU_NS, FWD);
	sink++;
	return self;
}

SIM_NOINLINE at::Tensor &add__Tensor::call(at::Tensor &self, const at::Tensor &other)
{
	(void)other;
	launch_elementwise(OPS_ADD, OPS_ADD_NS, stream_of_thread());
	sink++;
	return self;
}

SIM_NOINLINE at::Tensor &copy_::call(at::Tensor &self, const at::Tensor &src, bool non_blocking)
{
	(void)src;
	fakecuda_memcpy(1 /* HtoD */, OPS_COPY_BYTES, 1, OPS_COPY_NS, non_blocking, FWD);
	sink++;
	return self;
}

} // namespace _ops
} // namespace at

namespace torch {
namespace autograd {
namespace generated {

struct AddmmBackward0 {
	SIM_NOINLINE static std::vector<at::Tensor> apply(std::vector<at::Tensor> &&grads)
	{
		/* grad of the input and of the weight: two matrix multiplies */
		at::_ops::mm::call(grads[0]);
		at::_ops::mm::call(grads[0]);
		sink++;
		return grads;
	}
};

struct ConvolutionBackward0 {
	SIM_NOINLINE static std::vector<at::Tensor> apply(std::vector<at::Tensor> &&grads)
	{
		at::_ops::convolution_backward::call(grads[0]);
		sink++;
		return grads;
	}
};

} // namespace generated

struct AccumulateGrad {
	SIM_NOINLINE static std::vector<at::Tensor> apply(std::vector<at::Tensor> &&grads)
	{
		at::_ops::add__Tensor::call(grads[0], grads[0]);
		sink++;
		return grads;
	}
};

/* The engine: one device thread, fed one step at a time. */
struct Engine {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int pending, done, started;
	pthread_t thread;

	SIM_NOINLINE static void evaluate_function(int step)
	{
		std::vector<at::Tensor> g(1, at::Tensor{ step });

		for (int i = 0; i < OPS_BW_ADDMM_PER_STEP; i++)
			generated::AddmmBackward0::apply(std::vector<at::Tensor>(g));
		generated::ConvolutionBackward0::apply(std::vector<at::Tensor>(g));
		for (int i = 0; i < OPS_ACCUMULATE_PER_STEP; i++)
			AccumulateGrad::apply(std::vector<at::Tensor>(g));
		sink++;
	}

	SIM_NOINLINE static void *thread_main(void *arg);
};

static Engine engine = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, -1, 0, 0, {} };

SIM_NOINLINE void *Engine::thread_main(void *arg)
{
	Engine *e = static_cast<Engine *>(arg);

	for (;;) {
		int step;

		pthread_mutex_lock(&e->lock);
		while (e->pending < 0)
			pthread_cond_wait(&e->cond, &e->lock);
		step = e->pending;
		e->pending = -1;
		pthread_mutex_unlock(&e->lock);
		evaluate_function(step);
		pthread_mutex_lock(&e->lock);
		e->done++;
		pthread_cond_broadcast(&e->cond);
		pthread_mutex_unlock(&e->lock);
	}
	return nullptr;
}

SIM_NOINLINE void run_backward(int step)
{
	int want;

	pthread_mutex_lock(&engine.lock);
	if (!engine.started) {
		engine.started = 1;
		pthread_create(&engine.thread, nullptr, Engine::thread_main, &engine);
		pthread_setname_np(engine.thread, "pt_autograd_0");
		pthread_detach(engine.thread);
	}
	want = engine.done + 1;
	engine.pending = step;
	pthread_cond_broadcast(&engine.cond);
	while (engine.done < want)
		pthread_cond_wait(&engine.cond, &engine.lock);
	pthread_mutex_unlock(&engine.lock);
}

} // namespace autograd
} // namespace torch

static unsigned stream_of_thread(void)
{
	return pthread_equal(pthread_self(), torch::autograd::engine.thread) &&
			       torch::autograd::engine.started
		       ? BWD
		       : FWD;
}
