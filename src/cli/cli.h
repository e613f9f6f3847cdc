/*
 * cli.h — the launcher's internals: one file per command (cmd_run.c,
 * cmd_report.c, cmd_compare.c) dispatched by main.c, over options.c (parsing,
 * help), pipeline.c (load and analyse once), outputs.c (report, files, gate),
 * preflight.c (can this program be profiled?), session.c (agent lookup,
 * session directory), kernel.c (the kernel symbols of a run), jitmaps.c (the
 * names of its JIT code) and spawn.c
 * (environment, fork/exec, signal forwarding, waiting for the whole process
 * tree).  Only the commands decide to exit.
 */
#ifndef CBN_CLI_H
#define CBN_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <sys/types.h>

/* Exit statuses of the launcher itself (docs/cli.md). */
#define CLI_EXIT_USAGE 2
#define CLI_EXIT_REFUSED 125
#define CLI_EXIT_NOEXEC 126
#define CLI_EXIT_NOTFOUND 127
#define CLI_EXIT_NOINPUT 66     /* `report`: no readable session */
#define CLI_EXIT_NOMEM 125      /* out of memory loading or analysing a session */

#define CLI_DEFAULT_FREQ 999
#define CLI_DEFAULT_OFFCPU_HZ 100 /* --off-cpu without a rate */

struct op_pattern;

struct cli_opts {
	/* run only */
	long freq;                  /* -F */
	const char *output_dir;     /* -o */
	int depth;                  /* --depth, 0 = agent default */
	int buffer_mb;              /* --buffer-mb, 0 = agent default */
	int no_cuda;
	int py_calls;               /* --calls: count Python calls exactly (2: =builtins) */
	int verbose;
	const char *signal;         /* --signal, NULL = the agent chooses */
	const char *memory;         /* --memory: "host,cuda", "host" or "cuda"; NULL: off */
	uint64_t memory_rate;       /* --memory-rate bytes, 0 = agent default */
	/* capture controls (run only; docs/steps.md) */
	const char *schedule;       /* --schedule "wait=1,warmup=1,active=3,..." (checked) */
	uint64_t delay_ns;          /* --delay, 0 = none */
	uint64_t duration_ns;       /* --duration, 0 = none */
	uint64_t ring_ns;           /* --ring, 0 = none */
	long offcpu_hz;             /* --off-cpu[=HZ]: wall sampler rate, 0 = off */
	int wait_all;               /* --wait-all */
	long attach_pid;            /* --pid: attach to this running process (cmd_attach.c) */
	const char *capture_range;  /* --capture-range: "api" or "nvtx:NAME[@DOMAIN]" (checked;
	                             * cudaProfilerApi is stored as "api") */
	const char *toggle_signal;  /* --toggle-signal SIG, NULL = none */
	/* steps (run and report) */
	const char *step_regex;     /* --step: ranges/marks whose name matches (POSIX ERE) */
	const char *step_func;      /* --step-func: a function entered once per step */
	/* operators (run and report) */
	struct op_pattern *op_patterns;   /* --op-pattern REGEX=NAME, in order (ops.h) */
	size_t nop_patterns;
	const char **alloc_fns;     /* --alloc-fn NAME, repeatable (malloc'd array) */
	size_t nalloc_fns;
	/* report */
	int inline_view;            /* --inline: enum prof_inline */
	int python_view;            /* --python: enum prof_python (run and report; off also
	                             * keeps the agent from reading Python frames) */
	const char *sort;
	int limit;
	const char *report_file;
	int quiet;
	int run_mode;               /* parsed for a run (CLI_MODE_RUN): the report then
	                             * leaves the program's stdout alone unless it is a
	                             * terminal (cli_term) */
	/* outputs */
	const char *json, *trace, *trace_window, *folded, *flamegraph, *pprof;
	int sample_type;            /* --sample-type: enum export_sample, what --folded and
	                             * --flamegraph weigh (0 = cpu) */
	uint64_t window_start, window_end;
	const char *html, *source_root;   /* --html FILE, --source-root DIR */
	const char *ranks;          /* --rank N / --ranks LIST ("0-3,7"): the report covers
	                             * only these ranks' processes; NULL: all */
	/* gate */
	const char *baseline, *markdown, *bench_json;
	/* report: its operands wherever they stood among the options (users type
	 * `report DIR --html x.html`); the first two kept, all counted */
	const char *operand[2];
	int noperands;
	const char **fail, **warn;
	size_t nfail, nwarn;
};

/* preflight.c: resolve prog like execvp and check that it can run under the
 * agent.  Returns 0 with the path in resolved, PREFLIGHT_STATIC with it for a
 * static program (nothing printed), or an exit status (125/126/127) after
 * printing one line saying why. */
int preflight(const char *prog, char *resolved, size_t len);
/* preflight's answer for a statically linked program (or a script whose
 * interpreter is one): LD_PRELOAD cannot load the agent, so the launcher
 * samples it from outside (cmd_run.c, as --pid does) unless an option needs
 * the agent.  preflight_static_name: the file that is static. */
