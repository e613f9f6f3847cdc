/*
 * stacks.c — the sampling handler's own stack, one per sampled thread (64 KiB
 * plus a guard page; sampler-safety.md §3), and the sigaltstack interposer
 * that keeps the program's alternate stacks its own.
 *
 * While the program has no alternate stack on a thread, the kernel's is ours:
 * the handler (SA_ONSTACK) runs on it.  When the program sets one, the kernel
 * gets the program's, which its own handlers then use as they asked; our
 * handler's entry stub then moves to our stack at once, so the program's stack
 * holds only the kernel's signal frame, at its top (our signal is blocked
 * while the program's own handlers run, sigwrap.c, so it never nests on them).
 * The program always reads back the alternate stack it set, or SS_DISABLE.
 * Not signal context.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "floor.h"
#include "stacks.h"

#define STACK_SIZE (64u << 10)
#define STACK_GUARD 4096u
#define STACK_POOL 64

__thread _Atomic uintptr_t agent_switch_top AGENT_TLS;

/* Stacks of ended threads, for the next ones (lock-free slots). */
static _Atomic(void *) stack_pool[STACK_POOL];

static void *stacks_get(void)
{
	void *m;
	int i;

	for (i = 0; i < STACK_POOL; i++) {
		m = atomic_load(&stack_pool[i]);
		if (m && atomic_compare_exchange_strong(&stack_pool[i], &m, NULL))
			return m;
	}
	m = (void *)agent_syscall(SYS_mmap, NULL, STACK_SIZE + STACK_GUARD, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	if (agent_syscall(SYS_mprotect, m, STACK_GUARD, PROT_NONE) != 0) {
		agent_syscall(SYS_munmap, m, STACK_SIZE + STACK_GUARD);
		return NULL;
	}
	return m;
}

static void stacks_put(void *m)
{
	int i;

	for (i = 0; i < STACK_POOL; i++) {
		void *none = NULL;

		if (atomic_compare_exchange_strong(&stack_pool[i], &none, m))
			return;
	}
	agent_syscall(SYS_munmap, m, STACK_SIZE + STACK_GUARD);
}

static int stacks_kernel(const stack_t *ss, stack_t *old)
{
	return (int)agent_syscall(SYS_sigaltstack, ss, old);
}

static void stacks_switch_top(uintptr_t top)
{
	atomic_store_explicit(&agent_switch_top, top, memory_order_relaxed);
}

/* The kernel's alternate stack and agent_switch_top change together: a sample
 * between the two would run on the wrong stack (sigpath.h).  Raw system calls,
 * around our own state only: the program's mask is restored as it was. */
static void stacks_block(sigset_t *old)
{
	sigset_t all;

	sigfillset(&all);
	agent_syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, old, _NSIG / 8);
}

static void stacks_unblock(const sigset_t *old)
{
	agent_syscall(SYS_rt_sigprocmask, SIG_SETMASK, old, NULL, _NSIG / 8);
}

/* With every signal blocked, or before the thread's sampler is armed. */
static void stacks_use_ours(struct agent_thread *t)
{
	stack_t ss;

	ss.ss_sp = t->stack_lo;
	ss.ss_size = STACK_SIZE;
	ss.ss_flags = 0;
	if (stacks_kernel(&ss, NULL) == 0) {
		t->kernel_ss_ours = 1;
		stacks_switch_top(0);
	} else {
		t->kernel_ss_ours = 0;
		stacks_switch_top((uintptr_t)t->stack_hi);
	}
}

/* The main thread's stack: ld.so's record of its top. */
extern void *__libc_stack_end;

/* The end of the mapping that holds addr (the main thread's stack: its
 * [stack] line), from /proc/self/maps; 0 when not found.  Not signal
 * context (the constructor). */
struct mapping_end {
	uintptr_t addr, end;
};

