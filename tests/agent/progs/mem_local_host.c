/*
 * mem_local_host.c — a C program that dlopens a C++ library (argv[1],
 * libmem_local.so) with RTLD_LOCAL, as CPython loads extension modules: the
 * library's libstdc++ is not in the global scope, where the allocation
 * hooks' operator new is.  Prints whether a failed new threw std::bad_alloc
 * after the new-handler, and a nothrow one returned nullptr (stdout, compared
 * with a plain run) and the CPU time of a new/delete pair
 * (stderr: it differs from run to run).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int (*bad_alloc)(void);
	double (*pairs)(long);
	long n = argc > 2 ? atol(argv[2]) : 200000;
	void *h;

	if (argc < 2)
		return 2;
	h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		printf("mem_local_host: %s\n", dlerror());
		return 1;
	}
	*(void **)&bad_alloc = dlsym(h, "mem_local_bad_alloc");
	*(void **)&pairs = dlsym(h, "mem_local_pairs");
	if (!bad_alloc || !pairs)
		return 1;
	printf("bad_alloc %s\n", bad_alloc() ? "thrown after the new-handler" : "NOT thrown");
	fprintf(stderr, "pair_ns %.1f\n", pairs(n));
	printf("pairs %ld\n", n);
	return 0;
}
