/*
 * test_export_trace.c — export_trace() on a hand-built profile: the JSON
 * parses, every lane nests strictly, flows pair up (s in a CUDA API slice,
 * f on a GPU op), metadata names every lane, CPU slices follow the samples,
 * names survive escaping, the window clips, the size cap warns and drops
 * only CPU slices, .gz output is gzip; and trace_window_parse().
 */
#include <cjson/cJSON.h>
#include <fcntl.h>
#include <math.h>

#include "analysed.h"
#include "testlib.h"
#include "test_export_fixture.h"

static const char weird[] = "we\"ird]\\name\n\x01 \xc3\xb1 \xff end";
static const char weird_decoded[] = "we\"ird]\\name\n\x01 \xc3\xb1 \xef\xbf\xbd end";

struct fixture {
	struct profile p;
	uint32_t f_main, f_work, f_leaf, f_other, f_weird;
	uint32_t api_launch;
};

/* One process (pid 100, main thread 100 and a worker 101), 1 ms period.
 * main: samples k = 1..50 ms, except 40..44 (off CPU):
 *   k 1..19 main;work;leaf  k 20..29 main;work  k 30..39 main;other
 *   k 45..50 main;work;leaf
 * CUDA on main: a launch with a nested driver call, a copy, two partially
 * overlapping calls; kernels on stream 7 (two overlap); ranges incl. a
 * start/end range that partially overlaps a push/pop one. */
static void build(struct fixture *fx)
{
	struct profile *p = &fx->p;
	uint32_t t_main, t_work, s1, s2, s3, s4;

	ex_init(p, "./app");
	ex_process(p, 100, 0, "/usr/bin/app");
	t_main = ex_thread(p, 100, 0, "app");
	t_work = ex_thread(p, 101, 0, "worker \"1\"");
	fx->f_main = ex_func(p, "main", "app.c", 5, "app");
	fx->f_work = ex_func(p, "work", "app.c", 20, "app");
	fx->f_leaf = ex_func(p, "leaf", "app.c", 40, "app");
	fx->f_other = ex_func(p, "other", "lib.c", 7, "libother.so");
	fx->f_weird = ex_func(p, weird, "", 0, "app");
	s1 = ex_stack(p, 3, (uint32_t[]){fx->f_main, fx->f_work, fx->f_leaf});
	s2 = ex_stack(p, 2, (uint32_t[]){fx->f_main, fx->f_work});
	s3 = ex_stack(p, 2, (uint32_t[]){fx->f_main, fx->f_other});
	s4 = ex_stack(p, 2, (uint32_t[]){fx->f_main, fx->f_weird});
	for (uint64_t k = 1; k <= 50; k++) {
		uint32_t st = k < 20 ? s1 : k < 30 ? s2 : k < 40 ? s3 : s1;

		if (k >= 40 && k < 45)
			continue;
		ex_sample(p, t_main, EX_T0 + k * EX_MS, st, 1);
	}
	for (uint64_t k = 2; k <= 10; k += 2)
		ex_sample(p, t_work, EX_T0 + k * EX_MS, s4, 2); /* weight 2: contiguous */
	/* 20..22 ms: cut at max depth, under "[truncated]", not under main */
	for (uint64_t k = 20; k <= 22; k++) {
		ex_sample(p, t_work, EX_T0 + k * EX_MS, s2, 1);
		p->samples[p->nsamples - 1].flags = CBN_SAMPLE_TRUNCATED;
	}

	ex_device(p, 0, "Fake GPU", 10);
	fx->api_launch = ex_api(p, "cudaLaunchKernel", t_main, EX_T0 + 5 * EX_MS,
	                        EX_T0 + 5 * EX_MS + 10 * EX_US, 1, CBN_CUDA_RUNTIME);
	ex_api(p, "cuLaunchKernel", t_main, EX_T0 + 5 * EX_MS + 2 * EX_US,
	       EX_T0 + 5 * EX_MS + 8 * EX_US, 2, CBN_CUDA_DRIVER);
	uint32_t api_copy = ex_api(p, "cudaMemcpy", t_main, EX_T0 + 6 * EX_MS, EX_T0 + 7 * EX_MS, 3,
	                           CBN_CUDA_RUNTIME);
	ex_api(p, "cudaX", t_main, EX_T0 + 8 * EX_MS, EX_T0 + 10 * EX_MS, 4, CBN_CUDA_RUNTIME);
	ex_api(p, "cudaY", t_main, EX_T0 + 9 * EX_MS, EX_T0 + 11 * EX_MS, 5, CBN_CUDA_RUNTIME);
	ex_gpu(p, PROF_GPU_KERNEL, "gemm<float>(\"x\")", EX_T0 + 5 * EX_MS + 20 * EX_US,
	       EX_T0 + 5 * EX_MS + 500 * EX_US, 7, 1, fx->api_launch);
	ex_gpu(p, PROF_GPU_MEMCPY, "[CUDA memcpy HtoD]", EX_T0 + 6 * EX_MS + 100 * EX_US,
	       EX_T0 + 6 * EX_MS + 900 * EX_US, 7, 3, api_copy);
	ex_gpu(p, PROF_GPU_KERNEL, "overlapping", EX_T0 + 5 * EX_MS + 400 * EX_US,
	       EX_T0 + 5 * EX_MS + 600 * EX_US, 7, 9, PROF_NONE);
	/* a graph launch: one call, two kernels with its correlation id */
	uint32_t api_graph = ex_api(p, "cudaGraphLaunch", t_main, EX_T0 + 12 * EX_MS,
	                            EX_T0 + 12 * EX_MS + 5 * EX_US, 10, CBN_CUDA_RUNTIME);
	ex_gpu(p, PROF_GPU_KERNEL, "node1", EX_T0 + 12 * EX_MS + 10 * EX_US,
	       EX_T0 + 12 * EX_MS + 20 * EX_US, 7, 10, api_graph);
	ex_gpu(p, PROF_GPU_KERNEL, "node2", EX_T0 + 12 * EX_MS + 20 * EX_US,
	       EX_T0 + 12 * EX_MS + 30 * EX_US, 7, 10, api_graph);
	ex_range(p, "step 1", t_main, EX_T0 + 1 * EX_MS, EX_T0 + 30 * EX_MS, CBN_RANGE_PUSHPOP);
	ex_range(p, "inner", t_main, EX_T0 + 2 * EX_MS, EX_T0 + 3 * EX_MS, CBN_RANGE_PUSHPOP);
	ex_range(p, "mark", t_main, EX_T0 + 4 * EX_MS, EX_T0 + 4 * EX_MS, CBN_RANGE_MARK);
	ex_range(p, "crossing", t_main, EX_T0 + 25 * EX_MS, EX_T0 + 35 * EX_MS, CBN_RANGE_STARTEND);
}

