/*
 * test_compare_eval.c — cmp_run() on hand-written JSON reports: thresholds and
 * floors, noise verdicts, missing/new rows, GPU gates, schema and parse errors,
 * exit statuses, and the shape of the Markdown and benchmark JSON outputs.
 */
#include <cjson/cJSON.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <unistd.h>

#include "testlib.h"
#include "test_gate_harness.h"


struct fn {
	const char *name;
	double self_samples, total_samples;
};

/* A report in report/json.c's shape: functions' *_ns = *_samples * period. */
static const char *report(const char *file, double wall_ns, double period_ns,
			  const struct fn *fns, size_t nfn, const char *cuda)
{
	static char path[16][256]; /* a test holds at most this many at once */
	static int k;
	char *p = path[k++ % 16];
	double weight = 0;
	size_t i;
	FILE *f;

	snprintf(p, 256, "%s/%s", gh_dir, file);
	f = fopen(p, "w");
	REQUIRE(f);
	for (i = 0; i < nfn; i++)
		weight += fns[i].self_samples;
	fprintf(f, "{\"schema_version\":1,\"tool\":{\"name\":\"cbottleneck\",\"version\":\"0.1.0\"},\n"
		"\"run\":{\"command\":[\"./split\",\"0.3\"],\"exit_status\":0,\"exit_signal\":0,"
		"\"wall_ns\":%.0f,\"cpu_ns\":%.0f,\"frequency_hz\":%.3f,\"period_ns\":%.0f,"
		"\"samples\":%.0f,\"weight\":%.0f,\"lost\":{\"reentrant\":0,\"buffer_full\":0,"
		"\"no_thread\":0,\"foreign_pid\":0,\"disabled\":0},\"truncated\":0,\"pc_only\":0,"
		"\"processes\":1,\"threads\":1},\n\"functions\":[",
		wall_ns, weight * period_ns, 1e9 / period_ns, period_ns, weight, weight);
	for (i = 0; i < nfn; i++)
		fprintf(f, "%s{\"name\":\"%s\",\"file\":\"/src/examples/split.c\",\"line\":%zu,"
			"\"module\":\"split\",\"self_ns\":%.0f,\"total_ns\":%.0f,"
			"\"self_samples\":%.0f,\"total_samples\":%.0f}\n",
			i ? "," : "", fns[i].name, 10 + i, fns[i].self_samples * period_ns,
			fns[i].total_samples * period_ns, fns[i].self_samples,
			fns[i].total_samples);
	fprintf(f, "],\"lines\":[{\"file\":\"/src/examples/split.c\",\"line\":42,"
		"\"function\":\"heavy\",\"self_ns\":%.0f,\"self_samples\":%.0f}],"
		"\"processes\":[],\"threads\":[]%s%s,\"warnings\":[]}\n",
		nfn ? fns[0].self_samples * period_ns : 0, nfn ? fns[0].self_samples : 0,
		cuda ? ",\"cuda\":" : "", cuda ? cuda : "");
	REQUIRE(fclose(f) == 0);
	return p;
}

static const char *raw(const char *file, const char *text)
{
	static char path[2][256];
	static int k;
	char *p = path[k++ % 2];
	FILE *f;

	snprintf(p, 256, "%s/%s", gh_dir, file);
	f = fopen(p, "w");
	REQUIRE(f);
	fputs(text, f);
	REQUIRE(fclose(f) == 0);
	return p;
}

/* Run cmp_run with the given --fail/--warn lists; keeps stdout and stderr. */
static int run(const char *base, const char *cur, const char **fail, size_t nfail,
	       const char **warn, size_t nwarn, const char *md, const char *bench)
{
	struct cmp_opts o = {fail, nfail, warn, nwarn, md, bench, 0};

	return gh_run(base, cur, NULL, &o);
}

