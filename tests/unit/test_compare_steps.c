/*
 * test_compare_steps.c — the gate's step metrics (step.median, step.p90,
 * step.count) on JSON reports written by the real writer from hand-built
 * steps views: parsing and its errors, verdicts on a slower median and p90
 * and on fewer steps, the default report's step.median warning, a baseline
 * without steps (exit 2, "no steps in the baseline"), a current run without
 * them (n/a, "could not measure", exit 3 for --fail), an older report (schema
 * 2) read as one without steps, and the in-memory current run (--baseline)
 * agreeing with its JSON report.
 */

#include "testlib.h"
#include "test_gate_harness.h"
#include "test_steps_fixture.h"

/* The gate on two reports, or on a report and the run in memory (cur), with
 * --fail exprs (or none: the default report). */
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

	CHECK_EQ_INT(cmp_expr_parse("step.median:+10%", CMP_LEVEL_FAIL, &e, err, sizeof(err)), 0);
	CHECK(e.metric == CMP_M_STEP_MEDIAN && e.unit == CMP_U_NS);
	CHECK_EQ_INT(cmp_expr_parse("step.p90:+5ms", CMP_LEVEL_WARN, &e, err, sizeof(err)), 0);
	CHECK(e.metric == CMP_M_STEP_P90 && e.th.value == 5e6);
	CHECK_EQ_INT(cmp_expr_parse("step.median:+10%,>=2ms", CMP_LEVEL_FAIL, &e, err,
				    sizeof(err)), 0);
	CHECK(e.th.has_floor && e.th.floor == 2e6);
	CHECK_EQ_INT(cmp_expr_parse("step.count:-1", CMP_LEVEL_FAIL, &e, err, sizeof(err)), 0);
	CHECK(e.metric == CMP_M_STEP_COUNT && e.unit == CMP_U_COUNT && e.th.dir == -1);
	CHECK(cmp_expr_parse("step.count:+5ms", CMP_LEVEL_FAIL, &e, err, sizeof(err)) < 0);
	CHECK(cmp_expr_parse("step.mean:+10%", CMP_LEVEL_FAIL, &e, err, sizeof(err)) < 0);
	CHECK(strstr(err, "step.median, step.p90 or step.count") != NULL);
	CHECK(cmp_expr_parse("steps:+10%", CMP_LEVEL_FAIL, &e, err, sizeof(err)) < 0);
	CHECK(strstr(err, "step.*") != NULL);
	CHECK(cmp_expr_check("step.p90:+20%", err, sizeof(err)) == 0);
}

/* The report at path with its schema_version rewritten to v and its steps
 * object dropped: what an older cbottleneck wrote. */
static const char *older(const char *path, int v)
{
	static char out[300];
	char *text = ex_slurp(path, NULL), *s, *e;
	FILE *f;

	REQUIRE(text != NULL);
	s = strstr(text, "\"schema_version\":");
	REQUIRE(s != NULL);
	s += strlen("\"schema_version\":");
	while (*s == ' ' || *s == '\t')
		s++;
	*s = (char)('0' + v);
	/* "steps" is written after "memory", before "warnings": cut it out */
	s = strstr(text, ",\n\t\"steps\":");
	e = s ? strstr(s, ",\n\t\"warnings\":") : NULL;
	REQUIRE(s && e);
	memmove(s, e, strlen(e) + 1);
	snprintf(out, sizeof(out), "%s/v%d.json", gh_dir, v);
	f = fopen(out, "w");
	REQUIRE(f != NULL);
	fputs(text, f);
	fclose(f);
	free(text);
	return out;
}