static cJSON *load(const char *path)
{
	size_t len;
	char *s = ex_slurp(path, &len);
	cJSON *j;

	REQUIRE(s != NULL);
	j = cJSON_ParseWithLength(s, len);
	if (!j)
		fprintf(stderr, "invalid JSON in %s near: %.60s\n", path,
		        cJSON_GetErrorPtr() ? cJSON_GetErrorPtr() : "?");
	free(s);
	return j;
}

static int64_t ns_of(const cJSON *ev, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(ev, key);

	return cJSON_IsNumber(v) ? (int64_t)llround(v->valuedouble * 1000.0) : -1;
}

static const char *str_of(const cJSON *ev, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(ev, key);

	return cJSON_IsString(v) ? v->valuestring : "";
}

static long num_of(const cJSON *ev, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(ev, key);

	return cJSON_IsNumber(v) ? (long)v->valuedouble : -1;
}

struct sl {
	long pid, tid;
	int64_t ts, end;
	const cJSON *ev;
};

static int cmp_sl(const void *a, const void *b)
{
	const struct sl *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->end > y->end ? -1 : x->end < y->end;
}

/* The slices (X and instants) of the trace, sorted by lane and time. */
static struct sl *slices(const cJSON *evs, size_t *n)
{
	struct sl *v = calloc((size_t)cJSON_GetArraySize(evs) + 1, sizeof(*v));
	const cJSON *ev;

