/*
 * self_sigkill.c — two threads burn CPU while main writes a file and sends
 * itself SIGKILL.  Must hold: status 137, the file complete, as without the
 * profiler.
 */
#include <pthread.h>

#include "hostile.h"

static void *spin(void *arg)
{
	(void)arg;
	for (;;)
		burn_cpu(1.0);
	return NULL;
}

int main(void)
{
	pthread_t t[2];
	FILE *f;

	print_views("start");
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, spin, NULL))
			die("pthread_create");
	burn_cpu(0.2);
	f = fopen("before_kill.txt", "w");
	if (!f)
		die("fopen");
	fprintf(f, "written before SIGKILL\n");
	fclose(f);
	say("killing myself\n");
	kill(getpid(), SIGKILL);
	for (;;)
		pause();
}
