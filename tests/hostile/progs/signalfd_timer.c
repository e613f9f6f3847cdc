/*
 * signalfd_timer.c prof|alrm — blocks SIGPROF (or SIGALRM), arms
 * setitimer(ITIMER_PROF) (or ITIMER_REAL) at 20 ms, and reads the signals
 * from a signalfd (poll with a 10 ms timeout between 10 ms bursts of CPU)
 * until 20 came.  Must hold: received=20, eintr=0, as without the profiler.
 */
#include <poll.h>
#include <sys/signalfd.h>

#include "timersig.h"

int main(int argc, char **argv)
{
	struct timersig t;
	struct signalfd_siginfo ssi;
	struct pollfd p;
	double budget;
	int fd;

	if (argc != 2)
		die("usage: signalfd_timer prof|alrm");
	print_views("start");
	timersig_start(&t, argv[1]);
	fd = signalfd(-1, &t.set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (fd < 0)
		die("signalfd");
	print_fds("signalfd");
	budget = thread_cpu() + TS_BUDGET;
	while (t.received < TS_WANT && thread_cpu() < budget) {
		int r;

		burn_cpu(t.sig == SIGPROF ? 0.01 : 0.02);
		p.fd = fd;
		p.events = POLLIN;
		r = poll(&p, 1, 10);
		if (r < 0 && errno == EINTR) {
			t.eintr++;
			continue;
		}
		if (r < 0)
			die("poll");
		if (r == 0)
			continue;
		while (read(fd, &ssi, sizeof(ssi)) == (ssize_t)sizeof(ssi)) {
			siginfo_t si;

			memset(&si, 0, sizeof(si));
			si.si_code = ssi.ssi_code;
			if ((int)ssi.ssi_signo == t.sig)
				timersig_got(&t, &si);
		}
		if (errno == EINTR)
			t.eintr++;
	}
	timersig_stop(&t);
	close(fd);
	timersig_report(&t, TS_WANT - t.received);
	print_views("end");
	return 0;
}
