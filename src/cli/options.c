/*
 * options.c — the options of `cbottleneck [OPTIONS] PROGRAM` and `cbottleneck
 * report [OPTIONS] DIR`: the help text, parsing into struct cli_opts, and the
 * usage errors (exit 2) for anything wrong before a program runs.
 */
#include <errno.h>
#include <getopt.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cbn_schedule.h"
#include "cbn_signal.h"
#include "cbn_rx.h"
#include "cli.h"
#include "compare.h"
#include "export.h"
#include "load.h"
#include "ops.h"
#include "report.h"

#ifndef CBN_VERSION
#define CBN_VERSION "0.1.0"
#endif

enum {
	OPT_SORT = 256, OPT_CALLS, OPT_LIMIT, OPT_REPORT, OPT_VERSION, OPT_DEPTH, OPT_BUFFER, OPT_NO_CUDA,
	OPT_JSON, OPT_TRACE, OPT_WINDOW, OPT_FOLDED, OPT_FLAME, OPT_PPROF, OPT_BASELINE,
	OPT_FAIL, OPT_WARN, OPT_MARKDOWN, OPT_BENCH, OPT_SIGNAL, OPT_INLINE,
	OPT_SAMPLE_TYPE, OPT_MEMORY, OPT_MEMORY_RATE, OPT_SCHEDULE, OPT_DELAY, OPT_DURATION,
	OPT_CAPTURE_RANGE, OPT_TOGGLE_SIGNAL, OPT_STEP, OPT_STEP_FUNC, OPT_RING, OPT_OFFCPU,
	OPT_HTML, OPT_WAIT_ALL, OPT_SOURCE_ROOT, OPT_RANK, OPT_RANKS, OPT_PYTHON, OPT_OP_PATTERN,
	OPT_ALLOC_FN, OPT_PID,
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
	{"calls", optional_argument, NULL, OPT_CALLS},
	{"signal", required_argument, NULL, OPT_SIGNAL},
	{"memory", optional_argument, NULL, OPT_MEMORY},
	{"memory-rate", required_argument, NULL, OPT_MEMORY_RATE},
	{"schedule", required_argument, NULL, OPT_SCHEDULE},
	{"delay", required_argument, NULL, OPT_DELAY},
	{"duration", required_argument, NULL, OPT_DURATION},
	{"capture-range", required_argument, NULL, OPT_CAPTURE_RANGE},
	{"toggle-signal", required_argument, NULL, OPT_TOGGLE_SIGNAL},
	{"step", required_argument, NULL, OPT_STEP},
	{"step-func", required_argument, NULL, OPT_STEP_FUNC},
	{"op-pattern", required_argument, NULL, OPT_OP_PATTERN},
	{"alloc-fn", required_argument, NULL, OPT_ALLOC_FN},
	{"ring", required_argument, NULL, OPT_RING},
	{"off-cpu", optional_argument, NULL, OPT_OFFCPU},
	{"wall", optional_argument, NULL, OPT_OFFCPU},
	{"wait-all", no_argument, NULL, OPT_WAIT_ALL},
	{"pid", required_argument, NULL, OPT_PID},
	{"inline", required_argument, NULL, OPT_INLINE},
	{"python", required_argument, NULL, OPT_PYTHON},
	{"json", required_argument, NULL, OPT_JSON},
	{"trace", required_argument, NULL, OPT_TRACE},
	{"trace-window", required_argument, NULL, OPT_WINDOW},
	{"folded", required_argument, NULL, OPT_FOLDED},
	{"flamegraph", required_argument, NULL, OPT_FLAME},
	{"pprof", required_argument, NULL, OPT_PPROF},
	{"html", required_argument, NULL, OPT_HTML},
	{"source-root", required_argument, NULL, OPT_SOURCE_ROOT},
	{"rank", required_argument, NULL, OPT_RANK},
	{"ranks", required_argument, NULL, OPT_RANKS},
	{"sample-type", required_argument, NULL, OPT_SAMPLE_TYPE},
	{"baseline", required_argument, NULL, OPT_BASELINE},
	{"fail", required_argument, NULL, OPT_FAIL},
	{"warn", required_argument, NULL, OPT_WARN},
	{"markdown", required_argument, NULL, OPT_MARKDOWN},
	{"bench-json", required_argument, NULL, OPT_BENCH},
	{NULL, 0, NULL, 0},
};

