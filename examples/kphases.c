/*
 * kphases — phases of pure user CPU and of system calls, in turn: 3 times
 * user_phase() spins in user code for 0.3 s of CPU, then read_phase() reads
 * /dev/zero (the kernel clears each 64 KiB buffer) for 0.2 s of CPU.  The agent
 * closes a thread's kernel-stack event after 100 ms of CPU without kernel
 * mode and opens it again when the system time grows (docs/agent.md); this
 * program crosses that both ways.  Usage: kphases [SCALE]; SCALE scales the
 * phases (default 1).
 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "burn.h"

static char buf[1 << 16];

/* Pure user code: the CPU clock (a system call) is read every 2^20 steps,
 * about once a millisecond, not every 20 000 as BURN_CPU does. */
__attribute__((noinline)) void user_phase(uint64_t ns)
{
	uint64_t end = burn_cpu_now() + ns, x = burn_sink;

	do {
		for (int i = 0; i < (1 << 20); i++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			__asm__ volatile("" : "+r"(x));
		}
	} while (burn_cpu_now() < end);
	burn_sink += x;
}

__attribute__((noinline)) void read_phase(int fd, uint64_t ns)
{
	uint64_t end = burn_cpu_now() + ns;

	while (burn_cpu_now() < end)
		if (read(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf)) {
			perror("read");
			return;
		}
}

int main(int argc, char **argv)
{
	double scale = burn_arg(argc, argv, 1, 1.0);
	int fd = open("/dev/zero", O_RDONLY);

	if (fd < 0) {
		perror("/dev/zero");
		return 1;
	}
	for (int r = 0; r < 3; r++) {
		user_phase((uint64_t)(scale * 0.3e9));
		read_phase(fd, (uint64_t)(scale * 0.2e9));
	}
	close(fd);
	printf("kphases: done\n");
	return 0;
}
