/*
 * dup_lowest.c — dup, fcntl(F_DUPFD), pipe2, eventfd and epoll_create1 get
 * the lowest free numbers, checked 2000 times each while other threads are
 * created (each new thread's perf events are made at its first sample) and
 * burn CPU.  Must hold: every number as expected.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

#include "hostile.h"

static void *burner(void *arg)
{
	(void)arg;
	burn_cpu(0.002);
	return NULL;
}

int main(void)
{
	int bad = 0, p[2];
	pthread_t c;

	print_views("start");
	if (pthread_create(&c, NULL, burner, NULL))
		die("pthread_create");
	pthread_join(c, NULL);
	for (int i = 0; i < 2000; i++) {
		int a, b, e, q;

		/* one burner at a time runs beside the checks */
		if (i % 20 == 0 && pthread_create(&c, NULL, burner, NULL))
			die("pthread_create");
		a = dup(0);
		b = fcntl(0, F_DUPFD_CLOEXEC, 0);
		if (pipe2(p, O_CLOEXEC))
			die("pipe2");
		e = eventfd(0, EFD_CLOEXEC);
		q = epoll_create1(EPOLL_CLOEXEC);
		bad += (a != 3) + (b != 4) + (p[0] != 5) + (p[1] != 6) + (e != 7) + (q != 8);
		close(q);
		close(e);
		close(p[0]);
		close(p[1]);
		close(b);
		close(a);
		burn_chunk((uint64_t)i);
		if (i % 20 == 19)
			pthread_join(c, NULL);
	}
	burn_cpu(0.05);
	say("other numbers=%d\n", bad);
	print_fds("end");
	return 0;
}
