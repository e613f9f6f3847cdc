/*
 * cli.h — the launcher's internals shared by main.c (options, commands and the
 * report pipeline), preflight.c (can this program be profiled?), session.c
 * (agent lookup, session directory) and spawn.c (environment, fork/exec,
 * signal forwarding, waiting for the whole process tree).
 */
#ifndef CBN_CLI_H
#define CBN_CLI_H

#include <stddef.h>
#include <stdint.h>

/* Exit statuses of the launcher itself (docs/cli.md). */
#define CLI_EXIT_USAGE 2
#define CLI_EXIT_REFUSED 125
#define CLI_EXIT_NOEXEC 126
#define CLI_EXIT_NOTFOUND 127
#define CLI_EXIT_NOINPUT 66     /* `report`: no readable session */

#define CLI_DEFAULT_FREQ 999
#define CLI_DEFAULT_LIMIT 15

struct cli_opts {
	/* run only */
	long freq;                  /* -F */
	const char *output_dir;     /* -o */
	int depth;                  /* --depth, 0 = agent default */
	int buffer_mb;              /* --buffer-mb, 0 = agent default */
	int no_cuda;
	int verbose;
	const char *signal;         /* --signal, NULL = the agent chooses */
	/* report */
	int inline_view;            /* --inline: enum prof_inline */
	const char *sort;
	int limit;
	const char *report_file;
	int quiet;
	/* outputs */
	const char *json, *trace, *trace_window, *folded, *flamegraph, *pprof;
	uint64_t window_start, window_end;
	/* gate */
	const char *baseline, *markdown, *bench_json;
	const char **fail, **warn;
	size_t nfail, nwarn;
};

/* preflight.c: resolve prog like execvp and check that it can run under the
 * agent.  Returns 0 with the path in resolved, or an exit status (125/126/127)
 * after printing one line saying why. */
int preflight(const char *prog, char *resolved, size_t len);

/* kernel.c: after a run, write DIR/kernel-symbols with the kernel functions
 * its kernel stacks hit (from /proc/kallsyms: this boot's addresses). */
void kernel_symbols_write(const char *dir, int verbose);

/* session.c */
/* The agent libraries: fills agent (absolute path to libcbottleneck.so) and
 * cuda (libcbottleneck_cuda.so next to it, "" when absent).  Returns 0, or
 * CLI_EXIT_REFUSED after saying where it looked. */
int session_find_agent(char *agent, size_t alen, char *cuda, size_t clen);
/* Create the session directory: dir given (-o) or a private mkdtemp one.
 * Writes its absolute path to out.  Returns 0 or CLI_EXIT_REFUSED. */
int session_create(const char *dir, char *out, size_t len);
/* Remove a private session directory and the files in it. */
void session_remove(const char *dir);
/* 1 if dir looks like a cbottleneck session (session.json or *.cbp in it). */
int session_is_session(const char *dir);
/* Cut each session file of a kept session to what its agent filled (they are
 * created sparse at their full length). */
void session_trim(const char *dir);

/* spawn.c */
struct spawn_result {
	int status;                 /* waitpid status of the direct child */
	int exec_errno;             /* exec failed with this errno, 0 when it ran */
	uint64_t start_ns, end_ns;  /* CLOCK_MONOTONIC around the whole tree */
	uint64_t user_ns, sys_ns;   /* CPU of every process reaped (the kernel's count) */
};

struct spawn_env {
	const char *agent, *cuda, *session;
	long freq;
	int depth, buffer_mb, quiet, no_cuda, verbose;
	const char *signal;
};

/* Run argv[0] (already resolved to path) with the agent, forward signals,
 * wait for every descendant.  Returns 0, or CLI_EXIT_REFUSED on a setup
 * failure (message printed). */
int spawn_run(const char *path, char **argv, const struct spawn_env *env,
	      struct spawn_result *res);

uint64_t cli_now_ns(void);

/* cmd_compare.c: `cbottleneck compare [OPTIONS] BASE.json NEW.json`; returns
 * the exit status (CMP_*, compare.h). */
int cmp_main(int argc, char **argv);

/* env.c: the environment summary, collected before the program runs. */
struct session_env;
void env_collect(struct session_env *e);

#endif
