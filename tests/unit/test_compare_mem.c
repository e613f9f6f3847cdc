/*
 * test_compare_mem.c — the gate's memory metrics (mem.peak, mem.leaked,
 * mem.gpu[N].peak, mem.site[PATTERN].bytes|allocs) on JSON reports written by
 * the real writer from hand-built memory views: verdicts, sampling noise of
 * host estimates, exact GPU figures, a baseline without memory data (exit 2,
 * "no memory data in the baseline"), a current run without it (n/a, exit 3),
 * parse errors, and the in-memory current run (--baseline) agreeing with its
 * JSON report.
 */

#include "testlib.h"
#include "test_gate_harness.h"
#include "test_mem_fixture.h"

/* The gate on two reports, or on a report and the run in memory (cur), with
 * --fail exprs. */
static int run(const char *base, const char *cur_path, const struct gate_run *cur,
	       const char **fail, size_t nfail)
{
	struct cmp_opts o = {fail, nfail, NULL, 0, NULL, NULL, 0};

	return gh_run(base, cur_path, cur, &o);
}

static void test_parse(void)
{
	struct cmp_expr e;
	char err[512];

	CHECK_EQ_INT(cmp_expr_parse("mem.peak:+10%", CMP_LEVEL_FAIL, &e, err, sizeof(err)), 0);
	CHECK(e.metric == CMP_M_MEM_PEAK && e.unit == CMP_U_BYTES);
	CHECK_EQ_INT(cmp_expr_parse("mem.peak:+64MiB", CMP_LEVEL_FAIL, &e, err, sizeof(err)), 0);
	CHECK(e.th.value == 64.0 * 1048576);
	CHECK(cmp_expr_parse("mem.peak:+5ms", CMP_LEVEL_FAIL, &e, err, sizeof(err)) < 0);
	CHECK(strstr(err, "bytes") != NULL);
	CHECK_EQ_INT(cmp_expr_parse("mem.leaked:+0", CMP_LEVEL_FAIL, &e, err, sizeof(err)), 0);
	CHECK(e.metric == CMP_M_MEM_LEAKED);
	CHECK_EQ_INT(cmp_expr_parse("mem.gpu[1].peak:+1GiB", CMP_LEVEL_WARN, &e, err, sizeof(err)),
		     0);
	CHECK(e.metric == CMP_M_MEM_GPU && e.device == 1 && e.field == CMP_F_PEAK);
	CHECK(cmp_expr_parse("mem.gpu[x].peak:+1%", CMP_LEVEL_FAIL, &e, err, sizeof(err)) < 0);
	CHECK(strstr(err, "device number") != NULL);
	CHECK_EQ_INT(cmp_expr_parse("mem.site[grow_*].bytes:+20%", CMP_LEVEL_FAIL, &e, err,
				    sizeof(err)), 0);
	CHECK(e.metric == CMP_M_MEM_SITE && e.field == CMP_F_BYTES && e.line == 0);
	CHECK_EQ_INT(cmp_expr_parse("mem.site[app.c:77].allocs:+5", CMP_LEVEL_FAIL, &e, err,
				    sizeof(err)), 0);
	CHECK(e.field == CMP_F_ALLOCS && e.line == 77 && e.unit == CMP_U_COUNT);
	CHECK(cmp_expr_parse("mem.site[f].self:+1%", CMP_LEVEL_FAIL, &e, err, sizeof(err)) < 0);
	CHECK(strstr(err, ".bytes, .allocs") != NULL);
	CHECK(cmp_expr_parse("mem.total:+1%", CMP_LEVEL_FAIL, &e, err, sizeof(err)) < 0);
	CHECK(strstr(err, "unknown memory metric") != NULL);
}

