/*
 * test_export_trace_steps.c — the trace's steps on a hand-built steps view:
 * one "ProfilerStep#N" slice per step (cat user_annotation, as Kineto) with
 * its absolute number, on a "Steps" lane of the step's process sorted above
 * its threads; capture windows as "Capture" slices with their causes, only
 * when the process used capture controls; --trace-window clips both; no such
 * lane without steps.  Each file passes tests/e2e/export_check.py.
 */

#include <cjson/cJSON.h>

#include "report/export.h"
#include "test_trace_read.h"
#include "testlib.h"
#include "test_steps_fixture.h"

static char dir[64];

struct sl {
	char name[64];
	double ts, dur, pid, tid, n;
	char a[32], b[32];
};

/* The X slices of category cat, in file order. */
static int slices(const cJSON *root, const char *cat, struct sl *out, int max)
{
	const cJSON *e;
	int n = 0;

	cJSON_ArrayForEach(e, jr_get(root, "traceEvents")) {
		const cJSON *args = jr_get(e, "args");

		if (strcmp(tr_str(e, "ph"), "X") != 0 || strcmp(tr_str(e, "cat"), cat) != 0 || n >= max)
			continue;
		snprintf(out[n].name, sizeof(out[n].name), "%s", tr_str(e, "name"));
		out[n].ts = jr_num(e, "ts");
		out[n].dur = jr_num(e, "dur");
		out[n].pid = jr_num(e, "pid");
		out[n].tid = jr_num(e, "tid");
		out[n].n = cJSON_IsNumber(jr_get(args, "step")) ? jr_num(args, "step")
							      : jr_num(args, "first_step");
		snprintf(out[n].a, sizeof(out[n].a), "%s", tr_str(args, "open_cause"));
		snprintf(out[n].b, sizeof(out[n].b), "%s", tr_str(args, "close_cause"));
		n++;
	}
	return n;
}

/* The ProfilerStep#N slices: the fixture's "step 3" range is a
 * user_annotation too. */
static int profiler_steps(const cJSON *root, struct sl *out, int max)
{
	int n = slices(root, "user_annotation", out, max), k = 0;

	for (int i = 0; i < n; i++)
		if (strncmp(out[i].name, "ProfilerStep#", 13) == 0)
			out[k++] = out[i];
	return k;
}

/* The thread_name and thread_sort_index of lane (pid, tid). */
static void lane_meta(const cJSON *root, double pid, double tid, char *name, size_t len,
		      double *sort)
{
	const cJSON *e;

	name[0] = '\0';
	*sort = 1e18;
	cJSON_ArrayForEach(e, jr_get(root, "traceEvents")) {
		if (strcmp(tr_str(e, "ph"), "M") != 0 || jr_num(e, "pid") != pid || jr_num(e, "tid") != tid)
			continue;
		if (strcmp(tr_str(e, "name"), "thread_name") == 0)
			snprintf(name, len, "%s", tr_str(jr_get(e, "args"), "name"));
		else if (strcmp(tr_str(e, "name"), "thread_sort_index") == 0)
			*sort = jr_num(jr_get(e, "args"), "sort_index");
	}
}

/* The lowest sort index of any cpu_sample lane. */
static double cpu_sort(const cJSON *root)
{
	const cJSON *e;
	double best = 1e18;

	cJSON_ArrayForEach(e, jr_get(root, "traceEvents")) {
		char name[64];
		double s;

		if (strcmp(tr_str(e, "cat"), "cpu_sample") != 0)
			continue;
		lane_meta(root, jr_num(e, "pid"), jr_num(e, "tid"), name, sizeof(name), &s);
		if (s < best)
			best = s;
	}
	return best;
}

static cJSON *load(const char *path)
{
	char *text = path ? ex_slurp(path, NULL) : NULL;
	cJSON *root = text ? cJSON_Parse(text) : NULL;

	free(text);
	return root;
}

