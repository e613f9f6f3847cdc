/*
 * unwind_hold.c — the hold on unwinding, under both the unwinder (unwind.c)
 * and the module map (modules.c).  fork() copies libunwind's locks (taken on
 * a cache miss with signals blocked) in whatever state another thread left
 * them, and dlclose unmaps tables an unwind may be reading, and the module
 * snapshot an unwind walks is freed only when none runs.  So every unwind is
 * counted (unwind_enter, unwind_leave), and fork and dlclose stop new ones
 * (samples become PC-only) and wait for running ones; a generation counts
 * the unloads, after which every thread drops its trace cache (unwind.c) and
 * its cached call paths (pathcache.c), both keyed by address.
 *
 * Both sides store one variable and then load the other (unwind_enter:
 * running, then hold and the module snapshot; unwind_quiesce: hold, then
 * running; modules.c: the snapshot, then running), so those accesses are
 * sequentially consistent: with acquire/release alone, each side could miss
 * the other's store and a snapshot be freed under a running unwind.  On
 * x86-64 this costs nothing (the RMWs are locked, the loads plain).
 */
#include <time.h>

#include "unwind_hold.h"

static _Atomic int unwind_running;
static _Atomic int unwind_hold;

/* Bumped when a library is unloaded. */
static _Atomic unsigned unwind_gen;

/* SIGNAL-SAFE.  1: an unwind may start (the caller must unwind_leave); 0
 * while unwinding is held. */
int unwind_enter(void)
{
	if (atomic_load_explicit(&unwind_hold, memory_order_acquire))
		return 0;
	atomic_fetch_add(&unwind_running, 1);
	if (atomic_load(&unwind_hold)) {
		atomic_fetch_sub_explicit(&unwind_running, 1, memory_order_release);
		return 0;
	}
	return 1;
}

/* SIGNAL-SAFE. */
void unwind_leave(void)
{
	atomic_fetch_sub_explicit(&unwind_running, 1, memory_order_release);
}

/* SIGNAL-SAFE.  The unloads so far. */
unsigned unwind_generation(void)
{
	return atomic_load_explicit(&unwind_gen, memory_order_relaxed);
}

int unwind_idle(void)
{
	return atomic_load(&unwind_running) == 0;
}

/* No thread may be inside libunwind after this returns (fork prepare, dlclose).
 * Bounded: a thread stopped mid-unwind must not hang the program. */
void unwind_quiesce(void)
{
	struct timespec ts = {0, 100000};
	int i;

	atomic_fetch_add(&unwind_hold, 1);
	for (i = 0; i < 500 && atomic_load(&unwind_running) > 0; i++)
		nanosleep(&ts, NULL);
}

void unwind_release(void)
{
	atomic_fetch_sub(&unwind_hold, 1);
}

/* A library was unloaded: what is cached by address goes. */
void unwind_invalidate(void)
{
	atomic_fetch_add(&unwind_gen, 1);
}

/* In the child: only the forking thread exists and it was not unwinding. */
void unwind_after_fork_child(void)
{
	atomic_store(&unwind_running, 0);
	atomic_store(&unwind_hold, 0);
}
