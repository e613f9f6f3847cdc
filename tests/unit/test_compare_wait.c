/*
 * test_compare_wait.c — the gate's waiting metrics (wait.total,
 * cpu.efficiency, lock[SITE].wait) on JSON reports written by the real writer
 * from the hand-filled waiting view (test_wait_fixture.h): parsing and its
 * errors, the keys read back from JSON (gate_run_from_json) and from the
 * analysis (gate_run_from_analysis) alike, verdicts on more off-CPU time, a
 * lower efficiency and a longer lock wait, a baseline without --off-cpu
 * (exit 2, "record the baseline with --off-cpu"), a current run without it
 * (n/a, exit 3 for --fail), and a baseline lock site that does not exist.
 */

#include "testlib.h"
#include "test_gate_harness.h"
#include "test_wait_fixture.h"

/* The gate on two reports with --fail exprs. */
static int run(const char *base, const char *cur_path, const char **fail, size_t nfail)
{
	struct cmp_opts o = {fail, nfail, NULL, 0, NULL, NULL, 0};

	return gh_run(base, cur_path, NULL, &o);
}

static void test_parse(void)
{
	struct cmp_expr e;
	char err[512];

	CHECK_EQ_INT(cmp_expr_parse("wait.total:+10%", CMP_LEVEL_FAIL, &e, err, sizeof(err)), 0);
	CHECK(e.metric == CMP_M_WAIT_TOTAL && e.unit == CMP_U_NS);
	CHECK_EQ_INT(cmp_expr_parse("wait.total:+50ms", CMP_LEVEL_FAIL, &e, err, sizeof(err)), 0);
	CHECK(e.th.value == 50e6);
	CHECK_EQ_INT(cmp_expr_parse("cpu.efficiency:-0.05", CMP_LEVEL_FAIL, &e, err,
				    sizeof(err)), 0);
	CHECK(e.metric == CMP_M_CPU_EFFICIENCY && e.unit == CMP_U_RATIO && e.th.dir == -1);
	CHECK_EQ_INT(cmp_expr_parse("lock[worker].wait:+20%", CMP_LEVEL_WARN, &e, err,
				    sizeof(err)), 0);
	CHECK(e.metric == CMP_M_LOCK && e.field == CMP_F_WAIT && e.unit == CMP_U_NS);
	CHECK_STR(e.pattern, "worker");
	CHECK(cmp_expr_parse("lock[worker].self:+20%", CMP_LEVEL_FAIL, &e, err, sizeof(err)) < 0);
	CHECK(strstr(err, ".wait") != NULL);
	CHECK(cmp_expr_parse("lock[worker]:+20%", CMP_LEVEL_FAIL, &e, err, sizeof(err)) < 0);
	CHECK(cmp_expr_parse("wait.sum:+10%", CMP_LEVEL_FAIL, &e, err, sizeof(err)) < 0);
	CHECK(strstr(err, "wait.total, cpu.efficiency or lock[SITE].wait") != NULL);
	CHECK(cmp_expr_parse("cpu.eff:+10%", CMP_LEVEL_FAIL, &e, err, sizeof(err)) < 0);
	CHECK(strstr(err, "cpu.efficiency") != NULL);
}

/* The keys read back from a JSON report and from the analysis agree. */
static void test_keys(const struct analysis *a, const char *path)
{
	struct gate_run j, m;
	char err[256];

	REQUIRE(gate_run_from_json(path, "baseline", &j, err, sizeof(err)) == 0);
	REQUIRE(gate_run_from_analysis(a, &m) == 0);
	CHECK(j.has_waiting && m.has_waiting);
	CHECK(j.wait_offcpu && m.wait_offcpu);
	CHECK(j.wait_off_ns == 110 * EX_MS && m.wait_off_ns == j.wait_off_ns);
	CHECK(j.wait_efficiency == 0.6 && m.wait_efficiency == j.wait_efficiency);
	REQUIRE(j.nlocks == 1 && m.nlocks == 1);
	CHECK_STR(j.locks[0].function, "worker");
	CHECK_STR(m.locks[0].function, "worker");
	CHECK(j.locks[0].wait_ns == 80 * EX_MS && m.locks[0].wait_ns == j.locks[0].wait_ns);
	gate_run_free(&j);
	gate_run_free(&m);
}