	*n = 0;
	cJSON_ArrayForEach(ev, evs)
	{
		const char *ph = str_of(ev, "ph");

		if (strcmp(ph, "X") && strcmp(ph, "i"))
			continue;
		v[*n].pid = num_of(ev, "pid");
		v[*n].tid = num_of(ev, "tid");
		v[*n].ts = ns_of(ev, "ts");
		v[*n].end = v[*n].ts + (ph[0] == 'X' ? ns_of(ev, "dur") : 0);
		v[*n].ev = ev;
		(*n)++;
	}
	qsort(v, *n, sizeof(*v), cmp_sl);
	return v;
}

/* Perfetto's rule: per lane, a slice either nests in the open one or starts
 * after it ended.  Returns the number of violations. */
static int nesting_violations(const struct sl *v, size_t n)
{
	int64_t stack[256];
	int depth = 0, bad = 0;

	for (size_t i = 0; i < n; i++) {
		if (i == 0 || v[i].pid != v[i - 1].pid || v[i].tid != v[i - 1].tid)
			depth = 0;
		while (depth && stack[depth - 1] <= v[i].ts)
			depth--;
		if (depth && v[i].end > stack[depth - 1]) {
			fprintf(
			    stderr,
			    "lane %ld/%ld: \"%s\" [%lld, %lld] overlaps its parent ending %lld\n",
			    v[i].pid, v[i].tid, str_of(v[i].ev, "name"), (long long)v[i].ts,
			    (long long)v[i].end, (long long)stack[depth - 1]);
			bad++;
			continue;
		}
		if (depth < 256)
			stack[depth++] = v[i].end;
	}
	return bad;
}

/* The slice of the given lane enclosing ts (deepest), or NULL. */
static const struct sl *enclosing(const struct sl *v, size_t n, long pid, long tid, int64_t ts)
{
	const struct sl *best = NULL;

	for (size_t i = 0; i < n; i++)
		if (v[i].pid == pid && v[i].tid == tid && v[i].ts <= ts && ts <= v[i].end &&
		    v[i].end > v[i].ts)
			best = &v[i]; /* sorted: later hits are deeper */
	return best;
}

static const cJSON *find_x(const cJSON *evs, const char *cat, const char *name, int nth)
{
	const cJSON *ev;

	cJSON_ArrayForEach(ev, evs) if (!strcmp(str_of(ev, "cat"), cat) &&
	                                !strcmp(str_of(ev, "name"), name) && nth-- == 0) return ev;
	return NULL;
}

static const cJSON *find_x_tid(const cJSON *evs, const char *cat, const char *name, long tid,
                               int nth)
{
	const cJSON *ev;

	cJSON_ArrayForEach(ev, evs) if (!strcmp(str_of(ev, "cat"), cat) &&
	                                !strcmp(str_of(ev, "name"), name) &&
	                                num_of(ev, "tid") == tid && nth-- == 0) return ev;
	return NULL;
}

static int has_meta(const cJSON *evs, const char *what, long pid, long tid)
{
	const cJSON *ev;

	cJSON_ArrayForEach(ev, evs) if (!strcmp(str_of(ev, "ph"), "M") &&
	                                !strcmp(str_of(ev, "name"), what) &&
	                                num_of(ev, "pid") == pid &&
	                                (tid < 0 || num_of(ev, "tid") == tid)) return 1;
	return 0;
}

static const char *lane_name(const cJSON *evs, long pid, long tid)
{
	const cJSON *ev;

	cJSON_ArrayForEach(
	    ev, evs) if (!strcmp(str_of(ev, "ph"), "M") &&
	                 !strcmp(str_of(ev, "name"), "thread_name") && num_of(ev, "pid") == pid &&
	                 num_of(ev, "tid") ==
	                     tid) return str_of(cJSON_GetObjectItemCaseSensitive(ev, "args"),
	                                        "name");
	return "";
}

