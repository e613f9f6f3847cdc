/*
 * test_export_trace_mem.c — the trace's memory counter tracks on hand-built
 * memory views: "Host memory" (live, rss) in the process's pid and "GPU N
 * memory" (allocated, reserved), every point of the curve in time order,
 * --trace-window keeping the points inside it plus the value at its start,
 * none without memory data; each file passes tests/e2e/export_check.py.
 */

#include <cjson/cJSON.h>

#include "test_trace_read.h"
#include "testlib.h"
#include "test_mem_fixture.h"

static char dir[64];

struct pt {
	double ts;
	double a, b;
};

/* Counter events named name: their ts (µs) and the two args, in file order. */
static int counters(const char *path, const char *name, const char *ka, const char *kb,
		    struct pt *out, int max, double *pid)
{
	char *text = ex_slurp(path, NULL);
	cJSON *root = text ? cJSON_Parse(text) : NULL, *e;
	int n = 0;

	free(text);
	if (!root)
		return -1;
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(root, "traceEvents")) {
		const cJSON *ph = cJSON_GetObjectItemCaseSensitive(e, "ph");
		const cJSON *nm = cJSON_GetObjectItemCaseSensitive(e, "name");
		const cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args");

		if (!cJSON_IsString(ph) || strcmp(ph->valuestring, "C") != 0)
			continue;
		if (!cJSON_IsString(nm) || strcmp(nm->valuestring, name) != 0 || n >= max)
			continue;
		out[n].ts = cJSON_GetObjectItemCaseSensitive(e, "ts")->valuedouble;
		out[n].a = cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(args, ka))
				   ? cJSON_GetObjectItemCaseSensitive(args, ka)->valuedouble : -1;
		out[n].b = cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(args, kb))
				   ? cJSON_GetObjectItemCaseSensitive(args, kb)->valuedouble : -1;
		*pid = cJSON_GetObjectItemCaseSensitive(e, "pid")->valuedouble;
		n++;
	}
	cJSON_Delete(root);
	return n;
}

int main(void)
{
	struct profile p;
	struct analysis a;
	struct pt pts[16];
	double pid = 0;
	const char *path;

	snprintf(dir, sizeof(dir), "%s", ex_tmpdir());
	mf_profile(&p);

	/* no memory data: no counters */
	a = mf_analysis(&p, -1);
	REQUIRE((path = tr_write(&a, dir, "none", 0, 0)) != NULL);
	CHECK_EQ_INT(counters(path, "Host memory", "live", "rss", pts, 16, &pid), 0);
	CHECK(tr_check(path, "") == 0);

	/* empty memory view: still none */
	a = mf_analysis(&p, MF_EMPTY);
	REQUIRE((path = tr_write(&a, dir, "empty", 0, 0)) != NULL);
	CHECK_EQ_INT(counters(path, "Host memory", "live", "rss", pts, 16, &pid), 0);

	/* host only: every point, µs since the start, in the process's pid */
	a = mf_analysis(&p, MF_HOST);
	REQUIRE((path = tr_write(&a, dir, "host", 0, 0)) != NULL);
	REQUIRE(counters(path, "Host memory", "live", "rss", pts, 16, &pid) == 4);
	CHECK_EQ_INT(pid, MF_PID);
	CHECK(pts[1].ts == 40000.0 && pts[1].a == (double)MF_HOST_PEAK && pts[1].b == 9000000);
	CHECK(pts[0].ts < pts[1].ts && pts[1].ts < pts[2].ts && pts[2].ts < pts[3].ts);
	CHECK_EQ_INT(counters(path, "GPU 0 memory", "allocated", "reserved", pts, 16, &pid), 0);
	CHECK(tr_check(path, "--counters 'Host memory'") == 0);

	/* GPU only */
	a = mf_analysis(&p, MF_GPU);
	REQUIRE((path = tr_write(&a, dir, "gpu", 0, 0)) != NULL);
	REQUIRE(counters(path, "GPU 0 memory", "allocated", "reserved", pts, 16, &pid) == 4);
	CHECK_EQ_INT(pid, MF_PID); /* no MEMORY2 record: the root process */
	CHECK(pts[1].ts == 60000.0 && pts[1].a == (double)MF_GPU_PEAK &&
	      pts[1].b == (double)(MF_GPU_PEAK + (64 << 20)));
	CHECK_EQ_INT(counters(path, "Host memory", "live", "rss", pts, 16, &pid), 0);
	CHECK(tr_check(path, "--counters 'GPU 0 memory'") == 0);

	/* both, windowed to 30-75 ms: host 10 ms (repeated at 30), 40, 70;
	 * GPU 20 ms (repeated at 30), 60 */
	a = mf_analysis(&p, MF_BOTH);
	REQUIRE((path = tr_write(&a, dir, "window", 30 * EX_MS, 75 * EX_MS)) != NULL);
	REQUIRE(counters(path, "Host memory", "live", "rss", pts, 16, &pid) == 3);
	CHECK(pts[0].ts == 30000.0 && pts[0].a == 1000000);
	CHECK(pts[1].ts == 40000.0 && pts[2].ts == 70000.0);
	REQUIRE(counters(path, "GPU 0 memory", "allocated", "reserved", pts, 16, &pid) == 2);
	CHECK(pts[0].ts == 30000.0 && pts[0].a == (double)(128 << 20));
	CHECK(pts[1].ts == 60000.0);
	CHECK(tr_check(path, "--counters 'Host memory,GPU 0 memory' --window 30000:75000") == 0);
	/* a window after the last point: the final value, once, at its start */
	REQUIRE((path = tr_write(&a, dir, "late", 97 * EX_MS, 0)) != NULL);
	REQUIRE(counters(path, "Host memory", "live", "rss", pts, 16, &pid) == 1);
	CHECK(pts[0].ts == 97000.0 && pts[0].a == 1048576);

	pb_profile_free(&p);
	if (!getenv("KEEP"))
		ex_rmdir(dir);
	return test_result();
}