static void test_threshold_and_ratio(void)
{
	/* period 1 ms: heavy 225 -> 450 samples is far outside noise */
	struct fn base[] = {{"heavy", 225, 225}, {"light", 75, 75}, {"main", 0, 300}};
	struct fn same[] = {{"heavy", 230, 230}, {"light", 74, 74}, {"main", 0, 304}};
	struct fn slow[] = {{"heavy", 450, 450}, {"light", 75, 75}, {"main", 0, 525}};
	const char *b = report("base.json", 0.31e9, 1e6, base, 3, NULL);
	const char *s = report("same.json", 0.32e9, 1e6, same, 3, NULL);
	const char *w = report("slow.json", 0.53e9, 1e6, slow, 3, NULL);
	const char *fail[] = {"func[heavy].self:+25%"};
	const char *fail2[] = {"func[heavy].self:+25%", "func[light].self:+25%",
			       "func[main].total:+100%"};

	CHECK_EQ_INT(run(b, s, fail, 1, NULL, 0, NULL, NULL), CMP_PASS);
	CHECK_STR(gh_status_of("func[heavy].self"), "ok");
	CHECK(strstr(gh_out, "PASS: 0 regressions, 0 warnings, 1 ok") != NULL);

	CHECK_EQ_INT(run(b, w, fail2, 3, NULL, 0, NULL, NULL), CMP_REGRESSION);
	CHECK_STR(gh_status_of("func[heavy].self"), "FAIL");
	CHECK_STR(gh_status_of("func[light].self"), "ok");
	CHECK_STR(gh_status_of("func[main].total"), "ok");
	CHECK(strstr(gh_out, "+225.0 ms (+100.0%)") != NULL);
	CHECK(strstr(gh_out, "FAIL: 1 regression, 0 warnings, 2 ok") != NULL);
	/* header of the table, and the noise column of a sampled figure */
	CHECK(strstr(gh_out, "metric") && strstr(gh_out, "baseline") &&
	      strstr(gh_out, "current") && strstr(gh_out, "delta") &&
	      strstr(gh_out, "threshold") && strstr(gh_out, "status"));
	CHECK(strstr(gh_out, "~") != NULL);

	/* the same change as a warning never fails */
	CHECK_EQ_INT(run(b, w, NULL, 0, fail, 1, NULL, NULL), CMP_PASS);
	CHECK_STR(gh_status_of("func[heavy].self"), "WARN");
	CHECK(strstr(gh_out, "1 warning") != NULL);

	/* absolute thresholds, wall is a single measurement */
	{
		const char *f1[] = {"wall:+100ms"}, *f2[] = {"wall:+300ms"};

		CHECK_EQ_INT(run(b, w, f1, 1, NULL, 0, NULL, NULL), CMP_REGRESSION);
		CHECK(strstr(gh_out, "1 run") != NULL);
		CHECK_EQ_INT(run(b, w, f2, 1, NULL, 0, NULL, NULL), CMP_PASS);
	}
	/* +0 on a count: any increase fires; equal passes */
	{
		const char *f[] = {"samples:+0"};

		CHECK_EQ_INT(run(b, b, f, 1, NULL, 0, NULL, NULL), CMP_PASS);
	}
}

static void test_floor(void)
{
	/* heavy 100 -> 130 ms (+30%) at period 0.1 ms: 1000 -> 1300 samples, 2 sigma
	 * = 2*0.1ms*sqrt(2300) = 9.6 ms, well under the 30 ms change. */
	struct fn base[] = {{"heavy", 1000, 1000}};
	struct fn cur[] = {{"heavy", 1300, 1300}};
	const char *b = report("fb.json", 1e9, 1e5, base, 1, NULL);
	const char *c = report("fc.json", 1e9, 1e5, cur, 1, NULL);
	const char *high[] = {"func[heavy].self:+10%,>=50ms"};
	const char *low[] = {"func[heavy].self:+10%,>=20ms"};
	const char *rel[] = {"func[heavy].self:+40%"};
	const char *drop[] = {"func[heavy].self:-10%"};

	CHECK_EQ_INT(run(b, c, high, 1, NULL, 0, NULL, NULL), CMP_PASS);
	CHECK_STR(gh_status_of("func[heavy].self"), "ok");
	CHECK_EQ_INT(run(b, c, low, 1, NULL, 0, NULL, NULL), CMP_REGRESSION);
	CHECK_STR(gh_status_of("func[heavy].self"), "FAIL");
	CHECK_EQ_INT(run(b, c, rel, 1, NULL, 0, NULL, NULL), CMP_PASS);
	/* a "must not drop" gate: an increase is fine, a drop fires */
	CHECK_EQ_INT(run(b, c, drop, 1, NULL, 0, NULL, NULL), CMP_PASS);
	CHECK_EQ_INT(run(c, b, drop, 1, NULL, 0, NULL, NULL), CMP_REGRESSION);
}

static void test_noise(void)
{
	/* 99 Hz: heavy 22 -> 30 samples of 10.1 ms is +36%, over a +25% threshold,
	 * but 2 sigma = 2*10.1ms*sqrt(52) = 146 ms > the 81 ms change. */
	struct fn base[] = {{"heavy", 22, 22}, {"light", 8, 8}};
	struct fn cur[] = {{"heavy", 30, 30}, {"light", 8, 8}};
	struct fn far[] = {{"heavy", 60, 60}, {"light", 8, 8}};
	const char *b = report("nb.json", 0.3e9, 10.1e6, base, 2, NULL);
	const char *c = report("nc.json", 0.38e9, 10.1e6, cur, 2, NULL);
	const char *f = report("nf.json", 0.68e9, 10.1e6, far, 2, NULL);
	const char *fail[] = {"func[heavy].self:+25%", "wall:+10%"};

	CHECK_EQ_INT(run(b, c, fail, 2, NULL, 0, NULL, NULL), CMP_REGRESSION);
	CHECK_STR(gh_status_of("func[heavy].self"), "within noise");
	CHECK_STR(gh_status_of("wall"), "FAIL"); /* measured once: no noise excuse */
	CHECK(strstr(gh_out, "1 within noise") != NULL);
	/* 22 -> 60: 2 sigma = 2*10.1*sqrt(82) = 183 ms < the 384 ms change */
	CHECK_EQ_INT(run(b, f, fail, 1, NULL, 0, NULL, NULL), CMP_REGRESSION);
	CHECK_STR(gh_status_of("func[heavy].self"), "FAIL");
}

