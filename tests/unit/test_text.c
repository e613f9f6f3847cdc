/*
 * test_text.c — the text report on hand-built profiles: header, the
 * cProfile-style table (columns, percall left out in sampling mode, limit and "more" line, sort
 * order, function naming), hot lines, the process/thread sections only when
 * there is more than one, the Measured columns, exit by signal, lost samples,
 * the footer, and the --sort keys (the union of the CPU and CUDA tables' keys).
 */
#include <stdint.h>
#include <unistd.h>

#include "cpu.h"
#include "cuda_analysis.h"
#include "memory.h"
#include "rules.h"
#include "report/fmt.h"
#include "report/mem_report.h"
#include "report/report.h"
#include "analysed.h"
#include "testlib.h"
#include "test_cpu_builder.h"
#include "test_mem_build.h"
#include "util.h"

static char *render_opts(const struct profile *p, const char *sort, int limit, int quiet,
			 int verbose)
{
	struct report_opts o = { .sort = sort, .limit = limit, .quiet = quiet, .verbose = verbose };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	REQUIRE(f);
	CHECK_EQ_INT(report_text(f, analysed(p), &o), 0);
	fclose(f);
	return buf;
}

static char *render(const struct profile *p, const char *sort, int limit, int quiet)
{
	return render_opts(p, sort, limit, quiet, 0);
}

/* -v: the sampler's inner workings and the environment block too */
static char *render_v(const struct profile *p)
{
	return render_opts(p, NULL, 0, 0, 1);
}

/* Lines before the first table: from the report's first line to the first
 * blank line after the "cbottleneck:" line, blank lines not counted. */
static int header_lines(const char *out)
{
	const char *s = strstr(out, "cbottleneck: CPU sampling profile\n");
	int n = 0;

	if (!s)
		return -1;
	for (s = out; *s; s = strchr(s, '\n') + 1) {
		if (*s == '\n') {
			if (n && strstr(out, "cbottleneck: CPU sampling profile\n") < s)
				break;
			continue;
		}
		n++;
		if (!strchr(s, '\n'))
			break;
	}
	return n;
}

/* Number of lines of the CPU table: those between the column header and the
 * first blank line or "(N more" line. */
static int table_rows(const char *out)
{
	const char *s = strstr(out, "filename:lineno(function)\n");
	int n = 0;

	if (!s)
		return -1;
	s = strchr(s, '\n') + 1;
	while (*s && *s != '\n' && strncmp(s, "   (", 4) != 0) {
		n++;
		s = strchr(s, '\n');
		if (!s)
			break;
		s++;
	}
	return n;
}

/* 1 if the line of out that contains key also contains what. */
static int line_has(const char *out, const char *key, const char *what)
{
	const char *s = strstr(out, key), *b, *e;

	if (!s)
		return 0;
	for (b = s; b > out && b[-1] != '\n'; b--)
		;
	e = strchr(s, '\n');
	if (!e)
		e = s + strlen(s);
	s = strstr(b, what);
	return s && s < e;
}

/* Position of needle within the CPU table, or -1. */
static long table_pos(const char *out, const char *needle)
{
	const char *t = strstr(out, "filename:lineno(function)\n");
	const char *s = t ? strstr(t, needle) : NULL;

	return s ? (long)(s - t) : -1;
}

/* A run with exactly known numbers: period 100 ms, so that pstats' 3
 * decimals show the percall math. */
static void build_basic(struct pb *b)
{
	uint32_t mainf, f, g, pr, th;

	pb_init(b, 100000000, "./basic");
	mainf = pb_func(b, "main", "/src/basic.c", 30, "basic");
	f = pb_func(b, "compute", "/src/basic.c", 10, "basic");
	g = pb_func(b, "helper", "/src/util.c", 5, "basic");
	pr = pb_process(b, 42, 1, "/bin/basic", "./basic", 100000000);
	th = pb_thread(b, 42, pr, "basic");
	/* compute: self 6, total 8 (2 samples in helper called from compute) */
	pb_samples(b, th, pb_stack(b, 2, (uint32_t[]){ f, mainf }), 6, 1, 0);
	pb_samples(b, th, pb_stack(b, 3, (uint32_t[]){ g, f, mainf }), 2, 1, 0);
	pb_samples(b, th, pb_stack(b, 1, (uint32_t[]){ mainf }), 52, 1, 0);
}

