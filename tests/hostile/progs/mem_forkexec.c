/*
 * mem_forkexec.c — fork and exec while other threads allocate: two threads
 * churn malloc/free/realloc and anonymous mmap/munmap; the main thread forks
 * children that allocate and free in the child, then either exit or exec the
 * helper (which allocates in its new image).  Must hold: every child's
 * status and output as without the profiler, no deadlock in a child forked
 * while another thread was inside malloc or the hooks.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hostile.h"

static _Atomic int stop;

static void *churn(void *arg)
{
	long n = 0;
	(void)arg;
	while (!atomic_load(&stop)) {
		char *p = malloc((size_t)(32 + n % 2000));
		char *m;
		if (!p)
			die("malloc");
		p = realloc(p, (size_t)(64 + n % 5000));
		if (!p)
			die("realloc");
		memset(p, 3, 32);
		free(p);
		if (n % 64 == 0) {
			m = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (m == MAP_FAILED)
				die("mmap");
			m[0] = 1;
			munmap(m, 65536);
		}
		n++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[2];
	int ok_exit = 0, ok_exec = 0;
	char helper[4096];
	const char *slash = strrchr(argv[0], '/');

	(void)argc;
	snprintf(helper, sizeof(helper), "%.*shostile_helper", slash ? (int)(slash - argv[0] + 1) : 0,
		 argv[0]);
	print_views("start");
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, churn, NULL))
			die("pthread_create");
	for (int i = 0; i < 40; i++) {
		pid_t pid = fork();
		int st;

		if (pid < 0)
			die("fork");
		if (pid == 0) {
			long sum = 0;
			for (int k = 0; k < 2000; k++) {
				char *p = malloc((size_t)(100 + k));
				if (!p)
					_exit(3);
				p[0] = (char)k;
				sum += p[0];
				free(p);
			}
			if (i % 2)
				execl(helper, helper, "exit", "0", (char *)NULL);
			_exit(sum == 0 ? 4 : 0);
		}
		if (waitpid(pid, &st, 0) != pid)
			die("waitpid");
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
			{ if (i % 2) ok_exec++; else ok_exit++; }
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	say("children: exited_ok=%d exec_ok=%d of 20 each\n", ok_exit, ok_exec);
	print_views("end");
	return 0;
}
