/*
 * test_load_jit.c — stacks through code without unwind information, loaded
 * from a session written here (src/analysis/load/load_jit.c): the agent's CBN_UWM
 * marker words dropped from the frames and what they said counted (by frame
 * pointer, by scan, stopped, where and why), native words past a STOP
 * dropped; pcs in JIT regions one function per region ("[jit] 0xSTART"),
 * named from the session's perf map where it covers them, regions that went
 * away in part or were replaced; then the CPU view's figures and its
 * data-quality lines; and a module's code the program mapped again itself
 * (CODE_FILE), named as the module's until it is unmapped.
 */
#include <dirent.h>
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <unistd.h>

#include "testlib.h"
#include "test_reader_synth.h"
#include "cpu.h"
#include "load.h"

__attribute__((noinline)) int jit_test_leaf(int x)
{
	volatile int v = x;
	return v * 3 + 1;
}

__attribute__((noinline)) int jit_test_caller(int x)
{
	return jit_test_leaf(x) + 2;
}

static char dir[] = "/tmp/cbn-test-load-jit-XXXXXX";

#define PID 300
#define R1 0x7f0000001000ull   /* anonymous, no perf map line */
#define R2 0x7f0000010000ull   /* its first 0x100 bytes in the perf map */
#define R3 0x7f0000020000ull   /* its middle page goes at ts 2000 ... */
#define R4 0x7f0000021000ull   /* ... and new code takes it at ts 2500 */
#define PM 0x7f0000050000ull   /* in the perf map, in no region */

static void self_module(struct synth *s, const struct synth_self *m, uint64_t ts)
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
	synth_rec(s, r, size);
}

/* count samples at ts, ts + 1, ... of the stack pcs[0..n). */
static void samples(struct synth *s, uint64_t ts, int count, const uint64_t *pcs, uint16_t n)
{
	int i;

	for (i = 0; i < count; i++)
		synth_sample(s, ts + (uint64_t)i, 1, pcs, n, 0);
}

static const struct prof_stack *stack_at(const struct profile *p, uint64_t ts)
{
	size_t i;

	for (i = 0; i < p->nsamples; i++)
		if (p->samples[i].ts == ts)
			return &p->stacks[p->samples[i].stack];
	return NULL;
}

static const struct prof_func *frame_func(const struct profile *p, const struct prof_stack *st,
					  uint32_t depth)
{
	if (!st || depth >= st->nframes)
		return NULL;
	return &p->funcs[p->frames[st->first + depth].func];
}

static const char *frame_name(const struct profile *p, const struct prof_stack *st,
			      uint32_t depth)
{
	const struct prof_func *f = frame_func(p, st, depth);

	return f ? f->name : NULL;
}

static size_t funcs_named(const struct profile *p, const char *name)
{
	size_t i, n = 0;

	for (i = 0; i < p->nfuncs; i++)
		n += strcmp(p->funcs[i].name, name) == 0;
	return n;
}

static const struct prof_unwind_stop *stop_of(const struct profile *p, const char *place)
{
	size_t i;

	for (i = 0; i < p->nunwind_stops; i++)
		if (strcmp(p->unwind_stops[i].place, place) == 0)
			return &p->unwind_stops[i];
	return NULL;
}

static int has_line(char **w, size_t n, const char *a, const char *b)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strstr(w[i], a) && (!b || strstr(w[i], b)))
			return 1;
	return 0;
}