static void test_basic(void)
{
	struct pb b;
	char *out;

	build_basic(&b);
	/* -v: every line of how it was sampled */
	out = render_v(&b.p);
	CHECK(strstr(out, "CPU time:   6.000s (600.00% of wall, sampled)\n"));
	CHECK(strstr(out, "Sampling:   10 Hz (period 100.000ms)\n"));
	CHECK(strstr(out, "Samples:    60\n"));
	CHECK(strstr(out, "Lost:       0 lost\n"));
	CHECK(strstr(out, "Processes:  1\n"));
	CHECK(strstr(out, "Threads:    1\n"));
	free(out);
	out = render(&b.p, NULL, 0, 0);
	/* header: a dozen lines at most, the sampler's workings left to -v */
	CHECK(strstr(out, "Command:    ./basic\n"));
	CHECK(strstr(out, "Exit:       0\n"));
	CHECK(strstr(out, "Wall time:  1.000s\n"));
	CHECK(strstr(out, "CPU time:   6.000s (600.00% of wall, sampled), 0.0% of it in the "
			  "kernel\n"));
	CHECK(strstr(out, "Samples:    60 at 10 Hz, 0 lost\n"));
	CHECK(strstr(out, "Processes:  1 (1 thread)\n"));
	CHECK(!strstr(out, "Sampling:"));
	CHECK(!strstr(out, "Lost:"));
	CHECK(header_lines(out) >= 6 && header_lines(out) <= 12);
	/* the cProfile table; what its columns mean is in the docs, not here */
	CHECK(strstr(out, "         60 samples in 6.000 CPU seconds\n"));
	CHECK(strstr(out, "   Ordered by: internal time (tottime)\n"));
	CHECK(!strstr(out, "Note:"));
	CHECK(strstr(out, "\n   ncalls  tottime  percall  cumtime  percall "
			  "filename:lineno(function)\n"));
	/* ncalls counts samples: no time per call, "-" in both percall columns */
	CHECK(strstr(out, "\n        8    0.600        -    0.800        - "
			  "/src/basic.c:10(compute)\n"));
	CHECK(strstr(out, "\n       60    5.200        -    6.000        - "
			  "/src/basic.c:30(main)\n"));
	CHECK(strstr(out, "\n        2    0.200        -    0.200        - "
			  "/src/util.c:5(helper)\n"));
	CHECK_EQ_INT(table_rows(out), 3);
	CHECK(!strstr(out, "more functions"));
	/* tottime order: main 5.2, compute 0.6, helper 0.2 */
	CHECK(table_pos(out, "(main)") < table_pos(out, "(compute)"));
	CHECK(table_pos(out, "(compute)") < table_pos(out, "(helper)"));
	/* hot lines: main's line 31 holds 52 of 60 samples */
	CHECK(strstr(out, "Hottest source lines"));
	CHECK(line_has(out, "/src/basic.c:31 ", "86.67%"));
	CHECK(line_has(out, "/src/basic.c:31 ", "5.200s"));
	CHECK(line_has(out, "/src/basic.c:31 ", "main"));
	/* one process, one thread: no per-process/thread tables */
	CHECK(!strstr(out, "\nProcesses\n"));
	CHECK(!strstr(out, "\nThreads\n"));
	CHECK(strstr(out, "Data quality: no problems found"));
	free(out);
	/* the thread's exact CPU time, when it reported one at its end */
	b.p.threads[0].cpu_ns = 6200000000ull;
	out = render(&b.p, NULL, 0, 0);
	CHECK(strstr(out, "CPU time:   6.000s (600.00% of wall, sampled; 6.200s measured), "));
	free(out);
	/* a sample that stands for two periods: the header's count and the
	 * table's are the same records, the periods said apart */
	b.p.samples[0].weight = 2;
	out = render_v(&b.p);
	CHECK(strstr(out, "Samples:    60 (weight 61"));
	CHECK(strstr(out, "         60 samples (61 periods of CPU) in 6.100 CPU seconds\n"));
	free(out);
	b.p.samples[0].weight = 1;

	/* --sort cumulative */
	out = render(&b.p, "cumulative", 0, 0);
	CHECK(strstr(out, "   Ordered by: cumulative time (cumtime)\n"));
	CHECK(table_pos(out, "(main)") < table_pos(out, "(compute)"));
	free(out);
	/* --sort name */
	out = render(&b.p, "name", 0, 0);
	CHECK(strstr(out, "   Ordered by: function name\n"));
	CHECK(table_pos(out, "(compute)") < table_pos(out, "(helper)"));
	CHECK(table_pos(out, "(helper)") < table_pos(out, "(main)"));
	free(out);
	/* --sort filename: /src/basic.c before /src/util.c */
	out = render(&b.p, "filename", 0, 0);
	CHECK(table_pos(out, "(helper)") > table_pos(out, "(compute)"));
	CHECK(table_pos(out, "(helper)") > table_pos(out, "(main)"));
	free(out);
	/* --sort line: helper 5, compute 10, main 30 */
	out = render(&b.p, "line", 0, 0);
	CHECK(table_pos(out, "(helper)") < table_pos(out, "(compute)"));
	CHECK(table_pos(out, "(compute)") < table_pos(out, "(main)"));
	free(out);
	/* a CUDA key leaves the CPU table at its default order */
	out = render(&b.p, "cuda_time_total", 0, 0);
	CHECK(strstr(out, "   Ordered by: internal time (tottime)\n"));
	free(out);
	/* the profiler's cost: a share of the program's CPU, "N times" from
	 * ten times on (a program that spends its time in our annotation
	 * writes read "15944.5%") */
	b.p.processes[0].overhead_weight = 30; /* 3 s of our code on the 6 s */
	out = render(&b.p, NULL, 0, 0);
	CHECK(strstr(out, "Samples:    60 at 10 Hz, 0 lost; profiler overhead 50.0% of the "
			  "program's CPU, in no table\n"));
	free(out);
	b.p.processes[0].overhead_weight = 1200;
	out = render(&b.p, NULL, 0, 0);
	CHECK(strstr(out, "; profiler overhead 20 times the program's CPU, in no table\n"));
	free(out);
	out = render_v(&b.p);
	CHECK(strstr(out, "Profiler overhead: 120.000s (20 times the program's CPU: 120.000s in its "
			  "hooks and callbacks on the program's threads; in no table)\n"));
	free(out);
	b.p.processes[0].overhead_weight = 0;
	/* quiet: no banner, no note */
	out = render(&b.p, NULL, 0, 1);
	CHECK(!strstr(out, "Command:"));
	CHECK(!strstr(out, "ncalls is the number of samples with the"));
	CHECK(strstr(out, "filename:lineno(function)"));
	free(out);
	pb_free(&b);
}

