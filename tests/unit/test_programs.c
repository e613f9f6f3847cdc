/*
 * test_programs.c — the run by program image and module (analysis/cpu/programs.c
 * and its writers): a build-like tree where 3 compiler processes hold most
 * of the CPU, in their own code, the kernel and libc, beside an assembler
 * and a make; each program's images, threads, CPU, kernel share, wall (the
 * union of its images' lives), hottest function (the kernel's rows left out)
 * and modules, most first; the text table lists them with the share of
 * what it leaves out, and a single program prints no table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "programs.h"
#include "report/report.h"
#include "analysed.h"
#include "testlib.h"
#include "test_cpu_builder.h"

#define MS 1000000ull

static char *render(const struct analysis *a, int limit)
{
	struct report_opts o = { .limit = limit };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	REQUIRE(f);
	CHECK_EQ_INT(report_text(f, a, &o), 0);
	fclose(f);
	return buf;
}

/* make (1 process), 3 x cc1, 2 x as: 1 ms a sample. */
static void build(struct pb *b)
{
	uint32_t parse, kern, memset_f, as_f, make_f, pm, pc[3], pa[2], t;
	int i;

	pb_init(b, MS, "make");
	parse = pb_func(b, "parse", "c-parser.c", 10, "/usr/lib/gcc/cc1");
	kern = pb_func(b, "[kernel] clear_page", "", 0, "kernel");
	memset_f = pb_func(b, "memset", "", 0, "/lib/libc.so.6");
	as_f = pb_func(b, "assemble", "", 0, "/usr/bin/as");
	make_f = pb_func(b, "reap", "", 0, "/usr/bin/make");
	pm = pb_process(b, 10, 1, "/usr/bin/make", "make", MS);
	b->p.processes[pm].start = 0;
	b->p.processes[pm].end = 1000 * MS;
	t = pb_thread(b, 10, pm, "make");
	pb_samples(b, t, pb_stack(b, 1, &make_f), 10, 1, 0);
	for (i = 0; i < 3; i++) {
		/* 0-300, 250-550, 600-900 ms: 850 ms of wall together */
		static const uint64_t s[3] = { 0, 250, 600 };

		pc[i] = pb_process(b, 20 + (uint32_t)i, 10, "/usr/lib/gcc/cc1", "cc1 x.c", MS);
		b->p.processes[pc[i]].start = s[i] * MS;
		b->p.processes[pc[i]].end = (s[i] + 300) * MS;
		t = pb_thread(b, 20 + (uint32_t)i, pc[i], "cc1");
		pb_samples(b, t, pb_stack(b, 1, &parse), 200, 1, 0);
		pb_samples(b, t, pb_stack(b, 2, (uint32_t[]){ kern, parse }), 60, 1, 0);
		pb_samples(b, t, pb_stack(b, 2, (uint32_t[]){ memset_f, parse }), 40, 1, 0);
	}
	for (i = 0; i < 2; i++) {
		pa[i] = pb_process(b, 30 + (uint32_t)i, 10, "/usr/bin/as", "as x.s", MS);
		b->p.processes[pa[i]].start = 400 * MS;
		b->p.processes[pa[i]].end = 450 * MS;
		t = pb_thread(b, 30 + (uint32_t)i, pa[i], "as");
		pb_samples(b, t, pb_stack(b, 1, &as_f), 45, 1, 0);
	}
}

static void test_analysis(void)
{
	struct pb b;
	const struct analysis *a;
	const struct prog_analysis *g;
	const struct program *cc1, *as;

	build(&b);
	a = analysed(&b.p);
	g = a->programs;
	REQUIRE(g != NULL);
	CHECK_EQ_INT(g->n, 3);
	CHECK_EQ_INT(g->with_cpu, 3);
	CHECK_EQ_INT(g->cpu_ns, 1000 * MS);
	cc1 = &g->v[0];
	CHECK_STR(cc1->name, "cc1");
	CHECK_STR(cc1->exe, "/usr/lib/gcc/cc1");
	CHECK_EQ_INT(cc1->images, 3);
	CHECK_EQ_INT(cc1->threads, 3);
	CHECK_EQ_INT(cc1->cpu_ns, 900 * MS);
	CHECK_EQ_INT(cc1->kernel_ns, 180 * MS);
	CHECK_EQ_INT(cc1->wall_ns, 850 * MS);
	/* its hottest function is its own, not the kernel's */
	CHECK_STR(b.p.funcs[cc1->top_func].name, "parse");
	CHECK_EQ_INT(cc1->top_func_ns, 600 * MS);
	CHECK_EQ_INT(cc1->nmods, 3);
	CHECK_STR(cc1->mods[0].name, "cc1");
	CHECK_EQ_INT(cc1->mods[0].cpu_ns, 600 * MS);
	CHECK_STR(cc1->mods[1].name, "[kernel]");
	CHECK_STR(cc1->mods[2].name, "libc.so.6");
	CHECK_EQ_INT(cc1->mods[2].cpu_ns, 120 * MS);
	as = &g->v[1];
	CHECK_STR(as->name, "as");
	CHECK_EQ_INT(as->images, 2);
	CHECK_EQ_INT(as->cpu_ns, 90 * MS);
	CHECK_EQ_INT(as->wall_ns, 50 * MS);   /* two lives at once: one stretch */
	CHECK_STR(g->v[2].name, "make");
	CHECK_STR(programs_name_of(&b.p, 0), "make");
	pb_free(&b);
}

static void test_text(void)
{
	struct pb b;
	char *out, *sec;

	build(&b);
	out = render(analysed(&b.p), 0);
	sec = strstr(out, "\nPrograms (CPU by program image");
	REQUIRE(sec != NULL);
	/* programs first, then the per-process rows */
	CHECK(strstr(out, "\nProcesses\n") > sec);
	CHECK(strstr(sec, "90.00%   900.000ms          3   850.000ms  cc1\n"));
	CHECK(strstr(sec, "60.00%   600.000ms                           cc1\n"));
	CHECK(strstr(sec, "18.00%   180.000ms                           [kernel]\n"));
	CHECK(strstr(sec, "12.00%   120.000ms                           libc.so.6\n"));
	CHECK(strstr(sec, "9.00%    90.000ms          2    50.000ms  as\n"));
	CHECK(strstr(sec, "1.00%    10.000ms          1      1.000s  make\n"));
	/* make's 1 % is below the share whose modules are listed */
	CHECK(!strstr(sec, "  make\n    "));
	CHECK(strstr(out, "Processes:  6 in 3 programs (6 threads)\n"));
	free(out);
	/* --limit 1: the programs left out are counted, with their share */
	out = render(analysed(&b.p), 1);
	sec = strstr(out, "\nPrograms (CPU by program image");
	REQUIRE(sec != NULL);
	CHECK(strstr(sec, "   (2 more programs: 10.00% of the CPU; use --limit)\n"));
	free(out);
	/* one program: no table */
	b.p.nprocesses = 1;
	b.p.nthreads = 1;
	b.p.nsamples = 10;
	out = render(analysed(&b.p), 0);
	CHECK(!strstr(out, "Programs (CPU by program image"));
	free(out);
	pb_free(&b);
}

int main(void)
{
	test_analysis();
	test_text();
	return test_result();
}
