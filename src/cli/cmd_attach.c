/*
 * cmd_attach.c — `cbottleneck [OPTIONS] --pid PID`: profile a process that
 * is already running, from outside (src/attach/attach_record.c), until
 * Ctrl-C (SIGINT; SIGTERM and SIGHUP too), the process's exit or
 * --duration (a second signal, or one during the report, ends it at once
 * and removes its private session directory); then the same report, files and gate as a launched run, from
 * a session in the same format, marked as attached (session.json's
 * attached_pid: no exit status, start-up not seen).  Exit statuses
 * (docs/attach.md): those of a run's report and gate, 2 usage, 3 no such
 * process (or it ended while attaching), 125 refused or failed.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach.h"
#include "cli.h"
#include "load.h"

#define ATTACH_EXIT_NOPROC 3
#define ATTACH_FILE_MB 1024          /* the session file at most, as the agent's default */

static volatile int attach_stop;
static volatile sig_atomic_t attach_detached;

/* While attached, the first signal stops the recording; a second one, or
 * any once detached (while the report is made), removes the private session
 * directory and ends the launcher with that signal (session_signal.c). */
static void attach_on_signal(int sig)
{
	if (attach_stop || attach_detached || sig == SIGQUIT)
		session_cleanup_signal(sig);
	attach_stop = 1;
}

/* SIGINT, SIGTERM, SIGHUP stop the recording, SIGQUIT ends it at once.  No
 * SA_RESTART: the wait returns at once.  Installed before the session
 * directory is made, so that no signal finds it unprotected; taken over by
 * session_protect once detached. */
static void attach_signals(void)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = attach_on_signal;
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

/* The first option that needs the agent inside the program (not for --pid,
 * nor for a static program sampled from outside), NULL when none. */
const char *attach_opt_needing_agent(const struct cli_opts *o)
{
	return o->memory ? "--memory" : o->signal ? "--signal" :
	       o->schedule ? "--schedule" : o->capture_range ? "--capture-range" :
	       o->toggle_signal ? "--toggle-signal" : o->ring_ns ? "--ring" :
	       o->delay_ns ? "--delay" : o->wait_all ? "--wait-all" :
	       o->py_calls ? "--calls" :
	       o->offcpu_hz && !o->step_func ? "--off-cpu" : NULL;
}

/* The options that need the agent inside the program: not for --pid. */
static int attach_opts_check(const struct cli_opts *o)
{
	const char *bad = attach_opt_needing_agent(o);

	if (bad)
		return cli_usage_error("%s cannot be used with --pid: attaching records the CPU "
				       "samples only (docs/attach.md)", bad);
	return -1;
}

/* The process's argv from /proc/PID/cmdline (NUL-separated) into buf; a
 * NULL-terminated array of up to max - 1 pointers into it. */
static void attach_argv(pid_t pid, char *buf, size_t len, char **argv, size_t max)
{
	char path[64];
	size_t n = 0, k = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	f = fopen(path, "re");
	if (f) {
		n = fread(buf, 1, len - 1, f);
		fclose(f);
	}
	buf[n] = 0;
	for (size_t i = 0; i < n && k + 1 < max; i += strlen(buf + i) + 1)
		argv[k++] = buf + i;
	argv[k] = NULL;
}

static int attach_refused(int err, const char *why)
{
	fprintf(stderr, "cbottleneck: --pid: %s\n", why);
	if (err == -ESRCH)
		return ATTACH_EXIT_NOPROC;
	return err == -ENOMEM ? CLI_EXIT_NOMEM : CLI_EXIT_REFUSED;
}

/* Record into session; the launcher's exit status so far (0 to report). */
static int attach_run(struct cli_opts *o, pid_t pid, const char *session)
{
	struct attach_opts ao = {0};
	struct attach_result res;
	struct session_meta meta;
	char why[256], cmd[4096], *argv[64];
	int ret;

	ao.period_ns = 1000000000ull / (uint64_t)o->freq;
	ao.duration_ns = o->duration_ns;
	ao.depth = o->depth ? o->depth : 128;
	ao.file_bytes = (uint64_t)(o->buffer_mb ? o->buffer_mb : ATTACH_FILE_MB) << 20;
	ao.stop = &attach_stop;
	attach_argv(pid, cmd, sizeof(cmd), argv, sizeof(argv) / sizeof(argv[0]));
	if (!o->quiet)
		fprintf(stderr, "cbottleneck: attaching to process %d (%s): sampling its threads "
			"from outside; Ctrl-C to stop\n", (int)pid, argv[0] ? argv[0] : "?");
	ret = attach_record(pid, session, &ao, &res, why, sizeof(why));
	attach_detached = 1;
	session_protect(o->output_dir ? NULL : session);
	if (ret < 0)
		return attach_refused(ret, why);
	if (!o->quiet)
		fprintf(stderr, "cbottleneck: %s after %.1f s: %llu samples of %u threads%s\n",
			res.exited ? "process exited" : "detached",
			(double)(res.end_ns - res.start_ns) / 1e9, (unsigned long long)res.samples,
			res.threads, res.unread ? " (some threads refused their perf event)" : "");
	memset(&meta, 0, sizeof(meta));
	env_collect(&meta.env);
	meta.argv = argv;
	meta.exit_status = -1;
	meta.start_mono_ns = res.start_ns;
	meta.end_mono_ns = res.end_ns;
	meta.frequency_hz = (double)o->freq;
	meta.attached_pid = (uint32_t)pid;
	if (session_meta_write(session, &meta) < 0 && o->verbose)
		fprintf(stderr, "cbottleneck: cannot write %s/session.json\n", session);
	jitmaps_collect(session, o->verbose);
	kernel_symbols_write(session, o->verbose);
	if (o->output_dir)
		session_trim(session);
	return 0;
}

int cmd_attach(struct cli_opts *o, int noperands)
{
	char session[PATH_MAX], why[256];
	pid_t pid = (pid_t)o->attach_pid;
	int ret;

	if (noperands > 0)
		return cli_usage_error("--pid %ld attaches to a running process: no PROGRAM with it",
				       o->attach_pid);
	ret = attach_opts_check(o);
	if (ret >= 0 || cli_args_only())
		return ret >= 0 ? ret : 0;
	ret = cli_outputs_preflight(o);
	if (ret)
		return ret;
	ret = attach_proc_check(pid, why, sizeof(why));
	if (ret < 0)
		return attach_refused(ret, why);
	attach_signals();
	ret = session_create(o->output_dir, session, sizeof(session));
	if (ret)
		return ret;
	if (!o->output_dir)
		session_protect_dir(session);
	ret = attach_run(o, pid, session);
	if (ret == 0) {
		/* No program output to keep apart: the report goes to stdout. */
		o->run_mode = 0;
		ret = cli_report_dir(o, session);
	}
	if (!o->output_dir)
		session_remove(session);
	else if (!o->quiet)
		fprintf(stderr, "cbottleneck: session kept in %s (cbottleneck report %s)\n",
			o->output_dir, o->output_dir);
	return ret;
}
