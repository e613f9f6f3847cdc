/*
 * test_kstacks.c — unit test of src/agent/kstacks.c: the drain of a synthetic
 * perf ring (records that wrap around its end, PERF_RECORD_LOST, callchains
 * cut short or longer than kept, a torn record), the count of equal stacks,
 * the cap on bytes and stacks, records with the user registers and stack at
 * entry and their placement (test_regs_user); and, where the kernel allows it, a real kernel
 * event over a burst of read(2) system calls.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <unistd.h>

#include "testlib.h"
#include "kstacks.h"

#define RSIZE 1024u /* ring data bytes: small, so records wrap */

struct ring {
	unsigned char data[RSIZE];
	uint64_t head;
};

static void put(struct ring *r, const void *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		r->data[(r->head + i) % RSIZE] = ((const unsigned char *)p)[i];
	r->head += n;
}

/* A PERF_RECORD_SAMPLE with a callchain: the kernel marker, then pcs. */
static void sample(struct ring *r, const uint64_t *pc, unsigned n, int lie_nr)
{
	struct perf_event_header h = {PERF_RECORD_SAMPLE, 0, 0};
	uint64_t nr = n + 1 + (lie_nr ? 100 : 0), mark = (uint64_t)PERF_CONTEXT_KERNEL;

	h.size = (uint16_t)(sizeof(h) + 8 + (n + 1) * 8);
	put(r, &h, sizeof(h));
	put(r, &nr, 8);
	put(r, &mark, 8);
	put(r, pc, n * 8);
}

/* The same with PERF_SAMPLE_REGS_USER (abi, bp, sp, ip) and
 * PERF_SAMPLE_STACK_USER (size, data, dyn_size) after the callchain; abi 0
 * (PERF_SAMPLE_REGS_ABI_NONE, a kernel thread) has neither registers nor
 * stack (size 0, no dyn_size). */
static void sample_regs(struct ring *r, const uint64_t *pc, unsigned n, uint64_t abi, uint64_t ip,
			uint64_t sp, uint64_t bp, const uint64_t *stk, unsigned nstk, unsigned dyn)
{
	struct perf_event_header h = {PERF_RECORD_SAMPLE, 0, 0};
	uint64_t nr = n + 1, mark = (uint64_t)PERF_CONTEXT_KERNEL, regs[3] = {bp, sp, ip};
	uint64_t size = abi ? nstk * 8u : 0, dsz = dyn;

	h.size = (uint16_t)(sizeof(h) + 8 + (n + 1) * 8 + 8 + (abi ? 24 + 8 + size + 8 : 8));
	put(r, &h, sizeof(h));
	put(r, &nr, 8);
	put(r, &mark, 8);
	put(r, pc, n * 8);
	put(r, &abi, 8);
	if (abi) {
		put(r, regs, 24);
		put(r, &size, 8);
		put(r, stk, size);
		put(r, &dsz, 8);
	} else {
		put(r, &size, 8);
	}
}

/* A placer for the unit test: entries at ip 0x401000 are placed (the entry
 * ip, the first word of the stack copy, drop 1), the others are not. */
struct fake_place {
	unsigned calls;
	uint64_t sp, stack0;
	uint32_t nstack;
};

static int fake_place(void *ctx, const struct kstacks_user *u, uint64_t *pc, uint16_t *drop)
{
	struct fake_place *f = ctx;

	f->calls++;
	f->sp = u->sp;
	f->nstack = u->nstack;
	f->stack0 = u->nstack ? u->stack[0] : 0;
	if (u->ip != 0x401000)
		return 0;
	pc[0] = u->ip;
	pc[1] = u->stack[0];
	*drop = 1;
	return 2;
}

static const struct cbn_kstack *nth(const struct cbn_kstacks *ks, unsigned i);

static const struct cbn_kplace *nth_place(const struct cbn_kstacks *ks, unsigned i)
{
	const unsigned char *p = (const unsigned char *)nth(ks, ks->nstacks);

	while (i--) {
		const struct cbn_kplace *k = (const void *)p;
		p += sizeof(*k) + k->nuser * 8u;
	}
	return (const void *)p;
}

static void lost(struct ring *r, uint64_t count)
{
	struct perf_event_header h = {PERF_RECORD_LOST, 0, sizeof(h) + 16};
	uint64_t w[2] = {7, count};

	put(r, &h, sizeof(h));
	put(r, w, 16);
}