static void test_limit_and_names(void)
{
	struct pb b;
	char *out, name[32];
	static char names[20][32];
	static char longname[400];
	uint32_t funcs[20], mainf, pr, th, i;

	pb_init(&b, 1000000, "./many");
	mainf = pb_func(&b, "main", "m.c", 1, "many");
	for (i = 0; i < 20; i++) {
		snprintf(names[i], sizeof(names[i]), "f%02u", i);
		funcs[i] = pb_func(&b, names[i], "m.c", 100 + i, "many");
	}
	pr = pb_process(&b, 1, 0, "many", "./many", 1000000);
	th = pb_thread(&b, 1, pr, "");
	for (i = 0; i < 20; i++)
		pb_samples(&b, th, pb_stack(&b, 2, (uint32_t[]){ funcs[i], mainf }), 100 + i, 1,
			   0);
	/* 21 functions, default limit 15 */
	out = render(&b.p, NULL, 0, 0);
	CHECK_EQ_INT(table_rows(out), 15);
	/* the rows left out, with the share of the self time they hold */
	CHECK(strstr(out, "   (6 more functions: 23.29% of the self time; use --limit)\n"));
	free(out);
	out = render(&b.p, NULL, 3, 0);
	CHECK_EQ_INT(table_rows(out), 3);
	CHECK(strstr(out, "   (18 more functions: 83.84% of the self time; use --limit)\n"));
	/* f19 has the most self samples, then main (total only: self 0) is last */
	snprintf(name, sizeof(name), "m.c:119(f19)");
	CHECK(table_pos(out, name) >= 0);
	free(out);
	out = render(&b.p, NULL, -1, 0);
	CHECK_EQ_INT(table_rows(out), 21);
	CHECK(!strstr(out, "more functions"));
	free(out);
	pb_free(&b);

	/* function naming: no file → [module]:0(name) or ~:0(name); long names cut */
	memset(longname, 'x', sizeof(longname) - 1);
	longname[0] = 'L';
	pb_init(&b, 1000000, "./names");
	funcs[0] = pb_func(&b, "[libz.so.1+0x2a40]", "", 0, "libz.so.1");
	funcs[1] = pb_func(&b, "mystery", "", 0, "");
	funcs[2] = pb_func(&b, longname, "n.c", 9, "names");
	pr = pb_process(&b, 1, 0, "names", "./names", 1000000);
	th = pb_thread(&b, 1, pr, "");
	for (i = 0; i < 3; i++)
		pb_samples(&b, th, pb_stack(&b, 1, &funcs[i]), 30 + i, 1, 0);
	out = render(&b.p, NULL, 0, 0);
	CHECK(strstr(out, " [libz.so.1]:0([libz.so.1+0x2a40])\n"));
	CHECK(strstr(out, " ~:0(mystery)\n"));
	CHECK(strstr(out, "n.c:9(Lxxx"));
	CHECK(strstr(out, "x\xe2\x80\xa6)\n")); /* cut with "…" */
	CHECK(!strstr(out, longname));
	free(out);
	pb_free(&b);

	/* C++ functions without return type and parameters, as cProfile shows
	 * file:line(function); JSON keeps the signature */
	pb_init(&b, 1000000, "./cxx");
	funcs[0] = pb_func(&b, "matmul_forward(float*, float const*, float const*, int, int)",
			   "/src/train_gpt2.cu", 734, "cxx");
	funcs[1] = pb_func(&b, "void ns::run<int>(std::vector<int, std::allocator<int> > const&) "
			       "const", "/src/run.cc", 12, "cxx");
	pr = pb_process(&b, 1, 0, "cxx", "./cxx", 1000000);
	th = pb_thread(&b, 1, pr, "");
	for (i = 0; i < 2; i++)
		pb_samples(&b, th, pb_stack(&b, 1, &funcs[i]), 30 + i, 1, 0);
	out = render(&b.p, NULL, 0, 0);
	CHECK(strstr(out, " /src/train_gpt2.cu:734(matmul_forward)\n"));
	CHECK(strstr(out, " /src/run.cc:12(ns::run<int>)\n"));
	CHECK(!strstr(out, "float const*"));
	free(out);
	pb_free(&b);
}

static void test_processes_threads(void)
{
	struct pb b;
	char *out;
	const char *sec;
	uint32_t f, g, p1, p2, p3, t1, t2, t3;

	pb_init(&b, 1000000, "./forkexec");
	f = pb_func(&b, "parent_work", "fe.c", 10, "forkexec");
	g = pb_func(&b, "heavy", "split.c", 12, "split");
	p1 = pb_process(&b, 100, 1, "/x/forkexec", "./forkexec 0.3", 1000000);
	p2 = pb_process(&b, 101, 100, "/x/split", "/x/split 0.3", 1000000);
	b.p.processes[p1].clean_exit = 0; /* killed */
	b.p.processes[p1].exited = 0;
	b.p.exit_signal = 9;
	b.p.exit_status = -1;
	b.p.processes[p2].exit_code = 3;
	t1 = pb_thread(&b, 100, p1, "forkexec");
	t2 = pb_thread(&b, 101, p2, "split");
	t3 = pb_thread(&b, 102, p2, "worker-1");
	pb_samples(&b, t1, pb_stack(&b, 1, &f), 60, 1, 0);
	pb_samples(&b, t2, pb_stack(&b, 1, &g), 30, 1, 0);
	pb_samples(&b, t3, pb_stack(&b, 1, &g), 10, 1, 0);
	b.p.processes[p2].lost[CBN_LOST_BUFFER_FULL] = 3;
	b.p.processes[p1].lost[CBN_LOST_FOREIGN_PID] = 1;
	/* the child's first image (before exec): same pid, no samples */
	p3 = pb_process(&b, 101, 100, "/x/forkexec", "./forkexec 0.3", 1000000);
	b.p.processes[p3].clean_exit = 0;
	b.p.processes[p3].exited = 0;
	b.p.processes[p2].exec_seq = 1;
	pb_thread(&b, 101, p3, "forkexec");
	out = render(&b.p, NULL, 0, 0);
	CHECK(strstr(out, "Processes:  2 in 2 programs (3 program images: exec replaced 1; "
			  "4 threads, 3 with samples)\n"));
	CHECK(strstr(out, "  exec  "));
	CHECK(strstr(out, "   (1 thread without samples not shown)\n"));
	free(out);
	b.p.nprocesses--;
	b.p.nthreads--;

	/* exact CPU: the parent's thread and worker-1 reported theirs, the
	 * child's main thread did not (so neither did the child process) */
	b.p.threads[t1].cpu_ns = 61000000;
	b.p.threads[t3].cpu_ns = 15000000;
	out = render(&b.p, NULL, 0, 0);
	sec = strstr(out, "\nProcesses\n");
	REQUIRE(sec);
	CHECK(strstr(sec, "CPU    Measured    CPU %"));
	CHECK(line_has(sec, "./forkexec 0.3", "60.000ms    61.000ms"));
	CHECK(line_has(sec, "/x/split 0.3", "40.000ms           -"));
	sec = strstr(out, "\nThreads\n");
	REQUIRE(sec);
	CHECK(strstr(sec, "CPU    Measured    CPU %"));
	CHECK(line_has(sec, "worker-1", "10.000ms    15.000ms"));
	CHECK(line_has(sec, "split", "30.000ms           -"));
	CHECK(strstr(out, "(10.00% of wall, sampled), "));
	free(out);
	/* every thread known: the process and run totals are too */
	b.p.threads[t2].cpu_ns = 31000000;
	out = render(&b.p, NULL, 0, 0);
	CHECK(strstr(out, "(10.00% of wall, sampled; 107.000ms measured), "));
	sec = strstr(out, "\nProcesses\n");
	REQUIRE(sec);
	CHECK(line_has(sec, "/x/split 0.3", "40.000ms    46.000ms"));
	free(out);

	out = render_v(&b.p);
	CHECK(strstr(out, "Lost:       4 lost (3 buffer_full, 1 foreign_pid)\n"));
	CHECK(strstr(out, "Processes:  2\n"));
	CHECK(strstr(out, "Threads:    3\n"));
	free(out);
	out = render(&b.p, NULL, 0, 0);
	CHECK(strstr(out, "Exit:       killed by signal 9 (SIGKILL)\n"));
	CHECK(strstr(out, ", 4 lost (3 buffer_full, 1 foreign_pid)"));
	CHECK(strstr(out, "Processes:  2 in 2 programs (3 threads)\n"));
	CHECK(strstr(out, "\nProcesses\n"));
	CHECK(strstr(out, "\nThreads\n"));
	CHECK(strstr(out, "./forkexec 0.3"));
	CHECK(strstr(out, "/x/split 0.3"));
	CHECK(strstr(out, "killed by signal 9 (SIGKILL)  ./forkexec 0.3"));
	CHECK(strstr(out, "worker-1"));
	/* the process table: parent 60 %, child 40 % */
	CHECK(strstr(out, "60.00%"));
	CHECK(strstr(out, "40.00%"));
	/* thread table: worker-1 has 10 % */
	CHECK(strstr(out, "10.00%"));
	free(out);

	b.p.exit_signal = 11;
	out = render(&b.p, NULL, 0, 0);
	CHECK(strstr(out, "killed by signal 11 (SIGSEGV)"));
	free(out);
	pb_free(&b);
}

