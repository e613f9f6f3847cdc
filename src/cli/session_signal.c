/*
 * session_signal.c — a private session directory is not left behind when a
 * signal ends the launcher after the program ended (a run) or while it
 * detaches and reports (--pid): reading and symbolizing can take a while, a
 * Ctrl-C then must not leave a possibly large session in TMPDIR, and a
 * closed stdout (`cbottleneck ... | head`) must not kill us before the
 * cleanup.  session_cleanup_signal runs in signal context: async-signal-safe
 * calls only, so it hands the removal to a shell that then dies of the same
 * signal.
 */
#include <limits.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static char cleanup_dir[PATH_MAX];

void session_protect_dir(const char *dir)
{
	if (dir && strlen(dir) < sizeof(cleanup_dir))
		strcpy(cleanup_dir, dir);
}

void session_cleanup_signal(int sig)
{
	static char script[] = "rm -rf -- \"$1\"; trap - \"$2\"; kill -s \"$2\" $$";
	char *name = sig == SIGINT ? "INT" : sig == SIGTERM ? "TERM" : sig == SIGHUP ? "HUP" : "QUIT";
	char *argv[] = {"sh", "-c", script, "sh", cleanup_dir, name, NULL};
	char *envp[] = {"PATH=/usr/bin:/bin", NULL};
	struct sigaction sa;
	sigset_t set;

	/* The shell inherits the mask, where sig is blocked while its handler
	 * runs: unblocked, so that its kill ends it. */
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	if (cleanup_dir[0])
		execve("/bin/sh", argv, envp);
	/* Nothing to remove (or no shell): die of sig all the same. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigaction(sig, &sa, NULL);
	raise(sig);
	_exit(128 + sig);
}

void session_protect(const char *dir)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	if (!dir || strlen(dir) >= sizeof(cleanup_dir))
		return;
	session_protect_dir(dir);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction old;
		/* A signal we were started with ignored (nohup, background job)
		 * stays ignored. */
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			continue;
		sa.sa_handler = session_cleanup_signal;
		sigaction(sigs[i], &sa, NULL);
	}
}
