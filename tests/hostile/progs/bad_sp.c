/*
 * bad_sp.c — spends most of its CPU time with the stack and frame pointers
 * pointing at unmapped memory, as code that switches stacks does for a few
 * instructions (setcontext, coroutine switches, a C++ throw resumed by
 * libunwind, a JIT).  A sample taken there starts unwinding from garbage:
 * the unwinder must give up on that stack (a pc-only sample), never read the
 * address and crash.  Must hold: the program finishes and prints its result,
 * as without the profiler.  x86-64 only (elsewhere it just burns CPU).
 */
#include "hostile.h"

static HOSTILE_FN unsigned long spin_bad_sp(unsigned long n)
{
#if defined(__x86_64__)
	unsigned long left = n;

	/* rsp/rbp saved in r12/r13, replaced by an address near the top of the
	 * address space (0xfffffffffffffde0 was seen in a real crash) and 0x10,
	 * restored after the loop.  Signals still land on the handler's own
	 * stack (SA_ONSTACK), which is what the profiler uses. */
	__asm__ volatile("mov %%rsp, %%r12\n\t"
			 "mov %%rbp, %%r13\n\t"
			 "mov $0xfffffffffffffde0, %%rsp\n\t"
			 "mov $0x10, %%rbp\n\t"
			 "1: dec %0\n\t"
			 "jnz 1b\n\t"
			 "mov %%r12, %%rsp\n\t"
			 "mov %%r13, %%rbp\n\t"
			 : "+r"(left)
			 :
			 : "r12", "r13", "memory", "cc");
	return n - left;
#else
	volatile unsigned long i, s = 0;

	for (i = 0; i < n; i++)
		s += i;
	return n;
#endif
}

int main(void)
{
	struct timespec ts;
	unsigned long done = 0;
	double end;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	end = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9 + 0.5;
	do {
		done += spin_bad_sp(20000000);
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	} while ((double)ts.tv_sec + (double)ts.tv_nsec / 1e9 < end);
	say("bad_sp: spun %s\n", done >= 20000000 ? "ok" : "short");
	return 0;
}
