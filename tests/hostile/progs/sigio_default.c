/*
 * sigio_default.c — a pipe with O_ASYNC and SIGIO left at its default
 * action (terminate): the write that makes it readable kills the program
 * with SIGIO, status 157.  The agent takes SIGIO while the program leaves
 * it at its default (sigwrap.c, timer_sigqueue_full), but only the one the
 * kernel sends for a perf event whose signal it could not queue: this one is
 * the program's.  Must hold: death by SIGIO, same output.
 */
#include <fcntl.h>

#include "hostile.h"

int main(void)
{
	int p[2];

	print_views("start");
	if (pipe(p) || fcntl(p[0], F_SETOWN, getpid()) || fcntl(p[0], F_SETFL, O_ASYNC | O_NONBLOCK))
		die("pipe");
	burn_cpu_deep(0.3, 8);
	say("writing to the O_ASYNC pipe\n");
	if (write(p[1], "x", 1) != 1)
		die("write");
	for (int i = 0; i < 100; i++)
		burn_cpu(0.01);
	say("not reached\n");
	return 0;
}