/* A number as a string literal, for defaults written into the help. */
#define OPT_STR_(x) #x
#define OPT_STR(x) OPT_STR_(x)

static void usage(FILE *f)
{
	fputs("usage: cbottleneck [OPTIONS] [--] PROGRAM [ARGS...]\n"
	      "       cbottleneck [OPTIONS] --pid PID   (a running process: docs/attach.md)\n"
	      "       cbottleneck dump PID\n"
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
	      "      --calls[=builtins]\n"
	      "                       count Python calls exactly (CPython 3.11+): the CPU\n"
	      "                       table's ncalls and percall, as cProfile's (costs up\n"
	      "                       to 1.5x on code made of tiny calls; docs/reading-the-report.md);\n"
	      "                       =builtins: the builtins called too (costs more)\n"
	      "      --memory[=WHAT]  record memory: host,cuda (default), host (malloc, new,\n"
	      "                       anonymous mmap, brk) or cuda (device allocations)\n"
	      "      --memory-rate BYTES  mean bytes between sampled host allocations (K, KiB,\n"
	      "                       M, MiB suffixes; default 512KiB; 1 records every one)\n"
	      "      --signal SIG     sample with SIG (SIGPROF, SIGRTMAX-3, 40...); default: a\n"
	      "                       real-time signal nobody handles\n"
	      "      --wait-all       after the program ends, wait for the processes it left\n"
	      "                       running (daemons) too; by default the report covers them\n"
	      "                       up to the program's end\n"
	      "      --pid PID        attach to the running process PID instead: sample its\n"
	      "                       threads from outside until Ctrl-C, its exit or --duration\n"
	      "  -v, --verbose        say where the session and the agent are\n"
	      "Steps and capture control (docs/steps.md):\n"
	      "      --step REGEX     NVTX/annotation ranges or marks named so are steps too\n"
	      "                       (cbn_step() always marks one); report as well as run\n"
	      "      --step-func NAME  each call of NAME is a step (found on the samples and,\n"
	      "                       in a run, the off-CPU looks it turns on); report as well\n"
	      "                       as run\n"
	      "      --schedule SPEC  wait=N,warmup=N,active=N,repeat=N,skip_first=N over the\n"
	      "                       steps, as torch.profiler.schedule: record only active steps\n"
	      "      --delay TIME     record from TIME after start (s, ms, us, min, h; e.g. 5s)\n"
	      "      --duration TIME  record for TIME, then stop recording (the program goes on)\n"
	      "      --capture-range R  record only inside: api (cbn_start()..cbn_stop(), also\n"
	      "                       cudaProfilerStart/Stop; cudaProfilerApi is the same) or\n"
	      "                       nvtx:NAME[@DOMAIN] (each NVTX range so named)\n"
	      "      --toggle-signal SIG  SIG (e.g. SIGUSR2) turns recording off and on; only for\n"
	      "                       programs that do not use SIG themselves\n"
	      "      --ring TIME      keep only the last TIME of the run (e.g. 30s) in a bounded\n"
	      "                       file (--buffer-mb, default 64 MiB per process)\n"
	      "      --off-cpu[=HZ]   also sample where threads wait off the CPU (futex, I/O,\n"
	      "                       poll, sleep), HZ times a second (default 100), without\n"
	      "                       interrupting them; --wall is the same\n"
	      "Report:\n"
	      "      --sort KEY       CPU table order: tottime (default), cumtime, ncalls, name,\n"
	      "                       filename; CUDA tables: cuda_time_total, cpu_time_total,\n"
	      "                       self_cuda_time_total, self_cpu_time_total, count\n"
	      "                       (device_* spellings of the cuda_* keys too); memory\n"
	      "                       sites: mem, allocs, leaked, peak, avg_size\n"
	      "      --limit N        rows per table (default " OPT_STR(REPORT_DEFAULT_LIMIT) ")\n"
	      "      --inline VIEW    expand (default: inlined functions are rows, marked) or\n"
	      "                       fold (their time stays with the function they were inlined into)\n"
	      "      --python MODE    on (default: Python functions where the interpreter ran\n"
	      "                       them, its own frames folded into them), native (its own\n"
	      "                       frames kept) or off (native stacks only; in a run, the\n"
	      "                       agent does not read Python frames)\n"
	      "      --report FILE    write the text report to FILE (- = stdout); by default it goes\n"
	      "                       to stdout when that is a terminal, else to stderr, so a\n"
	      "                       program's redirected output holds its own bytes only\n"
	      "      --op-pattern REGEX=NAME  frames whose function (without parameters) matches\n"
	      "                       REGEX are operator NAME (\\1 inserts a group, \\u1 in upper\n"
	      "                       case), before the built-in PyTorch/ggml/ONNX Runtime/\n"
	      "                       TensorFlow rules; repeatable\n"
	      "      --alloc-fn NAME  an allocation wrapper of the program: a memory site is\n"
	      "                       its caller, as massif's --alloc-fn (wrappers that only\n"
	      "                       forward to malloc are found without it); repeatable\n"
	      "      --rank N, --ranks LIST  a distributed run: only these ranks (0-3,7)\n"
	      "                       (docs/distributed.md)\n"
	      "  -q, --quiet          tables only: no banner or hints; the agent stays silent\n"
	      "Output files:\n"
	      "      --json FILE      the JSON report (input of `compare`)\n"
	      "      --trace FILE     Chrome/Perfetto trace (FILE.gz compresses)\n"
	      "      --trace-window START:END  only this part of the run (e.g. 1s:2.5s, 200ms:)\n"
	      "      --folded FILE    folded stacks (flamegraph.pl, speedscope)\n"
	      "      --flamegraph FILE.svg  interactive flame graph\n"
	      "      --pprof FILE     pprof profile.proto (gzip)\n"
	      "      --html FILE      one self-contained HTML page with every view (docs/html.md)\n"
	      "      --source-root DIR  where --html looks for sources the build recorded elsewhere\n"
	      "      --sample-type T  what --folded and --flamegraph weigh: cpu (default);\n"
	      "                       with --off-cpu wall (on and off the CPU) or offcpu;\n"
	      "                       with --memory alloc_space, alloc_objects, inuse_space,\n"
	      "                       inuse_objects\n"
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
	      "       agent missing, session directory unusable, an output file could not\n"
	      "       be written, or out of memory reading the session\n"
	      "  126  PROGRAM is not executable (or is a directory)\n"
	      "  127  PROGRAM not found\n"
	      "Exit status of `report DIR`: 0 ok; 1 session damaged (the report shows what was\n"
	      "intact); 2 usage error; 66 no readable session in DIR; 125 output failed or\n"
	      "out of memory.\n"
	      "\n"
	      "Environment: CBN_AGENT_DIR (where libcbottleneck.so is), TMPDIR (session parent).\n"
	      "See docs/cli.md for details.\n",
	      f);
}

