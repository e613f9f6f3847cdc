/*
 * test_cuda_status.c — the CUDA status lines: one per state, loss counters,
 * the "runtime loaded but never initialized" inference (from the modules of
 * sampled frames, and from the module list), and silence (no text, no JSON)
 * when a profile has neither CUDA data nor status.
 */
#include <cjson/cJSON.h>

#include "report/cuda_report.h"
#include "test_cuda_build.h"
#include "analysed.h"
#include "testlib.h"

static int has_line(const struct cuda_analysis *a, const char *needle)
{
	size_t i;

	for (i = 0; i < a->nstatus_lines; i++)
		if (strstr(a->status_lines[i], needle))
			return 1;
	return 0;
}

static char *render(const struct profile *p)
{
	struct report_opts o = { .limit = 15 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	REQUIRE(f);
	CHECK_EQ_INT(report_cuda_text(f, analysed(p), &o), 0);
	fclose(f);
	return buf;
}

static void add_process(struct profile *p, uint32_t pid, const char *exe)
{
	struct prof_process pr = { .pid = pid, .exe = exe, .period_ns = 1000000 };
	struct prof_thread th = { .tid = pid, .process = (uint32_t)p->nprocesses, .name = "x" };

	PB_ADD(p->processes, p->nprocesses, pr);
	PB_ADD(p->threads, p->nthreads, th);
}

static void add_sample(struct profile *p, uint32_t thread, uint32_t stack)
{
	struct prof_sample s = { .ts = 1, .stack = stack, .thread = thread, .weight = 1 };

	PB_ADD(p->samples, p->nsamples, s);
}

static void test_nothing(void)
{
	struct profile p;
	struct cuda_analysis *a = (void *)1;
	char *s;
	uint32_t f = 0;

	cb_init(&p);
	f = cb_func(&p, "main", "main.c", 1, "app");
	add_sample(&p, 0, cb_stack(&p, 1, &f, (uint32_t[]){ 3 }));
	cb_range(&p, "annotated", 0, 0, 1 * MS);   /* ranges alone are not CUDA data */
	CHECK_EQ_INT(cuda_analyze(&p, &a), 0);
	CHECK(a == NULL);
	s = render(&p);
	CHECK(s && s[0] == '\0');
	free(s);
	CHECK(report_cuda_json(analysed(&p), NULL) == NULL);
	pb_profile_free(&p);
}

static void test_states(void)
{
	struct profile p;
	struct cuda_analysis *a;
	struct prof_cuda_status st[] = {
		{ .process = 0, .state = CBN_CUDA_FINISHED, .cupti_version = 130001, .dropped = 5,
		  .zero_ts = 2, .flush_timed_out = 1, .buffers = 3, .records = 120, .message = "" },
		{ .process = 1, .state = CBN_CUDA_UNAVAILABLE, .cupti_error = 999,
		  .message = "CUPTI_ERROR_UNKNOWN" },
		{ .process = 2, .state = CBN_CUDA_FORK_CHILD, .message = "" },
		{ .process = 3, .state = CBN_CUDA_STARTED, .message = "" },
	};
	cJSON *j, *arr, *e;
	char *s;
	size_t i;

	cb_init(&p);
	add_process(&p, 201, "/opt/bin/worker");
	add_process(&p, 202, "/opt/bin/child");
	add_process(&p, 203, "/opt/bin/killed");
	for (i = 0; i < 4; i++)
		PB_ADD(p.cuda_status, p.ncuda_status, st[i]);
	REQUIRE(cuda_analyze(&p, &a) == 0 && a);
	CHECK(!a->has_data);
	CHECK(has_line(a, "CUDA: pid 100 (app): traced with CUPTI 13.0, 120 activity records in 3 buffers"));
	CHECK(has_line(a, "CUDA: pid 100 (app): CUPTI dropped 5 activity records"));
	CHECK(has_line(a, "CUDA: pid 100 (app): 2 GPU records had no timestamps and were excluded"));
	CHECK(has_line(a, "CUDA: pid 100 (app): the final CUPTI flush timed out"));
	CHECK(has_line(a, "CUDA: pid 201 (worker): CUDA tracing unavailable: CUPTI_ERROR_UNKNOWN; CPU profile only"));
	CHECK(has_line(a, "CUDA: pid 202 (child): forked from a CUDA process"));
	CHECK(has_line(a, "CUDA: pid 203 (killed): tracing started"));
	CHECK(has_line(a, "final flush never ran"));
	CHECK_EQ_INT(a->nstatus_lines, 7);
	cuda_analysis_free(a);

	/* status only: the lines and nothing else */
	s = render(&p);
	CHECK(strstr(s, "CUDA: pid 201 (worker)") != NULL);
	CHECK(strstr(s, "autograd") == NULL && strstr(s, "overview") == NULL);
	free(s);

	j = report_cuda_json(analysed(&p), NULL);
	REQUIRE(j);
	arr = cJSON_GetObjectItem(j, "status");
	REQUIRE(cJSON_IsArray(arr));
	CHECK_EQ_INT(cJSON_GetArraySize(arr), 4);
	e = cJSON_GetArrayItem(arr, 0);
	CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(e, "state")), "finished");
	CHECK_EQ_INT(cJSON_GetNumberValue(cJSON_GetObjectItem(e, "pid")), 100);
	CHECK_EQ_INT(cJSON_GetNumberValue(cJSON_GetObjectItem(e, "dropped")), 5);
	CHECK_EQ_INT(cJSON_GetNumberValue(cJSON_GetObjectItem(e, "zero_ts")), 2);
	CHECK_EQ_INT(cJSON_GetNumberValue(cJSON_GetObjectItem(e, "flush_timed_out")), 1);
	e = cJSON_GetArrayItem(arr, 1);
	CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(e, "state")), "unavailable");
	CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(e, "message")), "CUPTI_ERROR_UNKNOWN");
	CHECK_EQ_INT(cJSON_GetNumberValue(cJSON_GetObjectItem(e, "cupti_error")), 999);
	CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(arr, 2), "state")), "fork_child");
	CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(arr, 3), "state")), "started");
	cJSON_Delete(j);
	pb_profile_free(&p);
}

