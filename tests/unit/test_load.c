/*
 * test_load.c — prof_load() on session directories written by this test with
 * cbn_format.h: processes, threads and names, stack deduplication, real
 * symbols (this executable's own functions), time-ordered module maps
 * (dlclose and a different module re-using the address), exec'd and crashed
 * images, truncated files, CUDA joins, session.json, and empty/garbage dirs.
 */
#include <dirent.h>
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testlib.h"
#include "test_reader_synth.h"
#include "load.h"

__attribute__((noinline)) int load_test_leaf(int x)
{
	volatile int v = x;
	return v * 3 + 1;
}

__attribute__((noinline)) int load_test_caller(int x)
{
	return load_test_leaf(x) + load_test_leaf(x + 1);
}

__attribute__((noinline)) int load_test_other(int x)
{
	volatile int v = x;
	return v - 7;
}

static void self_module_bid(struct synth *s, const struct synth_self *m, uint64_t ts,
			    const uint8_t *bid, uint16_t bid_len);

static void self_module(struct synth *s, const struct synth_self *m, uint64_t ts)
{
	self_module_bid(s, m, ts, NULL, 0);
}

static void self_module_bid(struct synth *s, const struct synth_self *m, uint64_t ts,
			    const uint8_t *bid, uint16_t bid_len)
{
	unsigned char b[8192];
	struct cbn_rec_module *r = (struct cbn_rec_module *)b;
	size_t plen = strlen(m->path);
	uint32_t size = (uint32_t)CBN_REC_ALIGN(sizeof(*r) + m->nseg * sizeof(struct cbn_segment) +
						plen + 1);

	memset(b, 0, sizeof(b));
	r->h.type = CBN_REC_MODULE_LOAD;
	r->h.size = size;
	r->ts = ts;
	r->base = m->base;
	r->nseg = m->nseg;
	memcpy(r->seg, m->seg, m->nseg * sizeof(struct cbn_segment));
	r->path_len = (uint32_t)plen;
	memcpy((char *)&r->seg[m->nseg], m->path, plen + 1);
	if (bid_len) {
		r->build_id_len = bid_len;
		memcpy(r->build_id, bid, bid_len);
	}
	synth_rec(s, r, size);
}

static char dir[] = "/tmp/cbn-test-load-XXXXXX";

static void write_file(struct synth *s, const char *name)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	REQUIRE(synth_write(s, path) == 0);
	synth_free(s);
}

static void clean_dir(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[4200];

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.' && (!e->d_name[1] || e->d_name[1] == '.'))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	closedir(d);
}

static int func_named(const struct profile *p, uint32_t stack, uint32_t depth, const char *name)
{
	const struct prof_stack *s = &p->stacks[stack];

	if (depth >= s->nframes)
		return 0;
	return strcmp(p->funcs[p->frames[s->first + depth].func].name, name) == 0;
}

static const char *module_at(const struct profile *p, uint32_t stack)
{
	return p->funcs[p->frames[p->stacks[stack].first].func].module;
}

static int has_warning(const struct profile *p, const char *a, const char *b)
{
	size_t i;

	for (i = 0; i < p->nwarnings; i++)
		if (strstr(p->warnings[i], a) && (!b || strstr(p->warnings[i], b)))
			return 1;
	return 0;
}