int cli_usage_error(const char *fmt, ...)
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

/* "524288", "512K", "512KiB", "1M", "1MiB" (K and M are 1024-based): 1 to 1 TiB. */
/* "5", "5s", "250ms", "1.5s", "2min", "1h", "100us", "10ns": > 0, in ns. */
static int parse_duration(const char *s, uint64_t *out)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = {{"", 1e9}, {"s", 1e9}, {"ms", 1e6}, {"us", 1e3}, {"ns", 1}, {"min", 60e9},
		     {"h", 3600e9}};
	char *end;
	double v;
	size_t i;

	if (!s || !*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v <= 0)
		return -1;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcmp(end, units[i].unit)) {
			double ns = v * units[i].ns;

			if (ns < 1 || ns > 1e18)
				return -1;
			*out = (uint64_t)ns;
			return 0;
		}
	}
	return -1;
}

static int parse_bytes(const char *s, uint64_t *out)
{
	unsigned long long v, mul = 1;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	if (!strcmp(end, "K") || !strcmp(end, "KiB"))
		mul = 1024;
	else if (!strcmp(end, "M") || !strcmp(end, "MiB"))
		mul = 1024 * 1024;
	else if (*end)
		return -1;
	if (v < 1 || v > (1ull << 40) / mul)
		return -1;
	*out = v * mul;
	return 0;
}

