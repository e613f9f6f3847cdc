/*
 * dlopen_kill.c — dlopens the library argv[1], burns 60 ms of CPU in its
 * hot_spin(), then SIGKILLs itself: the library's MODULE_LOAD must already be
 * in the file (nothing runs at a SIGKILL), or its samples are unexplained.
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	void (*hot_spin)(double);
	void *h;

	if (argc < 2)
		return 2;
	h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		printf("dlopen_kill: %s\n", dlerror());
		return 1;
	}
	*(void **)&hot_spin = dlsym(h, "hot_spin");
	if (!hot_spin)
		return 1;
	hot_spin(0.06);
	kill(getpid(), SIGKILL);
	return 0;
}
