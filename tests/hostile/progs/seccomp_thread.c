/*
 * seccomp_thread.c — main installs a seccomp filter on itself only (no
 * TSYNC) that traps perf_event_open, timer_create, openat, mmap and a few
 * more with SIGSYS (which kills), then allocates and frees, creates threads
 * (they inherit the filter) that burn CPU and allocate, and exits.  Must
 * hold: the same output and status; the profiler makes none of those calls
 * on a filtered thread (its other threads are not bound).
 */
#include <malloc.h>
#include <pthread.h>

#include "hostile.h"
#include "seccomp_filter.h"

static const int allowed[] = {
	SYS_read, SYS_write, SYS_exit, SYS_exit_group, SYS_futex, SYS_rt_sigreturn,
	SYS_rt_sigprocmask, SYS_clock_gettime, SYS_clock_nanosleep, SYS_nanosleep,
	SYS_sched_yield, SYS_madvise, SYS_munmap, SYS_brk, SYS_mprotect, SYS_clone,
	SYS_clone3, SYS_set_robust_list, SYS_rseq, SYS_getpid, SYS_gettid, SYS_tgkill,
	SYS_rt_sigaction,
};

static void *worker(void *arg)
{
	uint64_t sum = 0;

	(void)arg;
	for (int i = 0; i < 200; i++) {
		char *p = malloc(1000 + (size_t)i);

		if (!p)
			die("malloc");
		p[0] = (char)i;
		sum += (unsigned char)p[0];
		free(p);
		burn_chunk((uint64_t)i);
	}
	burn_cpu_deep(0.2, 8);
	return (void *)(uintptr_t)sum;
}

int main(void)
{
	pthread_t t[2];
	void *r, *stack[2];
	uint64_t total = 0;

	say("start\n");
	/* Everything that needs mmap, which the filter traps, before it: the
	 * threads' stacks, and one malloc arena for all threads. */
	mallopt(M_ARENA_MAX, 1);
	for (int i = 0; i < 2; i++)
		if (!(stack[i] = aligned_alloc(65536, 1 << 20)))
			die("aligned_alloc");
	burn_cpu(0.1);
	if (filter_install(allowed, (int)(sizeof(allowed) / sizeof(allowed[0])), SECCOMP_RET_TRAP, 0))
		skip("seccomp filter refused: %s", strerrorname_np(errno));
	say("filter installed on main\n");
	for (int i = 0; i < 2; i++) {
		pthread_attr_t a;

		if (pthread_attr_init(&a) || pthread_attr_setstack(&a, stack[i], 1 << 20) ||
		    pthread_create(&t[i], &a, worker, NULL))
			die("pthread_create");
	}
	total += (uintptr_t)worker(NULL);
	for (int i = 0; i < 2; i++) {
		pthread_join(t[i], &r);
		total += (uintptr_t)r;
	}
	say("joined, sum %llu\n", (unsigned long long)total);
	return 0;
}
