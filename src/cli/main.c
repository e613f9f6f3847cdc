/*
 * main.c — the cbottleneck command: option parsing for `cbottleneck [OPTIONS]
 * PROGRAM [ARGS...]` and `cbottleneck report [OPTIONS] DIR`, dispatch of
 * `compare`, and the pipeline after a run: session.json, prof_load, the text
 * report, the output files, and the regression gate.  Exit statuses: cli.h and
 * docs/cli.md.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis.h"
#include "compare.h"
#include "gate_run.h"
#include "load.h"
#include "cli.h"
#include "cbn_signal.h"
#include "export.h"
#include "report.h"

#ifndef CBN_VERSION
#define CBN_VERSION "0.1.0"
#endif

enum mode { MODE_RUN, MODE_REPORT };

enum {
	OPT_SORT = 256, OPT_LIMIT, OPT_REPORT, OPT_VERSION, OPT_DEPTH, OPT_BUFFER, OPT_NO_CUDA,
	OPT_JSON, OPT_TRACE, OPT_WINDOW, OPT_FOLDED, OPT_FLAME, OPT_PPROF, OPT_BASELINE,
	OPT_FAIL, OPT_WARN, OPT_MARKDOWN, OPT_BENCH, OPT_SIGNAL, OPT_INLINE,
};

static const struct option long_opts[] = {
	{"frequency", required_argument, NULL, 'F'},
	{"output", required_argument, NULL, 'o'},
	{"quiet", no_argument, NULL, 'q'},
	{"verbose", no_argument, NULL, 'v'},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, OPT_VERSION},
	{"sort", required_argument, NULL, OPT_SORT},
	{"limit", required_argument, NULL, OPT_LIMIT},
	{"report", required_argument, NULL, OPT_REPORT},
	{"depth", required_argument, NULL, OPT_DEPTH},
	{"buffer-mb", required_argument, NULL, OPT_BUFFER},
	{"no-cuda", no_argument, NULL, OPT_NO_CUDA},
	{"signal", required_argument, NULL, OPT_SIGNAL},
	{"inline", required_argument, NULL, OPT_INLINE},
	{"json", required_argument, NULL, OPT_JSON},
	{"trace", required_argument, NULL, OPT_TRACE},
	{"trace-window", required_argument, NULL, OPT_WINDOW},
	{"folded", required_argument, NULL, OPT_FOLDED},
	{"flamegraph", required_argument, NULL, OPT_FLAME},
	{"pprof", required_argument, NULL, OPT_PPROF},
	{"baseline", required_argument, NULL, OPT_BASELINE},
	{"fail", required_argument, NULL, OPT_FAIL},
	{"warn", required_argument, NULL, OPT_WARN},
	{"markdown", required_argument, NULL, OPT_MARKDOWN},
	{"bench-json", required_argument, NULL, OPT_BENCH},
	{NULL, 0, NULL, 0},
};

static void usage(FILE *f)
{
	fputs("usage: cbottleneck [OPTIONS] [--] PROGRAM [ARGS...]\n"
	      "       cbottleneck report [OPTIONS] DIR\n"
	      "       cbottleneck compare [OPTIONS] BASE.json NEW.json   (see compare --help)\n"
	      "\n"
	      "Runs PROGRAM with a sampling agent preloaded, waits for it and every process it\n"
	      "starts, then prints where the CPU (and GPU) time went.  PROGRAM's own options\n"
	      "pass through untouched: options after PROGRAM belong to it.\n"
	      "\n"
	      "Recording (run only):\n"
	      "  -F, --frequency HZ   samples per second of CPU time per thread (1-10000, default 999)\n"
	      "  -o, --output DIR     keep the raw session in DIR (read it again with `report DIR`);\n"
	      "                       default: a private temporary directory, removed afterwards\n"
	      "      --depth N        at most N frames per stack (1-256)\n"
	      "      --buffer-mb N    size of each process's session file in MiB\n"
	      "      --no-cuda        do not trace CUDA or NVTX\n"
	      "      --signal SIG     sample with SIG (SIGPROF, SIGRTMAX-3, 40...); default: a\n"
	      "                       real-time signal nobody handles\n"
	      "  -v, --verbose        say where the session and the agent are\n"
	      "Report:\n"
	      "      --sort KEY       CPU table order: tottime (default), cumtime, ncalls, name,\n"
	      "                       filename; CUDA tables: cuda_time_total, cpu_time_total,\n"
	      "                       self_cuda_time_total, self_cpu_time_total, count\n"
	      "                       (device_* spellings of the cuda_* keys too)\n"
	      "      --limit N        rows per table (default 15)\n"
	      "      --inline VIEW    expand (default: inlined functions are rows, marked) or\n"
	      "                       fold (their time stays with the function they were inlined into)\n"
	      "      --report FILE    write the text report to FILE instead of stdout\n"
	      "  -q, --quiet          tables only: no banner or hints; the agent stays silent\n"
	      "Output files:\n"
	      "      --json FILE      the JSON report (input of `compare`)\n"
	      "      --trace FILE     Chrome/Perfetto trace (FILE.gz compresses)\n"
	      "      --trace-window START:END  only this part of the run (e.g. 1s:2.5s, 200ms:)\n"
	      "      --folded FILE    folded stacks (flamegraph.pl, speedscope)\n"
	      "      --flamegraph FILE.svg  interactive flame graph\n"
	      "      --pprof FILE     pprof profile.proto (gzip)\n"
	      "Regression gate (compare this run with a baseline JSON report):\n"
	      "      --baseline BASE.json   baseline to compare with\n"
	      "      --fail EXPR      fail (exit 1) when EXPR regresses, e.g. 'func[heavy].self:+10%'\n"
	      "      --warn EXPR      report EXPR without failing (both repeatable)\n"
	      "      --markdown FILE  Markdown summary of the comparison\n"
	      "      --bench-json FILE  benchmark-action JSON of the measures\n"
	      "Other:\n"
	      "  -h, --help           this text\n"
	      "      --version        print the version\n"
	      "\n"
	      "Exit status of a run: PROGRAM's own exit status; 128+N when it was killed by\n"
	      "signal N; with --baseline, the gate's: 0 pass, 1 regression, 3 could not measure.\n"
	      "  2    usage error (bad option or value)\n"
	      "  125  cbottleneck refused or failed: static, setuid, 32-bit or foreign program,\n"
	      "       agent missing, session directory unusable, or an output file could not\n"
	      "       be written\n"
	      "  126  PROGRAM is not executable (or is a directory)\n"
	      "  127  PROGRAM not found\n"
	      "Exit status of `report DIR`: 0 ok; 1 session damaged (the report shows what was\n"
	      "intact); 2 usage error; 66 no readable session in DIR; 125 output failed.\n"
	      "\n"
	      "Environment: CBN_AGENT_DIR (where libcbottleneck.so is), TMPDIR (session parent).\n"
	      "See docs/cli.md for details.\n",
	      f);
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("cbottleneck: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("; see cbottleneck --help\n", stderr);
	return CLI_EXIT_USAGE;
}

static int parse_long(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static void push_expr(const char ***arr, size_t *n, const char *e)
{
	const char **a = realloc(*arr, (*n + 1) * sizeof(*a));

	if (!a) {
		fprintf(stderr, "cbottleneck: out of memory\n");
		exit(CLI_EXIT_REFUSED);
	}
	a[(*n)++] = e;
	*arr = a;
}

/* Parse options up to the first non-option.  Returns -1 to go on (optind is
 * the first operand), or an exit status. */
