/*
 * test_html_robust.c — the HTML page's aggregates (html_data.c) and the page
 * writer on random hostile profiles (stack and frame indices out of range,
 * samples without a thread, GPU operations ending before they start, CUDA
 * calls and ranges of no thread, launches out of range, missing names):
 * nothing may crash under ASan/UBSan, and the tree and timeline keep their
 * shape (parents before children, the root weighing every sample, slices in
 * time order); then on big profiles, the bounds that keep a page's size
 * independent of the number of samples and of functions.  The --json
 * report's bounded "call_tree" (calltree_json.c) too: parents first, the root
 * weighing every sample, every node over the share bound, no node lighter
 * than its children together, at most CT_MAX_NODES nodes.
 *
 * ctest-labels: fuzz
 */
#include <unistd.h>

#include <cjson/cJSON.h>

#include "report/calltree_json.h"
#include "report/html.h"
#include "report/report.h"
#include "test_cuda_build.h"
#include "analysed.h"
#include "testlib.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return n ? (uint32_t)(rng % n) : 0;
}

static uint32_t idx(size_t n)
{
	switch (rnd(8)) {
	case 0: return PROF_NONE;
	case 1: return (uint32_t)n + rnd(3);
	default: return n ? rnd((uint32_t)n) : PROF_NONE;
	}
}

static const char *const names[] = { "main", "f", "", NULL, "<script>", "k" };

static void random_profile(struct profile *p)
{
	int i, n;

	cb_init(p);
	p->start_ns = rnd(2) ? 0 : 5 * MS;
	for (i = 0, n = (int)rnd(4); i < n; i++)
		cb_thread(p, 200 + i);
	for (i = 0, n = (int)rnd(6); i < n; i++)
		cb_func(p, names[rnd(6)], rnd(2) ? "/nonexistent/a.c" : "", rnd(100), "app");
	for (i = 0, n = (int)rnd(6); i < n; i++) {
		struct prof_stack s = { .first = rnd(12), .nframes = rnd(6) };

		PB_ADD(p->stacks, p->nstacks, s);
	}
	for (i = 0, n = (int)rnd(12); i < n; i++) {
		struct prof_frame f = { .func = idx(p->nfuncs), .line = rnd(50),
					.file = rnd(2) ? "/nonexistent/a.c" : NULL, .inlined = rnd(2) };

		PB_ADD(p->frames, p->nframes, f);
	}
	for (i = 0, n = (int)rnd(60); i < n; i++) {
		struct prof_sample s = { .ts = (uint64_t)rnd(100) * MS, .stack = idx(p->nstacks),
					 .thread = idx(p->nthreads), .weight = rnd(3),
					 .flags = rnd(4) ? 0 : CBN_SAMPLE_TRUNCATED };

		PB_ADD(p->samples, p->nsamples, s);
	}
	for (i = 0, n = (int)rnd(10); i < n; i++) {
		const char *nm = names[rnd(6)];
		uint32_t c = cb_api(p, nm ? nm : "x", idx(p->nthreads), (uint64_t)rnd(100) * MS,
				    (uint64_t)rnd(100) * MS);

		p->cuda_api[c].name = nm;
	}
	for (i = 0, n = (int)rnd(8); i < n; i++) {
		cb_range(p, "r", idx(p->nthreads), (uint64_t)rnd(100) * MS, (uint64_t)rnd(100) * MS);
		p->ranges[p->nranges - 1].depth = rnd(12);
		if (rnd(4) == 0)
			p->ranges[p->nranges - 1].name = NULL;
	}
	for (i = 0, n = (int)rnd(20); i < n; i++) {
		struct prof_gpu_op op = { .kind = 1 + rnd(3), .start = (uint64_t)rnd(100) * MS,
					  .end = (uint64_t)rnd(100) * MS, .name = names[rnd(6)],
					  .stream = rnd(3), .device = rnd(2), .api = idx(p->ncuda_api),
					  .process = rnd(4) ? 0 : idx(p->nprocesses) };

		PB_ADD(p->gpu_ops, p->ngpu_ops, op);
	}
}

/* Tree: [parent, name, total, self, inlined] per node, parent-first. */
static int tree_ok(const cJSON *h, uint64_t *root_total)
{
	const cJSON *nodes = cJSON_GetObjectItem(cJSON_GetObjectItem(h, "tree"), "nodes");
	int n = cJSON_GetArraySize(nodes), nnames = cJSON_GetArraySize(cJSON_GetObjectItem(h, "names"));

	if (n % 5 || n < 5 || cJSON_GetArrayItem(nodes, 0)->valuedouble != -1)
		return 0;
	*root_total = (uint64_t)cJSON_GetArrayItem(nodes, 2)->valuedouble;
	for (int i = 5; i < n; i += 5) {
		double par = cJSON_GetArrayItem(nodes, i)->valuedouble;
		double nm = cJSON_GetArrayItem(nodes, i + 1)->valuedouble;

		if (par < 0 || par >= i / 5 || nm < 0 || nm >= nnames)
			return 0;
	}
	return 1;
}

