/*
 * test_cpu.c — CPU aggregation on hand-built profiles: self vs total, recursion
 * counted once per sample, inlined leaf frames, weights and per-process periods,
 * hot lines, thread/process totals, every sort key, warnings, the compiler's
 * name and level, and speed.
 */
#include <time.h>

#include "cpu.h"
#include "testlib.h"
#include "test_cpu_builder.h"

static const struct cpu_func *find(const struct cpu_profile *c, uint32_t func)
{
	size_t i;

	for (i = 0; i < c->nfuncs; i++)
		if (c->funcs[i].func == func)
			return &c->funcs[i];
	return NULL;
}

static void test_self_total(void)
{
	struct pb b;
	struct cpu_profile *c;
	uint32_t mainf, a, bf, unused, pr, th, s1, s2;
	const struct cpu_func *fa, *fb, *fm;

	pb_init(&b, 1000000, "./prog");
	mainf = pb_func(&b, "main", "/src/prog.c", 40, "prog");
	a = pb_func(&b, "a", "/src/prog.c", 10, "prog");
	bf = pb_func(&b, "b", "/src/prog.c", 20, "prog");
	unused = pb_func(&b, "unused", "/src/prog.c", 30, "prog");
	pr = pb_process(&b, 100, 1, "/bin/prog", "./prog", 1000000);
	th = pb_thread(&b, 100, pr, "prog");
	s1 = pb_stack(&b, 3, (uint32_t[]){ bf, a, mainf });
	s2 = pb_stack(&b, 2, (uint32_t[]){ a, mainf });
	pb_samples(&b, th, s1, 3, 1, 0);
	pb_samples(&b, th, s2, 1, 1, 0);

	REQUIRE(cpu_aggregate(&b.p, &c) == 0);
	CHECK_EQ_INT(c->nfuncs, 3); /* "unused" has no samples */
	CHECK(find(c, unused) == NULL);
	fa = find(c, a);
	fb = find(c, bf);
	fm = find(c, mainf);
	REQUIRE(fa && fb && fm);
	CHECK_EQ_INT(fb->self_w, 3);
	CHECK_EQ_INT(fb->total_w, 3);
	CHECK_EQ_INT(fa->self_w, 1);
	CHECK_EQ_INT(fa->total_w, 4);
	CHECK_EQ_INT(fm->self_w, 0);
	CHECK_EQ_INT(fm->total_w, 4);
	CHECK_EQ_INT(fa->self_ns, 1000000);
	CHECK_EQ_INT(fa->total_ns, 4000000);
	CHECK_EQ_INT(c->samples, 4);
	CHECK_EQ_INT(c->weight, 4);
	CHECK_EQ_INT(c->cpu_ns, 4000000);
	/* default order is tottime: b, a, main */
	CHECK_EQ_INT(c->funcs[0].func, bf);
	CHECK_EQ_INT(c->funcs[1].func, a);
	CHECK_EQ_INT(c->funcs[2].func, mainf);
	cpu_free(c);
	pb_free(&b);
}

static void test_recursion_once(void)
{
	struct pb b;
	struct cpu_profile *c;
	uint32_t mainf, r, leaf, pr, th, s1, s2;

	pb_init(&b, 1000000, "./rec");
	mainf = pb_func(&b, "main", "rec.c", 50, "rec");
	r = pb_func(&b, "recurse", "rec.c", 10, "rec");
	leaf = pb_func(&b, "burn", "rec.c", 5, "rec");
	pr = pb_process(&b, 7, 1, "rec", "./rec", 1000000);
	th = pb_thread(&b, 7, pr, "");
	/* recurse appears 5 times on each stack */
	s1 = pb_stack(&b, 7, (uint32_t[]){ leaf, r, r, r, r, r, mainf });
	s2 = pb_stack(&b, 6, (uint32_t[]){ r, r, r, r, r, mainf });
	pb_samples(&b, th, s1, 10, 1, 0);
	pb_samples(&b, th, s2, 5, 1, 0);
	REQUIRE(cpu_aggregate(&b.p, &c) == 0);
	REQUIRE(find(c, r) != NULL);
	CHECK_EQ_INT(find(c, r)->total_w, 15); /* not 75 */
	CHECK_EQ_INT(find(c, r)->self_w, 5);
	CHECK(find(c, r)->total_ns <= c->cpu_ns);
	CHECK_EQ_INT(find(c, mainf)->total_ns, c->cpu_ns);
	CHECK_EQ_INT(find(c, leaf)->self_w, 10);
	cpu_free(c);
	pb_free(&b);
}

