/*
 * test_steps_json.c — the JSON report's "steps" object on hand-built steps
 * views: absent without steps (schema 3 all the same), and present with its
 * distribution, every step (times relative to the run's start, mem_peak null
 * when memory was not recorded), the slowest with what grew, the cold start,
 * the capture windows with their causes by name and the recommendations; the
 * reports validate against docs/report.schema.json (python3 jsonschema; that
 * part is skipped, said so, when it is missing), and the schema rejects a
 * step without its duration.
 */
#include <math.h>

#include <cjson/cJSON.h>

#include "report/report.h"
#include "report/steps_json.h"
#include "test_json_read.h"
#include "testlib.h"
#include "test_steps_fixture.h"

static char dir[64];

static int validate(const char *const *paths, int n)
{
	return jr_validate(paths, n,
			   "    if 'steps' in d:\n"
			   "        # the schema must reject a step without its duration\n"
			   "        del d['steps']['steps'][0]['duration_ns']\n"
			   "        bad += not list(cls(schema).iter_errors(d))\n");
}

static void check_steps(const cJSON *s, int controlled)
{
	const cJSON *arr = jr_get(s, "steps"), *st, *slow, *grew, *cold, *cap, *w;

	CHECK_STR(jr_str(s, "source"), "marker");
	CHECK_STR(jr_str(s, "what"), "cbn_step()");
	CHECK(cJSON_IsNull(jr_get(s, "precision")));
	CHECK_EQ_INT(jr_num(s, "count"), SF_NSTEPS);
	CHECK_EQ_INT(jr_num(s, "min_ns"), 10 * EX_MS);
	CHECK_EQ_INT(jr_num(s, "median_ns"), SF_MEDIAN);
	CHECK_EQ_INT(jr_num(s, "p90_ns"), SF_P90);
	CHECK_EQ_INT(jr_num(s, "max_ns"), 40 * EX_MS);
	CHECK_EQ_INT(jr_num(s, "mean_ns"), 17500 * EX_US);
	CHECK_EQ_INT(jr_num(s, "total_ns"), 70 * EX_MS);
	REQUIRE(cJSON_GetArraySize(arr) == SF_NSTEPS);
	st = cJSON_GetArrayItem(arr, 0);
	CHECK_EQ_INT(jr_num(st, "number"), 2);
	CHECK_EQ_INT(jr_num(st, "process"), SF_PID);
	CHECK_EQ_INT(jr_num(st, "start_ns"), 5 * EX_MS);
	CHECK_EQ_INT(jr_num(st, "duration_ns"), 40 * EX_MS);
	CHECK_EQ_INT(jr_num(st, "cpu_ns"), 38 * EX_MS);
	CHECK_EQ_INT(jr_num(st, "gpu_busy_ns"), 20 * EX_MS);
	CHECK_EQ_INT(jr_num(st, "sync_ns"), 3 * EX_MS);
	CHECK_EQ_INT(jr_num(st, "kernels"), 7);
	CHECK_EQ_INT(jr_num(st, "copies"), 2);
	CHECK_EQ_INT(jr_num(st, "mem_peak"), 3000000);
	st = cJSON_GetArrayItem(arr, 3);
	CHECK_EQ_INT(jr_num(st, "number"), 5);
	CHECK_EQ_INT(jr_num(st, "start_ns"), 70 * EX_MS);
	CHECK_EQ_INT(jr_num(st, "duration_ns"), 10 * EX_MS);
	CHECK(cJSON_IsNull(jr_get(st, "mem_peak")));

	slow = jr_get(s, "slowest");
	REQUIRE(cJSON_GetArraySize(slow) == 1);
	CHECK_EQ_INT(jr_num(cJSON_GetArrayItem(slow, 0), "number"), 2);
	CHECK(fabs(jr_num(cJSON_GetArrayItem(slow, 0), "ratio") - 4.0) < 1e-9);
	grew = jr_get(cJSON_GetArrayItem(slow, 0), "grew");
	REQUIRE(cJSON_GetArraySize(grew) == 2);
	CHECK_STR(jr_str(cJSON_GetArrayItem(grew, 0), "name"), "grow_buffer");
	CHECK(cJSON_IsFalse(jr_get(cJSON_GetArrayItem(grew, 0), "gpu")));
	CHECK_EQ_INT(jr_num(cJSON_GetArrayItem(grew, 0), "step_ns"), 30 * EX_MS);
	CHECK_EQ_INT(jr_num(cJSON_GetArrayItem(grew, 0), "median_ns"), 2 * EX_MS);
	CHECK_STR(jr_str(cJSON_GetArrayItem(grew, 1), "name"), "gemm_kernel");
	CHECK(cJSON_IsTrue(jr_get(cJSON_GetArrayItem(grew, 1), "gpu")));

	cold = jr_get(s, "cold");
	CHECK(cJSON_IsTrue(jr_get(cold, "found")));
	CHECK(fabs(jr_num(cold, "ratio") - 4.0) < 1e-9);

	cap = jr_get(s, "capture");
	REQUIRE(cJSON_IsObject(cap));
	CHECK(cJSON_IsBool(jr_get(cap, "controlled")) &&
	      !!cJSON_IsTrue(jr_get(cap, "controlled")) == !!controlled);
	CHECK_EQ_INT(jr_num(cap, "window_ns"), 90 * EX_MS);
	REQUIRE(cJSON_GetArraySize(jr_get(cap, "windows")) == (controlled ? 2 : 0));
	if (!controlled)
		return;
	w = cJSON_GetArrayItem(jr_get(cap, "windows"), 0);
	CHECK_EQ_INT(jr_num(w, "process"), SF_PID);
	CHECK_EQ_INT(jr_num(w, "start_ns"), 5 * EX_MS);
	CHECK_EQ_INT(jr_num(w, "end_ns"), 55 * EX_MS);
	CHECK_STR(jr_str(w, "open_cause"), "schedule");
	CHECK_STR(jr_str(w, "close_cause"), "schedule");
	CHECK_EQ_INT(jr_num(w, "first_step"), 2);
	w = cJSON_GetArrayItem(jr_get(cap, "windows"), 1);
	CHECK_STR(jr_str(w, "open_cause"), "ctl");
	CHECK_STR(jr_str(w, "close_cause"), "exit");
	CHECK_EQ_INT(jr_num(w, "first_step"), 4);
}