static int push_expr(const char ***arr, size_t *n, const char *e)
{
	const char **a = realloc(*arr, (*n + 1) * sizeof(*a));

	if (!a)
		return -1;
	a[(*n)++] = e;
	*arr = a;
	return 0;
}

#define OPT_NOT_MINE (-2)

/* An option of a run only (the agent's settings).  Returns -1 when
 * taken, OPT_NOT_MINE for another option, or an exit status. */
static int opt_run(int c, struct cli_opts *o)
{
	long v;

	switch (c) {
	case 'F':
		if (parse_long(optarg, 1, 10000, &v) < 0)
			return cli_usage_error("-F %s: the frequency must be a whole number of Hz "
					   "from 1 to 10000", optarg);
		o->freq = v;
		break;
	case 'o':
		o->output_dir = optarg;
		break;
	case OPT_DEPTH:
		if (parse_long(optarg, 1, CBN_MAX_FRAMES, &v) < 0)
			return cli_usage_error("--depth %s: expected 1 to %d frames", optarg,
					   CBN_MAX_FRAMES);
		o->depth = (int)v;
		break;
	case OPT_BUFFER:
		if (parse_long(optarg, 1, 1 << 20, &v) < 0)
			return cli_usage_error("--buffer-mb %s: expected a size in MiB >= 1", optarg);
		o->buffer_mb = (int)v;
		break;
	case OPT_NO_CUDA:
		o->no_cuda = 1;
		break;
	case OPT_CALLS:
		if (optarg && strcmp(optarg, "builtins"))
			return cli_usage_error("--calls=%s: expected builtins (or --calls alone)",
					       optarg);
		o->py_calls = optarg ? 2 : 1;
		break;
	case OPT_MEMORY:
		if (!optarg || !strcmp(optarg, "host,cuda") || !strcmp(optarg, "cuda,host"))
			o->memory = "host,cuda";
		else if (!strcmp(optarg, "host") || !strcmp(optarg, "cuda"))
			o->memory = optarg;
		else
			return cli_usage_error("--memory=%s: expected host,cuda, host or cuda",
					   optarg);
		break;
	case OPT_MEMORY_RATE:
		if (parse_bytes(optarg, &o->memory_rate) < 0)
			return cli_usage_error("--memory-rate %s: expected a number of bytes >= 1 "
					   "(K, KiB, M, MiB suffixes), 1 for every allocation",
					   optarg);
		break;
	case OPT_SCHEDULE: {
		struct cbn_schedule sc;

		if (cbn_schedule_parse(optarg, &sc) < 0)
			return cli_usage_error("--schedule %s: expected wait=N,warmup=N,active=N,"
					   "repeat=N,skip_first=N (any of them, active >= 1)",
					   optarg);
		o->schedule = optarg;
		break;
	}
	case OPT_DELAY:
	case OPT_DURATION:
	case OPT_RING:
		if (parse_duration(optarg, c == OPT_DELAY ? &o->delay_ns :
					   c == OPT_RING ? &o->ring_ns : &o->duration_ns) < 0)
			return cli_usage_error("%s %s: expected a time > 0 with an optional unit "
					   "(s, ms, us, ns, min, h; default s)",
					   c == OPT_DELAY ? "--delay" : c == OPT_RING ? "--ring" :
					   "--duration", optarg);
		break;
	case OPT_WAIT_ALL:
		o->wait_all = 1;
		break;
	case OPT_PID:
		if (parse_long(optarg, 1, 0x3fffffff, &v) < 0)
			return cli_usage_error("--pid %s: expected a process id", optarg);
		o->attach_pid = v;
		break;
	case OPT_OFFCPU:
		if (!optarg)
			o->offcpu_hz = CLI_DEFAULT_OFFCPU_HZ;
		else if (parse_long(optarg, 1, 1000, &v) < 0)
			return cli_usage_error("--off-cpu=%s: the off-CPU sampling rate must be a "
					   "whole number of Hz from 1 to 1000", optarg);
		else
			o->offcpu_hz = v;
		break;
	case OPT_CAPTURE_RANGE:
		if (!strcmp(optarg, "api") || !strcmp(optarg, "cudaProfilerApi"))
			o->capture_range = "api";
		else if (!strncmp(optarg, "nvtx:", 5) && optarg[5] && optarg[5] != '@')
			o->capture_range = optarg;
		else
			return cli_usage_error("--capture-range %s: expected api, cudaProfilerApi "
					   "or nvtx:NAME[@DOMAIN]", optarg);
		break;
	case OPT_TOGGLE_SIGNAL: {
		int sig = cbn_signal_parse(optarg);

		if (!sig)
			return cli_usage_error("--toggle-signal %s: not a signal that can toggle "
					   "recording (SIGUSR2, SIGUSR1, a real-time one)",
					   optarg);
		o->toggle_signal = optarg;
		break;
	}
	case OPT_SIGNAL:
		if (!cbn_signal_parse(optarg))
			return cli_usage_error("--signal %s: not a signal the agent can sample with "
					   "(a name such as SIGPROF or SIGRTMAX-3, or a number; "
					   "not KILL, STOP, the fault signals or 32-33)", optarg);
		o->signal = optarg;
		break;
	default:
		return OPT_NOT_MINE;
	}
	return -1;
}