static void write_session(const struct synth_self *self)
{
	uint64_t ret_caller = (uint64_t)(uintptr_t)&jit_test_caller + 8;
	uint64_t leaf = (uint64_t)(uintptr_t)&jit_test_leaf + 4;
	uint64_t scan = CBN_UWM_MAKE(CBN_UWM_SCAN, CBN_UWM_JIT);
	uint64_t fp = CBN_UWM_MAKE(CBN_UWM_FP, CBN_UWM_JIT);
	uint64_t stop_jit = CBN_UWM_MAKE(CBN_UWM_STOP, CBN_UWM_JIT);
	uint64_t stop_nocfi = CBN_UWM_MAKE(CBN_UWM_STOP, CBN_UWM_NOCFI);
	char path[4200];
	struct synth s;
	FILE *f;

	synth_init(&s, PID, 1, 0, 0, "./jit");
	synth_hdr(&s)->start_mono_ns = 1000;
	synth_hdr(&s)->end_mono_ns = 10000;
	synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
	self_module(&s, self, 1000);
	synth_thread(&s, CBN_REC_THREAD_START, 1000, PID, "jit", 0);
	synth_jit_region(&s, 1000, R1, 0x2000, 0, NULL);
	synth_jit_region(&s, 1000, R2, 0x1000, 0, NULL);
	synth_jit_region(&s, 1000, R3, 0x3000, 0, NULL);
	synth_jit_region(&s, 1000, 0, 0, CBN_JIT_JITDUMP, "/tmp/jit-300.dump");
	synth_jit_region(&s, 2000, R4, 0x1000, CBN_JIT_GONE, NULL);
	synth_jit_region(&s, 2500, R4, 0x1000, 0, NULL);
	synth_chunk(&s, CBN_CHUNK_SAMPLES, PID);
	{
		/* A: scanned past R1; B: frame pointer past R1 elsewhere in it */
		uint64_t a[3] = {R1 + 0x10, scan, ret_caller};
		uint64_t b[3] = {R1 + 0x800, fp, ret_caller};
		/* C: the perf map's part of R2; D: R2 elsewhere, stopped, with a
		 * native word past the STOP that must not become a frame */
		uint64_t c[3] = {R2 + 0x20, fp, ret_caller};
		uint64_t d[3] = {R2 + 0x200, stop_jit, ret_caller};
		/* E: stopped in a module's code without CFI */
		uint64_t e[2] = {leaf, stop_nocfi};
		/* F: R3 and its middle before and after it was replaced */
		uint64_t f1[1] = {R4 + 0x800}, f2[1] = {R3 + 0x2800};
		/* G: in no module, no region, no perf map line; H: a perf map line */
		uint64_t g[1] = {0x5000}, h[2] = {PM + 0x10, ret_caller};

		samples(&s, 1100, 10, a, 3);
		samples(&s, 1200, 10, b, 3);
		samples(&s, 1300, 5, c, 3);
		samples(&s, 1400, 5, d, 3);
		samples(&s, 1500, 4, e, 2);
		samples(&s, 1600, 2, f1, 1);
		samples(&s, 3000, 3, f1, 1);
		samples(&s, 3100, 3, f2, 1);
		samples(&s, 3200, 1, g, 1);
		samples(&s, 3300, 2, h, 2);
	}
	synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
	synth_exit(&s, 9000, 0);
	snprintf(path, sizeof(path), "%s/%u.0.cbp", dir, PID);
	REQUIRE(synth_write(&s, path) == 0);
	synth_free(&s);

	snprintf(path, sizeof(path), "%s/" CBN_PERFMAP_FILE, dir, PID);
	f = fopen(path, "w");
	REQUIRE(f);
	fprintf(f, "%llx 100 jit_avx2_conv_fwd\n", (unsigned long long)R2);
	fprintf(f, "%llx 40 py::tramp:/x.py\n", (unsigned long long)PM);
	REQUIRE(fclose(f) == 0);
}

