/*
 * sigio_async.c — the program's own SIGIO: a pipe with O_ASYNC and F_SETSIG
 * set to SIGIO (si_fd tells which descriptor), and a second pipe with plain
 * O_ASYNC (the old SIGIO without information); a SA_SIGINFO handler counts
 * each kind.  The agent also takes SIGIO while a program leaves it at its
 * default (a perf event's signal that cannot be queued becomes SIGIO); this
 * program installs its own handler, which must get every one of its own.
 * Must hold: the same counts.
 */
#include <fcntl.h>
#include <signal.h>

#include "hostile.h"

static int rfd1, rfd2;
static volatile int with_fd, plain, other;

static void on_io(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	if (si->si_code > 0 && si->si_fd == rfd1)
		with_fd++;
	else if (si->si_code == SI_KERNEL)
		plain++;
	else
		other++;
}

static void async(int fd, int setsig)
{
	if (fcntl(fd, F_SETOWN, getpid()) || (setsig && fcntl(fd, F_SETSIG, SIGIO)) ||
	    fcntl(fd, F_SETFL, O_ASYNC | O_NONBLOCK))
		die("fcntl");
}

int main(void)
{
	struct sigaction sa;
	int p1[2], p2[2];
	char buf[64];

	print_views("start");
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_io;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGIO, &sa, NULL);
	if (pipe(p1) || pipe(p2))
		die("pipe");
	rfd1 = p1[0];
	rfd2 = p2[0];
	async(rfd1, 1);
	async(rfd2, 0);
	for (int i = 0; i < 40; i++) {
		burn_cpu(0.01);
		if (write(i % 2 ? p2[1] : p1[1], "x", 1) != 1)
			die("write");
		/* the signal is sent at the write: wait until it was taken */
		for (int k = 0; k < 1000 && with_fd + plain + other < i + 1; k++)
			burn_chunk((uint64_t)k);
		while (read(i % 2 ? rfd2 : rfd1, buf, sizeof(buf)) > 0)
			;
	}
	say("SIGIO with si_fd: %d, plain: %d, other: %d\n", with_fd, plain, other);
	print_views("end");
	return 0;
}
