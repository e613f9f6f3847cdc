/*
 * wait_eintr — short blocking calls in a loop, counting the ones that fail
 * with EINTR: nanosleep (200 us), poll on nothing (1 ms timeout) and read
 * from a pipe that a second thread feeds every 200 us, CALLS times each,
 * while a third thread computes.  The program installs no signal handler, so
 * it must never see EINTR, profiled or not (the off-CPU sampler interrupts
 * nothing).  Usage: wait_eintr [CALLS] (default 200).  Prints one line per
 * call, "NAME: calls=N eintr=E errors=X", and exits 0 when no call failed.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int pfd[2];
static long calls = 200;
static atomic_int stop;
static volatile uint64_t sink;

static void *burner(void *arg)
{
	uint64_t x = 1;

	(void)arg;
	while (!atomic_load(&stop)) {
		for (int i = 0; i < 20000; i++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			__asm__ volatile("" : "+r"(x));
		}
	}
	sink = x;
	return NULL;
}

/* Feeds the pipe; EINTR here would be counted as an error (exit 1). */
static void *feeder(void *arg)
{
	(void)arg;
	for (long i = 0; i < calls; i++) {
		struct timespec us200 = {0, 200000};

		if (nanosleep(&us200, NULL) != 0 || write(pfd[1], "x", 1) != 1)
			exit(1);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static const char *names[] = {"nanosleep", "poll", "read"};
	long eintr[3] = {0, 0, 0}, errors[3] = {0, 0, 0};
	pthread_t b, f;
	char c;

	if (argc > 1 && atol(argv[1]) > 0)
		calls = atol(argv[1]);
	if (pipe(pfd) < 0 || pthread_create(&b, NULL, burner, NULL)) {
		fprintf(stderr, "wait_eintr: pipe or pthread_create failed\n");
		return 1;
	}
	for (long i = 0; i < calls; i++) {
		struct timespec us200 = {0, 200000};

		if (nanosleep(&us200, NULL) != 0)
			errno == EINTR ? eintr[0]++ : errors[0]++;
	}
	for (long i = 0; i < calls; i++) {
		if (poll(NULL, 0, 1) < 0)
			errno == EINTR ? eintr[1]++ : errors[1]++;
	}
	if (pthread_create(&f, NULL, feeder, NULL)) {
		fprintf(stderr, "wait_eintr: pthread_create failed\n");
		return 1;
	}
	for (long i = 0; i < calls; i++) {
		ssize_t r = read(pfd[0], &c, 1);

		if (r < 0 && errno == EINTR) {
			eintr[2]++;
			i--; /* the byte is still to come */
		} else if (r != 1) {
			errors[2]++;
		}
	}
	pthread_join(f, NULL);
	atomic_store(&stop, 1);
	pthread_join(b, NULL);
	for (int k = 0; k < 3; k++)
		printf("%s: calls=%ld eintr=%ld errors=%ld\n", names[k], calls, eintr[k], errors[k]);
	return eintr[0] + eintr[1] + eintr[2] + errors[0] + errors[1] + errors[2] ? 1 : 0;
}