static void check_frames(const struct profile *p)
{
	const struct prof_stack *st;
	const struct prof_func *fn;
	char r1[32];

	snprintf(r1, sizeof(r1), "[jit] 0x%llx", (unsigned long long)R1);
	/* A, B: one function for the region, its caller recovered; the marker
	 * is no frame, and how the stacks were unwound keeps them apart */
	st = stack_at(p, 1100);
	REQUIRE(st);
	CHECK_EQ_INT(st->nframes, 2);
	CHECK_STR(frame_name(p, st, 0), r1);
	CHECK_STR(frame_name(p, st, 1), "jit_test_caller");
	CHECK_EQ_INT(st->unwind, PROF_UNWIND_SCAN);
	fn = frame_func(p, st, 0);
	REQUIRE(fn);
	CHECK_STR(fn->module, "jit");
	CHECK_EQ_INT(fn->flags & (PROF_FUNC_JIT | PROF_FUNC_JIT_ANON),
		     PROF_FUNC_JIT | PROF_FUNC_JIT_ANON);
	st = stack_at(p, 1200);
	REQUIRE(st);
	CHECK_STR(frame_name(p, st, 0), r1);
	CHECK_STR(frame_name(p, st, 1), "jit_test_caller");
	CHECK_EQ_INT(st->unwind, PROF_UNWIND_FP);
	CHECK(stack_at(p, 1100) != stack_at(p, 1200));
	CHECK_EQ_INT(funcs_named(p, r1), 1);

	/* C: the perf map names it; D: the rest of R2, and the STOP ends it */
	st = stack_at(p, 1300);
	REQUIRE(st);
	CHECK_STR(frame_name(p, st, 0), "jit_avx2_conv_fwd");
	fn = frame_func(p, st, 0);
	REQUIRE(fn);
	CHECK_STR(fn->module, "jit");
	CHECK_EQ_INT(fn->flags & (PROF_FUNC_JIT | PROF_FUNC_JIT_ANON), PROF_FUNC_JIT);
	CHECK_STR(frame_name(p, st, 1), "jit_test_caller");
	st = stack_at(p, 1400);
	REQUIRE(st);
	CHECK_EQ_INT(st->nframes, 1);
	CHECK_STR(frame_name(p, st, 0), "[jit] 0x7f0000010000");
	CHECK_EQ_INT(PROF_UNWIND_STOP(st->unwind), PROF_UNWIND_JIT);

	/* E: a module's frame, stopped there */
	st = stack_at(p, 1500);
	REQUIRE(st);
	CHECK_EQ_INT(st->nframes, 1);
	CHECK_STR(frame_name(p, st, 0), "jit_test_leaf");
	CHECK_EQ_INT(PROF_UNWIND_STOP(st->unwind), PROF_UNWIND_NOCFI);

	/* F: the middle of R3 before it went; the new code there after; what
	 * is left of R3 keeps R3's name */
	CHECK_STR(frame_name(p, stack_at(p, 1600), 0), "[jit] 0x7f0000020000");
	CHECK_STR(frame_name(p, stack_at(p, 3000), 0), "[jit] 0x7f0000021000");
	CHECK_STR(frame_name(p, stack_at(p, 3100), 0), "[jit] 0x7f0000020000");
	CHECK_EQ_INT(funcs_named(p, "[jit] 0x7f0000020000"), 1);

	/* G: nothing knows it; H: the perf map does, without a region */
	CHECK_STR(frame_name(p, stack_at(p, 3200), 0), "[unknown]");
	st = stack_at(p, 3300);
	CHECK_STR(frame_name(p, st, 0), "py::tramp:/x.py");
	CHECK_STR(frame_name(p, st, 1), "jit_test_caller");
	CHECK_EQ_INT(st ? st->unwind : 99, 0);
}

static void check_counts(const struct profile *p, const struct synth_self *self)
{
	const struct prof_unwind_proc *u = &p->processes[0].unwind;
	const struct prof_unwind_stop *s;
	const char *exe = strrchr(self->path, '/') + 1;

	CHECK_EQ_INT(u->scan_samples, 10);
	CHECK_EQ_INT(u->scan_weight, 10);
	CHECK_EQ_INT(u->fp_samples, 15);
	CHECK_EQ_INT(u->stop_samples, 9);
	CHECK_EQ_INT(u->jit_regions, 4);
	CHECK_EQ_INT(u->jitdumps, 1);
	CHECK_EQ_INT(u->perfmap_entries, 2);
	CHECK_EQ_INT(p->nunwind_stops, 2);
	s = stop_of(p, "[jit] 0x7f0000010000");
	REQUIRE(s);
	CHECK_EQ_INT(s->cause, PROF_UNWIND_JIT);
	CHECK_EQ_INT(s->samples, 5);
	s = stop_of(p, exe);
	REQUIRE(s);
	CHECK_EQ_INT(s->cause, PROF_UNWIND_NOCFI);
	CHECK_EQ_INT(s->samples, 4);
	/* heaviest first */
	CHECK_STR(p->unwind_stops[0].place, "[jit] 0x7f0000010000");
}

