/*
 * test_load_offcpu.c — the loader's off-CPU data (load_offcpu.c) and spin
 * flag (load.c) on synthetic session files: header.offcpu into
 * prof_process.offcpu with its data-quality warnings (one or two dropped
 * stacks or cut records of a file are races, no line); OFFCPU records into
 * prof.offcpu sorted by start, pc[0] symbolized as is and the others at
 * pc-1, thread and owner indexes, an unknown kind taken as OTHER, a weight
 * cut to its span, a record ending before its start skipped, ring mode's
 * cut; records whose frame count does not fit or that are shorter than their
 * type cut by the reader without a crash; PROF_SAMPLE_SPIN on samples whose
 * pc sits in this test's own PAUSE loop, never on plain code, on the code
 * after the loop's function, on kernel time, or because the file says so.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "load.h"
#include "profile.h"
#include "test_reader_synth.h"
#include "testlib.h"

#if defined(__x86_64__)
/* Three functions laid out back to back: plain code (no PAUSE), a spin loop,
 * and plain code right after it, whose first bytes lie within 32 bytes of
 * the loop's PAUSE (the window must stop at the function's start). */
void offcpu_test_plain(void);
void offcpu_test_spin(void);
void offcpu_test_after(void);
__asm__(".text\n"
	".globl offcpu_test_plain\n"
	".type offcpu_test_plain, @function\n"
	"offcpu_test_plain:\n"
	".cfi_startproc\n"
	"	xorl %eax, %eax\n"
	"	addl $1, %eax\n"
	"	addl $2, %eax\n"
	"	addl $3, %eax\n"
	"	addl $4, %eax\n"
	"	addl $5, %eax\n"
	"	addl $6, %eax\n"
	"	addl $7, %eax\n"
	"	addl $8, %eax\n"
	"	addl $9, %eax\n"
	"	addl $10, %eax\n"
	"	ret\n"
	".cfi_endproc\n"
	".size offcpu_test_plain, .-offcpu_test_plain\n"
	".globl offcpu_test_spin\n"
	".type offcpu_test_spin, @function\n"
	"offcpu_test_spin:\n"
	".cfi_startproc\n"
	"1:	pause\n"
	"	cmpl $0, (%rdi)\n"
	"	jne 1b\n"
	"	ret\n"
	".cfi_endproc\n"
	".size offcpu_test_spin, .-offcpu_test_spin\n"
	".globl offcpu_test_after\n"
	".type offcpu_test_after, @function\n"
	"offcpu_test_after:\n"
	".cfi_startproc\n"
	"	xorl %eax, %eax\n"
	"	addl $1, %eax\n"
	"	addl $2, %eax\n"
	"	addl $3, %eax\n"
	"	addl $4, %eax\n"
	"	addl $5, %eax\n"
	"	ret\n"
	".cfi_endproc\n"
	".size offcpu_test_after, .-offcpu_test_after\n");
#else
/* (the loader looks for x86's PAUSE only: see has_pause in load.c) */
void offcpu_test_plain(void) {}
void offcpu_test_spin(void) {}
void offcpu_test_after(void) {}
#endif

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

static void offcpu_rec(struct synth *s, uint64_t start, uint64_t end, uint64_t weight,
		       uint32_t tid, uint16_t kind, int32_t sc, uint64_t addr, uint32_t owner,
		       uint16_t flags, const uint64_t *pcs, uint16_t n)
{
	unsigned char b[sizeof(struct cbn_rec_offcpu) + 16 * 8];
	struct cbn_rec_offcpu *r = (struct cbn_rec_offcpu *)b;
	uint32_t size = (uint32_t)(sizeof(*r) + n * 8u);

	memset(b, 0, sizeof(b));
	r->h.type = CBN_REC_OFFCPU;
	r->h.flags = flags;
	r->h.size = size;
	r->start = start;
	r->end = end;
	r->weight_ns = weight;
	r->addr = addr;
	r->tid = tid;
	r->syscall = sc;
	r->owner = owner;
	r->kind = kind;
	r->nframes = n;
	if (n)
		memcpy(r->pc, pcs, n * 8u);
	synth_rec(s, r, size);
}

