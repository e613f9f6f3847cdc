/*
 * test_export_robust.c — the four exporters on profiles with out-of-range
 * indexes (threads, processes, functions, stacks, API calls), zero weights,
 * inverted and pre-start times, and CUDA data without samples: they must
 * not crash (run under ASan/UBSan with CBN_SANITIZE) and must still write
 * files that parse.
 *
 * ctest-labels: fuzz
 */
#include <cjson/cJSON.h>

#include "analysed.h"
#include "testlib.h"
#include "test_export_fixture.h"

int main(void)
{
	struct profile p;
	char *dir = ex_tmpdir(), path[256], err[256];
	struct trace_opts o = {0};
	uint32_t t, f, s;

	ex_init(&p, "bad");
	ex_process(&p, 1, 0, NULL);     /* no exe */
	t = ex_thread(&p, 2, 0, NULL);  /* no name */
	ex_thread(&p, 3, 7, "orphan");  /* process index out of range */
	f = ex_func(&p, "", "", 0, ""); /* empty name */
	s = ex_stack(&p, 2, (uint32_t[]){f, f});
	p.frames[p.stacks[s].first].func = 999;    /* function index out of range */
	ex_sample(&p, t, EX_T0 + EX_MS, s, 0);     /* weight 0 */
	ex_sample(&p, t, EX_T0 - 5 * EX_MS, s, 1); /* before the start */
	ex_sample(&p, t, EX_T0 + EX_MS, 4242, 1);  /* stack out of range */
	{
		struct prof_sample bad = {
		    .ts = EX_T0 + 2 * EX_MS, .stack = s, .thread = 99, .weight = 1};

		PB_ADD(p.samples, p.nsamples, bad); /* thread out of range */
	}
	{
		struct prof_sample orphan = {
		    .ts = EX_T0 + 3 * EX_MS, .stack = s, .thread = 1, .weight = 1};

		PB_ADD(p.samples, p.nsamples, orphan); /* the orphan thread */
	}
	ex_api(&p, "cudaX", PROF_NONE, EX_T0 + 2 * EX_MS, EX_T0 + EX_MS, 1, 9); /* end < start */
	ex_api(&p, "cudaY", t, EX_T0, EX_T0 + EX_MS, 2, CBN_CUDA_DRIVER);
	p.cuda_api[1].thread = 55; /* thread out of range */
	ex_gpu(&p, PROF_GPU_KERNEL, NULL, EX_T0, EX_T0 + EX_MS, 3, 1, 12345); /* api out of range */
	ex_gpu(&p, PROF_GPU_MEMSET, "set", EX_T0, EX_T0, 0xffffffffu, 2, 1);  /* zero length */
	p.gpu_ops[1].process = 77;
	ex_range(&p, NULL, 44, EX_T0, EX_T0 + EX_MS, CBN_RANGE_PUSHPOP);
	ex_range(&p, "step", PROF_NONE, EX_T0, EX_T0, CBN_RANGE_STEP);
	p.ranges[1].domain = NULL;

	snprintf(path, sizeof(path), "%s/t.json", dir);
	CHECK_EQ_INT(export_trace(analysed(&p), path, &o, err, sizeof(err)), 0);
	{
		char *txt = ex_slurp(path, NULL);
		cJSON *j = txt ? cJSON_Parse(txt) : NULL;

		CHECK(j != NULL);
		cJSON_Delete(j);
		free(txt);
	}
	snprintf(path, sizeof(path), "%s/f.folded", dir);
	CHECK_EQ_INT(export_folded(analysed(&p), path, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/f.svg", dir);
	CHECK_EQ_INT(export_flamegraph(analysed(&p), path, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/p.pb.gz", dir);
	CHECK_EQ_INT(export_pprof(analysed(&p), path, err, sizeof(err)), 0);

	/* a window outside the run: an empty but valid trace */
	o.window_start_ns = 1000 * EX_MS;
	o.window_end_ns = 2000 * EX_MS;
	snprintf(path, sizeof(path), "%s/w.json", dir);
	CHECK_EQ_INT(export_trace(analysed(&p), path, &o, err, sizeof(err)), 0);
	/* an inverted window is refused with a message */
	o.window_start_ns = 5 * EX_MS;
	o.window_end_ns = 2 * EX_MS;
	err[0] = '\0';
	CHECK(export_trace(analysed(&p), path, &o, err, sizeof(err)) < 0);
	CHECK(err[0] != '\0');

	pb_profile_free(&p);
	ex_rmdir(dir);
	return test_result();
}
