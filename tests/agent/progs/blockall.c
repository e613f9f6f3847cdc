/*
 * blockall.c — threads that block every signal: two workers call
 * pthread_sigmask(SIG_BLOCK, all) themselves, two more inherit a fully blocked
 * mask from main.  Each burns CPU; the profile must still have samples for all
 * of them.  Also checks the mask the app reads back says "blocked".
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static volatile int bad;

__attribute__((noinline)) static void blocked_spin(double s)
{
	volatile unsigned long x = 1;
	double end = cpu_now() + s;

	while (cpu_now() < end)
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005ul + 1;
}

static void *worker(void *arg)
{
	sigset_t all, cur;

	if (arg) {
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, NULL);
	}
	pthread_sigmask(SIG_SETMASK, NULL, &cur);
	if (!sigismember(&cur, SIGPROF) || !sigismember(&cur, SIGUSR1))
		bad = 1;
	blocked_spin(0.15);
	return NULL;
}

int main(void)
{
	pthread_t th[4];
	sigset_t all, old;
	int i;

	for (i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, worker, (void *)1);
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (i = 2; i < 4; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	printf("blockall: %s\n", bad ? "mask read back wrong" : "ok");
	return bad;
}