static void test_missing_and_patterns(void)
{
	struct fn base[] = {{"heavy", 200, 200}, {"light", 70, 70}, {"helper", 30, 30}};
	struct fn cur[] = {{"heavy", 210, 210}, {"light", 70, 70}, {"hot_new", 90, 90}};
	const char *b = report("mb.json", 0.3e9, 1e6, base, 3, NULL);
	const char *c = report("mc.json", 0.37e9, 1e6, cur, 3, NULL);
	const char *glob[] = {"func[h*].self:+50%"};
	const char *none[] = {"func[nosuch*].self:+10%", "wall:+1000%"};
	const char *line[] = {"line[split.c:42].self:+50%"};
	const char *badline[] = {"line[split.c:43].self:+50%"};

	CHECK_EQ_INT(run(b, c, glob, 1, NULL, 0, NULL, NULL), CMP_PASS);
	CHECK_STR(gh_status_of("func[heavy].self"), "ok");
	CHECK_STR(gh_status_of("func[helper].self"), "missing");
	CHECK_STR(gh_status_of("func[hot_new].self"), "new");
	CHECK(strstr(gh_out, "1 missing") && strstr(gh_out, "1 new"));

	/* a pattern that matches nothing in the baseline is a usage error, after
	 * the rest of the table was still evaluated */
	CHECK_EQ_INT(run(b, c, none, 2, NULL, 0, NULL, NULL), CMP_USAGE);
	CHECK(strstr(gh_err, "nosuch*") != NULL);
	CHECK(strchr(gh_err, '\n') == gh_err + strlen(gh_err) - 1);
	CHECK_STR(gh_status_of("wall"), "ok");

	CHECK_EQ_INT(run(b, c, line, 1, NULL, 0, NULL, NULL), CMP_PASS);
	CHECK_STR(gh_status_of("line[/src/examples/split.c:42].self"), "ok");
	CHECK_EQ_INT(run(b, c, badline, 1, NULL, 0, NULL, NULL), CMP_USAGE);
}

static const char *cuda_json(int kernels, int gemm_calls, double gemm_ns, int memcpy_calls,
			     double util, const char *state)
{
	static char buf[4][2048];
	static int k;
	char *p = buf[k++ % 4];

	snprintf(p, 2048,
		 "{\"status\":[{\"pid\":1,\"state\":\"%s\",\"message\":\"%s\",\"cupti_error\":%d,"
		 "\"dropped\":0,\"zero_ts\":0,\"flush_timed_out\":0}],"
		 "\"totals\":{\"kernels\":%d,\"kernel_ns\":%.0f,\"memcpy\":%d,\"memcpy_ns\":1000,"
		 "\"memcpy_bytes\":4096,\"memset\":0,\"memset_ns\":0,\"api_calls\":%d,"
		 "\"api_ns\":5000,\"sync_ns\":0,\"gpu_busy_ns\":%.0f},"
		 "\"ops\":[],\"kernels\":[{\"name\":\"gemm_kernel\",\"instances\":%d,"
		 "\"total_ns\":%.0f,\"avg_ns\":%.0f},{\"name\":\"relu\",\"instances\":%d,"
		 "\"total_ns\":1000,\"avg_ns\":100}],"
		 "\"memops\":[],\"api\":[{\"name\":\"cudaMemcpy\",\"calls\":%d,\"total_ns\":2000,"
		 "\"avg_ns\":100}],\"launch_sites\":[],"
		 "\"overview\":{\"gpu_utilization\":%g},\"recommendations\":[]}",
		 state, strcmp(state, "unavailable") ? "" : "no CUDA driver (libcuda.so.1 not found)",
		 strcmp(state, "unavailable") ? 0 : 999, kernels, gemm_ns + 1000, memcpy_calls,
		 memcpy_calls + kernels, gemm_ns + 1000, gemm_calls, gemm_ns,
		 gemm_calls ? gemm_ns / gemm_calls : 0, kernels - gemm_calls, memcpy_calls, util);
	return p;
}

