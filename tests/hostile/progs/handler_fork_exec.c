/*
 * handler_fork_exec.c — a SIGALRM handler that forks, and whose child
 * execs /bin/true, while the interrupted thread keeps writing annotation
 * marks (cbottleneck.h; no-ops without the profiler), so that many
 * signals land inside the agent's write of a record: fork and exec are
 * async-signal-safe, and the agent's hooks of both write events.  Before
 * the events lock checked its owner, the first such fork or exec waited
 * for its own thread forever.  Must hold: 20 forks, each child's status
 * 0, the same output as without the profiler.
 */
#include <signal.h>
#include <sys/time.h>
#include <sys/wait.h>

#include "cbottleneck.h"
#include "hostile.h"

#define FORKS 20

static volatile sig_atomic_t signals, forks, bad;

static void on_alrm(int sig)
{
	int st;
	pid_t pid;

	(void)sig;
	if (forks >= FORKS || ++signals % 10)
		return;
	pid = fork();
	if (pid == 0) {
		char *argv[] = {"/bin/true", NULL};

		execv("/bin/true", argv);
		_exit(3);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		bad++;
	forks++;
}

int main(void)
{
	struct itimerval it = {{0, 1000}, {0, 1000}};
	struct sigaction sa;
	uint64_t x = 1;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alrm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	if (setitimer(ITIMER_REAL, &it, NULL) != 0)
		die("setitimer");
	while (forks < FORKS) {
		int i;

		for (i = 0; i < 50; i++)
			cbn_annotate_mark("m");
		x = burn_chunk(x);
	}
	it.it_value.tv_usec = it.it_interval.tv_usec = 0;
	setitimer(ITIMER_REAL, &it, NULL);
	burn_cpu(0.3);
	say("forks %d, children that did not exit 0: %d (%d)\n", (int)forks, (int)bad,
	    (int)(x & 0));
	return 0;
}
