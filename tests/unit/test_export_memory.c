/*
 * test_export_memory.c — the per-stack writers weighed by host allocations:
 * --folded and --flamegraph with each --sample-type (exact and sampled
 * weights, allocations paired with their frees, an address reused), the
 * "no memory data" error, and pprof's heap sample types read back by the real
 * `go tool pprof -sample_index=...` (skipped without go).
 */
#include <math.h>

#include "analysed.h"
#include "testlib.h"
#include "test_export_fixture.h"

static struct prof_mem_alloc *allocs;
static size_t nallocs;
static struct prof_mem_free *frees;
static size_t nfrees;

static void alloc_in(struct profile *p, uint32_t proc, uint64_t ts, uint64_t addr, uint64_t size,
		     uint32_t stack)
{
	struct prof_mem_alloc a = {.ts = ts, .addr = addr, .size = size, .process = proc,
				   .thread = proc, .stack = stack, .kind = 0, .fn = 0};

	PB_ADD(allocs, nallocs, a);
	p->mem_allocs = allocs;
	p->nmem_allocs = nallocs;
}

static void alloc_at(struct profile *p, uint64_t ts, uint64_t addr, uint64_t size, uint32_t stack)
{
	alloc_in(p, 0, ts, addr, size, stack);
}

static void free_at(struct profile *p, uint64_t ts, uint64_t addr, uint64_t size)
{
	struct prof_mem_free f = {.ts = ts, .addr = addr, .size = size, .process = 0};

	PB_ADD(frees, nfrees, f);
	p->mem_frees = frees;
	p->nmem_frees = nfrees;
}

/* The weight folded gives the line that ends in " leaf"-style suffix text,
 * -1 when absent. */
