// lockstress.cc — every lock a sampling handler could meet, held by the
// program while samples arrive (run at 10 kHz, under a watchdog): threads that
// walk dl_iterate_phdr with slow callbacks (the loader lock), dlopen/dlclose a
// library in a loop, malloc/free across threads, call glibc's backtrace(),
// throw C++ exceptions (libgcc's unwinder and its locks), and unwind with the
// program's own libunwind (its locks, its "block all signals").  It must
// finish; it prints a fixed line per activity.  Argument: seconds of CPU per
// thread, and the library to dlopen.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <stdexcept>

#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <pthread.h>
#define UNW_LOCAL_ONLY
#include <libunwind.h>

static double secs = 1.0;
static const char *lib;
static std::atomic<long> counts[6];

static double cpu_now()
{
	timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int slow_cb(dl_phdr_info *info, size_t, void *arg)
{
	volatile unsigned long x = info->dlpi_addr;

	for (int i = 0; i < 20000; i++)
		x = x * 31 + i;
	*(unsigned long *)arg += x & 1;
	return 0;
}

static void *phdr_walker(void *)
{
	unsigned long sink = 0;
	double end = cpu_now() + secs;

	while (cpu_now() < end) {
		dl_iterate_phdr(slow_cb, &sink);
		counts[0]++;
	}
	return nullptr;
}

static void *dl_looper(void *)
{
	double end = cpu_now() + secs;

	while (cpu_now() < end) {
		void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);

		if (h) {
			auto fn = (int (*)(int))dlsym(h, "thrower_run");
			if (fn)
				fn(1);
			dlclose(h);
		}
		counts[1]++;
	}
	return nullptr;
}

static void *mallocer(void *)
{
	static void *slots[4096];
	double end = cpu_now() + secs;
	unsigned r = 1;

	while (cpu_now() < end) {
		for (int i = 0; i < 1000; i++) {
			r = r * 1103515245u + 12345u;
			void *p = __atomic_exchange_n(&slots[r % 4096], nullptr, __ATOMIC_ACQ_REL);
			free(p); // often another thread's block
			p = malloc(16 + r % 4000);
			p = __atomic_exchange_n(&slots[(r >> 8) % 4096], p, __ATOMIC_ACQ_REL);
			free(p);
		}
		counts[2]++;
	}
	return nullptr;
}

__attribute__((noinline)) static int deep_bt(int n)
{
	void *buf[64];

	if (n == 0)
		return backtrace(buf, 64);
	return deep_bt(n - 1) + (n & 1);
}

static void *backtracer(void *)
{
	double end = cpu_now() + secs;

	while (cpu_now() < end) {
		deep_bt(20);
		counts[3]++;
	}
	return nullptr;
}

__attribute__((noinline)) static int thrower(int n)
{
	if (n == 0)
		throw std::runtime_error("deep");
	return thrower(n - 1) + 1;
}

static void *exceptions(void *)
{
	double end = cpu_now() + secs;

	while (cpu_now() < end) {
		try {
			thrower(20);
		} catch (const std::runtime_error &) {
			counts[4]++;
		}
	}
	return nullptr;
}

__attribute__((noinline)) static int deep_unw(int n)
{
	void *buf[64];

	if (n == 0)
		return unw_backtrace(buf, 64);
	return deep_unw(n - 1) + (n & 1);
}

static void *libunwinder(void *)
{
	double end = cpu_now() + secs;

	while (cpu_now() < end) {
		deep_unw(20);
		counts[5]++;
	}
	return nullptr;
}

int main(int argc, char **argv)
{
	void *(*fns[])(void *) = {phdr_walker, phdr_walker, dl_looper, mallocer, mallocer,
				  backtracer, exceptions, libunwinder, libunwinder};
	const char *names[] = {"dl_iterate_phdr", "dlopen/dlclose", "malloc", "backtrace",
			       "exceptions", "libunwind"};
	const int n = sizeof(fns) / sizeof(fns[0]);
	pthread_t th[n];

	if (argc > 1)
		secs = atof(argv[1]);
	lib = argc > 2 ? argv[2] : "libm.so.6";
	for (int i = 0; i < n; i++)
		pthread_create(&th[i], nullptr, fns[i], nullptr);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], nullptr);
	for (int i = 0; i < 6; i++)
		printf("%s: %s\n", names[i], counts[i] > 0 ? "ran" : "never ran");
	return 0;
}