#define PREFLIGHT_STATIC 1000
extern char preflight_static_name[];
/* The refusal of a static program, why (NULL: none) saying which option
 * needs the agent; the caller exits CLI_EXIT_REFUSED. */
void preflight_static_refuse(const char *why);
/* outside.c: a static program sampled from outside.  outside_check: 0, or
 * CLI_EXIT_REFUSED after saying which option needs the agent; outside_arm:
 * env runs the program plainly and records it from a launcher thread into
 * session, between its exec and its reaping. */
struct spawn_env;
int outside_check(const struct cli_opts *o);
void outside_arm(struct spawn_env *env, const struct cli_opts *o, const char *session);

/* kernel.c: after a run, write DIR/kernel-symbols with the kernel functions
 * its kernel stacks hit (from /proc/kallsyms: this boot's addresses). */
void kernel_symbols_write(const char *dir, int verbose);
/* jitmaps.c: after a run (and in `ctl dump`'s copy), DIR/perf-PID.map for
 * each process of the session: its /tmp/perf-PID.map with the jitdump files
 * it mapped converted into more lines (docs/symbols.md); what cannot be read
 * is said in DIR/notes. */
void jitmaps_collect(const char *dir, int verbose);

/* session.c */
/* The agent libraries: fills agent (absolute path to libcbottleneck.so) and
 * cuda (libcbottleneck_cuda.so next to it, "" when absent).  Returns 0, or
 * CLI_EXIT_REFUSED after saying where it looked. */
int session_find_agent(char *agent, size_t alen, char *cuda, size_t clen);
/* The allocation hooks (libcbottleneck_mem.so) next to the agent found above:
 * 0 with its absolute path in out, or CLI_EXIT_REFUSED after one line. */
int session_find_mem(const char *agent, char *out, size_t len);
/* The MPI wrappers (libcbottleneck_mpi.so) next to the agent: 0 with its
 * absolute path in out, -1 when this build has none (not an error). */
int session_find_mpi(const char *agent, char *out, size_t len);
/* Create the session directory: dir given (-o) or a private mkdtemp one.
 * Writes its absolute path to out.  Returns 0 or CLI_EXIT_REFUSED. */
int session_create(const char *dir, char *out, size_t len);
/* Remove a private session directory and the files in it. */
void session_remove(const char *dir);
/* session_signal.c.  From now on SIGINT, SIGTERM, SIGHUP and SIGQUIT
 * remove the private session dir (NULL: none, only SIGPIPE is ignored) and
 * the launcher dies of that signal; those it was started with ignored stay
 * ignored, and SIGPIPE is ignored so that a closed stdout cannot end it
 * before its cleanup. */
void session_protect(const char *dir);
/* The directory session_cleanup_signal removes, for a caller's own handler. */
void session_protect_dir(const char *dir);
/* SIGNAL-SAFE: remove that directory (if any) and die of sig. */
void session_cleanup_signal(int sig);
/* 1 if dir looks like a cbottleneck session (session.json or *.cbp in it). */
int session_is_session(const char *dir);
/* -v: the agents' notes (DIR/notes) on stderr, one line each. */
void session_notes_echo(const char *dir);
/* Cut each session file of a kept session to what its agent filled (they are
 * created sparse at their full length). */
void session_trim(const char *dir);
/* The pids of the launcher's descendants still running (the program has
 * ended: what it left running), at most cap of them into out; returns how
 * many. */
size_t session_running(uint32_t *out, size_t cap);

/* spawn.c */
struct spawn_result {
	int status;                 /* waitpid status of the direct child */
	int exec_errno;             /* exec failed with this errno, 0 when it ran */
	uint64_t start_ns, end_ns;  /* CLOCK_MONOTONIC around the whole tree */
	uint64_t user_ns, sys_ns;   /* CPU of every process reaped (the kernel's count) */
	uint64_t launcher_ns;       /* the launcher's own CPU until the program's end */
};

struct spawn_env {
	const char *agent, *cuda, *session;
	long freq;
	int depth, buffer_mb, quiet, no_cuda, verbose;
	const char *signal;
	const char *mem_lib;        /* libcbottleneck_mem.so, preloaded first; NULL: none */
	const char *mpi_lib;        /* libcbottleneck_mpi.so, preloaded after the agent; NULL: none */
	const char *memory;         /* CBN_MEMORY, NULL: unset */
	uint64_t memory_rate;       /* CBN_MEMORY_RATE, 0: unset */
	/* capture controls: CBN_SCHEDULE, CBN_DELAY_NS, CBN_DURATION_NS,
	 * CBN_CAPTURE_RANGE, CBN_TOGGLE_SIGNAL, CBN_STEP (NULL / 0: unset) */
	const char *schedule, *capture_range, *toggle_signal, *step_regex;
	uint64_t delay_ns, duration_ns;
	uint64_t ring_ns;           /* CBN_RING_NS, 0: unset */
	long offcpu_hz;             /* CBN_OFFCPU, 0: unset */
	int python_off;             /* CBN_PYTHON=0 (--python off) */
	int py_calls;               /* CBN_PYCALLS=1 (--calls) */
	int wait_all;               /* --wait-all: wait for what the program leaves running */
	int plain;                  /* the program gets none of our variables (a static one) */
	/* Called once the program has exec'd (pid), and once it has been
	 * reaped (both in the launcher's thread, every signal blocked). */
	void (*started)(pid_t pid, void *arg);
	void (*ended)(void *arg);
	void *cb_arg;
};