static void check_full(const char *path)
{
	cJSON *j = load(path);
	const cJSON *evs, *ev;
	struct sl *v;
	size_t n;

	REQUIRE(j != NULL);
	evs = cJSON_GetObjectItemCaseSensitive(j, "traceEvents");
	REQUIRE(cJSON_IsArray(evs));
	CHECK_STR(str_of(j, "displayTimeUnit"), "ns");
	CHECK(cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(j, "otherData")));
	CHECK_EQ_INT(num_of(cJSON_GetObjectItemCaseSensitive(j, "otherData"), "cpu_slices_dropped"),
	             0);

	v = slices(evs, &n);
	CHECK(n > 20);
	CHECK_EQ_INT(nesting_violations(v, n), 0);

	/* per lane, times never go backwards in file order */
	{
		int back = 0;

		cJSON_ArrayForEach(ev, evs)
		{
			const cJSON *e2;

			if (str_of(ev, "ph")[0] == 'M')
				continue;
			for (e2 = ev->next; e2; e2 = e2->next)
				if (num_of(e2, "pid") == num_of(ev, "pid") &&
				    num_of(e2, "tid") == num_of(ev, "tid") &&
				    str_of(e2, "ph")[0] != 'M')
					break;
			if (e2 && ns_of(e2, "ts") < ns_of(ev, "ts"))
				back++;
		}
		CHECK_EQ_INT(back, 0);
	}

	/* every lane and process is named */
	for (size_t i = 0; i < n; i++) {
		CHECK(has_meta(evs, "thread_name", v[i].pid, v[i].tid));
		CHECK(has_meta(evs, "process_name", v[i].pid, -1));
		CHECK(has_meta(evs, "thread_sort_index", v[i].pid, v[i].tid));
	}

	/* CPU slices from the samples: [k-1, k] ms per sample, joined */
	{
		const cJSON *m0 = find_x_tid(evs, "cpu_sample", "main", 100, 0);
		const cJSON *m1 = find_x_tid(evs, "cpu_sample", "main", 100, 1);
		const cJSON *leaf = find_x(evs, "cpu_sample", "leaf", 0);
		const cJSON *work = find_x(evs, "cpu_sample", "work", 0);
		const cJSON *other = find_x(evs, "cpu_sample", "other", 0);

		REQUIRE(m0 && m1 && leaf && work && other);
		CHECK_EQ_INT(num_of(m0, "pid"), 100);
		CHECK_EQ_INT(num_of(m0, "tid"), 100);
		CHECK_EQ_INT(ns_of(m0, "ts"), 0);
		CHECK_EQ_INT(ns_of(m0, "dur"), 39 * EX_MS); /* off CPU from 39 to 44 ms */
		CHECK_EQ_INT(ns_of(m1, "ts"), 44 * EX_MS);
		CHECK_EQ_INT(ns_of(m1, "dur"), 6 * EX_MS);
		CHECK_EQ_INT(ns_of(leaf, "dur"), 19 * EX_MS);
		CHECK_EQ_INT(ns_of(work, "dur"), 29 * EX_MS);
		CHECK_EQ_INT(ns_of(other, "ts"), 29 * EX_MS);
		CHECK_EQ_INT(ns_of(other, "dur"), 10 * EX_MS);
		CHECK(find_x_tid(evs, "cpu_sample", "main", 100, 2) == NULL);
		CHECK_STR(lane_name(evs, 100, 100), "app");
		CHECK_STR(lane_name(evs, 100, 101), "worker \"1\"");
	}

	/* the weird name decodes back (invalid UTF-8 -> U+FFFD); weight-2
	 * samples 2 ms apart make one slice [0, 10] ms */
	{
		const cJSON *w = find_x(evs, "cpu_sample", weird_decoded, 0);

		CHECK(w != NULL);
		if (w) {
			CHECK_EQ_INT(ns_of(w, "ts"), 0);
			CHECK_EQ_INT(ns_of(w, "dur"), 10 * EX_MS);
		}
	}

	/* truncated stacks: one [truncated] slice 19..22 ms, main and work inside */
	{
		const cJSON *tr = find_x_tid(evs, "cpu_sample", "[truncated]", 101, 0);
		const cJSON *m = find_x_tid(evs, "cpu_sample", "main", 101, 1);

		REQUIRE(tr && m);
		CHECK_EQ_INT(ns_of(tr, "ts"), 19 * EX_MS);
		CHECK_EQ_INT(ns_of(tr, "dur"), 3 * EX_MS);
		CHECK_EQ_INT(ns_of(m, "ts"), 19 * EX_MS);
	}

	/* CUDA API calls are on their own lane, not the CPU lane; driver nested */
	{
		const cJSON *launch = find_x(evs, "cuda_runtime", "cudaLaunchKernel", 0);
		const cJSON *drv = find_x(evs, "cuda_driver", "cuLaunchKernel", 0);
		const cJSON *x = find_x(evs, "cuda_runtime", "cudaX", 0);
		const cJSON *y = find_x(evs, "cuda_runtime", "cudaY", 0);
		const cJSON *k = find_x(evs, "kernel", "gemm<float>(\"x\")", 0);
		const cJSON *k2 = find_x(evs, "kernel", "overlapping", 0);

		REQUIRE(launch && drv && x && y && k && k2);
		CHECK(num_of(launch, "tid") != 100);
		CHECK_EQ_INT(num_of(launch, "pid"), 100);
		CHECK_EQ_INT(num_of(drv, "tid"), num_of(launch, "tid"));
		CHECK(strstr(lane_name(evs, 100, num_of(launch, "tid")), "cuda api") != NULL);
		CHECK_EQ_INT(ns_of(launch, "ts"), 5 * EX_MS);
		CHECK_EQ_INT(ns_of(launch, "dur"), 10 * EX_US);
		/* partial overlap -> overflow lane */
		CHECK(num_of(x, "tid") != num_of(y, "tid"));
		CHECK(strstr(lane_name(evs, 100, num_of(y, "tid")), "overlap") != NULL);
		CHECK(num_of(k, "tid") != num_of(k2, "tid"));
		CHECK(num_of(k, "pid") != 100);
		CHECK_STR(lane_name(evs, num_of(k, "pid"), num_of(k, "tid")), "stream 7");
		CHECK(has_meta(evs, "process_name", num_of(k, "pid"), -1));
		/* kineto-style args */
		const cJSON *args = cJSON_GetObjectItemCaseSensitive(k, "args");

		CHECK_EQ_INT(num_of(args, "correlation"), 1);
		CHECK_EQ_INT(num_of(args, "stream"), 7);
		CHECK_EQ_INT(num_of(args, "registers per thread"), 32);
		CHECK_EQ_INT(num_of(args, "shared memory"), 3072);
		CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(args, "grid")), 3);
		CHECK(fabs(cJSON_GetObjectItemCaseSensitive(args, "blocks per SM")->valuedouble -
		           12.8) < 1e-6);
		CHECK(find_x(evs, "gpu_memcpy", "[CUDA memcpy HtoD]", 0) != NULL);
	}

	/* annotations: own lane, nested, the crossing range overflowed, mark instant */
	{
		const cJSON *step = find_x(evs, "user_annotation", "step 1", 0);
		const cJSON *cross = find_x(evs, "user_annotation", "crossing", 0);
		const cJSON *mark = find_x(evs, "user_annotation", "mark", 0);

		REQUIRE(step && cross && mark);
		CHECK(num_of(step, "tid") != 100);
		CHECK(num_of(cross, "tid") != num_of(step, "tid"));
		CHECK_STR(str_of(mark, "ph"), "i");
		CHECK(strstr(lane_name(evs, 100, num_of(step, "tid")), "annotations") != NULL);
	}

	/* flows: one s and one f per id; s inside an API slice, f on a GPU op */
	{
		int nflows = 0;

		cJSON_ArrayForEach(ev, evs)
		{
			const cJSON *f;
			const struct sl *in_s, *in_f;

			if (strcmp(str_of(ev, "ph"), "s"))
				continue;
			nflows++;
			CHECK_STR(str_of(ev, "cat"), "ac2g");
			CHECK_STR(str_of(ev, "name"), "ac2g");
			int nf = 0;

			f = NULL;
			for (const cJSON *e2 = evs->child; e2; e2 = e2->next)
				if (!strcmp(str_of(e2, "ph"), "f") &&
				    num_of(e2, "id") == num_of(ev, "id")) {
					f = e2;
					nf++;
				}
			CHECK_EQ_INT(nf, 1);
			if (!f)
				continue;
			CHECK_STR(str_of(f, "bp"), "e");
			CHECK_STR(str_of(f, "cat"), "ac2g");
			in_s =
			    enclosing(v, n, num_of(ev, "pid"), num_of(ev, "tid"), ns_of(ev, "ts"));
			in_f = enclosing(v, n, num_of(f, "pid"), num_of(f, "tid"), ns_of(f, "ts"));
			CHECK(in_s && !strncmp(str_of(in_s->ev, "cat"), "cuda_", 5));
			CHECK(in_f && (!strcmp(str_of(in_f->ev, "cat"), "kernel") ||
			               !strcmp(str_of(in_f->ev, "cat"), "gpu_memcpy")));
			if (in_s && in_f)
				CHECK_EQ_INT(
				    num_of(cJSON_GetObjectItemCaseSensitive(in_s->ev, "args"),
				           "correlation"),
				    num_of(cJSON_GetObjectItemCaseSensitive(in_f->ev, "args"),
				           "correlation"));
			if (in_f)
				CHECK_EQ_INT(in_f->ts, ns_of(f, "ts"));
		}
		CHECK_EQ_INT(nflows, 4); /* launch, copy, and two for the graph */
	}
	free(v);
	cJSON_Delete(j);
}