static void test_gpu(void)
{
	struct fn fns[] = {{"main", 100, 100}};
	const char *b = report("gb.json", 1e9, 1e6, fns, 1,
			       cuda_json(20, 10, 5e6, 4, 0.8, "finished"));
	const char *same = report("gs.json", 1e9, 1e6, fns, 1,
				  cuda_json(20, 10, 5.1e6, 4, 0.79, "finished"));
	const char *more = report("gm.json", 1e9, 1e6, fns, 1,
				  cuda_json(24, 12, 7e6, 6, 0.5, "finished"));
	const char *cpu = report("gc.json", 1e9, 1e6, fns, 1, NULL);
	const char *unav = report("gu.json", 1e9, 1e6, fns, 1,
				  cuda_json(0, 0, 0, 0, 0, "unavailable"));
	const char *gates[] = {"gpu.kernels:+0", "kernel[gemm*].calls:+0", "kernel[gemm*].avg:+10%",
			       "api[cudaMemcpy].calls:+0", "gpu.utilization:-5%",
			       "gpu.memcpy_bytes:+0"};
	const char *one[] = {"gpu.kernels:+0"};
	const char *mixed[] = {"gpu.kernels:+0", "wall:+10%"};
	const char *warn_only[] = {"gpu.kernels:+0"};

	CHECK_EQ_INT(run(b, same, gates, 6, NULL, 0, NULL, NULL), CMP_PASS);
	CHECK_STR(gh_status_of("gpu.kernels"), "ok");
	CHECK_STR(gh_status_of("kernel[gemm_kernel].calls"), "ok");
	CHECK_STR(gh_status_of("gpu.utilization"), "ok");
	CHECK(strstr(gh_out, "exact") != NULL);

	CHECK_EQ_INT(run(b, more, gates, 6, NULL, 0, NULL, NULL), CMP_REGRESSION);
	CHECK_STR(gh_status_of("gpu.kernels"), "FAIL");
	CHECK_STR(gh_status_of("kernel[gemm_kernel].calls"), "FAIL");
	CHECK_STR(gh_status_of("kernel[gemm_kernel].avg"), "FAIL"); /* 500 -> 583 us */
	CHECK_STR(gh_status_of("api[cudaMemcpy].calls"), "FAIL");
	CHECK_STR(gh_status_of("gpu.utilization"), "FAIL"); /* dropped 0.8 -> 0.5 */
	CHECK_STR(gh_status_of("gpu.memcpy_bytes"), "ok");

	/* current run without CUDA: could not measure (3), said in one line */
	CHECK_EQ_INT(run(b, cpu, one, 1, NULL, 0, NULL, NULL), CMP_UNMEASURABLE);
	CHECK_STR(gh_status_of("gpu.kernels"), "n/a");
	CHECK(strstr(gh_out, "no CUDA data") != NULL);
	CHECK_EQ_INT(run(b, unav, one, 1, NULL, 0, NULL, NULL), CMP_UNMEASURABLE);
	CHECK(strstr(gh_out, "libcuda.so.1") != NULL);
	/* a real regression wins over "could not measure" */
	{
		const char *slow = report("gw.json", 2e9, 1e6, fns, 1, NULL);

		CHECK_EQ_INT(run(b, slow, mixed, 2, NULL, 0, NULL, NULL), CMP_REGRESSION);
	}
	/* an unmeasurable --warn gate does not turn a pass into 3 */
	CHECK_EQ_INT(run(b, cpu, NULL, 0, warn_only, 1, NULL, NULL), CMP_PASS);
	/* a GPU gate against a CPU-only baseline is a configuration error */
	CHECK_EQ_INT(run(cpu, b, one, 1, NULL, 0, NULL, NULL), CMP_USAGE);
	CHECK(strstr(gh_err, "baseline") != NULL);
}

static void test_bad_files(void)
{
	struct fn fns[] = {{"heavy", 100, 100}};
	const char *good = report("ok.json", 1e9, 1e6, fns, 1, NULL);
	const char *fail[] = {"wall:+10%"};
	const char *bad_expr[] = {"wall:+10"};
	const char *p;

	p = raw("v6.json", "{\"schema_version\":6,\"run\":{\"wall_ns\":1}}");
	CHECK_EQ_INT(run(p, good, fail, 1, NULL, 0, NULL, NULL), CMP_USAGE);
	CHECK(strstr(gh_err, "baseline was written by schema 6; this cbottleneck reads 1 to 5"));
	CHECK_EQ_INT(run(good, p, fail, 1, NULL, 0, NULL, NULL), CMP_USAGE);
	CHECK(strstr(gh_err, "current was written by schema 6"));
	/* version 2 only added "memory": a version 2 report is read like 1 */
	p = raw("v2.json", "{\"schema_version\":2,\"run\":{\"wall_ns\":1000}}");
	CHECK_EQ_INT(run(p, p, fail, 1, NULL, 0, NULL, NULL), CMP_PASS);
	/* nor version 3, which only added "steps" */
	p = raw("v3.json", "{\"schema_version\":3,\"run\":{\"wall_ns\":1000}}");
	CHECK_EQ_INT(run(p, p, fail, 1, NULL, 0, NULL, NULL), CMP_PASS);
	/* nor version 4, which only added "waiting" */
	p = raw("v4.json", "{\"schema_version\":4,\"run\":{\"wall_ns\":1000}}");
	CHECK_EQ_INT(run(p, p, fail, 1, NULL, 0, NULL, NULL), CMP_PASS);
	/* nor version 5, which added "programs" and keys inside the others */
	p = raw("v5.json", "{\"schema_version\":5,\"run\":{\"wall_ns\":1000}}");
	CHECK_EQ_INT(run(p, p, fail, 1, NULL, 0, NULL, NULL), CMP_PASS);

	p = raw("broken.json", "{\"schema_version\":1,\n\"run\":{\"wall_ns\":1,,}}");
	CHECK_EQ_INT(run(p, good, fail, 1, NULL, 0, NULL, NULL), CMP_USAGE);
	CHECK(strstr(gh_err, "not valid JSON") && strstr(gh_err, "line 2"));
	CHECK(gh_out[0] == '\0'); /* no table from unreadable input */

	p = raw("trunc.json", "{\"schema_version\":1,\"run\":{\"wall_ns\":10");
	CHECK_EQ_INT(run(p, good, fail, 1, NULL, 0, NULL, NULL), CMP_USAGE);

	p = raw("other.json", "[1,2,3]");
	CHECK_EQ_INT(run(p, good, fail, 1, NULL, 0, NULL, NULL), CMP_USAGE);
	CHECK(strstr(gh_err, "not a cbottleneck JSON report"));

	p = raw("norun.json", "{\"schema_version\":1}");
	CHECK_EQ_INT(run(p, good, fail, 1, NULL, 0, NULL, NULL), CMP_USAGE);
	CHECK(strstr(gh_err, "\"run\""));

	p = raw("nowall.json", "{\"schema_version\":1,\"run\":{\"cpu_ns\":5}}");
	CHECK_EQ_INT(run(p, good, fail, 1, NULL, 0, NULL, NULL), CMP_USAGE);
	CHECK(strstr(gh_err, "run.wall_ns"));
	/* ... while a current report without it could not measure the gate */
	CHECK_EQ_INT(run(good, p, fail, 1, NULL, 0, NULL, NULL), CMP_UNMEASURABLE);
	CHECK_STR(gh_status_of("wall"), "n/a");

	p = raw("empty.json", "");
	CHECK_EQ_INT(run(p, good, fail, 1, NULL, 0, NULL, NULL), CMP_USAGE);

	CHECK_EQ_INT(run("/nonexistent/base.json", good, fail, 1, NULL, 0, NULL, NULL), CMP_USAGE);
	CHECK(strstr(gh_err, "/nonexistent/base.json"));

	/* a bad expression is refused before any file is read */
	CHECK_EQ_INT(run("/nonexistent/a", "/nonexistent/b", bad_expr, 1, NULL, 0, NULL, NULL),
		     CMP_USAGE);
	CHECK(strstr(gh_err, "needs a unit") != NULL);
	CHECK(strstr(gh_err, "/nonexistent") == NULL);
}