/* An option of what the analysis shows (sorting, steps, operators, views, ranks).  Returns -1 when
 * taken, OPT_NOT_MINE for another option, or an exit status. */
static int opt_view(int c, struct cli_opts *o)
{
	long v;
	char err[512];

	switch (c) {
	case OPT_SORT:
		if (!report_sort_key_valid(optarg))
			return cli_usage_error("--sort %s: unknown key (tottime, cumtime, ncalls, "
					   "name, filename, cuda_time_total, cpu_time_total, "
					   "self_cuda_time_total, self_cpu_time_total, count, "
					   "a device_* spelling of a cuda_* key, or mem, "
					   "allocs, leaked, peak, avg_size)",
					   optarg);
		o->sort = optarg;
		break;
	case OPT_LIMIT:
		if (parse_long(optarg, 1, 1000000, &v) < 0)
			return cli_usage_error("--limit %s: expected a number of rows >= 1", optarg);
		o->limit = (int)v;
		break;
	case OPT_STEP: {
		/* The agent's matcher, not regcomp: what it cannot match is
		 * refused here, before the run (cbn_rx.h). */
		struct cbn_rx rx;
		char why[128];

		if (cbn_rx_compile(&rx, optarg, why, sizeof(why)) != 0)
			return cli_usage_error("--step %s: %s (a POSIX extended regular expression "
					       "is expected: docs/steps.md)", optarg, why);
		o->step_regex = optarg;
		break;
	}
	case OPT_OP_PATTERN: {
		struct op_pattern pat, *np;

		if (ops_pattern_parse(optarg, &pat, err, sizeof(err)) < 0)
			return cli_usage_error("%s", err);
		np = realloc(o->op_patterns, (o->nop_patterns + 1) * sizeof(*np));
		if (!np) {
			fprintf(stderr, "cbottleneck: out of memory\n");
			return CLI_EXIT_NOMEM;
		}
		o->op_patterns = np;
		np[o->nop_patterns++] = pat;
		break;
	}
	case OPT_ALLOC_FN: {
		const char **nf;

		if (!*optarg)
			return cli_usage_error("--alloc-fn needs a function name");
		nf = realloc(o->alloc_fns, (o->nalloc_fns + 1) * sizeof(*nf));
		if (!nf) {
			fprintf(stderr, "cbottleneck: out of memory\n");
			return CLI_EXIT_NOMEM;
		}
		o->alloc_fns = nf;
		nf[o->nalloc_fns++] = optarg;
		break;
	}
	case OPT_STEP_FUNC:
		if (!*optarg)
			return cli_usage_error("--step-func needs a function name");
		o->step_func = optarg;
		break;
	case OPT_PYTHON:
		if (!strcmp(optarg, "on"))
			o->python_view = PROF_PYTHON_ON;
		else if (!strcmp(optarg, "native"))
			o->python_view = PROF_PYTHON_NATIVE;
		else if (!strcmp(optarg, "off"))
			o->python_view = PROF_PYTHON_OFF;
		else
			return cli_usage_error("--python %s: expected on (Python functions in the "
					   "stacks), native (with the interpreter's own frames) "
					   "or off (native stacks only)", optarg);
		break;
	case OPT_INLINE:
		if (!strcmp(optarg, "expand"))
			o->inline_view = PROF_INLINE_EXPAND;
		else if (!strcmp(optarg, "fold"))
			o->inline_view = PROF_INLINE_FOLD;
		else
			return cli_usage_error("--inline %s: expected expand (inlined functions "
					   "are rows) or fold (their time stays with the "
					   "function they were inlined into)", optarg);
		break;
	case OPT_RANK:
	case OPT_RANKS: {
		/* --rank N is the one-rank list N */
		char err[160];

		if (c == OPT_RANK && !(optarg[0] >= '0' && optarg[0] <= '9' &&
					 strspn(optarg, "0123456789") == strlen(optarg)))
			return cli_usage_error("--rank %s: expected a rank number (0, 1, ...)",
					       optarg);
		if (prof_ranks_match(optarg, -1, err, sizeof(err)) < 0)
			return cli_usage_error("%s", err);
		o->ranks = optarg;
		break;
	}
	default:
		return OPT_NOT_MINE;
	}
	return -1;
}

