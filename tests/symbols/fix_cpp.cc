// fix_cpp.cc — C++ fixture for the symbolizer tests: a method in a namespace,
// a template and a function overloaded on its argument, each marking its
// call site (see fix_mark.h).  Built only when a C++ compiler is present.
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <unistd.h>

static volatile int fix_sink;

extern "C" __attribute__((noinline)) void fix_mark(const char *tag)
{
	void *ra = __builtin_return_address(0);
	Dl_info info;
	struct link_map *lm = nullptr;
	char exe[4096];

	if (!dladdr1(ra, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm)
		return;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	printf("MARK %s %s 0x%lx\n", tag, exe, (unsigned long)((unsigned long)ra - 1 - lm->l_addr));
}

namespace fixns {
struct Klass {
	int base;
	__attribute__((noinline)) int method(int x);
};

int Klass::method(int x)
{
	fix_sink += x + base;
	fix_mark("method"); /* MARK:method */
	return fix_sink;
}

template <typename T> __attribute__((noinline)) T twice(T v)
{
	fix_sink += 1;
	fix_mark("twice"); /* MARK:twice */
	fix_sink += (int)v; /* no tail call: the mark must return here */
	return v + v;
}

template <typename F> __attribute__((noinline)) int apply(F f)
{
	int r = f(3); /* MARK:apply_call */
	fix_sink += r;
	return r;
}
} // namespace fixns

int main(int argc, char **)
{
	fixns::Klass k{argc};
	k.method(argc);
	int r = (int)fixns::twice<long>(argc);
	r += fixns::apply([&](int q) {
		fix_mark("lambda"); /* MARK:lambda */
		return q + r + fix_sink;
	});
	return r & 0;
}