static void test_footer(void)
{
	struct pb b;
	char *out;
	uint32_t f, pr, th;

	pb_init(&b, 1000000, "./few");
	f = pb_func(&b, "f", "f.c", 1, "few");
	pr = pb_process(&b, 1, 0, "few", "./few", 1000000);
	th = pb_thread(&b, 1, pr, "");
	pb_samples(&b, th, pb_stack(&b, 1, &f), 7, 2, CBN_SAMPLE_TRUNCATED);
	pb_nodebug(&b, "libnodebug.so");
	pb_warning(&b, "7.0.cbp: damaged chunk 3 skipped");
	out = render_v(&b.p);
	CHECK(strstr(out, "Samples:    7 (weight 14: the timer overran 7 times)\n"));
	CHECK(strstr(out, "\nData quality\n"));
	CHECK(strstr(out, "  - 7.0.cbp: damaged chunk 3 skipped\n"));
	CHECK(strstr(out, "too few samples to trust (7); raise -F or run longer"));
	/* a module without debug info that holds no sample is no problem
	 * (test_debuginfo checks the line where it is) */
	CHECK(!strstr(out, "no debug info"));
	CHECK(strstr(out, "7 of 7 samples were cut at the maximum stack depth"));
	free(out);
	pb_free(&b);
}

/* Truncated samples whose Python chain was read to its end lose only native
 * frames at the root end: the warning says the Python cumtime is right; mixed
 * with others, it counts them. */
static void test_truncated_python(void)
{
	struct pb b;
	char *out;
	uint32_t f, pr, th, st;

	pb_init(&b, 1000000, "./deep");
	f = pb_func(&b, "down", "deep.py", 3, "");
	pr = pb_process(&b, 1, 0, "deep", "./deep", 1000000);
	th = pb_thread(&b, 1, pr, "");
	st = pb_stack(&b, 1, &f);
	pb_samples(&b, th, st, 5, 1, CBN_SAMPLE_TRUNCATED | PROF_SAMPLE_PY_WHOLE);
	pb_samples(&b, th, st, 95, 1, 0);
	out = render_v(&b.p);
	CHECK(strstr(out, "5 of 100 samples were cut at the maximum stack depth with all their "
			  "Python frames read: the Python functions' cumtime is right"));
	CHECK(!strstr(out, "outermost callers are missing"));
	free(out);
	pb_samples(&b, th, st, 3, 1, CBN_SAMPLE_TRUNCATED);
	out = render_v(&b.p);
	CHECK(strstr(out, "8 of 103 samples were cut at the maximum stack depth: their outermost "
			  "callers are missing, so cumtime of those callers is low (5 of them with "
			  "all their Python frames read"));
	free(out);
	pb_free(&b);
}

/* Hottest source lines: rows without line information (bare addresses) are
 * left out and counted; with none left, one line says why there are none. */