/* The program's own CUPTI client held the activity API for a span and kept
 * its subscription to the end: a line and a JSON row each. */
static void test_shared(void)
{
	struct profile p;
	struct cuda_analysis *a;
	struct prof_cuda_status st = { .process = 0, .state = CBN_CUDA_FINISHED, .message = "",
				       .note = "" };
	struct prof_cuda_share sh[] = {
		{ .process = 0, .what = CBN_CUPTI_API, .start = 1500 * MS, .end = 0,
		  .holder = "libtorch_cpu.so", .note = "" },
		{ .process = 0, .what = CBN_CUPTI_ACTIVITY, .start = 1500 * MS, .end = 2750 * MS,
		  .holder = "libtorch_cpu.so", .note = "activity records only" },
	};
	cJSON *j, *arr, *e;

	cb_init(&p);
	p.start_ns = 500 * MS;
	PB_ADD(p.cuda_status, p.ncuda_status, st);
	PB_ADD(p.cuda_shares, p.ncuda_shares, sh[0]);
	PB_ADD(p.cuda_shares, p.ncuda_shares, sh[1]);
	REQUIRE(cuda_analyze(&p, &a) == 0 && a);
	CHECK_EQ_INT(a->nshares, 2);
	CHECK(has_line(a, "CUDA: pid 100 (app): the program's own CUPTI client (libtorch_cpu.so) "
			  "held the CUDA API callbacks (API calls, launch stacks) from 1.000 s to "
			  "the end of the process"));
	CHECK(has_line(a, "held the GPU activity records (kernels, copies, memory) from 1.000 s "
			  "to 2.250 s: its own profiler got them, this report has none of them "
			  "there; then activity records only"));
	cuda_analysis_free(a);
	j = report_cuda_json(analysed(&p), NULL);
	REQUIRE(j);
	arr = cJSON_GetObjectItem(j, "shared");
	REQUIRE(cJSON_IsArray(arr));
	CHECK_EQ_INT(cJSON_GetArraySize(arr), 2);
	e = cJSON_GetArrayItem(arr, 0);
	CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(e, "what")), "api");
	CHECK(cJSON_IsNull(cJSON_GetObjectItem(e, "end_ns")));
	e = cJSON_GetArrayItem(arr, 1);
	CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(e, "holder")), "libtorch_cpu.so");
	CHECK_EQ_INT(cJSON_GetNumberValue(cJSON_GetObjectItem(e, "start_ns")), 1000 * MS);
	CHECK_EQ_INT(cJSON_GetNumberValue(cJSON_GetObjectItem(e, "end_ns")), 2250 * MS);
	cJSON_Delete(j);
	pb_profile_free(&p);
}

