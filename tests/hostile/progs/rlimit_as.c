/*
 * rlimit_as.c — RLIMIT_AS set to 512 MiB (ulimit -v), then the program
 * execs itself (so that the profiler starts under the limit) and asks for
 * what a program under that limit may: malloc(64 MiB) touched, a 32 MiB
 * mmap, four threads with the default 8 MiB stacks, a 128 MiB malloc.  Must
 * hold: the same successes as without the profiler.  Before: the 1 GiB
 * session mapping counted against the limit and all of them failed.
 */
#include <pthread.h>
#include <sys/mman.h>

#include "hostile.h"

static void *thread_burn(void *arg)
{
	burn_cpu(0.05);
	return arg;
}

static void run(void)
{
	pthread_t t[4];
	char *a, *c;
	void *m;
	int ok = 0;

	burn_cpu_deep(0.2, 8);
	a = malloc(64 << 20);
	if (a)
		memset(a, 1, 64 << 20);
	say("malloc 64 MiB: %s\n", a ? "ok" : "failed");
	m = mmap(NULL, 32 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	say("mmap 32 MiB: %s\n", m != MAP_FAILED ? "ok" : "failed");
	for (int i = 0; i < 4; i++)
		ok += pthread_create(&t[i], NULL, thread_burn, NULL) == 0;
	say("threads started: %d of 4\n", ok);
	for (int i = 0; i < ok; i++)
		pthread_join(t[i], NULL);
	c = malloc(128 << 20);
	say("malloc 128 MiB: %s\n", c ? "ok" : "failed");
	free(c);
	if (m != MAP_FAILED)
		munmap(m, 32 << 20);
	free(a);
	burn_cpu(0.1);
}

int main(int argc, char **argv)
{
	struct rlimit rl = {512ull << 20, 512ull << 20};

	if (argc > 1) {
		run();
		return 0;
	}
	if (setrlimit(RLIMIT_AS, &rl))
		die("setrlimit");
	say("RLIMIT_AS 512 MiB; exec\n");
	execl("/proc/self/exe", argv[0], "run", (char *)NULL);
	die("exec");
}
