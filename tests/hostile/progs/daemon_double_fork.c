/*
 * daemon_double_fork.c — the classic daemon: fork, setsid, fork again; the
 * grandchild closes its stdio, burns CPU, writes a file (renamed into place
 * when complete) and exits; the original parent waits until the file is there.
 * Must hold: the same file and output, as without the profiler.
 */
#include <fcntl.h>
#include <sys/wait.h>

#include "hostile.h"

int main(void)
{
	pid_t pid;
	int st;
	char buf[256];
	FILE *f;

	print_views("start");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		if (setsid() < 0)
			_exit(10);
		pid = fork();
		if (pid < 0)
			_exit(11);
		if (pid > 0)
			_exit(0); /* the session leader leaves; the daemon is orphaned */
		int null = open("/dev/null", O_RDWR);

		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		if (null > 2)
			close(null);
		burn_cpu_deep(0.3, 8);
		f = fopen("daemon.tmp", "w");
		if (!f)
			_exit(12);
		fprintf(f, "written by the daemon, session leader=%s\n",
		        getsid(0) == getpid() ? "yes" : "no");
		fclose(f);
		rename("daemon.tmp", "daemon.txt");
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid)
		die("waitpid");
	say("intermediate child: exited=%d status=%d\n", WIFEXITED(st),
	    WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	burn_cpu(0.1);
	for (int i = 0; i < 1000 && access("daemon.txt", F_OK) != 0; i++)
		usleep(10000);
	f = fopen("daemon.txt", "r");
	if (!f) {
		say("daemon.txt never appeared\n");
		return 1;
	}
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	say("daemon says: %s", buf);
	print_views("end");
	return 0;
}