static void test_cpu_session(const struct synth_self *self)
{
	struct synth s;
	struct profile *p = NULL;
	char err[256];
	uint64_t leaf = (uint64_t)(uintptr_t)&load_test_leaf + 4;
	uint64_t ret_caller = (uint64_t)(uintptr_t)&load_test_caller + 8;
	uint64_t other = (uint64_t)(uintptr_t)&load_test_other + 4;
	uint64_t st1[2] = {leaf, ret_caller}, st2[1] = {other};
	uint64_t fake = 0x7f1000000000ull, fake2 = 0x7f2000000000ull;
	int i, ret;
	size_t k;
	uint64_t w100 = 0, w101 = 0;

	/* Root process 100: threads 100 and 101, two distinct stacks, 300 samples. */
	synth_init(&s, 100, 1, 0, 0, "/bin/root");
	synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
	self_module(&s, self, 1000);
	synth_module(&s, CBN_REC_MODULE_LOAD, 1000, fake, 1, "/nonexistent/libfake.so", 0x1000,
		     0x1000);
	/* loaded, never sampled: listed, debug info not looked up */
	synth_module(&s, CBN_REC_MODULE_LOAD, 1000, 0x7f3000000000ull, 4, "/nonexistent/libidle.so.1",
		     0x1000, 0x1000);
	synth_thread(&s, CBN_REC_THREAD_START, 1000, 100, "root", 0);
	synth_thread(&s, CBN_REC_THREAD_START, 1100, 101, "", 0);
	synth_thread(&s, CBN_REC_THREAD_NAME, 1200, 101, "worker-1", 0);
	/* dlclose at 2000; another module takes the same address at 2500 */
	synth_module(&s, CBN_REC_MODULE_UNLOAD, 2000, fake, 1, "/nonexistent/libfake.so", 0x1000,
		     0x1000);
	synth_module(&s, CBN_REC_MODULE_LOAD, 2500, fake, 2, "/nonexistent/libother.so", 0x1000,
		     0x1000);
	synth_module(&s, CBN_REC_MODULE_LOAD, 2600, fake2, 3, "/nonexistent/libfake.so", 0x1000,
		     0x1000);
	synth_chunk(&s, CBN_CHUNK_SAMPLES, 100);
	for (i = 0; i < 200; i++)
		synth_sample(&s, 1500 + (uint64_t)i, 1, (i & 1) ? st1 : st2, (i & 1) ? 2 : 1, 0);
	synth_chunk(&s, CBN_CHUNK_SAMPLES, 101);
	for (i = 0; i < 100; i++)
		synth_sample(&s, 1500 + (uint64_t)i, 2, st1, 2, 0);
	{
		uint64_t a[1] = {fake + 0x1010}, b[1] = {fake2 + 0x1010};
		synth_sample(&s, 1900, 1, a, 1, 0); /* libfake, first load */
		synth_sample(&s, 3000, 1, a, 1, 0); /* libother at the same address */
		synth_sample(&s, 3000, 1, b, 1, 0); /* libfake, re-loaded elsewhere */
	}
	synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
	synth_thread(&s, CBN_REC_THREAD_END, 4000, 101, "worker-1", 777);
	synth_exit(&s, 5000, 3);
	synth_hdr(&s)->start_mono_ns = 1000;
	synth_hdr(&s)->start_real_ns = 1700000000000001000ull;
	synth_hdr(&s)->end_mono_ns = 5000;
	write_file(&s, "100.0.cbp");

	/* pid 200: image 0 exec'd into image 1, which crashed */
	synth_init(&s, 200, 100, 0, 0, "/bin/sh");
	synth_hdr(&s)->start_mono_ns = 2000;
	synth_hdr(&s)->start_real_ns = 1700000000000002000ull;
	synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
	self_module(&s, self, 2000);
	synth_chunk(&s, CBN_CHUNK_SAMPLES, 200);
	synth_sample(&s, 2100, 1, st2, 1, 0);
	write_file(&s, "200.0.cbp");
	synth_init(&s, 200, 100, 1, 0, "./crash");
	synth_hdr(&s)->start_mono_ns = 2200;
	synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
	self_module(&s, self, 2200);
	synth_chunk(&s, CBN_CHUNK_SAMPLES, 200);
	for (i = 0; i < 10; i++)
		synth_sample(&s, 2300 + (uint64_t)i, 1, st1, 2, 0);
	write_file(&s, "200.1.cbp");

	ret = prof_load(dir, &p, err, sizeof(err));
	CHECK_EQ_INT(ret, PROF_LOAD_OK);
	REQUIRE(p != NULL);
	CHECK_EQ_INT(p->nprocesses, 3);
	CHECK_EQ_INT(p->processes[0].pid, 100); /* root first: earliest start */
	CHECK_EQ_INT(p->processes[0].clean_exit, 1);
	CHECK_EQ_INT(p->processes[0].exit_code, 3);
	CHECK_EQ_INT(p->processes[1].pid, 200);
	CHECK_EQ_INT(p->processes[2].exec_seq, 1);
	CHECK_EQ_INT(p->nsamples, 314);
	CHECK_EQ_INT(p->processes[0].samples, 303);
	CHECK_EQ_INT(p->processes[0].weight, 403);
	CHECK_STR(p->processes[2].exe, "./crash");
	/* wall-clock starts: per image, and the run's is the earliest image's */
	CHECK(p->processes[0].start_real_ns == 1700000000000001000ull);
	CHECK(p->processes[1].start_real_ns == 1700000000000002000ull);
	CHECK(p->start_real_ns == 1700000000000001000ull);
	/* the module list: every MODULE_LOAD of every image, in load order */
	{
		static const char *const names0[] = {NULL, "libfake.so", "libidle.so.1", "libother.so",
						     "libfake.so"};
		size_t n0 = 0, n1 = 0, n2 = 0;

		CHECK_EQ_INT(p->nmodules, 5 + 1 + 1);
		for (k = 0; k < p->nmodules; k++) {
			const struct prof_module *m = &p->modules[k];

			REQUIRE(m->process < p->nprocesses);
			CHECK(k == 0 || m->process >= p->modules[k - 1].process);
			n0 += m->process == 0;
			n1 += m->process == 1;
			n2 += m->process == 2;
			CHECK(strrchr(m->path, '/') && strcmp(strrchr(m->path, '/') + 1, m->name) == 0);
		}
		CHECK_EQ_INT(n0, 5);
		CHECK_EQ_INT(n1, 1);
		CHECK_EQ_INT(n2, 1);
		CHECK_STR(p->modules[0].path, self->path);
		CHECK(p->modules[0].has_debuginfo == 0 || p->modules[0].has_debuginfo == 1);
		for (k = 1; k < 5; k++)
			CHECK_STR(p->modules[k].name, names0[k]);
		/* libfake: loaded at 1000 with base fake, dlclosed at 2000, sampled, no DWARF */
		CHECK(p->modules[1].base == fake);
		CHECK_EQ_INT(p->modules[1].load_ts, 1000);
		CHECK_EQ_INT(p->modules[1].unload_ts, 2000);
		CHECK_EQ_INT(p->modules[1].has_debuginfo, 0);
		/* libidle: never sampled, still loaded */
		CHECK_EQ_INT(p->modules[2].unload_ts, 0);
		CHECK_EQ_INT(p->modules[2].has_debuginfo, -1);
		CHECK_EQ_INT(p->modules[3].load_ts, 2500);
		CHECK_EQ_INT(p->modules[4].unload_ts, 0);
		CHECK(p->modules[4].base == fake2);
		CHECK_STR(p->modules[5].path, self->path);
	}
	/* exit status falls back to the root's own when there is no session.json */
	CHECK_EQ_INT(p->exit_status, 3);
	CHECK_EQ_INT(p->period_ns, 10000000);
	CHECK(p->frequency_hz > 99 && p->frequency_hz < 101);
	CHECK(p->argv && p->argv[0] && strcmp(p->argv[0], "/bin/root") == 0);

	/* threads and names */
	for (k = 0; k < p->nthreads; k++) {
		const struct prof_thread *t = &p->threads[k];
		if (t->tid == 101) {
			CHECK_STR(t->name, "worker-1");
			CHECK_EQ_INT(t->cpu_ns, 777);
			CHECK_EQ_INT(t->end, 4000);
			w101 = t->weight;
		}
		if (t->tid == 100) {
			CHECK_STR(t->name, "root");
			w100 = t->weight;
		}
	}
	CHECK_EQ_INT(w100, 200);
	CHECK_EQ_INT(w101, 203); /* the 3 module-map samples are in its chunk */

	/* dedup: process 100 has 2 distinct stacks + 3 single-frame ones, two of
	 * which are the same function of libfake.so at two load addresses and so
	 * one stack; the other processes add their own */
	CHECK(p->nstacks <= 4 + 1 + 1);
	CHECK(p->nstacks >= 4);
	/* real symbols for the test's own functions, return address at pc-1 */
	for (k = 0; k < p->nsamples; k++) {
		const struct prof_sample *sm = &p->samples[k];
		const struct prof_stack *st = &p->stacks[sm->stack];
		if (p->threads[sm->thread].tid != 101)
			continue;
		CHECK(st->nframes >= 2);
		CHECK(func_named(p, sm->stack, 0, "load_test_leaf"));
		CHECK(func_named(p, sm->stack, st->nframes - 1, "load_test_caller"));
		CHECK(p->frames[st->first].addr == leaf);
		break;
	}
	/* module maps over time */
	{
		int seen_fake = 0, seen_other = 0, seen_fake2 = 0;
		for (k = 0; k < p->nsamples; k++) {
			const struct prof_sample *sm = &p->samples[k];
			const char *mod = module_at(p, sm->stack);
			/* (a stack's pcs are those of the first sample that made it) */
			if (sm->ts == 1900)
				seen_fake += strcmp(mod, "libfake.so") == 0;
			if (sm->ts == 3000)
				seen_other += strcmp(mod, "libother.so") == 0;
			if (sm->ts == 3000)
				seen_fake2 += strcmp(mod, "libfake.so") == 0;
		}
		CHECK_EQ_INT(seen_fake, 1);
		CHECK_EQ_INT(seen_other, 1);
		CHECK_EQ_INT(seen_fake2, 1);
	}
	/* the exec'd image is not reported as a crash; the crashed one is */
	CHECK(!has_warning(p, "pid 100 ", NULL));
	CHECK(has_warning(p, "pid 200 (./crash) ended without exiting normally", "10 samples"));
	{
		int n = 0;
		for (k = 0; k < p->nwarnings; k++)
			n += strstr(p->warnings[k], "pid 200") != NULL;
		CHECK_EQ_INT(n, 1);
	}
	prof_free(p);

	/* session.json wins over the files for the run's own facts */
	{
		char *argv[] = {"./prog", "--flag", "x y", NULL};
		struct session_meta m = {.argv = argv, .exit_status = -1, .exit_signal = 11,
					 .start_mono_ns = 500, .end_mono_ns = 1000500,
					 .frequency_hz = 250.0, .user_ns = 300000, .sys_ns = 100000};
		CHECK_EQ_INT(session_meta_write(dir, &m), 0);
		ret = prof_load(dir, &p, err, sizeof(err));
		REQUIRE(ret >= 0);
		CHECK_EQ_INT(p->exit_status, -1);
		CHECK_EQ_INT(p->exit_signal, 11);
		CHECK_EQ_INT(p->wall_ns, 1000000);
		CHECK_EQ_INT(p->start_ns, 1000); /* earliest process start, not the launcher's */
		CHECK(p->frequency_hz == 250.0);
		CHECK_EQ_INT(p->user_ns, 300000);
		CHECK_EQ_INT(p->sys_ns, 100000);
		CHECK_STR(p->argv[2], "x y");
		CHECK(p->argv[3] == NULL);
		prof_free(p);
	}

	/* a truncated file: partial, with a warning, and the intact part kept */
	{
		char path[4200];
		struct stat st;
		snprintf(path, sizeof(path), "%s/100.0.cbp", dir);
		REQUIRE(stat(path, &st) == 0);
		REQUIRE(truncate(path, CBN_HEADER_SIZE + CBN_CHUNK_SIZE + 24 + 40 * 40) == 0);
		ret = prof_load(dir, &p, err, sizeof(err));
		CHECK_EQ_INT(ret, PROF_LOAD_PARTIAL);
		REQUIRE(p != NULL);
		CHECK_EQ_INT(p->processes[0].damaged, 1);
		CHECK(has_warning(p, "100.0.cbp: truncated", "kept"));
		CHECK(p->processes[0].samples > 10 && p->processes[0].samples < 200);
		/* clean exit was in the header, so no crash warning for it */
		CHECK(!has_warning(p, "pid 100 ", NULL));
		prof_free(p);
	}

	/* a zeroed samples chunk: the header's sample count gives it away */
	{
		char path[4200];
		FILE *f;
		static unsigned char zeros[CBN_CHUNK_SIZE];
		snprintf(path, sizeof(path), "%s/200.1.cbp", dir);
		f = fopen(path, "r+");
		REQUIRE(f != NULL);
		REQUIRE(fseek(f, CBN_HEADER_SIZE + CBN_CHUNK_SIZE, SEEK_SET) == 0);
		REQUIRE(fwrite(zeros, 1, sizeof(zeros), f) == sizeof(zeros));
		fclose(f);
		ret = prof_load(dir, &p, err, sizeof(err));
		CHECK_EQ_INT(ret, PROF_LOAD_PARTIAL);
		REQUIRE(p != NULL);
		CHECK(has_warning(p, "200.1.cbp: only 0 of the 10 samples", NULL));
		prof_free(p);
	}
	clean_dir();
}

