/*
 * test_cuda_json.c — the "cuda" object of the JSON report: every key the
 * brief and docs/report.schema.json name is present with the right type, all
 * rows are there whatever --limit says, numbers match the analysis, and (when
 * python3 with jsonschema is installed) the object validates against the schema.
 */
#include <cjson/cJSON.h>
#include <unistd.h>

#include "report/cuda_report.h"
#include "test_cuda_build.h"
#include "analysed.h"
#include "testlib.h"

static void build(struct profile *p)
{
	struct prof_cuda_status st = { .process = 0, .state = CBN_CUDA_FINISHED, .message = "",
				       .records = 10, .buffers = 1, .cupti_version = 130001 };
	uint32_t fmain, c;
	uint64_t t = 0;
	int i;

	cb_init(p);
	cb_h100(p, 0);
	PB_ADD(p->cuda_status, p->ncuda_status, st);
	fmain = cb_func(p, "main", "main.c", 3, "app");
	c = cb_stack(p, 1, &fmain, (uint32_t[]){ 12 });
	cb_range(p, "step", 0, 0, 50 * MS);
	for (i = 0; i < 10; i++, t += 1 * MS) {
		uint32_t a = cb_api(p, "cudaLaunchKernel", 0, t, t + 10 * US);

		p->cuda_api[a].stack = c;
		cb_kernel(p, i % 2 ? "odd" : "even", t + 20 * US, t + 500 * US, a, 66, 256, 32);
	}
	c = cb_api(p, "cudaMemcpy", 0, t, t + 2 * MS);
	cb_copy(p, CBN_COPY_HTOD, CBN_MEM_PAGEABLE, CBN_MEM_DEVICE, 1 << 20, t, t + 1 * MS, c);
	cb_memset(p, 64, t + 1 * MS, t + 1 * MS + 2 * US, PROF_NONE);
	p->wall_ns = 60 * MS;
}

static int is_num(const cJSON *o, const char *k)
{
	return cJSON_IsNumber(cJSON_GetObjectItem(o, k));
}

static int is_str(const cJSON *o, const char *k)
{
	return cJSON_IsString(cJSON_GetObjectItem(o, k));
}

static double num(const cJSON *o, const char *k)
{
	return cJSON_GetNumberValue(cJSON_GetObjectItem(o, k));
}

static void check_rows(const cJSON *j, const char *key, const char *const *strs,
		       const char *const *nums, int expect)
{
	const cJSON *arr = cJSON_GetObjectItem(j, key), *e;
	int i;

	CHECK(cJSON_IsArray(arr));
	if (expect >= 0)
		CHECK_EQ_INT(cJSON_GetArraySize(arr), expect);
	cJSON_ArrayForEach(e, arr) {
		for (i = 0; strs[i]; i++)
			if (!is_str(e, strs[i])) {
				fprintf(stderr, "%s[].%s is not a string\n", key, strs[i]);
				CHECK(0);
			}
		for (i = 0; nums[i]; i++)
			if (!is_num(e, nums[i])) {
				fprintf(stderr, "%s[].%s is not a number\n", key, nums[i]);
				CHECK(0);
			}
	}
}

static void validate(const cJSON *j)
{
	const char *src = getenv("CBN_SOURCE_DIR");
	char path[] = "/tmp/cbn_cuda_json_XXXXXX", cmd[2048];
	char *s = cJSON_PrintUnformatted(j);
	FILE *f;
	int fd, rc;

	if (!src || system("python3 -c 'import jsonschema' 2>/dev/null") != 0) {
		fprintf(stderr, "note: schema validation skipped (no CBN_SOURCE_DIR or no python3 jsonschema)\n");
		free(s);
		return;
	}
	fd = mkstemp(path);
	REQUIRE(fd >= 0 && s);
	f = fdopen(fd, "w");
	fputs(s, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "python3 -c 'import json,sys,jsonschema; s=json.load(open(sys.argv[1])); "
		 "jsonschema.validate(json.load(open(sys.argv[2])), {\"$ref\":\"#/$defs/cuda\",\"$defs\":s[\"$defs\"]})' "
		 "%s/docs/report.schema.json %s",
		 src, path);
	rc = system(cmd);
	CHECK_EQ_INT(rc, 0);
	unlink(path);
	free(s);
}