static int mapping_end_line(char *line, void *arg)
{
	struct mapping_end *m = arg;
	char *dash;
	unsigned long lo = strtoul(line, &dash, 16), hi;

	if (*dash != '-')
		return 0;
	hi = strtoul(dash + 1, NULL, 16);
	if (lo <= m->addr && m->addr < hi) {
		m->end = hi;
		return 1;
	}
	return 0;
}

static uintptr_t stacks_mapping_end(uintptr_t addr)
{
	struct mapping_end m = {addr, 0};

	agent_maps_each(mapping_end_line, &m);
	return m.end;
}

/*
 * Record the calling thread's own stack for the unwinder (agent_tls.ustk_lo,
 * ustk_hi; unwind_begin): reads there are direct, elsewhere each one is a
 * process_vm_readv.  A thread pthread_create made: from here (an address
 * in threads_trampoline's frame) and size (from the attributes it was
 * created with), up to its thread descriptor, which glibc puts at the top
 * of the stack block, so the start-up frames (start_thread, clone3) above
 * the trampoline's are in.  The main thread (here == 0): from __libc_stack_end to
 * the end of its [stack] mapping (argv and the environment lie above it:
 * the outermost frames' reads land there, two system calls a backtrace
 * otherwise, a third of a CUDA launch stack's cost), size RLIMIT_STACK (the
 * kernel keeps that span under the stack free of other mappings, and the
 * stack can grow through it).  lo = hi - size may reach below the real
 * bottom: a margin keeps it inside.  A thread whose stack pointer is outside
 * [lo, hi) when a sample is taken (a coroutine's stack, the program's own
 * signal stack) has its stack read word by word through process_vm_readv
 * instead.  Not signal context.
 */
void stacks_user_bounds(uintptr_t here, size_t size)
{
	struct agent_thread *t = &agent_tls;
	size_t margin;
	uintptr_t hi, top = 0;

	t->ustk_lo = t->ustk_hi = 0;
	if (!here) {
		struct rlimit rl;

		here = (uintptr_t)__libc_stack_end;
		if (!here || getrlimit(RLIMIT_STACK, &rl) != 0)
			return;
		size = rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > (256u << 20)
			       ? (256u << 20)
			       : (size_t)rl.rlim_cur;
		top = stacks_mapping_end(here);
	} else {
		/*
		 * Not pthread_getattr_np: it mallocs (the affinity set), and
		 * glibc's first malloc or free in a new thread sets up a
		 * malloc arena for it, 64 MiB of address space (a program
		 * under RLIMIT_AS failed its own malloc: tests/hostile
		 * rlimit_as).  glibc puts the thread's descriptor
		 * (pthread_self(), with the static TLS below it) at the top of
		 * its stack block, ours or the program's: the start-up frames
		 * lie just under it.
		 */
		uintptr_t tcb = (uintptr_t)pthread_self();

		if (tcb > here && tcb - here < size)
			top = tcb;
	}
	margin = size / 4 < (256u << 10) ? size / 4 : (256u << 10);
	hi = (here + 4095) & ~(uintptr_t)4095;
	if (size < (64u << 10) || hi < size)
		return;
	t->ustk_lo = hi - size + margin;
	t->ustk_hi = top > hi && top - hi <= (1u << 20) ? top : hi;
}

/*
 * Give the calling thread its handler stack (a fork child keeps its parent
 * thread's; fresh: a thread pthread_create just made).  Returns 0, or -ENOMEM: the thread is then not sampled.
 */