static int timeline_ok(const cJSON *h, size_t *nslices)
{
	const cJSON *lane;

	*nslices = 0;
	cJSON_ArrayForEach(lane, cJSON_GetObjectItem(cJSON_GetObjectItem(h, "timeline"), "lanes")) {
		const cJSON *s = cJSON_GetObjectItem(lane, "slices");
		int n = cJSON_GetArraySize(s);
		double prev = -1;

		if (n % 3)
			return 0;
		for (int i = 0; i < n; i += 3) {
			double st = cJSON_GetArrayItem(s, i)->valuedouble;

			if (st < prev || cJSON_GetArrayItem(s, i + 1)->valuedouble < 0)
				return 0;
			prev = st;
		}
		*nslices += (size_t)n / 3;
	}
	return 1;
}

/* 200 000 samples on 20 000 distinct stacks in 8 threads.  The arrays are
 * sized once (pb_alloc), not grown a row at a time. */
#define BIG_STACKS 20000
#define BIG_DEPTH 8
/* The JSON call tree's shape and bounds; root weighs want. */
static int calltree_ok(const struct analysis *a, uint64_t want, size_t *kept)
{
	cJSON *ct = report_calltree_json(a), *nodes = cJSON_GetObjectItem(ct, "nodes");
	int n = cJSON_GetArraySize(nodes), i, ok = ct && n >= 1 && n <= CT_MAX_NODES;
	double *sum = calloc((size_t)n + 1, sizeof(*sum)), root = 0;

	for (i = 0; ok && sum && i < n; i++) {
		cJSON *e = cJSON_GetArrayItem(nodes, i);
		double par = cJSON_GetNumberValue(cJSON_GetObjectItem(e, "parent"));
		double tot = cJSON_GetNumberValue(cJSON_GetObjectItem(e, "total_ns"));

		if (!i) {
			root = tot;
			ok = par == -1 && (uint64_t)tot == want;
			continue;
		}
		ok = par >= 0 && par < i && tot >= (double)(uint64_t)(root * CT_MIN_SHARE) &&
		     cJSON_IsString(cJSON_GetObjectItem(e, "function"));
		if (ok)
			sum[(int)par] += tot;
	}
	for (i = 0; ok && sum && i < n; i++) {
		cJSON *e = cJSON_GetArrayItem(nodes, i);

		ok = sum[i] + cJSON_GetNumberValue(cJSON_GetObjectItem(e, "self_ns")) <=
		     cJSON_GetNumberValue(cJSON_GetObjectItem(e, "total_ns"));
	}
	if (!sum)
		ok = 0;
	if (kept)
		*kept = (size_t)n;
	free(sum);
	cJSON_Delete(ct);
	return ok;
}

#define BIG_SAMPLES 200000

static void big_profile(struct profile *p)
{
	uint32_t fn[64], i;

	cb_init(p);
	for (i = 1; i < 8; i++)
		cb_thread(p, 300 + i);
	for (i = 0; i < 64; i++) {
		char *name = malloc(16);

		REQUIRE(name);
		snprintf(name, 16, "fn%u", i);
		fn[i] = cb_func(p, name, "big.c", i + 1, "app");
	}
	p->stacks = pb_alloc(BIG_STACKS, sizeof(*p->stacks));
	p->frames = pb_alloc(BIG_STACKS * BIG_DEPTH, sizeof(*p->frames));
	p->samples = pb_alloc(BIG_SAMPLES, sizeof(*p->samples));
	REQUIRE(p->stacks && p->frames && p->samples);
	for (i = 0; i < BIG_STACKS; i++) {
		p->stacks[i].first = i * BIG_DEPTH;
		p->stacks[i].nframes = BIG_DEPTH;
		for (int d = 0; d < BIG_DEPTH; d++) {
			struct prof_frame *f = &p->frames[i * BIG_DEPTH + d];

			f->func = fn[(i >> (2 * d)) % 64];
			f->line = d + 1;
			f->file = "big.c";
		}
	}
	p->nstacks = BIG_STACKS;
	p->nframes = BIG_STACKS * BIG_DEPTH;
	for (i = 0; i < BIG_SAMPLES; i++) {
		p->samples[i].ts = (uint64_t)i * 10 * US;
		p->samples[i].stack = (i * 7919u) % BIG_STACKS;
		p->samples[i].thread = i % 8;
		p->samples[i].weight = 1;
	}
	p->nsamples = BIG_SAMPLES;
}