/* Reports of the right version but the wrong shapes: never a crash; a key
 * whose value has the wrong type is a usage error that names it (exit 2),
 * while absent keys and nulls are figures not known. */
static void test_hostile_shapes(void)
{
	static const struct {
		const char *body, *key;
	} bad[] = {
		{"\"functions\":{\"heavy\":1}", "\"functions\" is an object, expected an array"},
		{"\"functions\":[1,\"x\",null,{\"name\":5},{\"name\":\"heavy\",\"self_ns\":\"9\"}]",
		 "\"functions[3].name\" is a number, expected a string"},
		{"\"functions\":\"heavy\",\"cuda\":[]", "\"functions\" is a string"},
		{"\"cuda\":{\"status\":\"started\",\"totals\":[],\"kernels\":7}",
		 "\"cuda.status\" is a string, expected an array"},
		{"\"cuda\":{\"status\":[null,{\"state\":3}],\"totals\":{\"kernels\":\"2\"}}",
		 "\"cuda.status[1].state\" is a number, expected a string"},
		{"\"lines\":[{\"file\":\"a.c\",\"line\":\"42\"}]",
		 "\"lines[0].line\" is a string, expected a number"},
		{"\"functions\":[{\"name\":\"heavy\",\"self_ns\":\"abc\"}]",
		 "\"functions[0].self_ns\" is a string, expected a number"},
	};
	const char *fail[] = {"func[heavy].self:+10%", "gpu.kernels:+0", "kernel[*].calls:+0",
			      "line[a.c:42].self:+1%", "wall:+10%"};
	char text[1024];
	const char *p;
	size_t i, k;
	int rc;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "{\"schema_version\":1,\"run\":{\"command\":[\"x\"],"
			 "\"wall_ns\":1e9,\"cpu_ns\":null,\"period_ns\":-5},%s}", bad[i].body);
		p = raw("hostile.json", text);
		for (k = 0; k < sizeof(fail) / sizeof(fail[0]); k++) {
			rc = run(p, p, &fail[k], 1, NULL, 0, NULL, NULL);
			CHECK_EQ_INT(rc, CMP_USAGE);
			CHECK(strstr(gh_err, bad[i].key) != NULL);
			CHECK(strchr(gh_err, '\n') == strrchr(gh_err, '\n')); /* one line */
		}
		rc = run(p, p, NULL, 0, NULL, 0, NULL, NULL); /* the default report */
		CHECK_EQ_INT(rc, CMP_USAGE);
	}
	/* the run object's own keys too */
	p = raw("hostile.json", "{\"schema_version\":1,\"run\":{\"command\":\"x\",\"wall_ns\":1e9}}");
	CHECK_EQ_INT(run(p, p, &fail[4], 1, NULL, 0, NULL, NULL), CMP_USAGE);
	CHECK(strstr(gh_err, "\"run.command\" is a string, expected an array") != NULL);
	/* nulls and absent keys: not known, not wrong */
	p = raw("hostile.json", "{\"schema_version\":1,\"run\":{\"command\":[\"x\"],\"wall_ns\":1e9,"
		"\"cpu_ns\":null},\"functions\":[null,{\"name\":\"heavy\",\"self_ns\":null}],"
		"\"cuda\":null}");
	CHECK_EQ_INT(run(p, p, &fail[4], 1, NULL, 0, NULL, NULL), CMP_PASS);
	rc = run(p, p, &fail[0], 1, NULL, 0, NULL, NULL);
	CHECK(rc == CMP_USAGE || rc == CMP_UNMEASURABLE);
}