static void test_hot_lines_without_lines(void)
{
	struct pb b;
	char *out;
	uint32_t f[2], pr, th, zero = 0;

	pb_init(&b, 1000000, "./nolines");
	f[0] = pb_func(&b, "nolines+0x10 [no symbol]", "nolines+0x1c", 0, "nolines");
	f[1] = pb_func(&b, "f", "f.c", 1, "nolines");
	b.p.funcs[f[0]].flags = PROF_FUNC_NOSYM;
	pr = pb_process(&b, 1, 0, "nolines", "./nolines", 1000000);
	th = pb_thread(&b, 1, pr, "");
	pb_samples(&b, th, pb_stack_inl(&b, 1, &f[0], &zero, 0), 60, 1, 0);
	pb_samples(&b, th, pb_stack(&b, 1, &f[1]), 40, 1, 0);
	out = render(&b.p, NULL, 0, 0);
	CHECK(strstr(out, "Hottest source lines (self time"));
	CHECK(line_has(out, "f.c:2 ", "40.00%"));
	CHECK(!strstr(out, "   nolines+0x1c "));
	/* most of the CPU has no line: the title says so first, and how much */
	CHECK(strstr(out, "Hottest source lines (self time of the innermost frame; 60.00% of the "
			  "CPU is in code without line information, left out: see Data quality)"));
	CHECK(strstr(out, "   (60.00% of the CPU in code without line information left out: 1 "
			  "address)\n"));
	free(out);
	b.p.nsamples = 60; /* only the code without lines */
	out = render(&b.p, NULL, 0, 0);
	CHECK(strstr(out, "Hottest source lines: none with line information (no debug info where "
			  "the samples are: see Data quality)\n"));
	free(out);
	pb_free(&b);

	/* a named function of a library without debug info is no address:
	 * its share is said alone, not as "0 addresses" */
	pb_init(&b, 1000000, "./nolines");
	f[0] = pb_func(&b, "memcpy", "", 0, "libc.so.6");
	f[1] = pb_func(&b, "f", "f.c", 1, "nolines");
	pr = pb_process(&b, 1, 0, "nolines", "./nolines", 1000000);
	th = pb_thread(&b, 1, pr, "");
	pb_samples(&b, th, pb_stack(&b, 1, &f[0]), 30, 1, 0);
	pb_samples(&b, th, pb_stack(&b, 1, &f[1]), 70, 1, 0);
	out = render(&b.p, NULL, 0, 0);
	CHECK(strstr(out, "Hottest source lines (self time of the innermost frame)\n"));
	CHECK(strstr(out, "   (30.00% of the CPU in code without line information left out)\n"));
	CHECK(!strstr(out, "0 addresses"));
	free(out);
	pb_free(&b);
}

static void test_sort_keys_valid(void)
{
	static const char *const ok[] = { "tottime", "time", "cumtime", "cumulative", "ncalls",
					  "calls", "pcalls", "name", "filename", "file", "module",
					  "line", "nfl", "stdname", "cpu_time_total",
					  "cuda_time_total", "self_cuda_time_total",
					  "self_cpu_time_total", "cuda_time", "cpu_time", "count",
					  /* torch's spellings the CUDA tables accept */
					  "device_time_total", "self_device_time_total",
					  "device_time",
					  /* the memory allocation-sites table */
					  "mem", "allocs", "leaked", "peak", "avg_size" };
	static const char *const bad[] = { "bogus", "", "TOTTIME", "tottime ", "device",
					   "self_device_time", "device_time_avg", "gpu_time_total",
					   "cuda", "self_time", "memory", "MEM", "leaks" };
	size_t i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		CHECK(report_sort_key_valid(ok[i]));
		/* exactly the union of the tables' parsers */
		CHECK_EQ_INT(report_sort_key_valid(ok[i]),
			     cpu_sort_parse(ok[i]) >= 0 || cuda_sort_key_valid(ok[i]) ||
				     mem_sort_key_valid(ok[i]));
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(!report_sort_key_valid(bad[i]));
		CHECK(cpu_sort_parse(bad[i]) < 0 && !cuda_sort_key_valid(bad[i]) &&
		      !mem_sort_key_valid(bad[i]));
	}
	CHECK(!report_sort_key_valid(NULL));
}

/* Repeated notes, one line each: lines that differ only in a process id
 * fold into the first with the others' pids and a count. */
static void test_folded(void)
{
	char *lines[12];
	char *s = NULL, buf[12][96];
	size_t len = 0, i;
	FILE *f;

	for (i = 0; i < 10; i++) {
		snprintf(buf[i], sizeof(buf[i]), "CUDA: pid %zu (python3): forked from a CUDA process "
			 "without exec", 100 + i);
		lines[i] = buf[i];
	}
	snprintf(buf[10], sizeof(buf[10]), "CUDA: pid 7 (python3): traced, 12 records");
	snprintf(buf[11], sizeof(buf[11]), "555.0.cbp: corrupted at offset 0x10");
	lines[10] = buf[10];
	lines[11] = buf[11];
	REQUIRE((f = open_memstream(&s, &len)) != NULL);
	fmt_lines_folded(f, "- ", lines, 12);
	fclose(f);
	CHECK_STR(s, "- CUDA: pid 100 (python3): forked from a CUDA process without exec (the same "
		     "in pid 101, pid 102, pid 103, pid 104, pid 105, pid 106, pid 107, pid 108 and "
		     "1 more: 10 processes in all)\n"
		     "- CUDA: pid 7 (python3): traced, 12 records\n"
		     "- 555.0.cbp: corrupted at offset 0x10\n");
	free(s);
}