int main(void)
{
	struct profile p;
	struct analysis a;
	const char *base, *same, *cur, *none;
	const char *all[] = {"step.median:+10%", "step.p90:+10%", "step.count:-0"};

	snprintf(gh_dir, sizeof(gh_dir), "%s", ex_tmpdir());
	test_parse();
	sf_profile(&p, 1);

	a = sf_analysis(&p, 1);
	base = gh_write_report(&a, "base");
	same = gh_write_report(&a, "same");
	CHECK_EQ_INT(run(base, same, NULL, all, 3), CMP_PASS);
	CHECK_STR(gh_status_of("step.median"), "ok");
	CHECK_STR(gh_status_of("step.p90"), "ok");
	CHECK_STR(gh_status_of("step.count"), "ok");
	CHECK(strstr(gh_out, "10.0 ms") != NULL || strstr(gh_out, "10 ms") != NULL);

	/* no expressions: the default report warns on the median step too */
	CHECK_EQ_INT(run(base, same, NULL, NULL, 0), CMP_PASS);
	CHECK_STR(gh_status_of("step.median"), "ok");

	/* the median step 20% slower: a single measurement, no noise excuse */
	a = sf_analysis(&p, 1);
	sf_sa.median_ns = SF_MEDIAN * 12 / 10;
	cur = gh_write_report(&a, "slower");
	CHECK_EQ_INT(run(base, cur, NULL, all, 3), CMP_REGRESSION);
	CHECK_STR(gh_status_of("step.median"), "FAIL");
	CHECK_STR(gh_status_of("step.p90"), "ok");
	{
		const char *loose[] = {"step.median:+25%"}, *floor[] = {"step.median:+10%,>=5ms"};

		CHECK_EQ_INT(run(base, cur, NULL, loose, 1), CMP_PASS);
		CHECK_EQ_INT(run(base, cur, NULL, floor, 1), CMP_PASS);
	}
	/* the default report only warns */
	CHECK_EQ_INT(run(base, cur, NULL, NULL, 0), CMP_PASS);
	CHECK_STR(gh_status_of("step.median"), "WARN");

	/* a slower tail, and one step fewer */
	a = sf_analysis(&p, 1);
	sf_sa.p90_ns = SF_P90 * 2;
	sf_sa.nsteps = SF_NSTEPS - 1;
	cur = gh_write_report(&a, "tail");
	CHECK_EQ_INT(run(base, cur, NULL, all, 3), CMP_REGRESSION);
	CHECK_STR(gh_status_of("step.median"), "ok");
	CHECK_STR(gh_status_of("step.p90"), "FAIL");
	CHECK_STR(gh_status_of("step.count"), "FAIL");

	/* a baseline without steps: exit 2, said plainly */
	a = sf_analysis(&p, 0);
	none = gh_write_report(&a, "nosteps");
	CHECK_EQ_INT(run(none, base, NULL, all, 1), CMP_USAGE);
	CHECK(strstr(gh_err, "no steps in the baseline") != NULL);
	CHECK(strstr(gh_err, "cbn_step()") != NULL);
	/* a current run without them: n/a, and a --fail gate makes that exit 3 */
	CHECK_EQ_INT(run(base, none, NULL, all, 3), CMP_UNMEASURABLE);
	CHECK_STR(gh_status_of("step.median"), "n/a");
	CHECK_STR(gh_status_of("step.count"), "n/a");
	CHECK(strstr(gh_out, "could not measure: no steps in the current run") != NULL);
	/* a warning only is not a failure */
	{
		struct cmp_opts o = {NULL, 0, all, 1, NULL, NULL, 0};
		FILE *out = fopen("/dev/null", "w");

		REQUIRE(out != NULL);
		CHECK_EQ_INT(cmp_run(base, none, &o, out), CMP_PASS);
		fclose(out);
	}
	/* the report of an older cbottleneck (schema 2) has no steps: n/a */
	CHECK_EQ_INT(run(base, older(base, 2), NULL, all, 1), CMP_UNMEASURABLE);
	CHECK_STR(gh_status_of("step.median"), "n/a");

	/* the run just analysed, in memory, reads as its JSON report does */
	a = sf_analysis(&p, 1);
	sf_sa.median_ns = SF_MEDIAN * 2;
	{
		struct gate_run g;

		REQUIRE(gate_run_from_analysis(&a, &g) == 0);
		CHECK(g.has_steps && g.step_count == SF_NSTEPS);
		CHECK(g.step_median == 2.0 * SF_MEDIAN && g.step_p90 == (double)SF_P90);
		CHECK_EQ_INT(run(base, NULL, &g, all, 3), CMP_REGRESSION);
		CHECK_STR(gh_status_of("step.median"), "FAIL");
		CHECK_STR(gh_status_of("step.count"), "ok");
		gate_run_free(&g);
		a.steps = NULL;
		REQUIRE(gate_run_from_analysis(&a, &g) == 0);
		CHECK(!g.has_steps);
		CHECK_EQ_INT(run(base, NULL, &g, all, 1), CMP_UNMEASURABLE);
		gate_run_free(&g);
	}

	sf_free(&p);
	if (!getenv("KEEP"))
		ex_rmdir(gh_dir);
	return test_result();
}