/* One GPU seen by two processes counts once: by UUID, or without UUIDs
 * (older files) by id and name on one host; two UUIDs are two GPUs. */
static void test_gpus(void)
{
	struct profile p;
	struct cuda_analysis *a;
	struct prof_cuda_status st = { .process = 0, .state = CBN_CUDA_FINISHED, .message = "",
				       .note = "" };
	struct prof_cuda_device d[4] = {
		{ .process = 0, .id = 0, .name = "H100", .has_uuid = 1, .uuid = { 1, 2, 3 } },
		{ .process = 1, .id = 0, .name = "H100", .has_uuid = 1, .uuid = { 1, 2, 3 } },
		{ .process = 1, .id = 1, .name = "H100", .has_uuid = 1, .uuid = { 9 } },
		{ .process = 0, .id = 5, .name = "A100" },
	};
	struct prof_cuda_device old = { .process = 1, .id = 5, .name = "A100" };

	cb_init(&p);
	add_process(&p, 101, "/bin/second");
	PB_ADD(p.cuda_status, p.ncuda_status, st);
	for (int i = 0; i < 4; i++)
		PB_ADD(p.devices, p.ndevices, d[i]);
	PB_ADD(p.devices, p.ndevices, old);
	REQUIRE(cuda_analyze(&p, &a) == 0 && a);
	CHECK_EQ_INT(a->ngpus, 3);
	CHECK_EQ_INT(a->gpus[0].processes, 2);
	CHECK_STR(a->gpus[0].uuid, "GPU-01020300-0000-0000-0000-000000000000");
	CHECK_EQ_INT(a->gpus[1].processes, 1);
	CHECK_EQ_INT(a->gpus[2].processes, 2);
	CHECK_STR(a->gpus[2].uuid, "");
	cuda_analysis_free(a);
	pb_profile_free(&p);
}

static void test_inferred(void)
{
	struct profile p;
	struct cuda_analysis *a;
	struct prof_cuda_status st = { .process = 0, .state = CBN_CUDA_FINISHED, .message = "" };
	uint32_t fmain, frt, s;
	char *txt;
	cJSON *j;

	cb_init(&p);
	add_process(&p, 300, "/usr/bin/gpuapp");
	add_process(&p, 301, "/usr/bin/plain");
	fmain = cb_func(&p, "main", "main.c", 1, "gpuapp");
	frt = cb_func(&p, "cudaGetDeviceCount", "", 0, "libcudart.so.13");
	s = cb_stack(&p, 2, (uint32_t[]){ frt, fmain }, (uint32_t[]){ 0, 7 });
	add_sample(&p, 1, s);                       /* pid 300: runtime on a stack, no status */
	add_sample(&p, 2, cb_stack(&p, 1, &fmain, (uint32_t[]){ 8 }));   /* pid 301: none */
	REQUIRE(cuda_analyze(&p, &a) == 0 && a);
	CHECK_EQ_INT(a->nstatus, 1);
	CHECK(has_line(a, "CUDA: gpuapp (pid 300) loaded the CUDA runtime but CUDA was never initialized "
			  "for tracing (no driver or no GPU?)"));
	CHECK(!has_line(a, "plain"));
	CHECK_STR(a->status[0].state, "unavailable");
	CHECK(a->status[0].inferred);
	cuda_analysis_free(a);
	txt = render(&p);
	CHECK(strstr(txt, "loaded the CUDA runtime") != NULL);
	free(txt);
	/* JSON: status[] holds only what the layer recorded; the inference is a note */
	j = report_cuda_json(analysed(&p), NULL);
	REQUIRE(j);
	CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItem(j, "status")), 0);
	CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItem(j, "notes")), 1);
	CHECK(strstr(cJSON_GetStringValue(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "notes"), 0)),
		     "gpuapp (pid 300) loaded the CUDA runtime") != NULL);
	cJSON_Delete(j);

	/* a process with a status gets no inferred line */
	add_sample(&p, 0, s);
	PB_ADD(p.cuda_status, p.ncuda_status, st);
	REQUIRE(cuda_analyze(&p, &a) == 0 && a);
	CHECK(!has_line(a, "(pid 100) loaded"));
	CHECK(has_line(a, "(pid 300) loaded"));
	CHECK_EQ_INT(a->nstatus, 2);
	cuda_analysis_free(a);
	pb_profile_free(&p);
}

