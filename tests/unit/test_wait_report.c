/*
 * test_wait_report.c — the writers of the CPU waiting view on a hand-filled
 * struct wait_analysis (test_wait_fixture.h): the text report's CPU overview
 * (efficiency, shares, "(estimated: no --off-cpu)" without off-CPU data, the
 * critical thread, the Verdict line, the recommendations), the off-CPU
 * tables and their --limit, the header's Off-CPU line (recording and
 * refused); the JSON "waiting" object with the contract's keys, absent
 * without a waiting view; the reports validate against
 * docs/report.schema.json (python3 jsonschema; skipped, said so, without it).
 */

#include <cjson/cJSON.h>

#include "report/report.h"
#include "report/wait_report.h"
#include "test_json_read.h"
#include "testlib.h"
#include "test_wait_fixture.h"

static char dir[64];

static char *text_with(const struct analysis *a, const struct report_opts *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		abort();
	if (report_text(f, a, o) < 0)
		fprintf(stderr, "report_text failed\n");
	fclose(f);
	return buf;
}

static char *text_of(const struct analysis *a, int limit)
{
	struct report_opts o = {.limit = limit};

	return text_with(a, &o);
}

static int validate(const char *const *paths, int n)
{
	return jr_validate(paths, n,
			   "    if 'waiting' in d:\n"
			   "        # the schema must reject a waiting object without its verdict\n"
			   "        del d['waiting']['verdict']\n"
			   "        bad += not list(cls(schema).iter_errors(d))\n");
}

static void test_text(void)
{
	struct profile p;
	struct analysis a;
	char *t;

	wf_profile(&p);
	a = wf_analysis(&p, 1);
	t = text_of(&a, 15);
	REQUIRE(t != NULL);
	/* the header says it was recorded; the sampler's counts are -v's */
	CHECK(strstr(t, "  Off-CPU:    recorded at 100 Hz\n") != NULL);
	CHECK(strstr(t, "thread looks") == NULL);
	CHECK(strstr(t, "\nCPU overview\n") != NULL);
	CHECK(strstr(t, "Parallel efficiency        60.0%") != NULL);
	CHECK(strstr(t, "Spinning (busy-wait)       10.0%    20.0%    30.000ms") != NULL);
	CHECK(strstr(t, "Blocked (off the CPU)      36.7%            110.000ms") != NULL);
	CHECK(strstr(t, "Runnable (no core free)     1.7%              5.000ms") != NULL);
	CHECK(strstr(t, "Not seen                   11.7%             35.000ms  (between the wall "
			"sampler's looks)") != NULL);
	CHECK(strstr(t, "estimated: no --off-cpu") == NULL);
	CHECK(strstr(t, "Critical thread            app (tid 4242)") != NULL);
	/* one verdict per report, the header's: the overview gives its figures */
	CHECK(strstr(t, "CPU verdict") == NULL);
	CHECK(strstr(t, "CPU recommendations\n  [cpu-lock] shorten the critical section\n"
			"      evidence: one lock held 61 % of the run\n") != NULL);
	CHECK(strstr(t, "Off-CPU: where threads waited") != NULL);
	CHECK(strstr(t, "pthread_mutex_lock") != NULL);
	CHECK(strstr(t, "/src/app.c:55(worker)") != NULL);
	CHECK(strstr(t, "/src/app.c:80(load_item)") != NULL);
	CHECK(strstr(t, "Lock contention") != NULL);
	CHECK(strstr(t, "0x7ffd1000") != NULL);
	CHECK(strstr(t, "app (4242)") != NULL);
	CHECK(strstr(t, "90.0%") != NULL);
	CHECK(strstr(t, "Threads on and off the CPU") != NULL);
	CHECK(strstr(t, "worker-2") != NULL);
	CHECK(strstr(t, "Wall clock") != NULL);
	/* the overview ends the CPU part, before the footer */
	CHECK(strstr(t, "Wall clock") < strstr(t, "CPU overview"));
	CHECK(strstr(t, "CPU overview") < strstr(t, "Data quality"));
	CHECK(strstr(t, "= (CPU - spin) / (wall x 2: the busy threads at once, at most the "
			"CPUs)") != NULL);
	free(t);
	/* -v: the wall sampler's own counts */
	{
		struct report_opts v = {.limit = 15, .verbose = 1};

		t = text_with(&a, &v);
		REQUIRE(t != NULL);
		CHECK(strstr(t, "  Off-CPU:    100 Hz wall sampler; 10 ticks, 30 thread looks, 3 "
				"stretches recorded, 2 stacks unconfirmed") != NULL);
		free(t);
	}

	/* -q: no header, no formula hint; the overview stays */
	{
		struct report_opts q = {.limit = 15, .quiet = 1};

		t = text_with(&a, &q);
		REQUIRE(t != NULL);
		CHECK(strstr(t, "Parallel efficiency        60.0%\n") != NULL);
		CHECK(strstr(t, "Off-CPU:    ") == NULL);
		free(t);
	}
	/* --limit 1: one row each, the rest counted */
	t = text_of(&a, 1);
	REQUIRE(t != NULL);
	CHECK(strstr(t, "/src/app.c:80(load_item)") == NULL);
	CHECK(strstr(t, "(1 more sites: ") != NULL && strstr(t, " of the off-CPU time; use --limit)"));
	CHECK(strstr(t, "(2 more threads: ") != NULL && strstr(t, " of the CPU; use --limit)"));
	free(t);

	/* without --off-cpu: the overview only, blocked time estimated */
	p.processes[0].offcpu.state = CBN_OFFCPU_REFUSED;
	p.processes[0].offcpu.reason = "cannot read /proc/self/task";
	a = wf_analysis(&p, 0);
	t = text_of(&a, 15);
	REQUIRE(t != NULL);
	CHECK(strstr(t, "  Off-CPU:    not recorded: cannot read /proc/self/task\n") != NULL);
	CHECK(strstr(t, "Off the CPU                50.0%            150.000ms  (blocked or runnable: "
			"--off-cpu tells which)") != NULL);
	CHECK(strstr(t, "Off-CPU: where threads waited") == NULL);
	CHECK(strstr(t, "Lock contention") == NULL);
	free(t);

	/* no verdict, no critical thread, no sampler asked for */
	p.processes[0].offcpu.state = CBN_OFFCPU_OFF;
	wf_w.verdict = WAIT_V_NONE;
	wf_w.verdict_text = NULL;
	wf_w.critical = PROF_NONE;
	wf_w.nfindings = 0;
	t = text_of(&a, 15);
	REQUIRE(t != NULL);
	CHECK(strstr(t, "Off-CPU:    ") == NULL);
	CHECK(strstr(t, "Critical thread            none stands out") != NULL);
	CHECK(strstr(t, "CPU recommendations") == NULL);
	free(t);

	/* no waiting view: no overview */
	a.wait = NULL;
	t = text_of(&a, 15);
	REQUIRE(t != NULL);
	CHECK(strstr(t, "CPU overview") == NULL);
	free(t);
	wf_free(&p);
}

