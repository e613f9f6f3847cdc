/*
 * dlopen_hot — CPU in a dlopened library: loads libhot.so (next to this
 * executable), calls hot_spin() for most of ≈ SCALE seconds of CPU, then
 * dlcloses it.  Usage: dlopen_hot [SCALE].
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "burn.h"

__attribute__((noinline)) void main_spin(uint64_t ns)
{
	BURN_CPU(ns);
}

int main(int argc, char **argv)
{
	double scale = burn_arg(argc, argv, 1, 1.0);
	char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 16);
	void (*hot_spin)(double);
	void *h;

	if (n <= 0) {
		perror("readlink /proc/self/exe");
		return 1;
	}
	path[n] = 0;
	strcpy(strrchr(path, '/') + 1, "libhot.so");
	h = dlopen(path, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "dlopen_hot: %s\n", dlerror());
		return 1;
	}
	*(void **)&hot_spin = dlsym(h, "hot_spin");
	if (!hot_spin) {
		fprintf(stderr, "dlopen_hot: %s\n", dlerror());
		return 1;
	}
	main_spin((uint64_t)(scale * 0.1e9));
	hot_spin(scale * 0.9);
	dlclose(h);
	printf("dlopen_hot: done\n");
	return 0;
}
