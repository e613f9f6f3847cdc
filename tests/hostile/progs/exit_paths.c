/*
 * exit_paths.c — the ways a program's last thread can leave, while the
 * profiler's helper threads (off-CPU sampler, memory counters, control
 * socket, capture timer) are running.  MODE:
 *   pthread_exit   main calls pthread_exit, the worker returns last
 *                  (glibc then calls exit(0): the atexit handler runs and
 *                  an unflushed stdout line comes out)
 *   sysexit_main   main leaves with the raw exit system call (code 3), the
 *                  worker returns last: the process's status is the last
 *                  thread's, 0
 *   sysexit_last   main calls pthread_exit, the worker leaves with the raw
 *                  exit system call, code 5: status 5, no atexit
 *   signal         main calls pthread_exit, the worker waits in pause() and
 *                  a child process sends the process SIGTERM: status 143
 * The worker waits until the main thread is gone (a zombie in
 * /proc/self/stat) before it leaves, so the order is the same in every run.
 * Must hold: the same output and status as without the profiler, and no
 * hang (the watchdog).  Before: sysexit_main never ended under --off-cpu,
 * --memory or --delay (the helper thread kept the process alive with every
 * signal blocked).
 */
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "hostile.h"

static const char *mode;

static void at_exit(void)
{
	say("atexit: ran\n");
}

/* Until the main thread has left (its state in /proc/self/stat is Z). */
static void wait_main_gone(void)
{
	char buf[512], *p;

	for (;;) {
		FILE *f = fopen("/proc/self/stat", "r");
		size_t n;

		if (!f)
			die("fopen /proc/self/stat");
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = 0;
		p = strrchr(buf, ')');
		if (p && p[1] == ' ' && p[2] == 'Z')
			return;
		burn_cpu(0.002);
	}
}

static void *worker(void *arg)
{
	(void)arg;
	burn_cpu_deep(0.25, 8);
	wait_main_gone();
	if (!strcmp(mode, "sysexit_last")) {
		say("worker: raw exit 5\n");
		syscall(SYS_exit, 5);
	}
	if (!strcmp(mode, "signal")) {
		pid_t p = fork();

		if (p < 0)
			die("fork");
		if (p == 0) {
			burn_cpu(0.05);
			kill(getppid(), SIGTERM);
			_exit(0);
		}
		say("worker: waiting for SIGTERM\n");
		for (;;)
			pause();
	}
	say("worker: returns\n");
	/* glibc's exit(0) after the last thread flushes this. */
	printf("worker: unflushed line\n");
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	mode = argc > 1 ? argv[1] : "pthread_exit";
	atexit(at_exit);
	say("main: %s\n", mode);
	if (pthread_create(&t, NULL, worker, NULL))
		die("pthread_create");
	burn_cpu(0.1);
	if (!strcmp(mode, "sysexit_main")) {
		say("main: raw exit 3\n");
		syscall(SYS_exit, 3);
	}
	say("main: pthread_exit\n");
	pthread_exit(NULL);
}
