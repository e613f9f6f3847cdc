// mem_local.cc — libmem_local.so: C++ code loaded with dlopen(RTLD_LOCAL) by
// mem_local_host.c, so that its libstdc++ is outside the global scope
// (as under CPython's extension modules: torch).  Its operator new must stay
// libstdc++'s under --memory: a failed new throws std::bad_alloc after
// calling the new-handler (a nothrow one returns nullptr), and a pair costs
// what the allocator costs.
#include <cstddef>
#include <ctime>
#include <new>

static int handler_calls;

static void handler()
{
	handler_calls++;
	std::set_new_handler(nullptr); // the next failure throws
}

// 1 when new of an impossible size called the new-handler once and threw
// std::bad_alloc, as libstdc++'s operator new does, and the nothrow new
// of that size called it once more and returned nullptr.
extern "C" int mem_local_bad_alloc(void)
{
	volatile std::size_t huge = (std::size_t)1 << 62;
	int thrown = 0;

	handler_calls = 0;
	std::set_new_handler(handler);
	try {
		char *p = new char[huge];
		delete[] p;
	} catch (const std::bad_alloc &) {
		thrown = handler_calls == 1;
	}
	std::set_new_handler(handler);
	char *q = new (std::nothrow) char[huge];
	return thrown && !q && handler_calls == 2;
}

// n new/delete pairs of 16..528 bytes; returns the thread's CPU ns per pair.
extern "C" double mem_local_pairs(long n)
{
	struct timespec a, b;
	char *volatile keep;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	for (long i = 0; i < n; i++) {
		keep = new char[16 + (i & 511)];
		keep[0] = 1;
		delete[] keep;
	}
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	return ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / (double)n;
}