static void check_cpu(const struct profile *p, const struct synth_self *self)
{
	const char *exe = strrchr(self->path, '/') + 1;
	struct cpu_profile *c = NULL;
	char **w = NULL;
	size_t n = 0;
	uint64_t period = 10000000;

	REQUIRE(cpu_aggregate(p, &c) == 0);
	CHECK_EQ_INT(c->unwind.present, 1);
	CHECK_EQ_INT(c->unwind.fp_ns, 15 * period);
	CHECK_EQ_INT(c->unwind.scan_ns, 10 * period);
	CHECK_EQ_INT(c->unwind.stop_ns, 9 * period);
	/* leaves in JIT code: A B C D, F (8), H; unnamed: A B D F */
	CHECK_EQ_INT(c->unwind.jit_samples, 10 + 10 + 5 + 5 + 8 + 2);
	CHECK_EQ_INT(c->unwind.jit_anon_samples, 10 + 10 + 5 + 8);
	REQUIRE(c->unwind.nstops == 2);
	CHECK_STR(c->unwind.stops[0].place, "[jit] 0x7f0000010000");
	CHECK_STR(cpu_unwind_cause_key(c->unwind.stops[0].cause), "jit");
	CHECK_STR(c->unwind.stops[1].place, exe);
	CHECK_STR(cpu_unwind_cause_key(c->unwind.stops[1].cause), "no_cfi");
	REQUIRE(cpu_warnings(p, c, &w, &n) == 0);
	/* 45 samples: 5 stopped in R2 (11.1%), 4 in the executable (8.9%) */
	CHECK(has_line(w, n, "unwinding stopped early in 20.0% of the samples: "
			     "[jit] 0x7f0000010000 11.1% (JIT code),", "8.9% (no CFI)"));
	CHECK(has_line(w, n, "88.9% of the samples ran in JIT code", "73.3% in code it named"));
	CHECK(has_line(w, n, "55.6% of the samples (25) were unwound past code without unwind "
			     "information, 33.3% by frame pointer and 22.2% by scanning", NULL));
	cpu_warnings_free(w, n);
	cpu_free(c);
}

/* A run without markers or JIT code says nothing of either. */
static void check_quiet(const struct synth_self *self)
{
	uint64_t pcs[2] = {(uint64_t)(uintptr_t)&jit_test_leaf + 4,
			   (uint64_t)(uintptr_t)&jit_test_caller + 8};
	char path[4200], err[256];
	struct profile *p = NULL;
	struct cpu_profile *c = NULL;
	struct synth s;

	synth_init(&s, PID + 1, 1, 0, 0, "./plain");
	synth_hdr(&s)->start_mono_ns = 1000;
	synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
	self_module(&s, self, 1000);
	synth_chunk(&s, CBN_CHUNK_SAMPLES, PID + 1);
	samples(&s, 1100, 20, pcs, 2);
	snprintf(path, sizeof(path), "%s/%u.0.cbp", dir, PID + 1);
	REQUIRE(synth_write(&s, path) == 0);
	synth_free(&s);
	REQUIRE(prof_load(dir, &p, err, sizeof(err)) == PROF_LOAD_OK);
	CHECK_EQ_INT(p->nunwind_stops, 0);
	REQUIRE(cpu_aggregate(p, &c) == 0);
	CHECK_EQ_INT(c->unwind.present, 0);
	cpu_free(c);
	prof_free(p);
	unlink(path);
}