static const struct cbn_kstack *nth(const struct cbn_kstacks *ks, unsigned i)
{
	const unsigned char *p = (const unsigned char *)(ks + 1);

	while (i--) {
		const struct cbn_kstack *k = (const void *)p;
		p += sizeof(*k) + k->nframes * 8u;
	}
	return (const void *)p;
}

static void test_wrap_and_lost(void)
{
	static struct ring r;
	uint64_t a[3] = {0xffffffff81000010ull, 0xffffffff81000020ull, 0xffffffff81000030ull};
	uint64_t b[2] = {0xffffffff81000040ull, 0xffffffff81000050ull};
	uint64_t buf[512];
	struct cbn_kstacks *out = (void *)buf;
	uint32_t nlost = 0;
	size_t used;
	uint64_t tail;

	/* Start near the end of the ring so the records wrap around it. */
	r.head = 5 * RSIZE - 40;
	tail = r.head;
	sample(&r, a, 3, 0);
	sample(&r, b, 2, 0);
	lost(&r, 5);
	sample(&r, a, 3, 0);
	used = kstacks_parse(r.data, RSIZE, tail, r.head, out, sizeof(buf), &nlost);
	REQUIRE(used > 0);
	CHECK_EQ_INT(out->nstacks, 2);
	CHECK_EQ_INT(nlost, 5);
	CHECK_EQ_INT(nth(out, 0)->count, 2);
	CHECK_EQ_INT(nth(out, 0)->nframes, 3);
	CHECK(nth(out, 0)->pc[0] == a[0] && nth(out, 0)->pc[2] == a[2]);
	CHECK_EQ_INT(nth(out, 1)->count, 1);
	CHECK(nth(out, 1)->pc[1] == b[1]);
	CHECK_EQ_INT(used, sizeof(*out) + 2 * sizeof(struct cbn_kstack) + 5 * 8);
}

static void test_truncated(void)
{
	static struct ring r;
	uint64_t big[CBN_KSTACK_MAX_FRAMES + 10], one = 0xffffffff81000100ull;
	uint64_t buf[1024];
	struct cbn_kstacks *out = (void *)buf;
	uint32_t nlost = 0;
	unsigned i;
	size_t used;

	for (i = 0; i < CBN_KSTACK_MAX_FRAMES + 10; i++)
		big[i] = 0xffffffff82000000ull + i * 16;
	r.head = 0;
	sample(&r, big, CBN_KSTACK_MAX_FRAMES + 10, 0); /* longer than kept */
	sample(&r, &one, 1, 1);                         /* nr beyond its record */
	sample(&r, &one, 1, 0);
	used = kstacks_parse(r.data, RSIZE, 0, r.head, out, sizeof(buf), &nlost);
	REQUIRE(used > 0);
	CHECK_EQ_INT(out->nstacks, 2);
	CHECK_EQ_INT(nlost, 1);
	CHECK_EQ_INT(nth(out, 0)->nframes, CBN_KSTACK_MAX_FRAMES);
	CHECK(nth(out, 0)->flags & CBN_KSTACK_TRUNCATED);
	CHECK(nth(out, 0)->pc[0] == big[0]);
	CHECK(nth(out, 1)->pc[0] == one && !(nth(out, 1)->flags & CBN_KSTACK_TRUNCATED));

	/* A torn record (size past head) ends the parse, keeping what came before. */
	r.head = 0;
	sample(&r, &one, 1, 0);
	sample(&r, &one, 1, 0);
	nlost = 0;
	used = kstacks_parse(r.data, RSIZE, 0, r.head - 8, out, sizeof(buf), &nlost);
	CHECK(used > 0);
	CHECK_EQ_INT(nth(out, 0)->count, 1);
	/* A size-0 record (garbage) ends it too. */
	memset(r.data, 0, sizeof(r.data));
	nlost = 0;
	CHECK_EQ_INT(kstacks_parse(r.data, RSIZE, 0, 64, out, sizeof(buf), &nlost), 0);
	/* Not a power of two, or more than a ring's worth: nothing. */
	CHECK_EQ_INT(kstacks_parse(r.data, 1000, 0, 64, out, sizeof(buf), &nlost), 0);
	CHECK_EQ_INT(kstacks_parse(r.data, RSIZE, 0, RSIZE + 8, out, sizeof(buf), &nlost), 0);
}

