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
#include <sys/wait.h>

#include <cjson/cJSON.h>

#include "report/report.h"
#include "report/steps_json.h"
#include "testlib.h"
#include "test_steps_fixture.h"

static char dir[64];

static cJSON *write_read(const struct analysis *a, const char *name, char *path, size_t len)
{
	struct report_opts o = {.limit = 15};
	char err[256] = "";
	char *text;
	cJSON *root;

	snprintf(path, len, "%s/%s.json", dir, name);
	if (report_json_write(a, &o, path, err, sizeof(err)) < 0) {
		fprintf(stderr, "report_json_write: %s\n", err);
		return NULL;
	}
	text = ex_slurp(path, NULL);
	root = text ? cJSON_Parse(text) : NULL;
	free(text);
	return root;
}

static const cJSON *get(const cJSON *o, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(o, key);
}

static double num(const cJSON *o, const char *key)
{
	const cJSON *v = get(o, key);

	return cJSON_IsNumber(v) ? v->valuedouble : -12345;
}

static const char *str(const cJSON *o, const char *key)
{
	const cJSON *v = get(o, key);

	return cJSON_IsString(v) ? v->valuestring : "(not a string)";
}

static int validate(const char *const *paths, int n)
{
	const char *src = getenv("CBN_SOURCE_DIR");
	char cmd[4096];
	size_t len;
	int st;

	if (!src || system("python3 -c 'import jsonschema' 2>/dev/null") != 0) {
		fprintf(stderr, "note: schema validation skipped (no CBN_SOURCE_DIR or no python3 "
				"jsonschema)\n");
		return 0;
	}
	len = (size_t)snprintf(cmd, sizeof(cmd), "python3 - '%s/docs/report.schema.json'", src);
	for (int i = 0; i < n; i++)
		len += (size_t)snprintf(cmd + len, sizeof(cmd) - len, " '%s'", paths[i]);
	snprintf(cmd + len, sizeof(cmd) - len,
		 " <<'EOF'\n"
		 "import json, sys, jsonschema\n"
		 "schema = json.load(open(sys.argv[1]))\n"
		 "cls = jsonschema.validators.validator_for(schema)\n"
		 "bad = 0\n"
		 "for p in sys.argv[2:]:\n"
		 "    d = json.load(open(p))\n"
		 "    for e in cls(schema).iter_errors(d):\n"
		 "        bad += 1; print('%%s: /%%s: %%s' %% (p, '/'.join(map(str, e.path)), e.message), file=sys.stderr)\n"
		 "    if 'steps' in d:\n"
		 "        # the schema must reject a step without its duration\n"
		 "        del d['steps']['steps'][0]['duration_ns']\n"
		 "        bad += not list(cls(schema).iter_errors(d))\n"
		 "sys.exit(1 if bad else 0)\n"
		 "EOF");
	st = system(cmd);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static void check_steps(const cJSON *s, int controlled)
{
	const cJSON *arr = get(s, "steps"), *st, *slow, *grew, *cold, *cap, *w;

	CHECK_STR(str(s, "source"), "marker");
	CHECK_STR(str(s, "what"), "cbn_step()");
	CHECK(cJSON_IsNull(get(s, "precision")));
	CHECK_EQ_INT(num(s, "count"), SF_NSTEPS);
	CHECK_EQ_INT(num(s, "min_ns"), 10 * EX_MS);
	CHECK_EQ_INT(num(s, "median_ns"), SF_MEDIAN);
	CHECK_EQ_INT(num(s, "p90_ns"), SF_P90);
	CHECK_EQ_INT(num(s, "max_ns"), 40 * EX_MS);
	CHECK_EQ_INT(num(s, "mean_ns"), 17500 * EX_US);
	CHECK_EQ_INT(num(s, "total_ns"), 70 * EX_MS);
	REQUIRE(cJSON_GetArraySize(arr) == SF_NSTEPS);
	st = cJSON_GetArrayItem(arr, 0);
	CHECK_EQ_INT(num(st, "number"), 2);
	CHECK_EQ_INT(num(st, "process"), SF_PID);
	CHECK_EQ_INT(num(st, "start_ns"), 5 * EX_MS);
	CHECK_EQ_INT(num(st, "duration_ns"), 40 * EX_MS);
	CHECK_EQ_INT(num(st, "cpu_ns"), 38 * EX_MS);
	CHECK_EQ_INT(num(st, "gpu_busy_ns"), 20 * EX_MS);
	CHECK_EQ_INT(num(st, "sync_ns"), 3 * EX_MS);
	CHECK_EQ_INT(num(st, "kernels"), 7);
	CHECK_EQ_INT(num(st, "copies"), 2);
	CHECK_EQ_INT(num(st, "mem_peak"), 3000000);
	st = cJSON_GetArrayItem(arr, 3);
	CHECK_EQ_INT(num(st, "number"), 5);
	CHECK_EQ_INT(num(st, "start_ns"), 70 * EX_MS);
	CHECK_EQ_INT(num(st, "duration_ns"), 10 * EX_MS);
	CHECK(cJSON_IsNull(get(st, "mem_peak")));

	slow = get(s, "slowest");
	REQUIRE(cJSON_GetArraySize(slow) == 1);
	CHECK_EQ_INT(num(cJSON_GetArrayItem(slow, 0), "number"), 2);
	CHECK(fabs(num(cJSON_GetArrayItem(slow, 0), "ratio") - 4.0) < 1e-9);
	grew = get(cJSON_GetArrayItem(slow, 0), "grew");
	REQUIRE(cJSON_GetArraySize(grew) == 2);
	CHECK_STR(str(cJSON_GetArrayItem(grew, 0), "name"), "grow_buffer");
	CHECK(cJSON_IsFalse(get(cJSON_GetArrayItem(grew, 0), "gpu")));
	CHECK_EQ_INT(num(cJSON_GetArrayItem(grew, 0), "step_ns"), 30 * EX_MS);
	CHECK_EQ_INT(num(cJSON_GetArrayItem(grew, 0), "median_ns"), 2 * EX_MS);
	CHECK_STR(str(cJSON_GetArrayItem(grew, 1), "name"), "gemm_kernel");
	CHECK(cJSON_IsTrue(get(cJSON_GetArrayItem(grew, 1), "gpu")));

	cold = get(s, "cold");
	CHECK(cJSON_IsTrue(get(cold, "found")));
	CHECK(fabs(num(cold, "ratio") - 4.0) < 1e-9);

	cap = get(s, "capture");
	REQUIRE(cJSON_IsObject(cap));
	CHECK(cJSON_IsBool(get(cap, "controlled")) &&
	      !!cJSON_IsTrue(get(cap, "controlled")) == !!controlled);
	CHECK_EQ_INT(num(cap, "window_ns"), 90 * EX_MS);
	REQUIRE(cJSON_GetArraySize(get(cap, "windows")) == (controlled ? 2 : 0));
	if (!controlled)
		return;
	w = cJSON_GetArrayItem(get(cap, "windows"), 0);
	CHECK_EQ_INT(num(w, "process"), SF_PID);
	CHECK_EQ_INT(num(w, "start_ns"), 5 * EX_MS);
	CHECK_EQ_INT(num(w, "end_ns"), 55 * EX_MS);
	CHECK_STR(str(w, "open_cause"), "schedule");
	CHECK_STR(str(w, "close_cause"), "schedule");
	CHECK_EQ_INT(num(w, "first_step"), 2);
	w = cJSON_GetArrayItem(get(cap, "windows"), 1);
	CHECK_STR(str(w, "open_cause"), "ctl");
	CHECK_STR(str(w, "close_cause"), "exit");
	CHECK_EQ_INT(num(w, "first_step"), 4);
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
	root = write_read(&a, "none", paths[0], sizeof(paths[0]));
	REQUIRE(root != NULL);
	CHECK(get(root, "steps") == NULL);
	CHECK_EQ_INT(num(root, "schema_version"), 4);
	cJSON_Delete(root);

	/* steps without capture controls */
	a = sf_analysis(&p, 1);
	root = write_read(&a, "plain", paths[1], sizeof(paths[1]));
	REQUIRE(root != NULL);
	s = (cJSON *)get(root, "steps");
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
	root = write_read(&a, "windows", paths[2], sizeof(paths[2]));
	REQUIRE(root != NULL);
	s = (cJSON *)get(root, "steps");
	REQUIRE(cJSON_IsObject(s));
	check_steps(s, 1);
	{
		const cJSON *r = get(s, "recommendations");

		REQUIRE(cJSON_GetArraySize(r) == 1);
		CHECK_STR(str(cJSON_GetArrayItem(r, 0), "id"), "step-cold-start");
		CHECK_STR(str(cJSON_GetArrayItem(r, 0), "evidence"), "step 2: 4.0x the median");
	}
	cJSON_Delete(root);
	sf_free(&p);

	for (int i = 0; i < 3; i++)
		pp[i] = paths[i];
	CHECK(validate(pp, 3) == 0);
	ex_rmdir(dir);
	return test_result();
}
