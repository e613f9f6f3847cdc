/*
 * sig_count — counts every catchable signal it gets, for signals_once.sh.
 *
 *   sig_count DIR [killpg N SIG]
 *
 * Installs a counting handler for every signal from 1 to SIGRTMAX but SIGKILL,
 * SIGSTOP and SIGCHLD (the kernel's children notices; a SIGCHLD a process
 * sends is counted through the same handler's si_code check), and the
 * job-control stops (SIGTSTP, SIGTTIN, SIGTTOU), which keep their default so
 * that a stop stays a stop.  Creates DIR/ready, then, while DIR/stop does not
 * exist, rewrites DIR/counts ("SIG COUNT" lines) whenever a count changed,
 * so the sender can wait for one delivery before the next.  With "killpg N
 * SIG" it sends SIG to its own process group N times itself, waiting for
 * each to arrive before the next.  Exits 0 after DIR/stop, printing the
 * counts on stdout.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t count[_NSIG];

static void counter(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	/* A child's notice is the kernel's (CLD_*): not a signal anyone sent. */
	if (sig == SIGCHLD && si->si_code > 0)
		return;
	count[sig]++;
}

static void write_counts(const char *dir)
{
	char path[4096], tmp[4200];
	FILE *f;
	int s;

	snprintf(path, sizeof(path), "%s/counts", dir);
	snprintf(tmp, sizeof(tmp), "%s/counts.tmp", dir);
	f = fopen(tmp, "w");
	if (!f)
		return;
	for (s = 1; s < _NSIG; s++)
		if (count[s])
			fprintf(f, "%d %d\n", s, (int)count[s]);
	fclose(f);
	rename(tmp, path);
}

static int exists(const char *dir, const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

static unsigned long sum(void)
{
	unsigned long n = 0;
	int s;

	for (s = 1; s < _NSIG; s++)
		n += (unsigned long)count[s];
	return n;
}

int main(int argc, char **argv)
{
	struct timespec tick = {0, 2000000};
	struct sigaction sa;
	unsigned long seen = 0;
	char path[4096];
	FILE *f;
	int s, i;

	if (argc < 2)
		return 2;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = counter;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (s = 1; s <= SIGRTMAX; s++) {
		if (s == SIGKILL || s == SIGSTOP || s == SIGTSTP || s == SIGTTIN || s == SIGTTOU)
			continue;
		if (s >= 32 && s < SIGRTMIN)
			continue; /* glibc's own */
		sigaction(s, &sa, NULL);
	}
	snprintf(path, sizeof(path), "%s/ready", argv[1]);
	f = fopen(path, "w");
	if (f)
		fclose(f);
	if (argc >= 5 && !strcmp(argv[2], "killpg")) {
		int n = atoi(argv[3]), sig = atoi(argv[4]);

		for (i = 0; i < n; i++) {
			int before = count[sig], w;

			killpg(0, sig);
			for (w = 0; w < 1000 && count[sig] == before; w++)
				nanosleep(&tick, NULL);
		}
	}
	while (!exists(argv[1], "stop")) {
		if (sum() != seen) {
			seen = sum();
			write_counts(argv[1]);
		}
		nanosleep(&tick, NULL);
	}
	write_counts(argv[1]);
	for (s = 1; s < _NSIG; s++)
		if (count[s])
			printf("%d %d\n", s, (int)count[s]);
	return 0;
}