/* Run argv[0] (already resolved to path) with the agent, pass signals on,
 * wait for it (and, with wait_all, for what it leaves running).  Returns 0,
 * or CLI_EXIT_REFUSED on a setup failure (message printed).  Every signal
 * stays blocked on return: spawn_signals_release() lets the launcher's own
 * through again (after it protects its session). */
int spawn_run(const char *path, char **argv, const struct spawn_env *env,
	      struct spawn_result *res);
void spawn_signals_release(void);

/* supervise.c: the launcher beside the program (spawn_run uses them). */
int sup_signals_setup(sigset_t *old, int *sfd);
void sup_child_signals(const sigset_t *old);
void sup_signals_restore(void);
int sup_tty_open(void);
void sup_child_group(int tty);
struct mon;
void sup_wait(pid_t pid, int tty, int sfd, const struct spawn_env *env, struct mon *mon,
	      struct spawn_result *res);

uint64_t cli_now_ns(void);

/* The commands; each returns the exit status (docs/cli.md). */
int cmd_run(int argc, char **argv);          /* cbottleneck [OPTIONS] PROGRAM [ARGS...] */
int cmd_report(int argc, char **argv);       /* cbottleneck report [OPTIONS] DIR */
int cmd_compare(int argc, char **argv);      /* cbottleneck compare ...: CMP_* (compare.h) */
int cmd_ctl(int argc, char **argv);          /* cbottleneck ctl PID COMMAND: 0-3 (cmd_ctl.c) */
int cmd_dump(int argc, char **argv);         /* cbottleneck dump PID (cmd_dump.c) */
/* cmd_attach.c: cbottleneck [OPTIONS] --pid PID, once options are parsed
 * (noperands: the words after them, a usage error). */
int cmd_attach(struct cli_opts *o, int noperands);
/* The first option that needs the agent inside the program, NULL: none. */
const char *attach_opt_needing_agent(const struct cli_opts *o);
/* cmd_report.c: load, analyse and write o's outputs and gate for the
 * session directory dir (what `report` does once its options are parsed);
 * the exit status of `report` (1: a partial session). */
int cli_report_dir(struct cli_opts *o, const char *dir);

/* options.c */
enum cli_mode { CLI_MODE_RUN, CLI_MODE_REPORT };
/* Parse options up to the first non-option.  Returns -1 to go on (optind is
 * the first operand), or an exit status (0 after --help/--version). */
/* CBN_ARGS_ONLY=1: each command checks its arguments as it would and exits
 * 0 (or its usage status) before it reads, writes or runs anything: the doc
 * test runs every example command of the docs through it. */
int cli_args_only(void);
int cli_parse_opts(int argc, char **argv, enum cli_mode mode, struct cli_opts *o);
/* o as a command line without options sets it (what cli_parse_opts starts
 * from). */
void cli_opts_defaults(struct cli_opts *o, enum cli_mode mode);
void cli_opts_free(struct cli_opts *o);
/* "cbottleneck: MESSAGE; see cbottleneck --help" on stderr; returns CLI_EXIT_USAGE. */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* pipeline.c */
struct profile;
struct analysis;
/* prof_load_with with o's --inline view; PROF_LOAD_NOMEM has been reported
 * (one line) when returned: the command exits CLI_EXIT_NOMEM. */
int cli_load(const char *dir, const struct cli_opts *o, struct profile **p, char *err,
	     size_t errlen);
/* analysis_run once, with o's --step/--step-func; 0, or CLI_EXIT_NOMEM after
 * saying so. */
int cli_analyse(const struct profile *p, const struct cli_opts *o, struct analysis *a);

/* outputs.c */
/* The text report and the files asked for; 1 if any failed (said on stderr),
 * CLI_EXIT_USAGE (nothing written) when --sample-type asks for memory data the
 * run does not have. */
int cli_write_outputs(const struct analysis *a, const struct cli_opts *o, const char *json_path);
/* Before the program runs (or a session is read): every output file can be
 * written, no two options write one file, the baseline is a valid report.
 * 0, or an exit status after one line saying what is wrong. */
int cli_outputs_preflight(const struct cli_opts *o);
/* The gate's table after the report; label names the current run.  CMP_*. */
int cli_gate(const struct cli_opts *o, const struct analysis *a, const char *label);
const char *cli_gate_word(int st);
/* Where the report goes without --report FILE, and the gate's table: stdout
 * for `report`, `--report -` and a run whose stdout is a terminal; stderr for
 * a run whose stdout is a file or pipe (the program's own output: time(1)
 * writes to stderr for the same reason). */
FILE *cli_term(const struct cli_opts *o);

/* env.c: the environment summary, collected before the program runs. */
struct session_env;
void env_collect(struct session_env *e);

#endif
