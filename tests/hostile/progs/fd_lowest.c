/*
 * fd_lowest.c — POSIX gives open() the lowest free descriptor: a program may
 * count on it.  For 1.2 s one thread opens and closes /dev/null and checks
 * the number it gets (always the lowest free one at its start), while MODE:
 *   churn   main creates and joins threads that burn 3 ms each (each one's
 *           sampler and kernel-stack event are made at its first sample)
 *   alone   nothing else (the profiler's helpers read /proc meanwhile:
 *           --memory's counters, --off-cpu's looks, the control socket)
 *   park    a second thread alternates 60 ms of user code with bursts of
 *           system calls (its kernel-stack event closes and opens again)
 * Must hold: not one other number.  Before: 154 wrong numbers in churn mode
 * under default flags, 342 in alone mode under --memory.
 */
#include <fcntl.h>
#include <pthread.h>

#include "hostile.h"

static volatile int stop;
static int expected, zero_fd;

static void *opener(void *arg)
{
	long *bad = arg;

	while (!stop) {
		int fd = open("/dev/null", O_RDONLY);

		if (fd != expected)
			(*bad)++;
		if (fd >= 0)
			close(fd);
	}
	return NULL;
}

static void *churn_one(void *arg)
{
	burn_cpu(0.003);
	return arg;
}

static void *parker(void *arg)
{
	char c;

	(void)arg;
	while (!stop) {
		burn_cpu(0.06);
		for (int i = 0; i < 2000; i++)
			if (read(zero_fd, &c, 1) != 1)
				die("read");
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "alone";
	pthread_t o, p, t;
	double end;
	long bad = 0;
	int n = 0;

	print_views("start");
	zero_fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	expected = open("/dev/null", O_RDONLY);
	if (zero_fd < 0 || expected < 0)
		die("open");
	close(expected);
	if (pthread_create(&o, NULL, opener, &bad))
		die("pthread_create");
	if (!strcmp(mode, "park") && pthread_create(&p, NULL, parker, NULL))
		die("pthread_create");
	end = mono_now() + 1.2;
	while (mono_now() < end) {
		if (!strcmp(mode, "churn")) {
			if (pthread_create(&t, NULL, churn_one, NULL))
				die("pthread_create");
			pthread_join(t, NULL);
			n++;
		} else {
			burn_cpu(0.01);
		}
	}
	stop = 1;
	pthread_join(o, NULL);
	if (!strcmp(mode, "park"))
		pthread_join(p, NULL);
	close(zero_fd);
	say("%s: other numbers=%ld threads=%s\n", mode, bad,
	    !strcmp(mode, "churn") ? (n > 20 ? "many" : "few") : "-");
	print_views("end");
	return 0;
}
