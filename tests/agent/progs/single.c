/*
 * single.c — a single-threaded target that must stay single-threaded under the
 * agent (unshare(CLONE_NEWUSER) and setns refuse multi-threaded callers): it
 * burns CPU 240 frames deep, so its samples outgrow the initial file and the
 * handler must grow it, then prints the Threads: line of /proc/self/status.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

static volatile unsigned long sink;

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static int deep(int d, double seconds)
{
	if (d > 0) {
		int r = deep(d - 1, seconds);

		sink += (unsigned long)r; /* no tail call */
		return r + 1;
	}
	double end = cpu_now() + seconds;
	unsigned long x = sink;

	while (cpu_now() < end)
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005ul + 1;
	sink = x;
	return 0;
}

int main(void)
{
	char line[256];
	FILE *f;

	deep(240, 1.2);
	f = fopen("/proc/self/status", "r");
	if (!f)
		return 1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "Threads:", 8) == 0)
			printf("single: %s", line);
	fclose(f);
	return 0;
}
