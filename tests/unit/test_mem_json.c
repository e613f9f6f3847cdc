/*
 * test_mem_json.c — the JSON report's "memory" object on hand-built memory
 * views: absent without memory data, present and empty with no spaces, and
 * host-only, GPU-only and both with their peaks, times, sites, leaks and
 * curves; every report validates against docs/report.schema.json (python3
 * jsonschema; that part is skipped, said so, when it is missing).
 */
#include <math.h>

#include <cjson/cJSON.h>

#include "report/report.h"
#include "test_json_read.h"
#include "testlib.h"
#include "test_mem_fixture.h"

static char dir[64];

static int is_null(const cJSON *o, const char *key)
{
	return cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, key));
}

static void check_host(const cJSON *sp, const cJSON *sites)
{
	const cJSON *tl = jr_get(sp, "timeline"), *ap = jr_get(sp, "at_peak"), *s;

	CHECK_STR(jr_str(sp, "kind"), "host");
	CHECK_STR(jr_str(sp, "name"), "host");
	CHECK_EQ_INT(jr_num(sp, "pid"), MF_PID);
	CHECK(is_null(sp, "device"));
	CHECK_EQ_INT(jr_num(sp, "peak_bytes"), MF_HOST_PEAK);
	CHECK(fabs(jr_num(sp, "peak_s") - 0.040) < 1e-9);
	CHECK(cJSON_IsTrue(jr_get(sp, "peak_exact")));
	CHECK_STR(jr_str(sp, "peak_range"), "step 3");
	CHECK_EQ_INT(jr_num(sp, "rss_peak_bytes"), 9500000);
	CHECK(is_null(sp, "total_bytes"));
	CHECK_EQ_INT(jr_num(sp, "live_end_bytes"), 1048576);
	CHECK_EQ_INT(jr_num(sp, "allocs"), 1016);
	CHECK_EQ_INT(jr_num(sp, "frees"), 1000);
	CHECK_EQ_INT(cJSON_GetArraySize(jr_get(tl, "t_s")), 4);
	CHECK_EQ_INT(cJSON_GetArraySize(jr_get(tl, "live_bytes")), 4);
	CHECK_EQ_INT(cJSON_GetArraySize(jr_get(tl, "resident_bytes")), 4);
	CHECK(fabs(cJSON_GetArrayItem(jr_get(tl, "t_s"), 1)->valuedouble - 0.040) < 1e-9);
	CHECK_EQ_INT(cJSON_GetArrayItem(jr_get(tl, "live_bytes"), 1)->valuedouble, MF_HOST_PEAK);
	CHECK_EQ_INT(cJSON_GetArrayItem(jr_get(tl, "resident_bytes"), 2)->valuedouble, 9500000);
	REQUIRE(cJSON_GetArraySize(ap) == 2);
	s = cJSON_GetArrayItem(sites, (int)jr_num(cJSON_GetArrayItem(ap, 0), "site"));
	REQUIRE(s != NULL);
	CHECK_STR(jr_str(s, "function"), "grow_buffer");
	CHECK_EQ_INT(jr_num(cJSON_GetArrayItem(ap, 0), "bytes"), 1951424);
}

static void check_gpu(const cJSON *sp)
{
	CHECK_STR(jr_str(sp, "kind"), "gpu");
	CHECK_STR(jr_str(sp, "name"), "GPU 0");
	CHECK(is_null(sp, "pid"));
	CHECK_EQ_INT(jr_num(sp, "device"), 0);
	CHECK_EQ_INT(jr_num(sp, "peak_bytes"), MF_GPU_PEAK);
	CHECK(fabs(jr_num(sp, "peak_s") - 0.060) < 1e-9);
	CHECK(is_null(sp, "peak_range"));
	CHECK_EQ_INT(jr_num(sp, "reserved_peak_bytes"), MF_GPU_PEAK + (64 << 20));
	CHECK(jr_num(sp, "total_bytes") == (double)(80ull << 30));
	CHECK_EQ_INT(jr_num(sp, "live_end_bytes"), 0);
}

static int validate(const char *const *paths, int n)
{
	return jr_validate(paths, n,
			   "    if 'memory' in d:\n"
			   "        # the schema must reject a site without bytes\n"
			   "        if d['memory']['sites']:\n"
			   "            del d['memory']['sites'][0]['bytes']\n"
			   "            bad += not list(cls(schema).iter_errors(d))\n");
}

