/*
 * timer.h — the per-thread sampler (timer.c): a perf event or a POSIX CPU
 * timer that raises the sampling signal on the thread, and the weight of
 * each sample in periods of the thread's CPU.  Most of it runs in the
 * handler: SIGNAL-SAFE unless said.
 */
#ifndef CBN_AGENT_TIMER_H
#define CBN_AGENT_TIMER_H

#include <signal.h>
#include <stdint.h>
#include <ucontext.h>

#include "agent.h"

/* The calling thread's CPU time, ns (a plain system call). */
uint64_t agent_thread_cpu(void) AGENT_HIDDEN;

/* Normal context: start sampling the calling thread on signo (thread begin,
 * exec failure, a fork child); perf_now: open the perf event at once, else
 * start on a POSIX timer that the first sample upgrades.  0 or -errno. */
int timer_arm(struct agent_thread *t, int signo, int perf_now) AGENT_HIDDEN;
/* Normal context, at start: whether perf events get a page of records
 * (timer_cpu), from what the process may lock. */
void timer_config(void) AGENT_HIDDEN;
/* Normal context: a fork child's file has no timer reason yet. */
void timer_after_fork_child(void) AGENT_HIDDEN;
/* Normal context: the calling thread moves to the new sampling signal now
 * (the thread whose sigaction made it move). */
void timer_move_self(void) AGENT_HIDDEN;

/* Is this signal one of our samples: our timer's cookie, or the si_fd of the
 * thread's perf event? */
int timer_is_ours(const siginfo_t *si) AGENT_HIDDEN;

/* A kernel SIGIO on a perf-sampled thread: the event's signal could not be
 * queued (RLIMIT_SIGPENDING); the thread moves to a POSIX timer.  1 when
 * the signal was this (taken), 0 when it is the program's. */
int timer_sigqueue_full(struct agent_thread *t, const siginfo_t *si) AGENT_HIDDEN;

/* The probe timer_sigqueue_full queues to tell (one of ours: ignored). */
int timer_is_probe(const siginfo_t *si) AGENT_HIDDEN;

/* Normal context, signals blocked: the CPU since the thread's last sample at
 * its end, in periods, the fraction drawn (sampler.c's end sample). */
uint32_t timer_remainder(struct agent_thread *t, uint32_t *kernel) AGENT_HIDDEN;

/* Weight of this sample in periods, and how many of them the thread spent in
 * the kernel, from the thread's CPU clock and rusage (raw syscalls). */
void timer_weigh(struct agent_thread *t, uint32_t *weight, uint32_t *kernel) AGENT_HIDDEN;

/* A thread started on a POSIX timer (cheap to create and delete, for threads
 * that never run a full period) moves to a perf event at its first sample. */
void timer_upgrade(struct agent_thread *t) AGENT_HIDDEN;

/* Re-arm this thread's sampler on the current agent.signo after the signal
 * moved (raw syscalls only). */
void timer_rearm_signal(struct agent_thread *t, const ucontext_t *uc) AGENT_HIDDEN;

/* Move the thread's sampler to the park period (slow 1: outside a capture
 * window) or back (0), on the same kind of sampler (raw syscalls; a perf
 * event is opened again, aside; the CPU clocks restart).  0 or -errno. */
int timer_slow(struct agent_thread *t, int slow) AGENT_HIDDEN;

/* Stop the thread's sampler (raw syscalls; the handler calls it when the
 * sampling signal moved, and when the park period replaces a perf event). */
void timer_disarm(struct agent_thread *t) AGENT_HIDDEN;

#endif