static void test_cuda_session(const struct synth_self *self)
{
	struct synth s;
	struct profile *p = NULL;
	char err[256];
	uint64_t ret_caller = (uint64_t)(uintptr_t)&load_test_caller + 8;
	uint64_t ret_leaf = (uint64_t)(uintptr_t)&load_test_leaf + 8;
	size_t k;
	int ret;

	synth_init(&s, 300, 1, 0, 0, "./gpu");
	synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
	self_module(&s, self, 100);
	{
		struct cbn_rec_cuda_api a;
		memset(&a, 0, sizeof(a));
		a.h.type = CBN_REC_CUDA_API;
		a.start = 2000; a.end = 2100; a.tid = 300; a.correlation = 5;
		a.domain = CBN_CUDA_RUNTIME; a.name_len = 16;
		synth_var(&s, &a, sizeof(a), "cudaLaunchKernel", NULL);
		a.start = 2200; a.end = 2300; a.correlation = 6; a.name_len = 10;
		synth_var(&s, &a, sizeof(a), "cudaMemcpy", NULL);
	}
	{
		unsigned char b[sizeof(struct cbn_rec_cuda_stack) + 2 * 8];
		struct cbn_rec_cuda_stack *k2 = (struct cbn_rec_cuda_stack *)b;
		memset(b, 0, sizeof(b));
		k2->h.type = CBN_REC_CUDA_STACK; k2->h.size = sizeof(b);
		k2->correlation = 5; k2->tid = 300; k2->nframes = 2;
		k2->pc[0] = ret_leaf; k2->pc[1] = ret_caller;
		synth_rec(&s, b, sizeof(b));
	}
	{
		struct cbn_rec_cuda_kernel kr;
		memset(&kr, 0, sizeof(kr));
		kr.h.type = CBN_REC_CUDA_KERNEL;
		kr.start = 2500; kr.end = 2900; kr.correlation = 5; kr.grid[0] = 64;
		kr.block[0] = 256; kr.registers = 40; kr.name_len = 13;
		synth_var(&s, &kr, sizeof(kr), "_Z6kernelPfi", NULL);
	}
	{
		struct cbn_rec_cuda_memcpy m;
		memset(&m, 0, sizeof(m));
		m.h.type = CBN_REC_CUDA_MEMCPY; m.h.size = sizeof(m); m.h.flags = CBN_GPU_ASYNC;
		m.start = 3000; m.end = 3100; m.bytes = 4096; m.copy_kind = CBN_COPY_DTOH;
		m.correlation = 6;
		synth_rec(&s, &m, sizeof(m));
		m.copy_kind = CBN_COPY_HTOD; m.correlation = 99; /* no API call: unlinked */
		synth_rec(&s, &m, sizeof(m));
	}
	{
		struct cbn_rec_range r;
		memset(&r, 0, sizeof(r));
		r.h.type = CBN_REC_RANGE;
		r.start = 1900; r.end = 3200; r.tid = 300; r.kind = CBN_RANGE_PUSHPOP;
		r.source = CBN_SRC_NVTX; r.domain_len = 0; r.name_len = 5;
		synth_var(&s, &r, sizeof(r), "", "train");
	}
	for (int i = 0; i < 2; i++) {
		struct cbn_rec_cuda_status st;
		memset(&st, 0, sizeof(st));
		st.h.type = CBN_REC_CUDA_STATUS;
		st.state = i ? CBN_CUDA_FINISHED : CBN_CUDA_STARTED;
		st.dropped = (uint64_t)i * 3;
		st.message_len = i ? 4 : 5;
		synth_var(&s, &st, sizeof(st), i ? "done" : "start", NULL);
	}
	synth_exit(&s, 4000, 0);
	write_file(&s, "300.0.cbp");

	ret = prof_load(dir, &p, err, sizeof(err));
	CHECK_EQ_INT(ret, PROF_LOAD_OK);
	REQUIRE(p != NULL);
	CHECK_EQ_INT(p->ncuda_api, 2);
	CHECK_EQ_INT(p->ngpu_ops, 3);
	CHECK_STR(p->cuda_api[0].name, "cudaLaunchKernel");
	CHECK(p->cuda_api[0].thread != PROF_NONE && p->threads[p->cuda_api[0].thread].tid == 300);
	REQUIRE(p->cuda_api[0].stack != PROF_NONE);
	CHECK(func_named(p, p->cuda_api[0].stack, 0, "load_test_leaf"));
	CHECK_EQ_INT(p->cuda_api[1].stack, PROF_NONE);
	for (k = 0; k < p->ngpu_ops; k++) {
		const struct prof_gpu_op *g = &p->gpu_ops[k];
		if (g->kind == PROF_GPU_KERNEL) {
			CHECK(strstr(g->name, "kernel(") == g->name);
			CHECK_EQ_INT(g->api, 0);
			CHECK_EQ_INT(g->grid[0], 64);
			CHECK_EQ_INT(g->registers, 40);
		} else if (g->correlation == 6) {
			CHECK_STR(g->name, "[CUDA memcpy DtoH]");
			CHECK_EQ_INT(g->api, 1);
			CHECK_EQ_INT(g->async, 1);
			CHECK_EQ_INT(g->bytes, 4096);
		} else {
			CHECK_STR(g->name, "[CUDA memcpy HtoD]");
			CHECK_EQ_INT(g->api, PROF_NONE);
		}
	}
	CHECK_EQ_INT(p->nranges, 1);
	CHECK_STR(p->ranges[0].name, "train");
	CHECK_STR(p->ranges[0].domain, "");
	CHECK_EQ_INT(p->ncuda_status, 1);
	CHECK_EQ_INT(p->cuda_status[0].state, CBN_CUDA_FINISHED);
	CHECK_EQ_INT(p->cuda_status[0].dropped, 3);
	CHECK_STR(p->cuda_status[0].message, "done");
	prof_free(p);
	clean_dir();
}

