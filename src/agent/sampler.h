/*
 * sampler.h — CPU sampling (sampler.c): the signal handler and its entry
 * stub, and each thread's begin and end around it.  Above the machinery
 * (timer, stacks, sigwrap, unwind, kernel, Python frames, capture gates,
 * the thread registry), under the features.
 */
#ifndef CBN_AGENT_SAMPLER_H
#define CBN_AGENT_SAMPLER_H

#include <signal.h>

#include "agent.h"

/* SIGNAL-SAFE.  The handler the kernel calls (an assembly stub): it moves
 * to the thread's agent stack when the kernel ran it on the program's own
 * alternate stack, then calls sampler_handler.  Given to sigwrap_install. */
void sampler_entry(int sig, siginfo_t *si, void *uc) AGENT_HIDDEN;
void sampler_handler(int sig, siginfo_t *si, void *uc) AGENT_HIDDEN;

/* SIGNAL-SAFE.  1 while this thread runs the agent's part of
 * sampler_handler: not inside the program's handler that sigwrap_chain
 * calls (for the CBN_SIGPATH_CHECK build; agent_tls.in_sigpath, written by
 * the handler only). */
int sigpath_active(void) AGENT_HIDDEN;

/* Normal context, on the thread itself.  begin: before any user code of a
 * new thread (fresh: just created, with the creator's name; NULL: read
 * it), the main thread and a fork's survivor: record it, give it its
 * handler stack, open our signal, arm its sampler.  end: at its end
 * (pthread cleanup, raw exit); 1 when its sampling ended here, and the
 * caller frees what the layers above keep for the thread (0: nothing to
 * end, or under a seccomp filter).  pause/resume: around an exec or a
 * seccomp call; quiesce: wait out running handlers (every thread is about
 * to come under a filter). */
int sampler_thread_begin(int fresh, const char *name) AGENT_HIDDEN;
int sampler_thread_end(void) AGENT_HIDDEN;
/* At the process's exit (exit's handler, _exit), on the exiting thread: the
 * CPU it used since its last sample, as a thread's end has (CBN_SAMPLE_AT_END). */
void sampler_exit_sample(void) AGENT_HIDDEN;
void sampler_pause(void) AGENT_HIDDEN;
void sampler_quiesce(void) AGENT_HIDDEN;
void sampler_resume(void) AGENT_HIDDEN;

#endif
