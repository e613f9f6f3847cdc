/*
 * outside.c — a statically linked program (Go's default without cgo, a
 * static C or Rust build) cannot load the agent: no dynamic loader runs, so
 * LD_PRELOAD does nothing.  cmd_run then starts it plainly, with none of our
 * variables, and samples it from outside as `--pid` does
 * (src/attach/attach_record.c), from a thread of the launcher started the
 * moment the exec has succeeded and ended once the program is reaped: the
 * program's output, signals and exit status are handled as in any run, the
 * report is a run's (its exit status included); its first moments, before
 * the first thread's perf event is open, are not sampled.  The options that
 * need the agent inside the program refuse such a program, saying which.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "attach.h"
#include "cli.h"

#define OUTSIDE_FILE_MB 1024 /* the session file at most, as the agent's default */

static struct {
	struct attach_opts ao;
	struct attach_result res;
	const char *session;
	pid_t pid;
	pthread_t th;
	int started, ret, quiet;
	volatile int stop;
	char why[256];
} out;

static void *outside_main(void *arg)
{
	(void)arg;
	out.ret = attach_record(out.pid, out.session, &out.ao, &out.res, out.why, sizeof(out.why));
	return NULL;
}

/* The exec succeeded: follow the program's threads from now on. */
static void outside_started(pid_t pid, void *arg)
{
	(void)arg;
	out.pid = pid;
	out.started = pthread_create(&out.th, NULL, outside_main, NULL) == 0;
	if (!out.started)
		fprintf(stderr, "cbottleneck: cannot start sampling %d from outside: %s\n", (int)pid,
			strerror(errno));
}

/* Reaped: the recording ends (its process is gone; the flag makes sure). */
static void outside_ended(void *arg)
{
	(void)arg;
	if (!out.started)
		return;
	out.stop = 1;
	pthread_join(out.th, NULL);
	out.started = 0;
	if (out.ret < 0 && out.ret != -ESRCH)
		fprintf(stderr, "cbottleneck: sampling from outside failed: %s\n", out.why);
	else if (out.ret == -ESRCH && !out.quiet)
		fprintf(stderr, "cbottleneck: the program ended before it could be sampled\n");
}

int outside_check(const struct cli_opts *o)
{
	const char *bad = attach_opt_needing_agent(o);
	char why[128];

	if (!bad)
		return 0;
	snprintf(why, sizeof(why), "%s needs", bad);
	preflight_static_refuse(why);
	return CLI_EXIT_REFUSED;
}

void outside_arm(struct spawn_env *env, const struct cli_opts *o, const char *session)
{
	memset(&out, 0, sizeof(out));
	out.ao.period_ns = 1000000000ull / (uint64_t)o->freq;
	out.ao.duration_ns = o->duration_ns;
	out.ao.depth = o->depth ? o->depth : 128;
	out.ao.file_bytes = (uint64_t)(o->buffer_mb ? o->buffer_mb : OUTSIDE_FILE_MB) << 20;
	out.ao.stop = &out.stop;
	out.session = session;
	out.quiet = o->quiet;
	env->plain = 1;
	env->started = outside_started;
	env->ended = outside_ended;
	env->cb_arg = NULL;
	if (!o->quiet)
		fprintf(stderr, "cbottleneck: %s is statically linked, so LD_PRELOAD cannot load the "
			"agent: it is sampled from outside instead (CPU samples only, as with "
			"--pid; its first moments are not seen)\n", preflight_static_name);
}
