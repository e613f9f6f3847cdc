/*
 * closefrom_ctl.c — close_range(3, ~0U) from a thread while other threads
 * run, then open, pipe and socket numbers from 3 up, and an fd view; meant
 * for runs with the control socket (--delay, CBN_CTL=1), whose listening
 * socket and connections used to sit in the program's table (high, but a
 * close_range took them, and /proc reads took low numbers meanwhile).  Must
 * hold: the same numbers and views.
 */
#include <fcntl.h>
#include <linux/close_range.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "hostile.h"

static void *burner(void *arg)
{
	burn_cpu_deep(0.3, 8);
	return arg;
}

int main(void)
{
	pthread_t t[2];
	int fds[6], p[2];

	print_views("start");
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, burner, NULL))
			die("pthread_create");
	burn_cpu(0.1);
	if (syscall(SYS_close_range, 3U, ~0U, 0U))
		die("close_range");
	for (int round = 0; round < 200; round++) {
		fds[0] = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (pipe2(p, O_CLOEXEC))
			die("pipe2");
		fds[1] = p[0];
		fds[2] = p[1];
		fds[3] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (round == 0)
			say("numbers: %d %d %d %d\n", fds[0], fds[1], fds[2], fds[3]);
		else if (fds[0] != 3 || fds[1] != 4 || fds[2] != 5 || fds[3] != 6)
			say("round %d: other numbers %d %d %d %d\n", round, fds[0], fds[1], fds[2], fds[3]);
		for (int i = 0; i < 4; i++)
			close(fds[i]);
		burn_chunk((uint64_t)round);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	print_views("end");
	return 0;
}
