/*
 * dlopen_static_tls.c — dlopens libhostile_tls.so, whose 1 KiB thread-local
 * array uses the initial-exec model: glibc serves it from the static TLS
 * surplus reserved at start (about 1.6 KiB), which a library the profiler
 * dlopens with static TLS would have used up.  Then threads read and write
 * it.  Must hold: the library loads and every thread sees its own array.
 */
#include <dlfcn.h>
#include <pthread.h>

#include "hostile.h"

static int (*tls_sum)(int);

static void *reader(void *arg)
{
	burn_cpu(0.05);
	return (void *)(intptr_t)tls_sum((int)(intptr_t)arg);
}

int main(void)
{
	char path[PATH_MAX];
	pthread_t t[4];
	void *h, *r;
	int ok = 0;

	snprintf(path, sizeof(path), "%s/libhostile_tls.so", hostile_bindir());
	burn_cpu_deep(0.2, 8);
	h = dlopen(path, RTLD_NOW);
	say("dlopen with 1 KiB of initial-exec TLS: %s\n", h ? "ok" : "failed");
	if (!h)
		return 0;
	tls_sum = (int (*)(int))dlsym(h, "hostile_tls_sum");
	for (int i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, reader, (void *)(intptr_t)(i + 1)))
			die("pthread_create");
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], &r);
		ok += (int)(intptr_t)r == (i + 1) * 1024;
	}
	say("threads with their own array: %d of 4\n", ok);
	return 0;
}