static void test_json(void)
{
	struct profile p;
	struct analysis a;
	char paths[3][256];
	const char *pp[3] = {paths[0], paths[1], paths[2]};
	const cJSON *w, *o, *e;
	cJSON *root;

	wf_profile(&p);
	a = wf_analysis(&p, 1);
	root = jr_write_read(&a, dir, "offcpu", paths[0], sizeof(paths[0]));
	REQUIRE(root != NULL);
	CHECK_EQ_INT(jr_num(root, "schema_version"), 5);
	w = jr_get(root, "waiting");
	REQUIRE(cJSON_IsObject(w));
	CHECK(cJSON_IsTrue(jr_get(w, "offcpu")));
	CHECK_EQ_INT(jr_num(w, "rate_hz"), 100);
	CHECK_EQ_INT(jr_num(w, "wall_ns"), 100 * EX_MS);
	CHECK_EQ_INT(jr_num(w, "thread_ns"), 300 * EX_MS);
	CHECK_EQ_INT(jr_num(w, "off_ns"), 110 * EX_MS);
	CHECK_EQ_INT(jr_num(w, "busy_threads"), 2);
	CHECK(jr_num(w, "efficiency") > 0.599 && jr_num(w, "efficiency") < 0.601);
	CHECK_EQ_INT(jr_num(jr_get(w, "activities"), "spin"), 30 * EX_MS);
	CHECK_EQ_INT(jr_num(jr_get(w, "activities"), "memcpy/memset"), 5 * EX_MS);
	CHECK(jr_num(jr_get(w, "shares"), "spin") > 0.099 && jr_num(jr_get(w, "shares"), "spin") < 0.101);
	CHECK(jr_num(jr_get(w, "shares"), "blocked") > 0.36 && jr_num(jr_get(w, "shares"), "blocked") < 0.37);
	CHECK_EQ_INT(jr_num(jr_get(w, "off_cpu"), "futex"), 80 * EX_MS);
	CHECK_EQ_INT(jr_num(jr_get(w, "off_cpu"), "runnable"), 5 * EX_MS);
	CHECK_STR(jr_str(w, "verdict"), "synchronization-bound");
	CHECK_STR(jr_str(w, "verdict_text"),
		  "synchronization-bound: 37 % of thread time waiting on one lock");
	o = jr_get(w, "critical");
	CHECK_EQ_INT(jr_num(o, "tid"), WF_PID);
	CHECK_STR(jr_str(o, "name"), "app");
	CHECK_EQ_INT(jr_num(o, "waiters"), 2);
	CHECK_EQ_INT(cJSON_GetArraySize(jr_get(w, "per_thread")), 3);
	e = cJSON_GetArrayItem(jr_get(w, "per_thread"), 2);
	CHECK_EQ_INT(jr_num(e, "tid"), WF_PID + 2);
	CHECK_EQ_INT(jr_num(e, "spin_ns"), 10 * EX_MS);
	CHECK_EQ_INT(jr_num(e, "lock_wait_ns"), 40 * EX_MS);
	CHECK_EQ_INT(jr_num(jr_get(e, "off_cpu"), "io"), 30 * EX_MS);
	e = cJSON_GetArrayItem(jr_get(w, "sites"), 0);
	CHECK_STR(jr_str(e, "function"), "worker");
	CHECK_STR(jr_str(e, "call"), "pthread_mutex_lock");
	CHECK_STR(jr_str(e, "kind"), "futex");
	CHECK_EQ_INT(jr_num(e, "line"), 55);
	CHECK_EQ_INT(jr_num(e, "threads"), 2);
	e = cJSON_GetArrayItem(jr_get(w, "locks"), 0);
	CHECK_STR(jr_str(e, "addr"), "0x7ffd1000");
	CHECK_STR(jr_str(e, "function"), "worker");
	CHECK_EQ_INT(jr_num(e, "wait_ns"), 80 * EX_MS);
	CHECK_EQ_INT(jr_num(e, "holder_tid"), WF_PID);
	CHECK_STR(jr_str(e, "holder_name"), "app");
	e = cJSON_GetArrayItem(jr_get(w, "wall_functions"), 1);
	CHECK_STR(jr_str(e, "function"), "pthread_mutex_lock");
	CHECK_EQ_INT(jr_num(e, "self_off_ns"), 80 * EX_MS);
	e = cJSON_GetArrayItem(jr_get(w, "recommendations"), 0);
	CHECK_STR(jr_str(e, "id"), "cpu-lock");
	CHECK_STR(jr_str(e, "evidence"), "one lock held 61 % of the run");
	cJSON_Delete(root);

	/* without --off-cpu: empty tables, no critical thread, holder unknown */
	a = wf_analysis(&p, 0);
	wf_w.critical = PROF_NONE;
	wf_w.verdict = WAIT_V_NONE;
	wf_w.verdict_text = NULL;
	root = jr_write_read(&a, dir, "plain", paths[1], sizeof(paths[1]));
	REQUIRE(root != NULL);
	w = jr_get(root, "waiting");
	REQUIRE(cJSON_IsObject(w));
	CHECK(cJSON_IsFalse(jr_get(w, "offcpu")));
	CHECK(cJSON_IsNull(jr_get(w, "critical")));
	CHECK(cJSON_IsNull(jr_get(w, "verdict_text")));
	CHECK_STR(jr_str(w, "verdict"), "");
	CHECK_EQ_INT(cJSON_GetArraySize(jr_get(w, "sites")), 0);
	CHECK_EQ_INT(jr_num(w, "blocked_est_ns"), 150 * EX_MS);
	cJSON_Delete(root);

	/* no waiting view: no key */
	a.wait = NULL;
	root = jr_write_read(&a, dir, "none", paths[2], sizeof(paths[2]));
	REQUIRE(root != NULL);
	CHECK(jr_get(root, "waiting") == NULL);
	cJSON_Delete(root);
	wf_free(&p);
	CHECK(validate(pp, 3) == 0);
}

