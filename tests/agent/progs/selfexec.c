/*
 * selfexec.c — execs itself: "selfexec N" burns a little CPU and execs
 * "selfexec N-1" until N is 0.  Each image must get its own session file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2;
	volatile unsigned long x = 1;
	struct timespec ts;
	double end;
	char arg[16];

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	end = (double)ts.tv_sec + ts.tv_nsec / 1e9 + 0.05;
	do {
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005ul + 1;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	} while ((double)ts.tv_sec + ts.tv_nsec / 1e9 < end);
	if (n <= 0) {
		printf("selfexec: done\n");
		return 0;
	}
	snprintf(arg, sizeof(arg), "%d", n - 1);
	fflush(stdout);
	execl("/proc/self/exe", argv[0], arg, (char *)NULL);
	perror("execl");
	return 1;
}