/* An option of the outputs and the gate.  Returns -1 when
 * taken, OPT_NOT_MINE for another option, or an exit status. */
static int opt_output(int c, struct cli_opts *o)
{
	switch (c) {
	case OPT_REPORT:
		o->report_file = optarg;
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
			return cli_usage_error("--trace-window %s: expected START:END, each a time "
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
	case OPT_HTML:
		o->html = optarg;
		break;
	case OPT_SOURCE_ROOT:
		o->source_root = optarg;
		break;
	case OPT_SAMPLE_TYPE: {
		enum export_sample t;

		if (export_sample_parse(optarg, &t) < 0)
			return cli_usage_error("--sample-type %s: expected cpu, wall, offcpu, "
					   "alloc_space, alloc_objects, inuse_space or "
					   "inuse_objects", optarg);
		o->sample_type = (int)t;
		break;
	}
	case OPT_BASELINE:
		o->baseline = optarg;
		break;
	case OPT_FAIL:
	case OPT_WARN:
		if ((c == OPT_FAIL ? push_expr(&o->fail, &o->nfail, optarg)
				   : push_expr(&o->warn, &o->nwarn, optarg)) < 0) {
			fprintf(stderr, "cbottleneck: out of memory\n");
			return CLI_EXIT_NOMEM;
		}
		break;
	case OPT_MARKDOWN:
		o->markdown = optarg;
		break;
	case OPT_BENCH:
		o->bench_json = optarg;
		break;
	default:
		return OPT_NOT_MINE;
	}
	return -1;
}

/* The options only a run takes (the agent's settings), as report names them. */
static const struct {
	int opt;
	const char *name;
} run_only_opts[] = {
	{'F', "-F/--frequency"},      {'o', "-o/--output"},
	{OPT_DEPTH, "--depth"},         {OPT_BUFFER, "--buffer-mb"},
	{OPT_SIGNAL, "--signal"},       {OPT_MEMORY, "--memory"},
	{OPT_MEMORY_RATE, "--memory-rate"}, {OPT_SCHEDULE, "--schedule"},
	{OPT_DELAY, "--delay"},         {OPT_DURATION, "--duration"},
	{OPT_CAPTURE_RANGE, "--capture-range"}, {OPT_TOGGLE_SIGNAL, "--toggle-signal"},
	{OPT_RING, "--ring"},           {OPT_OFFCPU, "--off-cpu"},
	{OPT_NO_CUDA, "--no-cuda"},     {OPT_PID, "--pid"},
	{OPT_CALLS, "--calls"},
};

/* The option's name when only a run takes it, else NULL. */
static const char *run_only_name(int c)
{
	size_t i;

	for (i = 0; i < sizeof(run_only_opts) / sizeof(run_only_opts[0]); i++)
		if (run_only_opts[i].opt == c)
			return run_only_opts[i].name;
	return NULL;
}

/* What options ask of each other, the gate's expressions, the baseline.
 * Returns -1 to go on or an exit status. */
static int opts_check(const struct cli_opts *o, enum cli_mode mode)
{
	char err[512];
	size_t i;

	if (o->source_root && !o->html)
		return cli_usage_error("--source-root needs --html FILE");
	if (o->trace_window && !o->trace)
		return cli_usage_error("--trace-window needs --trace FILE");
	if (o->sample_type && !o->folded && !o->flamegraph)
		return cli_usage_error("--sample-type needs --folded FILE or --flamegraph FILE");
	if (!o->baseline && (o->nfail || o->nwarn || o->markdown || o->bench_json))
		return cli_usage_error("--fail, --warn, --markdown and --bench-json need --baseline "
				   "BASE.json");
	/* Bad gate expressions are usage errors before anything runs. */
	for (i = 0; i < o->nfail + o->nwarn; i++) {
		const char *e = i < o->nfail ? o->fail[i] : o->warn[i - o->nfail];
		if (cmp_expr_check(e, err, sizeof(err)) < 0)
			return cli_usage_error("--%s '%s': %s", i < o->nfail ? "fail" : "warn", e, err);
	}
	if (o->baseline && !cli_args_only() && access(o->baseline, R_OK) != 0)
		return cli_usage_error("--baseline %s: %s", o->baseline, strerror(errno));
	if (mode == CLI_MODE_RUN && o->freq > 1000 && !o->quiet)
		fprintf(stderr, "cbottleneck: warning: -F %ld is high: every sample interrupts the "
			"program, so overhead grows with the rate (99-1000 Hz is usual)\n", o->freq);
	return -1;
}

void cli_opts_defaults(struct cli_opts *o, enum cli_mode mode)
{
	memset(o, 0, sizeof(*o));
	o->freq = CLI_DEFAULT_FREQ;
	o->limit = REPORT_DEFAULT_LIMIT;
	o->run_mode = mode == CLI_MODE_RUN;
}

/* Parse options up to the first non-option (run: what follows is the
 * program's), or, for report, options and operands in any order (the
 * operands into o->operand).  Returns -1 to go on (optind is the first
 * operand not yet taken), or an exit status. */
int cli_parse_opts(int argc, char **argv, enum cli_mode mode, struct cli_opts *o)
{
	int c, ret;

	cli_opts_defaults(o, mode);
	optind = 0; /* full GNU re-initialisation */
	opterr = 0;
	/* "-": each operand comes back as option 1, so report's options may
	 * follow its directory */
	while ((c = getopt_long(argc, argv, mode == CLI_MODE_REPORT ? "-:F:o:qvh" : "+:F:o:qvh",
				long_opts, NULL)) != -1) {
		const char *run_only = run_only_name(c);

		if (mode == CLI_MODE_REPORT && run_only)
			return cli_usage_error("%s only applies when running a program, not to report",
					   run_only);
		ret = opt_run(c, o);
		if (ret == OPT_NOT_MINE)
			ret = opt_view(c, o);
		if (ret == OPT_NOT_MINE)
			ret = opt_output(c, o);
		if (ret != OPT_NOT_MINE) {
			if (ret != -1)
				return ret;
			continue;
		}
		switch (c) {
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
		case 1:
			if (o->noperands < 2)
				o->operand[o->noperands] = optarg;
			o->noperands++;
			break;
		case ':':
			return cli_usage_error("%s needs a value", argv[optind - 1]);
		default:
			if (optopt)
				return cli_usage_error("unknown option -%c", optopt);
			return cli_usage_error("unknown option %s", argv[optind - 1]);
		}
	}
	/* --step-func ends a call where the thread blocks outside it: the
	 * off-CPU sampler's looks see that (steps_find.c), so a run records
	 * them (docs/steps.md) */
	if (mode == CLI_MODE_RUN && o->step_func && !o->offcpu_hz)
		o->offcpu_hz = CLI_DEFAULT_OFFCPU_HZ;
	return opts_check(o, mode);
}

int cli_args_only(void)
{
	const char *v = getenv("CBN_ARGS_ONLY");

	return v && strcmp(v, "1") == 0;
}

void cli_opts_free(struct cli_opts *o)
{
	free(o->op_patterns);
	o->op_patterns = NULL;
	o->nop_patterns = 0;
	free(o->alloc_fns);
	o->alloc_fns = NULL;
	o->nalloc_fns = 0;
	free(o->fail);
	free(o->warn);
	o->fail = o->warn = NULL;
	o->nfail = o->nwarn = 0;
}