static void test_inline_leaf(void)
{
	struct pb b;
	struct cpu_profile *c;
	uint32_t mainf, outer, inl, pr, th, st;

	pb_init(&b, 1000000, "./inl");
	mainf = pb_func(&b, "main", "inl.c", 30, "inl");
	outer = pb_func(&b, "outer", "inl.c", 20, "inl");
	inl = pb_func(&b, "add_inline", "inl.h", 3, "inl");
	pr = pb_process(&b, 8, 1, "inl", "./inl", 1000000);
	th = pb_thread(&b, 8, pr, "");
	/* one pc expanded into add_inline (inlined into outer), outer, main */
	st = pb_stack_inl(&b, 3, (uint32_t[]){ inl, outer, mainf }, (uint32_t[]){ 4, 22, 31 },
			  0x1);
	pb_samples(&b, th, st, 6, 1, 0);
	REQUIRE(cpu_aggregate(&b.p, &c) == 0);
	CHECK_EQ_INT(find(c, inl)->self_w, 6);
	CHECK_EQ_INT(find(c, outer)->self_w, 0);
	CHECK_EQ_INT(find(c, outer)->total_w, 6);
	REQUIRE(c->nlines == 1);
	CHECK_STR(c->lines[0].file, "inl.h");
	CHECK_EQ_INT(c->lines[0].line, 4);
	CHECK_EQ_INT(c->lines[0].func, inl);
	cpu_free(c);
	pb_free(&b);
}

/* Processes with different periods: ns are computed per process, then summed. */
static void test_periods_and_weights(void)
{
	struct pb b;
	struct cpu_profile *c;
	uint32_t f, g, p1, p2, t1, t2, t3, s1, s2;

	pb_init(&b, 1000000, "./tree");
	f = pb_func(&b, "f", "a.c", 1, "a");
	g = pb_func(&b, "g", "b.c", 1, "b");
	p1 = pb_process(&b, 10, 1, "a", "./a", 1000000);  /* 1 ms */
	p2 = pb_process(&b, 11, 10, "b", "./b", 4000000); /* 4 ms */
	t1 = pb_thread(&b, 10, p1, "a");
	t2 = pb_thread(&b, 11, p2, "b");
	t3 = pb_thread(&b, 12, p2, "b-worker");
	s1 = pb_stack(&b, 1, (uint32_t[]){ f });
	s2 = pb_stack(&b, 1, (uint32_t[]){ g });
	pb_samples(&b, t1, s1, 10, 1, 0);
	pb_samples(&b, t2, s2, 5, 1, 0);
	pb_samples(&b, t3, s2, 2, 3, CBN_SAMPLE_TRUNCATED); /* overran: weight 3 */
	pb_samples(&b, t3, s1, 1, 1, CBN_SAMPLE_PC_ONLY);
	b.p.processes[p2].lost[CBN_LOST_BUFFER_FULL] = 4;
	b.p.processes[p1].lost[CBN_LOST_REENTRANT] = 1;

	REQUIRE(cpu_aggregate(&b.p, &c) == 0);
	CHECK_EQ_INT(c->samples, 18);
	CHECK_EQ_INT(c->weight, 10 + 5 + 6 + 1);
	CHECK_EQ_INT(c->cpu_ns, 10 * 1000000ull + (5 + 6 + 1) * 4000000ull);
	CHECK_EQ_INT(find(c, g)->self_w, 11);
	CHECK_EQ_INT(find(c, g)->self_ns, 11 * 4000000ull);
	CHECK_EQ_INT(find(c, f)->self_ns, 10 * 1000000ull + 4000000ull);
	CHECK_EQ_INT(c->procs[p1].ns, 10000000);
	CHECK_EQ_INT(c->procs[p2].ns, 12 * 4000000ull);
	CHECK_EQ_INT(c->procs[p2].samples, 8);
	CHECK_EQ_INT(c->threads[t3].weight, 7);
	CHECK_EQ_INT(c->threads[t3].samples, 3);
	CHECK_EQ_INT(c->threads[t3].ns, 7 * 4000000ull);
	CHECK_EQ_INT(c->procs[p1].ns + c->procs[p2].ns, c->cpu_ns);
	CHECK_EQ_INT(c->truncated, 2);
	CHECK_EQ_INT(c->pc_only, 1);
	CHECK_EQ_INT(c->lost[CBN_LOST_BUFFER_FULL], 4);
	CHECK_EQ_INT(c->lost[CBN_LOST_REENTRANT], 1);
	CHECK_EQ_INT(c->lost_total, 5);
	CHECK_EQ_INT(c->nthreads_seen, 3);
	/* a process without a period falls back to the root period */
	b.p.processes[p2].period_ns = 0;
	CHECK_EQ_INT(prof_period_of_thread(&b.p, t2), 1000000);
	cpu_free(c);
	pb_free(&b);
}