int main(void)
{
	const char *env = getenv("CBN_FUZZ_ROUNDS");
	int iter, rounds = env ? atoi(env) : 300, ok = 1;
	struct report_opts o = { .limit = 5 };
	char path[] = "/tmp/cbn-html-robust.XXXXXX", err[256];
	int fd = mkstemp(path);

	REQUIRE(fd >= 0);
	close(fd);
	for (iter = 0; iter < rounds && ok; iter++) {
		struct profile p;
		const struct analysis *a;
		cJSON *h;
		uint64_t root = 0, want = 0;
		size_t ns;

		random_profile(&p);
		a = analysed(&p);
		h = html_data_build(a, NULL);
		REQUIRE(h);
		for (size_t i = 0; i < p.nsamples; i++)
			want += (uint64_t)(p.samples[i].weight ? p.samples[i].weight : 1) *
				prof_period_of_thread(&p, p.samples[i].thread);
		if (!tree_ok(h, &root) || root != want || !timeline_ok(h, &ns) ||
		    !calltree_ok(a, want, NULL)) {
			fprintf(stderr, "iteration %d: root %llu, samples weigh %llu\n", iter,
				(unsigned long long)root, (unsigned long long)want);
			ok = 0;
		}
		cJSON_Delete(h);
		if (report_html_write(a, &o, NULL, path, err, sizeof(err)) != 0) {
			fprintf(stderr, "iteration %d: %s\n", iter, err);
			ok = 0;
		}
		pb_profile_free(&p);
	}
	CHECK(ok);

	{
		struct profile p;
		const struct analysis *a;
		cJSON *h;
		uint64_t root = 0;
		size_t ns = 0, nodes;

		big_profile(&p);
		a = analysed(&p);
		h = html_data_build(a, NULL);
		REQUIRE(h);
		CHECK(tree_ok(h, &root));
		CHECK(root == (uint64_t)BIG_SAMPLES * MS);
		nodes = (size_t)cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(h, "tree"),
									  "nodes")) / 5;
		/* 4000 kept nodes and at most one "(other)" under each */
		CHECK(nodes <= 8000);
		CHECK(cJSON_GetObjectItem(cJSON_GetObjectItem(h, "tree"), "total_nodes")->valuedouble >
		      4000);
		CHECK(timeline_ok(h, &ns));
		CHECK(ns <= 8 * 4000);
		{
			size_t kept = 0;

			CHECK(calltree_ok(a, (uint64_t)BIG_SAMPLES * MS, &kept));
			printf("call_tree: %zu nodes kept of %d\n", kept, (int)cJSON_GetObjectItem(
				cJSON_GetObjectItem(h, "tree"), "total_nodes")->valuedouble);
			CHECK(kept >= 2);
		}
		CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(h, "timeline"),
							     "lanes")) == 8);
		cJSON_Delete(h);
		for (size_t i = 0; i < p.nfuncs; i++)
			free((char *)p.funcs[i].name);
		pb_profile_free(&p);
	}
	{
		/* 6 000 functions of one sample each: the page keeps 5 000 by
		 * self and 5 000 by total (the same here), and says so */
		struct profile p;
		char *buf = NULL, *d, *e;
		size_t len = 0;
		FILE *f;
		cJSON *doc, *fn;

		cb_init(&p);
		/* sized once (pb_alloc), not grown a row at a time */
		p.funcs = pb_alloc(6000, sizeof(*p.funcs));
		p.frames = pb_alloc(6000, sizeof(*p.frames));
		p.stacks = pb_alloc(6000, sizeof(*p.stacks));
		p.samples = pb_alloc(6000, sizeof(*p.samples));
		REQUIRE(p.funcs && p.frames && p.stacks && p.samples);
		for (uint32_t i = 0; i < 6000; i++) {
			char *name = malloc(16);

			REQUIRE(name);
			snprintf(name, 16, "g%u", i);
			p.funcs[i] = (struct prof_func){ .name = name, .file = "g.c", .line = i + 1,
							 .module = "app" };
			p.frames[i] = (struct prof_frame){ .func = i, .line = 1, .file = "g.c" };
			p.stacks[i] = (struct prof_stack){ .first = i, .nframes = 1 };
			p.samples[i] = (struct prof_sample){ .ts = i * MS, .stack = i, .weight = 1 };
		}
		p.nfuncs = p.nframes = p.nstacks = p.nsamples = 6000;
		setenv("CBN_HTML_GZIP", "0", 1);
		REQUIRE(report_html_write(analysed(&p), &o, NULL, path, err, sizeof(err)) == 0);
		unsetenv("CBN_HTML_GZIP");
		f = fopen(path, "r");
		REQUIRE(f);
		buf = malloc(64 << 20);
		REQUIRE(buf);
		len = fread(buf, 1, (64 << 20) - 1, f);
		fclose(f);
		buf[len] = '\0';
		d = strstr(buf, "data-encoding=\"json\">");
		REQUIRE(d);
		d = strchr(d, '>') + 1;
		e = strstr(d, "</script>");
		REQUIRE(e);
		*e = '\0';
		doc = cJSON_Parse(d);
		REQUIRE(doc);
		fn = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "report"), "functions");
		CHECK_EQ_INT(cJSON_GetArraySize(fn), 5000);
		CHECK_EQ_INT(cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(
			cJSON_GetObjectItem(doc, "html"), "left_out"), "functions")), 1000);
		cJSON_Delete(doc);
		free(buf);
		for (size_t i = 0; i < p.nfuncs; i++)
			free((char *)p.funcs[i].name);
		pb_profile_free(&p);
	}
	unlink(path);
	return test_result();
}
