/*
 * spawn.c — running the target: the child's environment (LD_PRELOAD and the
 * CBN_* contract of cbn_format.h, CUDA/NVTX injection), fork + exec with a
 * close-on-exec pipe that carries an exec failure's errno back; the program
 * then runs in a process group of its own beside the launcher
 * (supervise.c), which is its child subreaper (daemonized grandchildren are
 * reparented to us: --wait-all waits for them).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "monitor.h"
#include "cbn_format.h"
#include "../format/cbn_time.h"

uint64_t cli_now_ns(void)
{
	return cbn_clock_ns(CLOCK_MONOTONIC);
}

/* In the child, before exec (the launcher is single-threaded, so setenv's
 * malloc is safe after fork). */
static void child_env(const struct spawn_env *e)
{
	const char *old = getenv("LD_PRELOAD");
	char num[32];
	size_t n;
	char *v;

	/* The allocation hooks first, so that their dlsym(RTLD_NEXT) finds the
	 * user's preloaded allocator (jemalloc, tcmalloc) or else libc; then the
	 * agent; then the MPI wrappers (they need the agent; before the user's
	 * own preloads, so a PMPI tool of theirs sees the calls after ours);
	 * then the user's own preloads. */
	n = (e->mem_lib ? strlen(e->mem_lib) + 1 : 0) + strlen(e->agent) +
	    (e->mpi_lib ? strlen(e->mpi_lib) + 1 : 0) + (old && *old ? strlen(old) + 1 : 0) + 1;
	v = malloc(n);
	if (v) {
		snprintf(v, n, "%s%s%s%s%s%s%s", e->mem_lib ? e->mem_lib : "",
			 e->mem_lib ? ":" : "", e->agent, e->mpi_lib ? ":" : "",
			 e->mpi_lib ? e->mpi_lib : "", old && *old ? ":" : "", old && *old ? old : "");
		setenv("LD_PRELOAD", v, 1);
	}
	if (e->memory)
		setenv(CBN_ENV_MEMORY, e->memory, 1);
	else
		unsetenv(CBN_ENV_MEMORY);
	if (e->memory_rate) {
		snprintf(num, sizeof(num), "%llu", (unsigned long long)e->memory_rate);
		setenv(CBN_ENV_MEMORY_RATE, num, 1);
	} else {
		unsetenv(CBN_ENV_MEMORY_RATE);
	}
	/* Capture controls: set as asked, and never inherited from the
	 * launcher's own environment. */
	if (e->schedule)
		setenv(CBN_ENV_SCHEDULE, e->schedule, 1);
	else
		unsetenv(CBN_ENV_SCHEDULE);
	if (e->capture_range)
		setenv(CBN_ENV_CAPTURE_RANGE, e->capture_range, 1);
	else
		unsetenv(CBN_ENV_CAPTURE_RANGE);
	if (e->toggle_signal)
		setenv(CBN_ENV_TOGGLE_SIGNAL, e->toggle_signal, 1);
	else
		unsetenv(CBN_ENV_TOGGLE_SIGNAL);
	if (e->step_regex)
		setenv(CBN_ENV_STEP, e->step_regex, 1);
	else
		unsetenv(CBN_ENV_STEP);
	snprintf(num, sizeof(num), "%llu", (unsigned long long)e->delay_ns);
	if (e->delay_ns)
		setenv(CBN_ENV_DELAY, num, 1);
	else
		unsetenv(CBN_ENV_DELAY);
	snprintf(num, sizeof(num), "%llu", (unsigned long long)e->duration_ns);
	if (e->duration_ns)
		setenv(CBN_ENV_DURATION, num, 1);
	else
		unsetenv(CBN_ENV_DURATION);
	snprintf(num, sizeof(num), "%llu", (unsigned long long)e->ring_ns);
	if (e->ring_ns)
		setenv(CBN_ENV_RING, num, 1);
	else
		unsetenv(CBN_ENV_RING);
	snprintf(num, sizeof(num), "%ld", e->offcpu_hz);
	if (e->offcpu_hz > 0)
		setenv(CBN_ENV_OFFCPU, num, 1);
	else
		unsetenv(CBN_ENV_OFFCPU);
	if (e->python_off)
		setenv(CBN_ENV_PYTHON, "0", 1);
	else
		unsetenv(CBN_ENV_PYTHON);
	if (e->py_calls)
		setenv(CBN_ENV_PYCALLS, e->py_calls == 2 ? "2" : "1", 1);
	else
		unsetenv(CBN_ENV_PYCALLS);
	setenv(CBN_ENV_SESSION, e->session, 1);
	snprintf(num, sizeof(num), "%ld", e->freq);
	setenv(CBN_ENV_FREQ, num, 1);
	if (e->depth > 0) {
		snprintf(num, sizeof(num), "%d", e->depth);
		setenv(CBN_ENV_DEPTH, num, 1);
	}
	if (e->buffer_mb > 0) {
		snprintf(num, sizeof(num), "%d", e->buffer_mb);
		setenv(CBN_ENV_FILE_MB, num, 1);
	}
	if (e->quiet)
		setenv(CBN_ENV_QUIET, "1", 1);
	if (e->signal)
		setenv(CBN_ENV_SIGNAL, e->signal, 1);
	/* An exec counter inherited from an outer session would misnumber ours. */
	unsetenv(CBN_ENV_EXEC_SEQ);
	if (e->no_cuda) {
		setenv(CBN_ENV_CUDA, "0", 1);
		return;
	}
	/* The user's own injection libraries win: keep theirs. */
	if (e->cuda && *e->cuda && !getenv("CUDA_INJECTION64_PATH"))
		setenv("CUDA_INJECTION64_PATH", e->cuda, 1);
	if (!getenv("NVTX_INJECTION64_PATH"))
		setenv("NVTX_INJECTION64_PATH", e->agent, 1);
}

