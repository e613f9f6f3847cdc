/*
 * unshare_files.c — threads that unshare their own descriptor table
 * (CLONE_FILES) and fs_struct (CLONE_FS), then chdir and open there, while
 * the main thread opens in its own; an idea the agent's helpers use too.
 * Must hold: every thread sees the numbers and directories it would without
 * the profiler.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/stat.h>

#include "hostile.h"

static void *own_table(void *arg)
{
	char cwd[PATH_MAX];
	int fd, r;

	r = unshare(CLONE_FILES | CLONE_FS);
	if (r)
		return (void *)(intptr_t)-errno;
	if (mkdir(arg, 0700) && errno != EEXIST)
		return (void *)(intptr_t)-errno;
	if (chdir(arg))
		return (void *)(intptr_t)-errno;
	burn_cpu_deep(0.15, 8);
	fd = open("here", O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	if (!getcwd(cwd, sizeof(cwd)))
		return (void *)(intptr_t)-errno;
	close(fd);
	/* a number from its own copy of the table, and its own directory */
	return (void *)(intptr_t)(fd * 10 + !strcmp(strrchr(cwd, '/') + 1, arg));
}

int main(void)
{
	pthread_t t[2];
	static const char *dirs[2] = {"dirA", "dirB"};
	void *r;
	int fd;

	print_views("start");
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, own_table, (void *)dirs[i]))
			die("pthread_create");
	burn_cpu_deep(0.2, 8);
	fd = open("main-file", O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	say("main: open -> %d\n", fd);
	close(fd);
	for (int i = 0; i < 2; i++) {
		pthread_join(t[i], &r);
		say("thread %d: %ld\n", i, (long)(intptr_t)r);
	}
	print_views("end");
	return 0;
}