static int parse_opts(int argc, char **argv, enum mode mode, struct cli_opts *o)
{
	char err[512];
	long v;
	int c;
	size_t i;

	memset(o, 0, sizeof(*o));
	o->freq = CLI_DEFAULT_FREQ;
	o->limit = CLI_DEFAULT_LIMIT;
	optind = 0; /* full GNU re-initialisation */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:F:o:qvh", long_opts, NULL)) != -1) {
		int run_only = c == 'F' || c == 'o' || c == OPT_DEPTH || c == OPT_BUFFER ||
			       c == OPT_NO_CUDA || c == OPT_SIGNAL;
		if (mode == MODE_REPORT && run_only)
			return usage_error("%s only applies when running a program, not to report",
					   c == 'F' ? "-F/--frequency" : c == 'o' ? "-o/--output" :
					   c == OPT_DEPTH ? "--depth" : c == OPT_BUFFER ? "--buffer-mb" :
					   c == OPT_SIGNAL ? "--signal" : "--no-cuda");
		switch (c) {
		case 'F':
			if (parse_long(optarg, 1, 10000, &v) < 0)
				return usage_error("-F %s: the frequency must be a whole number of Hz "
						   "from 1 to 10000", optarg);
			o->freq = v;
			break;
		case 'o':
			o->output_dir = optarg;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 'v':
			o->verbose = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case OPT_VERSION:
			printf("cbottleneck %s\n", CBN_VERSION);
			return 0;
		case OPT_SORT:
			if (!report_sort_key_valid(optarg))
				return usage_error("--sort %s: unknown key (tottime, cumtime, ncalls, "
						   "name, filename, cuda_time_total, cpu_time_total, "
						   "self_cuda_time_total, self_cpu_time_total, count, "
						   "or a device_* spelling of a cuda_* key)",
						   optarg);
			o->sort = optarg;
			break;
		case OPT_LIMIT:
			if (parse_long(optarg, 1, 1000000, &v) < 0)
				return usage_error("--limit %s: expected a number of rows >= 1", optarg);
			o->limit = (int)v;
			break;
		case OPT_REPORT:
			o->report_file = optarg;
			break;
		case OPT_DEPTH:
			if (parse_long(optarg, 1, CBN_MAX_FRAMES, &v) < 0)
				return usage_error("--depth %s: expected 1 to %d frames", optarg,
						   CBN_MAX_FRAMES);
			o->depth = (int)v;
			break;
		case OPT_BUFFER:
			if (parse_long(optarg, 1, 1 << 20, &v) < 0)
				return usage_error("--buffer-mb %s: expected a size in MiB >= 1", optarg);
			o->buffer_mb = (int)v;
			break;
		case OPT_NO_CUDA:
			o->no_cuda = 1;
			break;
		case OPT_INLINE:
			if (!strcmp(optarg, "expand"))
				o->inline_view = PROF_INLINE_EXPAND;
			else if (!strcmp(optarg, "fold"))
				o->inline_view = PROF_INLINE_FOLD;
			else
				return usage_error("--inline %s: expected expand (inlined functions "
						   "are rows) or fold (their time stays with the "
						   "function they were inlined into)", optarg);
			break;
		case OPT_SIGNAL:
			if (!cbn_signal_parse(optarg))
				return usage_error("--signal %s: not a signal the agent can sample with "
						   "(a name such as SIGPROF or SIGRTMAX-3, or a number; "
						   "not KILL, STOP, the fault signals or 32-33)", optarg);
			o->signal = optarg;
			break;
		case OPT_JSON:
			o->json = optarg;
			break;
		case OPT_TRACE:
			o->trace = optarg;
			break;
		case OPT_WINDOW:
			o->trace_window = optarg;
			if (trace_window_parse(optarg, &o->window_start, &o->window_end) < 0)
				return usage_error("--trace-window %s: expected START:END, each a time "
						   "with an optional unit (s, ms, us, ns), either may "
						   "be empty", optarg);
			break;
		case OPT_FOLDED:
			o->folded = optarg;
			break;
		case OPT_FLAME:
			o->flamegraph = optarg;
			break;
		case OPT_PPROF:
			o->pprof = optarg;
			break;
		case OPT_BASELINE:
			o->baseline = optarg;
			break;
		case OPT_FAIL:
			push_expr(&o->fail, &o->nfail, optarg);
			break;
		case OPT_WARN:
			push_expr(&o->warn, &o->nwarn, optarg);
			break;
		case OPT_MARKDOWN:
			o->markdown = optarg;
			break;
		case OPT_BENCH:
			o->bench_json = optarg;
			break;
		case ':':
			return usage_error("%s needs a value", argv[optind - 1]);
		default:
			if (optopt)
				return usage_error("unknown option -%c", optopt);
			return usage_error("unknown option %s", argv[optind - 1]);
		}
	}
	if (o->trace_window && !o->trace)
		return usage_error("--trace-window needs --trace FILE");
	if (!o->baseline && (o->nfail || o->nwarn || o->markdown || o->bench_json))
		return usage_error("--fail, --warn, --markdown and --bench-json need --baseline "
				   "BASE.json");
	/* Bad gate expressions are usage errors before anything runs. */
	for (i = 0; i < o->nfail + o->nwarn; i++) {
		const char *e = i < o->nfail ? o->fail[i] : o->warn[i - o->nfail];
		if (cmp_expr_check(e, err, sizeof(err)) < 0)
			return usage_error("--%s '%s': %s", i < o->nfail ? "fail" : "warn", e, err);
	}
	if (o->baseline && access(o->baseline, R_OK) != 0)
		return usage_error("--baseline %s: %s", o->baseline, strerror(errno));
	if (mode == MODE_RUN && o->freq > 1000 && !o->quiet)
		fprintf(stderr, "cbottleneck: warning: -F %ld is high: every sample interrupts the "
			"program, so overhead grows with the rate (99-1000 Hz is usual)\n", o->freq);
	return -1;
}