/* Only events intersecting [5 ms, 7 ms], clipped to it. */
static void check_window(const char *path)
{
	cJSON *j = load(path);
	const cJSON *evs, *ev;
	struct sl *v;
	size_t n;
	int cpu = 0;

	REQUIRE(j != NULL);
	evs = cJSON_GetObjectItemCaseSensitive(j, "traceEvents");
	v = slices(evs, &n);
	CHECK(n > 3);
	CHECK_EQ_INT(nesting_violations(v, n), 0);
	for (size_t i = 0; i < n; i++) {
		CHECK(v[i].ts >= 5 * (int64_t)EX_MS);
		CHECK(v[i].end <= 7 * (int64_t)EX_MS);
	}
	cJSON_ArrayForEach(ev, evs)
	{
		if (!strcmp(str_of(ev, "cat"), "cpu_sample") &&
		    !strcmp(str_of(ev, "name"), "main") && num_of(ev, "tid") == 100) {
			cpu++;
			CHECK_EQ_INT(ns_of(ev, "ts"), 5 * EX_MS);
			CHECK_EQ_INT(ns_of(ev, "dur"), 2 * EX_MS);
		}
		CHECK(strcmp(str_of(ev, "name"), "cudaX") != 0); /* starts at 8 ms */
	}
	CHECK_EQ_INT(cpu, 1);
	CHECK(find_x(evs, "kernel", "gemm<float>(\"x\")", 0) != NULL);
	free(v);
	cJSON_Delete(j);
}

