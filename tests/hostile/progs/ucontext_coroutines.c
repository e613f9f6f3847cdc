/*
 * ucontext_coroutines.c — four makecontext/swapcontext coroutines on 16 KiB
 * mmap'd stacks (a PROT_NONE guard page below each, as coroutine libraries
 * do) take turns burning CPU in 1 ms slices.  Must hold: every coroutine runs
 * all its slices, as without the profiler (a signal arriving on a coroutine
 * is handled on its small stack, right above the guard page).
 */
#include <sys/mman.h>
#include <ucontext.h>

#include "hostile.h"

#define COROS 4
#define SLICES 100
#define STACK 16384

static ucontext_t sched_ctx, coro_ctx[COROS];
static int slices_done[COROS], finished[COROS];

static void coro_main(int idx)
{
	for (int i = 0; i < SLICES; i++) {
		burn_cpu(0.001);
		slices_done[idx]++;
		swapcontext(&coro_ctx[idx], &sched_ctx);
	}
	finished[idx] = 1;
}

int main(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	unsigned char *mem[COROS];
	volatile int running = COROS, rounds = 0;

	print_views("start");
	for (int i = 0; i < COROS; i++) {
		/* [guard page][16 KiB stack] */
		mem[i] = mmap(NULL, (size_t)pg + STACK, PROT_READ | PROT_WRITE,
		              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (mem[i] == MAP_FAILED)
			die("mmap");
		if (mprotect(mem[i], (size_t)pg, PROT_NONE) < 0)
			die("mprotect");
		getcontext(&coro_ctx[i]);
		coro_ctx[i].uc_stack.ss_sp = mem[i] + pg;
		coro_ctx[i].uc_stack.ss_size = STACK;
		coro_ctx[i].uc_link = &sched_ctx;
		makecontext(&coro_ctx[i], (void (*)(void))coro_main, 1, i);
	}
	while (running) {
		running = 0;
		for (int i = 0; i < COROS; i++) {
			if (finished[i])
				continue;
			swapcontext(&sched_ctx, &coro_ctx[i]);
			running++;
		}
		rounds++;
	}
	for (int i = 0; i < COROS; i++)
		say("coroutine %d: slices=%d finished=%d\n", i, slices_done[i], finished[i]);
	say("rounds=%d\n", rounds);
	print_views("end");
	return 0;
}