/* A sample with kweight kw of weight w, no kernel stacks. */
static void sample(struct synth *s, uint64_t ts, uint32_t w, uint16_t kw, uint64_t pc,
		   uint16_t flags)
{
	unsigned char b[sizeof(struct cbn_rec_sample) + 8];
	struct cbn_rec_sample *r = (struct cbn_rec_sample *)b;

	memset(b, 0, sizeof(b));
	r->h.type = CBN_REC_SAMPLE;
	r->h.flags = flags;
	r->h.size = sizeof(b);
	r->ts = ts;
	r->weight = w;
	r->kweight = kw;
	r->nframes = 1;
	r->pc[0] = pc;
	synth_rec(s, r, sizeof(b));
	synth_hdr(s)->samples++;
}

static struct profile *load_file(struct synth *s)
{
	char dir[64], path[256], err[256];
	struct profile *p = NULL;
	int ret;

	snprintf(dir, sizeof(dir), "/tmp/cbn-test-load-offcpu-XXXXXX");
	REQUIRE(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/100.0.cbp", dir);
	REQUIRE(synth_write(s, path) == 0);
	ret = prof_load(dir, &p, err, sizeof(err));
	if (ret < 0)
		fprintf(stderr, "prof_load: %s\n", err);
	REQUIRE(ret >= 0 && p != NULL);
	unlink(path);
	rmdir(dir);
	synth_free(s);
	return p;
}

static int has_warning(const struct profile *p, const char *what)
{
	size_t i;

	for (i = 0; i < p->nwarnings; i++)
		if (strstr(p->warnings[i], what))
			return 1;
	return 0;
}

static const char *frame_func(const struct profile *p, uint32_t stack, uint32_t i)
{
	if (stack >= p->nstacks || i >= p->stacks[stack].nframes)
		return "(none)";
	return p->funcs[p->frames[p->stacks[stack].first + i].func].name;
}

static uint32_t tid_of(const struct profile *p, uint32_t thread)
{
	return thread < p->nthreads ? p->threads[thread].tid : 0;
}

static void header_on(struct synth *s)
{
	struct cbn_file_header *h = synth_hdr(s);

	h->offcpu.state = CBN_OFFCPU_ON;
	h->offcpu.rate_hz = 100;
	h->offcpu.ticks = 200;
	h->offcpu.looks = 600;
	h->offcpu.records = 5;
	h->offcpu.unconfirmed = 2;
	h->offcpu.no_stack = 1;
	h->offcpu.lost = 3;
	h->offcpu.late_ns = 12345;
}

static void test_records(const struct synth_self *self)
{
	uint64_t plain = (uint64_t)(uintptr_t)&offcpu_test_plain;
	uint64_t spin = (uint64_t)(uintptr_t)&offcpu_test_spin;
	/* pc[0] at a function's first byte: at pc-1 it would be the previous one */
	uint64_t st[2] = {spin, plain + 5};
	struct synth s;
	struct profile *p;
	const struct prof_offcpu *o;
	const struct prof_offcpu_proc *po;

	synth_init(&s, 100, 1, 0, 0, "/nonexistent/prog");
	header_on(&s);
	synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
	self_module(&s, self, 1000);
	synth_thread(&s, CBN_REC_THREAD_START, 1100, 100, "main", 0);
	synth_thread(&s, CBN_REC_THREAD_START, 1200, 101, "worker", 0);
	/* out of start order, as two stretches of two threads are written */
	offcpu_rec(&s, 1500000000ull, 1600000000ull, 100000000ull, 101, 99, 7, 0, 0,
		   CBN_OFFCPU_NO_STACK, NULL, 0);
	offcpu_rec(&s, 1400000000ull, 1450000000ull, 50000000ull, 100, CBN_OFF_FUTEX, 202,
		   0x5000, 101, 0, st, 2);
	/* weight far over its span: cut to it */
	offcpu_rec(&s, 1700000000ull, 1710000000ull, 900000000ull, 102, CBN_OFF_SLEEP, 230, 0,
		   4242, 0, st, 1);
	/* an end before the start: skipped */
	offcpu_rec(&s, 1800000000ull, 1700000000ull, 10, 100, CBN_OFF_IO, 0, 3, 0, 0, NULL, 0);
	/* no thread: skipped */
	offcpu_rec(&s, 1800000000ull, 1810000000ull, 10, 0, CBN_OFF_IO, 0, 3, 0, 0, NULL, 0);
	p = load_file(&s);

	REQUIRE(p->nprocesses == 1);
	po = &p->processes[0].offcpu;
	CHECK_EQ_INT(po->state, CBN_OFFCPU_ON);
	CHECK_EQ_INT(po->rate_hz, 100);
	CHECK_EQ_INT(po->ticks, 200);
	CHECK_EQ_INT(po->looks, 600);
	CHECK_EQ_INT(po->records, 5);
	CHECK_EQ_INT(po->unconfirmed, 2);
	CHECK_EQ_INT(po->no_stack, 1);
	CHECK_EQ_INT(po->lost, 3);
	CHECK_EQ_INT(po->late_ns, 12345);
	CHECK_STR(po->reason, "");

	REQUIRE(p->noffcpu == 3);
	o = &p->offcpu[0];
	CHECK_EQ_INT(o->start, 1400000000ull);
	CHECK_EQ_INT(o->end, 1450000000ull);
	CHECK_EQ_INT(o->weight_ns, 50000000ull);
	CHECK_EQ_INT(o->addr, 0x5000);
	CHECK_EQ_INT(o->process, 0);
	CHECK_EQ_INT(tid_of(p, o->thread), 100);
	CHECK_EQ_INT(o->kind, CBN_OFF_FUTEX);
	CHECK_EQ_INT(o->syscall, 202);
	CHECK_EQ_INT(tid_of(p, o->owner_thread), 101);
	CHECK_EQ_INT(o->flags, 0);
	REQUIRE(o->stack < p->nstacks);
	CHECK_EQ_INT(p->stacks[o->stack].nframes, 2);
	CHECK_STR(frame_func(p, o->stack, 0), "offcpu_test_spin");   /* as is */
	CHECK_STR(frame_func(p, o->stack, 1), "offcpu_test_plain");  /* at pc-1 */

	o = &p->offcpu[1];
	CHECK_EQ_INT(o->start, 1500000000ull);
	CHECK_EQ_INT(tid_of(p, o->thread), 101);
	CHECK_EQ_INT(o->kind, CBN_OFF_OTHER); /* 99: unknown */
	CHECK_EQ_INT(o->stack, PROF_NONE);
	CHECK_EQ_INT(o->owner_thread, PROF_NONE);
	CHECK_EQ_INT(o->flags, CBN_OFFCPU_NO_STACK);

	o = &p->offcpu[2];
	CHECK_EQ_INT(tid_of(p, o->thread), 102); /* made, as other records do */
	CHECK_EQ_INT(o->weight_ns, 10000000ull);
	CHECK_EQ_INT(o->owner_thread, PROF_NONE); /* 4242 is no thread of the process */
	CHECK_STR(frame_func(p, o->stack, 0), "offcpu_test_spin");

	CHECK(has_warning(p, "3 looks at blocked threads were not recorded"));
	CHECK(has_warning(p, "skipped 2 damaged off-CPU records"));
	/* two dropped stacks, one record cut: races, no lines, though they
	 * are a large share of a file of 5 records */
	CHECK(!has_warning(p, "off-CPU stacks were dropped"));
	CHECK(!has_warning(p, "claimed more time than they span"));
	CHECK(!p->processes[0].damaged);
	prof_free(p);
}

/* Three dropped stacks and three records cut in a file of 6: lines. */
static void test_races(const struct synth_self *self)
{
	uint64_t st[1] = {(uint64_t)(uintptr_t)&offcpu_test_spin};
	struct synth s;
	struct profile *p;
	int i;

	synth_init(&s, 100, 1, 0, 0, "/nonexistent/prog");
	header_on(&s);
	synth_hdr(&s)->offcpu.records = 6;
	synth_hdr(&s)->offcpu.unconfirmed = 3;
	synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
	self_module(&s, self, 1000);
	synth_thread(&s, CBN_REC_THREAD_START, 1100, 100, "main", 0);
	for (i = 0; i < 6; i++)
		offcpu_rec(&s, 1500000000ull + 100000000ull * (uint64_t)i,
			   1510000000ull + 100000000ull * (uint64_t)i,
			   i < 3 ? 900000000ull : 10000000ull, 100, CBN_OFF_SLEEP, 230, 0, 0, 0,
			   st, 1);
	p = load_file(&s);
	REQUIRE(p->noffcpu == 6);
	CHECK(has_warning(p, "3 off-CPU stacks were dropped"));
	CHECK(has_warning(p, "3 off-CPU records claimed more time than they span"));
	prof_free(p);
}

static void test_refused(void)
{
	static const char why[] = "/proc/self/task is not readable";
	struct synth s;
	struct profile *p;

	synth_init(&s, 100, 1, 0, 0, "/nonexistent/prog");
	synth_hdr(&s)->offcpu.state = CBN_OFFCPU_REFUSED;
	synth_hdr(&s)->offcpu.reason_len = (uint32_t)strlen(why);
	memcpy(synth_hdr(&s)->offcpu.reason, why, sizeof(why));
	synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
	synth_thread(&s, CBN_REC_THREAD_START, 1100, 100, "main", 0);
	p = load_file(&s);
	CHECK_EQ_INT(p->processes[0].offcpu.state, CBN_OFFCPU_REFUSED);
	CHECK_STR(p->processes[0].offcpu.reason, why);
	CHECK(has_warning(p, "off-CPU sampling was asked for but not done (/proc/self/task"));
	CHECK_EQ_INT(p->noffcpu, 0);
	prof_free(p);

	/* an unknown state, a reason without its NUL, lengths past the array */
	synth_init(&s, 100, 1, 0, 0, "/nonexistent/prog");
	synth_hdr(&s)->offcpu.state = 7;
	synth_hdr(&s)->offcpu.reason_len = 100000;
	memset(synth_hdr(&s)->offcpu.reason, 'x', sizeof(synth_hdr(&s)->offcpu.reason));
	synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
	synth_thread(&s, CBN_REC_THREAD_START, 1100, 100, "main", 0);
	p = load_file(&s);
	CHECK_EQ_INT(p->processes[0].offcpu.state, CBN_OFFCPU_OFF);
	CHECK_EQ_INT(strlen(p->processes[0].offcpu.reason),
		     sizeof(((struct cbn_offcpu_state *)0)->reason));
	CHECK(has_warning(p, "unknown off-CPU sampler state 7"));
	prof_free(p);
}

static void test_corrupt(void)
{
	uint64_t pcs[2] = {0x1000, 0x2000};
	unsigned char b[sizeof(struct cbn_rec_offcpu) + 16];
	struct cbn_rec_offcpu *r = (struct cbn_rec_offcpu *)b;
	struct synth s;
	struct profile *p;

	synth_init(&s, 100, 1, 0, 0, "/nonexistent/prog");
	header_on(&s);
	/* chunk 0: a good record, then one whose frames do not fit */
	synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
	offcpu_rec(&s, 1100000000ull, 1110000000ull, 10000000ull, 100, CBN_OFF_POLL, 7, 3, 0, 0,
		   pcs, 2);
	memset(b, 0, sizeof(b));
	r->h.type = CBN_REC_OFFCPU;
	r->h.size = sizeof(b);
	r->start = 1200000000ull;
	r->end = 1210000000ull;
	r->tid = 100;
	r->nframes = 3; /* 2 fit */
	synth_rec(&s, b, sizeof(b));
	/* chunk 1: a good record, then one shorter than its type */
	synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
	offcpu_rec(&s, 1300000000ull, 1310000000ull, 10000000ull, 100, CBN_OFF_POLL, 7, 3, 0, 0,
		   NULL, 0);
	r->h.size = 16;
	synth_rec(&s, b, 16);
	/* chunk 2: a frame count past any stack's */
	synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
	r->h.size = sizeof(b);
	r->nframes = 60000;
	synth_rec(&s, b, sizeof(b));
	p = load_file(&s);
	CHECK(p->processes[0].damaged);
	CHECK(has_warning(p, "off-CPU stack frame count does not fit"));
	REQUIRE(p->noffcpu == 2);
	CHECK_EQ_INT(p->offcpu[0].start, 1100000000ull);
	CHECK_EQ_INT(p->stacks[p->offcpu[0].stack].nframes, 2); /* [unknown] x 2 */
	CHECK_EQ_INT(p->offcpu[1].start, 1300000000ull);
	prof_free(p);
}

static void test_ring(void)
{
	struct synth s;
	struct profile *p;

	synth_init(&s, 100, 1, 0, 0, "/nonexistent/prog");
	header_on(&s);
	synth_hdr(&s)->ring_ns = 1000000000ull; /* the process ends at 3 s: keep from 2 s */
	synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
	offcpu_rec(&s, 1500000000ull, 1600000000ull, 100000000ull, 100, CBN_OFF_FUTEX, 202, 0, 0,
		   0, NULL, 0);
	offcpu_rec(&s, 1950000000ull, 2050000000ull, 100000000ull, 100, CBN_OFF_FUTEX, 202, 0, 0,
		   0, NULL, 0);
	offcpu_rec(&s, 2500000000ull, 2600000000ull, 100000000ull, 100, CBN_OFF_RUNQ, -2, 0, 0,
		   0, NULL, 0);
	p = load_file(&s);
	REQUIRE(p->noffcpu == 2);
	CHECK_EQ_INT(p->offcpu[0].start, 2000000000ull);
	CHECK_EQ_INT(p->offcpu[0].end, 2050000000ull);
	CHECK_EQ_INT(p->offcpu[0].weight_ns, 50000000ull);
	CHECK_EQ_INT(p->offcpu[1].kind, CBN_OFF_RUNQ);
	CHECK_EQ_INT(p->offcpu[1].syscall, -2);
	prof_free(p);
}

/* weight and spin weight of the samples whose leaf is func */
static void spin_weights(const struct profile *p, const char *func, uint64_t *all, uint64_t *spin,
			 uint64_t *kernel_spin)
{
	size_t i;

	*all = *spin = *kernel_spin = 0;
	for (i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];

		if ((s->flags & PROF_SAMPLE_KERNEL) && (s->flags & PROF_SAMPLE_SPIN))
			(*kernel_spin)++;
		if (strcmp(frame_func(p, s->stack, 0), func) != 0)
			continue;
		*all += s->weight;
		if (s->flags & PROF_SAMPLE_SPIN)
			*spin += s->weight;
	}
}

