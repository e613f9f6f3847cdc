/*
 * pthread_keys_max.c — creates pthread keys until pthread_key_create fails,
 * burning CPU, then deletes them.  Must hold: the same number of keys as
 * without the profiler (PTHREAD_KEYS_MAX is shared with every library in the
 * process).
 */
#include <pthread.h>

#include "hostile.h"

int main(void)
{
	static pthread_key_t keys[4096];
	int n = 0, e = 0;

	print_views("start");
	burn_cpu_deep(0.3, 8);
	while (n < 4096 && (e = pthread_key_create(&keys[n], NULL)) == 0)
		n++;
	say("keys created=%d stopped_by=%s\n", n, strerrorname_np(e));
	burn_cpu(0.1);
	for (int i = 0; i < n; i++)
		pthread_key_delete(keys[i]);
	print_views("end");
	return 0;
}
