/*
 * wait_io — I/O wait with a known length: a child process writes one record
 * to a pipe every 17 ms (feed, in nanosleep), ITEMS times; the parent reads
 * them in read_slowly() (the line marked IO-SITE), blocked in read about
 * ITEMS x 17 ms (306 ms by default; 17 ms, not a multiple of the off-CPU
 * sampler's period).  Usage: wait_io [ITEMS] (default 18).
 * Prints a checksum of what was read, exits 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline)) static void feed(int fd, long items)
{
	for (long i = 1; i <= items; i++) {
		struct timespec ms17 = {0, 17 * 1000000L};

		while (nanosleep(&ms17, &ms17) != 0)
			;
		if (write(fd, &i, sizeof(i)) != (ssize_t)sizeof(i))
			_exit(1);
	}
}

/* One record: blocks until the child sends it. */
__attribute__((noinline)) static long read_slowly(int fd)
{
	long v = 0;
	ssize_t r = read(fd, &v, sizeof(v)); /* IO-SITE */

	return r == (ssize_t)sizeof(v) ? v : -1;
}

int main(int argc, char **argv)
{
	long items = argc > 1 && atol(argv[1]) > 0 ? atol(argv[1]) : 18;
	unsigned long sum = 0;
	int pfd[2], status = 0;
	pid_t pid;

	if (pipe(pfd) < 0 || (pid = fork()) < 0) {
		perror("wait_io");
		return 1;
	}
	if (pid == 0) {
		close(pfd[0]);
		feed(pfd[1], items);
		_exit(0);
	}
	close(pfd[1]);
	for (long i = 0; i < items; i++) {
		long v = read_slowly(pfd[0]);

		if (v < 0) {
			fprintf(stderr, "wait_io: short read\n");
			return 1;
		}
		sum = sum * 31 + (unsigned long)v;
	}
	waitpid(pid, &status, 0);
	printf("wait_io: %ld records, checksum %lu\n", items, sum);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