/* A cap 400 bytes under the full size: one warning on stderr, the last CPU
 * slices dropped, CUDA events kept, the file still valid. */
static void check_cap(struct fixture *fx, const char *dir, size_t full_size)
{
	char path[256], errpath[256], err[256];
	struct trace_opts o = {.max_bytes = full_size - 400};
	int saved = dup(2), fd;
	char *msg;
	cJSON *j;

	snprintf(path, sizeof(path), "%s/cap.json", dir);
	snprintf(errpath, sizeof(errpath), "%s/stderr", dir);
	fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	REQUIRE(fd >= 0 && saved >= 0);
	fflush(stderr);
	dup2(fd, 2);
	close(fd);
	int rc = export_trace(analysed(&fx->p), path, &o, err, sizeof(err));

	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	CHECK_EQ_INT(rc, 0);
	msg = ex_slurp(errpath, NULL);
	REQUIRE(msg != NULL);
	CHECK(strstr(msg, "size cap") != NULL);
	CHECK(strstr(msg, "--trace-window") != NULL);
	CHECK(strchr(msg, '\n') == msg + strlen(msg) - 1); /* one line */
	free(msg);

	j = load(path);
	REQUIRE(j != NULL);
	const cJSON *evs = cJSON_GetObjectItemCaseSensitive(j, "traceEvents");
	const cJSON *od = cJSON_GetObjectItemCaseSensitive(j, "otherData");

	CHECK(num_of(od, "cpu_slices_dropped") > 0);
	CHECK(num_of(od, "cpu_slices_dropped") < num_of(od, "cpu_slices"));
	{
		size_t len;
		char *s = ex_slurp(path, &len);

		char *end = s ? strstr(s, "\n],\n\"displayTimeUnit\"") : NULL;

		/* the events stay under the cap; otherData follows them */
		CHECK(end && (size_t)(end - s) + 2 <= full_size - 400);
		free(s);
	}
	CHECK(find_x(evs, "kernel", "overlapping", 0) != NULL);
	CHECK(find_x(evs, "cuda_runtime", "cudaY", 0) != NULL);
	{
		struct sl *v;
		size_t n;

		v = slices(evs, &n);
		CHECK_EQ_INT(nesting_violations(v, n), 0);
		free(v);
	}
	cJSON_Delete(j);

	/* quiet: the same cut, no message */
	o.quiet = 1;
	fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	saved = dup(2);
	dup2(fd, 2);
	close(fd);
	rc = export_trace(analysed(&fx->p), path, &o, err, sizeof(err));
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	CHECK_EQ_INT(rc, 0);
	msg = ex_slurp(errpath, NULL);
	CHECK(msg && !*msg);
	free(msg);
}