static void test_caps(void)
{
	static struct ring r;
	uint64_t buf[1024], pc[4];
	struct cbn_kstacks *out = (void *)buf;
	uint32_t nlost = 0;
	unsigned i;
	size_t used;

	/* Fewer bytes than the stacks need: those that do not fit are lost. */
	r.head = 0;
	nlost = 0;
	for (i = 0; i < 10; i++) {
		pc[0] = 0xffffffff81000000ull + i;
		sample(&r, pc, 1, 0);
	}
	/* cap for 3 one-frame stacks only */
	used = kstacks_parse(r.data, RSIZE, 0, r.head, out,
			     sizeof(*out) + 3 * (sizeof(struct cbn_kstack) + 8), &nlost);
	CHECK_EQ_INT(out->nstacks, 3);
	CHECK_EQ_INT(nlost, 7);
	CHECK_EQ_INT(used, sizeof(*out) + 3 * (sizeof(struct cbn_kstack) + 8));
}

static void test_distinct_cap(void)
{
	static unsigned char data[8192];
	uint64_t head = 0, buf[2048];
	struct cbn_kstacks *out = (void *)buf;
	uint32_t nlost = 0;
	unsigned i;

	for (i = 0; i < CBN_KSTACK_MAX_STACKS + 3; i++) {
		struct perf_event_header h = {PERF_RECORD_SAMPLE, 0, sizeof(h) + 24};
		uint64_t w[3] = {2, (uint64_t)PERF_CONTEXT_KERNEL, 0xffffffff81000000ull + i};

		memcpy(data + head, &h, sizeof(h));
		memcpy(data + head + sizeof(h), w, 24);
		head += h.size;
	}
	kstacks_parse(data, sizeof(data), 0, head, out, sizeof(buf), &nlost);
	CHECK_EQ_INT(out->nstacks, CBN_KSTACK_MAX_STACKS);
	CHECK_EQ_INT(nlost, 3);
}

/* Records with the user registers and stack at entry: each distinct entry
 * placed once (the kernel samples of one system call share it), equal kernel
 * stacks with different placements kept apart, placements after the stacks,
 * the counts of placed and unplaced, and the old layout without a placer. */
static void test_regs_user(void)
{
	static struct ring r;
	uint64_t a[2] = {0xffffffff81000010ull, 0xffffffff81000020ull};
	uint64_t stk[4] = {0x401234, 0x7ffd0010, 0x401500, 0};
	uint64_t buf[1024];
	struct cbn_kstacks *out = (void *)buf;
	struct fake_place f = {0, 0, 0, 0};
	struct kstacks_placer pl = {fake_place, &f, 0, 0};
	const struct cbn_kplace *kp;
	uint32_t nlost = 0;
	uint64_t tail;
	size_t used;

	r.head = 7 * RSIZE - 100; /* they wrap around the ring's end */
	tail = r.head;
	sample_regs(&r, a, 2, PERF_SAMPLE_REGS_ABI_64, 0x401000, 0x7ffd0000, 0x7ffd0100, stk, 4, 32);
	sample_regs(&r, a, 2, PERF_SAMPLE_REGS_ABI_64, 0x401000, 0x7ffd0000, 0x7ffd0100, stk, 4, 32);
	sample_regs(&r, a, 2, PERF_SAMPLE_REGS_ABI_64, 0x402000, 0x7ffd0040, 0, stk, 4, 16);
	sample_regs(&r, a, 1, 0, 0, 0, 0, NULL, 0, 0); /* a kernel thread's */
	used = kstacks_parse_placed(r.data, RSIZE, tail, r.head, 1, &pl, out, sizeof(buf), &nlost);
	REQUIRE(used > 0);
	CHECK_EQ_INT(nlost, 0);
	CHECK_EQ_INT(f.calls, 2); /* 0x401000 once, 0x402000 once, abi NONE never */
	CHECK_EQ_INT(f.nstack, 2); /* dyn_size 16 of 32 bytes copied */
	CHECK(f.sp == 0x7ffd0040 && f.stack0 == 0x401234);
	CHECK(out->flags & CBN_KSTACKS_PLACED);
	REQUIRE(out->nstacks == 3);
	CHECK_EQ_INT(nth(out, 0)->count, 2);
	CHECK_EQ_INT(nth(out, 1)->count, 1);
	CHECK(nth(out, 1)->nframes == 2 && nth(out, 1)->pc[1] == a[1]); /* same kernel stack */
	CHECK_EQ_INT(nth(out, 2)->nframes, 1);
	kp = nth_place(out, 0);
	CHECK(kp->nuser == 2 && kp->drop == 1 && kp->pc[0] == 0x401000 && kp->pc[1] == 0x401234);
	kp = nth_place(out, 1);
	CHECK(kp->nuser == 0 && kp->drop == 0);
	kp = nth_place(out, 2);
	CHECK(kp->nuser == 0);
	CHECK_EQ_INT(used, (const unsigned char *)nth_place(out, 3) - (const unsigned char *)out);
	CHECK_EQ_INT(pl.placed, 2);
	CHECK_EQ_INT(pl.unplaced, 2);

	/* No placer: the stacks as before (one per kernel stack), no flag. */
	nlost = 0;
	used = kstacks_parse_placed(r.data, RSIZE, tail, r.head, 1, NULL, out, sizeof(buf), &nlost);
	CHECK(!(out->flags & CBN_KSTACKS_PLACED));
	CHECK_EQ_INT(out->nstacks, 2);
	CHECK_EQ_INT(nth(out, 0)->count, 3);
	CHECK_EQ_INT(used, (const unsigned char *)nth(out, 2) - (const unsigned char *)out);

	/* Room for the first stack and its placement only: the others lost. */
	nlost = 0;
	f.calls = 0;
	used = kstacks_parse_placed(r.data, RSIZE, tail, r.head, 1, &pl, out,
				    sizeof(*out) + sizeof(struct cbn_kstack) + 16 +
					    sizeof(struct cbn_kplace) + 16,
				    &nlost);
	CHECK_EQ_INT(out->nstacks, 1);
	CHECK_EQ_INT(nlost, 2);
	CHECK_EQ_INT(used, sizeof(*out) + sizeof(struct cbn_kstack) + 16 + sizeof(struct cbn_kplace) + 16);
	CHECK_EQ_INT(nth_place(out, 0)->nuser, 2);
}

