/*
 * sigwrap.h — the sampling signal stays ours without the program noticing
 * (sigwrap.c): the choice of signal, the program's view of its disposition
 * and mask, and the program's disposition for what arrives on a signal we
 * own that is not a sample.  Normal context unless said.
 */
#ifndef CBN_AGENT_SIGWRAP_H
#define CBN_AGENT_SIGWRAP_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "agent.h"

/* Pick the sampling signal and install entry (the sampler's handler, given
 * here so that this file never names the layer above it).  0, or -errno
 * with why filled. */
int sigwrap_install(void (*entry)(int, siginfo_t *, void *), char *why, size_t len)
	AGENT_HIDDEN;
/* Open signo in this thread (the program keeps seeing it blocked if it was). */
int sigwrap_unblock(int signo) AGENT_HIDDEN;
/* Around an exec: the program's dispositions and mask for the new image;
 * undone when the exec fails (changed: what before_exec returned). */
int sigwrap_before_exec(void) AGENT_HIDDEN;
void sigwrap_exec_failed(int changed) AGENT_HIDDEN;
void sigwrap_after_fork_child(void) AGENT_HIDDEN;
/* The owned signals the program believes blocked in this thread (bit
 * sig-1): a new thread inherits its creator's. */
uint64_t sigwrap_app_blocked(void) AGENT_HIDDEN;
void sigwrap_set_app_blocked(uint64_t blocked) AGENT_HIDDEN;
/* The real functions behind the interposers, for the agent's own calls. */
int sigwrap_real_sigmask(int how, const sigset_t *set, sigset_t *old) AGENT_HIDDEN;
int sigwrap_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
	AGENT_HIDDEN;

/* SIGNAL-SAFE.  The program's disposition for a signal we own that is not
 * one of our samples. */
void sigwrap_chain(int sig, siginfo_t *si, void *uc) AGENT_HIDDEN;

/* Normal context: fn is told of each sigaction of the program's that set a
 * disposition, after it took effect (python_calls.c waits for the
 * interpreter's SIGINT handler); set once, at start-up. */
void sigwrap_watch_installs(void (*fn)(int sig, const struct sigaction *act)) AGENT_HIDDEN;

#endif