static void test_fmt(void)
{
	char buf[64];
	struct fmt_table *t;
	char *s = NULL;
	size_t len = 0;
	FILE *f;

	CHECK_STR(util_fmt_time(buf, sizeof(buf), 1500000000ull), "1.500s");
	CHECK_STR(util_fmt_time(buf, sizeof(buf), 2500000ull), "2.500ms");
	CHECK_STR(util_fmt_time(buf, sizeof(buf), 999ull), "0.999us");
	/* the unit of the printed value: 999.9999 ms is 1.000s */
	CHECK_STR(util_fmt_time(buf, sizeof(buf), 999999999ull), "1.000s");
	CHECK_STR(util_fmt_time(buf, sizeof(buf), 999999ull), "1.000ms");
	CHECK_STR(fmt_pct(buf, sizeof(buf), 1, 3), "33.33%");
	CHECK_STR(fmt_pct(buf, sizeof(buf), 1, 0), "0.00%");
	CHECK_STR(fmt_bytes(buf, sizeof(buf), 512), "512 B");
	CHECK_STR(fmt_bytes(buf, sizeof(buf), 1536), "1.50 KiB");
	CHECK_STR(fmt_hz(buf, sizeof(buf), 997), "997 Hz");
	CHECK_STR(fmt_hz(buf, sizeof(buf), 1000), "1 kHz");
	CHECK_STR(fmt_hz(buf, sizeof(buf), 1e9 / 10101010.0), "99 Hz");
	CHECK_STR(fmt_hz(buf, sizeof(buf), 99.5), "99.5 Hz");
	CHECK_EQ_INT(fmt_width("a\xe2\x80\xa6z"), 3);
	CHECK_STR(fmt_trunc(buf, sizeof(buf), "abcdefgh", 5, 0), "abcd\xe2\x80\xa6");
	CHECK_STR(fmt_trunc(buf, sizeof(buf), "/long/path/x.c", 6, 1), "\xe2\x80\xa6" "h/x.c");
	CHECK_STR(fmt_trunc(buf, sizeof(buf), "short", 10, 0), "short");
	/* a buffer too small never ends inside a UTF-8 sequence */
	CHECK_STR(fmt_trunc(buf, 6, "abcdefgh", 7, 0), "abcde");
	CHECK_STR(fmt_trunc(buf, 8, "abcdefgh", 7, 0), "abcdef");
	CHECK_STR(fmt_func(buf, sizeof(buf), "f", "a.c", 3, "m"), "a.c:3(f)");
	CHECK_STR(fmt_func(buf, sizeof(buf), "f", "", 0, "libm.so"), "[libm.so]:0(f)");
	CHECK_STR(fmt_func(buf, sizeof(buf), "f", "", 0, ""), "~:0(f)");
	/* paths under the current directory read relative to it, in a cell
	 * (fmt_rel_path) and in a sentence (fmt_rel_puts); others stay whole */
	{
		char cwd[4096], p[8400], *m = NULL;
		size_t mlen;

		REQUIRE(getcwd(cwd, sizeof(cwd)));
		snprintf(p, sizeof(p), "%s/src/a.c", cwd);
		CHECK_STR(fmt_rel_path(p), "src/a.c");
		CHECK_STR(fmt_rel_path("/elsewhere/a.c"), "/elsewhere/a.c");
		CHECK_STR(fmt_rel_path(NULL), "");
		snprintf(p, sizeof(p), "%sx/a.c", cwd);   /* a sibling, not under it */
		CHECK_STR(fmt_rel_path(p), p);
		snprintf(p, sizeof(p), "72 %% in heavy (%s/split.c:15) and light (%s/split.c:10)", cwd,
			 cwd);
		f = open_memstream(&m, &mlen);
		REQUIRE(f);
		fmt_rel_puts(f, p);
		fmt_rel_puts(f, NULL);
		fclose(f);
		CHECK_STR(m, "72 % in heavy (split.c:15) and light (split.c:10)");
		free(m);
	}

	t = fmt_table_new();
	REQUIRE(t);
	fmt_table_col(t, "Name", FMT_LEFT, 0, 6);
	fmt_table_col(t, "Calls", FMT_RIGHT, 0, 0);
	fmt_table_row(t);
	fmt_table_cell(t, "%s", "short");
	fmt_table_cell(t, "%d", 5);
	fmt_table_row(t);
	fmt_table_cell(t, "%s", "muchlonger");
	fmt_table_cell(t, "%d", 12345);
	CHECK_EQ_INT(fmt_table_nrows(t), 2);
	f = open_memstream(&s, &len);
	REQUIRE(f);
	fmt_table_print(t, f, FMT_RULES, 1);
	fclose(f);
	CHECK_STR(s, " -------------\n"
		     " Name    Calls\n"
		     " -------------\n"
		     " short       5\n"
		     " muchl\xe2\x80\xa6  12345\n"
		     " -------------\n");
	free(s);
	fmt_table_free(t);

	/* paths are cut from the left; min widths keep columns stable */
	t = fmt_table_new();
	REQUIRE(t);
	fmt_table_col(t, "Line", FMT_LEFT | FMT_CUT_LEFT, 0, 8);
	fmt_table_col(t, "N", FMT_RIGHT, 4, 0);
	fmt_table_row(t);
	fmt_table_cell(t, "%s", "/a/b/c/file.c:12");
	fmt_table_cell(t, "%d", 1);
	s = NULL;
	f = open_memstream(&s, &len);
	REQUIRE(f);
	fmt_table_print(t, f, FMT_PLAIN, 0);
	fclose(f);
	CHECK_STR(s, "Line         N\n"
		     "\xe2\x80\xa6" "le.c:12     1\n");
	free(s);
	fmt_table_free(t);

	s = NULL;
	f = open_memstream(&s, &len);
	REQUIRE(f);
	fmt_pad(f, "ab", 4, 1);
	fmt_pad(f, "|", 1, 0);
	fmt_pad(f, "abcdef", 3, 0);
	fclose(f);
	CHECK_STR(s, "  ab|ab\xe2\x80\xa6");
	free(s);

	/* one rule's advice once, with an evidence line per site, where its
	 * first finding was; another rule's own line */
	{
		struct rule_finding r[4] = {
			{ "alloc-churn", "hoist the buffer", "site a" },
			{ "leak", "free it", "site b" },
			{ "alloc-churn", "hoist the buffer", "site c" },
			{ "alloc-churn", "other advice", "site d" },
		};

		s = NULL;
		f = open_memstream(&s, &len);
		REQUIRE(f);
		fmt_recos(f, "Memory recommendations", r, 4);
		fclose(f);
		CHECK_STR(s, "Memory recommendations\n"
			     "  [alloc-churn] hoist the buffer\n"
			     "      evidence: site a\n"
			     "      evidence: site c\n"
			     "  [leak] free it\n"
			     "      evidence: site b\n"
			     "  [alloc-churn] other advice\n"
			     "      evidence: site d\n");
		free(s);
	}
}

/* Lines of the table that follows the line containing title: from the line
 * after its column header to the first blank line, into rows (at most max). */