/* --- after the data is in: reports, files, gate ---------------------------- */

/*
 * The text report, for a --baseline run that prints the gate's table after it
 * on stdout: without the blank lines a quiet report may end with, so that the
 * gate's one blank line is the only one between them.
 */
static int report_text_trimmed(FILE *out, const struct analysis *a, const struct report_opts *ro)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	int ret;

	if (!mem)
		return report_text(out, a, ro);
	ret = report_text(mem, a, ro);
	if (fclose(mem) != 0 && ret == 0)
		ret = -ENOMEM;
	while (len >= 2 && buf[len - 1] == '\n' && buf[len - 2] == '\n')
		len--;
	if (ret == 0 && len && fwrite(buf, 1, len, out) != len)
		ret = -EIO;
	free(buf);
	return ret;
}

static int write_outputs(const struct analysis *a, const struct cli_opts *o,
			 const char *json_path)
{
	struct report_opts ro = {o->sort, o->limit, o->quiet};
	char err[512];
	int failed = 0;
	FILE *out = stdout;

	if (o->report_file && strcmp(o->report_file, "-") != 0) {
		out = fopen(o->report_file, "w");
		if (!out) {
			fprintf(stderr, "cbottleneck: --report %s: %s\n", o->report_file,
				strerror(errno));
			failed = 1;
		}
	}
	if (out) {
		fflush(stdout);
		errno = 0;
		if ((out == stdout && o->baseline ? report_text_trimmed(out, a, &ro)
						  : report_text(out, a, &ro)) < 0 ||
		    fflush(out) != 0) {
			/* A reader that stopped early (| head) is not our failure. */
			if (!(out == stdout && errno == EPIPE)) {
				fprintf(stderr, "cbottleneck: cannot write the report: %s\n",
					strerror(errno ? errno : EIO));
				failed = 1;
			}
		}
		if (out != stdout && fclose(out) != 0) {
			fprintf(stderr, "cbottleneck: --report %s: %s\n", o->report_file,
				strerror(errno));
			failed = 1;
		}
		fflush(stdout);
	}
#define OUT(cond, call, opt, file)                                                      \
	do {                                                                             \
		if ((cond) && (call) < 0) {                                              \
			fprintf(stderr, "cbottleneck: %s %s: %s\n", opt, file, err);    \
			failed = 1;                                                      \
		}                                                                        \
	} while (0)
	err[0] = '\0';
	OUT(json_path, report_json_write(a, &ro, json_path, err, sizeof(err)), "--json", json_path);
	if (o->trace) {
		struct trace_opts to = {o->window_start, o->window_end, 0, o->quiet};
		OUT(1, export_trace(a, o->trace, &to, err, sizeof(err)), "--trace", o->trace);
	}
	OUT(o->folded, export_folded(a, o->folded, err, sizeof(err)), "--folded", o->folded);
	OUT(o->flamegraph, export_flamegraph(a, o->flamegraph, err, sizeof(err)), "--flamegraph",
	    o->flamegraph);
	OUT(o->pprof, export_pprof(a, o->pprof, err, sizeof(err)), "--pprof", o->pprof);
#undef OUT
	return failed;
}