/*
 * CODE_FILE: this test's own executable segment mapped again at ALIAS (the
 * page holding jit_test_leaf, by its file offset) from ts 1000, unmapped at
 * 5000; and a file that is no module mapped at OTHER.  A pc in the alias is
 * jit_test_leaf while it is mapped, and the module is listed once.
 */
#define ALIAS 0x7f0000400000ull
#define OTHER 0x7f0000500000ull
static void check_code_file(const struct synth_self *self)
{
	uint64_t leaf = (uint64_t)(uintptr_t)&jit_test_leaf + 4, vaddr = leaf - self->base;
	uint64_t off = UINT64_MAX, page, pc, pcs[2];
	char path[4200], err[256];
	struct profile *p = NULL;
	struct synth s;
	size_t i, listed = 0;
	uint16_t k;

	for (k = 0; k < self->nseg; k++)
		if ((self->seg[k].flags & 1) && vaddr >= self->seg[k].vaddr &&
		    vaddr - self->seg[k].vaddr < self->seg[k].memsz)
			off = vaddr - self->seg[k].vaddr + self->seg[k].offset;
	REQUIRE(off != UINT64_MAX);
	page = off & ~(uint64_t)4095;
	pc = ALIAS + (off - page);
	synth_init(&s, PID + 2, 1, 0, 0, "./alias");
	synth_hdr(&s)->start_mono_ns = 1000;
	synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
	self_module(&s, self, 1000);
	synth_code_file(&s, 1000, ALIAS, 8192, page, self->path);
	synth_code_file(&s, 1000, OTHER, 4096, 0, "/nonexistent/lib.so");
	synth_jit_region(&s, 5000, ALIAS, 8192, CBN_JIT_GONE, NULL);
	synth_chunk(&s, CBN_CHUNK_SAMPLES, PID + 2);
	pcs[0] = pc;
	pcs[1] = (uint64_t)(uintptr_t)&jit_test_caller + 8;
	samples(&s, 1100, 3, pcs, 2);
	samples(&s, 6000, 2, pcs, 2);
	pcs[0] = OTHER + 0x10;
	samples(&s, 1200, 1, pcs, 2);
	snprintf(path, sizeof(path), "%s/%u.0.cbp", dir, PID + 2);
	REQUIRE(synth_write(&s, path) == 0);
	synth_free(&s);
	REQUIRE(prof_load(dir, &p, err, sizeof(err)) == PROF_LOAD_OK);
	CHECK_STR(frame_name(p, stack_at(p, 1100), 0), "jit_test_leaf");
	CHECK_STR(frame_name(p, stack_at(p, 1100), 1), "jit_test_caller");
	CHECK_STR(frame_name(p, stack_at(p, 6000), 0), "[unknown]");
	CHECK_STR(frame_name(p, stack_at(p, 1200), 0), "[unknown]");
	for (i = 0; i < p->nmodules; i++)
		listed += strcmp(p->modules[i].path, self->path) == 0;
	CHECK_EQ_INT(listed, 1);
	prof_free(p);
	unlink(path);
}

int main(void)
{
	struct synth_self self;
	struct profile *p = NULL;
	char err[256], path[4200];

	REQUIRE(synth_self_find(&self) == 0);
	REQUIRE(mkdtemp(dir) != NULL);
	CHECK(jit_test_caller(1) != 12345);

	check_quiet(&self);
	check_code_file(&self);
	write_session(&self);
	REQUIRE(prof_load(dir, &p, err, sizeof(err)) == PROF_LOAD_OK);
	REQUIRE(p->nprocesses == 1);
	check_frames(p);
	check_counts(p, &self);
	check_cpu(p, &self);
	prof_free(p);

	snprintf(path, sizeof(path), "%s/%u.0.cbp", dir, PID);
	unlink(path);
	snprintf(path, sizeof(path), "%s/" CBN_PERFMAP_FILE, dir, PID);
	unlink(path);
	rmdir(dir);
	return test_result();
}