static int note_count(const struct profile *p, const char *needle)
{
	cJSON *j = report_cuda_json(analysed(p), NULL), *n, *e;
	int c = 0;

	if (!j)
		return -1;
	n = cJSON_GetObjectItem(j, "notes");
	cJSON_ArrayForEach(e, n)
		c += cJSON_IsString(e) && strstr(cJSON_GetStringValue(e), needle) != NULL;
	cJSON_Delete(j);
	return c;
}

/* The inference from the module list alone: no sample in CUDA code at all. */
static void test_inferred_modules(void)
{
	struct profile p;
	struct cuda_analysis *a;
	struct prof_cuda_status st = { .process = 4, .state = CBN_CUDA_FINISHED, .message = "" };
	uint32_t fmain;
	size_t i;
	char *txt;
	cJSON *j;

	/* only ordinary libraries and a driver mapped from the start: no cuda object */
	cb_init(&p);
	p.processes[0].start = 1000;
	fmain = cb_func(&p, "main", "main.c", 1, "app");
	add_sample(&p, 0, cb_stack(&p, 1, &fmain, (uint32_t[]){ 3 }));
	cb_module(&p, 0, "/usr/bin/app", 1000);
	cb_module(&p, 0, "/lib/x86_64-linux-gnu/libc.so.6", 1000);
	cb_module(&p, 0, "/opt/fake/libcuda.so.1", 1000);   /* a dependency, never called */
	cb_module(&p, 0, "/opt/fake/libcupti.so.13", 1000);
	CHECK_EQ_INT(cuda_analyze(&p, &a), 0);
	CHECK(a == NULL);
	txt = render(&p);
	CHECK(txt && txt[0] == '\0');
	free(txt);
	CHECK(report_cuda_json(analysed(&p), NULL) == NULL);

	/* pid 100 maps libcudart; 301 nothing; 302 the driver from the start;
	 * 303 dlopens the driver during the run; 304 maps libcudart and was traced */
	add_process(&p, 301, "/usr/bin/plain");
	add_process(&p, 302, "/usr/bin/drvdep");
	add_process(&p, 303, "/usr/bin/dlopener");
	add_process(&p, 304, "/usr/bin/traced");
	for (i = 1; i < p.nprocesses; i++)
		p.processes[i].start = 5000;
	cb_module(&p, 0, "/usr/local/cuda/lib64/libcudart.so.13", 1000);
	cb_module(&p, 1, "/lib/x86_64-linux-gnu/libc.so.6", 5000);
	cb_module(&p, 2, "/usr/lib/x86_64-linux-gnu/libcuda.so.1", 5000);
	cb_module(&p, 3, "/usr/lib/x86_64-linux-gnu/libcuda.so.1", 7000);
	cb_module(&p, 4, "/usr/local/cuda/lib64/libcudart.so.13", 5000);
	PB_ADD(p.cuda_status, p.ncuda_status, st);
	REQUIRE(cuda_analyze(&p, &a) == 0 && a);
	CHECK(!a->has_data);
	CHECK(has_line(a, "CUDA: app (pid 100) loaded the CUDA runtime but CUDA was never initialized "
			  "for tracing (no driver or no GPU?)"));
	CHECK(has_line(a, "CUDA: dlopener (pid 303) loaded the CUDA runtime"));
	CHECK(!has_line(a, "plain"));
	CHECK(!has_line(a, "drvdep"));
	CHECK(!has_line(a, "(pid 304) loaded"));
	CHECK(has_line(a, "CUDA: pid 304 (traced): traced"));
	CHECK_EQ_INT(a->nstatus, 3);
	cuda_analysis_free(a);
	txt = render(&p);
	CHECK(strstr(txt, "app (pid 100) loaded the CUDA runtime") != NULL);
	CHECK(strstr(txt, "dlopener (pid 303) loaded the CUDA runtime") != NULL);
	free(txt);
	j = report_cuda_json(analysed(&p), NULL);
	REQUIRE(j);
	CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItem(j, "status")), 1);
	CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItem(j, "notes")), 2);
	cJSON_Delete(j);
	CHECK_EQ_INT(note_count(&p, "app (pid 100) loaded the CUDA runtime"), 1);
	CHECK_EQ_INT(note_count(&p, "(pid 303) loaded"), 1);
	pb_profile_free(&p);
}

int main(void)
{
	test_nothing();
	test_states();
	test_shared();
	test_gpus();
	test_inferred();
	test_inferred_modules();
	return test_result();
}