/* Far more samples than a 1 MiB cap holds: every thread is cut at about the
 * same time (not the last thread left empty), the file is valid and nested. */
static void check_big(const char *dir)
{
	struct profile p;
	char path[256], err[256];
	struct trace_opts o = {.max_bytes = 1 << 20, .quiet = 1};
	uint32_t t[2], fa, fb, fc, sa, sb;
	int64_t last[2] = {-1, -1};
	const cJSON *ev;
	cJSON *j;

	ex_init(&p, "big");
	ex_process(&p, 7, 0, "/bin/big");
	t[0] = ex_thread(&p, 7, 0, "one");
	t[1] = ex_thread(&p, 8, 0, "two");
	fa = ex_func(&p, "a", "", 0, "big");
	fb = ex_func(&p, "b", "", 0, "big");
	fc = ex_func(&p, "c", "", 0, "big");
	sa = ex_stack(&p, 2, (uint32_t[]){fa, fb});
	sb = ex_stack(&p, 2, (uint32_t[]){fa, fc});
	for (int th = 0; th < 2; th++)
		for (uint64_t k = 1; k <= 20000; k++)
			ex_sample(&p, t[th], EX_T0 + k * EX_MS, k % 2 ? sa : sb, 1);
	snprintf(path, sizeof(path), "%s/big.json", dir);
	CHECK_EQ_INT(export_trace(analysed(&p), path, &o, err, sizeof(err)), 0);
	j = load(path);
	REQUIRE(j != NULL);
	const cJSON *evs = cJSON_GetObjectItemCaseSensitive(j, "traceEvents");
	const cJSON *od = cJSON_GetObjectItemCaseSensitive(j, "otherData");

	cJSON_ArrayForEach(ev, evs)
	{
		if (strcmp(str_of(ev, "cat"), "cpu_sample"))
			continue;
		int th = num_of(ev, "tid") == 8;

		if (ns_of(ev, "ts") > last[th])
			last[th] = ns_of(ev, "ts");
	}
	/* 20000 samples x ~2 slices per thread, ~1 MiB holds ~10000 slices */
	CHECK(num_of(od, "cpu_slices") >= 40000);
	CHECK(num_of(od, "cpu_slices_dropped") > 20000);
	CHECK(last[0] > 1000 * (int64_t)EX_MS && last[1] > 1000 * (int64_t)EX_MS);
	CHECK(llabs(last[0] - last[1]) < 500 * (int64_t)EX_MS);
	{
		struct sl *v;
		size_t n;

		v = slices(evs, &n);
		CHECK_EQ_INT(nesting_violations(v, n), 0);
		free(v);
	}
	{
		size_t len;
		char *txt = ex_slurp(path, &len);

		CHECK(txt && len < (1 << 20) + 1024);
		free(txt);
	}
	cJSON_Delete(j);
	pb_profile_free(&p);
}

