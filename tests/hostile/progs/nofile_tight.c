/*
 * nofile_tight.c — RLIMIT_NOFILE set to 6, then the program execs itself
 * (so that the profiler starts under the limit) and, while two threads burn
 * CPU, opens /dev/null until EMFILE, closes them and does it again 50 times.
 * Must hold: the same count every time (3: descriptors 3, 4 and 5), as
 * without the profiler, whose helpers keep no descriptor in the program's
 * table.
 */
#include <fcntl.h>
#include <pthread.h>

#include "hostile.h"

static void *burner(void *arg)
{
	burn_cpu_deep(0.3, 8);
	return arg;
}

static void run(void)
{
	pthread_t t[2];
	int fds[16], first = -1, odd = 0;

	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, burner, NULL))
			die("pthread_create");
	for (int round = 0; round < 50; round++) {
		int n = 0;

		while (n < 16 && (fds[n] = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
			n++;
		if (errno != EMFILE)
			die("open");
		if (first < 0)
			first = n;
		else if (n != first)
			odd++;
		while (n > 0)
			close(fds[--n]);
		burn_cpu(0.005);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	say("opened until EMFILE: %d, rounds with another count: %d\n", first, odd);
}

int main(int argc, char **argv)
{
	struct rlimit rl = {6, 6};

	if (argc > 1) {
		run();
		return 0;
	}
	if (setrlimit(RLIMIT_NOFILE, &rl))
		die("setrlimit");
	say("RLIMIT_NOFILE 6; exec\n");
	execl("/proc/self/exe", argv[0], "run", (char *)NULL);
	die("exec");
}
