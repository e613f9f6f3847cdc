/*
 * segv_altstack.c — a SIGSEGV handler with SA_ONSTACK on the program's own
 * 16 KiB sigaltstack catches a deliberate stack overflow (infinite recursion
 * that burns CPU on the way down) and leaves with _exit(3).  Must hold: the
 * handler runs and the exit status is 3, as without the profiler.
 */
#include <sys/mman.h>

#include "hostile.h"

#define ALT_SIZE 16384

static char *alt;
static volatile long deepest;
static volatile long no_limit = LONG_MAX; /* the recursion is meant to be infinite */

static void on_segv(int sig)
{
	char here;
	static const char on[] = "caught SIGSEGV on the altstack\n";
	static const char off[] = "caught SIGSEGV off the altstack\n";

	(void)sig;
	if (&here >= alt && &here < alt + ALT_SIZE)
		write(1, on, sizeof(on) - 1);
	else
		write(1, off, sizeof(off) - 1);
	_exit(3);
}

/* ~1 KiB per frame and ~40 us of CPU every 16 frames: 8 MiB takes ~0.3 s. */
static HOSTILE_FN long dive(long depth)
{
	volatile char pad[1000];

	pad[0] = (char)depth;
	pad[sizeof(pad) - 1] = (char)depth;
	deepest = depth;
	if ((depth & 15) == 0)
		burn_chunk((uint64_t)depth);
	if (depth == no_limit)
		return 0;
	return dive(depth + 1) + pad[0] + pad[sizeof(pad) - 1];
}

int main(void)
{
	struct sigaction sa;
	stack_t ss;
	struct rlimit r = {8 << 20, 8 << 20};
	struct rlimit cur;

	print_views("start");
	/* The overflow point depends on the stack limit: pin it (never raise). */
	getrlimit(RLIMIT_STACK, &cur);
	if (cur.rlim_max != RLIM_INFINITY && cur.rlim_max < r.rlim_max)
		r.rlim_cur = r.rlim_max = cur.rlim_max;
	setrlimit(RLIMIT_STACK, &r);
	alt = mmap(NULL, ALT_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (alt == MAP_FAILED)
		die("mmap");
	ss.ss_sp = alt;
	ss.ss_size = ALT_SIZE;
	ss.ss_flags = 0;
	if (sigaltstack(&ss, NULL) < 0)
		die("sigaltstack");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_segv;
	sa.sa_flags = SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	print_signals("installed");
	burn_cpu_deep(0.3, 16);
	say("diving\n");
	dive(0);
	say("not reached\n");
	return 0;
}