/* 1 if the text report went to stdout (no --report FILE, or --report -). */
static int report_on_stdout(const struct cli_opts *o)
{
	return !o->report_file || strcmp(o->report_file, "-") == 0;
}

/* The run just profiled, compared with the baseline in memory: the figures
 * its JSON report would hold.  CMP_* or CMP_NOMEM. */
static int gate_cmp(const struct analysis *a, const char *label, const char *baseline,
		    const struct cmp_opts *co, FILE *out)
{
	struct gate_run cur;
	int st;

	if (gate_run_from_analysis(a, &cur) < 0)
		return CMP_NOMEM;
	st = cmp_run_current(baseline, &cur, label, co, out);
	gate_run_free(&cur);
	return st;
}

/*
 * The gate's table follows the report on stdout, after one blank line.  The
 * table is built in memory first so that the blank line is printed only when
 * there is a table (a bad baseline prints nothing on stdout).  label names the
 * current run in the table.
 */
static int gate(const struct cli_opts *o, const struct analysis *a, const char *label)
{
	struct cmp_opts co;
	char *buf = NULL;
	size_t len = 0;
	FILE *mem;
	int st;

	memset(&co, 0, sizeof(co));
	co.fail = o->fail;
	co.nfail = o->nfail;
	co.warn = o->warn;
	co.nwarn = o->nwarn;
	co.markdown = o->markdown;
	co.bench_json = o->bench_json;
	co.quiet = o->quiet;
	fflush(stdout);
	mem = open_memstream(&buf, &len);
	if (!mem) {
		/* no memory for the buffer: the table straight out, unseparated */
		st = gate_cmp(a, label, o->baseline, &co, stdout);
	} else {
		st = gate_cmp(a, label, o->baseline, &co, mem);
		if (fclose(mem) == 0 && len) {
			if (report_on_stdout(o))
				fputc('\n', stdout);
			fwrite(buf, 1, len, stdout);
		}
		free(buf);
	}
	fflush(stdout);
	if (st == CMP_NOMEM) {
		fprintf(stderr, "cbottleneck: out of memory in the regression gate\n");
		st = CMP_USAGE;
	}
	return st;
}

