/*
 * dl_iterate_phdr_threads.c — three threads walk the loaded modules with
 * dl_iterate_phdr over and over, burning CPU inside the callback (so glibc's
 * loader lock is held while they run), while main burns CPU through 1024
 * functions.  Must hold: the program finishes, with the same results, as
 * without the profiler (no deadlock against the loader lock).
 */
#include <link.h>
#include <pthread.h>

#include "manyfuncs.h"

#define WALKERS 3
#define WALKS 40

struct walk {
	int calls;    /* callback invocations in this walk */
	int saw_main; /* the first module is the executable (empty name) */
};

static int on_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct walk *w = arg;

	(void)size;
	if (w->calls++ == 0 && info->dlpi_name && info->dlpi_name[0] == 0)
		w->saw_main = 1;
	burn_cpu(0.0005);
	return 0;
}

static void *walker(void *arg)
{
	int *ok = arg;

	for (int i = 0; i < WALKS; i++) {
		struct walk w = {0, 0};

		dl_iterate_phdr(on_module, &w);
		if (w.saw_main && w.calls >= 4)
			(*ok)++;
	}
	return NULL;
}

int main(void)
{
	pthread_t t[WALKERS];
	int ok[WALKERS] = {0};

	print_views("start");
	for (int i = 0; i < WALKERS; i++)
		if (pthread_create(&t[i], NULL, walker, &ok[i]))
			die("pthread_create");
	burn_many(0.4);
	for (int i = 0; i < WALKERS; i++) {
		pthread_join(t[i], NULL);
		say("walker %d: walks=%d good=%d\n", i, WALKS, ok[i]);
	}
	print_views("end");
	return 0;
}