static void test_labels(void)
{
	struct profile p;
	const struct analysis *a;
	const struct wait_stretch *s;
	char b[128];

	wf_profile(&p);
	a = analysed(&p);
	REQUIRE(a->wait && a->wait->nstretches == 3);
	s = a->wait->stretches;
	/* a stretch is named after the outermost system-library frame at the
	 * leaf; its site is the program's frame that called it */
	CHECK_STR(p.funcs[s[0].call].name, "pthread_mutex_lock");
	CHECK_STR(p.funcs[s[0].site].name, "worker");
	CHECK_STR(p.funcs[s[2].call].name, "read");
	CHECK_STR(p.funcs[s[2].site].name, "load_item");
	/* a futex wait in a lock whose owner is another thread: the holder */
	CHECK_EQ_INT(s[0].holder, wf_th[0]);
	CHECK_EQ_INT(s[2].holder, PROF_NONE);
	CHECK_STR(wait_offcpu_label(b, sizeof(b), CBN_OFF_FUTEX, "pthread_mutex_lock"),
		  "off-CPU futex: pthread_mutex_lock");
	CHECK_STR(wait_offcpu_label(b, sizeof(b), CBN_OFF_RUNQ, NULL), "off-CPU runnable");
	CHECK_STR(wait_offcpu_label(b, sizeof(b), 99, ""), "off-CPU other");
	wf_free(&p);
}

int main(void)
{
	snprintf(dir, sizeof(dir), "%s", ex_tmpdir());
	test_text();
	test_json();
	test_labels();
	ex_rmdir(dir);
	return test_result();
}
