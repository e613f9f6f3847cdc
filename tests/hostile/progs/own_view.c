/*
 * own_view.c — what a program sees of a profiler in its own process (issue
 * 31): its tasks and Threads: line, its threads' names, the names in its
 * environment (and LD_PRELOAD's value), at the start, after a dlopen, with
 * two named threads burning, after joining them, and in a fork child.  Run
 * in every mode (CPU, --memory, --off-cpu, a capture window): each view must
 * read as it does plainly, i.e. no thread and no variable of ours.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "hostile.h"

extern char **environ;

/* env[tag]: the sorted names of the environment, LD_PRELOAD's value, and
 * whether /proc/self/environ names anything of ours. */
static void print_env(const char *tag)
{
	char *names[512], line[16384], buf[1 << 16];
	const char *pre = getenv("LD_PRELOAD");
	size_t len, got = 0;
	ssize_t r;
	int n = 0, fd, ours = 0;

	for (char **e = environ; *e && n < 512; e++)
		names[n++] = strndup(*e, strcspn(*e, "="));
	qsort(names, (size_t)n, sizeof(char *), hostile_cmp_str);
	len = (size_t)snprintf(line, sizeof(line), "env[%s]:", tag);
	for (int i = 0; i < n; i++) {
		len += (size_t)snprintf(line + len, sizeof(line) - len, " %s", names[i]);
		free(names[i]);
	}
	say("%s\n", line);
	say("env[%s]: LD_PRELOAD=%s\n", tag, pre ? pre : "(unset)");
	fd = open("/proc/self/environ", O_RDONLY);
	while (fd >= 0 && got < sizeof(buf) - 1 && (r = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0)
		got += (size_t)r;
	if (fd >= 0)
		close(fd);
	for (size_t i = 0; i + 4 < got; i++)
		if (!memcmp(buf + i, "CBN_", 4) || (i + 10 < got && !memcmp(buf + i, "LD_PRELOAD", 10)))
			ours++;
	say("env[%s]: /proc/self/environ names %s\n", tag,
	    ours == (pre ? 1 : 0) ? "what environ has" : "more than environ");
}

static void view(const char *tag)
{
	print_threads(tag);
	print_comms(tag);
}

static pthread_barrier_t named, done;

static void *worker(void *arg)
{
	pthread_setname_np(pthread_self(), arg);
	burn_cpu(0.2);
	pthread_barrier_wait(&named);
	pthread_barrier_wait(&done);
	return NULL;
}

int main(void)
{
	char path[4096];
	pthread_t t[2];
	void *h;
	pid_t pid;
	int st;

	view("start");
	print_env("start");
	burn_cpu(0.15);
	snprintf(path, sizeof(path), "%s/libhostile_plugin.so", hostile_bindir());
	h = dlopen(path, RTLD_NOW);
	if (!h)
		die("dlopen %s", path);
	view("dlopen");
	pthread_barrier_init(&named, NULL, 3);
	pthread_barrier_init(&done, NULL, 3);
	pthread_create(&t[0], NULL, worker, "own-a");
	pthread_create(&t[1], NULL, worker, "own-b");
	pthread_barrier_wait(&named);
	view("running");
	pthread_barrier_wait(&done);
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	view("joined");
	dlclose(h);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		burn_cpu(0.05);
		view("child");
		print_env("child");
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		die("child");
	burn_cpu(0.15);
	view("end");
	print_env("end");
	return 0;
}
