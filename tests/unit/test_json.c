/*
 * test_json.c — the JSON report on hand-built profiles: every key of the
 * brief's shape with the right type, all functions (not limited, names not
 * truncated), ns = samples × period per process, exit_code null after an
 * unclean exit, measured CPU (integer or null, summed per process and run),
 * integers printed as integers, and write errors.
 */
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "report/report.h"
#include "analysed.h"
#include "testlib.h"
#include "test_cpu_builder.h"

static cJSON *load(const char *path, char **text_out)
{
	FILE *f = fopen(path, "r");
	char *text;
	long n;
	cJSON *j;

	REQUIRE(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	text = calloc(1, (size_t)n + 1);
	REQUIRE(text);
	REQUIRE(fread(text, 1, (size_t)n, f) == (size_t)n);
	fclose(f);
	j = cJSON_Parse(text);
	REQUIRE(j);
	*text_out = text;
	return j;
}

static const cJSON *get(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!v)
		fprintf(stderr, "missing key \"%s\"\n", key);
	return v;
}

static int is_int(const cJSON *v)
{
	return v && cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble);
}

static double num(const cJSON *o, const char *key)
{
	const cJSON *v = get(o, key);

	return v && cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const cJSON *func_named(const cJSON *root, const char *name)
{
	const cJSON *f;

	cJSON_ArrayForEach(f, get(root, "functions"))
	{
		const cJSON *n = get(f, "name");

		if (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0)
			return f;
	}
	return NULL;
}

static char longname[300];

static void build(struct pb *b)
{
	uint32_t mainf, heavy, light, lib, big, p1, p2, t1, t2, t3, i;
	static char names[30][16];

	memset(longname, 'y', sizeof(longname) - 1);
	pb_init(b, 1000000, "./split");
	b->p.exit_status = -1;
	b->p.exit_signal = 11;
	b->p.wall_ns = 2500000000ull;
	mainf = pb_func(b, "main", "/src/split.c", 40, "split");
	heavy = pb_func(b, "heavy", "/src/split.c", 12, "split");
	light = pb_func(b, "light", "/src/split.c", 22, "split");
	lib = pb_func(b, "[libc.so.6+0x1234]", "", 0, "libc.so.6");
	big = pb_func(b, longname, "/src/split.c", 90, "split");
	p1 = pb_process(b, 500, 1, "/bin/split", "./split 0.3", 1000000);
	p2 = pb_process(b, 501, 500, "/bin/child", "child -x", 2000000);
	b->p.processes[p1].clean_exit = 0;
	b->p.processes[p1].exited = 0;
	b->p.processes[p2].exit_code = 4;
	b->p.processes[p2].damaged = 1;
	b->p.processes[p2].lost[CBN_LOST_BUFFER_FULL] = 2;
	t1 = pb_thread(b, 500, p1, "split");
	t2 = pb_thread(b, 502, p1, "");
	t3 = pb_thread(b, 501, p2, "child");
	pb_samples(b, t1, pb_stack(b, 2, (uint32_t[]){ heavy, mainf }), 300, 1, 0);
	pb_samples(b, t2, pb_stack(b, 2, (uint32_t[]){ light, mainf }), 100, 1, 0);
	pb_samples(b, t3, pb_stack(b, 1, (uint32_t[]){ lib }), 10, 2, CBN_SAMPLE_PC_ONLY);
	pb_samples(b, t1, pb_stack(b, 2, (uint32_t[]){ big, mainf }), 1, 1, CBN_SAMPLE_TRUNCATED);
	/* 30 more functions: JSON lists them all whatever the --limit */
	for (i = 0; i < 30; i++) {
		uint32_t f;

		snprintf(names[i], sizeof(names[i]), "extra%02u", i);
		f = pb_func(b, names[i], "/src/extra.c", i + 1, "split");
		pb_samples(b, t1, pb_stack(b, 2, (uint32_t[]){ f, mainf }), 1, 1, 0);
	}
	pb_warning(b, "501.0.cbp: damaged");
	/* exact CPU from THREAD_END: pid 500's two threads have it, the child's
	 * thread none (it was still running when its process died) */
	b->p.threads[t1].cpu_ns = 350000000;
	b->p.threads[t2].cpu_ns = 120000001;
}

static void test_shape(void)
{
	struct pb b;
	struct report_opts o = { .limit = 3 };
	char path[] = "/tmp/cbn-test-json-XXXXXX", err[256] = "", *text;
	const cJSON *run, *lost, *f, *fn, *pr, *th, *ln;
	cJSON *root;
	double prev = INFINITY;
	int fd, n;
	size_t i;
	static const char *const run_keys[] = { "exit_status", "exit_signal", "wall_ns", "cpu_ns",
						"period_ns", "samples", "weight", "truncated",
						"pc_only", "processes", "threads" };

	build(&b);
	fd = mkstemp(path);
	REQUIRE(fd >= 0);
	close(fd);
	REQUIRE(report_json_write(analysed(&b.p), &o, path, err, sizeof(err)) == 0);
	root = load(path, &text);
	unlink(path);

	CHECK_EQ_INT(num(root, "schema_version"), 5);
	CHECK_STR(cJSON_GetStringValue(get(get(root, "tool"), "name")), "cbottleneck");
	CHECK(cJSON_IsString(get(get(root, "tool"), "version")));

	run = get(root, "run");
	REQUIRE(cJSON_IsObject(run));
	for (i = 0; i < sizeof(run_keys) / sizeof(run_keys[0]); i++)
		CHECK(is_int(get(run, run_keys[i])));
	CHECK(cJSON_IsArray(get(run, "command")));
	CHECK_STR(cJSON_GetStringValue(cJSON_GetArrayItem(get(run, "command"), 0)), "./split");
	CHECK_EQ_INT(num(run, "exit_status"), -1);
	CHECK_EQ_INT(num(run, "exit_signal"), 11);
	CHECK_EQ_INT(num(run, "wall_ns"), 2500000000ll);
	CHECK(fabs(num(run, "frequency_hz") - 1000.0) < 1e-9);
	CHECK_EQ_INT(num(run, "period_ns"), 1000000);
	CHECK_EQ_INT(num(run, "samples"), 300 + 100 + 10 + 1 + 30);
	CHECK_EQ_INT(num(run, "weight"), 300 + 100 + 20 + 1 + 30);
	/* 431 samples at 1 ms in pid 500, 20 periods at 2 ms in pid 501 */
	CHECK_EQ_INT(num(run, "cpu_ns"), 431 * 1000000ll + 20 * 2000000ll);
	CHECK_EQ_INT(num(run, "truncated"), 1);
	CHECK_EQ_INT(num(run, "pc_only"), 10);
	CHECK_EQ_INT(num(run, "processes"), 2);
	CHECK_EQ_INT(num(run, "threads"), 3);
	lost = get(run, "lost");
	REQUIRE(cJSON_IsObject(lost));
	CHECK_EQ_INT(num(lost, "reentrant"), 0);
	CHECK_EQ_INT(num(lost, "buffer_full"), 2);
	CHECK_EQ_INT(num(lost, "no_thread"), 0);
	CHECK_EQ_INT(num(lost, "foreign_pid"), 0);
	CHECK_EQ_INT(num(lost, "disabled"), 0);

	/* functions: all 35, by self_ns descending, integers */
	fn = get(root, "functions");
	REQUIRE(cJSON_IsArray(fn));
	CHECK_EQ_INT(cJSON_GetArraySize(fn), 35);
	n = 0;
	cJSON_ArrayForEach(f, fn)
	{
		CHECK(cJSON_IsString(get(f, "name")));
		CHECK(cJSON_IsString(get(f, "file")));
		CHECK(cJSON_IsString(get(f, "module")));
		CHECK(is_int(get(f, "line")));
		CHECK(is_int(get(f, "self_ns")));
		CHECK(is_int(get(f, "total_ns")));
		CHECK(is_int(get(f, "self_samples")));
		CHECK(is_int(get(f, "total_samples")));
		CHECK(num(f, "self_ns") <= prev);
		CHECK(num(f, "self_ns") <= num(f, "total_ns"));
		prev = num(f, "self_ns");
		n++;
	}
	CHECK_EQ_INT(n, 35);
	f = func_named(root, "heavy");
	REQUIRE(f);
	CHECK_STR(cJSON_GetStringValue(get(f, "file")), "/src/split.c");
	CHECK_EQ_INT(num(f, "line"), 12);
	CHECK_STR(cJSON_GetStringValue(get(f, "module")), "split");
	CHECK_EQ_INT(num(f, "self_samples"), 300);
	CHECK_EQ_INT(num(f, "self_ns"), 300 * 1000000ll);
	CHECK(f == cJSON_GetArrayItem(fn, 0));
	f = func_named(root, "main");
	REQUIRE(f);
	CHECK_EQ_INT(num(f, "self_samples"), 0);
	CHECK_EQ_INT(num(f, "total_samples"), 431);
	f = func_named(root, "[libc.so.6+0x1234]");
	REQUIRE(f);
	CHECK_EQ_INT(num(f, "self_samples"), 20); /* weights, not records */
	CHECK_EQ_INT(num(f, "self_ns"), 20 * 2000000ll);
	CHECK_STR(cJSON_GetStringValue(get(f, "file")), "");
	CHECK_EQ_INT(num(f, "line"), 0);
	CHECK(func_named(root, longname) != NULL); /* never truncated */
	CHECK(func_named(root, "extra29") != NULL);

	/* lines */
	ln = get(root, "lines");
	REQUIRE(cJSON_IsArray(ln));
	f = cJSON_GetArrayItem(ln, 0);
	REQUIRE(f);
	CHECK_STR(cJSON_GetStringValue(get(f, "file")), "/src/split.c");
	CHECK_EQ_INT(num(f, "line"), 13);
	CHECK_STR(cJSON_GetStringValue(get(f, "function")), "heavy");
	CHECK_EQ_INT(num(f, "self_samples"), 300);
	CHECK(is_int(get(f, "self_ns")));

	/* processes */
	pr = get(root, "processes");
	REQUIRE(cJSON_GetArraySize(pr) == 2);
	f = cJSON_GetArrayItem(pr, 0);
	CHECK_EQ_INT(num(f, "pid"), 500);
	CHECK_EQ_INT(num(f, "ppid"), 1);
	CHECK_EQ_INT(num(f, "exec_seq"), 0);
	CHECK_STR(cJSON_GetStringValue(get(f, "exe")), "/bin/split");
	CHECK_STR(cJSON_GetStringValue(get(f, "command")), "./split 0.3");
	CHECK_EQ_INT(num(f, "cpu_ns"), 431 * 1000000ll);
	CHECK_EQ_INT(num(f, "samples"), 431);
	CHECK(cJSON_IsFalse(get(f, "clean_exit")));
	CHECK(cJSON_IsNull(get(f, "exit_code")));
	CHECK(cJSON_IsFalse(get(f, "damaged")));
	f = cJSON_GetArrayItem(pr, 1);
	CHECK(cJSON_IsTrue(get(f, "clean_exit")));
	CHECK_EQ_INT(num(f, "exit_code"), 4);
	CHECK(cJSON_IsTrue(get(f, "damaged")));
	CHECK_EQ_INT(num(f, "cpu_ns"), 20 * 2000000ll);

	/* threads */
	th = get(root, "threads");
	REQUIRE(cJSON_GetArraySize(th) == 3);
	f = cJSON_GetArrayItem(th, 2);
	CHECK_EQ_INT(num(f, "tid"), 501);
	CHECK_EQ_INT(num(f, "pid"), 501);
	CHECK_STR(cJSON_GetStringValue(get(f, "name")), "child");
	CHECK_EQ_INT(num(f, "samples"), 10);
	CHECK_EQ_INT(num(f, "cpu_ns"), 40000000);
	f = cJSON_GetArrayItem(th, 1);
	CHECK_STR(cJSON_GetStringValue(get(f, "name")), "");
	CHECK_EQ_INT(num(f, "pid"), 500);

	/* measured CPU: integers where THREAD_END gave one, null elsewhere; a
	 * process's is the sum over its threads, null when one is unknown */
	CHECK_EQ_INT(num(cJSON_GetArrayItem(th, 0), "measured_cpu_ns"), 350000000);
	CHECK(is_int(get(cJSON_GetArrayItem(th, 1), "measured_cpu_ns")));
	CHECK_EQ_INT(num(cJSON_GetArrayItem(th, 1), "measured_cpu_ns"), 120000001);
	CHECK(cJSON_IsNull(get(cJSON_GetArrayItem(th, 2), "measured_cpu_ns")));
	CHECK_EQ_INT(num(cJSON_GetArrayItem(pr, 0), "measured_cpu_ns"), 470000001);
	CHECK(cJSON_IsNull(get(cJSON_GetArrayItem(pr, 1), "measured_cpu_ns")));
	CHECK(cJSON_IsNull(get(run, "measured_cpu_ns")));

	/* no CUDA in this run; warnings are strings, the loader's first */
	CHECK(cJSON_GetObjectItemCaseSensitive(root, "cuda") == NULL);
	REQUIRE(cJSON_IsArray(get(root, "warnings")));
	CHECK_STR(cJSON_GetStringValue(cJSON_GetArrayItem(get(root, "warnings"), 0)),
		  "501.0.cbp: damaged");
	/* integers are printed as integers (no exponent, no decimals) */
	CHECK(strstr(text, "\"cpu_ns\":\t471000000") || strstr(text, "\"cpu_ns\": 471000000") ||
	      strstr(text, "\"cpu_ns\":471000000"));
	CHECK(!strstr(text, "e+"));

	free(text);
	cJSON_Delete(root);
	pb_free(&b);
}

static cJSON *write_load(const struct pb *b, char **text)
{
	struct report_opts o = { 0 };
	char path[] = "/tmp/cbn-test-json-XXXXXX", err[256] = "";
	cJSON *root;
	int fd = mkstemp(path);

	REQUIRE(fd >= 0);
	close(fd);
	REQUIRE(report_json_write(analysed(&b->p), &o, path, err, sizeof(err)) == 0);
	root = load(path, text);
	unlink(path);
	return root;
}

/* Every thread of every process measured: process and run totals are
 * integers; a thread seen only by its samples makes its process unknown. */
static void test_measured(void)
{
	struct pb b;
	cJSON *root;
	char *text;
	uint32_t extra;

	build(&b);
	b.p.threads[2].cpu_ns = 45000000;
	root = write_load(&b, &text);
	CHECK_EQ_INT(num(cJSON_GetArrayItem(get(root, "processes"), 1), "measured_cpu_ns"),
		     45000000);
	CHECK_EQ_INT(num(get(root, "run"), "measured_cpu_ns"), 470000001 + 45000000);
	free(text);
	cJSON_Delete(root);

	extra = pb_thread(&b, 503, 0, "late");
	pb_samples(&b, extra, b.p.nstacks - 1, 1, 1, 0);
	root = write_load(&b, &text);
	CHECK(cJSON_IsNull(get(cJSON_GetArrayItem(get(root, "processes"), 0), "measured_cpu_ns")));
	CHECK_EQ_INT(num(cJSON_GetArrayItem(get(root, "processes"), 1), "measured_cpu_ns"),
		     45000000);
	CHECK(cJSON_IsNull(get(get(root, "run"), "measured_cpu_ns")));
	free(text);
	cJSON_Delete(root);
	pb_free(&b);
}

static void test_write_error(void)
{
	struct pb b;
	struct report_opts o = { 0 };
	char err[256] = "";

	build(&b);
	CHECK(report_json_write(analysed(&b.p), &o, "/nonexistent-dir/r.json", err, sizeof(err)) == -1);
	CHECK(strstr(err, "cannot write /nonexistent-dir/r.json") != NULL);
	pb_free(&b);
}

int main(void)
{
	test_shape();
	test_measured();
	test_write_error();
	return test_result();
}
