/*
 * mem_counts — allocation counts that must arrive whole in header.mem
 * (mem_test.sh counts_*).  MODE threads: 1000 threads, each making 100
 * malloc/free pairs of 64 bytes and ending (below every flush threshold:
 * only the flush at a thread's end publishes them).  MODE exit: 4 threads
 * make 1000 pairs each and wait; main then ends the process with _exit(3)
 * (no exit handler runs).  Prints "pairs N".
 */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static sem_t done;

static void pairs(int n)
{
	for (int i = 0; i < n; i++) {
		void *volatile p = malloc(64);

		free(p);
	}
}

static void *short_thread(void *arg)
{
	pairs(100);
	return arg;
}

static void *waiting_thread(void *arg)
{
	pairs(1000);
	sem_post(&done);
	for (;;)
		pause();
	return arg;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "threads";
	pthread_t t[8];

	if (!strcmp(mode, "exit")) {
		sem_init(&done, 0, 0);
		for (int i = 0; i < 4; i++)
			if (pthread_create(&t[i], NULL, waiting_thread, NULL))
				return 1;
		for (int i = 0; i < 4; i++)
			sem_wait(&done);
		printf("pairs %d\n", 4000);
		fflush(stdout);
		_exit(3);
	}
	for (int r = 0; r < 125; r++) {
		for (int i = 0; i < 8; i++)
			if (pthread_create(&t[i], NULL, short_thread, NULL))
				return 1;
		for (int i = 0; i < 8; i++)
			pthread_join(t[i], NULL);
	}
	printf("pairs %d\n", 100000);
	return 0;
}