static void test_spin(const struct synth_self *self)
{
	uint64_t plain = (uint64_t)(uintptr_t)&offcpu_test_plain;
	uint64_t spin = (uint64_t)(uintptr_t)&offcpu_test_spin;
	uint64_t after = (uint64_t)(uintptr_t)&offcpu_test_after;
	uint64_t all, sp, ksp, kall = 0;
	struct synth s;
	struct profile *p;
	size_t i;
	int k;

	/* the test's premise: the loop's PAUSE lies within 32 bytes before
	 * the code after it */
	REQUIRE(after > spin && after - spin < 16);
	synth_init(&s, 100, 1, 0, 0, "/nonexistent/prog");
	synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
	self_module(&s, self, 1000);
	synth_chunk(&s, CBN_CHUNK_SAMPLES, 100);
	for (k = 0; k < 10; k++) {
		sample(&s, 2000 + (uint64_t)k, 1, 0, spin, 0);       /* on the PAUSE */
		sample(&s, 2100 + (uint64_t)k, 1, 0, spin + 2, 0);   /* just after it */
		sample(&s, 2200 + (uint64_t)k, 1, 0, plain + 4, 0);
		sample(&s, 2300 + (uint64_t)k, 1, 0, after + 4, 0);
		/* the file's flags are not trusted */
		sample(&s, 2400 + (uint64_t)k, 1, 0, plain + 8, PROF_SAMPLE_SPIN | PROF_SAMPLE_KERNEL);
		/* half of it kernel time: the kernel part is no spin */
		sample(&s, 2500 + (uint64_t)k, 2, 1, spin + 2, 0);
		/* all of it kernel time */
		sample(&s, 2600 + (uint64_t)k, 1, 1, spin + 2, 0);
	}
	p = load_file(&s);
	spin_weights(p, "offcpu_test_spin", &all, &sp, &ksp);
	CHECK_EQ_INT(all, 30);
	CHECK_EQ_INT(sp, 30);
	CHECK_EQ_INT(ksp, 0);
	spin_weights(p, "offcpu_test_plain", &all, &sp, &ksp);
	CHECK_EQ_INT(all, 20);
	CHECK_EQ_INT(sp, 0);
	spin_weights(p, "offcpu_test_after", &all, &sp, &ksp);
	CHECK_EQ_INT(all, 10);
	CHECK_EQ_INT(sp, 0);
	for (i = 0; i < p->nsamples; i++)
		if (!strcmp(frame_func(p, p->samples[i].stack, 0), "[kernel]")) {
			kall += p->samples[i].weight;
			CHECK(!(p->samples[i].flags & PROF_SAMPLE_SPIN));
		}
	CHECK_EQ_INT(kall, 20);
	prof_free(p);
}