static void test_lines(void)
{
	struct pb b;
	struct cpu_profile *c;
	uint32_t f, g, nodbg, pr, th, s1, s2, s3, s4;

	pb_init(&b, 1000000, "./lines");
	f = pb_func(&b, "f", "l.c", 10, "l");
	g = pb_func(&b, "g", "l.c", 20, "l");
	nodbg = pb_func(&b, "[libx.so+0x10]", "", 0, "libx.so");
	pr = pb_process(&b, 1, 0, "l", "./l", 1000000);
	th = pb_thread(&b, 1, pr, "");
	s1 = pb_stack_inl(&b, 2, (uint32_t[]){ f, g }, (uint32_t[]){ 12, 25 }, 0);
	s2 = pb_stack_inl(&b, 2, (uint32_t[]){ f, g }, (uint32_t[]){ 13, 26 }, 0);
	s3 = pb_stack_inl(&b, 1, (uint32_t[]){ f }, (uint32_t[]){ 12 }, 0); /* same line as s1 */
	s4 = pb_stack_inl(&b, 1, (uint32_t[]){ nodbg }, (uint32_t[]){ 0 }, 0);
	pb_samples(&b, th, s1, 4, 1, 0);
	pb_samples(&b, th, s2, 5, 1, 0);
	pb_samples(&b, th, s3, 2, 1, 0);
	pb_samples(&b, th, s4, 7, 1, 0);
	REQUIRE(cpu_aggregate(&b.p, &c) == 0);
	REQUIRE(c->nlines == 2); /* the line-less frame has no line row */
	CHECK_EQ_INT(c->lines[0].line, 12);
	CHECK_EQ_INT(c->lines[0].self_w, 6);
	CHECK_EQ_INT(c->lines[1].line, 13);
	CHECK_EQ_INT(c->lines[1].self_w, 5);
	CHECK_EQ_INT(find(c, nodbg)->self_w, 7);
	cpu_free(c);
	pb_free(&b);
}

static int pos(const struct cpu_profile *c, uint32_t func)
{
	size_t i;

	for (i = 0; i < c->nfuncs; i++)
		if (c->funcs[i].func == func)
			return (int)i;
	return -1;
}