/* Keyed CUDA stacks: a record with only the key takes the frames of the one
 * that defined the key, also when the definition comes later in the file
 * (each thread writes into chunks of its own, in no order between threads). */
static void test_cuda_keyed_order(const struct synth_self *self)
{
	struct synth s;
	struct profile *p = NULL;
	char err[256];
	uint64_t key = 0x1234abcd5678ef01ull;
	uint32_t corr;

	synth_init(&s, 310, 1, 0, 0, "./gpu");
	synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
	self_module(&s, self, 100);
	for (corr = 1; corr <= 2; corr++) {
		struct cbn_rec_cuda_api a;
		memset(&a, 0, sizeof(a));
		a.h.type = CBN_REC_CUDA_API;
		a.start = 1000 * corr; a.end = 1000 * corr + 100; a.tid = 310 + corr;
		a.correlation = corr; a.domain = CBN_CUDA_RUNTIME; a.name_len = 16;
		synth_var(&s, &a, sizeof(a), "cudaLaunchKernel", NULL);
	}
	/* call 2's key alone (thread 312), then call 1's frames (thread 311) */
	synth_chunk(&s, CBN_CHUNK_EVENTS, 312);
	{
		unsigned char b[sizeof(struct cbn_rec_cuda_stack) + 8];
		struct cbn_rec_cuda_stack *k = (struct cbn_rec_cuda_stack *)b;
		memset(b, 0, sizeof(b));
		k->h.type = CBN_REC_CUDA_STACK; k->h.size = sizeof(b); k->h.flags = CBN_CSTACK_KEYED;
		k->correlation = 2; k->tid = 312; k->nframes = 0;
		memcpy(k->pc, &key, 8);
		synth_rec(&s, b, sizeof(b));
	}
	synth_chunk(&s, CBN_CHUNK_EVENTS, 311);
	{
		unsigned char b[sizeof(struct cbn_rec_cuda_stack) + 3 * 8];
		struct cbn_rec_cuda_stack *k = (struct cbn_rec_cuda_stack *)b;
		memset(b, 0, sizeof(b));
		k->h.type = CBN_REC_CUDA_STACK; k->h.size = sizeof(b); k->h.flags = CBN_CSTACK_KEYED;
		k->correlation = 1; k->tid = 311; k->nframes = 2;
		k->pc[0] = (uint64_t)(uintptr_t)&load_test_leaf + 8;
		k->pc[1] = (uint64_t)(uintptr_t)&load_test_caller + 8;
		memcpy(&k->pc[2], &key, 8);
		synth_rec(&s, b, sizeof(b));
	}
	synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
	synth_exit(&s, 4000, 0);
	write_file(&s, "310.0.cbp");

	CHECK_EQ_INT(prof_load(dir, &p, err, sizeof(err)), PROF_LOAD_OK);
	REQUIRE(p != NULL);
	REQUIRE(p->ncuda_api == 2);
	REQUIRE(p->cuda_api[0].stack != PROF_NONE);
	REQUIRE(p->cuda_api[1].stack != PROF_NONE);
	CHECK(func_named(p, p->cuda_api[0].stack, 0, "load_test_leaf"));
	CHECK(func_named(p, p->cuda_api[1].stack, 0, "load_test_leaf"));
	CHECK(func_named(p, p->cuda_api[1].stack, 1, "load_test_caller"));
	prof_free(p);
	clean_dir();
}