static void check_window_parse(void)
{
	uint64_t a = 7, b = 7;

	CHECK_EQ_INT(trace_window_parse("1.5s:3s", &a, &b), 0);
	CHECK_EQ_INT(a, 1500000000);
	CHECK_EQ_INT(b, 3000000000);
	CHECK_EQ_INT(trace_window_parse(":500ms", &a, &b), 0);
	CHECK_EQ_INT(a, 0);
	CHECK_EQ_INT(b, 500000000);
	CHECK_EQ_INT(trace_window_parse("200ms:", &a, &b), 0);
	CHECK_EQ_INT(a, 200000000);
	CHECK_EQ_INT(b, 0);
	CHECK_EQ_INT(trace_window_parse("250us:1", &a, &b), 0);
	CHECK_EQ_INT(a, 250000);
	CHECK_EQ_INT(b, 1000000000);
	CHECK_EQ_INT(trace_window_parse("10ns:20ns", &a, &b), 0);
	CHECK_EQ_INT(a, 10);
	CHECK_EQ_INT(b, 20);
	CHECK_EQ_INT(trace_window_parse(":", &a, &b), 0);
	CHECK_EQ_INT(a, 0);
	CHECK_EQ_INT(b, 0);
	CHECK(trace_window_parse("3s:1s", &a, &b) < 0);
	CHECK(trace_window_parse("1s", &a, &b) < 0);
	CHECK(trace_window_parse("1x:2s", &a, &b) < 0);
	CHECK(trace_window_parse("-1s:2s", &a, &b) < 0);
	CHECK(trace_window_parse("1s:2s:3s", &a, &b) < 0);
	CHECK(trace_window_parse("abc:", &a, &b) < 0);
	CHECK(trace_window_parse(":0", &a, &b) < 0);
	CHECK(trace_window_parse(NULL, &a, &b) < 0);
}

int main(void)
{
	struct fixture fx;
	char *dir = ex_tmpdir(), path[256], err[256];
	struct trace_opts o = {0};
	size_t full_size = 0;

	build(&fx);
	snprintf(path, sizeof(path), "%s/t.json", dir);
	CHECK_EQ_INT(export_trace(analysed(&fx.p), path, &o, err, sizeof(err)), 0);
	check_full(path);
	{
		char *s = ex_slurp(path, &full_size);

		REQUIRE(s != NULL);
		free(s);
	}

#ifdef EX_HAVE_ZLIB
	snprintf(path, sizeof(path), "%s/t.json.gz", dir);
	CHECK_EQ_INT(export_trace(analysed(&fx.p), path, &o, err, sizeof(err)), 0);
	{
		FILE *f = fopen(path, "rb");
		unsigned char magic[2] = {0, 0};

		REQUIRE(f != NULL);
		CHECK(fread(magic, 1, 2, f) == 2 && magic[0] == 0x1f && magic[1] == 0x8b);
		fclose(f);
	}
	check_full(path);
#endif

	o.window_start_ns = 5 * EX_MS;
	o.window_end_ns = 7 * EX_MS;
	snprintf(path, sizeof(path), "%s/w.json", dir);
	CHECK_EQ_INT(export_trace(analysed(&fx.p), path, &o, err, sizeof(err)), 0);
	check_window(path);

	check_cap(&fx, dir, full_size);
	check_big(dir);
	check_window_parse();

	/* an unwritable path fails with a message */
	o = (struct trace_opts){0};
	err[0] = '\0';
	CHECK(export_trace(analysed(&fx.p), "/nonexistent-dir/t.json", &o, err, sizeof(err)) < 0);
	CHECK(strstr(err, "/nonexistent-dir/t.json") != NULL);

	/* an empty profile still gives a valid trace */
	{
		struct profile empty;
		cJSON *j;

		ex_init(&empty, "true");
		snprintf(path, sizeof(path), "%s/empty.json", dir);
		CHECK_EQ_INT(export_trace(analysed(&empty), path, &o, err, sizeof(err)), 0);
		j = load(path);
		CHECK(j &&
		      cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "traceEvents")) == 0);
		cJSON_Delete(j);
	}

	pb_profile_free(&fx.p);
	if (!getenv("KEEP"))
		ex_rmdir(dir);
	else
		fprintf(stderr, "kept %s\n", dir);
	return test_result();
}