/* Random bytes over the records of a file full of OFFCPU records, with
 * samples in the test's own code: whatever the loader keeps must be in
 * range, and nothing may crash (ASan/UBSan in CI). */
static void test_mutated(const struct synth_self *self)
{
	uint64_t st[3] = {(uint64_t)(uintptr_t)&offcpu_test_spin,
			  (uint64_t)(uintptr_t)&offcpu_test_plain + 5, 0x1234};
	unsigned seed = 12;
	int v, k;

	for (v = 0; v < 60; v++) {
		struct synth s;
		struct profile *p;
		size_t i, from;

		synth_init(&s, 100, 1, 0, 0, "/nonexistent/prog");
		header_on(&s);
		synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
		self_module(&s, self, 1000);
		from = s.next_chunk;
		synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
		for (k = 0; k < 40; k++)
			offcpu_rec(&s, 1100000000ull + (uint64_t)k * 1000000, 1100500000ull +
				   (uint64_t)k * 1000000, 500000, 100 + (uint32_t)(k % 3),
				   (uint16_t)(k % 9), k, (uint64_t)k, 100 + (uint32_t)(k % 5), 0, st,
				   (uint16_t)(k % 4));
		synth_chunk(&s, CBN_CHUNK_SAMPLES, 100);
		for (k = 0; k < 20; k++)
			sample(&s, 1200000000ull + (uint64_t)k, 2, (uint16_t)(k % 3), st[k % 3],
			       (uint16_t)k);
		for (k = 0; k < 1 + v * 3; k++) {
			size_t at = from + rand_r(&seed) % (synth_size(&s) - from);
			s.buf[at] = (unsigned char)rand_r(&seed);
		}
		p = load_file(&s);
		for (i = 0; i < p->noffcpu; i++) {
			const struct prof_offcpu *o = &p->offcpu[i];

			CHECK(o->thread < p->nthreads);
			CHECK(o->stack == PROF_NONE || o->stack < p->nstacks);
			CHECK(o->owner_thread == PROF_NONE || o->owner_thread < p->nthreads);
			CHECK(o->kind < CBN_OFF_NKINDS);
			CHECK(o->end >= o->start && o->weight_ns <= o->end - o->start);
			CHECK(i == 0 || o->start >= p->offcpu[i - 1].start);
		}
		for (i = 0; i < p->nsamples; i++)
			CHECK(!(p->samples[i].flags & PROF_SAMPLE_SPIN) ||
			      !(p->samples[i].flags & PROF_SAMPLE_KERNEL));
		prof_free(p);
	}
}

int main(void)
{
	struct synth_self self;

	if (synth_self_find(&self) != 0) {
		fprintf(stderr, "cannot find this test's own executable segment\n");
		return 77;
	}
#if !defined(__x86_64__)
	fprintf(stderr, "the test's code is x86-64 assembly; skipped here\n");
	return 77;
#endif
	test_records(&self);
	test_races(&self);
	test_refused();
	test_corrupt();
	test_ring();
	test_spin(&self);
	test_mutated(&self);
	return test_result();
}