/* The real event's entry state: a user ip, an sp near this thread's stack,
 * and a copy of its top. */
struct real_place {
	unsigned calls, ok;
	uintptr_t near;
};

static int real_place(void *ctx, const struct kstacks_user *u, uint64_t *pc, uint16_t *drop)
{
	struct real_place *f = ctx;

	(void)pc;
	(void)drop;
	f->calls++;
	f->ok += u->ip && u->ip < 0x800000000000ull && u->sp < f->near && f->near - u->sp < 65536 &&
		 u->nstack == KSTACKS_USER_STACK / 8;
	return 0;
}

/* A real kernel event, where allowed: read(2) of /dev/zero shows kernel pcs. */
static void test_real(void)
{
	struct kstacks_ring kr = {NULL, 0, 0};
	uint64_t buf[1024];
	struct cbn_kstacks *out = (void *)buf;
	uint32_t kept = 0, nlost = 0;
	static char big[1 << 20];
	int ret = kstacks_open(&kr, 100000, 0), fd, i, round;
	struct real_place rp = {0, 0, (uintptr_t)&kept};
	struct kstacks_placer pl = {real_place, &rp, 0, 0};

	if (ret) {
		fprintf(stderr, "test_kstacks: real kernel event skipped: perf_event_open: %s\n",
			strerror(-ret));
		return;
	}
	fd = open("/dev/zero", O_RDONLY);
	REQUIRE(fd >= 0);
	/* A loaded machine may give the reads little CPU: read until the
	 * kernel has sampled some (at most 20 rounds). */
	for (round = 0; round < 20 && kept == 0; round++) {
		for (i = 0; i < 400; i++)
			CHECK(read(fd, big, sizeof(big)) == (ssize_t)sizeof(big));
		kstacks_drain(&kr, &pl, out, sizeof(buf), &kept, &nlost);
	}
	close(fd);
	fprintf(stderr, "test_kstacks: real event: %u kernel samples kept, %u lost, %u stacks\n",
		kept, nlost, out->nstacks);
	CHECK(kept > 0);
	if (kept)
		CHECK(nth(out, 0)->pc[0] >= 0xff00000000000000ull);
	/* with the user registers and stack at entry, where the kernel has them */
	fprintf(stderr, "test_kstacks: real event: user registers %s, %u of %u entries plausible\n",
		kr.regs ? "sampled" : "refused", rp.ok, rp.calls);
	if (kr.regs && kept) {
		CHECK(rp.calls > 0);
		CHECK_EQ_INT(rp.ok, rp.calls);
		CHECK(out->flags & CBN_KSTACKS_PLACED);
	}
	/* Drained: a second drain finds only the kernel time since (a few
	 * system calls). */
	kstacks_drain(&kr, NULL, out, sizeof(buf), &kept, &nlost);
	CHECK(kept < 50);
	kstacks_close(&kr);
	CHECK(kr.base == NULL);
}

int main(void)
{
	test_wrap_and_lost();
	test_truncated();
	test_caps();
	test_distinct_cap();
	test_regs_user();
	test_real();
	return test_result();
}