int stacks_thread_begin(int fresh)
{
	struct agent_thread *t = &agent_tls;
	stack_t cur;

	if (!t->stack_map) {
		t->stack_map = stacks_get();
		if (!t->stack_map) {
			if (agent.w.hdr)
				atomic_fetch_add(&agent.w.hdr->unsampled_why[CBN_UNSAMPLED_NO_STACK], 1);
			return -ENOMEM;
		}
		t->stack_lo = (char *)t->stack_map + STACK_GUARD;
		t->stack_hi = t->stack_lo + STACK_SIZE;
		t->app_ss_on = 0;
		t->kernel_ss_ours = 0;
	}
	/* A thread pthread_create just made has no alternate stack (the kernel
	 * resets it for CLONE_VM children): no need to ask. */
	if (fresh || stacks_kernel(NULL, &cur) != 0)
		cur.ss_flags = SS_DISABLE;
	if (cur.ss_flags & SS_DISABLE) {
		stacks_use_ours(t);
	} else if (cur.ss_sp == t->stack_lo) {
		t->kernel_ss_ours = 1;
		stacks_switch_top(0);
	} else {
		/* Set before we ran (another library's constructor): the program's. */
		t->app_ss = cur;
		t->app_ss.ss_flags &= ~SS_ONSTACK;
		t->app_ss_on = 1;
		t->kernel_ss_ours = 0;
		stacks_switch_top((uintptr_t)t->stack_hi);
		agent_note(CBN_NOTE_APP_ALTSTACK);
	}
	return 0;
}

/*
 * After the thread's sampler is gone: give the kernel back the program's
 * view and keep the stack for another thread.  A late signal of the sampler
 * may still come, at any point: in this order, the entry stub never moves to
 * a stack the kernel is using (agent_switch_top is already 0 while the
 * kernel's altstack is ours), and the stack goes to the pool only once
 * nothing points the handler at it.
 */
void stacks_thread_end(void)
{
	struct agent_thread *t = &agent_tls;
	void *map = t->stack_map;
	stack_t off;

	if (!map)
		return;
	if (t->kernel_ss_ours) {
		memset(&off, 0, sizeof(off));
		off.ss_flags = SS_DISABLE;
		stacks_kernel(&off, NULL);
		t->kernel_ss_ours = 0;
	}
	stacks_switch_top(0);
	t->stack_lo = t->stack_hi = NULL;
	t->stack_map = NULL;
	atomic_signal_fence(memory_order_seq_cst);
	stacks_put(map);
}

static int stacks_on(const stack_t *ss)
{
	char here;
	uintptr_t sp = (uintptr_t)&here, lo = (uintptr_t)ss->ss_sp;

	return sp > lo && sp <= lo + ss->ss_size;
}

__attribute__((visibility("default"))) int sigaltstack(const stack_t *ss, stack_t *old)
{
	struct agent_thread *t = &agent_tls;
	stack_t view;

	if (!t->stack_map)
		return stacks_kernel(ss, old);
	if (t->app_ss_on) {
		view = t->app_ss;
		view.ss_flags = (view.ss_flags & ~SS_ONSTACK) | (stacks_on(&t->app_ss) ? SS_ONSTACK : 0);
	} else {
		memset(&view, 0, sizeof(view));
		view.ss_flags = SS_DISABLE;
	}
	if (ss) {
		sigset_t mask;
		int e;

		if (view.ss_flags & SS_ONSTACK) {
			errno = EPERM;
			return -1;
		}
		stacks_block(&mask);
		if (ss->ss_flags & SS_DISABLE) {
			if (!t->kernel_ss_ours)
				stacks_use_ours(t);
			t->app_ss_on = 0;
		} else {
			/* The kernel validates it (flags, MINSIGSTKSZ) as it would
			 * without us.  If the program's handler runs on our stack
			 * right now the kernel refuses to switch: the program's
			 * stack is then recorded and its view is what it set. */
			if (stacks_kernel(ss, NULL) == 0) {
				t->kernel_ss_ours = 0;
				stacks_switch_top((uintptr_t)t->stack_hi);
			} else if (errno != EPERM || !t->kernel_ss_ours) {
				e = errno;
				stacks_unblock(&mask);
				errno = e;
				return -1;
			}
			t->app_ss = *ss;
			t->app_ss_on = 1;
			agent_note(CBN_NOTE_APP_ALTSTACK);
		}
		stacks_unblock(&mask);
	}
	if (old)
		*old = view;
	return 0;
}