static void say_env(const struct spawn_env *e)
{
	const char *c = getenv("CUDA_INJECTION64_PATH"), *n = getenv("NVTX_INJECTION64_PATH");

	fprintf(stderr, "cbottleneck: session %s, agent %s, %ld Hz\n", e->session, e->agent,
		e->freq);
	if (e->mem_lib)
		fprintf(stderr, "cbottleneck: --memory=%s, allocation hooks %s\n", e->memory,
			e->mem_lib);
	if (e->mpi_lib)
		fprintf(stderr, "cbottleneck: MPI wrappers %s\n", e->mpi_lib);
	if (e->no_cuda)
		fprintf(stderr, "cbottleneck: --no-cuda: CUDA and NVTX are not traced\n");
	if (!e->no_cuda && c && *c)
		fprintf(stderr, "cbottleneck: keeping your CUDA_INJECTION64_PATH=%s, so CUDA "
			"activity is not recorded by cbottleneck\n", c);
	else if (!e->no_cuda && (!e->cuda || !*e->cuda))
		fprintf(stderr, "cbottleneck: no libcbottleneck_cuda.so next to the agent: CUDA "
			"activity is not recorded\n");
	if (!e->no_cuda && n && *n)
		fprintf(stderr, "cbottleneck: keeping your NVTX_INJECTION64_PATH=%s\n", n);
}

/* A file without "#!" that exec refuses (ENOEXEC) runs as execvp and the
 * shell run it: /bin/sh FILE ARGS (NULL when memory is short). */
static char **shell_argv(const char *path, char **argv)
{
	char **sh_argv;
	size_t argc = 0;

	while (argv[argc])
		argc++;
	sh_argv = calloc(argc + 2, sizeof(*sh_argv));
	if (sh_argv) {
		sh_argv[0] = "/bin/sh";
		sh_argv[1] = (char *)path;
		for (size_t i = 1; i < argc; i++)
			sh_argv[i + 1] = argv[i];
	}
	return sh_argv;
}

static sigset_t spawn_old_mask;

/* After spawn_run: the launcher's own signal mask and dispositions again. */
void spawn_signals_release(void)
{
	sup_signals_restore();
	sigprocmask(SIG_SETMASK, &spawn_old_mask, NULL);
}