static const char *gate_word(int st)
{
	switch (st) {
	case CMP_PASS: return "pass";
	case CMP_REGRESSION: return "regression";
	case CMP_USAGE: return "bad baseline or expression";
	case CMP_UNMEASURABLE: return "could not measure";
	}
	return "?";
}

/* --- cbottleneck report DIR ------------------------------------------------- */

static int cmd_report(int argc, char **argv)
{
	struct cli_opts o;
	struct profile *p = NULL;
	struct analysis an = {0};
	char err[1024];
	const char *dir;
	struct stat st;
	int ret, lr, status;
	size_t i;

	ret = parse_opts(argc, argv, MODE_REPORT, &o);
	if (ret >= 0)
		goto out;
	if (optind >= argc) {
		ret = usage_error("report needs a session directory: cbottleneck report DIR");
		goto out;
	}
	if (optind + 1 < argc) {
		ret = usage_error("report takes one directory, got extra '%s'", argv[optind + 1]);
		goto out;
	}
	dir = argv[optind];
	if (stat(dir, &st) < 0) {
		ret = usage_error("report %s: %s", dir, strerror(errno));
		goto out;
	}
	if (!S_ISDIR(st.st_mode)) {
		ret = usage_error("report %s: not a directory (give the -o DIR of a run)", dir);
		goto out;
	}
	{
		struct prof_load_opts lo = {(enum prof_inline)o.inline_view};

		lr = prof_load_with(dir, &lo, &p, err, sizeof(err));
	}
	if (lr < 0) {
		fprintf(stderr, "cbottleneck: %s\n", err);
		ret = CLI_EXIT_NOINPUT;
		goto out;
	}
	if (lr == PROF_LOAD_PARTIAL)
		for (i = 0; i < p->nwarnings; i++)
			fprintf(stderr, "cbottleneck: warning: %s\n", p->warnings[i]);
	if (analysis_run(p, NULL, &an) < 0) {
		fprintf(stderr, "cbottleneck: out of memory while analysing %s\n", dir);
		ret = CLI_EXIT_REFUSED;
		goto out;
	}
	if (write_outputs(&an, &o, o.json)) {
		ret = CLI_EXIT_REFUSED;
		goto out;
	}
	ret = lr == PROF_LOAD_PARTIAL ? 1 : 0;
	if (o.baseline) {
		status = gate(&o, &an, o.json ? o.json : dir);
		fprintf(stderr, "cbottleneck: exit status %d from the regression gate (%s)\n", status,
			gate_word(status));
		ret = status;
	}
out:
	analysis_free(&an);
	prof_free(p);
	free(o.fail);
	free(o.warn);
	return ret;
}

