/*
 * seccomp_strict.c — a thread enters seccomp strict mode (read, write, exit
 * and sigreturn only: any other system call kills the process with SIGKILL)
 * and burns CPU there, then leaves with the raw exit system call.  MODE main:
 * the main thread (the process ends with it); worker: a second thread,
 * joined by main, which then exits normally.  Must hold: the same output and
 * status.  Before: killed by SIGKILL at the first sample.
 */
#include <linux/seccomp.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "hostile.h"

static uint64_t strict_burn(void)
{
	/* No clock in strict mode (clock_gettime of a CPU clock is a system
	 * call): a fixed amount of work, about 0.3 s. */
	uint64_t x = 1;

	for (int i = 0; i < 8000; i++)
		x = burn_chunk(x);
	return x;
}

static void *strict_thread(void *arg)
{
	static const char msg[] = "in strict mode: done\n";
	uint64_t x;

	(void)arg;
	fflush(stdout);
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT))
		die("prctl(PR_SET_SECCOMP)");
	x = strict_burn();
	if (write(1, msg, sizeof(msg) - 1) != (ssize_t)sizeof(msg) - 1 || !x)
		syscall(SYS_exit, 2);
	syscall(SYS_exit, 0);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "main";
	pthread_t t;

	say("mode %s\n", mode);
	burn_cpu(0.1);
	if (!strcmp(mode, "main"))
		strict_thread(NULL);
	if (pthread_create(&t, NULL, strict_thread, NULL))
		die("pthread_create");
	pthread_join(t, NULL);
	say("main: joined\n");
	burn_cpu(0.1);
	return 0;
}