int main(void)
{
	struct profile p;
	struct analysis a;
	char paths[5][256];
	const char *pp[5];
	cJSON *root, *m, *sp, *sites, *leaks;

	snprintf(dir, sizeof(dir), "%s", ex_tmpdir());
	mf_profile(&p);

	/* no memory data: no memory key, schema 3 */
	a = mf_analysis(&p, -1);
	root = jr_write_read(&a, dir, "none", paths[0], sizeof(paths[0]));
	REQUIRE(root != NULL);
	CHECK(jr_get(root, "memory") == NULL);
	CHECK_EQ_INT(jr_num(root, "schema_version"), 5);
	cJSON_Delete(root);

	/* memory asked for, nothing recorded: the object with empty arrays */
	a = mf_analysis(&p, MF_EMPTY);
	root = jr_write_read(&a, dir, "empty", paths[1], sizeof(paths[1]));
	REQUIRE(root != NULL);
	m = (cJSON *)jr_get(root, "memory");
	REQUIRE(cJSON_IsObject(m));
	CHECK_EQ_INT(jr_num(m, "rate"), 0);
	CHECK_EQ_INT(cJSON_GetArraySize(jr_get(m, "spaces")), 0);
	CHECK_EQ_INT(cJSON_GetArraySize(jr_get(m, "sites")), 0);
	CHECK_EQ_INT(cJSON_GetArraySize(jr_get(m, "leaks")), 0);
	CHECK(is_null(m, "refused"));
	cJSON_Delete(root);

	/* host only, with a finding of the memory rules */
	a = mf_analysis(&p, MF_HOST);
	mf_mem.refused = NULL;
	{
		static char msg[] = "free blocks later", ev[] = "1000 allocations";
		static struct rule_finding reco = {"alloc-churn", msg, ev};

		mf_mem.recos = &reco;
		mf_mem.nrecos = 1;
	}
	root = jr_write_read(&a, dir, "host", paths[2], sizeof(paths[2]));
	REQUIRE(root != NULL);
	m = (cJSON *)jr_get(root, "memory");
	REQUIRE(cJSON_IsObject(m));
	CHECK_EQ_INT(jr_num(m, "rate"), 524288);
	CHECK(cJSON_IsFalse(jr_get(m, "exact")));
	CHECK_EQ_INT(jr_num(m, "sampled"), 129);
	CHECK_EQ_INT(jr_num(m, "lost"), 1);
	sp = (cJSON *)jr_get(m, "spaces");
	sites = (cJSON *)jr_get(m, "sites");
	leaks = (cJSON *)jr_get(m, "leaks");
	REQUIRE(cJSON_GetArraySize(sp) == 1 && cJSON_GetArraySize(sites) == 2);
	check_host(cJSON_GetArrayItem(sp, 0), sites);
	{
		const cJSON *s0 = cJSON_GetArrayItem(sites, 0), *s1 = cJSON_GetArrayItem(sites, 1);

		CHECK_STR(jr_str(s0, "kind"), "host");
		CHECK(is_null(s0, "device"));
		CHECK_STR(jr_str(s0, "file"), "/src/app.c");
		CHECK_EQ_INT(jr_num(s0, "line"), 42);
		CHECK_EQ_INT(jr_num(s0, "bytes"), 52428800); /* estimates as whole numbers */
		CHECK_EQ_INT(jr_num(s0, "allocs"), 1000);
		CHECK_EQ_INT(jr_num(s0, "records"), 120);
		CHECK_EQ_INT(jr_num(s0, "short_lived"), 900);
		CHECK_EQ_INT(jr_num(s0, "median_life_ns"), 40000);
		CHECK(cJSON_IsFalse(jr_get(s0, "inlined")));
		CHECK_STR(jr_str(s1, "function"), "leak_table");
		CHECK(cJSON_IsTrue(jr_get(s1, "inlined")));
		CHECK_EQ_INT(jr_num(s1, "live_end_blocks"), 16);
	}
	REQUIRE(cJSON_GetArraySize(leaks) == 1);
	CHECK_EQ_INT(jr_num(cJSON_GetArrayItem(leaks, 0), "site"), 1);
	CHECK_EQ_INT(jr_num(cJSON_GetArrayItem(leaks, 0), "bytes"), 1048576);
	CHECK_EQ_INT(jr_num(cJSON_GetArrayItem(leaks, 0), "blocks"), 16);
	REQUIRE(cJSON_GetArraySize(jr_get(m, "recommendations")) == 1);
	CHECK_STR(jr_str(cJSON_GetArrayItem(jr_get(m, "recommendations"), 0), "id"), "alloc-churn");
	CHECK_STR(jr_str(cJSON_GetArrayItem(jr_get(m, "recommendations"), 0), "evidence"), "1000 allocations");
	mf_mem.recos = NULL;
	mf_mem.nrecos = 0;
	cJSON_Delete(root);

	/* GPU only */
	a = mf_analysis(&p, MF_GPU);
	root = jr_write_read(&a, dir, "gpu", paths[3], sizeof(paths[3]));
	REQUIRE(root != NULL);
	m = (cJSON *)jr_get(root, "memory");
	REQUIRE(cJSON_IsObject(m));
	CHECK_EQ_INT(jr_num(m, "rate"), 0);
	REQUIRE(cJSON_GetArraySize(jr_get(m, "spaces")) == 1);
	check_gpu(cJSON_GetArrayItem(jr_get(m, "spaces"), 0));
	CHECK_STR(jr_str(cJSON_GetArrayItem(jr_get(m, "sites"), 0), "kind"), "gpu");
	CHECK_EQ_INT(jr_num(cJSON_GetArrayItem(jr_get(m, "sites"), 0), "device"), 0);
	CHECK_EQ_INT(cJSON_GetArraySize(jr_get(m, "leaks")), 0);
	cJSON_Delete(root);

	/* both, with a refusal message */
	a = mf_analysis(&p, MF_BOTH);
	mf_mem.refused = "statically linked allocator";
	root = jr_write_read(&a, dir, "both", paths[4], sizeof(paths[4]));
	REQUIRE(root != NULL);
	m = (cJSON *)jr_get(root, "memory");
	REQUIRE(cJSON_GetArraySize(jr_get(m, "spaces")) == 2);
	check_host(cJSON_GetArrayItem(jr_get(m, "spaces"), 0), (cJSON *)jr_get(m, "sites"));
	check_gpu(cJSON_GetArrayItem(jr_get(m, "spaces"), 1));
	CHECK_STR(jr_str(m, "refused"), "statically linked allocator");
	CHECK_EQ_INT(cJSON_GetArraySize(jr_get(m, "sites")), 3);
	cJSON_Delete(root);

	for (int i = 0; i < 5; i++)
		pp[i] = paths[i];
	CHECK(validate(pp, 5) == 0);
	pb_profile_free(&p);
	if (!getenv("KEEP"))
		ex_rmdir(dir);
	return test_result();
}
