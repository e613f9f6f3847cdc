/*
 * dlopen_loop.c — dlopen()s the suite's libhostile_plugin.so, calls its
 * function (which burns CPU inside the library) and dlclose()s it, 200 times,
 * while another thread burns CPU.  Must hold: every load, call and unload
 * works and returns the same values, as without the profiler (code that was
 * sampled is unmapped under the sampler's feet).
 */
#include <pthread.h>

#include "manyfuncs.h"

static void *burner(void *arg)
{
	(void)arg;
	burn_many(0.4);
	return NULL;
}

int main(void)
{
	char path[PATH_MAX + 64];
	uint64_t sum = 0;
	int loads_ok = 0, fresh = 0;
	pthread_t b;

	print_views("start");
	snprintf(path, sizeof(path), "%s/libhostile_plugin.so", hostile_bindir());
	if (pthread_create(&b, NULL, burner, NULL))
		die("pthread_create");
	for (int i = 0; i < 200; i++) {
		void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		uint64_t (*fn)(uint64_t);
		int *loads;

		if (!h) {
			say("dlopen failed: %s\n", dlerror());
			return 1;
		}
		*(void **)&fn = dlsym(h, "hostile_plugin_compute");
		loads = dlsym(h, "hostile_plugin_loads");
		if (!fn || !loads)
			die("dlsym");
		sum += fn((uint64_t)i);
		fresh += *loads == 1; /* really unloaded last time: a new copy */
		loads_ok++;
		if (dlclose(h))
			die("dlclose");
	}
	pthread_join(b, NULL);
	say("dlopen/call/dlclose: %d fresh_copies=%d sum=%llu\n", loads_ok, fresh,
	    (unsigned long long)sum);
	print_views("end");
	return 0;
}
