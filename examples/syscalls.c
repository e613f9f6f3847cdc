/*
 * syscalls — an example that spends most of its CPU in the kernel:
 * read_zero() reads /dev/zero into a 1 MiB buffer (the kernel clears it: a
 * copy to user space), a little user work in between.  Usage:
 * syscalls [SCALE]; SCALE ≈ seconds of CPU (default 1).
 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "burn.h"

static char buf[1 << 20];

__attribute__((noinline)) void read_zero(int fd)
{
	if (read(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
		perror("read");
}

__attribute__((noinline)) void user_work(uint64_t ns)
{
	BURN_CPU(ns);
}

int main(int argc, char **argv)
{
	double scale = burn_arg(argc, argv, 1, 1.0);
	uint64_t end = burn_cpu_now() + (uint64_t)(scale * 1e9);
	int fd = open("/dev/zero", O_RDONLY);

	if (fd < 0) {
		perror("/dev/zero");
		return 1;
	}
	while (burn_cpu_now() < end) {
		for (int i = 0; i < 16; i++)
			read_zero(fd);
		user_work(50000); /* 0.05 ms */
	}
	close(fd);
	printf("syscalls: done\n");
	return 0;
}
