/*
 * cbn_signal.h — the one parser of sampling-signal names, shared by the
 * launcher (--signal, which checks it) and the agent (CBN_SIGNAL, which uses
 * it): "SIGPROF", "PROF", "SIGRTMAX-3", "RTMIN+2", "40".  Signals the agent
 * cannot sample with (KILL, STOP, the synchronous fault signals, glibc's
 * reserved real-time ones) give 0.  No state, no allocation (not for the
 * sampling handler: strtol is not async-signal-safe).
 */
#ifndef CBN_SIGNAL_H
#define CBN_SIGNAL_H

#include <signal.h>
#include <stdlib.h>
#include <string.h>

static inline int cbn_signal_parse(const char *s)
{
	static const struct {
		const char *name;
		int sig;
	} named[] = {{"PROF", SIGPROF}, {"VTALRM", SIGVTALRM}, {"ALRM", SIGALRM},
		     {"USR1", SIGUSR1},  {"USR2", SIGUSR2},     {"PWR", SIGPWR},
		     {"STKFLT", SIGSTKFLT}};
	char *end;
	long v;
	size_t i;

	if (!s || !*s)
		return 0;
	if (!strncmp(s, "SIG", 3))
		s += 3;
	for (i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		if (!strcmp(s, named[i].name))
			return named[i].sig;
	if (!strncmp(s, "RTMAX", 5) || !strncmp(s, "RTMIN", 5)) {
		long base = s[4] == 'X' ? SIGRTMAX : SIGRTMIN;

		v = 0;
		if (s[5]) {
			if (s[5] != '+' && s[5] != '-')
				return 0;
			v = strtol(s + 5, &end, 10);
			if (*end)
				return 0;
		}
		v += base;
	} else {
		v = strtol(s, &end, 10);
		if (end == s || *end)
			return 0;
	}
	if (v < 1 || v > SIGRTMAX || v == SIGKILL || v == SIGSTOP || v == SIGSEGV || v == SIGBUS ||
	    v == SIGILL || v == SIGFPE || v == SIGTRAP || v == SIGABRT || v == SIGCHLD ||
	    (v >= 32 && v < SIGRTMIN))
		return 0;
	return (int)v;
}

#endif