/* A module whose file no longer matches the build-id recorded at run time. */
static void test_changed_module(const struct synth_self *self)
{
	struct synth s;
	struct profile *p = NULL;
	char err[256];
	uint8_t bid[20];
	uint64_t pc[1] = {(uint64_t)(uintptr_t)&load_test_other + 4};

	memset(bid, 0xab, sizeof(bid));
	synth_init(&s, 400, 1, 0, 0, "./changed");
	synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
	self_module_bid(&s, self, 100, bid, sizeof(bid));
	synth_chunk(&s, CBN_CHUNK_SAMPLES, 400);
	synth_sample(&s, 200, 1, pc, 1, 0);
	synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
	synth_exit(&s, 300, 0);
	write_file(&s, "400.0.cbp");
	CHECK_EQ_INT(prof_load(dir, &p, err, sizeof(err)), PROF_LOAD_OK);
	REQUIRE(p != NULL);
	CHECK(has_warning(p, "changed on disk since the run", self->path));
	CHECK_EQ_INT(p->nsamples, 1);
	prof_free(p);
	clean_dir();
}

/* A thread's end sample with no earlier sample to take its stack from
 * (CBN_SAMPLE_UNSEEN, its start routine alone): the CPU goes to a
 * "[too short to sample]" leaf under the start routine, not to the start
 * routine's own time; an end sample on a stack it had keeps that stack. */
static void test_unseen(const struct synth_self *self)
{
	struct synth s;
	struct profile *p = NULL;
	char err[256];
	uint64_t entry[1] = {(uint64_t)(uintptr_t)&load_test_caller};
	uint64_t seen[2] = {(uint64_t)(uintptr_t)&load_test_leaf + 4,
			    (uint64_t)(uintptr_t)&load_test_caller + 8};
	uint32_t f;

	synth_init(&s, 410, 1, 0, 0, "./short");
	synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
	self_module(&s, self, 100);
	synth_chunk(&s, CBN_CHUNK_SAMPLES, 410);
	synth_sample(&s, 200, 3, entry, 1, CBN_SAMPLE_AT_END | CBN_SAMPLE_UNSEEN);
	synth_sample(&s, 210, 1, seen, 2, CBN_SAMPLE_AT_END);
	synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
	synth_exit(&s, 300, 0);
	write_file(&s, "410.0.cbp");
	CHECK_EQ_INT(prof_load(dir, &p, err, sizeof(err)), PROF_LOAD_OK);
	REQUIRE(p != NULL);
	REQUIRE(p->nsamples == 2);
	CHECK(func_named(p, p->samples[0].stack, 0, "[too short to sample]"));
	CHECK(func_named(p, p->samples[0].stack, 1, "load_test_caller"));
	CHECK_EQ_INT(p->stacks[p->samples[0].stack].nframes, 2);
	f = p->frames[p->stacks[p->samples[0].stack].first].func;
	CHECK(p->funcs[f].flags & PROF_FUNC_UNSEEN);
	CHECK_EQ_INT(p->samples[0].weight, 3);
	CHECK(func_named(p, p->samples[1].stack, 0, "load_test_leaf"));
	CHECK(func_named(p, p->samples[1].stack, 1, "load_test_caller"));
	prof_free(p);
	clean_dir();
}

/* Kernel stacks: kweight shared among them by count (exactly), named from the
 * session's kernel-symbols file, "[kernel] 0x..." without it; a sample with
 * no kernel stack keeps the plain [kernel] leaf. */
static void test_kernel_stacks(const struct synth_self *self)
{
	struct synth s;
	struct profile *p = NULL;
	char err[256], path[4200];
	uint64_t pc[1] = {(uint64_t)(uintptr_t)&load_test_other + 4};
	uint64_t ka[3] = {0xffffffff81000110ull, 0xffffffff81000205ull, 0xffffffff81000305ull};
	uint64_t kb[2] = {0xffffffff81000410ull, 0xffffffff81000305ull};
	const uint64_t *kpc[2] = {ka, kb};
	uint32_t count[2] = {3, 1};
	uint16_t knf[2] = {3, 2};
	uint64_t wsum = 0, wk = 0, wread = 0, wclear = 0, whex = 0, wleaf = 0;
	size_t i, nk = 0, nrec = 0;
	FILE *f;

	synth_init(&s, 500, 1, 0, 0, "./ksys");
	synth_hdr(&s)->kstack_state = CBN_KSTACK_TAKEN;
	synth_hdr(&s)->kstack_samples = 4;
	synth_hdr(&s)->threads_kstacks = 1;
	synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
	self_module(&s, self, 100);
	synth_chunk(&s, CBN_CHUNK_SAMPLES, 500);
	/* weight 10, 8 of it kernel: 6 + 2 over the stacks, 2 user */
	synth_sample_k(&s, 200, 10, 8, pc, 1, 2, count, knf, kpc, 0);
	/* all kernel (7 of 7): the record itself becomes a kernel stack */
	synth_sample_k(&s, 210, 7, 7, pc, 1, 2, count, knf, kpc, 3);
	/* kernel time but no stack (all lost): the plain [kernel] leaf */
	synth_sample_k(&s, 220, 4, 2, pc, 1, 0, count, knf, kpc, 9);
	synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
	synth_exit(&s, 300, 0);
	write_file(&s, "500.0.cbp");
	snprintf(path, sizeof(path), "%s/kernel-symbols", dir);
	f = fopen(path, "w");
	REQUIRE(f != NULL);
	fprintf(f, "# test\nffffffff81000100 ffffffff81000200 clear_user_rep_good\n"
		   "ffffffff81000200 ffffffff81000300 read_zero\n"
		   "ffffffff81000300 ffffffff81000400 vfs_read\nnot a line\n");
	fclose(f);

	CHECK_EQ_INT(prof_load(dir, &p, err, sizeof(err)), PROF_LOAD_OK);
	REQUIRE(p != NULL);
	for (i = 0; i < p->nsamples; i++) {
		const struct prof_sample *sm = &p->samples[i];
		const char *leaf = p->funcs[p->frames[p->stacks[sm->stack].first].func].name;

		wsum += sm->weight;
		nrec += !(sm->flags & PROF_SAMPLE_SPLIT);
		/* the kernel's time is flagged so, split off or a whole record:
		 * what the CPU overview counts as "in the kernel" */
		CHECK(!strncmp(leaf, "[kernel]", 8) == !!(sm->flags & PROF_SAMPLE_KERNEL));
		if (!strncmp(leaf, "[kernel]", 8)) {
			nk++;
			wk += sm->weight;
			CHECK_STR(module_at(p, sm->stack), "kernel");
		}
		if (!strcmp(leaf, "[kernel] clear_user_rep_good")) {
			wclear += sm->weight;
			/* kernel frames, then the user stack the thread returned to */
			CHECK(func_named(p, sm->stack, 1, "[kernel] read_zero"));
			CHECK(func_named(p, sm->stack, 2, "[kernel] vfs_read"));
			CHECK(func_named(p, sm->stack, 3, "load_test_other"));
		}
		if (!strcmp(leaf, "[kernel] 0xffffffff81000410")) {
			whex += sm->weight;
			CHECK(func_named(p, sm->stack, 1, "[kernel] vfs_read"));
		}
		if (!strcmp(leaf, "[kernel]")) {
			wleaf += sm->weight;
			CHECK(func_named(p, sm->stack, 1, "load_test_other"));
		}
		if (!strcmp(leaf, "[kernel] read_zero"))
			wread += sm->weight;
	}
	CHECK_EQ_INT(wsum, 21);      /* every period kept */
	CHECK_EQ_INT(nrec, 3);       /* one sample per record */
	CHECK_EQ_INT(wk, 8 + 7 + 2); /* kernel weight exactly kweight */
	CHECK_EQ_INT(wclear, 6 + 5); /* 3/4 of 8, and of 7 (cumulative rounding) */
	CHECK_EQ_INT(whex, 2 + 2);   /* no symbol covers it: the address */
	CHECK_EQ_INT(wleaf, 2);
	CHECK_EQ_INT(wread, 0);      /* read_zero only as a caller */
	CHECK_EQ_INT(p->processes[0].kstack_state, CBN_KSTACK_TAKEN);
	CHECK_EQ_INT(nk, 5);
	prof_free(p);

	/* Without the symbols file: addresses, the same weights. */
	unlink(path);
	CHECK_EQ_INT(prof_load(dir, &p, err, sizeof(err)), PROF_LOAD_OK);
	REQUIRE(p != NULL);
	wclear = 0;
	for (i = 0; i < p->nsamples; i++)
		if (func_named(p, p->samples[i].stack, 0, "[kernel] 0xffffffff81000110"))
			wclear += p->samples[i].weight;
	CHECK_EQ_INT(wclear, 11);
	prof_free(p);
	clean_dir();
}