static void test_sort_keys(void)
{
	struct pb b;
	struct cpu_profile *c;
	uint32_t mainf, zeta, alpha, mid, pr, th;

	pb_init(&b, 1000000, "./s");
	/* self: alpha 5, zeta 3, mid 1; total: main 12, mid 4 (4 via zeta),
	 * alpha 5, zeta 3 — chosen so that each key gives a different order */
	mainf = pb_func(&b, "main", "z/main.c", 3, "s");
	zeta = pb_func(&b, "zeta", "a/zeta.c", 200, "s");
	alpha = pb_func(&b, "alpha", "m/alpha.c", 7, "s");
	mid = pb_func(&b, "mid", "a/zeta.c", 50, "s");
	pr = pb_process(&b, 1, 0, "s", "./s", 1000000);
	th = pb_thread(&b, 1, pr, "");
	pb_samples(&b, th, pb_stack(&b, 2, (uint32_t[]){ alpha, mainf }), 5, 1, 0);
	pb_samples(&b, th, pb_stack(&b, 3, (uint32_t[]){ zeta, mid, mainf }), 3, 1, 0);
	pb_samples(&b, th, pb_stack(&b, 2, (uint32_t[]){ mid, mainf }), 1, 1, 0);
	pb_samples(&b, th, pb_stack(&b, 1, (uint32_t[]){ mainf }), 3, 1, 0);
	REQUIRE(cpu_aggregate(&b.p, &c) == 0);

	CHECK_EQ_INT(cpu_sort_parse("tottime"), CPU_SORT_TOTTIME);
	CHECK_EQ_INT(cpu_sort_parse("time"), CPU_SORT_TOTTIME);
	CHECK_EQ_INT(cpu_sort_parse("cumulative"), CPU_SORT_CUMTIME);
	CHECK_EQ_INT(cpu_sort_parse("cumtime"), CPU_SORT_CUMTIME);
	CHECK_EQ_INT(cpu_sort_parse("calls"), CPU_SORT_NCALLS);
	CHECK_EQ_INT(cpu_sort_parse("ncalls"), CPU_SORT_NCALLS);
	CHECK_EQ_INT(cpu_sort_parse("module"), CPU_SORT_FILENAME);
	CHECK_EQ_INT(cpu_sort_parse("file"), CPU_SORT_FILENAME);
	CHECK_EQ_INT(cpu_sort_parse("nfl"), CPU_SORT_NFL);
	CHECK_EQ_INT(cpu_sort_parse("stdname"), CPU_SORT_STDNAME);
	CHECK_EQ_INT(cpu_sort_parse("line"), CPU_SORT_LINE);
	CHECK_EQ_INT(cpu_sort_parse("cuda_time_total"), -1);
	CHECK_EQ_INT(cpu_sort_parse("bogus"), -1);
	CHECK_EQ_INT(cpu_sort_parse(NULL), -1);
	CHECK_STR(cpu_sort_desc(CPU_SORT_TOTTIME), "internal time (tottime)");
	CHECK_STR(cpu_sort_desc(CPU_SORT_CUMTIME), "cumulative time (cumtime)");

	/* tottime: alpha 5, main 3 (tie with zeta 3, broken by total: main 12), zeta, mid */
	cpu_sort(c, &b.p, CPU_SORT_TOTTIME);
	CHECK_EQ_INT(pos(c, alpha), 0);
	CHECK_EQ_INT(pos(c, mainf), 1);
	CHECK_EQ_INT(pos(c, zeta), 2);
	CHECK_EQ_INT(pos(c, mid), 3);
	/* cumtime: main 12, alpha 5, mid 4, zeta 3 */
	cpu_sort(c, &b.p, CPU_SORT_CUMTIME);
	CHECK_EQ_INT(pos(c, mainf), 0);
	CHECK_EQ_INT(pos(c, alpha), 1);
	CHECK_EQ_INT(pos(c, mid), 2);
	CHECK_EQ_INT(pos(c, zeta), 3);
	/* ncalls (samples on the stack): same as cumtime with one period */
	cpu_sort(c, &b.p, CPU_SORT_NCALLS);
	CHECK_EQ_INT(pos(c, mainf), 0);
	CHECK_EQ_INT(pos(c, zeta), 3);
	/* name: alpha, main, mid, zeta */
	cpu_sort(c, &b.p, CPU_SORT_NAME);
	CHECK_EQ_INT(pos(c, alpha), 0);
	CHECK_EQ_INT(pos(c, mainf), 1);
	CHECK_EQ_INT(pos(c, mid), 2);
	CHECK_EQ_INT(pos(c, zeta), 3);
	/* filename: a/zeta.c (zeta self 3 before mid self 1), m/alpha.c, z/main.c */
	cpu_sort(c, &b.p, CPU_SORT_FILENAME);
	CHECK_EQ_INT(pos(c, zeta), 0);
	CHECK_EQ_INT(pos(c, mid), 1);
	CHECK_EQ_INT(pos(c, alpha), 2);
	CHECK_EQ_INT(pos(c, mainf), 3);
	/* line: 3 main, 7 alpha, 50 mid, 200 zeta */
	cpu_sort(c, &b.p, CPU_SORT_LINE);
	CHECK_EQ_INT(pos(c, mainf), 0);
	CHECK_EQ_INT(pos(c, alpha), 1);
	CHECK_EQ_INT(pos(c, mid), 2);
	CHECK_EQ_INT(pos(c, zeta), 3);
	/* nfl: by name first */
	cpu_sort(c, &b.p, CPU_SORT_NFL);
	CHECK_EQ_INT(pos(c, alpha), 0);
	CHECK_EQ_INT(pos(c, zeta), 3);
	/* stdname: "a/zeta.c:200(zeta)" < "a/zeta.c:50(mid)" as strings */
	cpu_sort(c, &b.p, CPU_SORT_STDNAME);
	CHECK_EQ_INT(pos(c, zeta), 0);
	CHECK_EQ_INT(pos(c, mid), 1);
	CHECK_EQ_INT(pos(c, alpha), 2);
	CHECK_EQ_INT(pos(c, mainf), 3);
	cpu_free(c);
	pb_free(&b);
}