static int mem_rows(const char *out, const char *title, char rows[][256], int max)
{
	const char *s = strstr(out, title), *e;
	int n = 0;

	if (!s)
		return -1;
	s = strstr(s, "Site\n");
	if (!s)
		return -1;
	s += 5;
	while (*s == '-')
		s = strchr(s, '\n') + 1;
	while (*s && *s != '\n' && n < max) {
		e = strchr(s, '\n');
		if (!e)
			break;
		if (*s != '-' && !memmem(s, (size_t)(e - s), "more sites", 10)) {
			snprintf(rows[n], 256, "%.*s", (int)(e - s), s);
			n++;
		}
		s = e + 1;
	}
	return n;
}

/* The memory view: summary, peak view, sites table with --sort, leaks; the
 * sampled labels; refusal; nothing at all without memory data. */
static void test_memory(void)
{
	struct pb b;
	uint32_t f_malloc, f_a, f_b, f_main, st_a, st_b;
	const uint64_t t0 = 1000000000ull;
	char rows[16][256];
	char *s;
	int i;

	pb_init(&b, 1000000, "./prog");
	b.p.start_ns = t0;
	pb_process(&b, 10, 1, "/tmp/prog", "./prog", 1000000);
	b.p.processes[0].start = t0;
	b.p.processes[0].end = t0 + 1000000000ull;
	pb_thread(&b, 10, 0, "prog");
	f_malloc = pb_func(&b, "malloc", "", 0, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	f_a = pb_func(&b, "load_table", "/src/table.c", 30, "/tmp/prog");
	f_b = pb_func(&b, "parse_line", "/src/parse.c", 80, "/tmp/prog");
	f_main = pb_func(&b, "main", "/src/main.c", 5, "/tmp/prog");
	{
		uint32_t f[] = { f_malloc, f_a, f_main }, l[] = { 0, 33, 9 };
		st_a = pb_stack_inl(&b, 3, f, l, 0);
	}
	{
		uint32_t f[] = { f_malloc, f_b, f_main }, l[] = { 0, 84, 11 };
		st_b = pb_stack_inl(&b, 3, f, l, 0x2);
	}
	s = render(&b.p, NULL, 0, 1);
	CHECK(strstr(s, "Memory") == NULL);
	free(s);

	/* exact mode: load_table holds 6 MiB at the peak and leaks 2 MiB of it;
	 * parse_line allocates 100 small blocks, all freed */
	pbm_on(&b, 0, 1, 0);
	b.p.processes[0].mem.allocs = 103;
	b.p.processes[0].mem.frees = 101;
	b.p.processes[0].mem.alloc_bytes = (6u << 20) + 6400;
	b.p.processes[0].mem.rss_peak = 40u << 20;
	pbm_range(&b, 0, t0 + 100000, t0 + 900000000ull, CBN_RANGE_PUSHPOP, 0, "load");
	pbm_alloc(&b, 0, t0 + 200000, 0x1000, 4u << 20, st_a);
	pbm_alloc(&b, 0, t0 + 300000, 0x2000, 2u << 20, st_a);
	for (i = 0; i < 100; i++)
		pbm_alloc(&b, 0, t0 + 400000 + 10 * (uint64_t)i, 0x10000 + 64 * (uint64_t)i, 64,
			  st_b);
	pbm_free(&b, 0, t0 + 500000000ull, 0x1000);
	for (i = 0; i < 100; i++)
		pbm_free(&b, 0, t0 + 600000000ull + (uint64_t)i, 0x10000 + 64 * (uint64_t)i);
	s = render(&b.p, NULL, 0, 1);
	if (getenv("CBN_TEST_DUMP"))
		fputs(s, stderr);
	CHECK(strstr(s, "Memory: host (every allocation recorded)\n") != NULL);
	CHECK(strstr(s, "  Peak:            6.01 MiB (exact) at 400.990us since start, during range "
			"\"load\"\n") != NULL);
	CHECK(strstr(s, "  RSS peak:        40.00 MiB (includes profiler overhead)\n") != NULL);
	CHECK(strstr(s, "  Allocations:     103 calls, 6.01 MiB allocated, 101 frees\n") != NULL);
	CHECK(strstr(s, "  Live at exit:    2.00 MiB\n") != NULL);
	/* peak view: bytes, % of peak, file:line(function), inlined marked */
	CHECK_EQ_INT(mem_rows(s, "Live at the peak (host), by site", rows, 16), 2);
	CHECK(strstr(rows[0], "6.00 MiB") && strstr(rows[0], "99.90%") &&
	      strstr(rows[0], "/src/table.c:33(load_table)"));
	CHECK(strstr(rows[1], "6.25 KiB") && strstr(rows[1], "/src/parse.c:84(parse_line [inlined])"));
	/* sites table, default order: bytes allocated */
	CHECK(strstr(s, "Allocation sites, host (sorted by bytes allocated (mem))") != NULL);
	CHECK_EQ_INT(mem_rows(s, "Allocation sites, host", rows, 16), 2);
	CHECK(strstr(rows[0], "load_table") && strstr(rows[0], "6.00 MiB") &&
	      strstr(rows[0], "3.00 MiB") && strstr(rows[0], "2.00 MiB"));
	CHECK(strstr(rows[1], "parse_line") && strstr(rows[1], "100") && strstr(rows[1], "64 B"));
	CHECK(strstr(s, "~") == NULL);
	/* leaks: one site, not labelled as an estimate in exact mode */
	CHECK(strstr(s, "Leaks, host: still allocated at exit 2.00 MiB, by site\n") != NULL);
	CHECK_EQ_INT(mem_rows(s, "Leaks, host", rows, 16), 1);
	CHECK(strstr(rows[0], "2.00 MiB") && strstr(rows[0], "load_table"));
	/* the memory rules reach the report: one site leaks (its 6 MiB peak is
	 * under peak-one-site's 32 MiB: mem_rules.c, thresholds that scale) */
	CHECK(strstr(s, "Memory recommendations\n") != NULL);
	CHECK(strstr(s, "[peak-one-site]") == NULL);
	CHECK(strstr(s, "[leak]") != NULL);
	/* the memory view follows the CPU table */
	CHECK(strstr(s, "Memory: host") > strstr(s, "filename:lineno(function)"));
	free(s);

	/* --sort allocs puts parse_line first; --limit 1 cuts the tables */
	s = render(&b.p, "allocs", 1, 1);
	if (getenv("CBN_TEST_DUMP"))
		fputs(s, stderr);
	CHECK(strstr(s, "(sorted by allocations (allocs))") != NULL);
	CHECK_EQ_INT(mem_rows(s, "Allocation sites, host", rows, 16), 1);
	CHECK(strstr(rows[0], "parse_line") != NULL);
	CHECK(strstr(s, "(1 more sites: ") != NULL && strstr(s, " of the bytes; use --limit)"));
	free(s);

	/* sampled: estimates marked, the leaks table labelled */
	b.p.processes[0].mem.rate = 524288;
	b.p.processes[0].mem.flags = 0;
	s = render(&b.p, "leaked", 0, 1);
	CHECK(strstr(s, "Memory: host (allocations sampled every 512.00 KiB on average: site "
			"figures marked ~ are sampled estimates)\n") != NULL);
	CHECK(strstr(s, "(estimated from sampled allocations)") != NULL);
	CHECK(strstr(s, "  Peak:            ~") != NULL);
	CHECK_EQ_INT(mem_rows(s, "Allocation sites, host", rows, 16), 2);
	CHECK(strstr(rows[0], "load_table") && strstr(rows[0], "~"));
	free(s);

	/* refused: one line says why */
	pbm_release(&b);
	b.p.processes[0].mem.state = CBN_MEM_REFUSED;
	b.p.processes[0].mem.reason = "the program is statically linked";
	s = render(&b.p, NULL, 0, 1);
	CHECK(strstr(s, "Host memory: not recorded: the program is statically linked\n") != NULL);
	CHECK(strstr(s, "Allocation sites") == NULL);
	free(s);
	pb_free(&b);
}

/* A GPU space, as mem_gpu.c fills it, goes through the same formatting:
 * exact figures, reserved bytes, the device's own sites and leaks. */
static void test_memory_gpu(void)
{
	struct pb b;
	struct mem_space sp;
	struct mem_site site[2];
	struct mem_peak_site at[1];
	uint32_t leaks[1];
	struct mem_analysis m;
	struct analysis an;
	struct report_opts o = { 0 };
	char *s = NULL, rows[16][256];
	size_t len = 0;
	FILE *f;
	uint32_t fn;

	pb_init(&b, 1000000, "./train");
	b.p.start_ns = 1000000000ull;
	pb_process(&b, 10, 1, "/tmp/train", "./train", 1000000);
	fn = pb_func(&b, "alloc_weights", "/src/model.cu", 12, "/tmp/train");
	memset(&sp, 0, sizeof(sp));
	sp.kind = MEM_SPACE_GPU;
	sp.process = PROF_NONE;
	sp.name = "GPU 0";
	sp.peak = 3ull << 30;
	sp.peak_ts = b.p.start_ns + 2000000000ull;
	sp.peak_exact = 1;
	sp.peak_range = PROF_NONE;
	sp.reserved_peak = 4ull << 30;
	sp.total = 80ull << 30;
	sp.allocs = 12;
	sp.frees = 11;
	sp.alloc_bytes = 5ull << 30;
	sp.live_end = 1 << 20;
	sp.at_peak = at;
	sp.nat_peak = 1;
	memset(site, 0, sizeof(site));
	site[0] = (struct mem_site){ .kind = MEM_SPACE_GPU, .device = 0, .func = fn,
				     .file = "/src/model.cu", .line = 40, .stack = PROF_NONE,
				     .bytes = 5.0 * (1u << 30), .allocs = 12, .records = 12,
				     .live_end_bytes = 1 << 20, .live_end_blocks = 1,
				     .max_live = 3.0 * (1u << 30) };
	/* another device's site: not in GPU 0's tables */
	site[1] = site[0];
	site[1].device = 1;
	site[1].line = 99;
	at[0] = (struct mem_peak_site){ 0, 3.0 * (1u << 30) };
	leaks[0] = 0;
	memset(&m, 0, sizeof(m));
	m.spaces = &sp;
	m.nspaces = 1;
	m.sites = site;
	m.nsites = 2;
	m.leaks = leaks;
	m.nleaks = 1;
	memset(&an, 0, sizeof(an));
	an.profile = &b.p;
	an.memory = &m;
	f = open_memstream(&s, &len);
	REQUIRE(f);
	CHECK_EQ_INT(report_mem_text(f, &an, &o), 0);
	fclose(f);
	CHECK(strstr(s, "Memory: GPU 0 (80.00 GiB of device memory)\n") != NULL);
	CHECK(strstr(s, "  Peak:            3.00 GiB (exact) at 2.000s since start\n") != NULL);
	CHECK(strstr(s, "  Reserved peak:   4.00 GiB") != NULL);
	CHECK(strstr(s, "RSS peak") == NULL);
	CHECK(strstr(s, "Sampled:") == NULL);
	CHECK(strstr(s, "~") == NULL);
	CHECK_EQ_INT(mem_rows(s, "Live at the peak (GPU 0)", rows, 16), 1);
	CHECK(strstr(rows[0], "100.00%") && strstr(rows[0], "/src/model.cu:40(alloc_weights)"));
	CHECK_EQ_INT(mem_rows(s, "Allocation sites, GPU 0", rows, 16), 1);
	CHECK(strstr(rows[0], "5.00 GiB") && strstr(rows[0], "12") && strstr(rows[0], ":40("));
	CHECK(strstr(s, "Leaks, GPU 0: not freed by the end 1.00 MiB, by site\n") != NULL);
	CHECK(strstr(s, "Allocation sites, host") == NULL);
	free(s);
	pb_free(&b);
}

int main(void)
{
	test_memory();
	test_memory_gpu();
	test_basic();
	test_limit_and_names();
	test_processes_threads();
	test_footer();
	test_truncated_python();
	test_sort_keys_valid();
	test_fmt();
	test_folded();
	test_hot_lines_without_lines();
	return test_result();
}
