/*
 * seccomp_tsync.c — three threads burn CPU; main then installs a seccomp
 * filter with SECCOMP_FILTER_FLAG_TSYNC (every thread, the profiler's
 * included) that traps (SIGSYS, which kills) every system call but the few
 * the program needs; the threads burn on, main joins them and exits.  Must
 * hold: the same output and status.  Before: the profiler's helper threads,
 * bound by the filter, drew SIGSYS with their /proc reads.
 */
#include <pthread.h>

#include "hostile.h"
#include "seccomp_filter.h"

static const int allowed[] = {
	SYS_read, SYS_write, SYS_exit, SYS_exit_group, SYS_futex, SYS_rt_sigreturn,
	SYS_rt_sigprocmask, SYS_clock_gettime, SYS_clock_nanosleep, SYS_nanosleep,
	SYS_sched_yield, SYS_madvise, SYS_munmap, SYS_getpid, SYS_gettid, SYS_tgkill,
};

static volatile int go;

static void *burner(void *arg)
{
	(void)arg;
	burn_cpu_deep(0.15, 8);
	while (!go)
		burn_chunk(1);
	burn_cpu_deep(0.3, 8);
	return NULL;
}

int main(void)
{
	pthread_t t[3];

	say("start\n");
	for (int i = 0; i < 3; i++)
		if (pthread_create(&t[i], NULL, burner, NULL))
			die("pthread_create");
	burn_cpu(0.2);
	if (filter_install(allowed, (int)(sizeof(allowed) / sizeof(allowed[0])), SECCOMP_RET_TRAP,
			   SECCOMP_FILTER_FLAG_TSYNC))
		skip("seccomp filter with TSYNC refused: %s", strerrorname_np(errno));
	say("filter installed on every thread\n");
	go = 1;
	burn_cpu(0.2);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	say("joined\n");
	return 0;
}