/* Mutation fuzzing of the report reader: flips, deletions and duplications of
 * a valid report (with CUDA data), a fixed seed and a bounded count, so the
 * test is fast and repeatable.  Every outcome must be a defined exit status;
 * ASan/UBSan builds catch the rest. */
static void test_mutations(void)
{
	struct fn fns[] = {{"heavy", 100, 120}, {"light", 30, 30}};
	const char *gates[] = {"func[*].self:+10%", "kernel[*].avg:+5%", "api[*].calls:+0",
			       "gpu.utilization:-5%", "line[split.c:42].self:+1%", "cpu:+1%"};
	const char *good = report("fz.json", 1e9, 1e6, fns, 2,
				  cuda_json(20, 10, 5e6, 4, 0.8, "finished"));
	static char orig[16384], buf[16384 + 64];
	char path[300];
	uint64_t x = 88172645463325252ull;
	size_t len, n, i;
	FILE *f = fopen(good, "r");

	REQUIRE(f);
	len = fread(orig, 1, sizeof(orig) - 1, f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/mut.json", gh_dir);
	for (i = 0; i < 500; i++) {
		int k, rc, edits = 1 + (int)(i % 4);

		memcpy(buf, orig, len);
		n = len;
		for (k = 0; k < edits; k++) {
			size_t at;

			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			at = (size_t)(x >> 8) % n;
			switch (x % 3) {
			case 0: /* flip to a JSON-significant byte */
				buf[at] = "{}[]\":,0-9en \\"[(x >> 40) % 14];
				break;
			case 1: /* delete a run */
				{
					size_t d = 1 + (x >> 50) % 8;

					if (at + d > n)
						d = n - at;
					memmove(buf + at, buf + at + d, n - at - d);
					n -= d;
				}
				break;
			default: /* duplicate a byte */
				if (n < sizeof(buf) - 1) {
					memmove(buf + at + 1, buf + at, n - at);
					n++;
				}
				break;
			}
			if (n == 0)
				break;
		}
		f = fopen(path, "w");
		REQUIRE(f);
		fwrite(buf, 1, n, f);
		fclose(f);
		rc = run(good, path, gates, 6, NULL, 0, NULL, NULL);
		CHECK(rc >= CMP_PASS && rc <= CMP_UNMEASURABLE);
		rc = run(path, good, NULL, 0, gates, 6, NULL, NULL);
		CHECK(rc >= CMP_PASS && rc <= CMP_UNMEASURABLE);
		if (n == 0)
			break;
	}
}

static char *slurp(const char *path)
{
	static char buf[65536];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (; (hay = strstr(hay, needle)); hay++)
		n++;
	return n;
}

static void test_markdown_and_bench(void)
{
	struct fn base[] = {{"heavy", 225, 225}, {"operator||", 75, 75}};
	struct fn slow[] = {{"heavy", 450, 450}, {"operator||", 75, 75}};
	const char *b = report("db.json", 0.3e9, 1e6, base, 2, NULL);
	const char *s = report("ds.json", 0.53e9, 1e6, slow, 2, NULL);
	const char *fail[] = {"func[heavy].self:+25%", "func[operator*].self:+25%"};
	const char *warn[] = {"cpu:+10%", "wall:-50%"};
	char md[300], bj[300];
	const char *text;
	cJSON *arr, *it;
	int nwall = 0, ncpu = 0, nheavy = 0;

	snprintf(md, sizeof(md), "%s/summary.md", gh_dir);
	snprintf(bj, sizeof(bj), "%s/bench.json", gh_dir);
	CHECK_EQ_INT(run(b, s, fail, 2, warn, 2, md, bj), CMP_REGRESSION);
	text = slurp(md);
	REQUIRE(text);
	CHECK(strstr(text, "### cbottleneck compare: FAIL") != NULL);
	CHECK(strstr(text, "| metric | baseline | current | delta | threshold |") != NULL);
	CHECK(strstr(text, "|:--|--:|--:|--:|:--|--:|:--|") != NULL);
	CHECK(strstr(text, "| `func[heavy].self` |") != NULL);
	CHECK(strstr(text, "| **FAIL** |") != NULL);
	CHECK(strstr(text, "`func[operator\\|\\|].self`") != NULL); /* '|' escaped */
	CHECK(strstr(text, "**FAIL: 1 regression, 1 warning, 2 ok**") != NULL);
	/* every table line has the same number of unescaped cell separators */
	{
		const char *l = strstr(text, "| metric");
		int rows = 0;

		while (l && *l == '|') {
			const char *eol = strchr(l, '\n');
			int bars = 0;

			for (const char *q = l; q < eol; q++)
				bars += *q == '|' && q[-1] != '\\';
			CHECK_EQ_INT(bars, 8);
			rows++;
			l = eol + 1;
		}
		CHECK_EQ_INT(rows, 2 + 4);
	}
	/* --markdown appends, as $GITHUB_STEP_SUMMARY wants */
	CHECK_EQ_INT(run(b, s, fail, 2, warn, 2, md, NULL), CMP_REGRESSION);
	CHECK_EQ_INT(count(slurp(md), "### cbottleneck compare"), 2);

	text = slurp(bj);
	REQUIRE(text);
	arr = cJSON_Parse(text);
	REQUIRE(cJSON_IsArray(arr));
	cJSON_ArrayForEach(it, arr) {
		const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(it, "name"));
		const char *unit = cJSON_GetStringValue(cJSON_GetObjectItem(it, "unit"));
		cJSON *value = cJSON_GetObjectItem(it, "value");

		CHECK(name && unit && cJSON_IsNumber(value));
		if (!name || !unit || !cJSON_IsNumber(value))
			continue;
		nwall += strcmp(name, "wall") == 0;
		ncpu += strcmp(name, "cpu") == 0;
		if (strcmp(name, "func[heavy].self") == 0) {
			nheavy++;
			CHECK_STR(unit, "ms");
			CHECK(value->valuedouble > 449 && value->valuedouble < 451);
			CHECK(cJSON_IsString(cJSON_GetObjectItem(it, "range")));
			CHECK(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(it, "extra")),
				     "FAIL") != NULL);
		}
	}
	/* wall is always there, but once: its "must not drop" gate is left out */
	CHECK_EQ_INT(nwall, 1);
	CHECK_EQ_INT(ncpu, 1);
	CHECK_EQ_INT(nheavy, 1);
	cJSON_Delete(arr);

	/* unwritable outputs are errors */
	CHECK_EQ_INT(run(b, s, NULL, 0, warn, 1, "/nonexistent/dir/s.md", NULL), CMP_USAGE);
	CHECK(strstr(gh_err, "/nonexistent/dir/s.md"));
}

