/*
 * sigpath.h — everything that runs in the sampling signal handler, and nothing
 * else.  Every function declared here is ASYNC-SIGNAL-SAFE: no malloc, no
 * stdio, no lock the program or another handler can hold while waiting for us,
 * no dlsym, no descriptor kept; errno is saved by the handler's entry.  The
 * writer's signal-safe half is in src/format/writer.h (writer_chunk_new,
 * writer_reserve, writer_commit, writer_lost, writer_grow_signal).
 *
 * A test build (tests/agent: CBN_SIGPATH_CHECK) interposes malloc and
 * pthread_mutex_lock and aborts when they run while sigpath_active() is true.
 */
#ifndef CBN_SIGPATH_H
#define CBN_SIGPATH_H

#include <link.h>
#include <signal.h>
#include <stdint.h>

#include "agent.h"

/* The handler the kernel calls (an assembly stub in sampler.c): it moves to
 * the thread's agent stack when the kernel ran it on the program's own
 * alternate stack, then calls sampler_handler. */
void sampler_entry(int sig, siginfo_t *si, void *uc) AGENT_HIDDEN;
void sampler_handler(int sig, siginfo_t *si, void *uc) AGENT_HIDDEN;

/* Top of the agent stack to move to, or 0 when the handler already runs on it
 * (the kernel altstack is ours); read by sampler_entry. */
extern __thread uintptr_t agent_switch_top AGENT_TLS AGENT_HIDDEN;

/* 1 while this thread runs sampler_handler (for the CBN_SIGPATH_CHECK build). */
int sigpath_active(void) AGENT_HIDDEN;

/* Is this signal one of our samples: our timer's cookie, or the si_fd of the
 * thread's perf event? */
int timer_is_ours(const siginfo_t *si) AGENT_HIDDEN;

/* Weight of this sample in periods, and how many of them the thread spent in
 * the kernel, from the thread's CPU clock and rusage (raw syscalls). */
void timer_weigh(struct agent_thread *t, uint32_t *weight, uint32_t *kernel) AGENT_HIDDEN;

/* A thread started on a POSIX timer (cheap to create and delete, for threads
 * that never run a full period) moves to a perf event at its first sample. */
void timer_upgrade(struct agent_thread *t) AGENT_HIDDEN;

/* Re-arm this thread's sampler on the current agent.signo after the signal
 * moved (raw syscalls only). */
void timer_rearm_signal(struct agent_thread *t, const ucontext_t *uc) AGENT_HIDDEN;

/* The program's disposition for a signal we own that is not one of our samples. */
void sigwrap_chain(int sig, siginfo_t *si, void *uc) AGENT_HIDDEN;

/* unwind.c: unwind_begin/unwind_end/unwind_backtrace (agent.h) are signal-safe. */

/* modules.c: dl_iterate_phdr over the published module snapshot (what our
 * libunwind calls instead of the loader's), and whether a pc lies in a known
 * module's text. */
int modules_snap_iterate(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data)
	AGENT_HIDDEN;
int modules_snap_readable(uintptr_t addr, size_t len) AGENT_HIDDEN;
int modules_snap_has_text(uintptr_t pc) AGENT_HIDDEN;

#endif