/* A sample (pcs pc[0..n)) with one kernel stack per entry of kpc (count 1
 * each, one frame), each placed as nuser[j] pcs upc[j] and drop[j]. */
static void synth_sample_placed(struct synth *s, uint64_t ts, uint32_t weight, uint16_t kw,
				const uint64_t *pcs, uint16_t n, unsigned nk, const uint64_t *kpc,
				const uint16_t *nuser, const uint64_t (*upc)[2], const uint16_t *drop)
{
	unsigned char b[4096];
	struct cbn_rec_sample *r = (struct cbn_rec_sample *)b;
	struct cbn_kstacks *ks;
	size_t off;
	unsigned j;

	memset(b, 0, sizeof(b));
	r->h.type = CBN_REC_SAMPLE;
	r->h.flags = CBN_SAMPLE_KSTACKS;
	r->ts = ts;
	r->weight = weight;
	r->kweight = kw;
	r->nframes = n;
	memcpy(r->pc, pcs, n * 8u);
	off = sizeof(*r) + n * 8u;
	ks = (struct cbn_kstacks *)(b + off);
	ks->nstacks = (uint16_t)nk;
	ks->flags = CBN_KSTACKS_PLACED;
	off += sizeof(*ks);
	for (j = 0; j < nk; j++) {
		struct cbn_kstack *k = (struct cbn_kstack *)(b + off);

		k->count = 1;
		k->nframes = 1;
		k->pc[0] = kpc[j];
		off += sizeof(*k) + 8;
	}
	for (j = 0; j < nk; j++) {
		struct cbn_kplace *kp = (struct cbn_kplace *)(b + off);

		kp->nuser = nuser[j];
		kp->drop = drop[j];
		memcpy(kp->pc, upc[j], nuser[j] * 8u);
		off += sizeof(*kp) + nuser[j] * 8u;
	}
	r->h.size = (uint32_t)off;
	synth_rec(s, r, (uint32_t)off);
	synth_hdr(s)->samples++;
}

/* Placed kernel stacks: on the user stack at their kernel entry (its pcs,
 * the entry pc looked up as is, then the sample's pcs from drop on), an
 * unplaced one on the sample's whole stack; a placement that drops more
 * frames than the sample has makes the record invalid. */
static void test_kernel_placed(const struct synth_self *self)
{
	struct synth s;
	struct profile *p = NULL;
	char err[256];
	/* the sample: in load_test_other, called from load_test_caller */
	uint64_t pc[2] = {(uint64_t)(uintptr_t)&load_test_other + 4,
			  (uint64_t)(uintptr_t)&load_test_caller + 8};
	uint64_t kpc[3] = {0xffffffff81000110ull, 0xffffffff81000210ull, 0xffffffff81000310ull};
	/* entered the kernel in load_test_leaf (an entry pc: not a return
	 * address, so +0 still names it), called from load_test_caller */
	const uint64_t upc[3][2] = {{(uint64_t)(uintptr_t)&load_test_leaf, 0},
				    {(uint64_t)(uintptr_t)&load_test_leaf,
				     (uint64_t)(uintptr_t)&load_test_caller + 12},
				    {0, 0}};
	uint16_t nuser[3] = {1, 2, 0}, drop[3] = {1, 2, 0}, bad[1] = {3};
	uint64_t w0 = 0, w1 = 0, w2 = 0, wsum = 0;
	size_t i;

	synth_init(&s, 510, 1, 0, 0, "./kplace");
	synth_hdr(&s)->kstack_state = CBN_KSTACK_TAKEN;
	synth_hdr(&s)->kstack_samples = 3;
	synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
	self_module(&s, self, 100);
	synth_chunk(&s, CBN_CHUNK_SAMPLES, 510);
	/* weight 4, 3 of it kernel: one period per kernel stack */
	synth_sample_placed(&s, 200, 4, 3, pc, 2, 3, kpc, nuser, upc, drop);
	synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
	synth_exit(&s, 300, 0);
	write_file(&s, "510.0.cbp");

	CHECK_EQ_INT(prof_load(dir, &p, err, sizeof(err)), PROF_LOAD_OK);
	REQUIRE(p != NULL);
	CHECK(!p->processes[0].damaged);
	for (i = 0; i < p->nsamples; i++) {
		const struct prof_sample *sm = &p->samples[i];
		uint32_t st = sm->stack;

		wsum += sm->weight;
		if (func_named(p, st, 0, "[kernel] 0xffffffff81000110")) {
			/* leaf's entry, then the sample's frames from 1 on */
			w0 += sm->weight;
			CHECK(func_named(p, st, 1, "load_test_leaf"));
			CHECK(func_named(p, st, 2, "load_test_caller"));
			CHECK_EQ_INT(p->stacks[st].nframes, 3);
		}
		if (func_named(p, st, 0, "[kernel] 0xffffffff81000210")) {
			/* all of it the entry's own: nothing of the sample kept */
			w1 += sm->weight;
			CHECK(func_named(p, st, 1, "load_test_leaf"));
			CHECK(func_named(p, st, 2, "load_test_caller"));
			CHECK_EQ_INT(p->stacks[st].nframes, 3);
		}
		if (func_named(p, st, 0, "[kernel] 0xffffffff81000310")) {
			/* not placed: on the sample's stack */
			w2 += sm->weight;
			CHECK(func_named(p, st, 1, "load_test_other"));
			CHECK(func_named(p, st, 2, "load_test_caller"));
			CHECK_EQ_INT(p->stacks[st].nframes, 3);
		}
	}
	CHECK_EQ_INT(wsum, 4);
	CHECK_EQ_INT(w0, 1);
	CHECK_EQ_INT(w1, 1);
	CHECK_EQ_INT(w2, 1);
	prof_free(p);
	clean_dir();

	/* drop 3 of a 2-frame sample: the record is rejected, the file damaged */
	synth_init(&s, 511, 1, 0, 0, "./kplace");
	synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
	self_module(&s, self, 100);
	synth_chunk(&s, CBN_CHUNK_SAMPLES, 511);
	synth_sample_placed(&s, 200, 4, 3, pc, 2, 1, kpc, nuser, upc, bad);
	synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
	synth_exit(&s, 300, 0);
	write_file(&s, "511.0.cbp");
	CHECK_EQ_INT(prof_load(dir, &p, err, sizeof(err)), PROF_LOAD_PARTIAL);
	REQUIRE(p != NULL);
	CHECK(has_warning(p, "user placement does not fit", NULL));
	prof_free(p);
	clean_dir();
}