static int has_warning(char **w, size_t n, const char *needle)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strstr(w[i], needle))
			return 1;
	return 0;
}

static void test_warnings(void)
{
	struct pb b;
	struct cpu_profile *c;
	char **w;
	size_t n;
	uint32_t f, pr, th;

	pb_init(&b, 1000000, "./w");
	f = pb_func(&b, "f", "w.c", 1, "w");
	pr = pb_process(&b, 1, 0, "w", "./w", 1000000);
	th = pb_thread(&b, 1, pr, "");
	pb_samples(&b, th, pb_stack(&b, 1, (uint32_t[]){ f }), 10, 1, 0);
	pb_warning(&b, "1.0.cbp: file truncated at byte 4096; the rest of that process is lost");
	pb_nodebug(&b, "libfoo.so");
	pb_nodebug(&b, "libbar.so");
	b.p.processes[pr].lost[CBN_LOST_NO_THREAD] = 5;
	REQUIRE(cpu_aggregate(&b.p, &c) == 0);
	REQUIRE(cpu_warnings(&b.p, c, &w, &n) == 0);
	CHECK(has_warning(w, n, "file truncated at byte 4096"));
	/* modules without debug info that hold no sample: no line
	 * (test_debuginfo checks the line where samples are) */
	CHECK(!has_warning(w, n, "no debug info"));
	CHECK(has_warning(w, n, "too few samples to trust (10); raise -F or run longer"));
	CHECK(has_warning(w, n, "5 samples were lost"));
	CHECK(!has_warning(w, n, "maximum stack depth"));
	cpu_warnings_free(w, n);
	cpu_free(c);

	/* enough samples, nothing wrong: no warnings */
	b.p.nwarnings = 0;
	b.p.nnodebug_modules = 0;
	b.p.processes[pr].lost[CBN_LOST_NO_THREAD] = 0;
	pb_samples(&b, th, 0, 100, 1, 0);
	REQUIRE(cpu_aggregate(&b.p, &c) == 0);
	REQUIRE(cpu_warnings(&b.p, c, &w, &n) == 0);
	CHECK_EQ_INT(n, 0);
	cpu_warnings_free(w, n);
	cpu_free(c);

	/* a thread that ran 30 ms (THREAD_END) without a sample is named, with
	 * the CPU the tables miss; under 4 periods, in a process with capture
	 * windows (its CPU outside them has no samples by design), or with its
	 * samples in the profiler's code, it is not */
	th = pb_thread(&b, 7, pr, "worker-1");
	b.p.threads[th].cpu_ns = 30000000;
	REQUIRE(cpu_aggregate(&b.p, &c) == 0);
	REQUIRE(cpu_warnings(&b.p, c, &w, &n) == 0);
	CHECK(has_warning(w, n, "1 thread ran without a single sample: worker-1 (tid 7, 30.0 ms); "
			   "30.0 ms of CPU are missing from the tables"));
	cpu_warnings_free(w, n);
	cpu_free(c);
	b.p.threads[th].cpu_ns = 3000000;
	REQUIRE(cpu_aggregate(&b.p, &c) == 0);
	REQUIRE(cpu_warnings(&b.p, c, &w, &n) == 0);
	CHECK_EQ_INT(n, 0);
	cpu_warnings_free(w, n);
	cpu_free(c);
	b.p.threads[th].cpu_ns = 30000000;
	b.p.processes[pr].capture.mode = CBN_CAPTURE_ALL + 1;
	REQUIRE(cpu_aggregate(&b.p, &c) == 0);
	REQUIRE(cpu_warnings(&b.p, c, &w, &n) == 0);
	CHECK(!has_warning(w, n, "without a single sample"));
	cpu_warnings_free(w, n);
	cpu_free(c);
	b.p.processes[pr].capture.mode = CBN_CAPTURE_ALL;
	/* nor one whose samples all fell in the profiler's code (a loop of
	 * annotation marks): sampled, in no table */
	b.p.threads[th].overhead_weight = 25;
	b.p.processes[pr].overhead_weight = 25;
	REQUIRE(cpu_aggregate(&b.p, &c) == 0);
	REQUIRE(cpu_warnings(&b.p, c, &w, &n) == 0);
	CHECK(!has_warning(w, n, "without a single sample"));
	cpu_warnings_free(w, n);
	cpu_free(c);
	b.p.threads[th].overhead_weight = b.p.processes[pr].overhead_weight = 0;
	CHECK_STR(cpu_lost_name(CBN_LOST_FOREIGN_PID), "foreign_pid");
	CHECK(cpu_lost_name(7) == NULL);
	pb_free(&b);
}

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* 1 M samples x 30 frames over 50 k distinct stacks (a realistic spread; the
 * per-stack pass makes identical stacks cheap) in well under a second. */