int main(void)
{
	struct profile p;
	struct analysis a;
	struct sl s[16], w[8];
	const char *path;
	cJSON *root;
	char name[64];
	double sort;
	int n;

	snprintf(dir, sizeof(dir), "%s", ex_tmpdir());

	/* without steps: no ProfilerStep, no Capture */
	sf_profile(&p, 0);
	a = sf_analysis(&p, 0);
	path = tr_write(&a, dir, "none", 0, 0);
	REQUIRE((root = load(path)) != NULL);
	CHECK_EQ_INT(profiler_steps(root, s, 16), 0);
	CHECK_EQ_INT(slices(root, "capture", w, 8), 0);
	cJSON_Delete(root);
	CHECK(tr_check(path, "") == 0);

	/* steps, no controls: four steps, no Capture lane (the one window
	 * would be the whole process) */
	a = sf_analysis(&p, 1);
	path = tr_write(&a, dir, "plain", 0, 0);
	REQUIRE((root = load(path)) != NULL);
	/* the fixture's "step 3" range is an annotation too: keep ProfilerStep# */
	n = profiler_steps(root, s, 16);
	REQUIRE(n == SF_NSTEPS);
	CHECK_STR(s[0].name, "ProfilerStep#2");
	CHECK_STR(s[3].name, "ProfilerStep#5");
	CHECK(s[0].n == 2 && s[3].n == 5);
	CHECK(s[0].ts == 5000 && s[0].dur == 40000);   /* µs since the start */
	CHECK(s[3].ts == 70000 && s[3].dur == 10000);
	CHECK(s[0].pid == SF_PID);
	for (int i = 1; i < n; i++)
		CHECK(s[i].pid == s[0].pid && s[i].tid == s[0].tid);
	lane_meta(root, s[0].pid, s[0].tid, name, sizeof(name), &sort);
	CHECK_STR(name, "Steps");
	CHECK(sort < cpu_sort(root));
	CHECK_EQ_INT(slices(root, "capture", w, 8), 0);
	cJSON_Delete(root);
	CHECK(tr_check(path, "") == 0);
	sf_free(&p);

	/* controlled capture: two Capture slices with their causes */
	sf_profile(&p, 1);
	a = sf_analysis(&p, 1);
	path = tr_write(&a, dir, "windows", 0, 0);
	REQUIRE((root = load(path)) != NULL);
	n = slices(root, "capture", w, 8);
	REQUIRE(n == 2);
	CHECK_STR(w[0].name, "Capture");
	CHECK(w[0].ts == 5000 && w[0].dur == 50000);
	CHECK_STR(w[0].a, "schedule");
	CHECK_STR(w[0].b, "schedule");
	CHECK(w[0].n == 2);
	CHECK_STR(w[1].a, "ctl");
	CHECK_STR(w[1].b, "exit");
	CHECK(w[1].n == 4);
	CHECK(w[0].pid == SF_PID && w[1].tid == w[0].tid);
	lane_meta(root, w[0].pid, w[0].tid, name, sizeof(name), &sort);
	CHECK_STR(name, "Capture");
	cJSON_Delete(root);
	CHECK(tr_check(path, "") == 0);

	/* --trace-window 50ms:75ms: steps 3 (clipped), 4 and 5 (clipped) */
	path = tr_write(&a, dir, "window", 50 * EX_MS, 75 * EX_MS);
	REQUIRE((root = load(path)) != NULL);
	n = profiler_steps(root, s, 16);
	REQUIRE(n == 3);
	CHECK_STR(s[0].name, "ProfilerStep#3");
	CHECK(s[0].ts == 50000 && s[0].dur == 5000);
	CHECK_STR(s[2].name, "ProfilerStep#5");
	CHECK(s[2].ts == 70000 && s[2].dur == 5000);
	CHECK_EQ_INT(slices(root, "capture", w, 8), 2);
	cJSON_Delete(root);
	CHECK(tr_check(path, "") == 0);

	sf_free(&p);
	if (!getenv("KEEP"))
		ex_rmdir(dir);
	return test_result();
}