int main(void)
{
	struct profile p;
	struct analysis a;
	char paths[3][256];
	const char *pp[3];
	cJSON *root, *s;

	snprintf(dir, sizeof(dir), "%s", ex_tmpdir());

	/* every cause has its public name; an unknown one says so */
	CHECK_STR(steps_cause_name(CBN_CAUSE_START), "start");
	CHECK_STR(steps_cause_name(CBN_CAUSE_API), "api");
	CHECK_STR(steps_cause_name(CBN_CAUSE_DELAY), "delay");
	CHECK_STR(steps_cause_name(CBN_CAUSE_DURATION), "duration");
	CHECK_STR(steps_cause_name(CBN_CAUSE_NVTX), "nvtx");
	CHECK_STR(steps_cause_name(CBN_CAUSE_CUDA_PROFILER), "cudaProfilerApi");
	CHECK_STR(steps_cause_name(CBN_CAUSE_SIGNAL), "signal");
	CHECK_STR(steps_cause_name(0), "unknown");
	CHECK_STR(steps_cause_name(99), "unknown");

	/* no steps: no steps key; the schema version is 3 all the same */
	sf_profile(&p, 0);
	a = sf_analysis(&p, 0);
	root = jr_write_read(&a, dir, "none", paths[0], sizeof(paths[0]));
	REQUIRE(root != NULL);
	CHECK(jr_get(root, "steps") == NULL);
	CHECK_EQ_INT(jr_num(root, "schema_version"), 5);
	cJSON_Delete(root);

	/* steps without capture controls */
	a = sf_analysis(&p, 1);
	root = jr_write_read(&a, dir, "plain", paths[1], sizeof(paths[1]));
	REQUIRE(root != NULL);
	s = (cJSON *)jr_get(root, "steps");
	REQUIRE(cJSON_IsObject(s));
	check_steps(s, 0);
	cJSON_Delete(root);
	sf_free(&p);

	/* steps inside two windows, with a finding of the step rules */
	sf_profile(&p, 1);
	a = sf_analysis(&p, 1);
	{
		static char msg[] = "warm up before measuring", ev[] = "step 2: 4.0x the median";
		static struct rule_finding f = {"step-cold-start", msg, ev};

		sf_sa.findings = &f;
		sf_sa.nfindings = 1;
	}
	root = jr_write_read(&a, dir, "windows", paths[2], sizeof(paths[2]));
	REQUIRE(root != NULL);
	s = (cJSON *)jr_get(root, "steps");
	REQUIRE(cJSON_IsObject(s));
	check_steps(s, 1);
	{
		const cJSON *r = jr_get(s, "recommendations");

		REQUIRE(cJSON_GetArraySize(r) == 1);
		CHECK_STR(jr_str(cJSON_GetArrayItem(r, 0), "id"), "step-cold-start");
		CHECK_STR(jr_str(cJSON_GetArrayItem(r, 0), "evidence"), "step 2: 4.0x the median");
	}
	cJSON_Delete(root);
	sf_free(&p);

	for (int i = 0; i < 3; i++)
		pp[i] = paths[i];
	CHECK(validate(pp, 3) == 0);
	ex_rmdir(dir);
	return test_result();
}