/* --- cbottleneck PROGRAM ---------------------------------------------------- */

/*
 * After the program has ended, reading and symbolizing can take a while.  A
 * Ctrl-C then must not leave a private session (possibly large) in TMPDIR, and
 * a closed stdout (`cbottleneck ./prog | head`) must not kill us before the
 * cleanup.  Only async-signal-safe calls are allowed in the handler, so it
 * hands the cleanup to a shell that then dies of the same signal.
 */
static char cleanup_dir[PATH_MAX];

static void cleanup_on_signal(int sig)
{
	static char script[] = "rm -rf -- \"$1\"; trap - \"$2\"; kill -s \"$2\" $$";
	char *name = sig == SIGINT ? "INT" : sig == SIGTERM ? "TERM" : sig == SIGHUP ? "HUP" : "QUIT";
	char *argv[] = {"sh", "-c", script, "sh", cleanup_dir, name, NULL};
	char *envp[] = {"PATH=/usr/bin:/bin", NULL};

	execve("/bin/sh", argv, envp);
	_exit(128 + sig);
}

static void protect_session(const char *dir)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	if (!dir || strlen(dir) >= sizeof(cleanup_dir))
		return;
	strcpy(cleanup_dir, dir);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction old;
		/* A signal we were started with ignored (nohup, background job)
		 * stays ignored. */
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			continue;
		sa.sa_handler = cleanup_on_signal;
		sigaction(sigs[i], &sa, NULL);
	}
}

static int run_status(int st)
{
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return 125;
}