int main(void)
{
	struct profile p;
	struct analysis a;
	const char *base, *same, *cur, *none, *gpuonly;
	const char *all[] = {"mem.peak:+10%", "mem.gpu[0].peak:+0", "mem.site[grow_*].bytes:+20%",
			     "mem.site[app.c:77].bytes:+0", "mem.leaked:+0",
			     "mem.site[upload].allocs:+0"};
	const char *peak[] = {"mem.peak:+10%"};

	snprintf(gh_dir, sizeof(gh_dir), "%s", ex_tmpdir());
	test_parse();
	mf_profile(&p);

	a = mf_analysis(&p, MF_BOTH);
	base = gh_write_report(&a, "base");
	same = gh_write_report(&a, "same");
	CHECK_EQ_INT(run(base, same, NULL, all, 6), CMP_PASS);
	CHECK_STR(gh_status_of("mem.peak"), "ok");
	CHECK_STR(gh_status_of("mem.gpu[0].peak"), "ok");
	CHECK_STR(gh_status_of("mem.site[grow_*].bytes"), "ok");
	CHECK_STR(gh_status_of("mem.site[app.c:77].bytes"), "ok");
	CHECK_STR(gh_status_of("mem.leaked"), "ok");
	CHECK_STR(gh_status_of("mem.site[upload].allocs"), "ok");
	CHECK(strstr(gh_out, "2.9 MiB") != NULL || strstr(gh_out, "2.86 MiB") != NULL);

	/* no expressions: the default report warns on the host peak too */
	CHECK_EQ_INT(run(base, same, NULL, NULL, 0), CMP_PASS);
	CHECK_STR(gh_status_of("mem.peak"), "ok");

	/* the host peak doubles: exact counters fail it... */
	a = mf_analysis(&p, MF_BOTH);
	mf_spaces[0].peak = 2 * MF_HOST_PEAK;
	cur = gh_write_report(&a, "peak2");
	CHECK_EQ_INT(run(base, cur, NULL, peak, 1), CMP_REGRESSION);
	CHECK_STR(gh_status_of("mem.peak"), "FAIL");
	/* ...a sampled estimate of the same change at 512 KiB is within
	 * noise: 2 sigma = 2 sqrt((3 + 6) MB x 512 KiB) = 4.3 MB > 3 MB */
	a = mf_analysis(&p, MF_BOTH);
	mf_spaces[0].peak_exact = 0;
	base = gh_write_report(&a, "base_est");
	mf_spaces[0].peak = 2 * MF_HOST_PEAK;
	cur = gh_write_report(&a, "peak2_est");
	CHECK_EQ_INT(run(base, cur, NULL, peak, 1), CMP_PASS);
	CHECK_STR(gh_status_of("mem.peak"), "within noise");
	/* ...but 10x is not */
	mf_spaces[0].peak = 10 * MF_HOST_PEAK;
	cur = gh_write_report(&a, "peak10_est");
	CHECK_EQ_INT(run(base, cur, NULL, peak, 1), CMP_REGRESSION);
	CHECK_STR(gh_status_of("mem.peak"), "FAIL");

	/* GPU: exact, so +64 MiB of 256 fails +10% */
	a = mf_analysis(&p, MF_BOTH);
	base = gh_write_report(&a, "base");
	mf_spaces[1].peak = MF_GPU_PEAK + (64 << 20);
	cur = gh_write_report(&a, "gpu_more");
	{
		const char *f[] = {"mem.gpu[0].peak:+10%"}, *g[] = {"mem.gpu[0].peak:+30%"};

		CHECK_EQ_INT(run(base, cur, NULL, f, 1), CMP_REGRESSION);
		CHECK_STR(gh_status_of("mem.gpu[0].peak"), "FAIL");
		CHECK_EQ_INT(run(base, cur, NULL, g, 1), CMP_PASS);
		/* a device the baseline does not have */
		f[0] = "mem.gpu[1].peak:+10%";
		CHECK_EQ_INT(run(base, cur, NULL, f, 1), CMP_USAGE);
		CHECK(strstr(gh_err, "no memory data for GPU 1 in the baseline") != NULL);
	}

	/* leaks in exact mode: one more leaked MiB fails +0 */
	a = mf_analysis(&p, MF_BOTH);
	mf_mem.rate = 1;
	mf_mem.exact = 1;
	base = gh_write_report(&a, "leak_base");
	mf_sites[1].live_end_bytes = 2 * 1048576;
	cur = gh_write_report(&a, "leak_more");
	{
		const char *f[] = {"mem.leaked:+0", "mem.site[leak_table].bytes:+0"};

		CHECK_EQ_INT(run(base, cur, NULL, f, 2), CMP_REGRESSION);
		CHECK_STR(gh_status_of("mem.leaked"), "FAIL");
		CHECK_STR(gh_status_of("mem.site[leak_table].bytes"), "ok");
	}

	/* a site pattern: by function glob, by FILE:LINE, and one that matches
	 * nothing in the baseline */
	a = mf_analysis(&p, MF_BOTH);
	base = gh_write_report(&a, "base");
	mf_sites[0].bytes *= 1.5;
	cur = gh_write_report(&a, "site_more");
	{
		const char *f[] = {"mem.site[grow_*].bytes:+20%", "mem.site[app.c:42].bytes:+20%",
				   "mem.site[app.c:77].bytes:+20%"};
		const char *n[] = {"mem.site[nosuch].bytes:+20%"};

		/* 52 MB at 512 KiB: 2 sigma = 2 sqrt(131 MB x 512 KiB) = 16.6 MB < 26 MB */
		CHECK_EQ_INT(run(base, cur, NULL, f, 3), CMP_REGRESSION);
		CHECK_STR(gh_status_of("mem.site[grow_*].bytes"), "FAIL");
		CHECK_STR(gh_status_of("mem.site[app.c:42].bytes"), "FAIL");
		CHECK_STR(gh_status_of("mem.site[app.c:77].bytes"), "ok");
		CHECK_EQ_INT(run(base, cur, NULL, n, 1), CMP_USAGE);
		CHECK(strstr(gh_err, "no allocation site in the baseline") != NULL);
	}

	/* a baseline without memory data: exit 2, said plainly */
	a = mf_analysis(&p, -1);
	none = gh_write_report(&a, "nomem");
	CHECK_EQ_INT(run(none, base, NULL, all, 1), CMP_USAGE);
	CHECK(strstr(gh_err, "no memory data in the baseline") != NULL);
	CHECK(strstr(gh_err, "--memory") != NULL);
	/* a current run without it: n/a, and a --fail gate makes that exit 3 */
	CHECK_EQ_INT(run(base, none, NULL, all, 2), CMP_UNMEASURABLE);
	CHECK_STR(gh_status_of("mem.peak"), "n/a");
	CHECK(strstr(gh_out, "no memory data in the current run") != NULL);
	/* GPU only: no host peak in the baseline */
	a = mf_analysis(&p, MF_GPU);
	gpuonly = gh_write_report(&a, "gpuonly");
	CHECK_EQ_INT(run(gpuonly, gpuonly, NULL, peak, 1), CMP_USAGE);
	CHECK(strstr(gh_err, "no host memory data in the baseline") != NULL);
	{
		const char *g[] = {"mem.gpu[0].peak:+0"};

		CHECK_EQ_INT(run(gpuonly, gpuonly, NULL, g, 1), CMP_PASS);
	}

	/* the run just analysed, in memory, reads as its JSON report does */
	a = mf_analysis(&p, MF_BOTH);
	base = gh_write_report(&a, "base");
	mf_spaces[0].peak = 2 * MF_HOST_PEAK;
	{
		struct gate_run g;

		REQUIRE(gate_run_from_analysis(&a, &g) == 0);
		CHECK(g.has_memory && g.mem_peak == 2.0 * MF_HOST_PEAK);
		CHECK(g.nmem_gpus == 1 && g.mem_gpus[0].peak == (double)MF_GPU_PEAK);
		CHECK(g.nmem_sites == 3 && g.mem_leaked == 1048576);
		CHECK_EQ_INT(run(base, NULL, &g, all, 6), CMP_REGRESSION);
		CHECK_STR(gh_status_of("mem.peak"), "FAIL");
		CHECK_STR(gh_status_of("mem.site[grow_*].bytes"), "ok");
		gate_run_free(&g);
		a.memory = NULL;
		REQUIRE(gate_run_from_analysis(&a, &g) == 0);
		CHECK(!g.has_memory);
		CHECK_EQ_INT(run(base, NULL, &g, all, 1), CMP_UNMEASURABLE);
		gate_run_free(&g);
	}

	pb_profile_free(&p);
	if (!getenv("KEEP"))
		ex_rmdir(gh_dir);
	return test_result();
}
