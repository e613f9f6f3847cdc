/*
 * signal_cost.c — what one sampling signal costs the thread it interrupts,
 * by the way the kernel raises it (bench/signal_cost.sh, docs/performance.md
 * "What a signal costs before the handler runs").  A fixed amount of work
 * on one thread, with a CPU-clock perf event of the given period opened on
 * it, as the agent opens its own (timer.c):
 *   none     no event: the work alone
 *   event    the event, no signal: its timer interrupt alone
 *   fasync   the signal by F_SETSIG and O_ASYNC, as the agent raises it:
 *            the kernel queues an irq_work at each overflow, which on
 *            x86 is a self-IPI (a VM exit in most guests) before the signal
 *   sigtrap  attr.sigtrap (Linux 5.13+): SIGTRAP from task_work on the way
 *            back to user mode, no IPI
 * each with an empty handler.  Prints the thread's CPU ms for the work and
 * the signals taken.  Usage: signal_cost MODE HZ ITERS
 */
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;
static volatile sig_atomic_t taken;

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	taken++;
}

int main(int argc, char **argv)
{
	struct perf_event_attr a;
	struct sigaction sa;
	struct timespec t0, t1;
	const char *mode;
	uint64_t n, x = 1, i;
	long hz;
	int fd, sig = SIGRTMIN + 3;

	if (argc != 4 || (hz = atol(argv[2])) < 1 || !(n = strtoull(argv[3], NULL, 10))) {
		fprintf(stderr, "usage: signal_cost none|event|fasync|sigtrap HZ ITERS\n");
		return 2;
	}
	mode = argv[1];
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_period = (uint64_t)(1000000000 / hz);
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.remove_on_exec = 1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	if (strcmp(mode, "sigtrap") == 0) {
		a.sigtrap = 1;
		sig = SIGTRAP;
	} else if (strcmp(mode, "fasync") != 0 && strcmp(mode, "event") != 0 &&
		   strcmp(mode, "none") != 0) {
		fprintf(stderr, "signal_cost: unknown mode %s\n", mode);
		return 2;
	}
	sigaction(sig, &sa, NULL);
	if (strcmp(mode, "none") != 0) {
		fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			perror("signal_cost: perf_event_open");
			return 1;
		}
		if (strcmp(mode, "fasync") == 0) {
			struct f_owner_ex own = {F_OWNER_TID, (pid_t)syscall(SYS_gettid)};

			if (fcntl(fd, F_SETOWN_EX, &own) != 0 || fcntl(fd, F_SETSIG, sig) != 0 ||
			    fcntl(fd, F_SETFL, O_RDWR | O_ASYNC) != 0) {
				perror("signal_cost: fcntl");
				return 1;
			}
		}
	}
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	for (i = 0; i < n; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		__asm__ volatile("" : "+r"(x));
	}
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
	sink = x;
	printf("%s %.3f %ld\n", mode,
	       (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6,
	       (long)taken);
	return 0;
}
