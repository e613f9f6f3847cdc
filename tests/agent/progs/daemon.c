/*
 * daemon.c — double-forking daemon: the parent exits at once, the middle child
 * calls setsid and exits, the grandchild closes every fd, burns CPU and then
 * writes "daemon: ok" into the file named by argv[1].
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void daemon_spin(double s)
{
	volatile unsigned long x = 1;
	double end = cpu_now() + s;

	while (cpu_now() < end)
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005ul + 1;
}

int main(int argc, char **argv)
{
	const char *msg = "daemon: ok\n";
	char tmp[4096];
	int fd;

	if (argc < 2)
		return 2;
	if (fork() != 0)
		return 0;
	setsid();
	if (fork() != 0)
		_exit(0);
	for (fd = 0; fd < 1024; fd++)
		close(fd);
	daemon_spin(0.2);
	snprintf(tmp, sizeof(tmp), "%s.tmp", argv[1]);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return 1;
	if (write(fd, msg, strlen(msg)) < 0)
		return 1;
	close(fd);
	rename(tmp, argv[1]);
	return 0;
}
