/*
 * dlopen_runpath.c — dlopen by bare name, found only through this program's
 * DT_RUNPATH ($ORIGIN): glibc resolves it relative to dlopen's caller, so an
 * interposer that is itself the caller would break it.
 */
#include <dlfcn.h>
#include <stdio.h>

int main(void)
{
	void *h = dlopen("librunpath_dep.so", RTLD_NOW);

	if (!h) {
		printf("dlopen_runpath: %s\n", dlerror());
		return 1;
	}
	printf("dlopen_runpath: ok\n");
	dlclose(h);
	return 0;
}
