/*
 * eintr_syscalls.c — no signal handlers at all: main sleeps and waits in short
 * blocking calls (nanosleep, clock_nanosleep, poll, select, epoll_wait,
 * sigtimedwait, read from a pipe fed by another thread) with a little CPU
 * between them, while a third thread burns CPU.  Must hold: none of these
 * calls fails with EINTR, as without the profiler.
 */
#include <poll.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/select.h>

#include "hostile.h"

#define CALLS 40

static int pfd[2];

static void *burner(void *arg)
{
	(void)arg;
	burn_cpu_deep(0.5, 8);
	return NULL;
}

static void *feeder(void *arg)
{
	struct timespec ms = {0, 1000000};

	(void)arg;
	for (int i = 0; i < CALLS; i++) {
		nanosleep(&ms, NULL);
		if (write(pfd[1], "x", 1) != 1)
			die("write");
	}
	return NULL;
}

int main(void)
{
	static const char *names[] = {"nanosleep",  "clock_nanosleep", "poll",     "select",
	                              "epoll_wait", "sigtimedwait",    "read_pipe"};
	int eintr[7] = {0}, other[7] = {0}, ep;
	pthread_t b, f;
	sigset_t usr2;
	char c;

	print_views("start");
	sigemptyset(&usr2);
	sigaddset(&usr2, SIGUSR2);
	sigprocmask(SIG_BLOCK, &usr2, NULL);
	if (pipe(pfd) < 0)
		die("pipe");
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		die("epoll_create1");
	if (pthread_create(&b, NULL, burner, NULL))
		die("pthread_create");
	for (int k = 0; k < 6; k++) {
		for (int i = 0; i < CALLS; i++) {
			struct timespec ms = {0, 1000000};
			struct timeval tv = {0, 1000};
			struct epoll_event ev;
			int r = 0;

			burn_cpu(0.001);
			switch (k) {
			case 0:
				r = nanosleep(&ms, NULL);
				break;
			case 1:
				r = clock_nanosleep(CLOCK_MONOTONIC, 0, &ms, NULL);
				if (r)
					errno = r, r = -1;
				break;
			case 2:
				r = poll(NULL, 0, 1);
				break;
			case 3:
				r = select(0, NULL, NULL, NULL, &tv);
				break;
			case 4:
				r = epoll_wait(ep, &ev, 1, 1);
				break;
			case 5:
				r = sigtimedwait(&usr2, NULL, &ms);
				if (r < 0 && errno == EAGAIN)
					r = 0;
				break;
			}
			if (r < 0 && errno == EINTR)
				eintr[k]++;
			else if (r < 0)
				other[k]++;
		}
	}
	if (pthread_create(&f, NULL, feeder, NULL))
		die("pthread_create");
	for (int i = 0; i < CALLS; i++) {
		ssize_t r;

		burn_cpu(0.001);
		r = read(pfd[0], &c, 1);
		if (r < 0 && errno == EINTR) {
			eintr[6]++;
			i--;
		} else if (r != 1) {
			other[6]++;
		}
	}
	pthread_join(f, NULL);
	pthread_join(b, NULL);
	for (int k = 0; k < 7; k++)
		say("%s: calls=%d eintr=%d other_errors=%d\n", names[k], CALLS, eintr[k], other[k]);
	close(ep);
	close(pfd[0]);
	close(pfd[1]);
	print_views("end");
	return 0;
}