static void test_defaults_and_quiet(void)
{
	struct fn base[] = {{"heavy", 225, 225}, {"light", 75, 75}};
	struct fn slow[] = {{"heavy", 450, 450}, {"light", 75, 75}};
	const char *b = report("xb.json", 0.3e9, 1e6, base, 2, NULL);
	const char *s = report("xs.json", 0.53e9, 1e6, slow, 2, NULL);
	struct cmp_opts o = {NULL, 0, NULL, 0, NULL, NULL, 1};
	const char *fail[] = {"func[heavy].self:+25%"};
	FILE *out;

	/* no expressions: wall, cpu and the hottest functions, warnings only */
	CHECK_EQ_INT(run(b, s, NULL, 0, NULL, 0, NULL, NULL), CMP_PASS);
	CHECK_STR(gh_status_of("wall"), "WARN");
	CHECK_STR(gh_status_of("cpu"), "WARN");
	CHECK_STR(gh_status_of("func[heavy].self"), "WARN");
	CHECK_STR(gh_status_of("func[light].self"), "ok");
	CHECK(strstr(gh_out, "never fails") != NULL);

	/* -q: the table and the summary line, nothing else */
	o.fail = fail;
	o.nfail = 1;
	memset(gh_out, 0, sizeof(gh_out));
	out = fmemopen(gh_out, sizeof(gh_out) - 1, "w");
	REQUIRE(out);
	CHECK_EQ_INT(cmp_run(b, s, &o, out), CMP_REGRESSION);
	fclose(out);
	CHECK(strncmp(gh_out, "metric ", 7) == 0);
	CHECK_STR(gh_status_of("func[heavy].self"), "FAIL");
	CHECK(strstr(gh_out, "baseline:") == NULL);
	CHECK(strstr(gh_out, "~X") == NULL);
	CHECK(strstr(gh_out, "\n\nFAIL: 1 regression, 0 warnings, 0 ok\n") != NULL);
}

/* The cuda object "{}" followed by an operators object with one row for
 * each of aten::addmm (CUDA total cuda_ns, launches, CPU self/total from
 * self/total samples at 1 ms) and aten::linear around it. */
static const char *ops_json(double cuda_ns, double launches, double self_smp, double total_smp)
{
	static char buf[4][1024];
	static int k;
	char *b = buf[k++ % 4];

	snprintf(b, 1024,
		 "{},\"operators\":{\"sort\":\"cuda_time_total\",\"self_cpu_total_ns\":0,"
		 "\"cpu_ns\":0,\"self_cuda_total_ns\":0,\"gpu_ns\":0,\"launches\":0,\"rows\":["
		 "{\"name\":\"aten::addmm\",\"framework\":\"pytorch\",\"entry\":\"\","
		 "\"self_cpu_ns\":%.0f,\"cpu_total_ns\":%.0f,\"self_samples\":%.0f,"
		 "\"total_samples\":%.0f,\"self_cuda_ns\":%.0f,\"cuda_total_ns\":%.0f,"
		 "\"self_gpu_ops\":0,\"gpu_ops\":0,\"self_launches\":%.0f,\"launches\":%.0f,"
		 "\"parents\":[\"aten::linear\"]},"
		 "{\"name\":\"aten::linear\",\"framework\":\"pytorch\",\"entry\":\"\","
		 "\"self_cpu_ns\":0,\"cpu_total_ns\":%.0f,\"self_samples\":0,\"total_samples\":%.0f,"
		 "\"self_cuda_ns\":0,\"cuda_total_ns\":%.0f,\"self_gpu_ops\":0,\"gpu_ops\":0,"
		 "\"self_launches\":0,\"launches\":%.0f,\"parents\":[]}]}",
		 self_smp * 1e6, total_smp * 1e6, self_smp, total_smp, cuda_ns, cuda_ns, launches,
		 launches, total_smp * 1e6, total_smp, cuda_ns, launches);
	return b;
}