static long folded_weight(const char *buf, const char *stack)
{
	size_t n = strlen(stack);

	for (const char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (strncmp(l, stack, n) == 0 && l[n] == ' ')
			return strtol(l + n + 1, NULL, 10);
	return -1;
}

static char *folded_as(const struct profile *p, const char *dir, enum export_sample t)
{
	char path[256], err[256];

	snprintf(path, sizeof(path), "%s/%s.folded", dir, export_sample_name(t));
	if (export_folded_as(analysed(p), path, t, err, sizeof(err)) < 0) {
		fprintf(stderr, "export_folded_as: %s\n", err);
		return NULL;
	}
	return ex_slurp(path, NULL);
}

/* Run go tool pprof on path; its stdout, malloc'd, or NULL. */
static char *go_pprof(const char *dir, const char *args, const char *path)
{
	char cmd[1024], out[256];

	snprintf(out, sizeof(out), "%s/go.out", dir);
	snprintf(cmd, sizeof(cmd), "HOME='%s' GOFLAGS= go tool pprof %s '%s' >'%s' 2>'%s.err'",
		 dir, args, path, out, out);
	if (system(cmd) != 0) {
		snprintf(cmd, sizeof(cmd), "cat '%s.err' >&2", out);
		if (system(cmd) != 0)
			fprintf(stderr, "go tool pprof failed\n");
		return NULL;
	}
	return ex_slurp(out, NULL);
}

/* A pprof -top line for name: "flat flat% sum% cum cum% name". */
static int top_has(const char *top, const char *name)
{
	size_t n = strlen(name);

	for (const char *l = top; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *e = strchr(l, '\n');
		size_t len = e ? (size_t)(e - l) : strlen(l);

		if (len > n && l[len - n - 1] == ' ' && strncmp(l + len - n, name, n) == 0)
			return 1;
	}
	return 0;
}

int main(void)
{
	struct profile p;
	struct analysis odd_an;
	char *dir = ex_tmpdir(), *buf, path[256], err[256];
	uint32_t th, f_main, f_work, f_leak, f_big, s_work, s_leak, s_big;

	ex_init(&p, "./app");
	ex_process(&p, 77, 0, "/usr/bin/app");
	th = ex_thread(&p, 77, 0, "app");
	f_main = ex_func(&p, "main", "app.c", 3, "app");
	f_work = ex_func(&p, "work", "app.c", 30, "app");
	f_leak = ex_func(&p, "leaky", "app.c", 60, "app");
	f_big = ex_func(&p, "big", "app.c", 90, "app");
	s_work = ex_stack(&p, 2, (uint32_t[]){f_main, f_work});
	s_leak = ex_stack(&p, 2, (uint32_t[]){f_main, f_leak});
	s_big = ex_stack(&p, 2, (uint32_t[]){f_main, f_big});
	for (int k = 0; k < 30; k++)
		ex_sample(&p, th, EX_T0 + (uint64_t)k * EX_MS, s_work, 1);

	/* no memory data yet: a memory type is refused, cpu is as before */
	snprintf(path, sizeof(path), "%s/none.folded", dir);
	CHECK(export_folded_as(analysed(&p), path, EXPORT_INUSE_SPACE, err, sizeof(err)) < 0);
	CHECK(strstr(err, "no memory data") != NULL);
	CHECK(export_flamegraph_as(analysed(&p), path, EXPORT_ALLOC_SPACE, err, sizeof(err)) < 0);
	CHECK(strstr(err, "no memory data") != NULL);
	buf = folded_as(&p, dir, EXPORT_CPU);
	REQUIRE(buf != NULL);
	CHECK_EQ_INT(folded_weight(buf, "main;work"), 30);
	free(buf);

	/* exact mode: 10 x 1000 B from work, all freed; 3 x 5000 B from leaky,
	 * never freed; one address reused: freed once, then live */
	p.processes[0].mem.state = CBN_MEM_ON;
	p.processes[0].mem.rate = 1;
	for (int k = 0; k < 10; k++) {
		alloc_at(&p, EX_T0 + (uint64_t)k * 1000, 0x1000 + 64 * (uint64_t)k, 1000, s_work);
		free_at(&p, EX_T0 + (uint64_t)k * 1000 + 500, 0x1000 + 64 * (uint64_t)k, 1000);
	}
	for (int k = 0; k < 3; k++)
		alloc_at(&p, EX_T0 + 20000 + (uint64_t)k, 0x9000 + 64 * (uint64_t)k, 5000, s_leak);
	alloc_at(&p, EX_T0 + 30000, 0x1000, 2000, s_leak); /* 0x1000 again, never freed */

	buf = folded_as(&p, dir, EXPORT_ALLOC_SPACE);
	REQUIRE(buf != NULL);
	CHECK_EQ_INT(folded_weight(buf, "main;work"), 10000);
	CHECK_EQ_INT(folded_weight(buf, "main;leaky"), 17000);
	free(buf);
	buf = folded_as(&p, dir, EXPORT_ALLOC_OBJECTS);
	REQUIRE(buf != NULL);
	CHECK_EQ_INT(folded_weight(buf, "main;work"), 10);
	CHECK_EQ_INT(folded_weight(buf, "main;leaky"), 4);
	free(buf);
	buf = folded_as(&p, dir, EXPORT_INUSE_SPACE);
	REQUIRE(buf != NULL);
	CHECK_EQ_INT(folded_weight(buf, "main;work"), -1); /* all freed: no line */
	CHECK_EQ_INT(folded_weight(buf, "main;leaky"), 17000);
	free(buf);
	buf = folded_as(&p, dir, EXPORT_INUSE_OBJECTS);
	REQUIRE(buf != NULL);
	CHECK_EQ_INT(folded_weight(buf, "main;leaky"), 4);
	free(buf);
	buf = folded_as(&p, dir, EXPORT_CPU); /* cpu unchanged by memory data */
	REQUIRE(buf != NULL);
	CHECK_EQ_INT(folded_weight(buf, "main;work"), 30);
	CHECK_EQ_INT(folded_weight(buf, "main;leaky"), -1);
	free(buf);

	/* flame graph by inuse_space: leaky is drawn, work is not */
	snprintf(path, sizeof(path), "%s/inuse.svg", dir);
	CHECK_EQ_INT(export_flamegraph_as(analysed(&p), path, EXPORT_INUSE_SPACE, err,
					  sizeof(err)), 0);
	buf = ex_slurp(path, NULL);
	REQUIRE(buf != NULL);
	CHECK(strstr(buf, "<title>leaky (17000 bytes in use at exit, 100.00%)</title>") != NULL);
	CHECK(strstr(buf, "<title>work") == NULL);
	CHECK(strstr(buf, "inuse_space") != NULL);
	free(buf);

	/* sampled, in a second process: at rate 4096 one 4096-byte record
	 * stands for 4096/(1-e^-1) bytes and 1/(1-e^-1) allocations; a 1 MiB
	 * one for itself */
	ex_process(&p, 78, 0, "/usr/bin/app");
	ex_thread(&p, 78, 1, "app");
	p.processes[1].mem.state = CBN_MEM_ON;
	p.processes[1].mem.rate = 4096;
	alloc_in(&p, 1, EX_T0 + 40000, 0x20000, 4096, s_big);
	alloc_in(&p, 1, EX_T0 + 40001, 0x40000, 1 << 20, s_big);
	buf = folded_as(&p, dir, EXPORT_ALLOC_SPACE);
	REQUIRE(buf != NULL);
	{
		double want = 4096 / -expm1(-1.0) + (double)(1 << 20) / -expm1(-256.0);
		long got = folded_weight(buf, "main;big");

		CHECK(fabs((double)got - want) <= 1);
	}
	free(buf);

	/* records the loader could not place: no stack, an out-of-range stack,
	 * an unknown thread and process (exact weight) still count, under
	 * [no-stack].  The analysis weighs and pairs them (mem_samples.h) like
	 * any other. */
	{
		struct prof_mem_alloc odd[2] = {
			{.ts = EX_T0 + 50000, .addr = 0x50000, .size = 300, .process = 1,
			 .thread = PROF_NONE, .stack = PROF_NONE},
			{.ts = EX_T0 + 50001, .addr = 0x50040, .size = 200, .process = 99,
			 .thread = 12345, .stack = 777777}};

		alloc_in(&p, 1, odd[0].ts, odd[0].addr, odd[0].size, odd[0].stack);
		allocs[nallocs - 1].thread = PROF_NONE;
		alloc_in(&p, 99, odd[1].ts, odd[1].addr, odd[1].size, odd[1].stack);
		allocs[nallocs - 1].thread = 12345;
	}
	odd_an = *analysed(&p);
	snprintf(path, sizeof(path), "%s/odd.folded", dir);
	CHECK_EQ_INT(export_folded_as(&odd_an, path, EXPORT_ALLOC_OBJECTS, err, sizeof(err)), 0);
	buf = ex_slurp(path, NULL);
	REQUIRE(buf != NULL);
	CHECK(folded_weight(buf, "[no-stack]") >= 2); /* 300 B at rate 4096: ~14 allocations */
	free(buf);
	snprintf(path, sizeof(path), "%s/odd.svg", dir);
	CHECK_EQ_INT(export_flamegraph_as(&odd_an, path, EXPORT_ALLOC_SPACE, err, sizeof(err)), 0);

	/* pprof: heap types after the CPU ones, default still cpu; the real
	 * go tool pprof picks each */
	snprintf(path, sizeof(path), "%s/mem.pb.gz", dir);
	CHECK_EQ_INT(export_pprof(&odd_an, path, err, sizeof(err)), 0);
	if (system("command -v go >/dev/null 2>&1") != 0) {
		fprintf(stderr, "note: go not installed (tools/deps.sh --test installs golang-go): "
			"pprof heap types not read back\n");
	} else {
		char *top;

		top = go_pprof(dir, "-raw", path);
		REQUIRE(top != NULL);
		CHECK(strstr(top, "samples/count cpu/nanoseconds[dflt] alloc_objects/count "
				  "alloc_space/bytes inuse_objects/count inuse_space/bytes") != NULL);
		free(top);
		top = go_pprof(dir, "-top", path); /* default: cpu */
		REQUIRE(top != NULL);
		CHECK(top_has(top, "work") && !top_has(top, "leaky"));
		free(top);
		top = go_pprof(dir, "-sample_index=inuse_space -top", path);
		REQUIRE(top != NULL);
		CHECK(top_has(top, "leaky") && top_has(top, "big") && !top_has(top, "work"));
		CHECK(strstr(top, "Type: inuse_space") != NULL);
		free(top);
		top = go_pprof(dir, "-sample_index=alloc_objects -top", path);
		REQUIRE(top != NULL);
		CHECK(top_has(top, "leaky") && top_has(top, "work"));
		free(top);
		/* inuse_space total: 17000 exact + the two sampled estimates */
		top = go_pprof(dir, "-sample_index=inuse_space -unit=B -top", path);
		REQUIRE(top != NULL);
		{
			const char *t = strstr(top, "% of ");
			double want = 17000 + 4096 / -expm1(-1.0) + (double)(1 << 20) +
				      300 / -expm1(-300.0 / 4096) + 200;

			REQUIRE(t != NULL);
			CHECK(fabs(strtod(t + 5, NULL) - want) <= 2);
		}
		free(top);
	}

	pb_drop(allocs);
	pb_drop(frees);
	pb_profile_free(&p);
	if (!getenv("KEEP"))
		ex_rmdir(dir);
	return test_result();
}
