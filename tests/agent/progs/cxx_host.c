/*
 * cxx_host.c — a C program that dlopens a C++ library (argv[1]) whose code
 * throws and catches exceptions: exception handling must work the same with
 * the agent preloaded (libunwind must not take over _Unwind_RaiseException).
 */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int (*run)(int);
	void *h;
	int n;

	if (argc < 2)
		return 2;
	h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		printf("cxx_host: %s\n", dlerror());
		return 1;
	}
	*(void **)&run = dlsym(h, "thrower_run");
	if (!run)
		return 1;
	n = run(20000);
	printf("cxx_host: caught %d\n", n);
	dlclose(h);
	return n == 20000 ? 0 : 1;
}