int main(void)
{
	struct profile p;
	struct analysis a;
	const char *base, *same, *cur, *plain;
	const char *all[] = {"wait.total:+10%", "cpu.efficiency:-0.05", "lock[work*].wait:+10%"};

	snprintf(gh_dir, sizeof(gh_dir), "%s", ex_tmpdir());
	test_parse();
	wf_profile(&p);

	a = wf_analysis(&p, 1);
	base = gh_write_report(&a, "base");
	same = gh_write_report(&a, "same");
	test_keys(&a, base);
	CHECK_EQ_INT(run(base, same, all, 3), CMP_PASS);
	CHECK_STR(gh_status_of("wait.total"), "ok");
	CHECK_STR(gh_status_of("cpu.efficiency"), "ok");
	CHECK_STR(gh_status_of("lock[work*].wait"), "ok");

	/* more waiting, less efficiency, a longer lock wait */
	a = wf_analysis(&p, 1);
	wf_w.off_ns = 150 * EX_MS;
	wf_w.efficiency = 0.4;
	wf_locks[0].wait_ns = 120 * EX_MS;
	cur = gh_write_report(&a, "worse");
	CHECK_EQ_INT(run(base, cur, all, 3), CMP_REGRESSION);
	CHECK_STR(gh_status_of("wait.total"), "FAIL");
	CHECK_STR(gh_status_of("cpu.efficiency"), "FAIL");
	CHECK_STR(gh_status_of("lock[work*].wait"), "FAIL");
	{
		const char *loose[] = {"wait.total:+50%", "cpu.efficiency:-0.3",
				       "lock[work*].wait:+60%"};

		CHECK_EQ_INT(run(base, cur, loose, 3), CMP_PASS);
	}

	/* the lock gone from the current run: 0, an improvement */
	a = wf_analysis(&p, 1);
	wf_w.nlocks = 0;
	cur = gh_write_report(&a, "nolock");
	CHECK_EQ_INT(run(base, cur, all + 2, 1), CMP_PASS);
	CHECK_STR(gh_status_of("lock[work*].wait"), "ok");
	/* a lock site the baseline does not have: exit 2 */
	{
		const char *nosite[] = {"lock[nosuch].wait:+10%"};

		CHECK_EQ_INT(run(base, same, nosite, 1), CMP_USAGE);
		CHECK(strstr(gh_err, "matching 'nosuch'") != NULL);
	}

	/* without --off-cpu: efficiency still gates, the off-CPU figures cannot */
	a = wf_analysis(&p, 0);
	plain = gh_write_report(&a, "plain");
	CHECK_EQ_INT(run(plain, base, all, 1), CMP_USAGE);
	CHECK(strstr(gh_err, "record the baseline with --off-cpu") != NULL);
	CHECK_EQ_INT(run(plain, plain, all + 1, 1), CMP_PASS);
	CHECK_EQ_INT(run(base, plain, all, 3), CMP_UNMEASURABLE);
	CHECK_STR(gh_status_of("wait.total"), "n/a");
	CHECK_STR(gh_status_of("cpu.efficiency"), "ok");
	CHECK(strstr(gh_out, "without --off-cpu") != NULL);

	/* no waiting object at all */
	a.wait = NULL;
	plain = gh_write_report(&a, "nowait");
	CHECK_EQ_INT(run(plain, base, all + 1, 1), CMP_USAGE);
	CHECK(strstr(gh_err, "no waiting object in the baseline") != NULL);

	wf_free(&p);
	ex_rmdir(gh_dir);
	return test_result();
}