static int cmd_run(int argc, char **argv)
{
	struct cli_opts o;
	struct spawn_env env;
	struct spawn_result res;
	struct session_meta meta;
	struct profile *p = NULL;
	struct analysis an = {0};
	char path[PATH_MAX], agent[PATH_MAX], cuda[PATH_MAX], session[PATH_MAX];
	char err[1024];
	char **targv;
	int ret, status, lr, have_session = 0, failed;

	ret = parse_opts(argc, argv, MODE_RUN, &o);
	if (ret >= 0)
		goto out;
	if (optind >= argc) {
		ret = usage_error("no program to run: cbottleneck [OPTIONS] PROGRAM [ARGS...]");
		goto out;
	}
	targv = argv + optind;
	ret = preflight(targv[0], path, sizeof(path));
	if (ret)
		goto out;
	ret = session_find_agent(agent, sizeof(agent), cuda, sizeof(cuda));
	if (ret)
		goto out;
	ret = session_create(o.output_dir, session, sizeof(session));
	if (ret)
		goto out;
	have_session = 1;

	memset(&env, 0, sizeof(env));
	env.agent = agent;
	env.cuda = cuda;
	env.session = session;
	env.freq = o.freq;
	env.depth = o.depth;
	env.buffer_mb = o.buffer_mb;
	env.quiet = o.quiet;
	env.no_cuda = o.no_cuda;
	env.verbose = o.verbose;
	env.signal = o.signal;
	memset(&meta, 0, sizeof(meta));
	env_collect(&meta.env);
	ret = spawn_run(path, targv, &env, &res);
	if (ret)
		goto out;
	protect_session(o.output_dir ? NULL : session);
	if (o.output_dir)
		session_trim(session);
	if (res.exec_errno) {
		fprintf(stderr, "cbottleneck: %s: %s\n", targv[0], strerror(res.exec_errno));
		ret = res.exec_errno == ENOENT ? CLI_EXIT_NOTFOUND : CLI_EXIT_NOEXEC;
		goto out;
	}
	status = run_status(res.status);
	if (WIFSIGNALED(res.status))
		fprintf(stderr, "cbottleneck: %s was killed by signal %d (%s)\n", targv[0],
			WTERMSIG(res.status), strsignal(WTERMSIG(res.status)));

	meta.argv = targv;
	meta.exit_status = WIFEXITED(res.status) ? WEXITSTATUS(res.status) : -1;
	meta.exit_signal = WIFSIGNALED(res.status) ? WTERMSIG(res.status) : 0;
	meta.start_mono_ns = res.start_ns;
	meta.end_mono_ns = res.end_ns;
	meta.user_ns = res.user_ns;
	meta.sys_ns = res.sys_ns;
	meta.frequency_hz = (double)o.freq;
	if (session_meta_write(session, &meta) < 0 && o.verbose)
		fprintf(stderr, "cbottleneck: cannot write %s/session.json\n", session);
	kernel_symbols_write(session, o.verbose);

	ret = status;
	{
		struct prof_load_opts lo = {(enum prof_inline)o.inline_view};

		lr = prof_load_with(session, &lo, &p, err, sizeof(err));
	}
	if (lr < 0) {
		fprintf(stderr, "cbottleneck: no profile: %s\n", err);
		if (o.baseline) {
			fprintf(stderr, "cbottleneck: exit status %d from the regression gate (%s)\n",
				CMP_UNMEASURABLE, gate_word(CMP_UNMEASURABLE));
			ret = CMP_UNMEASURABLE;
		}
		goto out;
	}
	if (analysis_run(p, NULL, &an) < 0) {
		fprintf(stderr, "cbottleneck: out of memory while analysing the profile\n");
		if (ret == 0)
			ret = CLI_EXIT_REFUSED;
		goto out;
	}
	failed = write_outputs(&an, &o, o.json);
	if (failed && ret == 0)
		ret = CLI_EXIT_REFUSED;
	if (o.baseline && !failed) {
		if (status != 0) {
			fprintf(stderr, "cbottleneck: %s failed (exit status %d), so the gate cannot "
				"measure it: exit status %d\n", targv[0], status, CMP_UNMEASURABLE);
			ret = CMP_UNMEASURABLE;
		} else {
			ret = gate(&o, &an, o.json ? o.json : "this run");
			fprintf(stderr, "cbottleneck: exit status %d from the regression gate (%s), "
				"not from %s\n", ret, gate_word(ret), targv[0]);
		}
	}
out:
	analysis_free(&an);
	prof_free(p);
	if (have_session) {
		if (!o.output_dir)
			session_remove(session);
		else if (!o.quiet && ret != CLI_EXIT_USAGE)
			fprintf(stderr, "cbottleneck: session kept in %s (cbottleneck report %s)\n",
				o.output_dir, o.output_dir);
	}
	free(o.fail);
	free(o.warn);
	return ret;
}

int main(int argc, char **argv)
{
	/* Subcommands are words; a program of that name runs as ./report or
	 * with `cbottleneck -- report`. */
	if (argc >= 2 && strcmp(argv[1], "report") == 0)
		return cmd_report(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "compare") == 0)
		return cmp_main(argc - 1, argv + 1);
	return cmd_run(argc, argv);
}