int main(void)
{
	static const char *const none[] = { NULL };
	static const char *const status_s[] = { "state", "message", NULL };
	static const char *const status_n[] = { "pid", "cupti_error", "dropped", "zero_ts", "flush_timed_out", NULL };
	static const char *const ops_s[] = { "name", "kind", NULL };
	static const char *const ops_n[] = { "self_cpu_ns", "cpu_total_ns", "self_cuda_ns", "cuda_total_ns", "calls", NULL };
	static const char *const kern_s[] = { "name", NULL };
	static const char *const kern_n[] = { "instances", "total_ns", "avg_ns", "med_ns", "min_ns", "max_ns",
					      "stddev_ns", "time_pct", "registers", "static_smem",
					      "dynamic_smem", "blocks_per_sm", NULL };
	static const char *const mem_s[] = { "name", "kind", NULL };
	static const char *const mem_n[] = { "count", "total_ns", "bytes", "avg_ns", "min_ns", "max_ns",
					     "pinned", "pageable", NULL };
	static const char *const api_n[] = { "calls", "total_ns", "avg_ns", "med_ns", "min_ns", "max_ns",
					     "stddev_ns", NULL };
	static const char *const site_s[] = { "function", "file", NULL };
	static const char *const site_n[] = { "line", "launches", "gpu_ns", NULL };
	static const char *const reco_s[] = { "id", "message", "evidence", NULL };
	static const char *const totals[] = { "kernels", "kernel_ns", "memcpy", "memcpy_ns", "memcpy_bytes",
					      "memset", "memset_ns", "api_calls", "api_ns", "sync_ns",
					      "gpu_busy_ns", NULL };
	static const char *const ov_n[] = { "gpu_utilization", "est_sm_efficiency", "cpu_ns", "gpu_ns",
					    "sync_blocked_ns", "gpu_idle_gaps_ns", NULL };
	struct report_opts o = { .limit = 1, .sort = "count" };
	struct profile p;
	cJSON *j, *k, *t, *ov, *ops;
	int i;

	build(&p);
	j = report_cuda_json(analysed(&p), &o);
	REQUIRE(j);
	check_rows(j, "status", status_s, status_n, 1);
	check_rows(j, "ops", ops_s, ops_n, 7);   /* step, 2 APIs, 2 kernels, copy, set: all, not --limit */
	check_rows(j, "kernels", kern_s, kern_n, 2);
	check_rows(j, "memops", mem_s, mem_n, 2);
	check_rows(j, "api", kern_s, api_n, 2);
	check_rows(j, "launch_sites", site_s, site_n, 2);   /* main.c:12 and the stackless copy */
	check_rows(j, "recommendations", reco_s, none, -1);
	CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(j, "recommendations")) > 0);

	t = cJSON_GetObjectItem(j, "totals");
	REQUIRE(cJSON_IsObject(t));
	for (i = 0; totals[i]; i++)
		CHECK(is_num(t, totals[i]));
	CHECK_EQ_INT(num(t, "kernels"), 10);
	CHECK_EQ_INT(num(t, "kernel_ns"), 10 * 480 * US);
	CHECK_EQ_INT(num(t, "memcpy_bytes"), 1 << 20);
	CHECK_EQ_INT(num(t, "api_calls"), 11);

	ov = cJSON_GetObjectItem(j, "overview");
	REQUIRE(cJSON_IsObject(ov));
	for (i = 0; ov_n[i]; i++)
		CHECK(is_num(ov, ov_n[i]));
	CHECK(is_num(ov, "est_achieved_occupancy") || cJSON_IsNull(cJSON_GetObjectItem(ov, "est_achieved_occupancy")));
	CHECK(is_str(ov, "verdict"));

	k = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "kernels"), 0);
	CHECK_EQ_INT(num(k, "instances"), 5);
	CHECK_EQ_INT(num(k, "total_ns"), 5 * 480 * US);
	CHECK_EQ_INT(num(k, "avg_ns"), 480 * US);
	CHECK(cJSON_IsArray(cJSON_GetObjectItem(k, "grid")) &&
	      cJSON_GetArraySize(cJSON_GetObjectItem(k, "grid")) == 3);
	CHECK_EQ_INT(cJSON_GetNumberValue(cJSON_GetArrayItem(cJSON_GetObjectItem(k, "block"), 0)), 256);
	CHECK_EQ_INT(num(k, "blocks_per_sm") * 100, 50);

	/* ops follow the sort key: count puts cudaLaunchKernel (10) first */
	ops = cJSON_GetObjectItem(j, "ops");
	CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(ops, 0), "name")), "cudaLaunchKernel");
	CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(ops, 0), "kind")), "api");
	CHECK_EQ_INT(num(cJSON_GetArrayItem(ops, 0), "cuda_total_ns"), 10 * 480 * US);

	CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "launch_sites"), 0), "function")), "main");
	validate(j);
	cJSON_Delete(j);
	pb_profile_free(&p);
	return test_result();
}