/* op[NAME].cuda|self_cuda|cpu|self_cpu|launches: exact CUDA times and
 * launches, sampled CPU with its noise; globs; an operator the baseline
 * lacks is a configuration error that says whether it has operators. */
static void test_ops(void)
{
	struct fn fns[] = {{"main", 1000, 1000}};
	const char *b = report("ob.json", 1e9, 1e6, fns, 1, ops_json(10e6, 100, 500, 500));
	const char *same = report("os.json", 1e9, 1e6, fns, 1, ops_json(10.5e6, 100, 510, 510));
	const char *more = report("om.json", 1e9, 1e6, fns, 1, ops_json(12e6, 120, 700, 700));
	const char *none = report("on.json", 1e9, 1e6, fns, 1, NULL);
	const char *gates[] = {"op[aten::addmm].cuda:+10%", "op[aten::addmm].launches:+0",
			       "op[aten::addmm].self_cpu:+10%", "op[aten::linear].cpu:+10%",
			       "op[aten::*].self_cuda:+10%"};
	const char *missing[] = {"op[aten::conv2d].cuda:+10%"};
	char err[256];
	struct cmp_expr e;

	CHECK_EQ_INT(cmp_expr_parse("op[aten::addmm].cuda:+10%", CMP_LEVEL_FAIL, &e, err,
				    sizeof(err)), 0);
	CHECK_EQ_INT(e.metric, CMP_M_OP);
	CHECK_EQ_INT(e.field, CMP_F_CUDA);
	CHECK_EQ_INT(e.unit, CMP_U_NS);
	CHECK_STR(e.pattern, "aten::addmm");
	CHECK_EQ_INT(cmp_expr_parse("op[aten::addmm].launches:+0", CMP_LEVEL_FAIL, &e, err,
				    sizeof(err)), 0);
	CHECK_EQ_INT(e.unit, CMP_U_COUNT);
	CHECK(cmp_expr_parse("op[aten::addmm].calls:+0", CMP_LEVEL_FAIL, &e, err, sizeof(err)) < 0);
	CHECK(strstr(err, ".cuda, .self_cuda, .cpu, .self_cpu, .launches") != NULL);
	CHECK(cmp_expr_parse("op[aten::addmm]:+0", CMP_LEVEL_FAIL, &e, err, sizeof(err)) < 0);
	CHECK(strstr(err, "op[...].cuda") != NULL);

	CHECK_EQ_INT(run(b, same, gates, 5, NULL, 0, NULL, NULL), CMP_PASS);
	CHECK_STR(gh_status_of("op[aten::addmm].cuda"), "ok");
	CHECK_STR(gh_status_of("op[aten::addmm].launches"), "ok");
	CHECK_STR(gh_status_of("op[aten::addmm].self_cpu"), "ok");
	CHECK_STR(gh_status_of("op[aten::linear].self_cuda"), "ok");
	CHECK_EQ_INT(run(b, more, gates, 5, NULL, 0, NULL, NULL), CMP_REGRESSION);
	CHECK_STR(gh_status_of("op[aten::addmm].cuda"), "FAIL");          /* +20 % */
	CHECK_STR(gh_status_of("op[aten::addmm].launches"), "FAIL");      /* 100 -> 120 */
	CHECK_STR(gh_status_of("op[aten::addmm].self_cpu"), "FAIL");      /* 500 -> 700 samples */
	CHECK_STR(gh_status_of("op[aten::linear].cpu"), "FAIL");
	/* the current run has no operators at all: could not measure (3) */
	CHECK_EQ_INT(run(b, none, gates, 1, NULL, 0, NULL, NULL), CMP_UNMEASURABLE);
	CHECK_STR(gh_status_of("op[aten::addmm].cuda"), "n/a");
	CHECK(strstr(gh_out, "no operators") != NULL);
	/* an operator the baseline does not have */
	CHECK_EQ_INT(run(b, same, missing, 1, NULL, 0, NULL, NULL), CMP_USAGE);
	CHECK(strstr(gh_err, "no operator in the baseline") != NULL);
	CHECK_EQ_INT(run(none, same, missing, 1, NULL, 0, NULL, NULL), CMP_USAGE);
	CHECK(strstr(gh_err, "it has no operators") != NULL);
}

int main(void)
{
	char cmd[128];

	snprintf(gh_dir, sizeof(gh_dir), "/tmp/cbn-test-compare-XXXXXX");
	REQUIRE(mkdtemp(gh_dir));
	test_threshold_and_ratio();
	test_floor();
	test_noise();
	test_missing_and_patterns();
	test_gpu();
	test_ops();
	test_bad_files();
	test_hostile_shapes();
	test_mutations();
	test_markdown_and_bench();
	test_defaults_and_quiet();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", gh_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", gh_dir);
	return test_result();
}
