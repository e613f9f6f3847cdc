/*
 * setuid_exec.c — a forked child drops to the user nobody (setgid, setuid)
 * and execs the suite's helper, which prints its views; another child does
 * the same without exec and burns CPU.  Root only (skipped otherwise).  Must
 * hold: the same output and statuses (the profiler records the first child
 * from its fork, before it dropped privileges, and names the exec'd image
 * that can no longer write the session).
 */
#include <grp.h>
#include <pwd.h>
#include <sys/wait.h>

#include "hostile.h"

static void drop(void)
{
	struct passwd *pw = getpwnam("nobody");

	if (!pw || setgroups(0, NULL) || setgid(pw->pw_gid) || setuid(pw->pw_uid))
		_exit(9);
}

int main(void)
{
	char helper[PATH_MAX];
	pid_t p;
	int st;

	if (geteuid() != 0)
		skip("not root: cannot change credentials");
	if (!getpwnam("nobody"))
		skip("no user nobody");
	snprintf(helper, sizeof(helper), "%s/hostile_helper", hostile_bindir());
	say("start\n");
	p = fork();
	if (p == 0) {
		drop();
		burn_cpu_deep(0.2, 8);
		say("child 1: uid %s\n", getuid() ? "changed" : "root");
		_exit(4);
	}
	waitpid(p, &st, 0);
	say("child 1: status %d\n", WEXITSTATUS(st));
	p = fork();
	if (p == 0) {
		drop();
		execl(helper, "hostile_helper", "burn", "0.2", "nobody", (char *)NULL);
		_exit(8);
	}
	waitpid(p, &st, 0);
	say("child 2: status %d\n", WEXITSTATUS(st));
	burn_cpu(0.1);
	return 0;
}