int spawn_run(const char *path, char **argv, const struct spawn_env *env,
	      struct spawn_result *res)
{
	struct mon_opts mo = {0};
	struct mon *mon = NULL;
	sigset_t old;
	int sfd = -1, cork[2] = {-1, -1}, ret = 0, tty = -1, err;
	char **sh_argv = NULL;
	pid_t pid;

	memset(res, 0, sizeof(*res));
	sigprocmask(SIG_SETMASK, NULL, &old);
	/* Built before the fork: the child only execs. */
	sh_argv = shell_argv(path, argv);
	if (env->verbose)
		say_env(env);
	err = sup_signals_setup(&old, &sfd);
	if (err || pipe2(cork, O_CLOEXEC) < 0) {
		fprintf(stderr, "cbottleneck: cannot set up signals: %s\n",
			strerror(err ? -err : errno));
		ret = CLI_EXIT_REFUSED;
		goto out;
	}
	/* Orphaned descendants (daemons, double forks) become our children, so we
	 * can wait for them with --wait-all and read their complete files. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0 && env->verbose)
		fprintf(stderr, "cbottleneck: PR_SET_CHILD_SUBREAPER failed: %s\n", strerror(errno));
	tty = sup_tty_open();
	mo.session = env->session;
	mo.memory = env->mem_lib != NULL;
	mo.offcpu_hz = env->offcpu_hz;
	mo.controlled = env->schedule || env->capture_range || env->toggle_signal ||
			env->delay_ns || env->duration_ns;
	mo.delay_ns = env->delay_ns;
	mo.duration_ns = env->duration_ns;
	mo.toggle = env->toggle_signal != NULL;
	mo.range_api = env->capture_range && !strcmp(env->capture_range, "api");
	{
		const char *c = getenv(CBN_ENV_CTL);

		mo.ctl = c && !strcmp(c, "0") ? 0 : mo.controlled || (c && !strcmp(c, "1"));
	}
	/* Before the program starts: it finds every file the run makes. */
	mon = mon_start(&mo, env->verbose);

	fflush(NULL);
	res->start_ns = cli_now_ns();
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "cbottleneck: cannot fork: %s\n", strerror(errno));
		ret = CLI_EXIT_REFUSED;
		goto out;
	}
	if (pid == 0) {
		int e;
		close(cork[0]);
		close(sfd);
		sup_child_group(tty);
		sup_child_signals(&old);
		if (!env->plain)
			child_env(env);
		execv(path, argv);
		if (errno == ENOEXEC && sh_argv)
			execv(sh_argv[0], sh_argv);
		e = errno;
		if (write(cork[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	setpgid(pid, pid);
	if (tty >= 0)
		tcsetpgrp(tty, pid);
	close(cork[1]);
	cork[1] = -1;
	{
		int e = 0;
		ssize_t n;
		while ((n = read(cork[0], &e, sizeof(e))) < 0 && errno == EINTR)
			;
		if (n == (ssize_t)sizeof(e))
			res->exec_errno = e;
	}
	if (!res->exec_errno && env->started)
		env->started(pid, env->cb_arg);

	sup_wait(pid, tty, sfd, env, mon, res);
	res->end_ns = cli_now_ns();
	if (!res->exec_errno && env->ended)
		env->ended(env->cb_arg);
out:
	mon_stop(mon);
	{
		/* The launcher's CPU up to here (its monitor threads joined): the
		 * profiler's cost outside the program, in the overhead line. */
		struct rusage ru;

		if (getrusage(RUSAGE_SELF, &ru) == 0)
			res->launcher_ns = cbn_tv_ns(&ru.ru_utime) + cbn_tv_ns(&ru.ru_stime);
	}
	free(sh_argv);
	if (tty >= 0)
		close(tty);
	if (sfd >= 0)
		close(sfd);
	if (cork[0] >= 0)
		close(cork[0]);
	if (cork[1] >= 0)
		close(cork[1]);
	/* Still blocked: spawn_signals_release, once the launcher protects
	 * its session (a signal now would be the launcher's own). */
	spawn_old_mask = old;
	return ret;
}
