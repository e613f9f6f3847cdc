/*
 * own_altstack.c [guard] — the program installs its own 8 KiB sigaltstack with
 * canary pages on both sides (with "guard": a PROT_NONE page just below it
 * instead of the lower canary), takes its own SA_ONSTACK SIGUSR1 on it, and
 * burns CPU.  Must hold: canaries intact, no crash, and sigaltstack(NULL)
 * still reports the program's own stack, as without the profiler.
 */
#include <sys/mman.h>

#include "hostile.h"

#define ALT_SIZE 8192
#define CANARY 0xA5

static char *alt;
static volatile sig_atomic_t on_alt, usr1_calls;

static void on_usr1(int sig)
{
	char here;

	(void)sig;
	usr1_calls++;
	if (&here >= alt && &here < alt + ALT_SIZE)
		on_alt++;
}

static int intact(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != CANARY)
			return 0;
	return 1;
}

int main(int argc, char **argv)
{
	int guard = argc > 1 && !strcmp(argv[1], "guard");
	long pg = sysconf(_SC_PAGESIZE);
	unsigned char *map, *below, *above;
	struct sigaction sa;
	stack_t ss, now;

	print_views("start");
	/* [below: canary or guard][8 KiB altstack][above: canary] */
	map = mmap(NULL, (size_t)(2 * pg + ALT_SIZE), PROT_READ | PROT_WRITE,
	           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		die("mmap");
	below = map;
	alt = (char *)map + pg;
	above = map + pg + ALT_SIZE;
	memset(map, CANARY, (size_t)(2 * pg + ALT_SIZE));
	if (guard && mprotect(below, (size_t)pg, PROT_NONE) < 0)
		die("mprotect");
	ss.ss_sp = alt;
	ss.ss_size = ALT_SIZE;
	ss.ss_flags = 0;
	if (sigaltstack(&ss, NULL) < 0)
		die("sigaltstack");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_ONSTACK | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	print_signals("installed");

	for (int i = 0; i < 50; i++) {
		burn_cpu_deep(0.01, 12);
		raise(SIGUSR1);
	}
	if (sigaltstack(NULL, &now) < 0)
		die("sigaltstack(NULL)");
	say("usr1 calls=%d on_altstack=%d\n", (int)usr1_calls, (int)on_alt);
	say("sigaltstack(NULL): own=%s size=%zu flags=%s\n",
	    now.ss_sp == (void *)alt ? "yes" : "no", now.ss_size,
	    now.ss_flags == 0 ? "0" : "other");
	say("canary above=%s below=%s\n", intact(above, (size_t)pg) ? "intact" : "overwritten",
	    guard                       ? "guard"
	    : intact(below, (size_t)pg) ? "intact"
	                                : "overwritten");
	print_views("end");
	return 0;
}