static void test_speed(void)
{
	struct pb b;
	struct cpu_profile *c;
	uint32_t funcs[30], pr, th;
	size_t i, k, nstack = 50000, nsamp = 1000000;
	double t0, dt, limit = 1.0;
	uint64_t sum_self = 0;

#if defined(__SANITIZE_ADDRESS__)
	limit = 10.0; /* ASan builds are several times slower */
#endif
	pb_init(&b, 1000000, "./big");
	for (i = 0; i < 2000; i++)
		pb_func(&b, "fn", "big.c", (uint32_t)i + 1, "big");
	pr = pb_process(&b, 1, 0, "big", "./big", 1000000);
	th = pb_thread(&b, 1, pr, "");
	srand(42);
	for (i = 0; i < nstack; i++) {
		for (k = 0; k < 30; k++)
			funcs[k] = (uint32_t)(rand() % 2000);
		pb_stack(&b, 30, funcs);
	}
	b.p.samples = pb_alloc(nsamp, sizeof(*b.p.samples));
	REQUIRE(b.p.samples);
	for (i = 0; i < nsamp; i++) {
		struct prof_sample *s = &b.p.samples[i];

		s->ts = i;
		s->stack = (uint32_t)((i * 2654435761u) % nstack);
		s->thread = th;
		s->weight = 1;
		s->flags = 0;
	}
	b.p.nsamples = nsamp;

	t0 = cpu_seconds();
	REQUIRE(cpu_aggregate(&b.p, &c) == 0);
	dt = cpu_seconds() - t0;
	fprintf(stderr, "aggregated %zu samples x 30 frames in %.3f s\n", nsamp, dt);
	CHECK(dt < limit);
	for (i = 0; i < c->nfuncs; i++) {
		sum_self += c->funcs[i].self_w;
		CHECK(c->funcs[i].total_w <= nsamp);
		CHECK(c->funcs[i].total_w >= c->funcs[i].self_w);
	}
	CHECK_EQ_INT(sum_self, nsamp);
	CHECK_EQ_INT(c->weight, nsamp);
	cpu_free(c);
	pb_free(&b);
}

/* The Machine line's compiler: up to the first flag, a vendor's dashes kept. */
static void test_producer(void)
{
	char b[64];

	cpu_producer_name("GNU C17 12.2.0 -mtune=generic -march=x86-64 -g -O2", b, sizeof(b));
	CHECK_STR(b, "GNU C17 12.2.0");
	cpu_producer_name("GNU C89 10.3.1 20210422 (Red Hat 10.3.1-1) -m64 -g -O3", b, sizeof(b));
	CHECK_STR(b, "GNU C89 10.3.1 20210422 (Red Hat 10.3.1-1)");
	CHECK_EQ_INT(cpu_producer_opt("GNU C89 10.3.1 20210422 (Red Hat 10.3.1-1) -m64 -g -O3"), 3);
	cpu_producer_name("Debian clang version 14.0.6", b, sizeof(b));
	CHECK_STR(b, "Debian clang version 14.0.6");
	CHECK_EQ_INT(cpu_producer_opt("Debian clang version 14.0.6"), -1);
	cpu_producer_name("clang version 17.0.6 (https://github.com/llvm/llvm-project 6009708b-4) ",
			  b, 8);
	CHECK_STR(b, "clang v");
	cpu_producer_name("GNU C11 12.2.0   -O0", b, sizeof(b));
	CHECK_STR(b, "GNU C11 12.2.0");
	CHECK_EQ_INT(cpu_producer_opt("GNU C11 12.2.0   -O0"), 0);
	CHECK_EQ_INT(cpu_producer_opt("GNU C11 12.2.0 -g -Os"), 10);
}

int main(void)
{
	test_self_total();
	test_recursion_once();
	test_inline_leaf();
	test_periods_and_weights();
	test_lines();
	test_sort_keys();
	test_warnings();
	test_producer();
	test_speed();
	return test_result();
}