/* Many processes that did not exit: a few lines, then one summary. */
static void test_many_abnormal(void)
{
	struct synth s;
	struct profile *p = NULL;
	char err[256], name[64];
	uint64_t pc[1] = {0x1234};
	size_t k, lines = 0;
	int i;

	for (i = 0; i < 8; i++) {
		synth_init(&s, 500 + (uint32_t)i, 1, 0, 0, "./worker");
		synth_hdr(&s)->start_mono_ns = 1000 + (uint64_t)i;
		synth_chunk(&s, CBN_CHUNK_SAMPLES, 500 + (uint32_t)i);
		synth_sample(&s, 2000, 1, pc, 1, 0);
		snprintf(name, sizeof(name), "%d.0.cbp", 500 + i);
		write_file(&s, name);
	}
	CHECK_EQ_INT(prof_load(dir, &p, err, sizeof(err)), PROF_LOAD_OK);
	REQUIRE(p != NULL);
	for (k = 0; k < p->nwarnings; k++)
		lines += strstr(p->warnings[k], "(./worker) ended without exiting normally") != NULL;
	CHECK_EQ_INT(lines, 5);
	CHECK(has_warning(p, "3 more processes ended without exiting normally", "3 samples"));
	/* pcs outside every module still give a frame */
	CHECK_STR(p->funcs[p->frames[p->stacks[p->samples[0].stack].first].func].name, "[unknown]");
	prof_free(p);

	/* The launcher saw the root (pid 500, the earliest) exit normally: a shell
	 * that left through _exit is not reported. */
	{
		char *argv[] = {"./worker", NULL};
		struct session_meta m = {.argv = argv, .start_mono_ns = 900, .end_mono_ns = 5000,
					 .frequency_hz = 99.0};
		CHECK_EQ_INT(session_meta_write(dir, &m), 0);
		CHECK_EQ_INT(prof_load(dir, &p, err, sizeof(err)), PROF_LOAD_OK);
		REQUIRE(p != NULL);
		CHECK(!has_warning(p, "pid 500 ", NULL));
		CHECK(has_warning(p, "2 more processes ended", NULL));
		prof_free(p);
	}
	clean_dir();
}

/* Children of fork that never exec'd and left while their parent lived on
 * made the _exit they are meant to: counted apart, not a problem; a child
 * that outlived its parent, or ran another program, is still named. */
static void test_fork_exits(void)
{
	struct synth s;
	struct profile *p = NULL;
	char err[256], name[64];
	uint64_t pc[1] = {0x1234};
	int i;

	synth_init(&s, 700, 1, 0, 0, "./forker");
	synth_hdr(&s)->start_mono_ns = 1000;
	synth_hdr(&s)->end_mono_ns = 900000;
	synth_hdr(&s)->clean_exit = 1;
	synth_chunk(&s, CBN_CHUNK_SAMPLES, 700);
	synth_sample(&s, 2000, 1, pc, 1, 0);
	write_file(&s, "700.0.cbp");
	for (i = 0; i < 4; i++) {
		/* the last one ends after its parent: not the fork-then-_exit idiom */
		synth_init(&s, 701 + (uint32_t)i, 700, 0, 0, "./forker");
		synth_hdr(&s)->start_mono_ns = 3000 + (uint64_t)i;
		synth_hdr(&s)->end_mono_ns = i == 3 ? 950000 : 5000;
		synth_chunk(&s, CBN_CHUNK_SAMPLES, 701 + (uint32_t)i);
		synth_sample(&s, i == 3 ? 950000 : 4000, 1, pc, 1, 0);
		snprintf(name, sizeof(name), "%d.0.cbp", 701 + i);
		write_file(&s, name);
	}
	/* a shell that ended by _exit(5) after its parent: the status is known */
	synth_init(&s, 710, 700, 0, 0, "/bin/sh");
	synth_hdr(&s)->start_mono_ns = 3000;
	synth_hdr(&s)->end_mono_ns = 950000;
	synth_hdr(&s)->clean_exit = 2;
	synth_hdr(&s)->exit_code = 5;
	write_file(&s, "710.0.cbp");
	CHECK_EQ_INT(prof_load(dir, &p, err, sizeof(err)), PROF_LOAD_OK);
	REQUIRE(p != NULL);
	CHECK_EQ_INT(p->fork_exits, 3);
	CHECK(!has_warning(p, "pid 701 ", NULL));
	CHECK(has_warning(p, "pid 704 (./forker) ended without exiting normally", NULL));
	CHECK(!has_warning(p, "pid 710 ", NULL));
	for (i = 0; i < (int)p->nprocesses; i++) {
		const struct prof_process *pr = &p->processes[i];

		if (pr->pid == 710) {
			CHECK_EQ_INT(pr->exited, 1);
			CHECK_EQ_INT(pr->clean_exit, 0);
			CHECK_EQ_INT(pr->exit_code, 5);
		} else if (pr->pid == 704) {
			CHECK_EQ_INT(pr->exited, 0);
		}
	}
	prof_free(p);
	clean_dir();
}

/* What each image spent before the agent could sample it: a first image all
 * its main thread's CPU at the agent's start, an exec'd one the CPU since
 * its predecessor's exec, a fork child (its header says 0) nothing. */
static void test_before_agent(void)
{
	struct synth s;
	struct profile *p = NULL;
	char err[256];
	size_t i;

	synth_init(&s, 900, 1, 0, 0, "/usr/bin/make");
	synth_hdr(&s)->start_mono_ns = 1000;
	synth_hdr(&s)->clean_exit = 1;
	synth_hdr(&s)->start_thread_cpu_ns = 5000000;
	write_file(&s, "900.0.cbp");
	/* forked, then exec'd: 12 ms at the new agent's start, 8 ms at the exec */
	synth_init(&s, 901, 900, 0, 0, "/usr/bin/make");
	synth_hdr(&s)->start_mono_ns = 2000;
	synth_hdr(&s)->exec_thread_cpu_ns = 8000000;
	write_file(&s, "901.0.cbp");
	synth_init(&s, 901, 900, 1, 0, "/usr/bin/cmake");
	synth_hdr(&s)->start_mono_ns = 3000;
	synth_hdr(&s)->clean_exit = 1;
	synth_hdr(&s)->start_thread_cpu_ns = 12000000;
	write_file(&s, "901.1.cbp");
	CHECK_EQ_INT(prof_load(dir, &p, err, sizeof(err)), PROF_LOAD_OK);
	REQUIRE(p != NULL);
	CHECK_EQ_INT(p->before_agent_ns, 9000000);
	CHECK_EQ_INT(p->before_agent_procs, 2);
	for (i = 0; i < p->nprocesses; i++)
		CHECK_EQ_INT(p->processes[i].before_agent_ns,
			     p->processes[i].pid == 900 ? 5000000 : p->processes[i].exec_seq ? 4000000 : 0);
	prof_free(p);
	clean_dir();
}

/* What the agent could not follow is named: an exec into an image that
 * cannot write the session (no "ended without exiting normally" for the
 * image it replaced), and the program's own seccomp filter. */
static void test_unprofiled_and_guard(void)
{
	struct synth s;
	struct profile *p = NULL;
	char err[256];
	uint64_t pc[1] = {0x1234};

	synth_init(&s, 600, 1, 0, 0, "./drop");
	synth_hdr(&s)->start_mono_ns = 1000000000;
	synth_hdr(&s)->guard.exec_unprofiled = 1;
	synth_chunk(&s, CBN_CHUNK_SAMPLES, 600);
	synth_sample(&s, 1100000000, 1, pc, 1, 0);
	synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
	{
		struct cbn_rec_unprofiled u;

		memset(&u, 0, sizeof(u));
		u.h.type = CBN_REC_UNPROFILED;
		u.ts = 1200000000;
		u.pid = 600;
		u.reason = CBN_UNPROF_NO_ACCESS;
		u.uid = u.euid = 65534;
		u.path_len = (uint32_t)strlen("/usr/bin/helper");
		synth_var(&s, &u, sizeof(u), "/usr/bin/helper", NULL);
		u.reason = CBN_UNPROF_SECURE;
		u.path_len = (uint32_t)strlen("/usr/bin/passwd");
		synth_var(&s, &u, sizeof(u), "/usr/bin/passwd", NULL);
	}
	write_file(&s, "600.0.cbp");

	synth_init(&s, 601, 1, 0, 0, "./sandboxed");
	synth_hdr(&s)->start_mono_ns = 1000000000;
	synth_hdr(&s)->guard.seccomp = CBN_SECCOMP_FILTER_ALL;
	synth_hdr(&s)->guard.seccomp_tid = 601;
	synth_hdr(&s)->guard.seccomp_ns = 1250000000;
	synth_hdr(&s)->guard.seccomp_threads = 3;
	synth_chunk(&s, CBN_CHUNK_SAMPLES, 601);
	synth_sample(&s, 1100000000, 1, pc, 1, 0);
	synth_exit(&s, 1300000000, 0);
	write_file(&s, "601.0.cbp");

	CHECK_EQ_INT(prof_load(dir, &p, err, sizeof(err)), PROF_LOAD_OK);
	REQUIRE(p != NULL);
	CHECK(has_warning(p, "pid 600: /usr/bin/helper was not profiled", "uid 65534"));
	CHECK(has_warning(p, "pid 600: /usr/bin/passwd was not profiled", "set-user-ID"));
	CHECK(!has_warning(p, "corrupted", NULL));
	CHECK(!has_warning(p, "(./drop) ended without exiting normally", NULL));
	CHECK(has_warning(p, "pid 601: the program put all its threads under a seccomp filter",
			  "0.250 s after it started: sampling of its 3 threads"));
	CHECK_EQ_INT(p->processes[0].damaged + p->processes[1].damaged, 0);
	prof_free(p);
	clean_dir();
}

static void test_bad_dirs(void)
{
	struct profile *p = (struct profile *)1;
	char err[256], path[4200];
	FILE *f;

	CHECK_EQ_INT(prof_load(dir, &p, err, sizeof(err)), PROF_LOAD_EMPTY);
	CHECK(p == NULL);
	CHECK(strstr(err, "no session files") != NULL);
	CHECK(prof_load("/nonexistent-cbn", &p, err, sizeof(err)) < 0);
	CHECK(prof_load("/etc/hostname", &p, err, sizeof(err)) < 0);

	snprintf(path, sizeof(path), "%s/1.0.cbp", dir);
	f = fopen(path, "w");
	REQUIRE(f != NULL);
	fputs("garbage garbage garbage", f);
	fclose(f);
	CHECK_EQ_INT(prof_load(dir, &p, err, sizeof(err)), PROF_LOAD_EMPTY);
	CHECK(strstr(err, "no readable session file") != NULL);
	CHECK(strstr(err, "too short") != NULL);
	clean_dir();
}

int main(void)
{
	struct synth_self self;

	REQUIRE(synth_self_find(&self) == 0);
	REQUIRE(mkdtemp(dir) != NULL);
	/* keep the compiler from dropping the functions whose addresses we use */
	CHECK(load_test_caller(1) + load_test_other(2) != 12345);

	test_cpu_session(&self);
	test_cuda_session(&self);
	test_cuda_keyed_order(&self);
	test_changed_module(&self);
	test_unseen(&self);
	test_kernel_stacks(&self);
	test_kernel_placed(&self);
	test_many_abnormal();
	test_fork_exits();
	test_before_agent();
	test_unprofiled_and_guard();
	test_bad_dirs();
	rmdir(dir);
	return test_result();
}
